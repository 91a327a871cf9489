"""``cuda.bf16``: the bfloat16 type and intrinsics (numba-cuda's ``numba.cuda.bf16``).

``bfloat16`` is :data:`cujit.types.bfloat16`: ``bfloat16(x)`` in a kernel rounds a number to
nearest even.  The functions take and give bfloat16 values (:class:`~cujit.bf16_scalar.BF16`
here) unless their name says otherwise; in kernels the compiler lowers them
(``nvvm/lower_bf16.py``) and these Python bodies are what the simulator runs.  Their
values are the GPU's bit for bit (:mod:`cujit.narrow_floats`) for the arithmetic (``hadd`` ...
``hfma``: ``fma.rn.bf16``, one rounding; ``hdiv``: the float32 quotient rounded once), the
``_sat`` / ``_relu`` variants, comparisons, ``hmax``/``hmin`` (a NaN operand gives the other
one; the ``_nan`` variants give NaN), the conversions in their rounding modes (``rn`` nearest
even, ``rz`` toward zero, ``rd`` down, ``ru`` up; to integers clamped to the type's range, NaN
to 0) and the bit reinterprets; ``htrunc``/``hceil``/``hfloor``/``hrint`` are exact.  The
other functions (``hsqrt``, ``hexp`` ...) compute in float32 and round once; the GPU's
float32 functions may differ from NumPy's in the last float32 bit, so these may differ in the
last bfloat16 bit.  A NaN result is the canonical NaN ``0x7FFF``.

TypeError when an argument is not of the kind the function takes (a bfloat16 function given
a float: convert with ``bfloat16(x)`` first).
"""
import numpy as np

from . import narrow_floats as nf
from .types import core as _T
from .bf16_scalar import BF16
from .types.core import bfloat16

_ONE, _NEG_ONE, _NEG_ZERO = 0x3F80, 0xBF80, 0x8000
_F32 = np.float32


def _b(x, name):
    if not isinstance(x, BF16):
        raise TypeError(f"cuda.bf16.{name}() takes bfloat16 values, got {x!r} (convert with "
                        "bfloat16(x))")
    return x.bits


def _nan(bits):
    return (bits & 0x7FFF) > 0x7F80


def _canon(bits):
    return BF16.from_bits(nf.BF16_NAN if _nan(bits) else bits)


def _f(bits):
    return float(nf.bf16_bits_to_f32(bits))


# ---- arithmetic ------------------------------------------------------------------------------
def hadd(a, b):
    """``a + b`` rounded once to nearest even."""
    return _canon(nf.fma_bf16_bits(_b(a, "hadd"), _ONE, _b(b, "hadd")))


def hsub(a, b):
    """``a - b`` rounded once to nearest even."""
    return _canon(nf.fma_bf16_bits(_b(b, "hsub"), _NEG_ONE, _b(a, "hsub")))


def hmul(a, b):
    """``a * b`` rounded once to nearest even."""
    return _canon(nf.fma_bf16_bits(_b(a, "hmul"), _b(b, "hmul"), _NEG_ZERO))


def hfma(a, b, c):
    """``a * b + c`` rounded once to nearest even (``fma.rn.bf16``)."""
    return _canon(nf.fma_bf16_bits(_b(a, "hfma"), _b(b, "hfma"), _b(c, "hfma")))


hadd_rn, hsub_rn, hmul_rn = hadd, hsub, hmul      # cujit never contracts: the same values


def hdiv(a, b):
    """``a / b``: the float32 quotient rounded once (correctly rounded)."""
    x, y = nf.bf16_bits_to_f32(_b(a, "hdiv")), nf.bf16_bits_to_f32(_b(b, "hdiv"))
    with np.errstate(all="ignore"):
        return _canon(int(nf.f32_to_bf16_bits(_F32(x) / y)))


def _sat(r):
    """``r`` clamped to [0, 1]; NaN gives +0."""
    if _nan(r.bits):
        return BF16.from_bits(0)
    v = float(r)
    return BF16.from_bits(0) if v <= 0 else BF16.from_bits(_ONE) if v > 1 else r


def hadd_sat(a, b):
    """``a + b`` clamped to [0, 1] (NaN gives 0)."""
    return _sat(hadd(a, b))


def hsub_sat(a, b):
    """``a - b`` clamped to [0, 1] (NaN gives 0)."""
    return _sat(hsub(a, b))


def hmul_sat(a, b):
    """``a * b`` clamped to [0, 1] (NaN gives 0)."""
    return _sat(hmul(a, b))


