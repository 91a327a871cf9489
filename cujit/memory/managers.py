"""External Memory Management (EMM): numba.cuda's plugin interface and the default manager.

- :class:`BaseCUDAMemoryManager`: the abstract plugin interface (R-EMM-1), constructed with
  keyword ``context``; ``interface_version`` must be 1.
- :class:`HostOnlyCUDAMemoryManager`: host allocations (pinned, mapped, managed, mempin) and
  the pending-deallocations queue; a plugin subclasses it and adds ``memalloc``.
- :class:`GetIpcHandleMixin`: ``get_ipc_handle`` for plugins whose memory is plain
  cuMemAlloc-compatible device memory.
- :class:`NumbaCUDAMemoryManager`: the default manager — raw cuMemAlloc + the queue.
- :func:`set_memory_manager` and ``NUMBA_CUDA_MEMORY_MANAGER=module`` (R-EMM-2).

Every built-in manager keeps statistics (R-EMM-3, :meth:`HostOnlyCUDAMemoryManager.get_stats`).
"""
import abc
import contextlib
import importlib
import warnings
import weakref
from collections import namedtuple

from ..driver import get_driver
from ..driver.errors import CudaAPIError, CUDA_ERROR_OUT_OF_MEMORY, CUDA_ERROR_INVALID_CONTEXT
from .deallocations import PendingDeallocs, DeallocationWarning, _Exit, check_settings
from .events import allocated, freed
from .pointers import (AutoFreePointer, PinnedMemory, MappedMemory,
                       ManagedMemory, MemoryInfo, IpcHandle, _ptr_value, _Finalizer,
                       _live_finalizers)

__all__ = ["BaseCUDAMemoryManager", "HostOnlyCUDAMemoryManager", "GetIpcHandleMixin",
           "NumbaCUDAMemoryManager", "set_memory_manager", "MemoryStats",
           "MemoryManagerError", "EMM_INTERFACE_VERSION"]

EMM_INTERFACE_VERSION = 1
_SIZE_T_MAX = (1 << 64) - 1
_new = object.__new__
_ref = weakref.ref

MemoryStats = namedtuple("MemoryStats", [
    "bytes_in_use",       # device bytes held by live pointers
    "peak_bytes_in_use",  # highest bytes_in_use seen
    "reserved_bytes",     # device bytes the driver still holds for us (in use + queued)
    "alloc_count",        # device allocations made so far
    "live_allocations",   # device allocations not yet dropped
    "pending_frees",      # entries waiting in the pending-deallocations queue
    "pending_bytes",      # bytes waiting in the queue
    "flushes",            # times the queue was flushed
    "oom_retries",        # allocations retried after an out-of-memory flush
    "host_bytes_in_use",  # pinned/mapped bytes held by live objects
])


class MemoryManagerError(ValueError, RuntimeError):
    """An EMM plugin is unusable (wrong ``interface_version``, missing methods, bad module).
    Also a ``RuntimeError``, as numba.cuda raises for a version mismatch."""


def _check_alloc_size(size, what="allocation size"):
    """``size`` as an int in 0..2**64-1 bytes; TypeError/ValueError naming it (as ``what``)
    otherwise."""
    if isinstance(size, bool) or not hasattr(size, "__index__"):
        raise TypeError(f"{what} must be an int number of bytes, got {size!r} "
                        f"of type {type(size).__name__}")
    size = size.__index__()
    if size < 0:
        raise ValueError(f"{what} must be >= 0 bytes, got {size}")
    if size > _SIZE_T_MAX:
        raise ValueError(f"{what} {size} bytes exceeds the largest size_t")
    return size


