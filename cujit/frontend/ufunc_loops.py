"""NumPy ufuncs in kernels: which loop of a ufunc runs for given operand types, and what one
element of each supported loop computes, as Python source of the kernel language.

The loop is chosen as numba-cuda chooses it (``numpy_support.ufunc_find_matching_loop``):
the first of ``ufunc.types`` whose inputs every operand casts to safely (an integer to any
float or complex type when integers and floats are mixed), whose output casts to each
explicit output's dtype within its kind, and whose types cujit has (float16 and object
loops are skipped, long double ones have no cujit type).  The ufuncs and loops supported
are numba-cuda's (its ``ufuncs.py`` table and the "Supported NumPy features" list of its
docs) plus the ufuncs cujit already types on scalars (``np.exp``, ``np.sqrt``, ``np.floor``…).

An element is written with the scalar functions and operators the kernel language already
types (``np.sin`` of a float32 is a float32, ``cmath.sin`` of a complex64 a complex64), so a
ufunc loop has no typing or lowering of its own beyond what scalars have: the simulator and
the compiled kernel compute the same values.
"""
import dataclasses

import numpy as np

from .. import types as T

__all__ = ["Loop", "find_loop", "element_source", "SUPPORTED"]


@dataclasses.dataclass(frozen=True)
class Loop:
    """A ufunc loop: ``letters`` as in ``ufunc.types`` (``'ff->f'``), the cujit types of
    its inputs and outputs (tuples of scalar types)."""
    letters: str
    inputs: tuple
    outputs: tuple


def _letter_type(letter):
    """The cujit type of a dtype letter, or None (long double, datetime, object…)."""
    try:
        return T.from_dtype(np.dtype(letter))
    except (TypeError, ValueError, KeyError, NotImplementedError):
        return None


def _can_cast(frm, to, mixed, casting):
    frm, to = np.dtype(frm), np.dtype(to)
    if mixed and frm.kind in "iu" and to.kind in "cf":
        return True     # numba: np.power(float32, int32) computes in float32
    return np.can_cast(frm, to, casting)


def find_loop(ufunc, in_types, out_types):
    """The :class:`Loop` of ``ufunc`` for input scalar types ``in_types`` and explicit
    output dtypes ``out_types`` (cujit scalar types), or None when no loop accepts them."""
    ins = [np.dtype(t.dtype) for t in in_types]
    outs = [np.dtype(t.dtype) for t in out_types]
    mixed = any(d.kind in "iu" for d in ins) and any(d.kind in "cf" for d in ins)
    for cand in ufunc.types:
        lin, lout = cand.split("->")
        if "e" in lin or "O" in lin or any(c in "mM" for c in cand):
            continue
        if not all(_can_cast(d, c, mixed, "safe") for d, c in zip(ins, lin)):
            continue
        if not all(_can_cast(c, d, mixed, "same_kind") for c, d in zip(lout, outs)):
            continue
        tin = tuple(_letter_type(c) for c in lin)
        tout = tuple(_letter_type(c) for c in lout)
        if None in tin or None in tout:
            continue
        return Loop(cand, tin, tout)
    return None


# ---- what one element computes -----------------------------------------------------------
# Each entry: {kind class: template}; the class of a loop is the kind of its first input
# ('?' bool, 'i' signed, 'u' unsigned, 'f' float, 'c' complex; 'qQ'/'Qq' the NumPy >= 1.25
# signed/unsigned comparison loops).  Templates are expressions over a, b (the operands,
# already of the loop's input types).
_REAL = ("f",)
_FLOAT = ("f", "c")
_INT = ("?", "i", "u")
_NUM = ("?", "i", "u", "f")
_ALL = ("?", "i", "u", "f", "c")


def _same(classes, template):
    return {k: template for k in classes}


def _unary(real, cplx=None):
    d = {"f": f"{real}(a)"}
    if cplx:
        d["c"] = f"{cplx}(a)"
    return d


_CMP = {"greater": ">", "greater_equal": ">=", "less": "<", "less_equal": "<=",
        "equal": "==", "not_equal": "!="}
_SWAP = {">": "<", ">=": "<=", "<": ">", "<=": ">=", "==": "==", "!=": "!="}


def _signed_unsigned(op, s, u):
    """``s op u`` exactly, for a signed int64 ``s`` and an unsigned ``u`` (NumPy's qQ
    loops; a plain comparison would compare in float64)."""
    if op in (">", ">=", "=="):
        return f"({s} >= 0 and _u64({s}) {op} {u})"
    return f"({s} < 0 or _u64({s}) {op} {u})"


def _complex_order(op):
    """NumPy orders complex numbers by real part, then imaginary part."""
    if op in ("==", "!="):
        return f"a {op} b"
    strict = op[0]
    return f"(a.real {strict} b.real or (a.real == b.real and a.imag {op} b.imag))"


