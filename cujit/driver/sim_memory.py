"""The simulated driver's memory: its address map and allocations (device, pool, managed,
pinned, mapped and registered host memory), a mixin of :class:`~cujit.driver.sim.SimDriver`.

Device allocations get fake addresses (from ``0x3000_0000_0000`` up, never reused, so a
use-after-free is caught) backed by NumPy byte buffers; pinned, managed and registered host
memory are real host memory at their real addresses; mapped memory has both.  The device
capacity is ``config.SIM_DEVICE_MEMORY`` (``CUJIT_SIM_DEVICE_MEMORY``, default 4 GiB), read at
each allocation, so out-of-memory really happens.  Copies, streams and everything else are in
:mod:`.sim`, which reads memory through :meth:`SimMemory._span`.
"""
import bisect
import ctypes
import threading

import numpy as np

from ..config import config
from .errors import (CudaAPIError, CUDA_ERROR_INVALID_VALUE, CUDA_ERROR_OUT_OF_MEMORY,
                     CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED,
                     CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED)

__all__ = ["SimMemory"]

_DEVICE_BASE = 0x3000_0000_0000
_ALIGN = 256
_PAGE = 4096


def _raise(code, call, msg=""):
    raise CudaAPIError(code, msg, call)


def _check_size(nbytes, call):
    if not isinstance(nbytes, (int, np.integer)) or isinstance(nbytes, bool) or nbytes <= 0:
        _raise(CUDA_ERROR_INVALID_VALUE, call, f"size {nbytes!r} must be a positive int")
    return int(nbytes)


def _raw_host(ptr, nbytes):
    """A byte view of ordinary (pageable) host memory at ``ptr``."""
    return np.frombuffer((ctypes.c_uint8 * nbytes).from_address(ptr), dtype=np.uint8)


_mincore = None


