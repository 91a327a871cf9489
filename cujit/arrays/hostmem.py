"""Host memory kinds: pinned (page-locked), mapped (zero-copy) and managed (unified) arrays,
the ``pinned`` context manager, and a cache of pinned buffers (``mapped``, which yields device
views, is in :mod:`.api`: this module is below :mod:`.devicearray`, whose large copies stage
through the cache).

Allocations go through the current context (``memhostalloc``, ``mempin``,
``memallocmanaged``: R-HOST-1..3); the arrays are plain ``np.ndarray`` objects (or the
subclasses :class:`MappedNDArray` / :class:`ManagedNDArray`) over that memory.

The pinned-buffer cache exists because ``cuMemHostAlloc`` costs tens of microseconds: a small
pinned array's buffer goes back to a per-size free list when the array dies and is handed out
again, so ``pinned_array`` of a few KiB is a few microseconds.  Buffers above
``CACHE_MAX_BUFFER`` bytes are never cached.  The cap is on the cache's blocks in use and
free together (``_cache_bytes``): a block that dies while they exceed ``CACHE_MAX_BYTES`` is
freed rather than kept, so the free lists never hold more than that (and allocating and
dropping big pinned arrays does not grow the process).  Counting blocks in use as well keeps
the hit path (take a block, give it back) free of locks and shared counters: ``list.pop`` and
``list.append`` are atomic, only a new block or a freed one changes the count, under the lock.
"""
import bisect
import contextlib
import ctypes
import errno
import mmap
import sys
import threading
import weakref

import numpy as np

from . import _runtime
from . import layout as L
from .cai import cai_dict
from ..memory.protocol import device_pointer

__all__ = ["pinned_array", "pinned_array_like", "pinned", "mapped_array", "mapped_array_like",
           "managed_array", "MappedNDArray", "ManagedNDArray", "is_pinned",
           "pinned_buffer", "clear_pinned_cache"]

CACHE_MAX_BUFFER = 32 << 20
CACHE_MAX_BYTES = 256 << 20

_lock = threading.Lock()
_cache = {}             # size class (bytes) -> list of (PinnedMemory, ctx, generation)
_cache_bytes = 0        # bytes of the cache's blocks, in use or free
# Page-locked host ranges known to cujit: sorted starts and {start: end}.
_pinned_starts = []
_pinned_ends = {}


def _host_alloc(ctx, nbytes, mapped=False):
    """Page-locked host memory whose lifetime Python owns: an anonymous ``mmap`` (page
    aligned) registered with ``cuMemHostRegister`` (``ctx.mempin``).  A context reset or
    ``cujit.close()`` then only unpins it (the driver drops registrations, and cujit skips
    the unregister of a dead generation); the bytes stay valid for as long as the arrays
    over them live, so a NumPy array never points at freed memory (cuMemHostAlloc memory is
    freed by cuDevicePrimaryCtxReset).  Returns the PinnedMemory/MappedMemory; its owner is
    the mmap, kept alive by the memory object."""
    try:
        buf = mmap.mmap(-1, nbytes)
    except (OSError, MemoryError, OverflowError) as exc:
        if isinstance(exc, OSError) and exc.errno != errno.ENOMEM:
            raise
        # as device_array/managed_array: the CUDA out-of-memory error naming the size
        # (numba.cuda allocates pinned memory with cuMemHostAlloc, which reports this)
        from ..driver.errors import CudaAPIError, CUDA_ERROR_OUT_OF_MEMORY
        raise CudaAPIError(CUDA_ERROR_OUT_OF_MEMORY,
                           f"{nbytes} bytes of page-locked host memory could not be "
                           f"allocated ({exc})", call="cuMemHostAlloc") from None
    ptr = ctypes.addressof(ctypes.c_char.from_buffer(buf))
    return ctx.mempin(buf, ptr, nbytes, mapped=mapped)


def _size_class(n):
    if n <= 4096:
        return 4096
    if n <= (1 << 20):
        return 1 << (n - 1).bit_length()
    return (n + (1 << 20) - 1) >> 20 << 20


def _u8(ptr, nbytes):
    return np.ndarray((nbytes,), np.uint8, buffer=(ctypes.c_uint8 * nbytes).from_address(ptr))


def _register_range(start, nbytes):
    with _lock:
        if start not in _pinned_ends:
            bisect.insort(_pinned_starts, start)
        _pinned_ends[start] = start + nbytes


