"""Numba-like types for kernel signatures and typing (``cujit.float32``, ``float32[:, ::1]``, ...).

Every type is *interned*: building the same type twice returns the same object, so the launch
hot path compares types by identity and they hash cheaply.  Names, spelling and the rules of
``typeof`` follow Numba's ``numba.core.types`` / ``numba.typeof`` (Numba docs, "Types and
signatures").

- Scalars: ``boolean``/``bool_``, ``int8..int64``, ``uint8..uint64``, ``float16/32/64``,
  ``complex64/128``, ``intp``/``uintp``, ``void``.  Calling one with a value casts it
  (``float32(1.5)`` → ``np.float32(1.5)``); calling one with types builds a signature
  (``void(float32[:], int32)``).  ``.dtype`` is the NumPy dtype, so ``np.dtype(float32)`` works.
- Arrays: ``float32[:]`` (any layout, 'A'), ``float32[::1]`` / ``float32[:, ::1]`` (C),
  ``float32[::1, :]`` (F), or ``Array(dtype, ndim, layout)``.
- ``Record`` (structured dtypes), ``UniTuple`` / ``Tuple``, ``Signature``.
"""
import numpy as np

from . import numba_types as _numba_types

__all__ = ["Type", "Boolean", "Integer", "Float", "Complex", "NoneType", "Array", "Record",
           "NestedArray", "UniTuple", "Tuple", "NamedUniTuple", "NamedTuple", "named_tuple",
           "Signature", "boolean", "bool_", "int8",
           "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float16",
           "float32", "float64", "complex64", "complex128", "intp", "uintp", "void",
           "none", "typeof", "from_dtype", "as_dtype_type", "parse_signature",
           "integer_domain", "real_domain", "complex_domain", "number_domain"]


class _Interned(type):
    """Metaclass: ``Cls(*args)`` returns the one instance for ``Cls._key_of(*args)``."""

    def __call__(cls, *args, **kwargs):
        key = (cls,) + cls._key_of(*args, **kwargs)
        inst = _CACHE.get(key)
        if inst is None:
            inst = super().__call__(*args, **kwargs)
            _CACHE[key] = inst
        return inst


_CACHE = {}


class Type(metaclass=_Interned):
    """Base of all cujit types.  Interned: equality is identity; ``str`` is Numba's spelling."""
    name = "?"

    @classmethod
    def _key_of(cls, *args, **kwargs):
        return args + tuple(sorted(kwargs.items()))

    def __repr__(self):
        return self.name

    __str__ = __repr__

    def __hash__(self):
        return id(self)

    def __eq__(self, other):
        return self is other

    def __reduce__(self):
        return (_rebuild, (type(self), self._ctor_args()))

    def _ctor_args(self):
        raise NotImplementedError

    def __call__(self, *args):
        if all(isinstance(a, Type) for a in args):
            return Signature(self, args)
        raise TypeError(f"{self} cannot be called with {args!r}: pass types to build a signature")

    def __getitem__(self, spec):
        """``T[:]``, ``T[:, ::1]`` …: an array type of this dtype (Numba's spelling)."""
        return _array_from_slices(self, spec)


def _rebuild(cls, args):
    return cls(*args)


class Scalar(Type):
    """A scalar type with a NumPy dtype (``.dtype``) and a size in bytes (``.bitwidth // 8``)."""

    def __init__(self, name, dtype):
        self.name = name
        self.dtype = np.dtype(dtype)
        self.bitwidth = self.dtype.itemsize * 8
        self._np_type = self.dtype.type

    def _ctor_args(self):
        return (self.name, self.dtype)

    def __call__(self, *args):
        """``T(value)`` casts like ``np.<dtype>(value)``; ``T(type, ...)`` builds a signature."""
        if len(args) == 1 and not isinstance(args[0], Type):
            v = args[0]
            if v.__class__ is int and self.dtype.kind in "iu":
                # wrap as the compiled cast does (int32(0xFFFFFFFF) == -1): NumPy 2 raises
                bits = self.bitwidth
                v %= 1 << bits
                if self.dtype.kind == "i" and v >> (bits - 1):
                    v -= 1 << bits
            return self._np_type(v)
        return Type.__call__(self, *args)


class Boolean(Scalar):
    """``boolean`` / ``bool_``: one byte, 0 or 1."""
    @classmethod
    def _key_of(cls, *args, **kwargs):
        return ()

    def __init__(self):
        super().__init__("bool", np.bool_)

    def _ctor_args(self):
        return ()


