"""Numba's typing rules for scalar operators, and the unification of a variable's types.

Source: ``numba/core/typing/builtins.py`` (behaviour, not code): integer arithmetic gives at
least 64 bits (``choose_result_int``: width ``max(widths, 64)``, signed when any operand is
signed), mixing integers and floats follows NumPy promotion (``int32 * float32`` → float64,
``int16 * float32`` → float32), ``int / int`` is float64, comparisons give ``boolean``.
"""
import numpy as np

from .. import types as T
from . import overloads
from .callkinds import CallKind, resolve

__all__ = ["is_int", "is_float", "is_complex", "is_number", "is_scalar", "promote",
           "unify", "binop_type", "unary_type", "int_result", "PseudoType", "Global", "Func",
           "BoundMethod", "ArrayCTypes", "RangeType", "IterType", "element_type",
           "isinstance_of", "is_datetime", "common_time_unit", "datetime_binop_type"]


class PseudoType:
    """A compile-time value that is not a runtime value (module, function, method, range)."""
    __slots__ = ()


class Global(PseudoType):
    """A Python object known at compile time (module, stub, dtype, string ...)."""
    __slots__ = ("obj",)

    def __init__(self, obj):
        self.obj = obj

    def __eq__(self, other):
        return isinstance(other, Global) and other.obj is self.obj

    def __hash__(self):
        return id(self.obj)

    def __repr__(self):
        return f"Global({self.obj!r:.60})"

    def __str__(self):
        # what error messages show ("a value of type str 'inf'"): the Python object, not
        # the typer's wrapper
        if self.obj is None:
            return "compile-time constant"
        return f"{type(self.obj).__name__} {self.obj!r:.60}"


class Func(PseudoType):
    """A function the compiler recognises: ``key`` (e.g. ``'syncthreads'``, ``'math.sqrt'``,
    ``'cast'``, ``'device'``: how messages name it), its ``kind`` (a ``CallKind``) and family
    ``name`` (``callkinds.resolve``), and ``data`` (the target type of a cast, the device
    function).  ValueError for a key no ``CallKind`` covers."""
    __slots__ = ("key", "kind", "name", "data")

    def __init__(self, key, data=None):
        self.key = key
        self.kind, self.name = resolve(key)
        self.data = data

    def __eq__(self, other):
        return isinstance(other, Func) and other.key == self.key and other.data is self.data

    def __hash__(self):
        return hash((self.key, id(self.data)))

    def __repr__(self):
        return f"Func({self.key})"


class BoundMethod(PseudoType):
    """``recv.name`` of a runtime value (``arr.reshape``, ``z.conjugate``)."""
    __slots__ = ("recv", "name")

    def __init__(self, recv, name):
        self.recv = recv
        self.name = name

    def __eq__(self, other):
        return isinstance(other, BoundMethod) and (other.recv, other.name) == (self.recv,
                                                                               self.name)

    def __hash__(self):
        return hash((self.recv, self.name))

    def __repr__(self):
        return f"method {self.name} of {self.recv}"


class ArrayCTypes(PseudoType):
    """``arr.ctypes`` of an array of type ``array`` (Numba's ``ArrayCTypes``): only its
    ``.data`` is read in kernels, the address of the array's first element as ``uint64``
    (Numba's ``uintp``)."""
    __slots__ = ("array",)

    def __init__(self, array):
        self.array = array

    def __eq__(self, other):
        return isinstance(other, ArrayCTypes) and other.array is self.array

    def __hash__(self):
        return hash(("ctypes", self.array))

    def __repr__(self):
        return f"ctypes of {self.array}"


class RangeType(PseudoType):
    """The value of ``range(...)``: ``dtype`` is the integer type of start/stop/step."""
    __slots__ = ("dtype",)

    def __init__(self, dtype):
        self.dtype = dtype

    def __eq__(self, other):
        return isinstance(other, RangeType) and other.dtype is self.dtype

    def __hash__(self):
        return hash(("range", self.dtype))

    def __repr__(self):
        return f"range({self.dtype})"


