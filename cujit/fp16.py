"""``cuda.fp16``: half-precision intrinsics (numba.cuda's ``cuda.fp16`` module).

Each function takes ``float16`` values and returns a ``float16`` (comparisons return
``bool``).  In kernels the compiler lowers them (``nvvm/lower_fp16.py``); these Python
bodies are what the simulator runs and define the values: the operation is computed in
float32 and rounded once to float16, which for ``+ - * /``, ``sqrt`` and ``fma`` is the
correctly rounded half result as on the GPU; the transcendental functions (``hexp`` ...) are
approximations on the GPU too and may differ in the last bit.
"""
import numpy as np

__all__ = ["hadd", "hsub", "hmul", "hdiv", "hneg", "habs", "hfma", "hmax", "hmin", "heq",
           "hne", "hlt", "hle", "hgt", "hge", "hsqrt", "hrsqrt", "hrcp", "hexp", "hexp2",
           "hexp10", "hlog", "hlog2", "hlog10", "hsin", "hcos", "hceil", "hfloor", "htrunc",
           "hrint"]

_h = np.float16
_f = np.float32


def _half(x):
    return _f(_h(x))


def hadd(a, b):
    """``a + b`` in half precision."""
    return _h(_half(a) + _half(b))


def hsub(a, b):
    """``a - b`` in half precision."""
    return _h(_half(a) - _half(b))


def hmul(a, b):
    """``a * b`` in half precision."""
    return _h(_half(a) * _half(b))


def hdiv(a, b):
    """``a / b`` in half precision (IEEE: division by zero gives inf or NaN)."""
    with np.errstate(all="ignore"):
        return _h(np.divide(_half(a), _half(b)))


def hneg(a):
    """``-a``."""
    return _h(-_half(a))


def habs(a):
    """``|a|``."""
    return _h(abs(_half(a)))


def hfma(a, b, c):
    """``a * b + c`` rounded once."""
    return _h(np.float64(_half(a)) * np.float64(_half(b)) + np.float64(_half(c)))


def hmax(a, b):
    """The larger of ``a`` and ``b`` (the other one when one is NaN)."""
    return _h(np.fmax(_half(a), _half(b)))


def hmin(a, b):
    """The smaller of ``a`` and ``b`` (the other one when one is NaN)."""
    return _h(np.fmin(_half(a), _half(b)))


def heq(a, b):
    """``a == b``."""
    return bool(_half(a) == _half(b))


def hne(a, b):
    """``a != b`` (ordered: False when either is NaN, as PTX ``setp.ne``)."""
    x, y = _half(a), _half(b)
    return bool(x != y and not (np.isnan(x) or np.isnan(y)))


def hlt(a, b):
    """``a < b``."""
    return bool(_half(a) < _half(b))


def hle(a, b):
    """``a <= b``."""
    return bool(_half(a) <= _half(b))


def hgt(a, b):
    """``a > b``."""
    return bool(_half(a) > _half(b))


def hge(a, b):
    """``a >= b``."""
    return bool(_half(a) >= _half(b))


def _unary(fn, doc):
    def f(a):
        with np.errstate(all="ignore"):
            return _h(fn(_half(a)))
    f.__doc__ = doc
    return f


hsqrt = _unary(np.sqrt, "Square root in half precision.")
hrsqrt = _unary(lambda x: _f(1) / np.sqrt(x), "``1 / sqrt(a)`` in half precision.")
hrcp = _unary(lambda x: _f(1) / x, "``1 / a`` in half precision.")
hexp = _unary(np.exp, "``e ** a`` in half precision.")
hexp2 = _unary(np.exp2, "``2 ** a`` in half precision.")
hexp10 = _unary(lambda x: np.power(_f(10), x), "``10 ** a`` in half precision.")
hlog = _unary(np.log, "Natural logarithm in half precision.")
hlog2 = _unary(np.log2, "Base-2 logarithm in half precision.")
hlog10 = _unary(np.log10, "Base-10 logarithm in half precision.")
hsin = _unary(np.sin, "Sine in half precision.")
hcos = _unary(np.cos, "Cosine in half precision.")
hceil = _unary(np.ceil, "Round up to an integral half value.")
hfloor = _unary(np.floor, "Round down to an integral half value.")
htrunc = _unary(np.trunc, "Round toward zero to an integral half value.")
hrint = _unary(np.rint, "Round to the nearest integral half value (ties to even).")
for _n in ("hsqrt", "hrsqrt", "hrcp", "hexp", "hexp2", "hexp10", "hlog", "hlog2", "hlog10",
           "hsin", "hcos", "hceil", "hfloor", "htrunc", "hrint"):
    globals()[_n].__name__ = globals()[_n].__qualname__ = _n
del _n