def _unregister_range(start):
    with _lock:
        if _pinned_ends.pop(start, None) is not None:
            i = bisect.bisect_left(_pinned_starts, start)
            del _pinned_starts[i]


def is_pinned(ptr, nbytes):
    """True when host range ``[ptr, ptr+nbytes)`` lies in page-locked memory that cujit
    allocated or registered (pinned/mapped arrays, ``with pinned(...)``)."""
    starts = _pinned_starts
    i = bisect.bisect_right(starts, ptr) - 1
    if i < 0:
        return False
    try:
        return ptr + nbytes <= _pinned_ends[starts[i]]
    except (KeyError, IndexError):
        return False


def _give_back(key, entry):
    global _cache_bytes
    if _cache_bytes <= CACHE_MAX_BYTES:
        lst = _cache.get(key)
        if lst is None:
            lst = _cache.setdefault(key, [])
        lst.append(entry)
        return
    with _lock:
        _cache_bytes -= key
    _unregister_range(entry[0].host_pointer)
    # Dropping the last reference hands the buffer to the memory manager's deferred free.


class _Lease:
    """Rides on a ctypes buffer object (as an attribute); when the buffer dies — after every
    ndarray and view over it — ``__del__`` returns the pinned block to the cache (cheaper than
    a ``weakref.finalize`` per lease)."""
    __slots__ = ("key", "entry")

    def __init__(self, key, entry):
        self.key = key
        self.entry = entry

    def __del__(self):
        try:
            _give_back(self.key, self.entry)
        except Exception:   # interpreter shutdown: module globals may be gone
            pass


class _BigLease:
    """Keeps an uncached pinned allocation alive while its buffer lives."""
    __slots__ = ("mem",)

    def __init__(self, mem):
        self.mem = mem

    def __del__(self):
        try:
            _unregister_range(self.mem.host_pointer)
        except Exception:
            pass


def _forget(key):
    """A cache block of ``key`` bytes that is dropped (its memory goes to the deferred free)."""
    global _cache_bytes
    with _lock:
        _cache_bytes -= key


def _lease(nbytes):
    """A ctypes ``c_uint8 * nbytes`` buffer over page-locked memory, from the cache when
    possible.  NumPy arrays built on it (``np.ndarray(..., buffer=buf)``) keep it as their
    base, so the block goes back to the cache only once all of them are gone."""
    global _cache_bytes
    if nbytes > CACHE_MAX_BUFFER:
        mem = _host_alloc(_runtime.current_context(), nbytes)
        _register_range(mem.host_pointer, nbytes)
        buf = (ctypes.c_uint8 * nbytes).from_address(mem.host_pointer)
        buf._cujit_lease = _BigLease(mem)
        return buf
    key = 4096 if nbytes <= 4096 else _size_class(nbytes)
    ctx = _runtime.current_context()
    # A context reset starts a new generation and kills its memory (cujit.memory.pointers).
    gen = getattr(ctx, "generation", 0)
    entry = None
    lst = _cache.get(key)
    while lst:
        try:
            e = lst.pop()
        except IndexError:      # another thread took the last one
            break
        if e[1] is ctx and e[2] == gen:
            entry = e
            break
        _forget(key)            # another context's block, or a dead generation's
    if entry is None:
        mem = _host_alloc(ctx, key)
        entry = (mem, ctx, gen)
        with _lock:
            _cache_bytes += key
        _register_range(mem.host_pointer, key)
    buf = _u8_type(nbytes).from_address(entry[0].host_pointer)
    buf._cujit_lease = _Lease(key, entry)
    return buf


_U8_TYPES = {}


def _u8_type(nbytes):
    """``ctypes.c_uint8 * nbytes``, built once per length (the hot sizes repeat)."""
    t = _U8_TYPES.get(nbytes)
    if t is None:
        t = ctypes.c_uint8 * nbytes
        if len(_U8_TYPES) < 256:
            _U8_TYPES[nbytes] = t
    return t


def pinned_buffer(nbytes):
    """A page-locked uint8 ndarray of ``nbytes`` (> 0) bytes, reused from the cache when
    possible; its buffer returns to the cache when the array (and every view of it) dies."""
    return np.ndarray((nbytes,), np.uint8, buffer=_lease(nbytes))


