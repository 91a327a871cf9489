"""``numba.cuda.cudadrv.driver``'s names that cujit has (re-exports, for ported imports)."""
from ..driver.errors import CudaAPIError, CudaDriverError, CudaSupportError
from ..memory import (AutoFreePointer, BaseCUDAMemoryManager, GetIpcHandleMixin,
                      HostOnlyCUDAMemoryManager, IpcHandle, ManagedMemory, MappedMemory,
                      MemoryInfo, MemoryPointer, NumbaCUDAMemoryManager, OwnedPointer,
                      PinnedMemory, set_memory_manager)
from ..memory.pointers import DeadMemoryError
from ..profiler import profile_start, profile_stop, profiling
from ..runtime.devices import Context, Device
from ..runtime.streams import Event, Stream, event_elapsed_time
from ..runtime.version import get_version

__all__ = ["CudaAPIError", "CudaDriverError", "CudaSupportError", "DeadMemoryError",
           "AutoFreePointer", "BaseCUDAMemoryManager", "GetIpcHandleMixin",
           "HostOnlyCUDAMemoryManager", "IpcHandle", "ManagedMemory", "MappedMemory",
           "MemoryInfo", "MemoryPointer", "NumbaCUDAMemoryManager", "OwnedPointer",
           "PinnedMemory", "set_memory_manager", "profile_start", "profile_stop", "profiling",
           "Context", "Device", "Event", "Stream", "event_elapsed_time", "get_version"]
