"""The simulator's ``cuda.libdevice`` functions: the values libdevice's ``__nv_<name>``
gives on a GPU, computed on the CPU (the table of functions and types:
:mod:`cujit.frontend.libdevice_table`).

- Arithmetic and conversions with a rounding mode (``dadd_ru``, ``fsqrt_rd``,
  ``double2float_rz``, ``ll2float_ru`` …) and the ``fma`` family are exact: the exact
  rational result rounded in the named mode (``_rn`` nearest-even, ``_rz`` toward zero,
  ``_ru`` up, ``_rd`` down); float → integer conversions saturate as PTX ``cvt`` does.
- Integer and bit functions (``popc``, ``brev``, ``byte_perm``, ``mulhi``, ``sad`` …) and
  the bit casts (``float_as_int``, ``double2hiint`` …) are exact; the unsigned ones read
  their int32 / int64 arguments' bits as unsigned and give the result's bits back.
- The other float functions compute in float64 (``math``, NumPy, ``statistics``) and round
  once to the function's type, within libdevice's documented error bounds but not always
  bit for bit.  The ``fast_*`` approximations compute the precise function (a GPU's result
  differs by the fast variant's documented error).  ``remquo``'s quotient keeps the sign
  and the low 3 bits (all C and CUDA promise).  The Bessel functions (``j0``, ``yn`` …)
  need SciPy on the simulator (``scipy.special``; ImportError naming it when absent).
"""
import math
import statistics
from fractions import Fraction

import numpy as np

from .. import types as T
from . import scalars

__all__ = ["call_converted", "function"]

_M32, _M64 = (1 << 32) - 1, (1 << 64) - 1
_w32, _w64 = scalars.wrapper(T.int32), scalars.wrapper(T.int64)
_SQRT2 = math.sqrt(2.0)


# ---- rounding in a mode ----------------------------------------------------------------------
def _round(v, typ, mode):
    """Exact nonzero rational ``v`` rounded to ``typ`` (np.float32/np.float64) in ``mode``."""
    d = scalars._round_rational(v, typ)
    if mode == "rn":
        return d
    up = mode == "ru" or (mode == "rz" and v < 0)
    if up:
        if np.isinf(d):
            return d if d > 0 else typ(-np.finfo(typ).max)
        return np.nextafter(d, typ(np.inf)) if Fraction(float(d)) < v else d
    if np.isinf(d):
        return d if d < 0 else typ(np.finfo(typ).max)
    return np.nextafter(d, typ(-np.inf)) if Fraction(float(d)) > v else d


def _zero(neg_a, neg_b, both_zero, mode, typ):
    # IEEE: an exact zero sum is -0 only when rounding down, or when both terms are -0
    neg = neg_a if both_zero and neg_a == neg_b else mode == "rd"
    return typ(-0.0) if neg else typ(0.0)


def _arith(op, typ, mode):
    def f(x, y):
        x, y = typ(x), typ(y)
        with np.errstate(all="ignore"):
            near = {"add": np.add, "sub": np.subtract, "mul": np.multiply,
                    "div": np.divide}[op](x, y)
        if not (np.isfinite(x) and np.isfinite(y)) or (op == "div" and y == 0):
            return near
        fx, fy = Fraction(float(x)), Fraction(float(y))
        v = {"add": fx + fy, "sub": fx - fy, "mul": fx * fy}.get(op) if op != "div" \
            else fx / fy
        if v == 0:
            if op in ("mul", "div"):
                return near
            ny = bool(np.signbit(y)) != (op == "sub")
            return _zero(bool(np.signbit(x)), ny, x == 0 and y == 0, mode, typ)
        return _round(v, typ, mode)
    return f


def _fma(typ, mode):
    def f(x, y, z):
        x, y, z = typ(x), typ(y), typ(z)
        near = scalars.fma(x, y, z)
        if not (np.isfinite(x) and np.isfinite(y) and np.isfinite(z)):
            return near
        v = Fraction(float(x)) * Fraction(float(y)) + Fraction(float(z))
        if v == 0:
            return _zero(bool(np.signbit(x)) != bool(np.signbit(y)), bool(np.signbit(z)),
                         (x == 0 or y == 0) and z == 0, mode, typ)
        return _round(v, typ, mode)
    return f


