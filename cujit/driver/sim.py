"""The simulator's fake driver: the :class:`cujit.driver.api.Driver` interface over host memory.

Device allocations get fake addresses (from ``0x3000_0000_0000`` up, never reused, so a
use-after-free is caught) backed by NumPy byte buffers; pinned, managed and registered host
memory are real host memory at their real addresses; mapped memory has both.  The device
capacity is ``config.SIM_DEVICE_MEMORY`` (``CUJIT_SIM_DEVICE_MEMORY``, default 4 GiB), read at
each allocation, so out-of-memory really happens.  Stream work runs synchronously, in order, in
the calling thread; host functions run when enqueued (after all earlier work, as on a GPU).
Errors are the same ``CudaAPIError`` codes a GPU gives.  Devices (``config.SIM_DEVICES``,
one address space and capacity), peer access and peer copies: :mod:`cujit.driver.sim_peer`.
"""
import bisect
import ctypes
import itertools
import threading
import time

import numpy as np

from ..config import config
from .api import Driver, STATIC_SHARED_LIMIT
from .sim_graph import SimCapture
from .sim_peer import SimDevices, CTX_BASE
from .errors import (CudaAPIError, CUDA_ERROR_INVALID_VALUE, CUDA_ERROR_OUT_OF_MEMORY,
                             CUDA_ERROR_INVALID_HANDLE, CUDA_ERROR_NOT_SUPPORTED,
                             CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED,
                             CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED, CUDA_ERROR_INVALID_CONTEXT)

__all__ = ["SimDriver"]

_DEVICE_BASE = 0x3000_0000_0000
_ALIGN = 256
_PAGE = 4096

# An H200-like device.
_ATTRIBUTES = {
    "MAX_THREADS_PER_BLOCK": 1024, "MAX_BLOCK_DIM_X": 1024, "MAX_BLOCK_DIM_Y": 1024,
    "MAX_BLOCK_DIM_Z": 64, "MAX_GRID_DIM_X": 2**31 - 1, "MAX_GRID_DIM_Y": 65535,
    "MAX_GRID_DIM_Z": 65535, "MAX_SHARED_MEMORY_PER_BLOCK": STATIC_SHARED_LIMIT,
    "MAX_SHARED_MEMORY_PER_BLOCK_OPTIN": 232448, "TOTAL_CONSTANT_MEMORY": 65536,
    "WARP_SIZE": 32, "MAX_REGISTERS_PER_BLOCK": 65536, "CLOCK_RATE": 1980000,
    "MULTIPROCESSOR_COUNT": 132, "CAN_MAP_HOST_MEMORY": 1, "COMPUTE_CAPABILITY_MAJOR": 9,
    "COMPUTE_CAPABILITY_MINOR": 0, "UNIFIED_ADDRESSING": 1, "MANAGED_MEMORY": 1,
    "CONCURRENT_MANAGED_ACCESS": 1, "MEMORY_POOLS_SUPPORTED": 1, "ASYNC_ENGINE_COUNT": 3,
    "PCI_BUS_ID": 0, "PCI_DEVICE_ID": 0, "PCI_DOMAIN_ID": 0, "MEMORY_CLOCK_RATE": 3201000,
    "GLOBAL_MEMORY_BUS_WIDTH": 6144, "L2_CACHE_SIZE": 62914560,
    "MAX_THREADS_PER_MULTIPROCESSOR": 2048, "INTEGRATED": 0, "ECC_ENABLED": 1,
    "CONCURRENT_KERNELS": 1, "PAGEABLE_MEMORY_ACCESS": 0,
}


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