class Integer(Scalar):
    """``intN`` / ``uintN``; ``.signed`` (bool), ``.bitwidth`` (8, 16, 32, 64)."""
    @classmethod
    def _key_of(cls, bitwidth, signed=True):
        return (bitwidth, bool(signed))

    def __init__(self, bitwidth, signed=True):
        self.signed = bool(signed)
        super().__init__(("int" if signed else "uint") + str(bitwidth),
                         ("i" if signed else "u") + str(bitwidth // 8))

    def _ctor_args(self):
        return (self.bitwidth, self.signed)


class Float(Scalar):
    """``float16`` / ``float32`` / ``float64``."""
    @classmethod
    def _key_of(cls, bitwidth):
        return (bitwidth,)

    def __init__(self, bitwidth):
        super().__init__(f"float{bitwidth}", f"f{bitwidth // 8}")

    def _ctor_args(self):
        return (self.bitwidth,)


class Complex(Scalar):
    """``complex64`` (2 × float32) / ``complex128`` (2 × float64); ``.underlying_float``."""
    @classmethod
    def _key_of(cls, bitwidth):
        return (bitwidth,)

    def __init__(self, bitwidth):
        super().__init__(f"complex{bitwidth}", f"c{bitwidth // 8}")
        self.underlying_float = Float(bitwidth // 2)

    def _ctor_args(self):
        return (self.bitwidth,)


class NoneType(Type):
    """``void`` / ``none``: no value (a kernel's return type)."""
    @classmethod
    def _key_of(cls):
        return ()

    def __init__(self):
        self.name = "none"

    def _ctor_args(self):
        return ()


class Array(Type):
    """An array type: ``dtype`` (a scalar type or ``Record``), ``ndim`` (int ≥ 0) and
    ``layout`` ('C', 'F' or 'A').  Kernel ABI: data pointer, then ``shape[ndim]`` and
    ``strides[ndim]`` (int64, bytes)."""

    @classmethod
    def _key_of(cls, dtype, ndim, layout="A", readonly=False):
        dtype = as_dtype_type(dtype)
        if not isinstance(ndim, int) or isinstance(ndim, bool) or ndim < 0:
            raise ValueError(f"Array ndim must be an int >= 0, got {ndim!r}")
        if layout not in ("C", "F", "A"):
            raise ValueError(f"Array layout must be 'C', 'F' or 'A', got {layout!r}")
        if ndim <= 1 and layout == "F":
            layout = "C"    # a 1-d (or 0-d) contiguous array is both: Numba spells it C
        return (dtype, ndim, layout, bool(readonly))

    def __init__(self, dtype, ndim, layout="A", readonly=False):
        self.dtype, self.ndim, self.layout, self.readonly = Array._key_of(
            dtype, ndim, layout, readonly)
        ro = "readonly " if self.readonly else ""
        self.name = f"{ro}array({self.dtype}, {self.ndim}d, {self.layout})"

    def _ctor_args(self):
        return (self.dtype, self.ndim, self.layout, self.readonly)

    def copy(self, dtype=None, ndim=None, layout=None, readonly=None):
        """This type with some of dtype/ndim/layout/readonly replaced."""
        return Array(self.dtype if dtype is None else dtype,
                     self.ndim if ndim is None else ndim,
                     self.layout if layout is None else layout,
                     self.readonly if readonly is None else readonly)


class Record(Type):
    """A record (structured-dtype element).  ``.dtype`` (np.dtype), ``.fields``:
    ``{name: (type, offset_bytes)}``, ``.size`` (bytes), ``.alignment`` (bytes)."""

    @classmethod
    def _key_of(cls, dtype):
        dtype = np.dtype(dtype)
        if dtype.fields is None:
            raise TypeError(f"Record needs a structured dtype, got {dtype}")
        return (dtype,)

    def __init__(self, dtype):
        self.dtype = np.dtype(dtype)
        self.fields = {}
        for fname, info in self.dtype.fields.items():
            fdt, off = info[0], info[1]
            self.fields[fname] = (_field_type(fdt), off)
        self.size = self.dtype.itemsize
        self.alignment = max([_alignment_of(t) for t, _ in self.fields.values()] or [1])
        self.name = f"Record({self.dtype.descr!r}, {self.size} bytes)"

    def _ctor_args(self):
        return (self.dtype,)


class NestedArray(Type):
    """An array field inside a record (``('a', 'f4', (3,))``): C layout, fixed ``shape``."""

    @classmethod
    def _key_of(cls, dtype, shape):
        return (as_dtype_type(dtype), tuple(int(s) for s in shape))

    def __init__(self, dtype, shape):
        self.dtype, self.shape = NestedArray._key_of(dtype, shape)
        self.ndim = len(self.shape)
        self.name = f"nestedarray({self.dtype}, {self.shape})"

    def _ctor_args(self):
        return (self.dtype, self.shape)


def _field_type(fdt):
    if fdt.subdtype is not None:
        base, shape = fdt.subdtype
        return NestedArray(from_dtype(base), shape)
    return from_dtype(fdt)


def _alignment_of(t):
    if isinstance(t, Record):
        return t.alignment
    if isinstance(t, NestedArray):
        return _alignment_of(t.dtype)
    if isinstance(t, Complex):
        return t.bitwidth // 16
    return t.bitwidth // 8


class UniTuple(Type):
    """A tuple of ``count`` values of one type ``dtype``."""

    @classmethod
    def _key_of(cls, dtype, count):
        return (dtype, int(count))

    def __init__(self, dtype, count):
        self.dtype, self.count = dtype, int(count)
        self.types = (dtype,) * self.count
        self.name = f"UniTuple({dtype}, {self.count})"

    def _ctor_args(self):
        return (self.dtype, self.count)

    def __len__(self):
        return self.count


class Tuple(Type):
    """A heterogeneous tuple (``Tuple((int64, float32))``); all-equal members give UniTuple."""

    def __new__(cls, types):
        types = tuple(types)
        if types and all(t is types[0] for t in types):
            return UniTuple(types[0], len(types))
        return super().__new__(cls)

    @classmethod
    def _key_of(cls, types):
        return (tuple(types),)

    def __init__(self, types):
        self.types = tuple(types)
        self.count = len(self.types)
        self.name = f"Tuple({', '.join(map(str, self.types))})"

    def _ctor_args(self):
        return (self.types,)

    def __len__(self):
        return self.count


# namedtuple types live in types_tuples.py (this module's size); imported here once Tuple
# and UniTuple exist, so ``cujit.types.NamedTuple`` works
from .types_tuples import NamedTuple, NamedUniTuple, named_tuple  # noqa: E402


class Signature:
    """``return_type(arg types...)``: ``.return_type`` (a Type or None when not given),
    ``.args`` (tuple of Types)."""
    __slots__ = ("return_type", "args")

    def __init__(self, return_type, args):
        self.return_type = return_type
        self.args = tuple(args)

    def __eq__(self, other):
        return (isinstance(other, Signature) and other.return_type is self.return_type
                and other.args == self.args)

    def __hash__(self):
        return hash((self.return_type, self.args))

    def __repr__(self):
        ret = "" if self.return_type is None else str(self.return_type)
        return f"{ret}({', '.join(map(str, self.args))})"


boolean = bool_ = Boolean()
int8, int16, int32, int64 = (Integer(b) for b in (8, 16, 32, 64))
uint8, uint16, uint32, uint64 = (Integer(b, False) for b in (8, 16, 32, 64))
float16, float32, float64 = Float(16), Float(32), Float(64)
complex64, complex128 = Complex(64), Complex(128)
intp, uintp = int64, uint64
void = none = NoneType()
byte = uint8

integer_domain = frozenset([int8, int16, int32, int64, uint8, uint16, uint32, uint64])
real_domain = frozenset([float16, float32, float64])
complex_domain = frozenset([complex64, complex128])
number_domain = integer_domain | real_domain | complex_domain

_BY_DTYPE = {t.dtype: t for t in [boolean] + sorted(number_domain, key=str)}

# Names usable in signature strings and as dtype strings (Numba's, plus NumPy aliases).
_NAMES = {str(t): t for t in _BY_DTYPE.values()}
_NAMES.update(boolean=boolean, bool_=boolean, b1=boolean, intp=intp, uintp=uintp, void=void,
              none=void, byte=byte, f4=float32, f8=float64, f2=float16, i1=int8, i2=int16,
              i4=int32, i8=int64, u1=uint8, u2=uint16, u4=uint32, u8=uint64, c8=complex64,
              c16=complex128, half=float16, single=float32, double=float64)


def from_dtype(dtype):
    """The cujit type of a NumPy dtype (scalar or structured).

    Raises TypeError for dtypes kernels cannot use (objects, strings, datetimes).
    """
    dt = np.dtype(dtype)
    t = _BY_DTYPE.get(dt)
    if t is not None:
        return t
    if dt.fields is not None:
        return Record(dt)
    if dt.subdtype is not None:
        raise TypeError(f"dtype {dt} is a sub-array dtype; kernels take it only as a record field")
    if dt.byteorder not in ("=", "|") and dt.newbyteorder("=") in _BY_DTYPE:
        raise TypeError(f"dtype {dt} is not in native byte order; kernels need native order")
    raise TypeError(f"dtype {dt} is not supported in kernels (expected bool, int, uint, float, "
                    "complex or a structured dtype of those)")


def as_dtype_type(obj):
    """A scalar/record cujit type from what users pass as a dtype: a cujit type, a NumPy
    dtype or scalar type (``np.float32``), a Numba type (``numba.float32``, a Numba
    ``Record``), a Python type (``float``/``int``/``bool``/
    ``complex``) or a string (``'float32'``, ``'f4'``).

    Raises TypeError naming ``obj`` when it is none of these (e.g. ``'int33'``).
    """
    if isinstance(obj, (Scalar, Record)):
        return obj
    if isinstance(obj, str):
        t = _NAMES.get(obj)
        if t is not None and t is not void:
            return t
    if obj is float:
        return float64
    if obj is int:
        return int64
    if obj is bool:
        return boolean
    if obj is complex:
        return complex128
    if not isinstance(obj, Type):
        nt = _numba_types.from_numba_type(obj)
        if nt is not None:
            obj = nt
            if isinstance(obj, (Scalar, Record)):
                return obj
    if isinstance(obj, Type):
        raise TypeError(f"{obj} is not a scalar or record type, so it cannot be a dtype")
    try:
        dt = np.dtype(obj)
    except Exception:
        raise TypeError(f"dtype {obj!r} is not understood: expected a cujit/Numba type, a "
                        "NumPy dtype or type, or a dtype string such as 'float32'") from None
    return from_dtype(dt)


def _array_from_slices(dtype, spec):
    if not isinstance(dtype, (Scalar, Record)):
        raise TypeError(f"cannot make an array type of {dtype}")
    spec = spec if isinstance(spec, tuple) else (spec,)
    for s in spec:
        if not isinstance(s, slice) or s.start is not None or s.stop is not None \
                or s.step not in (None, 1):
            raise ValueError(f"array type spec must be ':' or '::1' per dimension, got {spec!r}")
    steps = [s.step for s in spec]
    ndim = len(spec)
    if ndim == 0 or steps.count(1) == 0:
        layout = "A"
    elif steps.count(1) > 1:
        raise ValueError(f"array type spec {spec!r}: only one dimension may be '::1'")
    elif steps[-1] == 1:
        layout = "C"
    elif steps[0] == 1:
        layout = "F"
    else:
        raise ValueError(f"array type spec {spec!r}: '::1' must be the first (F) or last (C) "
                         "dimension")
    return Array(dtype, ndim, layout)


def _layout_of(shape, strides, itemsize):
    """'C', 'F' or 'A' for an array's shape and byte strides (None strides = C)."""
    if strides is None:
        return "C"
    if _is_contig(shape, strides, itemsize, reversed_=False):
        return "C"
    if _is_contig(shape, strides, itemsize, reversed_=True):
        return "F"
    return "A"


def _is_contig(shape, strides, itemsize, reversed_):
    if any(s == 0 for s in shape):
        return True
    expect = itemsize
    dims = range(len(shape)) if reversed_ else range(len(shape) - 1, -1, -1)
    for i in dims:
        if shape[i] != 1 and strides[i] != expect:
            return False
        expect *= shape[i]
    return True


def _typeof_int(v):
    if -(1 << 63) <= v < (1 << 63):
        return int64
    if 0 <= v < (1 << 64):
        return uint64
    raise ValueError(f"int {v} does not fit in int64 or uint64, so a kernel cannot take it")


def typeof(value):
    """The cujit type of a kernel launch value (Numba's ``typeof`` rules).

    NumPy arrays (incl. ndarray subclasses such as MappedNDArray/ManagedNDArray, 0-d arrays)
    → ``Array``; cujit ``DeviceNDArray`` (``dtype``, ``ndim``, ``_layout``) → ``Array``;
    objects with ``__cuda_array_interface__`` → ``Array``; NumPy scalars → their type;
    ``int`` → int64 (uint64 above 2**63-1); ``float`` → float64; ``bool`` → boolean;
    ``complex`` → complex128; structured scalars and ``DeviceRecord`` → ``Record``;
    tuples → ``UniTuple``/``Tuple``; namedtuples → ``NamedUniTuple``/``NamedTuple``.

    Raises TypeError naming the value's type when it cannot be a kernel argument.
    """
    cls = type(value)
    t = _FAST.get(cls)
    if t is not None:
        return t
    if cls is int:
        return _typeof_int(value)
    if isinstance(value, np.ndarray):
        flags = value.flags
        # a read-only array types as readonly (as in Numba), so that writes to it are
        # TypingErrors instead of being dropped when the launch skips the copy back
        return Array(from_dtype(value.dtype), value.ndim,
                     "C" if flags.c_contiguous else "F" if flags.f_contiguous else "A",
                     not flags.writeable)
    if cls.__name__ == "DeviceRecord":     # cujit.arrays.DeviceRecord: a record, as in Numba
        return Record(value.dtype)
    layout = getattr(value, "_layout", None)
    if layout is not None and hasattr(value, "dtype") and hasattr(value, "ndim"):
        return Array(from_dtype(value.dtype), value.ndim, layout,
                     bool(getattr(value, "_readonly", False)))
    if isinstance(value, np.generic):
        return from_dtype(value.dtype)
    if hasattr(value, "__cuda_array_interface__"):
        cai = value.__cuda_array_interface__
        shape = tuple(cai["shape"])
        dt = np.dtype(cai.get("descr") if cai.get("descr") and len(cai["descr"]) > 1
                      else cai["typestr"])
        data = cai.get("data")
        readonly = bool(data[1]) if isinstance(data, tuple) and len(data) == 2 else False
        return Array(from_dtype(dt), len(shape),
                     _layout_of(shape, cai.get("strides"), dt.itemsize), readonly)
    if isinstance(value, bool):
        return boolean
    if isinstance(value, int):
        return _typeof_int(int(value))
    if isinstance(value, float):
        return float64
    if isinstance(value, complex):
        return complex128
    if isinstance(value, tuple):
        if hasattr(cls, "_fields"):
            return named_tuple(tuple(typeof(v) for v in value), cls)
        return Tuple(tuple(typeof(v) for v in value))
    dt = getattr(value, "dtype", None)
    if isinstance(dt, np.dtype) and dt.fields is not None:
        return Record(dt)   # DeviceRecord
    raise TypeError(f"cannot pass a value of type {cls.__name__} ({value!r:.80}) to a kernel: "
                    "expected an array, a device array, a CUDA-array-interface object, a "
                    "scalar, a record or a tuple of these")


_FAST = {float: float64, bool: boolean, complex: complex128}
_FAST.update({t.dtype.type: t for t in _BY_DTYPE.values()})


def parse_signature(sig):
    """A ``Signature`` from ``"void(float32[:], int32)"``, ``void(float32[:], int32)``, a
    tuple/list of types (no return type), or a string ``"(float32[:], int32)"``; Numba's
    types and ``Signature`` objects are accepted too (``cujit.numba_types``).

    Raises TypeError (not a signature) or ValueError (a string that does not parse, naming it).
    """
    if isinstance(sig, Signature):
        return sig
    nsig = _numba_types.from_numba_signature(sig)
    if nsig is not None:
        return nsig
    if not isinstance(sig, (Type, str, tuple, list)):
        nt = _numba_types.from_numba_type(sig)
        if nt is not None:
            sig = nt
    if isinstance(sig, (tuple, list)):
        args = tuple(a if isinstance(a, Type) else (_numba_types.from_numba_type(a) or a)
                     for a in sig)
        for a in args:
            if not isinstance(a, Type):
                raise TypeError(f"signature {sig!r}: {a!r} is not a cujit type")
        return Signature(None, args)
    if isinstance(sig, str):
        try:
            res = eval(sig, {"__builtins__": {}}, dict(_NAMES, Array=Array, Record=Record,
                                                        UniTuple=UniTuple, Tuple=Tuple))
        except Exception as e:
            raise ValueError(f"cannot parse signature {sig!r}: {e}") from None
        if isinstance(res, Type) and not isinstance(res, NoneType):
            res = (res,)
        if isinstance(res, tuple) and not isinstance(res, Signature):
            return parse_signature(res)
        if isinstance(res, Signature):
            return res
        raise ValueError(f"signature {sig!r} does not give a signature (got {res!r})")
    if isinstance(sig, Type):
        return Signature(None, (sig,))
    raise TypeError(f"a signature must be a string, a Signature or a tuple of types, "
                    f"got {type(sig).__name__}")