def _sqrt(typ, mode):
    def f(x):
        x = typ(x)
        with np.errstate(all="ignore"):
            d = np.sqrt(x)          # IEEE sqrt: correctly rounded to nearest
        if mode == "rn" or not np.isfinite(d) or d == 0:
            return d
        sq, fx = Fraction(float(d)) ** 2, Fraction(float(x))
        if mode == "ru" and sq < fx:
            return np.nextafter(d, typ(np.inf))
        if mode in ("rd", "rz") and sq > fx:
            return np.nextafter(d, typ(-np.inf))
        return d
    return f


def _to_float(typ, mode, unsigned=False, bits=32):
    def f(x):
        if not isinstance(x, int):          # double2float_*: a float argument
            if not np.isfinite(x) or x == 0:
                return typ(x)
            return _round(Fraction(float(x)), typ, mode)
        v = x & ((1 << bits) - 1) if unsigned else x
        return typ(0.0) if v == 0 else _round(Fraction(v), typ, mode)
    return f


_ROUNDERS = {"rn": np.rint, "rz": np.trunc, "ru": np.ceil, "rd": np.floor}


def _to_int(target, mode, bits_of):
    conv, wrap = scalars.caster(target), _w32 if bits_of == 32 else _w64

    def f(x):
        return wrap(conv(_ROUNDERS[mode](x)))
    return f


# ---- float functions (float64 results, rounded once to the variant's type) -------------------
def _guard(fn):
    def g(*a):
        try:
            return fn(*a)
        except (ValueError, ZeroDivisionError):
            return math.nan
        except OverflowError:
            return math.inf
    return g


def _inv_cdf(p):
    if p <= 0.0:
        return -math.inf if p == 0.0 else math.nan
    if p >= 1.0:
        return math.inf if p == 1.0 else math.nan
    return statistics.NormalDist().inv_cdf(p)


def _erfcinv(y):
    if not 0.0 < y < 2.0:
        return {0.0: math.inf, 2.0: -math.inf}.get(y, math.nan)
    if y > 1.0:
        return -_erfcinv(2.0 - y)        # exact difference (Sterbenz)
    r = -_inv_cdf(y / 2.0) / _SQRT2
    for _ in range(2):                    # Newton steps on erfc polish the normal quantile
        r += (math.erfc(r) - y) / (2.0 / math.sqrt(math.pi) * math.exp(-r * r))
    return r


def _erfinv(x):
    if abs(x) > 0.5 or x != x:
        return math.copysign(_erfcinv(1.0 - abs(x)), x) if x == x else math.nan
    if x == 0:
        return x
    r = _inv_cdf((1.0 + x) / 2.0) / _SQRT2
    for _ in range(3):
        r -= (math.erf(r) - x) / (2.0 / math.sqrt(math.pi) * math.exp(-r * r))
    return r


def _sinpi(x):
    if not math.isfinite(x):
        return math.nan
    r = math.fmod(x, 2.0)
    r = r - 2.0 if r > 1.0 else r + 2.0 if r < -1.0 else r
    a = abs(r)
    v = (math.sin(math.pi * a) if a <= 0.25 else math.cos(math.pi * (0.5 - a)) if a <= 0.75
         else math.sin(math.pi * (1.0 - a)))
    return math.copysign(v, r) if v == 0 else v if r >= 0 else -v


def _cospi(x):
    if not math.isfinite(x):
        return math.nan
    a = abs(math.fmod(x, 2.0))
    a = 2.0 - a if a > 1.0 else a
    if a <= 0.25:
        return math.cos(math.pi * a)
    if a < 0.75:
        return math.sin(math.pi * (0.5 - a)) + 0.0
    return -math.cos(math.pi * (1.0 - a))


def _round_half_away(x):
    if not math.isfinite(x):
        return x
    t = math.trunc(x)
    return math.copysign(float(t + (1 if x - t >= 0.5 else -1 if x - t <= -0.5 else 0)), x)


def _logb(x):
    if x == 0:
        return -math.inf
    if not math.isfinite(x):
        return abs(x)
    return float(math.frexp(x)[1] - 1)


def _scipy(name):
    def f(*a):
        try:
            import scipy.special as sp
        except ImportError:
            raise ImportError(f"libdevice's {name} on the simulator needs SciPy "
                              "(pip install scipy); on a GPU it needs nothing") from None
        return float(getattr(sp, name)(*a))
    return f