def hfma_sat(a, b, c):
    """``a * b + c`` clamped to [0, 1] (NaN gives 0)."""
    return _sat(hfma(a, b, c))


def hfma_relu(a, b, c):
    """``max(a * b + c, 0)`` (``fma.rn.relu.bf16``: a negative result is +0, NaN stays the
    canonical NaN)."""
    r = hfma(a, b, c)
    return r if _nan(r.bits) or float(r) > 0 or r.bits == 0 else BF16.from_bits(0)


def hneg(a):
    """``-a`` (the sign bit flipped)."""
    return BF16.from_bits(_b(a, "hneg") ^ 0x8000)


def habs(a):
    """``|a|`` (the sign bit cleared)."""
    return BF16.from_bits(_b(a, "habs") & 0x7FFF)


# ---- comparisons -----------------------------------------------------------------------------
def _ordered(name, op):
    def f(a, b):
        x, y = _b(a, name), _b(b, name)
        return not (_nan(x) or _nan(y)) and op(_f(x), _f(y))
    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"``a {op.__doc__} b``, False when either is NaN."
    return f


def _unordered(name, op):
    def f(a, b):
        x, y = _b(a, name), _b(b, name)
        return _nan(x) or _nan(y) or op(_f(x), _f(y))
    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"``a {op.__doc__} b``, True when either is NaN."
    return f


def _op(sym, fn):
    fn.__doc__ = sym
    return fn


_EQ = _op("==", lambda x, y: x == y)
_NE = _op("!=", lambda x, y: x != y)
_GE = _op(">=", lambda x, y: x >= y)
_GT = _op(">", lambda x, y: x > y)
_LE = _op("<=", lambda x, y: x <= y)
_LT = _op("<", lambda x, y: x < y)
heq, hne, hge, hgt, hle, hlt = (_ordered(n, o) for n, o in (
    ("heq", _EQ), ("hne", _NE), ("hge", _GE), ("hgt", _GT), ("hle", _LE), ("hlt", _LT)))
hequ, hneu, hgeu, hgtu, hleu, hltu = (_unordered(n, o) for n, o in (
    ("hequ", _EQ), ("hneu", _NE), ("hgeu", _GE), ("hgtu", _GT), ("hleu", _LE),
    ("hltu", _LT)))


def _extremum(a, b, name, larger, nan_wins):
    x, y = _b(a, name), _b(b, name)
    if _nan(x) or _nan(y):
        if nan_wins or (_nan(x) and _nan(y)):
            return BF16.from_bits(nf.BF16_NAN)
        return BF16.from_bits(y if _nan(x) else x)
    fx, fy = _f(x), _f(y)
    if fx == fy:        # ±0: max gives +0, min gives -0
        return BF16.from_bits((x & y) if larger else (x | y))
    return BF16.from_bits(x if (fx > fy) == larger else y)


def hmax(a, b):
    """The larger of ``a`` and ``b`` (``max.bf16``: with one NaN the other value)."""
    return _extremum(a, b, "hmax", True, False)


def hmin(a, b):
    """The smaller of ``a`` and ``b`` (``min.bf16``: with one NaN the other value)."""
    return _extremum(a, b, "hmin", False, False)


def hmax_nan(a, b):
    """The larger of ``a`` and ``b``; NaN when either is NaN (``max.NaN.bf16``)."""
    return _extremum(a, b, "hmax_nan", True, True)


def hmin_nan(a, b):
    """The smaller of ``a`` and ``b``; NaN when either is NaN (``min.NaN.bf16``)."""
    return _extremum(a, b, "hmin_nan", False, True)


def hisnan(a):
    """True when ``a`` is NaN."""
    return _nan(_b(a, "hisnan"))


def hisinf(a):
    """-1 for -inf, 1 for +inf, 0 otherwise (CUDA's ``__hisinf``, an int)."""
    x = _b(a, "hisinf")
    return (-1 if x & 0x8000 else 1) if (x & 0x7FFF) == 0x7F80 else 0


# ---- conversions -----------------------------------------------------------------------------
def _num(x, name, kind):
    if kind == "int" and isinstance(x, (int, np.integer)) and not isinstance(x, bool):
        return int(x)
    if kind == "float" and isinstance(x, (float, np.floating)):
        return x
    raise TypeError(f"cuda.bf16.{name}() takes {'an integer' if kind == 'int' else 'a float'}"
                    f", got {x!r}")


def bfloat16_to_float32(a):
    """The exact float32 value of ``a`` (``cvt.f32.bf16``)."""
    return nf.bf16_bits_to_f32(_b(a, "bfloat16_to_float32"))


