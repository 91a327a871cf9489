"""Errors raised by the driver layer (names as numba.cuda's ``cudadrv.error``)."""

__all__ = ["CudaSupportError", "CudaDriverError", "CudaAPIError",
           "CUDA_ERROR_INVALID_VALUE", "CUDA_ERROR_OUT_OF_MEMORY", "CUDA_ERROR_NOT_SUPPORTED",
           "CUDA_ERROR_INVALID_HANDLE", "CUDA_ERROR_NOT_READY", "CUDA_ERROR_NOT_FOUND",
           "CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED", "CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED",
           "CUDA_ERROR_INVALID_CONTEXT", "CUDA_ERROR_LAUNCH_FAILED", "error_name"]

# Codes of CUresult that the code above the driver layer tests for.
CUDA_ERROR_INVALID_VALUE = 1
CUDA_ERROR_OUT_OF_MEMORY = 2
CUDA_ERROR_INVALID_CONTEXT = 201
CUDA_ERROR_INVALID_HANDLE = 400
CUDA_ERROR_NOT_FOUND = 500
CUDA_ERROR_NOT_READY = 600
CUDA_ERROR_LAUNCH_FAILED = 719
CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED = 712
CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED = 713
CUDA_ERROR_NOT_SUPPORTED = 801

_FALLBACK_NAMES = {
    0: "CUDA_SUCCESS", 1: "CUDA_ERROR_INVALID_VALUE", 2: "CUDA_ERROR_OUT_OF_MEMORY",
    3: "CUDA_ERROR_NOT_INITIALIZED", 100: "CUDA_ERROR_NO_DEVICE", 101: "CUDA_ERROR_INVALID_DEVICE",
    200: "CUDA_ERROR_INVALID_IMAGE", 201: "CUDA_ERROR_INVALID_CONTEXT",
    400: "CUDA_ERROR_INVALID_HANDLE", 500: "CUDA_ERROR_NOT_FOUND", 600: "CUDA_ERROR_NOT_READY",
    700: "CUDA_ERROR_ILLEGAL_ADDRESS", 701: "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES",
    712: "CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED", 713: "CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED",
    719: "CUDA_ERROR_LAUNCH_FAILED", 801: "CUDA_ERROR_NOT_SUPPORTED", 999: "CUDA_ERROR_UNKNOWN",
}


def error_name(code):
    """``CUDA_ERROR_*`` name of a CUresult code (int), without calling the driver."""
    code = int(code)
    try:
        from cuda.bindings.driver import CUresult
        return CUresult(code).name
    except Exception:
        return _FALLBACK_NAMES.get(code, f"CUDA_ERROR_{code}")


class CudaSupportError(ImportError):
    """CUDA cannot be used here: no driver, no device, or cuda-bindings missing.

    Raised at first use of the driver, never at ``import cujit`` (numba.cuda's
    ``CudaSupportError``, an ``ImportError`` subclass)."""


def driver_load_reason(exc):
    """One short clause saying why the CUDA driver library could not be loaded, from the
    exception cuda-bindings raised (its message names the library and ends with a period)."""
    text = str(exc).strip()
    if "NVIDIA driver library" in text or "libcuda" in text or "nvcuda" in text:
        return "the NVIDIA driver library (libcuda) is not installed"
    return text.rstrip(".") or type(exc).__name__


def no_gpu_message(reason):
    """The one-paragraph :class:`CudaSupportError` text: why, the rule, and the way out."""
    return (f"no usable CUDA GPU: {reason.rstrip('.')}. cujit runs on a GPU unless told "
            "otherwise and never switches to the simulator by itself in your programs (only "
            "`python -m cujit demo` does, and says so). To run on the CPU simulator, set "
            "CUJIT_ENABLE_CUDASIM=1 (or NUMBA_ENABLE_CUDASIM=1), e.g. "
            "`CUJIT_ENABLE_CUDASIM=1 python your_script.py`; `python -m cujit info` shows "
            "what cujit found.")


class CudaDriverError(Exception):
    """Base of errors reported by a CUDA driver call."""


class CudaAPIError(CudaDriverError):
    """A driver call returned an error.

    Attributes: ``code`` (int CUresult), ``name`` (``CUDA_ERROR_*``), ``call`` (the driver
    function, e.g. ``'cuMemAlloc'``), ``msg`` (extra detail).  ``str()`` names all of them.
    """

    def __init__(self, code, msg="", call=None):
        self.code = int(code)
        self.name = error_name(self.code)
        self.call = call
        self.msg = msg
        where = f"{call} failed with " if call else ""
        detail = f": {msg}" if msg else ""
        super().__init__(f"[{self.code}] {where}{self.name}{detail}")

    def __reduce__(self):
        return (type(self), (self.code, self.msg, self.call))