def _exp_square(x):
    """``exp(x * x)`` without the rounding error of ``x * x`` (its exact remainder folded in:
    that error times x^2 would be most of the result's error for large x)."""
    hi = x * x
    if not hi < 709.78:
        return math.inf
    return math.exp(hi) * (1.0 + float(Fraction(x) ** 2 - Fraction(hi)))


def _erfcx(x):
    """``exp(x^2) * erfc(x)``: directly while erfc(x) is a normal float, then the asymptotic
    series (its terms fall as (2k - 1) / 2x^2, 7 terms are past float64 precision at x >= 26);
    for x < 0 ``2 exp(x^2) - erfcx(-x)``."""
    if x != x:
        return x
    if x < 0:
        return 2.0 * _exp_square(x) - _erfcx(-x)
    if x < 26.0:
        return math.erfc(x) * _exp_square(x)
    if x > 1e150:
        return 1.0 / (x * math.sqrt(math.pi))
    t, s, inv = 1.0, 1.0, 1.0 / (2.0 * x * x)
    for k in range(1, 8):
        t *= -(2 * k - 1) * inv
        s += t
    return s / (x * math.sqrt(math.pi))


def _remainder(x, y):
    return _guard(math.remainder)(x, y)


_FLOAT = {
    "acos": np.arccos, "acosh": np.arccosh, "asin": np.arcsin, "asinh": np.arcsinh,
    "atan": np.arctan, "atanh": np.arctanh, "cbrt": np.cbrt, "ceil": np.ceil, "cos": np.cos,
    "cosh": np.cosh, "cospi": _cospi, "erf": math.erf, "erfc": math.erfc,
    "erfcinv": _erfcinv, "erfinv": _erfinv, "erfcx": _erfcx, "exp": np.exp,
    "exp10": lambda x: np.power(10.0, x), "exp2": np.exp2, "expm1": np.expm1,
    "fabs": np.fabs, "floor": np.floor, "j0": _scipy("j0"), "j1": _scipy("j1"),
    "y0": _scipy("y0"), "y1": _scipy("y1"), "lgamma": scalars._lgamma,
    "tgamma": scalars._gamma, "log": np.log, "log10": np.log10, "log1p": np.log1p,
    "log2": np.log2, "logb": _logb, "nearbyint": np.rint, "rint": np.rint,
    "round": _round_half_away, "trunc": np.trunc, "normcdf": lambda x: 0.5 * math.erfc(
        -x / _SQRT2), "normcdfinv": _inv_cdf, "rcbrt": lambda x: 1.0 / np.cbrt(x),
    "rsqrt": lambda x: 1.0 / np.sqrt(x), "sin": np.sin, "sinh": np.sinh, "sinpi": _sinpi,
    "sqrt": np.sqrt, "tan": np.tan, "tanh": np.tanh,
    "saturate": lambda x: 0.0 if not x > 0.0 else min(x, 1.0),
    "atan2": np.arctan2, "copysign": np.copysign,
    "fdim": lambda x, y: x - y if x > y else (math.nan if x != x or y != y else 0.0),
    "fmax": np.fmax, "fmin": np.fmin, "fmod": np.fmod, "hypot": np.hypot,
    "pow": np.power, "remainder": _remainder, "fdivide": lambda x, y: np.divide(x, y),
    "powi": lambda x, n: np.power(x, float(n)), "ldexp": lambda x, n: np.ldexp(x, n),
    "scalbn": lambda x, n: np.ldexp(x, n),
    "jn": lambda n, x: _scipy("jv")(n, x), "yn": lambda n, x: _scipy("yn")(n, x),
}
# the libdevice name (without its f) when it differs from the base function's name
_ALIAS = {"fast_fdivide": "fdivide", "saturate": "saturate"}


def _float_fn(base, typ):
    fn = _FLOAT[base]

    def f(*args):
        wide = [float(a) if not isinstance(a, int) else a for a in args]
        with np.errstate(all="ignore"):
            return typ(fn(*wide))
    return f


def _nextafter(typ):
    return lambda x, y: np.nextafter(typ(x), typ(y))


def _frexp(typ):
    def f(x):
        m, e = np.frexp(typ(x))
        return m, int(e)
    return f


def _modf(typ):
    def f(x):
        frac, whole = np.modf(typ(x))
        return frac, whole
    return f