class BaseCUDAMemoryManager(abc.ABC):
    """Abstract EMM plugin (numba.cuda ``BaseCUDAMemoryManager``).

    Construct with keyword ``context`` (TypeError when missing).  Subclasses implement
    ``memalloc(size)``, ``memhostalloc(size, mapped, portable, wc)``,
    ``mempin(owner, pointer, size, mapped)``, ``initialize()``, ``get_ipc_handle(memory)``,
    ``get_memory_info()``, ``reset()``, ``defer_cleanup()`` and ``interface_version`` (1)."""

    def __init__(self, *args, **kwargs):
        if "context" not in kwargs:
            raise TypeError("a memory manager is constructed with keyword argument "
                            "'context' (the cujit Context it serves)")
        self.context = kwargs.pop("context")

    @abc.abstractmethod
    def memalloc(self, size):
        """Device memory of ``size`` bytes → MemoryPointer."""

    @abc.abstractmethod
    def memhostalloc(self, size, mapped=False, portable=False, wc=False):
        """Page-locked host memory → PinnedMemory / MappedMemory."""

    @abc.abstractmethod
    def mempin(self, owner, pointer, size, mapped=False):
        """Page-lock existing host memory → PinnedMemory / MappedMemory."""

    @abc.abstractmethod
    def initialize(self):
        """Called once the manager is attached to its context."""

    @abc.abstractmethod
    def get_ipc_handle(self, memory):
        """IpcHandle of device memory."""

    @abc.abstractmethod
    def get_memory_info(self):
        """MemoryInfo(free, total) in bytes."""

    @abc.abstractmethod
    def reset(self):
        """Forget every allocation (the context is being reset)."""

    @abc.abstractmethod
    def defer_cleanup(self):
        """A context manager that suspends freeing inside its block."""

    @property
    @abc.abstractmethod
    def interface_version(self):
        """The EMM interface version implemented; must be 1."""


def _queue_free(mgr, dtor, ptr, size, gen, device_bytes):
    """Finalizer target: queue ``dtor(ptr)`` unless the context's generation moved on
    (reset/close: the memory is already gone) or the interpreter is exiting.  Never raises."""
    try:
        if _Exit.exiting or gen != mgr.context.generation:
            return
        if device_bytes:
            mgr._in_use -= size
            mgr._live -= 1
        else:
            mgr._host_in_use -= size
        mgr.deallocations.add_item(dtor, ptr, size)
    except Exception:
        pass


def _unpin(mgr, ptr, size, gen):
    """Finalizer target for mempin: unregister at once (R-DEA-5), not queued."""
    try:
        if _Exit.exiting:
            return
        ctx = mgr.context
        if gen != ctx.generation or ctx.closed:
            return
        mgr._host_in_use -= size
        as_current = getattr(ctx, "as_current", None)
        if as_current is None:
            ctx.make_current()
            get_driver().mem_host_unregister(ptr)
        else:
            with as_current():
                get_driver().mem_host_unregister(ptr)
        if freed.listeners:
            freed.emit("host (pinned)", ptr, size)
    except Exception as exc:
        try:
            warnings.warn(f"unpinning {size} bytes at {ptr:#x} failed: {exc}",
                          DeallocationWarning, stacklevel=2)
        except Exception:
            pass


def memallocmanaged_fallback(ctx, queue, size, attach_global):
    """Managed memory for managers without ``memallocmanaged``; freed through ``queue``."""
    size = _check_alloc_size(size)
    if size == 0:
        return ManagedMemory(ctx, 0, 0)
    drv = get_driver()
    ptr = drv.mem_alloc_managed(size, attach_global=attach_global)
    mem = ManagedMemory(ctx, ptr, size)
    mem.is_managed = True
    mem._finalizer = _Finalizer(mem, _queue_plain, ctx, queue, drv.mem_free, ptr, size,
                               ctx.generation)
    if allocated.listeners:
        allocated.emit("managed", mem, size, 0)
    return mem


def _queue_plain(ctx, queue, dtor, ptr, size, gen):
    try:
        if not _Exit.exiting and gen == ctx.generation:
            queue.add_item(dtor, ptr, size)
    except Exception:
        pass