def float32_to_bfloat16(x):
    """float32 ``x`` rounded to nearest even (``cvt.rn.bf16.f32``)."""
    return BF16.from_bits(int(nf.f32_to_bf16_bits(_F32(_num(x, "float32_to_bfloat16",
                                                                 "float")))))


def float64_to_bfloat16(x):
    """float64 ``x`` rounded once to nearest even (``cvt.rn.bf16.f64``)."""
    return BF16.from_bits(int(nf.f64_to_bf16_bits(float(_num(x, "float64_to_bfloat16",
                                                                  "float")))))


def _from_float(mode):
    name = f"float32_to_bfloat16_{mode}"

    def f(x):
        return BF16.from_bits(int(nf.f32_to_bf16_bits(_F32(_num(x, name, "float")), mode)))
    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"float32 ``x`` rounded to bfloat16 in mode ``{mode}`` (``cvt.{_PTX[mode]}" \
                ".bf16.f32``)."
    return f


_PTX = {"rn": "rn", "rz": "rz", "rd": "rm", "ru": "rp"}
#: numba-cuda's integer type names and CUDA's (``int16`` is ``short``).
INT_TYPES = {"int8": ("char", True, 8), "uint8": ("uchar", False, 8),
             "int16": ("short", True, 16), "uint16": ("ushort", False, 16),
             "int32": ("int", True, 32), "uint32": ("uint", False, 32),
             "int64": ("ll", True, 64), "uint64": ("ull", False, 64)}


def _from_int(tname, mode):
    name = f"{tname}_to_bfloat16_{mode}"
    _, signed, width = INT_TYPES[tname]

    def f(i):
        v = _num(i, name, "int")
        v %= 1 << width                     # the argument as the type's value
        if signed and v >> (width - 1):
            v -= 1 << width
        return BF16.from_bits(nf.int_to_bf16_bits(v, mode))
    f.__name__ = f.__qualname__ = name
    f.__doc__ = (f"``{tname}`` ``i`` rounded to bfloat16 in mode ``{mode}`` "
                 f"(``cvt.{_PTX[mode]}.bf16.{'s' if signed else 'u'}{width}``).")
    return f


def _to_int(tname, mode):
    name = f"bfloat16_to_{tname}_{mode}"
    _, signed, width = INT_TYPES[tname]

    def f(a):
        return nf.bf16_to_int(_b(a, name), mode, signed, width)
    f.__name__ = f.__qualname__ = name
    f.__doc__ = (f"``a`` rounded to ``{tname}`` in mode ``{mode}``, clamped to its range, "
                 f"NaN gives 0 (``cvt.{_PTX[mode]}i.{'s' if signed else 'u'}{width}.bf16``).")
    return f


def bfloat16_as_int16(a):
    """The bits of ``a`` as an int16."""
    x = _b(a, "bfloat16_as_int16")
    return x - 0x10000 if x & 0x8000 else x


def bfloat16_as_uint16(a):
    """The bits of ``a`` as a uint16."""
    return _b(a, "bfloat16_as_uint16")


def int16_as_bfloat16(i):
    """The bfloat16 whose bits are int16 ``i``."""
    return BF16.from_bits(_num(i, "int16_as_bfloat16", "int"))


def uint16_as_bfloat16(i):
    """The bfloat16 whose bits are uint16 ``i``."""
    return BF16.from_bits(_num(i, "uint16_as_bfloat16", "int"))


# ---- functions -------------------------------------------------------------------------------
def _unary(name, fn, doc):
    def f(a):
        x = nf.bf16_bits_to_f32(_b(a, name))
        with np.errstate(all="ignore"):
            return _canon(int(nf.f32_to_bf16_bits(_F32(fn(x)))))
    f.__name__ = f.__qualname__ = name
    f.__doc__ = doc
    return f


#: name: (NumPy float32 function, libdevice function the compiler calls).
UNARY = {
    "htrunc": (np.trunc, "truncf"), "hceil": (np.ceil, "ceilf"),
    "hfloor": (np.floor, "floorf"), "hrint": (np.rint, "rintf"),
    "hsqrt": (np.sqrt, "sqrtf"), "hrsqrt": (lambda x: _F32(1) / np.sqrt(x), "rsqrtf"),
    "hrcp": (lambda x: _F32(1) / x, None), "hlog": (np.log, "logf"),
    "hlog2": (np.log2, "log2f"), "hlog10": (np.log10, "log10f"), "hcos": (np.cos, "cosf"),
    "hsin": (np.sin, "sinf"), "hexp": (np.exp, "expf"), "hexp2": (np.exp2, "exp2f"),
    "hexp10": (lambda x: np.power(_F32(10), x), "exp10f"), "htanh": (np.tanh, "tanhf"),
    "htanh_approx": (np.tanh, "tanhf"),
}
for _n, (_fn, _ld) in UNARY.items():
    globals()[_n] = _unary(_n, _fn, f"``{_n[1:]}(a)`` computed in float32, rounded once.")