def _comparison(op):
    d = _same(_NUM, f"a {op} b")
    d["qQ"] = _signed_unsigned(op, "a", "b")
    d["Qq"] = _signed_unsigned(_SWAP[op], "b", "a")
    d["c"] = _complex_order(op)
    return d


def _extremum(bigger, nan_of):
    """maximum/minimum (NaN of either operand wins: ``nan_of='a'`` tests a, the result when
    b is NaN is b) and fmax/fmin (``nan_of='b'``: a NaN operand loses)."""
    op = ">=" if bigger else "<="
    d = {"?": "a or b" if bigger else "a and b"}
    d["i"] = d["u"] = f"a if a {op} b else b"
    d["f"] = f"a if (a {op} b or np.isnan({nan_of})) else b"
    d["c"] = f"a if ({_complex_order(op)} or cmath.isnan({nan_of})) else b"
    return d


_TRIG = {"sin": "sin", "cos": "cos", "tan": "tan", "arcsin": "asin", "arccos": "acos",
         "arctan": "atan", "sinh": "sinh", "cosh": "cosh", "tanh": "tanh",
         "arcsinh": "asinh", "arccosh": "acosh", "arctanh": "atanh", "exp": "exp",
         "log": "log", "log10": "log10", "sqrt": "sqrt"}

#: {ufunc name: {kind class: element template}}: every ufunc a kernel may call on arrays.
SUPPORTED = {name: _unary(f"math.{m}", f"cmath.{m}") for name, m in _TRIG.items()}
SUPPORTED.update({
    # log(z) / log(2) by parts: a complex division would make log2(0)'s imaginary part NaN
    "log2": {"f": "math.log2(a)", "c": "complex(math.log(abs(a)) * 1.4426950408889634, "
                                        "math.atan2(a.imag, a.real) * 1.4426950408889634)"},
    "exp2": _unary("np.exp2"), "expm1": _unary("math.expm1"), "log1p": _unary("math.log1p"),
    "fabs": _unary("math.fabs"),
    "deg2rad": _unary("math.radians"), "radians": _unary("math.radians"),
    "rad2deg": _unary("math.degrees"), "degrees": _unary("math.degrees"),
    "floor": dict(_unary("np.floor"), **_same(_INT, "a")),
    "ceil": dict(_unary("np.ceil"), **_same(_INT, "a")),
    "trunc": dict(_unary("np.trunc"), **_same(_INT, "a")),
    "absolute": _same(_ALL, "abs(a)"),
    "isnan": dict(_same(_INT, "False"), f="math.isnan(a)", c="cmath.isnan(a)"),
    "isinf": dict(_same(_INT, "False"), f="math.isinf(a)", c="cmath.isinf(a)"),
    "isfinite": dict(_same(_INT, "True"), f="math.isfinite(a)", c="cmath.isfinite(a)"),
    "conjugate": dict(_same(_NUM, "a"), c="a.conjugate()"),
    "arctan2": {"f": "math.atan2(a, b)"}, "hypot": {"f": "math.hypot(a, b)"},
    "copysign": {"f": "math.copysign(a, b)"}, "fmod": {"f": "math.fmod(a, b)"},
    "power": _same(("i", "u", "f", "c"), "a ** b"),
    "divide": _same(_FLOAT, "a / b"),
    "logical_and": _same(_ALL, "bool(a) and bool(b)"),
    "logical_or": _same(_ALL, "bool(a) or bool(b)"),
    "logical_xor": _same(_ALL, "bool(a) != bool(b)"),
    "logical_not": _same(_ALL, "not bool(a)"),
    "maximum": _extremum(True, "a"), "minimum": _extremum(False, "a"),
    "fmax": _extremum(True, "b"), "fmin": _extremum(False, "b"),
    "bitwise_and": _same(_INT, "a & b"), "bitwise_or": _same(_INT, "a | b"),
    "bitwise_xor": _same(_INT, "a ^ b"),
    "invert": dict(_same(("i", "u"), "~a"), **{"?": "not a"}),
    "left_shift": _same(("i", "u"), "a << b"), "right_shift": _same(("i", "u"), "a >> b"),
})
SUPPORTED.update({name: _comparison(op) for name, op in _CMP.items()})


def _class_of(letters):
    lin = letters.split("->")[0]
    if lin in ("qQ", "Qq", "lQ", "Ql", "qL", "Lq", "lL", "Ll"):
        return "qQ" if np.dtype(lin[0]).kind == "i" else "Qq"
    k = np.dtype(lin[0]).kind
    return {"b": "?", "i": "i", "u": "u", "f": "f", "c": "c"}[k]


def element_source(ufunc, loop):
    """The Python expression of one element of ``loop`` of ``ufunc`` over ``a`` (and ``b``),
    or None when cujit has no implementation of that loop."""
    table = SUPPORTED.get(ufunc.__name__)
    if table is None:
        return None
    return table.get(_class_of(loop.letters))