def _remquo(typ):
    def f(x, y):
        x, y = float(x), float(y)
        r = _remainder(x, y)
        if r != r:
            return typ(r), 0
        n = Fraction(x) - Fraction(r)
        q = abs(round(n / Fraction(y))) & 7
        return typ(r), (-q if (x < 0) != (y < 0) else q)
    return f


def _sincos(s, c, typ):
    fs, fc = _float_fn(s, typ), _float_fn(c, typ)
    return lambda x: (fs(x), fc(x))


def _ilogb(x):
    if x == 0 or x != x:
        return -(1 << 31)
    if not math.isfinite(x):
        return (1 << 31) - 1
    return math.frexp(float(x))[1] - 1


def _pred(fn):
    return lambda x: 1 if fn(x) else 0


# ---- integers --------------------------------------------------------------------------------
def _brev(bits):
    def f(x):
        v = int(format(x & ((1 << bits) - 1), f"0{bits}b")[::-1], 2)
        return (_w32 if bits == 32 else _w64)(v)
    return f


def _clz(bits):
    return lambda x: bits - (x & ((1 << bits) - 1)).bit_length()


def _ffs(bits):
    def f(x):
        v = x & ((1 << bits) - 1)
        return (v & -v).bit_length()
    return f


def _byte_perm(x, y, s):
    data = ((y & _M32) << 32) | (x & _M32)
    out = 0
    for n in range(4):
        sel = (s >> (4 * n)) & 7
        out |= ((data >> (8 * sel)) & 0xFF) << (8 * n)
    return _w32(out)


def _s24(v):
    v &= 0xFFFFFF
    return v - (1 << 24) if v & 0x800000 else v


def _mulhi(bits, unsigned):
    mask = (1 << bits) - 1
    wrap = _w32 if bits == 32 else _w64

    def f(x, y):
        if unsigned:
            x, y = x & mask, y & mask
        return wrap((x * y) >> bits)
    return f


_INT = {
    "abs": lambda x: _w32(abs(x)), "llabs": lambda x: _w64(abs(x)),
    "brev": _brev(32), "brevll": _brev(64), "byte_perm": _byte_perm,
    "clz": _clz(32), "clzll": _clz(64), "ffs": _ffs(32), "ffsll": _ffs(64),
    "popc": lambda x: bin(x & _M32).count("1"), "popcll": lambda x: bin(x & _M64).count("1"),
    "hadd": lambda x, y: (x + y) >> 1, "rhadd": lambda x, y: (x + y + 1) >> 1,
    "uhadd": lambda x, y: _w32(((x & _M32) + (y & _M32)) >> 1),
    "urhadd": lambda x, y: _w32(((x & _M32) + (y & _M32) + 1) >> 1),
    "mul24": lambda x, y: _w32(_s24(x) * _s24(y)),
    "umul24": lambda x, y: _w32((x & 0xFFFFFF) * (y & 0xFFFFFF)),
    "mulhi": _mulhi(32, False), "umulhi": _mulhi(32, True),
    "mul64hi": _mulhi(64, False), "umul64hi": _mulhi(64, True),
    "sad": lambda x, y, z: _w32(abs(x - y) + (z & _M32)),
    "usad": lambda x, y, z: _w32(abs((x & _M32) - (y & _M32)) + (z & _M32)),
    "min": min, "max": max, "llmin": min, "llmax": max,
    "umin": lambda x, y: _w32(min(x & _M32, y & _M32)),
    "umax": lambda x, y: _w32(max(x & _M32, y & _M32)),
    "ullmin": lambda x, y: _w64(min(x & _M64, y & _M64)),
    "ullmax": lambda x, y: _w64(max(x & _M64, y & _M64)),
    "float_as_int": lambda x: int(np.float32(x).view(np.int32)),
    "int_as_float": lambda x: np.int32(x).view(np.float32),
    "double_as_longlong": lambda x: int(np.float64(x).view(np.int64)),
    "longlong_as_double": lambda x: np.int64(x).view(np.float64),
    "double2hiint": lambda x: _w32(int(np.float64(x).view(np.int64)) >> 32),
    "double2loint": lambda x: _w32(int(np.float64(x).view(np.int64))),
    "hiloint2double": lambda hi, lo: np.int64(_w64(((hi & _M32) << 32) | (lo & _M32))).view(
        np.float64),
    "float2half_rn": lambda x: int(np.float16(np.float32(x)).view(np.int16)),
    "half2float": lambda h: np.float32(np.int16(h).view(np.float16)),
    "llrint": lambda x: scalars.caster(T.int64)(np.rint(x)),
    "llround": lambda x: scalars.caster(T.int64)(_round_half_away(float(x))),
    "isinf": _pred(np.isinf), "isnan": _pred(np.isnan), "isfinite": _pred(np.isfinite),
    "signbit": _pred(np.signbit), "ilogb": _ilogb,
}
_INT.update({"llrintf": _INT["llrint"], "llroundf": _INT["llround"], "ilogbf": _ilogb,
             "isinfd": _INT["isinf"], "isinff": _INT["isinf"], "isnand": _INT["isnan"],
             "isnanf": _INT["isnan"], "isfinited": _INT["isfinite"],
             "finitef": _INT["isfinite"], "signbitd": _INT["signbit"],
             "signbitf": _INT["signbit"]})