#: math-module functions that take a bfloat16 in kernels, and the function they run.
MATH_FUNCTIONS = {"trunc": "htrunc", "ceil": "hceil", "floor": "hfloor", "sqrt": "hsqrt",
                  "log": "hlog", "log2": "hlog2", "log10": "hlog10", "cos": "hcos",
                  "sin": "hsin", "tanh": "htanh", "exp": "hexp", "exp2": "hexp2"}

_ALIASES = {"bfloat162float": "bfloat16_to_float32", "float2bfloat16": "float32_to_bfloat16",
            "double2bfloat16": "float64_to_bfloat16",
            "bfloat16_as_short": "bfloat16_as_int16",
            "bfloat16_as_ushort": "bfloat16_as_uint16",
            "short_as_bfloat16": "int16_as_bfloat16",
            "ushort_as_bfloat16": "uint16_as_bfloat16"}
for _m in nf.ROUNDING_MODES:
    globals()[f"float32_to_bfloat16_{_m}"] = _from_float(_m)
    _ALIASES[f"float2bfloat16_{_m}"] = f"float32_to_bfloat16_{_m}"
    for _t, (_c, _s, _w) in INT_TYPES.items():
        if _w == 8:
            continue
        globals()[f"{_t}_to_bfloat16_{_m}"] = _from_int(_t, _m)
        globals()[f"bfloat16_to_{_t}_{_m}"] = _to_int(_t, _m)
        _ALIASES[f"{_c}2bfloat16_{_m}"] = f"{_t}_to_bfloat16_{_m}"
        _ALIASES[f"bfloat162{_c}_{_m}"] = f"bfloat16_to_{_t}_{_m}"
for _t in ("int8", "uint8"):
    globals()[f"bfloat16_to_{_t}_rz"] = _to_int(_t, "rz")
    _ALIASES[f"bfloat162{INT_TYPES[_t][0]}_rz"] = f"bfloat16_to_{_t}_rz"
for _alias, _target in _ALIASES.items():
    globals()[_alias] = globals()[_target]

def _signature(name):
    """(parameter types, result type) of intrinsic ``name`` in kernels."""
    fn = globals()[name]
    base = fn.__name__
    bf = bfloat16
    ints = {t: getattr(_T, t) for t in INT_TYPES}
    if base in ("hfma", "hfma_sat", "hfma_relu"):
        return (bf, bf, bf), bf
    if base in ("hneg", "habs") or base in UNARY:
        return (bf,), bf
    if base in ("hisnan",):
        return (bf,), _T.boolean
    if base == "hisinf":
        return (bf,), _T.int32
    if base.startswith("h"):
        cmp = base in ("heq", "hne", "hge", "hgt", "hle", "hlt", "hequ", "hneu", "hgeu",
                       "hgtu", "hleu", "hltu")
        return (bf, bf), (_T.boolean if cmp else bf)
    if base == "bfloat16_to_float32":
        return (bf,), _T.float32
    if base.startswith("float32_to_bfloat16"):
        return (_T.float32,), bf
    if base == "float64_to_bfloat16":
        return (_T.float64,), bf
    if base.startswith("bfloat16_as_"):
        return (bf,), ints[base[len("bfloat16_as_"):]]
    if base.endswith("_as_bfloat16"):
        return (ints[base[:-len("_as_bfloat16")]],), bf
    if base.startswith("bfloat16_to_"):
        return (bf,), ints[base[len("bfloat16_to_"):-3]]
    return (ints[base[:base.index("_to_bfloat16")]],), bf


#: Every intrinsic's name (the aliases included).
INTRINSICS = tuple(sorted(n for n, v in globals().items()
                          if callable(v) and not n.startswith("_") and n not in (
                              "BF16", "bfloat16")
                          and getattr(v, "__module__", None) == __name__))
__all__ = ["bfloat16"] + list(INTRINSICS)
#: ``name: (parameter types, result type)`` of every intrinsic in kernels; an argument of
#: another integer or float type is converted to the parameter's type (bfloat16 parameters
#: take bfloat16 values only).
SIGNATURES = {n: _signature(n) for n in INTRINSICS}
del _n, _fn, _ld, _m, _t, _c, _s, _w, _alias, _target
