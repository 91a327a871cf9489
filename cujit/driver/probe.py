"""Is there a working CUDA GPU here?  Asked before cujit picks its driver backend (``python -m
cujit info``, the benchmark runner), so it never creates the driver object."""

import ctypes
import sys

from .errors import GPU_EXTRA_HINT

__all__ = ["probe_gpu", "driver_library_present"]


def driver_library_present():
    """True when the NVIDIA driver library (``libcuda.so.1``, ``nvcuda.dll``) loads here,
    asked without cuda-bindings: on the lean install it tells "a GPU machine without the
    toolchain extra" from "no GPU driver"."""
    try:
        ctypes.CDLL("nvcuda.dll" if sys.platform == "win32" else "libcuda.so.1")
    except OSError:
        return False
    return True


def probe_gpu():
    """``(True, '')`` when a CUDA GPU works here, else ``(False, reason)``.

    Calls ``cuInit(0)`` and ``cuDeviceGetCount`` through cuda.bindings directly, so that it
    never creates cujit's driver object (the backend is chosen after this).  Where
    cuda-bindings is missing but a driver is installed (``pip install cujit`` on a GPU
    machine) the reason names the extra that brings the toolchain."""
    try:
        from cuda.bindings import driver as d
    except Exception as exc:                     # ImportError and friends
        if driver_library_present():
            return False, (f"a CUDA driver is installed but cuda-bindings cannot be imported "
                           f"({exc}); to use the GPU, {GPU_EXTRA_HINT}")
        return False, f"cuda-bindings cannot be imported ({exc})"
    try:
        (err,) = d.cuInit(0)
        if err:
            return False, f"cuInit failed ({getattr(err, 'name', err)})"
        err, n = d.cuDeviceGetCount()
        if err:
            return False, f"cuDeviceGetCount failed ({getattr(err, 'name', err)})"
    except Exception as exc:                     # RuntimeError: libcuda.so.1 not found
        from .errors import driver_load_reason
        return False, driver_load_reason(exc)
    if n == 0:
        return False, "the CUDA driver reports no device"
    return True, ""
