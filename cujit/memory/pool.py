"""The stream-ordered pool memory manager (R-EMM-3).

Device memory comes from the device's default memory pool with cuMemAllocFromPoolAsync and
goes back with cuMemFreeAsync, both ordered on the legacy default stream (handle 0).  The
pool's release threshold is raised to the maximum so freed memory stays cached in the pool
for reuse instead of going back to the OS at each synchronisation (the point of a pool).
Frees still pass through the pending-deallocations queue, so ``defer_cleanup``, the count
and ratio limits, the out-of-memory flush-and-retry and the statistics are the same as the
default manager's.  ``trim()`` returns cached memory to the driver (cuMemPoolTrimTo).

Select it with ``cujit.set_memory_manager(cujit.PoolMemoryManager)`` or
``NUMBA_CUDA_MEMORY_MANAGER=cujit.memory.pool``.
"""
from ..driver.errors import CudaAPIError
from .managers import (GetIpcHandleMixin, HostOnlyCUDAMemoryManager, _check_alloc_size,
                       _SIZE_T_MAX,
                       _queue_free)
from .pointers import AutoFreePointer, _Finalizer

__all__ = ["PoolMemoryManager"]

_RELEASE_ALL_NEVER = (1 << 64) - 1
_finalize = _Finalizer
_new = object.__new__


class PoolMemoryManager(GetIpcHandleMixin, HostOnlyCUDAMemoryManager):
    """EMM plugin over the device's default stream-ordered memory pool (see module doc).

    ``memalloc`` errors as the default manager's; ``CudaAPIError`` (CUDA_ERROR_NOT_SUPPORTED)
    from ``initialize`` when the device has no memory pools."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._pool = None

    def initialize(self):
        """Get the default pool and raise its release threshold (cuDeviceGetDefaultMemPool,
        cuMemPoolSetAttribute(CU_MEMPOOL_ATTR_RELEASE_THRESHOLD))."""
        ctx = self.context
        if not ctx.device.MEMORY_POOLS_SUPPORTED:
            raise CudaAPIError(801, f"device {ctx.device.id} has no stream-ordered memory "
                               "pools", "cuDeviceGetDefaultMemPool")
        drv = self._drv
        pool = drv.device_mempool(ctx.device.id)
        drv.mempool_set_release_threshold(pool, _RELEASE_ALL_NEVER)
        self._pool = pool

    def _free_async(self, ptr):
        self._drv.mem_free_async(ptr, 0)

    def memalloc(self, size):
        """Device memory of ``size`` bytes from the pool → AutoFreePointer (size 0 → NULL)."""
        if type(size) is not int or size <= 0 or size > _SIZE_T_MAX:
            size = _check_alloc_size(size)
            if size == 0:
                return AutoFreePointer(self.context, 0, 0)
        if self._pool is None:          # after reset()
            self.initialize()
        drv, pool = self._drv, self._pool
        try:
            ptr = drv.mem_alloc_from_pool_async(size, pool, 0)
        except CudaAPIError as exc:
            ptr = self._retry(exc, lambda: drv.mem_alloc_from_pool_async(size, pool, 0))
        ctx = self.context
        gen = ctx._generation
        mem = _new(AutoFreePointer)
        mem.context = ctx
        mem.device_pointer_value = ptr
        mem.size = size
        mem._owner = None
        mem._generation = gen
        mem.refct = 1
        mem.is_managed = True
        mem._finalizer = _finalize(mem, _queue_free, self, self._free_async, ptr, size, gen,
                                   True)
        self._count_alloc(size)
        return mem

    def trim(self, keep_bytes=0):
        """Return cached pool memory to the driver down to ``keep_bytes`` (cuMemPoolTrimTo)."""
        if self._pool is not None:
            self.context._make_current()
            self._drv.mempool_trim(self._pool, keep_bytes)

    def reset(self):
        super().reset()
        self._pool = None


_numba_memory_manager = PoolMemoryManager
