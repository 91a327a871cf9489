"""The real backend: the CUDA driver through ``cuda.bindings.driver`` (cuda-bindings 12.8+/13.x).

Every method is a thin call plus an error check, because allocation, copy and launch latency is
a product goal; see :mod:`cujit.driver.api` for the contract of each method.
"""
import ctypes
import itertools
import re
import threading

from .api import Driver, DEVICE_ATTRIBUTES
from .errors import (CudaAPIError, CudaSupportError, CUDA_ERROR_NOT_READY, api_error,
                     driver_load_reason, no_gpu_message, CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED,
                     missing_toolchain_message)

__all__ = ["CudaDriver"]

_HOSTFN = ctypes.CFUNCTYPE(None, ctypes.c_void_p)


_ELF_MAGIC = b"\x7fELF"                  # a cubin
_FATBIN_MAGIC = b"\x50\xed\x55\xba"       # a fatbin (fatbinary.h: 0xBA55ED50, little-endian)


def _error_code(exc, default):
    """The CUresult (int) that cuda.core's error ``exc`` names in its text (it starts
    ``CUDA_ERROR_...``), or ``default`` when it names none."""
    from cuda.bindings.driver import CUresult
    for word in re.findall(r"CUDA_ERROR_[A-Z0-9_]+", str(exc)):
        code = getattr(CUresult, word, None)
        if code is not None:
            return int(code)
    return default


def _raise(err, call, msg=""):
    # fork detection and sticky-error reporting live on this error path only
    raise api_error(err, msg, call)


