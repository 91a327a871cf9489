"""cujit: Numba's CUDA programming model in pure Python.

``import cujit as cuda`` in place of ``from numba import cuda``.  This module only maps the
public names to the modules that define them; each is imported on first use, so importing
cujit is fast and never needs a GPU (driver errors come at first use as ``CudaSupportError``).
"""
import importlib
from typing import TYPE_CHECKING

# Bound eagerly: importing the submodule ``cujit.config`` would otherwise make the package
# attribute ``config`` the module rather than the settings object.
from .config import config
from .driver import set_default_context_provider as _set_default_context_provider

__version__ = "0.1.0"
# numba.cuda's name for which CUDA target this is ("NVIDIA" for numba-cuda).
implementation = "cujit"

_SOURCES = {
    "cujit.driver.errors": ["CudaSupportError", "CudaDriverError", "CudaAPIError"],
    "cujit.runtime.devices": ["select_device", "get_current_device", "close", "current_context",
                              "synchronize", "defer_cleanup", "Device", "Context"],
    "cujit.runtime.device_list": ["gpus", "list_devices", "detect", "is_available",
                                  "cuda_error"],
    "cujit.memory": ["MemoryPointer", "AutoFreePointer", "OwnedPointer", "MappedMemory",
                     "PinnedMemory", "ManagedMemory", "MemoryInfo", "IpcHandle",
                     "BaseCUDAMemoryManager", "HostOnlyCUDAMemoryManager", "GetIpcHandleMixin",
                     "NumbaCUDAMemoryManager", "PoolMemoryManager", "set_memory_manager"],
    "cujit.arrays": ["device_array", "device_array_like", "to_device", "DeviceNDArray",
                     "DeviceRecord", "MappedNDArray", "ManagedNDArray", "pinned_array",
                     "pinned_array_like", "pinned", "mapped_array", "mapped_array_like", "mapped",
                     "managed_array", "as_cuda_array", "is_cuda_array",
                     "from_cuda_array_interface", "from_dlpack", "open_ipc_array"],
    "cujit.runtime.api": ["stream", "default_stream", "legacy_default_stream",
                          "per_thread_default_stream", "external_stream", "event",
                          "is_float16_supported", "is_bfloat16_supported", "is_fp8_supported",
                          "require_context"],
    "cujit.runtime.streams": ["Stream", "Event", "event_elapsed_time"],
    "cujit.runtime.graphs": ["graph", "Graph"],
    "cujit.dispatch": ["jit", "TypingError", "CompileError"],
    "cujit.frontend.errors": ["KernelRuntimeError", "NumbaWarning", "NumbaPerformanceWarning",
                              "NumbaInvalidConfigWarning"],
    "cujit.dispatch.launch_args": ["In", "Out", "InOut"],
    "cujit.dispatch.compile_api": ["compile", "compile_all", "compile_for_current_device",
                                   "compile_ptx", "compile_ptx_for_current_device",
                                   "declare_device", "config_default_cc",
                                   "numba_cuda_default_ptx_cc"],
    "cujit.frontend.linkable": ["LinkableCode", "CUSource", "PTXSource", "Cubin", "Fatbin",
                                "LTOIR", "Archive", "Object"],
    "cujit.profiler": ["profile_start", "profile_stop", "profiling"],
    "cujit.tracing": ["trace", "TraceWarning"],
    "cujit.hooks": ["HookPoint"],
    "cujit.simulator.access": ["access_report"],
    "cujit.kernelapi": ["threadIdx", "blockIdx", "blockDim", "gridDim", "grid", "gridsize",
                        "warpsize", "shared", "local", "const", "syncthreads",
                        "syncthreads_count", "syncthreads_and", "syncthreads_or", "syncwarp",
                        "threadfence", "threadfence_block", "threadfence_system", "atomic",
                        "shfl_sync", "shfl_up_sync", "shfl_down_sync", "shfl_xor_sync",
                        "ballot_sync", "all_sync", "any_sync", "eq_sync", "activemask",
                        "lanemask_lt", "popc", "brev", "clz", "ffs", "fma", "cbrt", "selp",
                        "mulhi", "nanosleep", "match_any_sync", "match_all_sync", "cg", "Dim3",
                        "GridGroup", "literal_unroll", "carray", "farray"],
    "cujit.cache_hints": ["ldca", "ldcg", "ldcs", "ldlu", "ldcv", "stcg", "stcs", "stwb",
                          "stwt"],
    "cujit.vector_types": ['int8x1', 'int8x2', 'int8x3', 'int8x4', 'int16x1',
                            'int16x2', 'int16x3', 'int16x4', 'int32x1', 'int32x2',
                            'int32x3', 'int32x4', 'int64x1', 'int64x2', 'int64x3',
                            'int64x4', 'uint8x1', 'uint8x2', 'uint8x3', 'uint8x4',
                            'uint16x1', 'uint16x2', 'uint16x3', 'uint16x4',
                            'uint32x1', 'uint32x2', 'uint32x3', 'uint32x4',
                            'uint64x1', 'uint64x2', 'uint64x3', 'uint64x4',
                            'float32x1', 'float32x2', 'float32x3', 'float32x4',
                            'float64x1', 'float64x2', 'float64x3', 'float64x4',
                            'char1', 'char2', 'char3', 'char4', 'short1', 'short2',
                            'short3', 'short4', 'int1', 'int2', 'int3', 'int4',
                            'long1', 'long2', 'long3', 'long4', 'longlong1',
                            'longlong2', 'longlong3', 'longlong4', 'uchar1',
                            'uchar2', 'uchar3', 'uchar4', 'ushort1', 'ushort2',
                            'ushort3', 'ushort4', 'uint1', 'uint2', 'uint3',
                            'uint4', 'ulong1', 'ulong2', 'ulong3', 'ulong4',
                            'ulonglong1', 'ulonglong2', 'ulonglong3', 'ulonglong4',
                            'float1', 'float2', 'float3', 'float4', 'double1',
                            'double2', 'double3', 'double4'],
    "cujit.arrays.layout": ["prepare_shape_strides_dtype"],
    "cujit.runtime": ["is_supported_version"],
    "cujit.numba_alias": ["HAS_NUMBA"],
    # numba.cuda's module attributes ``cuda.devicearray`` (``cuda.devicearray.auto_device``)
    # and ``cuda.devices`` (``cuda.devices.get_context()``)
    "cujit.cudadrv": ["devicearray", "devices"],
    "cujit.ufuncs": ["vectorize", "guvectorize"],
    "cujit.reduction": ["reduce", "Reduce"],
    "cujit.types": ["boolean", "bool_", "int8", "int16", "int32", "int64", "uint8", "uint16",
                    "uint32", "uint64", "float16", "float32", "float64", "bfloat16", "complex64",
                    "complex128", "intp", "uintp", "void", "CPointer", "voidptr"],
    "cujit.types.names": ["b1", "bool", "byte", "i1", "i2", "i4", "i8", "u1", "u2", "u4", "u8",
                         "f4", "f8", "c8", "c16", "double", "char", "uchar", "short", "ushort",
                         "int_", "uint", "intc", "uintc", "long_", "ulong", "longlong",
                         "ulonglong", "ssize_t", "size_t", "none"],
}

