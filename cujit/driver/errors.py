"""Errors raised by the driver layer (names as numba.cuda's ``cudadrv.error``)."""

__all__ = ["CudaSupportError", "CudaDriverError", "CudaAPIError", "fork_error", "api_error",
           "STICKY_ERRORS",
           "CUDA_ERROR_INVALID_VALUE", "CUDA_ERROR_OUT_OF_MEMORY", "CUDA_ERROR_NOT_SUPPORTED",
           "CUDA_ERROR_INVALID_HANDLE", "CUDA_ERROR_NOT_READY", "CUDA_ERROR_NOT_FOUND",
           "CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED", "CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED",
           "CUDA_ERROR_INVALID_CONTEXT", "CUDA_ERROR_LAUNCH_FAILED", "CUDA_ERROR_ILLEGAL_ADDRESS",
           "CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED", "CUDA_ERROR_STREAM_CAPTURE_INVALIDATED",
           "CUDA_ERROR_STREAM_CAPTURE_UNMATCHED", "CUDA_ERROR_STREAM_CAPTURE_IMPLICIT",
           "CUDA_ERROR_INVALID_DEVICE", "CUDA_ERROR_PEER_ACCESS_UNSUPPORTED",
           "CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED", "CUDA_ERROR_PEER_ACCESS_NOT_ENABLED",
           "error_name", "GPU_EXTRA_HINT", "missing_toolchain_message"]

# Codes of CUresult that the code above the driver layer tests for.
CUDA_ERROR_INVALID_VALUE = 1
CUDA_ERROR_OUT_OF_MEMORY = 2
CUDA_ERROR_INVALID_CONTEXT = 201
CUDA_ERROR_INVALID_HANDLE = 400
CUDA_ERROR_NOT_FOUND = 500
CUDA_ERROR_NOT_READY = 600
CUDA_ERROR_ILLEGAL_ADDRESS = 700
CUDA_ERROR_LAUNCH_FAILED = 719
CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED = 712
CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED = 713
CUDA_ERROR_NOT_SUPPORTED = 801
CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED = 900
CUDA_ERROR_STREAM_CAPTURE_INVALIDATED = 901
CUDA_ERROR_STREAM_CAPTURE_UNMATCHED = 903
CUDA_ERROR_STREAM_CAPTURE_IMPLICIT = 906
CUDA_ERROR_INVALID_DEVICE = 101
CUDA_ERROR_PEER_ACCESS_UNSUPPORTED = 217
CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED = 704
CUDA_ERROR_PEER_ACCESS_NOT_ENABLED = 705

_FALLBACK_NAMES = {
    0: "CUDA_SUCCESS", 1: "CUDA_ERROR_INVALID_VALUE", 2: "CUDA_ERROR_OUT_OF_MEMORY",
    3: "CUDA_ERROR_NOT_INITIALIZED", 100: "CUDA_ERROR_NO_DEVICE", 101: "CUDA_ERROR_INVALID_DEVICE",
    200: "CUDA_ERROR_INVALID_IMAGE", 201: "CUDA_ERROR_INVALID_CONTEXT",
    400: "CUDA_ERROR_INVALID_HANDLE", 500: "CUDA_ERROR_NOT_FOUND", 600: "CUDA_ERROR_NOT_READY",
    700: "CUDA_ERROR_ILLEGAL_ADDRESS", 701: "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES",
    712: "CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED", 713: "CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED",
    719: "CUDA_ERROR_LAUNCH_FAILED", 720: "CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE", 801: "CUDA_ERROR_NOT_SUPPORTED", 999: "CUDA_ERROR_UNKNOWN",
    900: "CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED", 901: "CUDA_ERROR_STREAM_CAPTURE_INVALIDATED",
    903: "CUDA_ERROR_STREAM_CAPTURE_UNMATCHED", 906: "CUDA_ERROR_STREAM_CAPTURE_IMPLICIT",
    217: "CUDA_ERROR_PEER_ACCESS_UNSUPPORTED", 704: "CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED",
    705: "CUDA_ERROR_PEER_ACCESS_NOT_ENABLED",
}


def error_name(code):
    """``CUDA_ERROR_*`` name of a CUresult code (int), without calling the driver.

    The codes the simulator raises are in this module's table, so naming them never imports
    cuda-bindings (absent from the lean install); other codes are asked of
    ``cuda.bindings.driver.CUresult`` where it is installed."""
    code = int(code)
    name = _FALLBACK_NAMES.get(code)
    if name is not None:
        return name
    try:
        from cuda.bindings.driver import CUresult
        return CUresult(code).name
    except Exception:
        return f"CUDA_ERROR_{code}"