class IterType(PseudoType):
    """``enumerate(x)`` / ``zip(x, y, ...)`` of ranges, arrays or homogeneous tuples (only as
    the iterable of a ``for``): ``kind`` (``CallKind.ENUMERATE`` or ``CallKind.ZIP``) and the
    types of the iterables ``inners``."""
    __slots__ = ("kind", "inners")

    def __init__(self, kind, inners):
        self.kind = kind
        self.inners = tuple(inners)

    def __eq__(self, other):
        return isinstance(other, IterType) and (other.kind, other.inners) == (self.kind,
                                                                              self.inners)

    def __hash__(self):
        return hash((self.kind, self.inners))

    def __repr__(self):
        return f"{self.kind.value}({', '.join(map(str, self.inners))})"


def element_type(t):
    """Type of the items of iterable type ``t`` in a ``for``, or None when not iterable."""
    if isinstance(t, RangeType):
        return t.dtype
    if isinstance(t, T.Array) and t.ndim >= 1:
        return t.dtype if t.ndim == 1 else t.copy(ndim=t.ndim - 1, layout="A")
    if isinstance(t, T.UniTuple):
        return t.dtype
    if isinstance(t, IterType):
        inner = tuple(element_type(x) for x in t.inners)
        return T.Tuple(((T.int64,) if t.kind is CallKind.ENUMERATE else ()) + inner)
    return None


def is_int(t):
    return isinstance(t, T.Integer)


def is_float(t):
    return isinstance(t, T.Float)


def is_complex(t):
    return isinstance(t, T.Complex)


def is_number(t):
    return isinstance(t, (T.Integer, T.Float, T.Complex, T.Boolean))


is_scalar = is_number


def int_result(*ts):
    """Numba's ``choose_result_int``: width max(widths, 64), signed if any is signed (bool
    counts as signed)."""
    width = max([64] + [t.bitwidth for t in ts if is_int(t)])
    signed = any(not is_int(t) or t.signed for t in ts)
    return T.Integer(width, signed)


def promote(a, b):
    """The NumPy promotion of two scalar types (used for int/float mixes and unification)."""
    if a is b:
        return a
    return T.from_dtype(np.promote_types(a.dtype, b.dtype))


def unify(a, b):
    """The one type of a variable assigned values of types ``a`` and ``b``, or None when they
    cannot share a variable."""
    if a is b or b is None:
        return a
    if a is None:
        return b
    if is_number(a) and is_number(b):
        if isinstance(a, T.Boolean) or isinstance(b, T.Boolean):
            other = b if isinstance(a, T.Boolean) else a
            return other if not isinstance(other, T.Boolean) else a
        if is_int(a) and is_int(b) and a.signed != b.signed:
            return int_result(a, b) if max(a.bitwidth, b.bitwidth) < 64 else T.float64
        return promote(a, b)
    if isinstance(a, T.Array) and isinstance(b, T.Array):
        if a.dtype is b.dtype and a.ndim == b.ndim:
            return T.Array(a.dtype, a.ndim, a.layout if a.layout == b.layout else "A",
                           a.readonly or b.readonly)
        return None
    if isinstance(a, (T.UniTuple, T.Tuple)) and isinstance(b, (T.UniTuple, T.Tuple)):
        if len(a.types) != len(b.types):
            return None
        parts = [unify(x, y) for x, y in zip(a.types, b.types)]
        if any(p is None for p in parts):
            return None
        return T.Tuple(tuple(parts))
    if a == b:
        return a
    return None


_ARITH = ("+", "-", "*")


def _as_num(t):
    """Bool in arithmetic behaves as an integer (Numba: bool + bool → int64)."""
    return T.int64 if isinstance(t, T.Boolean) else t


def is_datetime(t):
    """True for a ``datetime64`` or ``timedelta64`` type."""
    return isinstance(t, (T.NPDatetime, T.NPTimedelta))


def common_time_unit(u1, u2):
    """The unit two datetime64/timedelta64 units compute in: the finer one (NumPy's
    promotion: ``'D'`` and ``'h'`` give ``'h'``; the generic unit ``''`` takes the other's);
    None when NumPy has no common unit (years or months with days and finer units)."""
    if u1 == u2 or not u2:
        return u1
    if not u1:
        return u2
    try:
        unit, count = np.datetime_data(np.promote_types(np.dtype(f"m8[{u1}]"),
                                                        np.dtype(f"m8[{u2}]")))
    except TypeError:
        return None
    return unit if count == 1 else None