class SimDriver(SimDevices, Driver):
    """Fake driver over host memory; see the module docstring."""

    name = "sim"
    is_simulator = True

    def __init__(self):
        self._lock = threading.RLock()
        self._bases = []        # sorted base addresses
        self._blocks = {}       # base -> _Block
        self._next_device = _DEVICE_BASE
        self._used = 0          # device bytes in use (device + pool allocations)
        self._ctx_live = {CTX_BASE}
        self._peer_enabled = set()      # (context, peer context) pairs (driver/sim_peer.py)
        self._current = threading.local()
        self._handles = itertools.count(0x5000)
        self._streams = set()
        self._events = {}
        self._pools = {}
        self._pool_thresholds = {}
        self._capture = SimCapture()    # stream capture and graphs (driver/sim_graph.py)

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

    # -- versions and devices ------------------------------------------------------------
    def driver_version(self):
        return 13000

    def device_name(self, ordinal):
        self._check_ordinal(ordinal, "cuDeviceGetName")
        return "cujit simulated device (H200-like)"

    def device_uuid(self, ordinal):
        self._check_ordinal(ordinal, "cuDeviceGetUuid")
        return f"GPU-00000000-0000-0000-0000-{0xc0de + int(ordinal):012x}"

    def device_total_memory(self, ordinal):
        self._check_ordinal(ordinal, "cuDeviceTotalMem")
        return int(config.SIM_DEVICE_MEMORY)

    def device_attribute(self, ordinal, name):
        self._check_ordinal(ordinal, "cuDeviceGetAttribute")
        try:
            return _ATTRIBUTES[name]
        except KeyError:
            raise ValueError(f"unknown device attribute {name!r}") from None

    # -- contexts ------------------------------------------------------------------------
    def primary_ctx_retain(self, ordinal):
        self._check_ordinal(ordinal, "cuDevicePrimaryCtxRetain")
        with self._lock:
            h = self._ctx_handle(ordinal)
            self._ctx_live.add(h)
            return h

    def primary_ctx_release(self, ordinal):
        self._check_ordinal(ordinal, "cuDevicePrimaryCtxRelease")

    def primary_ctx_reset(self, ordinal):
        """Destroys every allocation, stream and event, as cuDevicePrimaryCtxReset does."""
        self._check_ordinal(ordinal, "cuDevicePrimaryCtxReset")
        h = self._ctx_handle(ordinal)
        with self._lock:
            if self.get_device_count() == 1:
                self._blocks.clear()
            else:       # only this device's memory (host kinds belong to no device)
                self._blocks = {a: b for a, b in self._blocks.items() if b.ctx != h}
            self._bases = sorted(self._blocks)
            self._used = sum(b.size for b in self._blocks.values() if b.kind in ("device", "pool"))
            self._peer_enabled = {p for p in self._peer_enabled if h not in p}
            self._streams.clear()
            self._events.clear()
            self._capture.reset()

    def ctx_set_current(self, ctx):
        if ctx not in self._ctx_live:
            _raise(CUDA_ERROR_INVALID_CONTEXT, "cuCtxSetCurrent", hex(ctx))
        self._current.ctx = ctx

    def ctx_synchronize(self):
        if self._capture.active:
            self._capture.refuse(None, "cuCtxSynchronize")
        return None

    def profiler_start(self):      # no profiler can attach to the simulator: nothing to do
        return None

    def profiler_stop(self):
        return None

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

    def device_mempool(self, ordinal):
        self._check_ordinal(ordinal, "cuDeviceGetDefaultMemPool")
        return self._pools.setdefault(ordinal, 0x9000 + ordinal)

    def mempool_set_release_threshold(self, pool, nbytes):
        self._pool_thresholds[pool] = int(nbytes)

    def mempool_trim(self, pool, keep_bytes=0):
        return None

    def mem_alloc_from_pool_async(self, nbytes, pool, stream):
        self._check_stream(stream, "cuMemAllocFromPoolAsync")
        return self._alloc_device(nbytes, "cuMemAllocFromPoolAsync", kind="pool")

    def mem_free_async(self, ptr, stream):
        self._check_stream(stream, "cuMemFreeAsync")
        self._free_block(ptr, "cuMemFreeAsync", ("pool", "device"))

    # -- copies and sets -----------------------------------------------------------------
    def _copy(self, dst, src, nbytes, stream, call, dst_host, src_host):
        if stream:
            self._check_stream(stream, call)
        if not isinstance(nbytes, (int, np.integer)) or nbytes < 0:
            _raise(CUDA_ERROR_INVALID_VALUE, call, f"size {nbytes!r}")
        if nbytes == 0:
            return
        if self._capture.active and self._captured(
                stream, call, lambda: self._copy(dst, src, nbytes, 0, call, dst_host, src_host),
                ((dst, dst_host), (src, src_host))):
            return
        d = self._span(dst, nbytes, call, "destination", dst_host)
        s = self._span(src, nbytes, call, "source", src_host)
        d[...] = s

    def _captured(self, stream, call, fn, host=()):
        """Stream capture hook: True when ``fn`` was recorded into a graph instead of run."""
        pageable = [(p, self._find(p) is None) for p, is_host in host if is_host]
        return self._capture.intercept(stream, call, fn, pageable)

    def memcpy_htod(self, dst, src, nbytes, stream=0):
        self._copy(dst, src, nbytes, stream, "cuMemcpyHtoD", False, True)

    def memcpy_dtoh(self, dst, src, nbytes, stream=0):
        self._copy(dst, src, nbytes, stream, "cuMemcpyDtoH", True, False)

    def memcpy_dtod(self, dst, src, nbytes, stream=0):
        self._copy(dst, src, nbytes, stream, "cuMemcpyDtoD", False, False)

    def memcpy(self, dst, src, nbytes, stream=0):
        self._copy(dst, src, nbytes, stream, "cuMemcpy", True, True)

    def memcpy_2d(self, dst, dst_pitch, src, src_pitch, width, height, stream=0):
        call = "cuMemcpy2D"
        if stream:
            self._check_stream(stream, call)
        if width < 0 or height < 0 or (height > 1 and (dst_pitch < width or src_pitch < width)):
            _raise(CUDA_ERROR_INVALID_VALUE, call,
                   f"width {width}, height {height}, pitches {src_pitch}/{dst_pitch}")
        if width == 0 or height == 0:
            return
        if self._capture.active and self._captured(
                stream, call,
                lambda: self.memcpy_2d(dst, dst_pitch, src, src_pitch, width, height, 0),
                ((dst, True), (src, True))):
            return
        span_d = dst_pitch * (height - 1) + width
        span_s = src_pitch * (height - 1) + width
        d = self._span(dst, span_d, call, "destination", True)
        s = self._span(src, span_s, call, "source", True)
        dv = np.lib.stride_tricks.as_strided(d, (height, width), (dst_pitch, 1))
        sv = np.lib.stride_tricks.as_strided(s, (height, width), (src_pitch, 1))
        dv[...] = sv

    def memset_d8(self, ptr, value, nbytes, stream=0):
        if stream:
            self._check_stream(stream, "cuMemsetD8")
        if nbytes == 0:
            return
        if self._capture.active and self._captured(
                stream, "cuMemsetD8", lambda: self.memset_d8(ptr, value, nbytes, 0)):
            return
        self._span(ptr, nbytes, "cuMemsetD8", "destination", False)[...] = value & 0xFF

    # -- streams and events --------------------------------------------------------------
    def _check_stream(self, stream, call):
        if stream in (0, 1, 2) or stream in self._streams:
            return
        _raise(CUDA_ERROR_INVALID_HANDLE, call, f"stream {stream!r} does not exist")

    def stream_create(self, non_blocking=False, priority=0):
        with self._lock:
            h = next(self._handles)
            self._streams.add(h)
            return h

    def stream_destroy(self, stream):
        with self._lock:
            if stream not in self._streams:
                _raise(CUDA_ERROR_INVALID_HANDLE, "cuStreamDestroy", f"stream {stream!r}")
            self._streams.discard(stream)

    def stream_synchronize(self, stream):
        self._check_stream(stream, "cuStreamSynchronize")
        if self._capture.active:
            self._capture.refuse(stream, "cuStreamSynchronize")

    def stream_query(self, stream):
        self._check_stream(stream, "cuStreamQuery")
        if self._capture.active:
            self._capture.refuse(stream, "cuStreamQuery")
        return True

    def stream_wait_event(self, stream, event):
        self._check_stream(stream, "cuStreamWaitEvent")
        self._check_event(event, "cuStreamWaitEvent")

    def launch_host_func(self, stream, fn):
        self._check_stream(stream, "cuLaunchHostFunc")
        if self._capture.active and self._captured(
                stream, "cuLaunchHostFunc", lambda: self.launch_host_func(0, fn)):
            return
        try:
            fn()
        except BaseException:
            pass

    def run_on_stream(self, stream, fn):
        """Simulator only: run ``fn()`` as stream work (a kernel launch), in stream order."""
        self._check_stream(stream, "cuLaunchKernel")
        if self._capture.active and self._captured(stream, "cuLaunchKernel", fn):
            return None
        return fn()

    def _check_event(self, event, call):
        ev = self._events.get(event)
        if ev is None:
            _raise(CUDA_ERROR_INVALID_HANDLE, call, f"event {event!r} does not exist")
        return ev

    def event_create(self, timing=True, blocking=False, interprocess=False):
        with self._lock:
            h = next(self._handles)
            self._events[h] = {"timing": bool(timing), "time": None}
            return h

    def event_destroy(self, event):
        self._check_event(event, "cuEventDestroy")
        self._events.pop(event, None)

    def event_record(self, event, stream=0):
        ev = self._check_event(event, "cuEventRecord")
        self._check_stream(stream, "cuEventRecord")
        ev["time"] = time.perf_counter()

    def event_synchronize(self, event):
        self._check_event(event, "cuEventSynchronize")

    def event_query(self, event):
        self._check_event(event, "cuEventQuery")
        return True

    def event_elapsed_time(self, start, end):
        a = self._check_event(start, "cuEventElapsedTime")
        b = self._check_event(end, "cuEventElapsedTime")
        if not (a["timing"] and b["timing"]):
            _raise(CUDA_ERROR_INVALID_HANDLE, "cuEventElapsedTime",
                   "an event was created with timing disabled")
        if a["time"] is None or b["time"] is None:
            _raise(CUDA_ERROR_INVALID_HANDLE, "cuEventElapsedTime", "an event was never recorded")
        return (b["time"] - a["time"]) * 1000.0

    # -- modules and launches ------------------------------------------------------------
    def _no_modules(self, call):
        _raise(CUDA_ERROR_NOT_SUPPORTED, call,
               "the simulator runs kernels as Python; PTX and cubin images cannot be loaded")

    def module_load_data(self, image):
        self._no_modules("cuModuleLoadData")

    def module_unload(self, module):
        self._no_modules("cuModuleUnload")

    def module_get_function(self, module, name):
        self._no_modules("cuModuleGetFunction")

    def module_get_global(self, module, name):
        self._no_modules("cuModuleGetGlobal")

    def func_get_attribute(self, func, name):
        self._no_modules("cuFuncGetAttribute")

    def func_set_attribute(self, func, name, value):
        self._no_modules("cuFuncSetAttribute")

    def launch_kernel(self, func, gx, gy, gz, bx, by, bz, shared_bytes, stream, params):
        self._no_modules("cuLaunchKernel")

    def launch_cooperative_kernel(self, func, gx, gy, gz, bx, by, bz, shared_bytes, stream,
                                  params):
        self._no_modules("cuLaunchCooperativeKernel")

    def occupancy_max_active_blocks(self, func, block_size, dynamic_shared_bytes):
        self._no_modules("cuOccupancyMaxActiveBlocksPerMultiprocessor")

    # -- CUDA graphs (driver/sim_graph.py) -----------------------------------------------
    def stream_begin_capture(self, stream):
        self._check_stream(stream, "cuStreamBeginCapture")
        self._capture.begin(stream)

    def stream_end_capture(self, stream):
        self._check_stream(stream, "cuStreamEndCapture")
        return self._capture.end(stream)

    def stream_is_capturing(self, stream):
        self._check_stream(stream, "cuStreamIsCapturing")
        return self._capture.is_capturing(stream)

    def graph_instantiate(self, graph):
        return self._capture.instantiate(graph)

    def graph_launch(self, graph_exec, stream):
        self._check_stream(stream, "cuGraphLaunch")
        ops = self._capture.ops_of_exec(graph_exec)

        def run():
            for op in ops:
                op()
        if self._capture.active and self._captured(stream, "cuGraphLaunch", run):
            return
        run()

    def graph_destroy(self, graph):
        self._capture.destroy(graph)

    def graph_exec_destroy(self, graph_exec):
        self._capture.destroy_exec(graph_exec)

    def graph_node_count(self, graph):
        return self._capture.node_count(graph)

    # -- IPC -----------------------------------------------------------------------------
    def ipc_get_mem_handle(self, ptr):
        _raise(CUDA_ERROR_NOT_SUPPORTED, "cuIpcGetMemHandle", "IPC is not simulated")

    def ipc_open_mem_handle(self, handle):
        _raise(CUDA_ERROR_NOT_SUPPORTED, "cuIpcOpenMemHandle", "IPC is not simulated")

    def ipc_close_mem_handle(self, ptr):
        _raise(CUDA_ERROR_NOT_SUPPORTED, "cuIpcCloseMemHandle", "IPC is not simulated")
