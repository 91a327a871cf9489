"""The simulator's fake driver: the :class:`cujit.driver.api.Driver` interface over host memory.

Memory (the address map and every kind of allocation) is :mod:`.sim_memory`, a mixin of
:class:`SimDriver`; capture and graphs are :mod:`.sim_graph`.  Device allocations get fake
addresses backed by NumPy byte buffers; host memory kinds are real host memory.  Stream work runs synchronously, in order, in
the calling thread; host functions run when enqueued (after all earlier work, as on a GPU).
Errors are the same ``CudaAPIError`` codes a GPU gives.  Devices (``config.SIM_DEVICES``,
one address space and capacity), peer access and peer copies: :mod:`cujit.driver.sim_peer`.
"""
import itertools
import threading
import time

import numpy as np

from ..config import config
from .api import Driver, STATIC_SHARED_LIMIT
from .sim_graph import SimCapture
from .sim_memory import SimMemory, _raise
from .sim_peer import SimDevices, CTX_BASE
from .errors import (CUDA_ERROR_INVALID_VALUE, CUDA_ERROR_INVALID_HANDLE,
                     CUDA_ERROR_NOT_SUPPORTED, CUDA_ERROR_INVALID_CONTEXT)

__all__ = ["SimDriver"]

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


class SimDriver(SimDevices, SimMemory, Driver):
    """Fake driver over host memory; see the module docstring."""

    name = "sim"
    is_simulator = True

    def __init__(self):
        self._init_memory()     # the address map (driver/sim_memory.py)
        self._ctx_live = {CTX_BASE}
        self._peer_enabled = set()      # (context, peer context) pairs (driver/sim_peer.py)
        self._current = threading.local()
        self._handles = itertools.count(0x5000)
        self._streams = {}              # stream handle -> context it was created in
        self._events = {}
        self._pools = {}
        self._pool_thresholds = {}
        self._capture = SimCapture()    # stream capture and graphs (driver/sim_graph.py)

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
            self._drop_memory(h if self.get_device_count() > 1 else None)
            self._peer_enabled = {p for p in self._peer_enabled if h not in p}
            # only this device's: another device's streams and events outlive the reset
            self._streams = {k: c for k, c in self._streams.items() if c != h}
            self._events = {k: e for k, e in self._events.items() if e["ctx"] != h}
            self._capture.reset()

    def ctx_set_current(self, ctx):
        if not ctx:
            # NULL: no context set; the simulator's work then goes to device 0's, as it
            # does in a thread that never set one
            self._current.__dict__.pop("ctx", None)
            return
        if ctx not in self._ctx_live:
            _raise(CUDA_ERROR_INVALID_CONTEXT, "cuCtxSetCurrent", hex(ctx))
        self._current.ctx = ctx

    def ctx_get_current(self):
        return getattr(self._current, "ctx", 0)

    def ctx_pop_current(self):
        return self._current.__dict__.pop("ctx", 0)

    def ctx_synchronize(self):
        if self._capture.active:
            self._capture.refuse(None, "cuCtxSynchronize")
        return None

    def profiler_start(self):      # no profiler can attach to the simulator: nothing to do
        return None

    def profiler_stop(self):
        return None

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
            self._streams[h] = self._current_ctx()
            return h

    def stream_destroy(self, stream):
        with self._lock:
            if stream not in self._streams:
                _raise(CUDA_ERROR_INVALID_HANDLE, "cuStreamDestroy", f"stream {stream!r}")
            self._streams.pop(stream, None)
            # a destroyed stream is captured no more (a capture left behind would refuse
            # every later synchronous call as implicit synchronisation with it)
            self._capture.forget(stream)

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

    def _stream_ctx(self, stream):
        """The context of a checked stream handle (0, 1, 2: the calling thread's current one)."""
        return self._streams.get(stream) or self._current_ctx()

    def run_on_stream(self, stream, fn):
        """Simulator only: run ``fn()`` as stream work (a kernel launch), in stream order.
        A stream of another context is CUDA_ERROR_INVALID_HANDLE, as on a GPU: a kernel is
        launched on a stream of the current device (copies may use any device's stream)."""
        self._check_stream(stream, "cuLaunchKernel")
        sctx, cur = self._stream_ctx(stream), self._current_ctx()
        if sctx != cur:
            _raise(CUDA_ERROR_INVALID_HANDLE, "cuLaunchKernel",
                   f"stream {stream:#x} belongs to device {self._ctx_ordinal(sctx)}, but the "
                   f"current device is {self._ctx_ordinal(cur)}: launch a kernel on a stream "
                   "made on the current device (e.g. inside the same `with cujit.gpus[i]:`)")
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
            self._events[h] = {"timing": bool(timing), "time": None,
                               "ctx": self._current_ctx()}
            return h

    def event_destroy(self, event):
        self._check_event(event, "cuEventDestroy")
        self._events.pop(event, None)

    def event_record(self, event, stream=0):
        ev = self._check_event(event, "cuEventRecord")
        self._check_stream(stream, "cuEventRecord")
        sctx = self._stream_ctx(stream)
        if ev["ctx"] != sctx:
            _raise(CUDA_ERROR_INVALID_HANDLE, "cuEventRecord",
                   f"event {event:#x} belongs to device {self._ctx_ordinal(ev['ctx'])}, the "
                   f"stream to device {self._ctx_ordinal(sctx)}: an event is recorded on a "
                   "stream of its own device")
        ev["time"] = time.perf_counter()

    def event_synchronize(self, event):
        self._check_event(event, "cuEventSynchronize")

    def event_query(self, event):
        self._check_event(event, "cuEventQuery")
        return True

    def event_elapsed_time(self, start, end):
        a = self._check_event(start, "cuEventElapsedTime")
        b = self._check_event(end, "cuEventElapsedTime")
        if a["ctx"] != b["ctx"]:
            _raise(CUDA_ERROR_INVALID_HANDLE, "cuEventElapsedTime",
                   f"the events belong to devices {self._ctx_ordinal(a['ctx'])} and "
                   f"{self._ctx_ordinal(b['ctx'])}: elapsed time is measured between events "
                   "of one device")
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

    def library_load(self, image, name=""):
        self._no_modules("cuLibraryLoadData")

    def library_get_kernel(self, library, name):
        self._no_modules("cuLibraryGetKernel")

    def kernel_get_function(self, kernel):
        self._no_modules("cuKernelGetFunction")

    def library_get_global(self, library, name):
        self._no_modules("cuLibraryGetGlobal")

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