class CudaDriver(Driver):
    """The CUDA driver.  Constructing it runs ``cuInit(0)``; failure is CudaSupportError."""

    name = "cuda"
    is_simulator = False

    def __init__(self):
        try:
            from cuda.bindings import driver as d
        except ImportError as exc:  # the lean install (no [cu13]/[cu12] extra)
            raise CudaSupportError(missing_toolchain_message("the CUDA driver backend",
                                                             exc)) from exc
        try:
            (err,) = d.cuInit(0)
        except RuntimeError as exc:  # libcuda.so.1 not found
            # from None: the loader's own traceback says nothing the message does not
            raise CudaSupportError(no_gpu_message(driver_load_reason(exc))) from None
        if err:
            raise CudaSupportError(no_gpu_message(
                f"cuInit failed with {CudaAPIError(err, call='cuInit')}"))
        self._d = d
        self._devices = {}
        self._objects = {}          # int handle -> cuda-bindings object (contexts, pools)
        self._attr_enum = {n: getattr(d.CUdevice_attribute, "CU_DEVICE_ATTRIBUTE_" + n)
                           for n in DEVICE_ATTRIBUTES
                           if hasattr(d.CUdevice_attribute, "CU_DEVICE_ATTRIBUTE_" + n)}
        # Host callbacks: one C trampoline, Python callables kept alive in a table by key.
        self._host_fns = {}
        self._host_keys = itertools.count(1)
        self._host_lock = threading.Lock()
        self._trampoline = _HOSTFN(self._run_host_fn)
        self._trampoline_fn = d.CUhostFn(ctypes.cast(self._trampoline, ctypes.c_void_p).value)
        # Hot-path bindings
        self._cuMemAlloc = d.cuMemAlloc
        self._cuMemFree = d.cuMemFree
        self._cuLaunchKernel = d.cuLaunchKernel
        # the warm-launch contract (driver/api.py)
        self.raw_launch = d.cuLaunchKernel
        self.function_ref = d.CUfunction
        self.stream_ref = d.CUstream
        self._cuGraphLaunch = d.cuGraphLaunch
        self._cuMemcpyHtoD = d.cuMemcpyHtoD
        self._cuMemcpyDtoH = d.cuMemcpyDtoH
        self._cuMemcpyHtoDAsync = d.cuMemcpyHtoDAsync
        self._cuMemcpyDtoHAsync = d.cuMemcpyDtoHAsync

    def bindings_module(self):
        return self._d

    def raw_function(self, name):
        fn = getattr(self._d, name, None) if name.startswith("cu") else None
        if not callable(fn):
            raise AttributeError(f"cuda.bindings.driver has no function {name!r}")

        def call(*args):
            err, *rest = fn(*args)
            if err:
                _raise(err, name)
            if not rest:
                return None
            return rest[0] if len(rest) == 1 else tuple(rest)
        call.__name__ = call.__qualname__ = name
        call.__doc__ = (f"{name} through cuda-bindings; CudaAPIError for an error result, "
                        "the other results returned")
        return call

    # -- helpers -------------------------------------------------------------------------
    def _dev(self, ordinal):
        dev = self._devices.get(ordinal)
        if dev is None:
            err, dev = self._d.cuDeviceGet(ordinal)
            if err:
                _raise(err, "cuDeviceGet", f"device ordinal {ordinal}")
            self._devices[ordinal] = dev
        return dev

    def _keep(self, obj):
        h = int(obj)
        self._objects[h] = obj
        return h

    # -- versions and devices ------------------------------------------------------------
    def driver_version(self):
        err, v = self._d.cuDriverGetVersion()
        if err:
            _raise(err, "cuDriverGetVersion")
        return v

    def get_device_count(self):
        err, n = self._d.cuDeviceGetCount()
        if err:
            _raise(err, "cuDeviceGetCount")
        return n

    def device_name(self, ordinal):
        err, name = self._d.cuDeviceGetName(256, self._dev(ordinal))
        if err:
            _raise(err, "cuDeviceGetName")
        return name.split(b"\0", 1)[0].decode()

    def device_uuid(self, ordinal):
        err, uuid = self._d.cuDeviceGetUuid(self._dev(ordinal))
        if err:
            _raise(err, "cuDeviceGetUuid")
        b = bytes(uuid.bytes)
        h = b.hex()
        return f"GPU-{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:32]}"

    def device_total_memory(self, ordinal):
        err, n = self._d.cuDeviceTotalMem(self._dev(ordinal))
        if err:
            _raise(err, "cuDeviceTotalMem")
        return n

    def device_attribute(self, ordinal, name):
        try:
            attr = self._attr_enum[name]
        except KeyError:
            raise ValueError(f"unknown device attribute {name!r}") from None
        err, v = self._d.cuDeviceGetAttribute(attr, self._dev(ordinal))
        if err:
            _raise(err, "cuDeviceGetAttribute", name)
        return v

    # -- contexts ------------------------------------------------------------------------
    def primary_ctx_retain(self, ordinal):
        err, ctx = self._d.cuDevicePrimaryCtxRetain(self._dev(ordinal))
        if err:
            _raise(err, "cuDevicePrimaryCtxRetain")
        return self._keep(ctx)

    def primary_ctx_release(self, ordinal):
        (err,) = self._d.cuDevicePrimaryCtxRelease(self._dev(ordinal))
        if err:
            _raise(err, "cuDevicePrimaryCtxRelease")

    def primary_ctx_reset(self, ordinal):
        (err,) = self._d.cuDevicePrimaryCtxReset(self._dev(ordinal))
        if err:
            _raise(err, "cuDevicePrimaryCtxReset")

    def ctx_set_current(self, ctx):
        obj = self._objects.get(ctx, ctx) if ctx else self._d.CUcontext(0)
        (err,) = self._d.cuCtxSetCurrent(obj)
        if err:
            _raise(err, "cuCtxSetCurrent")

    def ctx_get_current(self):
        err, ctx = self._d.cuCtxGetCurrent()
        if err:
            _raise(err, "cuCtxGetCurrent")
        return int(ctx) if ctx is not None else 0

    def ctx_pop_current(self):
        if not self.ctx_get_current():
            return 0            # cuCtxPopCurrent of an empty stack is an error: nothing to pop
        err, ctx = self._d.cuCtxPopCurrent()
        if err:
            _raise(err, "cuCtxPopCurrent")
        return int(ctx)

    def ctx_synchronize(self):
        (err,) = self._d.cuCtxSynchronize()
        if err:
            _raise(err, "cuCtxSynchronize")

    def device_can_access_peer(self, ordinal, peer_ordinal):
        err, can = self._d.cuDeviceCanAccessPeer(self._dev(ordinal), self._dev(peer_ordinal))
        if err:
            _raise(err, "cuDeviceCanAccessPeer", f"devices {ordinal} and {peer_ordinal}")
        return bool(can)

    def ctx_enable_peer_access(self, peer_ctx):
        (err,) = self._d.cuCtxEnablePeerAccess(self._objects.get(peer_ctx, peer_ctx), 0)
        if not err:
            return True
        if int(err) == CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED:
            return False
        _raise(err, "cuCtxEnablePeerAccess", f"peer context {peer_ctx:#x}")

    def profiler_start(self):
        (err,) = self._d.cuProfilerStart()
        if err:
            _raise(err, "cuProfilerStart")

    def profiler_stop(self):
        (err,) = self._d.cuProfilerStop()
        if err:
            _raise(err, "cuProfilerStop")

    # -- memory --------------------------------------------------------------------------
    def mem_alloc(self, nbytes):
        err, ptr = self._cuMemAlloc(nbytes)
        if err:
            _raise(err, "cuMemAlloc", f"{nbytes} bytes")
        return int(ptr)

    def mem_free(self, ptr):
        (err,) = self._cuMemFree(ptr)
        if err:
            _raise(err, "cuMemFree", hex(ptr))

    def mem_alloc_managed(self, nbytes, attach_global=True):
        d = self._d
        flags = (d.CUmemAttach_flags.CU_MEM_ATTACH_GLOBAL if attach_global
                 else d.CUmemAttach_flags.CU_MEM_ATTACH_HOST)
        err, ptr = d.cuMemAllocManaged(nbytes, flags)
        if err:
            _raise(err, "cuMemAllocManaged", f"{nbytes} bytes")
        return int(ptr)

    def mem_host_alloc(self, nbytes, mapped=False, portable=False, wc=False):
        flags = (1 if portable else 0) | (2 if mapped else 0) | (4 if wc else 0)
        err, ptr = self._d.cuMemHostAlloc(nbytes, flags)
        if err:
            _raise(err, "cuMemHostAlloc", f"{nbytes} bytes")
        return int(ptr)

    def mem_free_host(self, ptr):
        (err,) = self._d.cuMemFreeHost(ptr)
        if err:
            _raise(err, "cuMemFreeHost", hex(ptr))

    def mem_host_register(self, ptr, nbytes, mapped=False, portable=False):
        flags = (1 if portable else 0) | (2 if mapped else 0)
        (err,) = self._d.cuMemHostRegister(ptr, nbytes, flags)
        if err:
            _raise(err, "cuMemHostRegister", f"{nbytes} bytes at {ptr:#x}")

    def mem_host_unregister(self, ptr):
        (err,) = self._d.cuMemHostUnregister(ptr)
        if err:
            _raise(err, "cuMemHostUnregister", hex(ptr))

    def mem_host_get_device_pointer(self, host_ptr):
        err, dptr = self._d.cuMemHostGetDevicePointer(host_ptr, 0)
        if err:
            _raise(err, "cuMemHostGetDevicePointer", hex(host_ptr))
        return int(dptr)

    def mem_get_info(self):
        err, free, total = self._d.cuMemGetInfo()
        if err:
            _raise(err, "cuMemGetInfo")
        return free, total

    def mem_get_address_range(self, ptr):
        err, base, size = self._d.cuMemGetAddressRange(ptr)
        if err:
            _raise(err, "cuMemGetAddressRange", hex(ptr))
        return int(base), size

    def pointer_device(self, ptr):
        # The device of the allocation's context: on the H200 pair (driver 580, cuda-bindings
        # 13.3) CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL answered 0 for memory cuMemAlloc'd in
        # device 1's context, whose CU_POINTER_ATTRIBUTE_CONTEXT was right.  Stream-ordered
        # (pool) memory has no context: the ordinal attribute is all there is.
        d = self._d
        attr = d.CUpointer_attribute
        err, ctx = d.cuPointerGetAttribute(attr.CU_POINTER_ATTRIBUTE_CONTEXT, ptr)
        if err:
            _raise(err, "cuPointerGetAttribute", f"context of {ptr:#x}")
        if int(ctx):
            (err,) = d.cuCtxPushCurrent(ctx)
            if err:
                _raise(err, "cuCtxPushCurrent")
            try:
                err, dev = d.cuCtxGetDevice()
            finally:
                d.cuCtxPopCurrent()
            if err:
                _raise(err, "cuCtxGetDevice")
            return int(dev)
        err, ordinal = d.cuPointerGetAttribute(attr.CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, ptr)
        if err:
            _raise(err, "cuPointerGetAttribute", f"device ordinal of {ptr:#x}")
        return int(ordinal)

    def device_mempool(self, ordinal):
        err, pool = self._d.cuDeviceGetDefaultMemPool(self._dev(ordinal))
        if err:
            _raise(err, "cuDeviceGetDefaultMemPool")
        return self._keep(pool)

    def mempool_set_release_threshold(self, pool, nbytes):
        d = self._d
        (err,) = d.cuMemPoolSetAttribute(
            self._objects.get(pool, pool),
            d.CUmemPool_attribute.CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, d.cuuint64_t(nbytes))
        if err:
            _raise(err, "cuMemPoolSetAttribute", f"release threshold {nbytes}")

    def mempool_trim(self, pool, keep_bytes=0):
        (err,) = self._d.cuMemPoolTrimTo(self._objects.get(pool, pool), keep_bytes)
        if err:
            _raise(err, "cuMemPoolTrimTo")

    def mem_alloc_from_pool_async(self, nbytes, pool, stream):
        err, ptr = self._d.cuMemAllocFromPoolAsync(nbytes, self._objects.get(pool, pool), stream)
        if err:
            _raise(err, "cuMemAllocFromPoolAsync", f"{nbytes} bytes")
        return int(ptr)

    def mem_free_async(self, ptr, stream):
        (err,) = self._d.cuMemFreeAsync(ptr, stream)
        if err:
            _raise(err, "cuMemFreeAsync", hex(ptr))

    # -- copies and sets -----------------------------------------------------------------
    def memcpy_htod(self, dst, src, nbytes, stream=0):
        if stream:
            (err,) = self._cuMemcpyHtoDAsync(dst, src, nbytes, stream)
        else:
            (err,) = self._cuMemcpyHtoD(dst, src, nbytes)
        if err:
            _raise(err, "cuMemcpyHtoD", f"{nbytes} bytes {src:#x} -> {dst:#x}")

    def memcpy_dtoh(self, dst, src, nbytes, stream=0):
        if stream:
            (err,) = self._cuMemcpyDtoHAsync(dst, src, nbytes, stream)
        else:
            (err,) = self._cuMemcpyDtoH(dst, src, nbytes)
        if err:
            _raise(err, "cuMemcpyDtoH", f"{nbytes} bytes {src:#x} -> {dst:#x}")

    def memcpy_dtod(self, dst, src, nbytes, stream=0):
        d = self._d
        if stream:
            (err,) = d.cuMemcpyDtoDAsync(dst, src, nbytes, stream)
        else:
            (err,) = d.cuMemcpyDtoD(dst, src, nbytes)
        if err:
            _raise(err, "cuMemcpyDtoD", f"{nbytes} bytes {src:#x} -> {dst:#x}")

    def memcpy(self, dst, src, nbytes, stream=0):
        d = self._d
        if stream:
            (err,) = d.cuMemcpyAsync(dst, src, nbytes, stream)
        else:
            (err,) = d.cuMemcpy(dst, src, nbytes)
        if err:
            _raise(err, "cuMemcpy", f"{nbytes} bytes {src:#x} -> {dst:#x}")

    def memcpy_peer(self, dst, dst_ctx, src, src_ctx, nbytes, stream=0):
        objs = self._objects
        dc, sc = objs.get(dst_ctx, dst_ctx), objs.get(src_ctx, src_ctx)
        if stream:
            (err,) = self._d.cuMemcpyPeerAsync(dst, dc, src, sc, nbytes, stream)
        else:
            (err,) = self._d.cuMemcpyPeer(dst, dc, src, sc, nbytes)
        if err:
            _raise(err, "cuMemcpyPeer", f"{nbytes} bytes {src:#x} (context {src_ctx:#x}) -> "
                   f"{dst:#x} (context {dst_ctx:#x})")

    def memcpy_2d(self, dst, dst_pitch, src, src_pitch, width, height, stream=0):
        d = self._d
        p = d.CUDA_MEMCPY2D()
        unified = d.CUmemorytype.CU_MEMORYTYPE_UNIFIED
        p.srcMemoryType = unified
        p.srcDevice = src
        p.srcPitch = src_pitch
        p.dstMemoryType = unified
        p.dstDevice = dst
        p.dstPitch = dst_pitch
        p.WidthInBytes = width
        p.Height = height
        if stream:
            (err,) = d.cuMemcpy2DAsync(p, stream)
        else:
            (err,) = d.cuMemcpy2DUnaligned(p)
        if err:
            _raise(err, "cuMemcpy2D",
                   f"{height} rows of {width} bytes, {src:#x}/{src_pitch} -> {dst:#x}/{dst_pitch}")

    def memset_d8(self, ptr, value, nbytes, stream=0):
        d = self._d
        if stream:
            (err,) = d.cuMemsetD8Async(ptr, value, nbytes, stream)
        else:
            (err,) = d.cuMemsetD8(ptr, value, nbytes)
        if err:
            _raise(err, "cuMemsetD8", f"{nbytes} bytes at {ptr:#x}")

    # -- streams and events --------------------------------------------------------------
    def stream_create(self, non_blocking=False, priority=0):
        err, s = self._d.cuStreamCreateWithPriority(1 if non_blocking else 0, priority)
        if err:
            _raise(err, "cuStreamCreateWithPriority")
        return int(s)

    def stream_destroy(self, stream):
        (err,) = self._d.cuStreamDestroy(stream)
        if err:
            _raise(err, "cuStreamDestroy", hex(stream))

    def stream_synchronize(self, stream):
        (err,) = self._d.cuStreamSynchronize(stream)
        if err:
            _raise(err, "cuStreamSynchronize", hex(stream))

    def stream_query(self, stream):
        (err,) = self._d.cuStreamQuery(stream)
        if not err:
            return True
        if int(err) == CUDA_ERROR_NOT_READY:
            return False
        _raise(err, "cuStreamQuery", hex(stream))

    def stream_wait_event(self, stream, event):
        (err,) = self._d.cuStreamWaitEvent(stream, event, 0)
        if err:
            _raise(err, "cuStreamWaitEvent")

    def _run_host_fn(self, key):
        with self._host_lock:
            fn = self._host_fns.pop(key, None)
        if fn is not None:
            try:
                fn()
            except BaseException:  # fn is meant to catch its own; never unwind into C
                pass

    def launch_host_func(self, stream, fn):
        with self._host_lock:
            key = next(self._host_keys)
            self._host_fns[key] = fn
        (err,) = self._d.cuLaunchHostFunc(stream, self._trampoline_fn, key)
        if err:
            with self._host_lock:
                self._host_fns.pop(key, None)
            _raise(err, "cuLaunchHostFunc")

    def event_create(self, timing=True, blocking=False, interprocess=False):
        flags = (0 if timing else 2) | (1 if blocking else 0) | (4 if interprocess else 0)
        err, ev = self._d.cuEventCreate(flags)
        if err:
            _raise(err, "cuEventCreate")
        return int(ev)

    def event_destroy(self, event):
        (err,) = self._d.cuEventDestroy(event)
        if err:
            _raise(err, "cuEventDestroy")

    def event_record(self, event, stream=0):
        (err,) = self._d.cuEventRecord(event, stream)
        if err:
            _raise(err, "cuEventRecord")

    def event_synchronize(self, event):
        (err,) = self._d.cuEventSynchronize(event)
        if err:
            _raise(err, "cuEventSynchronize")

    def event_query(self, event):
        (err,) = self._d.cuEventQuery(event)
        if not err:
            return True
        if int(err) == CUDA_ERROR_NOT_READY:
            return False
        _raise(err, "cuEventQuery")

    def event_elapsed_time(self, start, end):
        err, ms = self._d.cuEventElapsedTime(start, end)
        if err:
            _raise(err, "cuEventElapsedTime")
        return ms

    # -- modules and launches ------------------------------------------------------------
    def module_load_data(self, image):
        err, mod = self._d.cuModuleLoadData(image)
        if err:
            _raise(err, "cuModuleLoadData")
        return int(mod)

    def module_unload(self, module):
        (err,) = self._d.cuModuleUnload(module)
        if err:
            _raise(err, "cuModuleUnload")

    def module_get_function(self, module, name):
        err, fn = self._d.cuModuleGetFunction(module, name.encode())
        if err:
            _raise(err, "cuModuleGetFunction", name)
        return int(fn)

    def module_get_global(self, module, name):
        err, ptr, size = self._d.cuModuleGetGlobal(module, name.encode())
        if err:
            _raise(err, "cuModuleGetGlobal", name)
        return int(ptr), size

    def library_load(self, image, name=""):
        try:
            from cuda.core import ObjectCode
        except ImportError as exc:
            raise CudaSupportError(
                f"loading {name or 'this code'} as a CUDA library needs cuda.core, which "
                f"cannot be imported here ({exc}); pip install cuda-core (linked code's "
                "setup_callback/teardown_callback and Context.create_module_ptx hand out "
                "its ObjectCode)") from exc
        image = bytes(image)
        if image[:4] == _ELF_MAGIC:
            make = ObjectCode.from_cubin
        elif image[:4] == _FATBIN_MAGIC:
            make = ObjectCode.from_fatbin
        else:
            make = ObjectCode.from_ptx
        try:
            code = make(image, name=name)
            code.handle             # cuda.core loads lazily: load now (the driver's own lazy
            # loading may still report bad code at the first cuLibraryGetKernel)
        except Exception as exc:
            raise api_error(_error_code(exc, 200), str(exc), "cuLibraryLoadData") from exc
        return code

    def library_get_kernel(self, library, name):
        try:
            return library.get_kernel(name)
        except Exception as exc:
            raise api_error(_error_code(exc, 500), f"{name}: {exc}",
                            "cuLibraryGetKernel") from exc

    def kernel_get_function(self, kernel):
        d = self._d
        handle = getattr(kernel, "handle", kernel)      # a cuda.core Kernel, or its CUkernel
        if not isinstance(handle, d.CUkernel):
            handle = d.CUkernel(int(handle))
        err, fn = d.cuKernelGetFunction(handle)
        if err:
            _raise(err, "cuKernelGetFunction")
        return int(fn)

    def library_get_global(self, library, name):
        d = self._d
        handle = getattr(library, "handle", library)
        if not isinstance(handle, d.CUlibrary):
            handle = d.CUlibrary(int(handle))
        err, ptr, size = d.cuLibraryGetGlobal(handle, name.encode())
        if err:
            _raise(err, "cuLibraryGetGlobal", name)
        return int(ptr), size

    def func_get_attribute(self, func, name):
        d = self._d
        err, v = d.cuFuncGetAttribute(getattr(d.CUfunction_attribute, "CU_FUNC_ATTRIBUTE_" + name), func)
        if err:
            _raise(err, "cuFuncGetAttribute", name)
        return v

    def func_set_attribute(self, func, name, value):
        d = self._d
        (err,) = d.cuFuncSetAttribute(func, getattr(d.CUfunction_attribute, "CU_FUNC_ATTRIBUTE_" + name), value)
        if err:
            _raise(err, "cuFuncSetAttribute", f"{name}={value}")

    def launch_kernel(self, func, gx, gy, gz, bx, by, bz, shared_bytes, stream, params):
        (err,) = self._cuLaunchKernel(func, gx, gy, gz, bx, by, bz, shared_bytes, stream, params, 0)
        if err:
            _raise(err, "cuLaunchKernel",
                   f"grid ({gx}, {gy}, {gz}), block ({bx}, {by}, {bz}), {shared_bytes} dynamic shared bytes")

    def launch_cooperative_kernel(self, func, gx, gy, gz, bx, by, bz, shared_bytes, stream,
                                  params):
        (err,) = self._d.cuLaunchCooperativeKernel(func, gx, gy, gz, bx, by, bz, shared_bytes,
                                                   stream, params)
        if err:
            _raise(err, "cuLaunchCooperativeKernel",
                   f"grid ({gx}, {gy}, {gz}), block ({bx}, {by}, {bz}), {shared_bytes} dynamic "
                   "shared bytes")

    def occupancy_max_active_blocks(self, func, block_size, dynamic_shared_bytes):
        d = self._d
        err, n = d.cuOccupancyMaxActiveBlocksPerMultiprocessor(func, int(block_size),
                                                               int(dynamic_shared_bytes))
        if err:
            _raise(err, "cuOccupancyMaxActiveBlocksPerMultiprocessor")
        return int(n)

    # -- CUDA graphs (stream capture) -----------------------------------------------------
    def stream_begin_capture(self, stream):
        d = self._d
        (err,) = d.cuStreamBeginCapture(
            stream, d.CUstreamCaptureMode.CU_STREAM_CAPTURE_MODE_RELAXED)
        if err:
            _raise(err, "cuStreamBeginCapture", hex(stream))

    def stream_end_capture(self, stream):
        err, graph = self._d.cuStreamEndCapture(stream)
        if err:
            _raise(err, "cuStreamEndCapture", hex(stream))
        return self._keep(graph)

    def stream_is_capturing(self, stream):
        d = self._d
        err, status = d.cuStreamIsCapturing(stream)
        if err:
            _raise(err, "cuStreamIsCapturing", hex(stream))
        return status == d.CUstreamCaptureStatus.CU_STREAM_CAPTURE_STATUS_ACTIVE

    def graph_instantiate(self, graph):
        err, exe = self._d.cuGraphInstantiate(self._objects[graph], 0)
        if err:
            _raise(err, "cuGraphInstantiate")
        return self._keep(exe)

    def graph_launch(self, graph_exec, stream):
        (err,) = self._cuGraphLaunch(self._objects[graph_exec], stream)
        if err:
            _raise(err, "cuGraphLaunch", hex(stream))

    def graph_destroy(self, graph):
        (err,) = self._d.cuGraphDestroy(self._objects.pop(graph))
        if err:
            _raise(err, "cuGraphDestroy")

    def graph_exec_destroy(self, graph_exec):
        (err,) = self._d.cuGraphExecDestroy(self._objects.pop(graph_exec))
        if err:
            _raise(err, "cuGraphExecDestroy")

    def graph_node_count(self, graph):
        err, _, n = self._d.cuGraphGetNodes(self._objects[graph], 0)
        if err:
            _raise(err, "cuGraphGetNodes")
        return int(n)

    # -- IPC -----------------------------------------------------------------------------
    def ipc_get_mem_handle(self, ptr):
        err, h = self._d.cuIpcGetMemHandle(ptr)
        if err:
            _raise(err, "cuIpcGetMemHandle")
        return bytes(h.reserved)

    def ipc_open_mem_handle(self, handle):
        d = self._d
        h = d.CUipcMemHandle()
        h.reserved = bytes(handle)
        err, ptr = d.cuIpcOpenMemHandle(h, 1)  # CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS
        if err:
            _raise(err, "cuIpcOpenMemHandle")
        return int(ptr)

    def ipc_close_mem_handle(self, ptr):
        (err,) = self._d.cuIpcCloseMemHandle(ptr)
        if err:
            _raise(err, "cuIpcCloseMemHandle")