_WHERE = {name: mod for mod, names in _SOURCES.items() for name in names}
# Submodules reachable as attributes without an import (``cuda.random``, as in numba.cuda).
_SUBMODULES = {"random": "cujit.random", "libdevice": "cujit.libdevice",
               "runtime": "cujit.runtime", "extending": "cujit.extending",
               "bf16": "cujit.bf16", "fp8": "cujit.fp8", "wmma": "cujit.wmma",
               "wgmma": "cujit.wgmma", "pipeline": "cujit.pipeline"}

if TYPE_CHECKING:
    # The names the lazy table resolves, for IDEs and type checkers (which never run
    # __getattr__); tests/driver/test_public_surface.py checks the two agree.
    from .driver.errors import CudaSupportError, CudaDriverError, CudaAPIError
    from .runtime.devices import (select_device, get_current_device, close, current_context,
                                  synchronize, defer_cleanup, Device, Context)
    from .runtime.device_list import (gpus, list_devices, detect, is_available, cuda_error)
    from .memory import (MemoryPointer, AutoFreePointer, OwnedPointer, MappedMemory,
                         PinnedMemory, ManagedMemory, MemoryInfo, IpcHandle,
                         BaseCUDAMemoryManager, HostOnlyCUDAMemoryManager, GetIpcHandleMixin,
                         NumbaCUDAMemoryManager, PoolMemoryManager, set_memory_manager)
    from .arrays import (device_array, device_array_like, to_device, DeviceNDArray,
                         DeviceRecord, MappedNDArray, ManagedNDArray, pinned_array,
                         pinned_array_like, pinned, mapped_array, mapped_array_like, mapped,
                         managed_array, as_cuda_array, is_cuda_array, from_cuda_array_interface,
                         from_dlpack, open_ipc_array)
    from .runtime.api import (stream, default_stream, legacy_default_stream,
                              per_thread_default_stream, external_stream, event,
                              is_float16_supported, is_bfloat16_supported, is_fp8_supported,
                              require_context)
    from .runtime.streams import Stream, Event, event_elapsed_time
    from .runtime.graphs import graph, Graph
    from .dispatch import jit, TypingError, CompileError
    from .frontend.errors import (KernelRuntimeError, NumbaWarning, NumbaPerformanceWarning,
                                  NumbaInvalidConfigWarning)
    from .dispatch.launch_args import In, Out, InOut
    from .dispatch.compile_api import (compile, compile_all, compile_for_current_device,
                                       compile_ptx, compile_ptx_for_current_device,
                                       declare_device, config_default_cc,
                                       numba_cuda_default_ptx_cc)
    from .frontend.linkable import (LinkableCode, CUSource, PTXSource, Cubin, Fatbin, LTOIR,
                                    Archive, Object)
    from .profiler import profile_start, profile_stop, profiling
    from .tracing import trace, TraceWarning
    from .hooks import HookPoint
    from .simulator.access import access_report
    from .kernelapi import (threadIdx, blockIdx, blockDim, gridDim, grid, gridsize, warpsize,
                            shared, local, const, syncthreads, syncthreads_count,
                            syncthreads_and, syncthreads_or, syncwarp, threadfence,
                            threadfence_block, threadfence_system, atomic, shfl_sync,
                            shfl_up_sync, shfl_down_sync, shfl_xor_sync, ballot_sync, all_sync,
                            any_sync, eq_sync, activemask, lanemask_lt, popc, brev, clz, ffs,
                            fma, cbrt, selp, mulhi, nanosleep, match_any_sync, match_all_sync,
                            cg, Dim3, GridGroup, literal_unroll, carray, farray)
    from .cache_hints import (ldca, ldcg, ldcs, ldlu, ldcv, stcg, stcs, stwb, stwt)
    from .vector_types import (int8x1, int8x2, int8x3, int8x4, int16x1, int16x2,
                                 int16x3, int16x4, int32x1, int32x2, int32x3,
                                 int32x4, int64x1, int64x2, int64x3, int64x4,
                                 uint8x1, uint8x2, uint8x3, uint8x4, uint16x1,
                                 uint16x2, uint16x3, uint16x4, uint32x1, uint32x2,
                                 uint32x3, uint32x4, uint64x1, uint64x2, uint64x3,
                                 uint64x4, float32x1, float32x2, float32x3,
                                 float32x4, float64x1, float64x2, float64x3,
                                 float64x4, char1, char2, char3, char4, short1,
                                 short2, short3, short4, int1, int2, int3, int4,
                                 long1, long2, long3, long4, longlong1, longlong2,
                                 longlong3, longlong4, uchar1, uchar2, uchar3,
                                 uchar4, ushort1, ushort2, ushort3, ushort4, uint1,
                                 uint2, uint3, uint4, ulong1, ulong2, ulong3,
                                 ulong4, ulonglong1, ulonglong2, ulonglong3,
                                 ulonglong4, float1, float2, float3, float4,
                                 double1, double2, double3, double4)
    from .arrays.layout import prepare_shape_strides_dtype
    from .runtime import is_supported_version
    from .numba_alias import HAS_NUMBA
    from .cudadrv import devicearray, devices
    from .ufuncs import vectorize, guvectorize
    from .reduction import reduce, Reduce
    from .types import (boolean, bool_, int8, int16, int32, int64, uint8, uint16, uint32,
                        uint64, float16, float32, float64, bfloat16, complex64, complex128, intp,
                        uintp, void, CPointer, voidptr)
    from .types.names import (b1, bool, byte, i1, i2, i4, i8, u1, u2, u4, u8, f4, f8, c8, c16,
                              double, char, uchar, short, ushort, int_, uint, intc, uintc, long_,
                              ulong, longlong, ulonglong, ssize_t, size_t, none)
    from . import (bf16, extending, fp16, fp8, libdevice, pipeline, random, runtime, wgmma,
                   wmma)
    laneid: int

# ``laneid`` differs per simulated thread, so it is computed on every access.
__all__ = sorted(list(_WHERE) + ["config", "laneid", "fp16", "bf16", "fp8", "random",
                                 "libdevice", "runtime", "implementation", "extending", "wmma",
                                 "wgmma", "pipeline"])


def _current_context():
    from .runtime.devices import current_context
    return current_context()


# memory/ sits below contexts; a context it must default (IpcHandle.open()) comes from here.
_set_default_context_provider(_current_context)


def __getattr__(name):
    if name == "laneid":
        from .kernelapi import _laneid
        return _laneid()
    if name == "fp16":      # cuda.fp16: half-precision intrinsics (a submodule, as in numba)
        return importlib.import_module(".fp16", __name__)
    if name in _SUBMODULES:
        return importlib.import_module(_SUBMODULES[name])
    mod = _WHERE.get(name)
    if mod is None:
        raise AttributeError(f"module 'cujit' has no attribute {name!r}")
    value = getattr(importlib.import_module(mod), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(__all__))