class HostOnlyCUDAMemoryManager(BaseCUDAMemoryManager):
    """Host allocations and the pending-deallocations queue (numba.cuda
    ``HostOnlyCUDAMemoryManager``); subclasses provide ``memalloc``.

    Attributes: ``deallocations`` (:class:`PendingDeallocs` for the memory it frees),
    ``allocations`` (a dict plugins may use to keep their buffers; cleared by ``reset``)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        ctx = self.context
        capacity = ctx.device.total_memory if ctx is not None else 0
        self.allocations = {}
        self.deallocations = PendingDeallocs(ctx, capacity)
        self._drv = get_driver() if ctx is not None else None
        self._in_use = 0
        self._peak = 0
        self._alloc_count = 0
        self._live = 0
        self._oom_retries = 0
        self._host_in_use = 0

    # -- allocation helper ---------------------------------------------------------------
    def _attempt_allocation(self, allocator):
        """Call ``allocator()``; on out-of-memory flush the queue and retry exactly once
        (R-DEA-2a); on a missing current context (another thread) make ours current and
        retry.  Other errors propagate."""
        try:
            return allocator()
        except CudaAPIError as exc:
            return self._retry(exc, allocator)

    def _retry(self, exc, allocator):
        if exc.code == CUDA_ERROR_OUT_OF_MEMORY:
            self.deallocations._clear("out of memory")
            self._oom_retries += 1
            return allocator()
        if exc.code == CUDA_ERROR_INVALID_CONTEXT and self.context is not None:
            self.context.make_current()
            return allocator()
        raise exc

    # -- host memory ---------------------------------------------------------------------
    def memhostalloc(self, size, mapped=False, portable=False, wc=False):
        """Page-locked host memory (cuMemHostAlloc) → PinnedMemory, or MappedMemory when
        ``mapped``.  Freed (cuMemFreeHost) through the queue, counting its bytes."""
        size = _check_alloc_size(size)
        check_settings()
        ctx = self.context
        cls = MappedMemory if mapped else PinnedMemory
        if size == 0:
            return cls(ctx, 0, 0)
        drv = self._drv
        ptr = self._attempt_allocation(
            lambda: drv.mem_host_alloc(size, mapped=mapped, portable=portable, wc=wc))
        mem = cls(ctx, ptr, size)
        mem.is_managed = True
        mem._finalizer = _Finalizer(mem, _queue_free, self, drv.mem_free_host, ptr, size,
                                   ctx.generation, False)
        self._host_in_use += size
        if allocated.listeners:
            allocated.emit("host (cuMemHostAlloc)", mem, size, 0)
        return mem

    def mempin(self, owner, pointer, size, mapped=False):
        """Page-lock ``size`` bytes at host address ``pointer`` (cuMemHostRegister);
        ``owner`` is kept alive.  Unregistered at once when the result dies (R-DEA-5).
        CudaAPIError (CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED) when already pinned."""
        size = _check_alloc_size(size)
        check_settings()
        ctx = self.context
        cls = MappedMemory if mapped else PinnedMemory
        ptr = _ptr_value(pointer)
        if size == 0:
            return cls(ctx, ptr, 0, owner=owner)
        drv = self._drv
        drv.mem_host_register(ptr, size, mapped=mapped)
        try:
            mem = cls(ctx, ptr, size, owner=owner)
        except BaseException:
            drv.mem_host_unregister(ptr)
            raise
        mem.is_managed = True
        mem._finalizer = _Finalizer(mem, _unpin, self, ptr, size, ctx.generation)
        self._host_in_use += size
        if allocated.listeners:
            allocated.emit("host (pinned)", mem, size, 0)
        return mem

    def memallocmanaged(self, size, attach_global=True):
        """Managed memory (cuMemAllocManaged) → ManagedMemory, freed through the queue."""
        size = _check_alloc_size(size)
        check_settings()
        ctx = self.context
        if size == 0:
            return ManagedMemory(ctx, 0, 0)
        drv = self._drv
        ptr = self._attempt_allocation(
            lambda: drv.mem_alloc_managed(size, attach_global=attach_global))
        mem = ManagedMemory(ctx, ptr, size)
        mem.is_managed = True
        mem._finalizer = _Finalizer(mem, _queue_free, self, drv.mem_free, ptr, size,
                                   ctx.generation, True)
        self._count_alloc(size)
        if allocated.listeners:
            allocated.emit("managed", mem, size, 0)
        return mem

    def _count_alloc(self, size):
        self._alloc_count += 1
        self._live += 1
        n = self._in_use = self._in_use + size
        if n > self._peak:
            self._peak = n

    # -- the rest of the interface -------------------------------------------------------
    def initialize(self):
        """Nothing to set up for host memory."""

    def reset(self):
        """Forget all allocations and queued frees without freeing (context reset)."""
        self.allocations.clear()
        self.deallocations.drop_all()
        self._in_use = 0
        self._live = 0
        self._host_in_use = 0

    @contextlib.contextmanager
    def defer_cleanup(self):
        """Suspend flushing of this manager's queue inside the block."""
        with self.deallocations.disable():
            yield

    def get_memory_info(self):
        """``MemoryInfo(free, total)`` bytes of the device (cuMemGetInfo)."""
        self.context.make_current()
        return MemoryInfo(*self._drv.mem_get_info())

    def get_ipc_handle(self, memory):
        raise NotImplementedError(f"{type(self).__name__} does not export IPC handles")

    @property
    def interface_version(self):
        return EMM_INTERFACE_VERSION

    def get_stats(self):
        """:class:`MemoryStats` of this manager (bytes, counts; see its fields)."""
        q = self.deallocations
        return MemoryStats(self._in_use, self._peak, self._in_use + q.nbytes,
                           self._alloc_count, self._live, len(q), q.nbytes, q.flush_count,
                           self._oom_retries, self._host_in_use)