def clear_pinned_cache():
    """Drop every cached pinned buffer (their memory is freed through the memory manager);
    returns the number of bytes released.  Call after ``current_context().reset()``."""
    global _cache_bytes
    entries = []
    freed = 0
    # pop rather than replace the lists: a buffer given back meanwhile lands in a list that
    # is still the cache's
    for key, lst in list(_cache.items()):
        while True:
            try:
                entries.append(lst.pop())
            except IndexError:
                break
            freed += key
    with _lock:
        _cache_bytes -= freed
    for e in entries:
        _unregister_range(e[0].host_pointer)
    return freed


def _check_host_size(nbytes):
    """A host array NumPy (and ctypes) can address has at most ``sys.maxsize`` bytes; past it
    they raise OverflowError about C ssize_t.  Same error type as device_array's size check."""
    if nbytes > sys.maxsize:
        raise ValueError(f"allocation size {nbytes} bytes exceeds the largest host array "
                         f"size ({sys.maxsize} bytes)")
    return nbytes


def _geometry(shape, dtype, strides, order):
    dtype = L.normalize_dtype(dtype)
    if type(shape) is int and shape >= 0 and strides is None and order in ("C", "F"):
        return (shape,), dtype, (dtype.itemsize,), _check_host_size(shape * dtype.itemsize)
    shape = L.normalize_shape(shape)
    if order not in ("C", "F"):
        raise ValueError(f"order {order!r} must be 'C' or 'F'")
    if strides is None:
        strides = L.contiguous_strides(shape, dtype.itemsize, order)
    else:
        strides = L.normalize_strides(strides, len(shape))
        if any(s < 0 for s in strides):
            raise ValueError(f"strides {strides} must not be negative for a new allocation")
    lo, hi = L.extent(shape, strides, dtype.itemsize)
    return shape, dtype, strides, _check_host_size(hi)


def pinned_array(shape, dtype=np.float64, strides=None, order="C"):
    """``np.empty``-like array in page-locked host memory (cuMemHostAlloc), for fast and truly
    asynchronous transfers.  ``shape`` int or tuple of ints; TypeError/ValueError as
    :func:`cujit.device_array`.  Small buffers come from a cache (see the module docstring)."""
    if type(shape) is int and shape > 0 and strides is None and order in ("C", "F"):
        # the hot path: 1-D; frombuffer is cheaper than ndarray(..., strides=)
        dtype = L.normalize_dtype(dtype)
        return np.frombuffer(_lease(_check_host_size(shape * dtype.itemsize)), dtype, shape)
    shape, dtype, strides, nbytes = _geometry(shape, dtype, strides, order)
    if nbytes == 0:
        return np.ndarray(shape, dtype, strides=strides)
    return np.ndarray(shape, dtype, buffer=_lease(nbytes), strides=strides)


def _like(ary, what):
    """``ary`` as an ndarray for the ``*_like`` allocators: TypeError naming what was given
    for None (np.asarray would make a 0-d object array of it)."""
    if ary is None:
        raise TypeError(f"{what} needs an array, got None")
    return np.asarray(ary)


def pinned_array_like(ary):
    """``pinned_array`` with ``ary``'s shape and dtype, in its axis order (C/F/permuted).
    TypeError for None or an object dtype."""
    ary = _like(ary, "pinned_array_like")
    strides = L.packed_strides_like(ary.shape, ary.strides, ary.dtype.itemsize)
    return pinned_array(ary.shape, ary.dtype, strides)


