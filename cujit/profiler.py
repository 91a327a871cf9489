"""``profile_start()``, ``profile_stop()`` and ``profiling()``: numba.cuda's profiler controls.

They call cuProfilerStart/cuProfilerStop for the current context (created on first use), so
an attached profiler (Nsight Systems with ``--capture-range=cudaProfilerApi``, ncu with
``--profile-from-start off``) records only the work between them.  On the simulator they do
nothing (no profiler can attach to it).
"""
import contextlib

__all__ = ["profile_start", "profile_stop", "profiling"]


def _driver():
    from .runtime.devices import current_context
    from .driver import get_driver
    current_context()           # the calls act on the current context, as in numba.cuda
    return get_driver()


def profile_start():
    """Enable profile collection in the current context (cuProfilerStart).  Returns None;
    CudaAPIError when the driver refuses, CudaSupportError without a driver."""
    _driver().profiler_start()


def profile_stop():
    """Disable profile collection in the current context and flush its buffers
    (cuProfilerStop).  Returns None; CudaAPIError when the driver refuses."""
    _driver().profiler_stop()


@contextlib.contextmanager
def profiling():
    """Context manager: profile collection is on inside the ``with`` block (profile_start on
    entry, profile_stop on exit, also when the block raises)."""
    profile_start()
    try:
        yield
    finally:
        profile_stop()
