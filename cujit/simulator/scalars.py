"""Scalar operations of the simulator with the compiled kernel's semantics.

The typed executor (:mod:`.typedexec`) rewrites a kernel so that every numeric value is the
NumPy scalar of the type the compiler's type inference gives it; these helpers are what the
rewritten code calls where plain NumPy would differ from the lowering
(``cujit/nvvm/lower_ops.py``, ``ltypes.cast``):

- conversions: integer → integer wraps to the target width (LLVM ``trunc``/``sext``/``zext``),
  float → integer truncates toward zero and saturates (what ``fptosi``/``fptoui`` become on
  the GPU); NaN gives int64's minimum, int32's minimum from float64 and 0 from float32
  (measured on an H200: ``cvt.rzi`` from f32 gives 0), and 0 for other integer types;
  anything → bool is ``!= 0``;
- float ``//`` and ``%``: CPython's algorithm as the lowering emits it (libdevice ``fmod``;
  a zero ``%`` result takes the divisor's sign, where NumPy's ``remainder`` gives ``+0``);
- ``print``: the compiled kernel's ``vprintf`` text (``nvvm/lower_print.py``): floats
  as ``%f`` (``1.500000``, not Python's ``1.5``), integers in full, booleans True/False,
  complex ``(re+imj)``, tuples as tuples, over 32 values the format itself;
- ``math.*`` at the argument's precision (libdevice's ``f`` variants for float32): NumPy
  ufuncs, which return NaN/inf where the ``math`` module raises;
- ``cmath.*``: Python's, except at the poles where ``cmath`` raises (``log(0)``,
  ``atanh(1)``): there C99's values, as the compiled functions and NumPy give them.
"""
import cmath
import math
import re

import numpy as np

from .. import types as T
from ..frontend.calls.printing import warn_if_raw

__all__ = ["caster", "wrapper", "int_range", "float_to_int_limits", "int_floordiv", "int_mod",
           "int_shl", "int_shr", "int_pow", "complex_pow", "math_func", "float_floordiv", "float_mod",
           "square", "cube", "fma", "fmax", "fmin", "printer", "cmath_func",
           "cmath_log_base"]

_casters = {}


def int_range(t):
    """(lowest, highest) value of integer type ``t``."""
    bits = t.bitwidth
    if t.signed:
        return -(1 << (bits - 1)), (1 << (bits - 1)) - 1
    return 0, (1 << bits) - 1


def wrapper(t):
    """``v`` (a Python int) wrapped to the width of integer type ``t`` (two's complement)."""
    w = _wrappers.get(t)
    if w is None:
        bits = t.bitwidth
        mask = (1 << bits) - 1
        half = 1 << (bits - 1)
        if t.signed:
            def w(v):
                v &= mask
                return v - (1 << bits) if v >= half else v
        else:
            def w(v):
                return v & mask
        w.__name__ = f"wrap_{t}"
        _wrappers[t] = w
    return w


_wrappers = {}


_NARROW_FLOATS = (np.float32, np.float16)


def float_to_int_limits(t):
    """``(lo, hi, nan_from_float64, nan_from_narrow)`` of a float → integer type ``t``
    conversion, for both executors (:func:`caster`, :func:`.vecops.vcaster`): values
    saturate to ``[lo, hi]``; NaN gives the minimum of int64 (from any float) and of int32
    (from float64), 0 otherwise (what ``cvt.rzi`` gives on an H200; from float32/float16
    to int32 it is 0)."""
    lo, hi = int_range(t)
    signed = lo < 0
    nan_wide = lo if signed and t.bitwidth >= 32 else 0      # from float64
    nan_narrow = lo if signed and t.bitwidth == 64 else 0    # from float32 / float16
    return lo, hi, nan_wide, nan_narrow


def _int_caster(t):
    # Integers are Python ints in the simulator (within the type's range): NumPy integer
    # scalars would send every index through the checked arrays' slow path.
    lo, hi, nan_wide, nan_narrow = float_to_int_limits(t)
    wrap = wrapper(t)

    def to_int(x):
        if x.__class__ is int:
            if lo <= x <= hi:
                return x
            return wrap(x)
        if isinstance(x, (float, np.floating)):
            if x != x:
                return nan_narrow if x.__class__ in _NARROW_FLOATS else nan_wide
            if x >= hi:
                return hi
            if x <= lo:
                return lo
            return int(x)
        v = int(x)
        if lo <= v <= hi:
            return v
        return wrap(v)
    to_int.__name__ = f"to_{t}"
    return to_int


