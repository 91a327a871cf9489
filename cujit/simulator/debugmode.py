"""``jit(debug=True)`` on the simulator: division by zero raises ZeroDivisionError, as the
compiled kernel's debug mode does (numba.cuda's Python error model under ``debug=True``), and
an exception raised by the kernel names the raising function, line and thread as the compiled
debug kernel's does (numba's ``In function 'f', file f.py, line 3, tid=[x, y, z] ctaid=[x, y,
z]: message``), so tests written for numba.cuda match on both backends.

NumPy scalars divide by zero quietly (inf/NaN, or 0 for integers) unless the error state
says ``raise``; the error state is a context variable, and each simulated thread is a
greenlet with a context of its own, so it is set inside the thread, around the kernel body.
NumPy then raises FloatingPointError; it is turned into ZeroDivisionError here.  ``0.0 / 0.0``
is NumPy's "invalid" case, not "divide", so it gives NaN (the GPU's debug check raises).
"""
import functools

import numpy as np

from .errors import kernel_traceback

__all__ = ["debug_kernel"]


def _numba_form(e):
    """``e`` re-made with the message the compiled debug kernel's exception has (numba's
    ``In function 'f', file f.py, line 3, tid=[..] ctaid=[..]: message``), or None when it
    cannot be (the simulator's own errors keep their reports).  It names the thread and the
    line itself, so the block runner adds no ``threadIdx=...`` prefix of its own."""
    from ..kernelstate import state as _state
    t = _state.current
    if t is None or getattr(e, "_cujit_sim_reported", False) or \
            type(e).__module__.startswith("cujit"):
        return None
    tid = [t.threadIdx.x, t.threadIdx.y, t.threadIdx.z]
    ctaid = [t.blockIdx.x, t.blockIdx.y, t.blockIdx.z]
    msg = str(e)
    text = f"tid={tid} ctaid={ctaid}" + (f": {msg}" if msg else "")
    tb = kernel_traceback(e.__traceback__)
    if tb is not None:
        code = tb.tb_frame.f_code
        text = f"In function '{code.co_name}', file {code.co_filename}, line {tb.tb_lineno}, " \
               + text
    try:
        new = type(e)(text)
    except Exception:
        return None
    if str(new) != text:
        return None
    new._cujit_sim_reported = True
    return new


def debug_kernel(pyfunc):
    """``pyfunc`` run with NumPy's division-by-zero errors raised as ZeroDivisionError and
    its exceptions named by thread (see the module docstring)."""
    @functools.wraps(pyfunc)
    def run(*args):
        with np.errstate(divide="raise"):
            try:
                return pyfunc(*args)
            except FloatingPointError as e:
                if "divide by zero" not in str(e):
                    raise
                err = ZeroDivisionError("division by zero")
                new = _numba_form(err) or err
                raise new.with_traceback(e.__traceback__) from None
            except Exception as e:
                new = _numba_form(e)
                if new is None:
                    raise
                raise new.with_traceback(e.__traceback__) from None
    return run