def _host_mapped(ptr, nbytes):
    """True when every page of ``[ptr, ptr + nbytes)`` is mapped in this process (Linux
    ``mincore``, which fails with ENOMEM otherwise), so that a view of a wild address is
    refused instead of crashing the process.  True where ``mincore`` is not available."""
    global _mincore
    if ptr <= 0 or nbytes < 0 or ptr + nbytes > 1 << 64:
        return False
    if _mincore is None:
        try:
            fn = ctypes.CDLL(None, use_errno=True).mincore
            fn.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p]
            fn.restype = ctypes.c_int
            _mincore = fn
        except (OSError, AttributeError):
            _mincore = False
    if not _mincore:
        return True
    start = ptr - ptr % _PAGE
    length = ptr + max(nbytes, 1) - start
    vec = ctypes.create_string_buffer((length + _PAGE - 1) // _PAGE)
    return _mincore(start, length, vec) == 0


class _Block:
    """One registered address range.  ``buf`` is a uint8 ndarray of ``size`` bytes."""
    __slots__ = ("base", "size", "buf", "kind", "ctx", "alias", "flags", "retired")

    def __init__(self, base, size, buf, kind, ctx, flags=None):
        self.base, self.size, self.buf, self.kind, self.ctx = base, size, buf, kind, ctx
        self.retired = False    # freed by the program, its cuMemFree still queued
        self.alias = None       # the other address of a mapped range
        self.flags = flags or {}


class SimMemory:
    """The memory half of the simulated driver (a mixin: :class:`~cujit.driver.sim.SimDriver`
    calls :meth:`_init_memory` in its constructor and :meth:`_drop_memory` on a context
    reset; its stream checks and capture hooks are the driver's)."""

    def _init_memory(self):
        self._lock = threading.RLock()
        self._bases = []        # sorted base addresses
        self._blocks = {}       # base -> _Block
        self._next_device = _DEVICE_BASE
        self._used = 0          # device bytes in use (device + pool allocations)

    def _drop_memory(self, ctx=None):
        """Forget every allocation (cuDevicePrimaryCtxReset), or with ``ctx`` (several
        simulated devices) only that context's device memory (host kinds belong to no
        device); addresses are still never reused."""
        with self._lock:
            if ctx is None:
                self._blocks.clear()
            else:
                self._blocks = {a: b for a, b in self._blocks.items() if b.ctx != ctx}
            self._bases = sorted(self._blocks)
            self._used = sum(b.size for b in self._blocks.values()
                             if b.kind in ("device", "pool"))

    # -- address map ---------------------------------------------------------------------
    def _insert(self, block):
        bisect.insort(self._bases, block.base)
        self._blocks[block.base] = block

    def _remove(self, block):
        i = bisect.bisect_left(self._bases, block.base)
        del self._bases[i]
        del self._blocks[block.base]

    def _find(self, ptr):
        """The block containing address ``ptr``, or None."""
        # Under the lock: another thread's free can shift ``_bases`` between the bisect and
        # the lookup (seen as KeyError in copies racing with frees).
        with self._lock:
            bases = self._bases
            i = bisect.bisect_right(bases, ptr) - 1
            if i >= 0:
                b = self._blocks[bases[i]]
                if ptr < b.base + b.size:
                    return b
            return None

    def _span(self, ptr, nbytes, call, role, host_ok):
        """uint8 view of ``nbytes`` at ``ptr``; raw host memory allowed when ``host_ok``."""
        b = self._find(ptr)
        if b is None:
            if host_ok and self._pageable(ptr, nbytes):
                return _raw_host(ptr, nbytes)
            _raise(CUDA_ERROR_INVALID_VALUE, call,
                   f"{role} {ptr:#x} is not device-accessible memory of this context "
                   "(freed, never allocated, or from a reset context)")
        if b.retired:
            _raise(CUDA_ERROR_INVALID_VALUE, call,
                   f"{role} {ptr:#x} is in the {b.size}-byte allocation at {b.base:#x}, which "
                   "was freed (use after free)")
        off = ptr - b.base
        if off + nbytes > b.size:
            if host_ok and b.kind in ("registered", "host", "managed") \
                    and self._pageable(ptr, nbytes):
                # ordinary host memory that shares pages with a page-locked range
                return _raw_host(ptr, nbytes)
            _raise(CUDA_ERROR_INVALID_VALUE, call,
                   f"{role} range {ptr:#x}+{nbytes} runs past the end of its "
                   f"{b.size}-byte allocation at {b.base:#x}")
        return b.buf[off:off + nbytes]

    def _pageable(self, ptr, nbytes):
        """True when ``[ptr, ptr + nbytes)`` may be ordinary host memory: not in the simulated
        device address range (where it would be freed or reset device memory) and mapped."""
        if ptr < 0 or (_DEVICE_BASE <= ptr + nbytes and ptr < self._next_device):
            return False
        return _host_mapped(ptr, nbytes)

    def retire(self, ptr):
        """Simulator only: the allocation starting at ``ptr`` was freed by the program and
        its free is queued (pending deallocations); every later copy, memset or kernel access
        of it raises CudaAPIError (INVALID_VALUE) at once.  Unknown pointers are ignored."""
        with self._lock:
            b = self._blocks.get(ptr)
            if b is not None and b.kind in ("device", "pool", "managed"):
                b.retired = True

    def host_view(self, ptr, nbytes):
        """Simulator only: a writable uint8 ndarray over ``nbytes`` of device-accessible memory
        at ``ptr`` (device, managed, mapped or pinned).  CudaAPIError when not allocated."""
        if nbytes == 0:
            return np.empty(0, np.uint8)
        return self._span(ptr, nbytes, "host_view", "pointer", host_ok=False)

    def pointer_kind(self, ptr):
        """Simulator only: 'device', 'managed', 'host', 'mapped', 'registered' or None."""
        b = self._find(ptr)
        return None if b is None else b.kind

    # -- memory --------------------------------------------------------------------------
    def _alloc_device(self, nbytes, call, kind="device"):
        nbytes = _check_size(nbytes, call)
        with self._lock:
            capacity = int(config.SIM_DEVICE_MEMORY)
            if self._used + nbytes > capacity:
                _raise(CUDA_ERROR_OUT_OF_MEMORY, call,
                       f"{nbytes} bytes asked, {capacity - self._used} of {capacity} free "
                       "on the simulated device (CUJIT_SIM_DEVICE_MEMORY)")
            buf = np.empty(nbytes, dtype=np.uint8)
            base = self._next_device
            self._next_device += (nbytes + _ALIGN - 1) // _ALIGN * _ALIGN + _ALIGN
            self._insert(_Block(base, nbytes, buf, kind, self._current_ctx()))
            self._used += nbytes
            return base

    def _free_block(self, ptr, call, kinds):
        with self._lock:
            b = self._blocks.get(ptr)
            if b is None or b.kind not in kinds:
                _raise(CUDA_ERROR_INVALID_VALUE, call,
                       f"{ptr:#x} is not the start of a live {'/'.join(kinds)} allocation "
                       "(freed twice, or never allocated here)")
            self._remove(b)
            if b.kind in ("device", "pool"):
                self._used -= b.size
            if b.alias is not None:
                self._blocks.pop(b.alias, None)
                self._bases = sorted(self._blocks)

    def mem_alloc(self, nbytes):
        return self._alloc_device(nbytes, "cuMemAlloc")

    def mem_free(self, ptr):
        self._free_block(ptr, "cuMemFree", ("device", "managed"))

    def _alloc_host(self, nbytes, kind, call, flags):
        nbytes = _check_size(nbytes, call)
        try:
            raw = np.empty(nbytes + _PAGE, dtype=np.uint8)
        except MemoryError:
            _raise(CUDA_ERROR_OUT_OF_MEMORY, call,
                   f"{nbytes} bytes of host memory could not be allocated")
        start = (-raw.ctypes.data) % _PAGE
        buf = raw[start:start + nbytes]
        base = buf.ctypes.data
        with self._lock:
            self._insert(_Block(base, nbytes, buf, kind, 0, flags))
        return base

    def mem_alloc_managed(self, nbytes, attach_global=True):
        nbytes = _check_size(nbytes, "cuMemAllocManaged")
        capacity = int(config.SIM_DEVICE_MEMORY)
        if nbytes > capacity:
            # a GPU refuses managed memory it cannot back (without oversubscription)
            _raise(CUDA_ERROR_OUT_OF_MEMORY, "cuMemAllocManaged",
                   f"{nbytes} bytes asked; the simulated device has {capacity} bytes "
                   "(CUJIT_SIM_DEVICE_MEMORY)")
        return self._alloc_host(nbytes, "managed", "cuMemAllocManaged",
                                {"attach_global": bool(attach_global)})

    def _add_alias(self, block):
        """Give a host block a fake device address that views the same bytes (mapping)."""
        with self._lock:
            dbase = self._next_device
            self._next_device += (block.size + _ALIGN - 1) // _ALIGN * _ALIGN + _ALIGN
            alias = _Block(dbase, block.size, block.buf, "mapped", 0, {"alias_of": block.base})
            self._insert(alias)
            block.alias = dbase

    def mem_host_alloc(self, nbytes, mapped=False, portable=False, wc=False):
        base = self._alloc_host(nbytes, "host", "cuMemHostAlloc",
                                {"mapped": bool(mapped), "portable": bool(portable), "wc": bool(wc)})
        if mapped:
            self._add_alias(self._blocks[base])
        return base

    def mem_free_host(self, ptr):
        self._free_block(ptr, "cuMemFreeHost", ("host",))

    def mem_host_register(self, ptr, nbytes, mapped=False, portable=False):
        nbytes = _check_size(nbytes, "cuMemHostRegister")
        if not isinstance(ptr, (int, np.integer)) or isinstance(ptr, bool) or ptr <= 0:
            # as the driver does; a NULL range would otherwise be a view of address 0
            _raise(CUDA_ERROR_INVALID_VALUE, "cuMemHostRegister",
                   f"host pointer {ptr!r} is NULL, negative or not an int")
        ptr = int(ptr)
        if self._find(ptr) is None and not self._pageable(ptr, nbytes):
            _raise(CUDA_ERROR_INVALID_VALUE, "cuMemHostRegister",
                   f"{nbytes} bytes at {ptr:#x} are not mapped host memory of this process")
        with self._lock:
            hit = self._find(ptr) or self._find(ptr + nbytes - 1)
            if hit is not None and hit.kind in ("registered", "host"):
                _raise(CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED, "cuMemHostRegister",
                       f"{nbytes} bytes at {ptr:#x} overlap page-locked memory at {hit.base:#x}")
            block = _Block(ptr, nbytes, _raw_host(ptr, nbytes), "registered", 0,
                           {"mapped": bool(mapped), "portable": bool(portable)})
            self._insert(block)
            if mapped:
                self._add_alias(block)

    def mem_host_unregister(self, ptr):
        with self._lock:
            b = self._blocks.get(ptr)
            if b is None or b.kind != "registered":
                _raise(CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED, "cuMemHostUnregister", hex(ptr))
        self._free_block(ptr, "cuMemHostUnregister", ("registered",))

    def mem_host_get_device_pointer(self, host_ptr):
        b = self._find(host_ptr)
        if b is None or b.kind not in ("host", "registered", "managed"):
            _raise(CUDA_ERROR_INVALID_VALUE, "cuMemHostGetDevicePointer",
                   f"{host_ptr:#x} is not page-locked host memory")
        if b.kind == "managed":
            return host_ptr
        if b.alias is None:
            _raise(CUDA_ERROR_INVALID_VALUE, "cuMemHostGetDevicePointer",
                   f"{host_ptr:#x} was not allocated or registered as mapped")
        return b.alias + (host_ptr - b.base)

    def mem_get_info(self):
        total = int(config.SIM_DEVICE_MEMORY)
        return max(total - self._used, 0), total

    def mem_get_address_range(self, ptr):
        b = self._find(ptr)
        if b is None:
            _raise(CUDA_ERROR_INVALID_VALUE, "cuMemGetAddressRange", hex(ptr))
        return b.base, b.size