class GetIpcHandleMixin:
    """``get_ipc_handle`` for device memory from cuMemAlloc-compatible allocations."""

    def get_ipc_handle(self, memory):
        """IpcHandle of ``memory`` (cuMemGetAddressRange + cuIpcGetMemHandle)."""
        drv = get_driver()
        ptr = memory.device_pointer_value
        base, _ = drv.mem_get_address_range(ptr)
        handle = drv.ipc_get_mem_handle(base)
        source_info = self.context.device.uuid
        return IpcHandle(memory, handle, memory.size, source_info, offset=ptr - base)


class NumbaCUDAMemoryManager(GetIpcHandleMixin, HostOnlyCUDAMemoryManager):
    """The default manager: device memory by cuMemAlloc, freed (cuMemFree) through the
    pending-deallocations queue; out-of-memory flushes the queue and retries once."""

    def memalloc(self, size):
        """Device memory of ``size`` bytes (int ≥ 0) → AutoFreePointer.

        Size 0 gives a NULL pointer and allocates nothing.  TypeError for non-integers,
        ValueError for negative sizes or sizes beyond size_t, CudaAPIError
        (CUDA_ERROR_OUT_OF_MEMORY, cuMemAlloc) when the device is full even after a flush."""
        if type(size) is not int or size <= 0 or size > _SIZE_T_MAX:
            size = _check_alloc_size(size)
            if size == 0:
                return AutoFreePointer(self.context, 0, 0)
        check_settings()
        drv = self._drv
        try:
            ptr = drv.mem_alloc(size)
        except CudaAPIError as exc:
            ptr = self._retry(exc, lambda: drv.mem_alloc(size))
        mem = tracked_pointer(self, ptr, size, drv.mem_free)
        if allocated.listeners:
            allocated.emit("device", mem, size, 0)
        return mem