class _DeviceHostArray(np.ndarray):
    """Base of host arrays whose memory is also addressable from the device.

    Extra attributes: ``_data_ptr`` (device address of element 0...0; absent when this
    array does not lie in the device-mapped memory, e.g. a ufunc result), ``gpu_data`` (the
    allocation, or None), ``stream``.  Slices and views keep the device pointer (R-HOST-4)."""

    __cuda_memory__ = True
    #: numba's marker of its device arrays (``cudadrv.devicearray.is_cuda_ndarray``)
    __cuda_ndarray__ = True

    def __array_finalize__(self, obj):
        # Only arrays that lie inside the parent's device-mapped memory get ``_data_ptr``;
        # others (ufunc results, copies) are plain host memory and must not look like device
        # arrays to the launcher, which tests ``protocol.has_device_pointer(value)``.
        self.stream = getattr(obj, "stream", 0)
        self.gpu_data = None
        base_ptr = device_pointer(obj)
        if base_ptr is None:
            return
        mem = obj.gpu_data
        if not self.size:
            self._data_ptr = 0
            self.gpu_data = mem
            return
        if mem is None:
            return
        addr = self.__array_interface__["data"][0]
        lo, hi = L.extent(self.shape, self.strides, self.dtype.itemsize)
        h0 = mem.host_pointer
        if h0 <= addr + lo and addr + hi <= h0 + mem.size:
            self._data_ptr = base_ptr + (addr - obj.__array_interface__["data"][0])
            self.gpu_data = mem

    @property
    def _layout(self):
        return L.layout_code(self.shape, self.strides, self.dtype.itemsize)

    @property
    def device_ctypes_pointer(self):
        """``ctypes.c_size_t`` device address of element 0...0 (numba-cuda's type);
        ``ctypes.c_void_p`` NULL for size 0."""
        p = self._data_ptr
        return ctypes.c_size_t(p) if p else ctypes.c_void_p(None)

    @property
    def __cuda_array_interface__(self):
        if device_pointer(self) is None:
            raise AttributeError("this array does not lie in device-mapped memory")
        mem = self.gpu_data
        if mem is not None and not mem.alive:
            # the host bytes survive a reset (Python owns them) but the device mapping not
            from ..memory import DeadMemoryError
            raise DeadMemoryError("this mapped/managed array's device mapping is gone: its "
                                  "context was reset or closed (the host data is still valid)")
        return cai_dict(self)

    def copy_to_host(self, ary=None, stream=0):
        """A host copy (or into ``ary``); the memory is host memory, so NumPy copies it."""
        if stream:
            _runtime.driver().stream_synchronize(_runtime.stream_handle(stream))
        if ary is None:
            return np.array(self, copy=True, subok=False)
        np.copyto(ary, self)
        return ary


class MappedNDArray(_DeviceHostArray):
    """Host array in mapped (zero-copy) page-locked memory; kernels read and write it over
    the bus through ``_data_ptr`` (cuMemHostGetDevicePointer)."""


class ManagedNDArray(_DeviceHostArray):
    """Array in managed (unified) memory: the same address on host and device; the driver
    migrates pages (cuMemAllocManaged)."""


def _wrap(cls, mem, host_ptr, dev_ptr, shape, dtype, strides, nbytes, stream):
    # Over managed memory the buffer is the allocation object itself, so every NumPy view,
    # however derived, keeps it alive: its free waits for the last one (memory/release.py)
    buf = np.frombuffer(mem, np.uint8, nbytes) if cls is ManagedNDArray \
        else _u8(host_ptr, nbytes)
    ary = np.ndarray(shape, dtype, buffer=buf, strides=strides).view(cls)
    ary._data_ptr = dev_ptr if ary.size else 0
    ary.gpu_data = mem
    ary.stream = stream
    return ary


def _require(ctx, attribute, call, what):
    """A clear error, before any driver call, when the device lacks a capability."""
    dev = ctx.device
    if not getattr(dev, attribute):
        from ..driver.errors import CudaAPIError, CUDA_ERROR_NOT_SUPPORTED
        raise CudaAPIError(CUDA_ERROR_NOT_SUPPORTED,
                           f"device {dev.id} ({dev.name}) cannot {what}: "
                           f"CU_DEVICE_ATTRIBUTE_{attribute} is 0", call)


def _check_stream(stream):
    if stream:
        _runtime.stream_handle(stream)


def mapped_array(shape, dtype=np.float64, strides=None, order="C", stream=0, portable=False,
                 wc=False):
    """``MappedNDArray`` in page-locked host memory mapped into the device's address space
    (cuMemHostAlloc with DEVICEMAP; ``portable`` → PORTABLE: mapped for every context;
    ``wc`` → WRITECOMBINED: fast host writes and device reads, slow host reads).
    CudaAPIError (CUDA_ERROR_NOT_SUPPORTED) when the device cannot map host memory."""
    shape, dtype, strides, nbytes = _geometry(shape, dtype, strides, order)
    _check_stream(stream)
    if nbytes == 0:
        ary = np.ndarray(shape, dtype, strides=strides).view(MappedNDArray)
        ary._data_ptr, ary.gpu_data, ary.stream = 0, None, stream
        return ary
    ctx = _runtime.current_context()
    _require(ctx, "CAN_MAP_HOST_MEMORY", "cuMemHostAlloc", "map host memory (mapped_array)")
    if portable or wc:
        # cuMemHostRegister has no write-combined mode and cujit's mempin no PORTABLE flag:
        # these stay cuMemHostAlloc memory, freed by a context reset (docs/design-arrays.md)
        mem = ctx.memhostalloc(nbytes, mapped=True, portable=bool(portable), wc=bool(wc))
    else:
        mem = _host_alloc(ctx, nbytes, mapped=True)
    _register_range(mem.host_pointer, nbytes)
    ary = _wrap(MappedNDArray, mem, mem.host_pointer, mem.device_pointer_value, shape, dtype,
                strides, nbytes, stream)
    weakref.finalize(mem, _unregister_range, mem.host_pointer)
    return ary