#: How to get the GPU toolchain, which ``pip install cujit`` leaves out (pyproject.toml's
#: extras, numba-cuda's convention of one extra per CUDA major version).
GPU_EXTRA_HINT = ("install the GPU toolchain with `pip install 'cujit[cu13]'` (CUDA 13 "
                  "driver, 580 or newer) or `pip install 'cujit[cu12]'` (CUDA 12 driver)")


def missing_toolchain_message(what, exc):
    """The :class:`CudaSupportError` text when a GPU-toolchain package cannot be imported:
    ``what`` (str) needed it, ``exc`` (the ImportError) says which package."""
    name = getattr(exc, "name", None)
    why = f"{name} cannot be imported: {exc}" if name else str(exc)
    return (f"{what} needs cujit's GPU toolchain, which is missing here ({why}); "
            f"{GPU_EXTRA_HINT}. The simulator needs none of it (CUJIT_ENABLE_CUDASIM=1).")


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


# (parent pid, child pid) once this process was forked after the driver was initialised.
_forked = None


def mark_forked(parent, child):
    """Record that this process (pid ``child``) was forked from ``parent`` after the driver
    was initialised: :func:`fork_error` gives the error to raise from then on."""
    global _forked
    _forked = (parent, child)


def fork_error():
    """The ``CudaDriverError`` to raise for CUDA use in a child forked after CUDA was
    initialised (numba.cuda's words, "CUDA initialized before forking", first), or None in other processes.

    A CUDA context does not survive ``fork()``: on a GPU the child's driver calls fail
    (CUDA_ERROR_NOT_INITIALIZED or worse), and the simulator would silently keep using a copy
    of the parent's memory.  Use the 'spawn' or 'forkserver' start method instead."""
    if _forked is None:
        return None
    parent, child = _forked
    return CudaDriverError(f"CUDA initialized before forking: process {child} was forked "
                           f"from {parent} after the CUDA driver was initialised, and a CUDA "
                           "context cannot be used in a forked child; start child processes "
                           "with multiprocessing's 'spawn' or 'forkserver' method")


# Errors after which the context cannot be used again (the CUDA driver API's "the process
# must be terminated and relaunched" list): every later call in the context fails the same
# way.  They surface at the next synchronising call after the faulting kernel.
STICKY_ERRORS = frozenset({
    700,    # CUDA_ERROR_ILLEGAL_ADDRESS
    702,    # CUDA_ERROR_LAUNCH_TIMEOUT
    710,    # CUDA_ERROR_ASSERT
    714,    # CUDA_ERROR_HARDWARE_STACK_ERROR
    715,    # CUDA_ERROR_ILLEGAL_INSTRUCTION
    716,    # CUDA_ERROR_MISALIGNED_ADDRESS
    717,    # CUDA_ERROR_INVALID_ADDRESS_SPACE
    718,    # CUDA_ERROR_INVALID_PC
    719,    # CUDA_ERROR_LAUNCH_FAILED
})

# The name of the most recently launched kernel (one list store per launch, set by the
# launcher: the only clue to which kernel faulted, since the fault is reported later, by
# whatever call synchronises next), and the first sticky error seen.
last_launch = [None]
_sticky = None


def api_error(code, msg="", call=None):
    """The exception for driver call ``call`` failing with CUresult ``code``.

    In a child forked after initialisation: :func:`fork_error`.  For a sticky error
    (:data:`STICKY_ERRORS`, e.g. CUDA_ERROR_ILLEGAL_ADDRESS): the first one names the most
    recently launched kernel (the faulting one, or one launched after it) and says the
    context is now unusable; every later failure in the process says the context is
    unusable since then and to restart the process.  Only error paths call this, so
    successful calls and launches pay nothing for it."""
    global _sticky
    fork = fork_error()
    if fork is not None:
        return fork
    code = int(code)
    if _sticky is not None:
        first_code, first_call, kernel = _sticky
        return CudaAPIError(code, f"the CUDA context is unusable since {error_name(first_code)} "
                            f"(reported by {first_call}{_kernel_text(kernel)}); restart the "
                            "process", call)
    if code in STICKY_ERRORS:
        kernel = last_launch[0]
        _sticky = (code, call, kernel)
        detail = f"{msg}; " if msg else ""
        return CudaAPIError(code, f"{detail}a kernel faulted{_kernel_text(kernel)}; this error is "
                            "sticky: the CUDA context is now unusable and every later CUDA call "
                            "in this process fails; restart the process", call)
    return CudaAPIError(code, msg, call)


def _kernel_text(name):
    return f" (most recently launched kernel: {name})" if name else ""
