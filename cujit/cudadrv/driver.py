"""``numba.cuda.cudadrv.driver``'s names that cujit has (re-exports, for ported imports), and
the module's private helpers that libraries and numba-cuda's ``testing.py`` call
(``_raise_driver_not_found``, which STUMPY calls when there is no GPU; ``_have_nvjitlink``)."""
from ..compiler.linker import nvjitlink_available
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
           "Context", "Device", "Event", "Stream", "event_elapsed_time", "get_version",
           "DRIVER_NOT_FOUND_MSG", "DRIVER_LOAD_ERROR_MSG"]

# numba.cuda's wording, since callers may match on it.
DRIVER_NOT_FOUND_MSG = """
CUDA driver library cannot be found.
Ensure that a compatible NVIDIA driver is installed and available on your system path.
"""

DRIVER_LOAD_ERROR_MSG = """
Possible CUDA driver libraries are found but error occurred during load:
%s
"""


def _raise_driver_not_found():
    """Raise :class:`CudaSupportError` with :data:`DRIVER_NOT_FOUND_MSG`, as numba.cuda's
    ``cudadrv.driver._raise_driver_not_found`` does (libraries raise it for a GPU entry
    point called where there is no GPU)."""
    raise CudaSupportError(DRIVER_NOT_FOUND_MSG)


def _raise_driver_error(e):
    """Raise :class:`CudaSupportError` saying the driver library was found but failed to
    load with error ``e`` (any object, shown with ``%s``), as numba.cuda's
    ``cudadrv.driver._raise_driver_error``."""
    raise CudaSupportError(DRIVER_LOAD_ERROR_MSG % (e,))


def _have_nvjitlink():
    """True when nvJitLink loads here (:func:`cujit.compiler.linker.nvjitlink_available`), as
    numba.cuda's ``cudadrv.driver._have_nvjitlink``; numba-cuda's ``testing.py`` calls it at
    import to decide ``skip_if_nvjitlink_missing``."""
    return nvjitlink_available()