_EXACT_IN_DOUBLE = 1 << 53


def _simple_caster(t):
    typ = t.dtype.type
    if typ in _NARROW_FLOATS:
        def conv(x):
            if x.__class__ is typ:
                return x
            if x.__class__ is int and not -_EXACT_IN_DOUBLE <= x <= _EXACT_IN_DOUBLE:
                # ``np.float32(int)`` rounds twice (to float64, then to float32); the GPU's
                # cvt.rn.f32.s64/u64 rounds once, as NumPy's integer-scalar cast does
                return typ(np.int64(x) if x < (1 << 63) else np.uint64(x))
            return typ(x)
    else:
        def conv(x):
            return x if x.__class__ is typ else typ(x)
    conv.__name__ = f"to_{t}"
    return conv


def caster(t):
    """The conversion to cujit scalar type ``t`` (Boolean, Integer, Float or Complex) as a
    compiled kernel performs it (``ltypes.cast``); returns a one-argument function giving the
    simulator's value of ``t``: a Python int in range for integers, the NumPy scalar of ``t``
    otherwise.  Raises TypeError for a non-scalar ``t``."""
    c = _casters.get(t)
    if c is None:
        if isinstance(t, T.Integer):
            c = _int_caster(t)
        elif isinstance(t, (T.Float, T.Complex, T.Boolean)):
            c = _simple_caster(t)
        else:
            raise TypeError(f"no scalar conversion to {t}")
        _casters[t] = c
    return c


# Integer and float ``//`` and ``%`` are defined once, for one thread's scalars and for
# lane arrays alike: the per-thread executor calls them on the scalars of one thread, the
# vector executor (:mod:`.vecexpr`) on lane arrays, so a fix lands in both.
def _select(c, a, b):
    """``a`` where ``c`` holds, else ``b``: ``np.where`` for lane arrays, a plain choice for
    one thread's scalars (``np.where`` would cost the per-thread path 4x)."""
    if isinstance(c, np.ndarray):
        return np.where(c, a, b)
    return a if c else b


def _zero_divisor():
    # jit(debug=True) sets NumPy's divide error to "raise" (simulator/debugmode.py): the
    # compiled debug kernel raises ZeroDivisionError there
    if np.geterr()["divide"] == "raise":
        raise ZeroDivisionError("division by zero")
    return 0