def _build(fn):
    """The simulator's function for LibdeviceFunction ``fn``: arguments already converted to
    ``fn.params``; the result (or tuple) not yet converted."""
    name = fn.name
    if name in _INT:
        return _INT[name]
    typ = np.float32 if (fn.params and fn.params[0] is T.float32) or fn.ret is T.float32 \
        else np.float64
    parts = name.split("_")
    mode = parts[-1] if parts[-1] in ("rn", "rz", "ru", "rd") else None
    if mode:
        head = "_".join(parts[:-1])
        ops = {"dadd": "add", "fadd": "add", "fsub": "sub", "dmul": "mul", "fmul": "mul",
               "ddiv": "div", "fdiv": "div"}
        if head in ops:
            return _arith(ops[head], typ, mode)
        if head in ("dsqrt", "fsqrt"):
            return _sqrt(typ, mode)
        if head in ("drcp", "frcp"):
            div = _arith("div", typ, mode)
            return lambda x: div(1.0, x)
        if head in ("fma", "fmaf"):
            return _fma(typ, mode)
        if head == "frsqrt":
            return _float_fn("rsqrt", np.float32)
        src, _, dst = head.partition("2")
        if dst in ("float", "double"):
            return _to_float(np.float32 if dst == "float" else np.float64, mode,
                             unsigned=src in ("uint", "ull"), bits=64 if src in ("ll", "ull")
                             else 32)
        target = {"int": T.int32, "uint": T.uint32, "ll": T.int64, "ull": T.uint64}[dst]
        return _to_int(target, mode, target.bitwidth)
    if name in ("fma", "fmaf"):
        return _fma(typ, "rn")
    base = name[5:] if name.startswith("fast_") else name
    if base in ("nextafter", "nextafterf"):
        return _nextafter(typ)
    for stem, make in (("frexp", _frexp), ("modf", _modf), ("remquo", _remquo)):
        if base in (stem, stem + "f"):
            return make(typ)
    if base in ("sincos", "sincosf"):
        return _sincos("sin", "cos", typ)
    if base in ("sincospi", "sincospif"):
        return _sincos("sinpi", "cospi", typ)
    if base not in _FLOAT and base.endswith("f"):
        base = base[:-1]
    base = _ALIAS.get(base, base)
    return _float_fn(base, typ)


_CACHE = {}


def function(fn):
    """``f(*args)`` computing libdevice function ``fn`` (a ``LibdeviceFunction``) as a GPU
    does: arguments already of ``fn.params``' types; gives the simulator's value of
    ``fn.result`` (a tuple for functions with out-arguments)."""
    f = _CACHE.get(fn.name)
    if f is None:
        raw = _build(fn)
        rts = ([] if fn.ret is T.void else [fn.ret]) + list(fn.outs)
        convs = [scalars.caster(t) for t in rts]
        if len(convs) == 1:
            conv = convs[0]

            def f(*args):
                return conv(raw(*args))
        else:
            def f(*args):
                return tuple(c(v) for c, v in zip(convs, raw(*args)))
        f.__name__ = "libdevice_" + fn.name
        _CACHE[fn.name] = f
    return f


def call_converted(fn, args):
    """``fn(*args)`` with each argument first converted to the type libdevice declares
    (the conversion the compiled call makes); TypeError for a wrong argument count."""
    if len(args) != len(fn.params):
        raise TypeError(f"libdevice.{fn.name}() takes {len(fn.params)} argument(s), got "
                        f"{len(args)}")
    return function(fn)(*(scalars.caster(t)(a) for t, a in zip(fn.params, args)))