def datetime_binop_type(op, a, b):
    """Result type of ``a <op> b`` when one operand is a datetime64 or timedelta64 (numba's
    ``npdatetime`` typing, NumPy's results): timedelta ± timedelta and datetime − datetime
    give a timedelta, datetime ± timedelta a datetime, in the finer unit
    (:func:`common_time_unit`); a timedelta times or divided by an int or float is a
    timedelta of its unit; timedelta / timedelta is float64, ``//`` int64, ``%`` a
    timedelta.  None for anything else (adding two datetimes, mixing years or months with
    days, a datetime times a number)."""
    dt_a, dt_b = isinstance(a, T.NPDatetime), isinstance(b, T.NPDatetime)
    td_a, td_b = isinstance(a, T.NPTimedelta), isinstance(b, T.NPTimedelta)
    real = lambda t: is_int(t) or is_float(t)      # noqa: E731
    if (td_a or dt_a) and (td_b or dt_b):
        unit = common_time_unit(a.unit, b.unit)
        if unit is None:
            return None
        if op == "+" and not (dt_a and dt_b):
            return T.NPDatetime(unit) if dt_a or dt_b else T.NPTimedelta(unit)
        if op == "-" and not (td_a and dt_b):
            return T.NPTimedelta(unit) if dt_a == dt_b else T.NPDatetime(unit)
        if td_a and td_b:
            return {"/": T.float64, "//": T.int64, "%": T.NPTimedelta(unit)}.get(op)
        return None
    if td_a and real(b) and op in ("*", "/", "//"):
        return a
    if td_b and real(a) and op == "*":
        return b
    return None


def binop_type(op, a, b):
    """Result type of scalar ``a <op> b`` (op: '+', '-', '*', '/', '//', '%', '**', '&', '|',
    '^', '<<', '>>'), or None when the operation is not defined for these types."""
    if is_datetime(a) or is_datetime(b):
        return datetime_binop_type(op, a, b)
    if isinstance(a, T.BFloat16) or isinstance(b, T.BFloat16):
        if op not in ("+", "-", "*", "/"):
            return None
        return bf16_mix_type(a, b)
    if not (is_number(a) and is_number(b)):
        return None
    if op in ("&", "|", "^"):
        if isinstance(a, T.Boolean) and isinstance(b, T.Boolean):
            return T.boolean
        a, b = _as_num(a), _as_num(b)
        return int_result(a, b) if is_int(a) and is_int(b) else None
    a, b = _as_num(a), _as_num(b)
    if op in ("<<", ">>"):
        # Numba's BitwiseShiftOperation: only the left operand's signedness counts, at
        # least 64 bits (max(left, intp) or max(left, uintp))
        if not (is_int(a) and is_int(b)):
            return None
        return T.int64 if a.signed else T.uint64
    if is_int(a) and is_int(b):
        if op == "/":
            return T.float64
        if op == "**":
            return int_result(a, b)
        return int_result(a, b)
    if is_complex(a) or is_complex(b):
        if op in ("//", "%"):
            return None
        return promote(a, b) if (is_complex(a) and is_complex(b)) else _mix_complex(a, b)
    # float with float or int: NumPy promotion
    if op == "**" and is_float(a) and is_int(b):
        return a    # x ** n keeps the float type (powi)
    return promote(a, b)


def _bf16_cases():
    ints = [T.Integer(w, s) for s in (True, False) for w in (8, 16, 32, 64)]
    return [(T.bfloat16, T.bfloat16), (T.float32, T.float32), (T.float64, T.float64)] + \
        [(t, t) for t in ints]