def int_floordiv(x, y):
    """Integer ``x // y``: floor division, 0 for a zero divisor (Numba's NumPy error model,
    as the lowering); ZeroDivisionError under ``jit(debug=True)``.  On one thread's Python
    ints (before wrapping: the caller wraps) or on integer lane arrays of one dtype (the
    vector executor; NumPy wraps ``INT_MIN // -1`` natively)."""
    nz = y != 0
    if not isinstance(nz, np.ndarray) and not nz:        # one thread's zero divisor
        return _zero_divisor()
    return _select(nz, x // _select(nz, y, 1), 0)


def int_mod(x, y):
    """Integer ``x % y``: the sign of the divisor, 0 for a zero divisor (ZeroDivisionError
    under ``jit(debug=True)``); Python ints or lane arrays, as :func:`int_floordiv`."""
    nz = y != 0
    if not isinstance(nz, np.ndarray) and not nz:        # one thread's zero divisor
        return _zero_divisor()
    return _select(nz, x % _select(nz, y, 1), 0)


def int_shl(x, n, bits=64):
    """``x << n`` before wrapping: 0 for a shift count outside ``[0, bits)`` (PTX clamps the
    count, so every bit is shifted out)."""
    return x << n if 0 <= n < bits else 0


def int_shr(x, n, bits=64):
    """``x >> n``: arithmetic for negative (signed) ``x``; a count outside ``[0, bits)``
    shifts every bit out (0, or -1 for a negative signed value)."""
    if 0 <= n < bits:
        return x >> n
    return -1 if x < 0 else 0


def complex_pow(a, b):
    """``a ** b`` for two complex NumPy scalars of one type, as the lowering computes it
    (``nvvm/lower_ops._complex_power``: numba-cuda's translation of CPython's
    ``_Py_c_pow`` in the precision of the type; 0 for a zero base, as CPython)."""
    ct = type(a)
    ft = np.float32 if ct is np.complex64 else np.float64
    ar, ai, br, bi = ft(a.real), ft(a.imag), ft(b.real), ft(b.imag)
    if br == 0 and bi == 0:
        return ct(1)
    if ar == 0 and ai == 0:
        return ct(0)
    vabs = np.hypot(ar, ai)
    length = np.power(vabs, br)
    at = np.arctan2(ai, ar)
    phase = at * br
    if bi != 0:                 # NaN too, as the lowering's unordered compare
        length = length / np.exp(at * bi)
        phase = phase + bi * np.log(vabs)
    return ct(complex(length * np.cos(phase), length * np.sin(phase)))


def int_pow(x, n):
    """Integer ``x ** n`` before wrapping; a negative exponent truncates ``1 / x**-n``
    toward zero (0 unless ``x`` is 1 or -1; 0 for ``x == 0``)."""
    if n >= 0:
        if abs(x) > 1 and n > 128:
            # the wrapped result only needs the low 64 bits
            return pow(x, n, 1 << 64)
        return x ** n
    if x == 1:
        return 1
    if x == -1:
        return -1 if n & 1 else 1
    return 0


def float_mod(x, y):
    """Float ``x % y`` (NumPy scalars or arrays of one float type; a lane array and a
    scalar broadcast) as the lowering computes it (CPython's ``float_rem``): ``fmod``, plus
    ``y`` when the remainder is nonzero and its sign differs from ``y``'s; a zero result
    takes ``y``'s sign.  Returns a NumPy scalar for scalars, else an array."""
    r = np.fmod(x, y)
    r = _select((r != 0) & (r == r) & ((r < 0) != (y < 0)), r + y, r)
    return _select(r == 0, np.copysign(r.dtype.type(0), y), r)


def float_floordiv(x, y):
    """Float ``x // y`` (NumPy scalars or arrays of one float type, as :func:`float_mod`)
    as the lowering computes it (CPython's ``float_floor_div``: from ``fmod``, so that
    ``//`` and ``%`` agree).  Returns a NumPy scalar for scalars, else an array."""
    mod = np.fmod(x, y)
    div = (x - mod) / y
    typ = div.dtype.type
    div = _select((mod != 0) & (mod == mod) & ((y < 0) != (mod < 0)), div - typ(1), div)
    fl = np.floor(div)
    fl = _select(div - fl > typ(0.5), fl + typ(1), fl)
    return _select(div == 0, np.copysign(typ(0), x / y), fl)


def square(x):
    """``x ** 2`` with a constant exponent: one multiplication (as the lowering)."""
    return x * x


def cube(x):
    """``x ** 3`` with a constant exponent: two multiplications (as the lowering)."""
    return x * x * x


def _gamma(x):
    try:
        return math.gamma(x)
    except ValueError:      # poles: tgamma(+-0) = +-inf, negative integers give NaN
        return math.copysign(math.inf, x) if x == 0 else math.nan
    except OverflowError:
        return math.inf


def _lgamma(x):
    try:
        return math.lgamma(x)
    except (ValueError, OverflowError):
        return math.inf


def _remainder(x, y):
    """IEEE remainder (``math.remainder``; libdevice ``remainder``): NaN where Python raises
    (``y == 0``, ``x`` infinite).  Exact, so float64 gives every narrower type's value."""
    try:
        return np.float64(math.remainder(float(x), float(y)))
    except ValueError:
        return np.float64(math.nan)


_UFUNCS = {"sqrt": np.sqrt, "sin": np.sin, "cos": np.cos, "tan": np.tan, "asin": np.arcsin,
           "acos": np.arccos, "atan": np.arctan, "sinh": np.sinh, "cosh": np.cosh,
           "tanh": np.tanh, "asinh": np.arcsinh, "acosh": np.arccosh, "atanh": np.arctanh,
           "exp": np.exp, "exp2": np.exp2, "expm1": np.expm1, "log": np.log, "log2": np.log2,
           "log10": np.log10, "log1p": np.log1p, "fabs": np.fabs, "degrees": np.degrees,
           "radians": np.radians, "atan2": np.arctan2, "pow": np.power, "hypot": np.hypot,
           "copysign": np.copysign, "fmod": np.fmod, "npfloor": np.floor, "npceil": np.ceil,
           "nptrunc": np.trunc, "remainder": _remainder, "nextafter": np.nextafter}
# computed in the argument type itself (a float64 nextafter of a float32 rounds back to it)
_IN_OWN_TYPE = frozenset(("nextafter",))
_PYFUNCS = {"erf": math.erf, "erfc": math.erfc, "gamma": _gamma, "lgamma": _lgamma}
_TO_INT = {"floor": np.floor, "ceil": np.ceil, "trunc": np.trunc}
_PRED = {"isnan": np.isnan, "isinf": np.isinf, "isfinite": np.isfinite}


_NP_CMATH = {"asin": "arcsin", "acos": "arccos", "atan": "arctan", "asinh": "arcsinh",
             "acosh": "arccosh", "atanh": "arctanh"}


def cmath_func(name):
    """The simulator's ``cmath.<name>`` (a function of one number): ``cmath``'s, with
    NumPy's complex128 value where ``cmath`` raises ValueError/OverflowError (its poles and
    overflows; NumPy follows C99 Annex G there, as the compiled kernel does)."""
    fn = getattr(cmath, name)
    npfn = getattr(np, _NP_CMATH.get(name, name), None)
    if npfn is None:
        return fn

    def c99(z):
        try:
            return fn(z)
        except (ValueError, OverflowError):
            with np.errstate(all="ignore"):
                return complex(npfn(np.complex128(z)))
    return c99


def _smith_quot(p, q):
    """``p / q`` as CPython's complex division computes it (Smith's method), with (0, 0)
    for a zero ``q`` where Python raises: the compiled ``cmath.log(z, base)``'s division."""
    a, b, c, d = p.real, p.imag, q.real, q.imag
    if abs(c) >= abs(d):
        if c == 0 and d == 0:
            return complex(0.0, 0.0)
        r = d / c
        den = c + d * r
        return complex((a + b * r) / den, (b - a * r) / den)
    if abs(d) >= abs(c):
        r = c / d
        den = c * r + d
        return complex((a * r + b) / den, (b * r - a) / den)
    return complex(math.nan, math.nan)


def cmath_log_base(z, base):
    """The simulator's ``cmath.log(z, base)``: Python's, and where it raises (a zero or
    one base, a zero ``z``) log z / log base by the compiled kernel's rules (C99 logs,
    CPython's division, (0, 0) for a zero divisor)."""
    try:
        return cmath.log(z, base)
    except (ValueError, ZeroDivisionError, OverflowError):
        log = cmath_func("log")
        return _smith_quot(log(z), log(base))


def math_func(name, argtypes, rtype):
    """The simulator's ``math.<name>`` for arguments of cujit types ``argtypes`` and result
    type ``rtype`` (from type inference), or None when the name is not handled here (the
    call then runs as written).  ``name`` is the compiler's key without ``math.``
    (``'sqrt'``, ``'npfloor'`` …).  Float arguments are converted to the type the function
    computes in, so float32 arguments get float32 results (libdevice's ``f`` variants)."""
    if name in _PRED:
        fn = _PRED[name]
        return lambda x: fn(x)
    if name in _TO_INT:
        if isinstance(argtypes[0], T.Integer):
            conv = caster(rtype)
            return conv
        fn, ftype = _TO_INT[name], argtypes[0] if isinstance(argtypes[0], T.Float) \
            else T.float64
        fconv, iconv = caster(ftype), caster(rtype)
        return lambda x: iconv(fn(fconv(x)))
    if not isinstance(rtype, T.Float):
        return None
    conv = caster(rtype)
    if name in _PYFUNCS:
        fn = _PYFUNCS[name]
        return lambda x: conv(fn(float(x)))
    fn = _UFUNCS.get(name)
    if fn is None:
        return None
    if rtype is T.float64:
        if len(argtypes) == 2:
            return lambda x, y: fn(conv(x), conv(y))
        return lambda x: fn(conv(x))
    if name in _IN_OWN_TYPE:
        return lambda x, y: conv(fn(conv(x), conv(y)))
    # narrower floats: computed in float64 and rounded once, which is within libdevice's
    # bounds for its float variants (correctly rounded for sqrt, fmod, fabs, copysign)
    wide = caster(T.float64)
    if len(argtypes) == 2:
        return lambda x, y: conv(fn(wide(conv(x)), wide(conv(y))))
    return lambda x: conv(fn(wide(conv(x))))


def _round_rational(v, typ):
    """Exact rational ``v`` (nonzero) rounded to the nearest ``typ`` (float32 or float64),
    ties to even, overflowing to ±inf past the halfway point above the largest finite."""
    from fractions import Fraction
    fi = np.finfo(typ)
    big = Fraction(int(fi.max)) + Fraction(2) ** (fi.maxexp - fi.nmant - 2)
    if v >= big:
        return typ(np.inf)
    if v <= -big:
        return typ(-np.inf)
    try:
        d = typ(float(v))
    except OverflowError:
        d = typ((float(fi.max) if v > 0 else -float(fi.max)))
    if not np.isfinite(d):
        d = typ((float(fi.max) if v > 0 else -float(fi.max)))
    cands = [d, np.nextafter(d, typ(np.inf)), np.nextafter(d, typ(-np.inf))]
    cands = [c for c in cands if np.isfinite(c)]
    bits = np.uint32 if typ is np.float32 else np.uint64
    return min(cands, key=lambda c: (abs(Fraction(float(c)) - v),
                                     int(np.array(c).view(bits)) & 1))


def fmax(a, b):
    """libdevice ``__nv_fmax[f]`` (PTX ``max.f32``/``max.f64``) of two NumPy floats of one
    type: the larger, and the number when the other is NaN."""
    return np.fmax(a, b)


def fmin(a, b):
    """libdevice ``__nv_fmin[f]``: the smaller of two NumPy floats, the number when the
    other is NaN."""
    return np.fmin(a, b)


def fma(a, b, c):
    """``a * b + c`` with one rounding (CUDA ``fma``; libdevice ``__nv_fma[f]``), in the
    type of the (already converted) NumPy float arguments."""
    from fractions import Fraction
    typ = a.__class__ if isinstance(a, (np.float32, np.float64)) else np.float64
    fa, fb, fc = float(a), float(b), float(c)
    if not (math.isfinite(fa) and math.isfinite(fb) and math.isfinite(fc)):
        return typ(fa * fb + fc)
    v = Fraction(fa) * Fraction(fb) + Fraction(fc)
    if v == 0:
        return typ(fa * fb + fc)    # the sign of an exact zero, as IEEE fma gives it
    return _round_rational(v, typ)


def printer(pf):
    """A function printing ``print``'s argument values (all of them, in order) as the
    compiled kernel's vprintf does for the call's :class:`PrintFormat` ``pf``: integers in
    full, floats as ``%f``, booleans True/False, tuples and ``cuda.threadIdx``-like indices
    as tuples, string constants in place; more than 32 values print the format itself, with
    numba-cuda's warning (:mod:`cujit.frontend.calls.printing`)."""
    warn_if_raw(pf)
    if pf.raw:
        text = pf.text.replace("%%", "%")

        def raw_print(*vals):
            print(text, end="")
        return raw_print
    # Python's % has no ``ll`` length modifier: %lld / %llu are its %d
    text = re.sub(r"%%|%ll[du]", lambda m: "%d" if m.group() != "%%" else "%%", pf.text)
    steps = []
    for pv in pf.values:
        t = pv.type
        kind = (bool if isinstance(t, T.Boolean) else int if isinstance(t, T.Integer)
                else complex if isinstance(t, T.Complex) else float)
        steps.append((pv.arg, pv.path, pv.register[1] if pv.register else None, kind))

    def gpu_print(*vals):
        out = []
        for arg, path, axis, kind in steps:
            v = vals[arg]
            for i in path:
                v = v[i]
            if axis is not None:
                v = getattr(v, axis)
            if kind is complex:
                out += [float(v.real), float(v.imag)]
            elif kind is bool:
                out.append("True" if v else "False")
            else:
                out.append(kind(v))
        print(text % tuple(out), end="")
    return gpu_print
