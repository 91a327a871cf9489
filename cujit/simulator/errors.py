"""Errors the simulator's checkers raise, and the helpers that phrase their reports.

Every report names the thread (``threadIdx=(x, y, z) blockIdx=(x, y, z)``) and the kernel
source line (``file:line``), as R-SIM-2 asks.  Checker errors carry ``_cujit_sim_reported``
so the block runner does not annotate them a second time.
"""
import linecache
import os
import sys

__all__ = ["SimulatorError", "OutOfBoundsError", "DataRaceError", "BarrierDivergenceError",
           "WarpDivergenceError", "where", "caller_site", "source_location",
           "typing_error", "compile_error"]

_PKG_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class SimulatorError(RuntimeError):
    """Base of the errors found by the simulator's checkers (not raised on a GPU)."""
    _cujit_sim_reported = True


class OutOfBoundsError(SimulatorError, IndexError):
    """An array index outside the array's shape (also an ``IndexError``)."""


class DataRaceError(SimulatorError):
    """Two threads touched the same memory element without synchronisation, at least one of
    them writing (atomics excepted): threads of a block between two barriers (shared and
    global memory), or threads of different blocks (global memory, ``SIM_GLOBAL_RACES``)."""


class BarrierDivergenceError(SimulatorError):
    """Threads of a block wait at different ``syncthreads()`` calls, or some wait while
    others have finished: on a GPU this hangs or corrupts memory."""


class WarpDivergenceError(SimulatorError):
    """Lanes named by a warp intrinsic's mask never reach the same warp-level call."""


def fmt_dim(d):
    """``(x, y, z)`` as text."""
    return f"({d[0]}, {d[1]}, {d[2]})"


def where(thread):
    """``threadIdx=(..) blockIdx=(..)`` of a simulated thread (its object from thread.py)."""
    return f"threadIdx={fmt_dim(thread.tid)} blockIdx={fmt_dim(thread.bid)}"


def _user_frame(depth):
    """The first frame, ``depth`` levels up or more, whose code is not inside cujit."""
    f = sys._getframe(depth + 1)
    while f is not None and f.f_code.co_filename.startswith(_PKG_DIR):
        f = f.f_back
    return f


def caller_site(depth=1, source=False):
    """``file:line`` of the nearest kernel (non-cujit) frame above the caller; with
    ``source``, followed by ``: <the source line>``."""
    f = _user_frame(depth + 1)
    if f is None:
        return "<unknown>"
    site = f"{os.path.basename(f.f_code.co_filename)}:{f.f_lineno}"
    if source:
        text = linecache.getline(f.f_code.co_filename, f.f_lineno).strip()
        if text:
            site += f": {text}"
    return site


def frame_site(f):
    """``file:line`` of frame ``f``."""
    return f"{os.path.basename(f.f_code.co_filename)}:{f.f_lineno}"


def kernel_traceback(tb):
    """The entry of traceback ``tb`` of its innermost kernel (non-cujit) frame, or None."""
    found = None
    while tb is not None:
        if not tb.tb_frame.f_code.co_filename.startswith(_PKG_DIR):
            found = tb
        tb = tb.tb_next
    return found


def traceback_site(tb):
    """``file:line`` of the innermost kernel (non-cujit) frame of traceback ``tb``."""
    tb = kernel_traceback(tb)
    if tb is None:
        return "<unknown>"
    return f"{os.path.basename(tb.tb_frame.f_code.co_filename)}:{tb.tb_lineno}"


def source_location(depth=1, needle=None):
    """A compiler ``SourceLocation`` of the nearest kernel frame above the caller; the column
    is where ``needle`` (e.g. ``'shared.array'``) starts on the line, else the first
    non-blank character."""
    from ..frontend.errors import SourceLocation
    f = _user_frame(depth + 1)
    if f is None:
        return None
    line = linecache.getline(f.f_code.co_filename, f.f_lineno) or None
    col = 0
    if line:
        col = line.find(needle) if needle and needle in line else len(line) - len(line.lstrip())
    return SourceLocation(f.f_code.co_filename, f.f_lineno, col, line)


def typing_error(msg, depth=1, needle=None):
    """The compiler's ``TypingError`` for ``msg``, located at the kernel line above (raised
    as it is, without thread ids: it is what compiling the kernel would raise)."""
    from ..frontend.errors import TypingError
    e = TypingError(msg, source_location(depth + 1, needle or msg.split(":", 1)[0]))
    e._cujit_sim_reported = True
    return e


def compile_error(msg, depth=1, needle=None):
    """The compiler's ``CompileError`` for ``msg`` (resource limits), located likewise."""
    from ..frontend.errors import CompileError
    e = CompileError(msg, source_location(depth + 1, needle))
    e._cujit_sim_reported = True
    return e
