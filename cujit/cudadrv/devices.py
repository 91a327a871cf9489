"""``numba.cuda.cudadrv.devices``'s names that cujit has (re-exports, for ported imports):
``gpus``, ``require_context``, and ``get_context(devnum=None)``, ``reset()``."""
from ..runtime.api import require_context
from ..runtime.device_list import gpus
from ..runtime.devices import close, current_context, select_device

__all__ = ["gpus", "require_context", "get_context", "reset"]


def get_context(devnum=None):
    """The current thread's context (numba.cuda's ``cudadrv.devices.get_context``); with
    ``devnum`` (int ordinal), device ``devnum`` is selected first, as ``select_device`` does
    (its errors: ValueError / CudaSupportError for a device that does not exist)."""
    if devnum is not None:
        select_device(devnum)
    return current_context()


def reset():
    """Close this thread's contexts (numba.cuda's ``cudadrv.devices.reset``, which
    ``cuda.close()`` calls); the next use creates a fresh one."""
    close()