def mapped_array_like(ary, stream=0, portable=False, wc=False):
    """``mapped_array`` with ``ary``'s shape and dtype in its axis order.  TypeError for None
    or an object dtype."""
    ary = _like(ary, "mapped_array_like")
    strides = L.packed_strides_like(ary.shape, ary.strides, ary.dtype.itemsize)
    return mapped_array(ary.shape, ary.dtype, strides, stream=stream, portable=portable, wc=wc)


def managed_array(shape, dtype=np.float64, strides=None, order="C", stream=0,
                  attach_global=True):
    """``ManagedNDArray`` in managed memory (cuMemAllocManaged; ``attach_global=False`` →
    CU_MEM_ATTACH_HOST).  A device without managed memory (CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY
    0) raises ``CudaAPIError`` (CUDA_ERROR_NOT_SUPPORTED, naming the device) before any
    allocation.  Kernels may use host-attached memory only on devices with
    CONCURRENT_MANAGED_ACCESS (all Pascal+ Linux GPUs); elsewhere the driver reports the
    access."""
    shape, dtype, strides, nbytes = _geometry(shape, dtype, strides, order)
    _check_stream(stream)
    if nbytes == 0:
        ary = np.ndarray(shape, dtype, strides=strides).view(ManagedNDArray)
        ary._data_ptr, ary.gpu_data, ary.stream = 0, None, stream
        return ary
    ctx = _runtime.current_context()
    _require(ctx, "MANAGED_MEMORY", "cuMemAllocManaged", "allocate managed memory")
    mem = ctx.memallocmanaged(nbytes, attach_global=bool(attach_global))
    ptr = mem.device_pointer_value
    return _wrap(ManagedNDArray, mem, ptr, ptr, shape, dtype, strides, nbytes,
                 stream)


def _host_span(ary, what):
    if not isinstance(ary, np.ndarray):
        raise TypeError(f"{what} takes NumPy arrays, got {type(ary).__name__}")
    lo, hi = L.extent(ary.shape, ary.strides, ary.dtype.itemsize)
    addr = ary.__array_interface__["data"][0]
    return addr, addr + lo, hi - lo


_PAGE = 4096


def _pin_all(ctx, arylist, mapped_, what):
    """Page-lock the arrays' memory: page-rounded spans are merged first, so arrays sharing a
    page (small arrays, views of one buffer) register once — the driver refuses a second
    registration of a page (CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED).  Returns the list of
    ``(mem, lo, hi)`` registrations and, per array, ``(addr, registration or None)``."""
    spans = []
    for ary in arylist:
        addr, start, nbytes = _host_span(ary, what)
        spans.append((addr, start, nbytes))
    ranges = sorted((start & ~(_PAGE - 1), (start + nbytes + _PAGE - 1) & ~(_PAGE - 1))
                    for _, start, nbytes in spans if nbytes)
    merged = []
    for lo, hi in ranges:
        if merged and lo <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], hi)
        else:
            merged.append([lo, hi])
    regs = []
    try:
        for lo, hi in merged:
            mem = ctx.mempin(tuple(arylist), lo, hi - lo, mapped=mapped_)
            _register_range(lo, hi - lo)
            regs.append((mem, lo, hi))
    except BaseException:
        _unpin_all(regs)
        raise
    per = []
    for addr, start, nbytes in spans:
        reg = None
        if nbytes:
            reg = next(r for r in regs if r[1] <= start < r[2])
        per.append((addr, reg))
    return regs, per


def _unpin_all(regs):
    for mem, lo, _ in regs:
        _unregister_range(lo)
        mem.free()


@contextlib.contextmanager
def pinned(*arylist):
    """``with pinned(a, b, ...):`` page-locks the arrays' memory (cuMemHostRegister) for the
    block and unlocks it on exit, at once, also on an exception (so the same arrays can be
    pinned again right after).  TypeError for anything but NumPy arrays."""
    ctx = _runtime.current_context()
    regs, _ = _pin_all(ctx, arylist, False, "pinned()")
    try:
        yield
    finally:
        _unpin_all(regs)
