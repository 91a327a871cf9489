"""``jit(debug=True)`` on the simulator: division by zero raises ZeroDivisionError, as the
compiled kernel's debug mode does (numba.cuda's Python error model under ``debug=True``).

NumPy scalars divide by zero quietly (inf/NaN, or 0 for integers) unless the error state
says ``raise``; the error state is a context variable, and each simulated thread is a
greenlet with a context of its own, so it is set inside the thread, around the kernel body.
NumPy then raises FloatingPointError; it is turned into ZeroDivisionError here.  ``0.0 / 0.0``
is NumPy's "invalid" case, not "divide", so it gives NaN (the GPU's debug check raises).
"""
import functools

import numpy as np

__all__ = ["debug_kernel"]


def debug_kernel(pyfunc):
    """``pyfunc`` run with NumPy's division-by-zero errors raised as ZeroDivisionError."""
    @functools.wraps(pyfunc)
    def run(*args):
        with np.errstate(divide="raise"):
            try:
                return pyfunc(*args)
            except FloatingPointError as e:
                if "divide by zero" not in str(e):
                    raise
                raise ZeroDivisionError("division by zero").with_traceback(
                    e.__traceback__) from None
    return run
