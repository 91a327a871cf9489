"""Is there a working CUDA GPU here?  Asked before cujit picks its driver backend (``python -m
cujit info``, the benchmark runner), so it never creates the driver object."""

__all__ = ["probe_gpu"]


def probe_gpu():
    """``(True, '')`` when a CUDA GPU works here, else ``(False, reason)``.

    Calls ``cuInit(0)`` and ``cuDeviceGetCount`` through cuda.bindings directly, so that it
    never creates cujit's driver object (the backend is chosen after this)."""
    try:
        from cuda.bindings import driver as d
    except Exception as exc:                     # ImportError and friends
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