def bf16_mix_type(a, b):
    """The type ``a + b`` (``- * /`` alike) computes in when one operand is a bfloat16:
    numba-cuda's overload resolution over its operator cases (the integer and float ones
    and bfloat16's own) with bfloat16's conversions (``overloads.conversion``): bfloat16
    with bfloat16, an 8-bit integer or an int64/uint64 → bfloat16; with bool, an int16/
    uint16, a float16 or a float32 → float32; with an int32/uint32 or a float64 → float64.
    Where numba-cuda's resolution ties the integer case with bfloat16's (int64, uint64) and
    takes the integer case, truncating the bfloat16 to an integer, cujit computes in
    bfloat16 (docs/requirements.md §10).  None for a complex or non-number operand."""
    from_cases = overloads.best_overloads((a, b), _bf16_cases())
    if not from_cases:
        return None
    t = from_cases[0][0]
    return t if not is_int(t) else int_result(t, t)


def _mix_complex(a, b):
    c, o = (a, b) if is_complex(a) else (b, a)
    return promote(c, o) if is_float(o) else T.from_dtype(np.promote_types(c.dtype, o.dtype))


def unary_type(op, a):
    """Result of unary ``op`` ('-', '+', '~', 'not') on scalar type ``a``, or None."""
    if isinstance(a, T.NPTimedelta):
        return a if op in ("-", "+") else None
    if isinstance(a, T.NPDatetime):
        return None
    if isinstance(a, T.BFloat16):
        return a if op in ("-", "+") else T.boolean if op == "not" else None
    if not is_number(a):
        return None
    if op == "not":
        return T.boolean
    if op == "~":
        if isinstance(a, T.Boolean):
            return T.boolean
        return int_result(a) if is_int(a) else None
    if isinstance(a, T.Boolean) or is_int(a):
        return int_result(_as_num(a))
    return a


# Python classes as Numba's ``as_numba_type`` gives them: the one type each stands for
_PY_CLASS_TYPES = {bool: T.boolean, int: T.int64, float: T.float64, complex: T.complex128}


def isinstance_of(t, classinfo):
    """``isinstance(x, classinfo)`` for a value ``x`` of type ``t``, decided at compile time
    as Numba's ``ol_isinstance`` decides it: ``classinfo`` is a Python class (``int``,
    ``float``, ``complex`` and ``bool`` stand for ``int64``, ``float64``, ``complex128`` and
    ``boolean`` exactly; ``tuple``, ``str``, ``bytes``, ``range`` for those kinds of value;
    ``list``, ``dict``, ``set`` never match), a NumPy scalar type (``np.float32``), a cujit
    or Numba type (``float32``, ``bfloat16``, ``int32[:]``), or a tuple of those.  Returns a
    bool; raises TypeError naming what is refused: a value of a type Numba's isinstance does
    not take (a record, a pseudo-value such as a function) or a class that is none of the
    above (Numba's type classes such as ``types.Integer``, ``np.ndarray``)."""
    if isinstance(t, Global) and isinstance(t.obj, (str, bytes)):
        pass
    elif isinstance(t, (PseudoType, T.Record, T.CharSeq)) or not isinstance(t, T.Type):
        raise TypeError(f'isinstance() does not support variables of type "{t}"')
    if isinstance(classinfo, tuple):
        return any([isinstance_of(t, c) for c in classinfo])
    if classinfo in _PY_CLASS_TYPES:
        return t is _PY_CLASS_TYPES[classinfo]
    kinds = {tuple: (T.UniTuple, T.Tuple), range: RangeType}
    if classinfo in kinds:
        return isinstance(t, kinds[classinfo])
    if classinfo in (str, bytes):
        return isinstance(t, Global) and isinstance(t.obj, classinfo)
    if classinfo in (list, dict, set):
        return False        # kernels have no lists, dicts or sets
    target = classinfo if isinstance(classinfo, T.Type) else None
    if target is None and isinstance(classinfo, type) and issubclass(classinfo, np.generic):
        try:
            target = T.from_dtype(np.dtype(classinfo))
        except TypeError:
            target = None
    if target is None and not isinstance(classinfo, type):
        target = T.from_numba_type(classinfo)
    if target is None:
        raise TypeError(f"isinstance() of {classinfo!r}: the class must be a Python scalar "
                        "class (int, float, complex, bool), tuple, a NumPy scalar type, a "
                        "cujit or Numba type instance (float32, bfloat16, int32[:]), or a "
                        "tuple of those (Numba's type classes such as types.Integer are "
                        "not supported, as in Numba)")
    return t is target
