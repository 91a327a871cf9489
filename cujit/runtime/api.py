"""numba.cuda's module-level stream and event functions (``cuda.stream()``,
``cuda.default_stream()``, ``cuda.event()``, ...), its ``require_context`` decorator and
the ``is_float16_supported``/``is_bfloat16_supported`` queries; streams and events belong to
the calling thread's current context (:func:`cujit.runtime.devices.current_context`).  Kept
apart from :mod:`cujit.runtime.streams` so that streams.py (used by Context) does not import
devices.py.
"""
import functools

from ..config import config
from ..driver import get_driver
from .devices import current_context

__all__ = ["is_float16_supported", "is_bfloat16_supported", "is_fp8_supported",
           "require_context", "stream", "default_stream", "legacy_default_stream",
           "per_thread_default_stream", "external_stream", "event"]


def stream():
    """A new stream on the current context (cuStreamCreateWithPriority)."""
    return current_context().create_stream()


def default_stream():
    """The default stream: the legacy default stream (handle 0), or the per-thread default
    stream (handle 2) when ``NUMBA_CUDA_PER_THREAD_DEFAULT_STREAM=1`` (read now)."""
    return current_context().get_default_stream()


def legacy_default_stream():
    """The legacy default stream (``CU_STREAM_LEGACY``, handle 1)."""
    return current_context().get_legacy_default_stream()


def per_thread_default_stream():
    """The per-thread default stream (``CU_STREAM_PER_THREAD``, handle 2)."""
    return current_context().get_per_thread_default_stream()


def external_stream(ptr):
    """Wrap a stream made elsewhere (CuPy, PyTorch, …); cujit never destroys it.

    ``ptr``: an int handle, or any object with ``__cuda_stream__`` (the CUDA stream
    protocol of cuda.core; this includes cujit's own Streams).  Anything else (floats,
    strings, …) → TypeError."""
    return current_context().create_external_stream(ptr)


def event(timing=True):
    """A new event on the current context (cuEventCreate); ``timing=False`` disables timing."""
    return current_context().create_event(timing=timing)


def is_float16_supported():
    """True: float16 values, arrays and ``cuda.fp16`` work in kernels on every device cujit
    runs on (numba.cuda's ``is_float16_supported``, which returns True)."""
    return True


def _as_numbas_simulator():
    """True when the capability queries answer as numba.cuda's simulator: cujit's simulator
    is the backend and ``cujit.config.NUMBA_COMPAT`` is on (the numba alias turns it on)."""
    return bool(config.NUMBA_COMPAT) and get_driver().is_simulator


def is_bfloat16_supported():
    """True when the current device runs bfloat16 kernels: compute capability 8.0 or higher
    (the ``fma.rn.bf16`` family the lowering uses), and in the simulator, which computes
    bfloat16 bit for bit as the GPU (numba.cuda's ``is_bfloat16_supported``).

    With ``cujit.config.NUMBA_COMPAT`` on (set by the numba alias: ``python -m cujit run``,
    ``pytest -p cujit.numba_alias``) the simulator answers False, as numba.cuda's simulator
    does: code written for numba imports the bfloat16 names only off the simulator and
    skips its bfloat16 paths when this is False (docs/numba-alias.md).  Raises
    ``CudaSupportError`` when there is no usable driver or device."""
    cc = current_context().device.compute_capability
    if _as_numbas_simulator():
        return False
    return cc >= (8, 0)


def is_fp8_supported():
    """True when the current device runs FP8 kernels: compute capability 8.9 or higher (the
    ``cvt.*.e4m3x2`` / ``e5m2x2`` instructions the lowering uses), and so in the simulator
    (an sm_90 device), which computes the FP8 types bit for bit as the GPU (numba.cuda's
    ``is_fp8_supported``).

    With ``cujit.config.NUMBA_COMPAT`` on (set by the numba alias) the simulator answers
    False, as numba.cuda's simulator, which has no FP8, does.  Raises ``CudaSupportError``
    when there is no usable driver or device."""
    cc = current_context().device.compute_capability
    if _as_numbas_simulator():
        return False
    return cc >= (8, 9)


def require_context(fn):
    """Decorator (numba.cuda's ``require_context``): ``fn`` called with the current thread's
    CUDA context made current first (the primary context of the current device, created on
    first use).  Raises what :func:`cujit.current_context` raises (``CudaSupportError``
    without a driver) before ``fn`` runs."""
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        current_context()
        return fn(*args, **kwargs)
    return wrapper