def tracked_pointer(mgr, ptr, size, dtor=None):
    """The :class:`AutoFreePointer` of a new device allocation of ``size`` bytes at ``ptr``
    made by manager ``mgr`` (in ``mgr.context``, of its current generation), counted in
    ``mgr``'s statistics.  With ``dtor`` (the driver's free function) its finalizer queues
    ``dtor(ptr)`` on ``mgr.deallocations`` when it dies (:func:`_queue_free`); without, the
    caller sets ``_finalizer`` (the pool's block return).  Shared by the built-in managers
    (here and pool.py); built without ``__init__`` (pointer and finalizer alike) because this
    is the allocation hot path: one Python call for both objects."""
    ctx = mgr.context
    mem = _new(AutoFreePointer)
    mem.context = ctx
    mem.device_pointer_value = ptr
    mem.size = size
    mem._owner = None
    gen = mem.generation = ctx.generation
    mem.refct = 1
    mem.is_managed = True
    if dtor is not None:
        # _Finalizer(mem, _queue_free, mgr, dtor, ptr, size, gen, True), field by field
        fin = _new(_Finalizer)
        fin._fn = _queue_free
        fin._args = (mgr, dtor, ptr, size, gen, True)
        fin._wr = _ref(mem, fin._fire)
        _live_finalizers.add(fin)
        mem._finalizer = fin
    mgr._alloc_count += 1
    mgr._live += 1
    n = mgr._in_use = mgr._in_use + size
    if n > mgr._peak:
        mgr._peak = n
    return mem


# -- plugin selection ---------------------------------------------------------------------

_REQUIRED = ("memalloc", "memhostalloc", "mempin", "initialize", "get_ipc_handle",
             "get_memory_info", "reset", "defer_cleanup")
_override = None


def _validate(plugin, where):
    if not isinstance(plugin, type):
        raise TypeError(f"{where}: a memory manager must be a class, got {plugin!r}")
    missing = [m for m in _REQUIRED if not callable(getattr(plugin, m, None))]
    if missing:
        raise TypeError(f"{where}: memory manager {plugin.__qualname__} lacks the EMM "
                        f"method(s) {', '.join(missing)}")
    dummy = plugin(context=None)    # numba.cuda does the same; abstract methods fail here
    version = getattr(dummy, "interface_version", None)
    if version != EMM_INTERFACE_VERSION:
        raise MemoryManagerError(f"{where}: EMM plugin {plugin.__qualname__} has interface "
                                 f"version {version!r}; version {EMM_INTERFACE_VERSION} "
                                 "required")
    return plugin


def set_memory_manager(mm_plugin):
    """Use EMM plugin class ``mm_plugin`` for contexts created from now on (R-EMM-2).

    TypeError when it is not a class or lacks interface methods (abstract ones included);
    MemoryManagerError when ``interface_version`` is not 1.  The previous setting stays in
    force when the check fails."""
    global _override
    _override = _validate(mm_plugin, "set_memory_manager")


def memory_manager_class():
    """The plugin class for a new context: ``set_memory_manager``'s, else the module named
    by ``config.CUDA_MEMORY_MANAGER`` (its ``_numba_memory_manager``), else the default."""
    if _override is not None:
        return _override
    from ..config import config
    name = config.CUDA_MEMORY_MANAGER
    if not name or name == "default":
        return NumbaCUDAMemoryManager
    # name the variable the user actually set (CUJIT_… wins over NUMBA_…)
    source = config.source("CUDA_MEMORY_MANAGER")
    if source in ("override", "default"):
        source = "cujit.config.CUDA_MEMORY_MANAGER"
    where = f"{source}={name!r}"
    try:
        module = importlib.import_module(name)
    except ImportError as exc:
        raise ImportError(f"{where}: cannot import the memory manager module: {exc}") from exc
    plugin = getattr(module, "_numba_memory_manager", None)
    if plugin is None:
        raise MemoryManagerError(f"{where}: module {name} has no _numba_memory_manager")
    return _validate(plugin, where)
