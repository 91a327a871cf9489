"""The type classes of cujit's kernels (interned ``Type`` objects), the scalar instances,
dtype conversion, and the conversion of Numba's own type objects, without importing numba.

:mod:`cujit.types` is the public module: it re-exports all of this with the namedtuple types
(:mod:`cujit.types.tuples`) and adds ``typeof`` and ``parse_signature``.  Numba's types are
converted here, not in a module of their own, because the conversion and ``as_dtype_type``
call each other (a Numba ``Array``'s dtype may be any dtype spelling; ``Array(numba.float32,
1)`` takes a Numba dtype); :mod:`cujit.numba_types` names the conversion's public functions.

Numba's type objects: users porting numba.cuda code write ``from numba import float32, void``
and pass those objects to ``cuda.jit`` signatures, ``shared.array`` / ``local.array`` dtypes
and casts.  They are duck-typed on what Numba's classes expose (``numba.core.types``: every
type has ``.name``; ``Array`` has ``dtype``/``ndim``/``layout``/``mutable``; ``Record`` has
``dtype``; ``UniTuple`` ``dtype``/``count``; ``Tuple`` ``types``;
``numba.core.typing.templates.Signature`` has ``return_type``/``args``).  Behaviour
reference: Numba's "Types and signatures" documentation.
"""
import numpy as np

from .. import bf16_scalar, fp8_scalar


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

    def __init__(self, name=None):
        """``name``: the type's spelling.  User code subclasses ``types.Type`` as it does
        numba's (``super().__init__(name="MyType")``, numba.core.types.abstract.Type); the
        cujit types set ``name`` in their own ``__init__``."""
        if name is not None:
            self.name = name

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
            if isinstance(v, fp8_scalar.FP8):
                return self._of_fp8(v)
            if v.__class__ is int and self.dtype.kind in "iu":
                # wrap as the compiled cast does (int32(0xFFFFFFFF) == -1): NumPy 2 raises
                bits = self.bitwidth
                v %= 1 << bits
                if self.dtype.kind == "i" and v >> (bits - 1):
                    v -= 1 << bits
            return self._np_type(v)
        return Type.__call__(self, *args)

    def _of_fp8(self, v):
        """``T(v)`` of an FP8 value as the kernel's cast: integers truncated and clamped,
        floats exact (``fp8_scalar``)."""
        kind = self.dtype.kind
        if kind in "iu":
            return self._np_type(v.to_int(kind == "i", self.bitwidth))
        if kind == "b":
            return np.bool_(bool(v))
        if kind == "f":
            return {2: v.to_float16, 4: v.to_float32, 8: v.to_float64}[self.dtype.itemsize]()
        raise TypeError(f"cannot convert {v!r} to {self}")


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


class IntegerLiteral(Type):
    """An integer kernel argument whose *value* a specialisation is compiled for (a cujit
    extension: it sizes a ``local.array``/``shared.array``, see
    :meth:`cujit.frontend.source.FunctionSource.sizing_params`).  ``base``: the Integer
    type the value is passed as (the kernel ABI is ``base``'s); ``value``: the Python int.
    Spelt as Numba spells its literals: ``Literal[int](16)``."""

    @classmethod
    def _key_of(cls, base, value):
        return (base, int(value))

    def __init__(self, base, value):
        # a device-function parameter tested by an ``if`` is specialised on a bool the same
        # way (base ``boolean``; numba's Literal[bool])
        self.base, self.value = base, int(value)
        self.name = (f"Literal[bool]({bool(self.value)})" if isinstance(base, Boolean)
                     else f"Literal[int]({self.value})")

    @property
    def dtype(self):
        return self.base.dtype

    @property
    def literal_value(self):
        """The value (numba's name for it, read by overload typing functions)."""
        return self.value


class Float(Scalar):
    """``float16`` / ``float32`` / ``float64``."""
    @classmethod
    def _key_of(cls, bitwidth):
        return (bitwidth,)

    def __init__(self, bitwidth):
        super().__init__(f"float{bitwidth}", f"f{bitwidth // 8}")

    def _ctor_args(self):
        return (self.bitwidth,)


class BFloat16(Scalar):
    """``bfloat16``: 1 sign, 8 exponent and 7 mantissa bits (float32's range, 8 bits of
    precision).  Its values are :class:`cujit.bf16_scalar.BF16` on the host and in the
    simulator and 16-bit registers on the GPU; ``bfloat16(x)`` rounds ``x`` to nearest even
    (``cvt.rn.bf16.*``).  ``.dtype`` is the storage dtype of bfloat16 arrays
    (``ml_dtypes.bfloat16`` when that package is installed, else ``uint16``; see
    ``bf16_scalar``).  Not a :class:`Float`: it mixes with no other number type (numba-cuda's
    ``numba.cuda.types.bfloat16``)."""
    @classmethod
    def _key_of(cls):
        return ()

    def __init__(self):
        super().__init__("bfloat16", bf16_scalar.STORAGE_DTYPE)

    def _ctor_args(self):
        return ()

    def __call__(self, *args):
        """``bfloat16(x)``: the :class:`~cujit.bf16_scalar.BF16` of ``x`` (TypeError for a
        value that is not a number); ``bfloat16(type, ...)`` builds a signature."""
        if len(args) == 1 and not isinstance(args[0], Type):
            return bf16_scalar.BF16(args[0])
        return Type.__call__(self, *args)


class FP8(Scalar):
    """``fp8_e4m3`` / ``fp8_e5m2`` / ``fp8_e8m0``: numba-cuda's FP8 storage types
    (``cuda_fp8.hpp``'s ``__nv_fp8_e4m3`` ...), by ``.fmt`` (``'e4m3'``, ``'e5m2'``,
    ``'e8m0'``).  Its values are :class:`cujit.fp8_scalar.FP8` on the host and in the
    simulator and 8-bit registers on the GPU; ``fp8_e4m3(x)`` converts a float, bfloat16 or
    integer as the CUDA constructor, ``float32(v)``, ``int32(v)``, ``bfloat16(v)`` ... convert
    back (rules in ``fp8_scalar``).  No arithmetic, no comparisons, no arrays (numba-cuda
    defines none); ``.dtype`` is ``uint8``, the bits of one value."""
    @classmethod
    def _key_of(cls, fmt):
        return (fmt,)

    def __init__(self, fmt):
        if fmt not in fp8_scalar.FORMATS:
            raise ValueError(f"FP8 format must be one of {fp8_scalar.FORMATS}, got {fmt!r}")
        super().__init__(f"fp8_{fmt}", np.uint8)
        self.fmt = fmt
        self.__name__ = self.name       # numba-cuda's tests name the class in subTest()

    def _ctor_args(self):
        return (self.fmt,)

    def __call__(self, *args):
        """``fp8_e4m3(x)``: the :class:`~cujit.fp8_scalar.FP8` of ``x`` (TypeError for a
        value that is not a number); ``fp8_e4m3(type, ...)`` builds a signature."""
        if len(args) == 1 and not isinstance(args[0], Type):
            return fp8_scalar.FP8(self.fmt, args[0])
        return Type.__call__(self, *args)


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


class NPDatetime(Scalar):
    """``datetime64[unit]`` (numba's ``NPDatetime``): a NumPy datetime of ``unit`` (``'D'``,
    ``'s'``, ``'ms'`` ...; ``''`` for NumPy's generic unit), stored as an int64 count of units
    since 1970-01-01, NaT being the smallest int64.  ``datetime64[D](x)`` is
    ``np.datetime64(x, 'D')``."""
    @classmethod
    def _key_of(cls, unit):
        return (str(unit),)

    def __init__(self, unit):
        self.unit = str(unit)
        super().__init__(f"datetime64[{self.unit}]" if self.unit else "datetime64",
                         f"M8[{self.unit}]" if self.unit else "M8")

    def _ctor_args(self):
        return (self.unit,)

    def __call__(self, *args):
        if len(args) == 1 and not isinstance(args[0], Type):
            return np.datetime64(args[0], self.unit) if self.unit else np.datetime64(args[0])
        return Type.__call__(self, *args)


class NPTimedelta(Scalar):
    """``timedelta64[unit]`` (numba's ``NPTimedelta``): a NumPy time span of ``unit``,
    stored as an int64 count of units, NaT being the smallest int64.
    ``timedelta64[D](x)`` is ``np.timedelta64(x, 'D')``."""
    @classmethod
    def _key_of(cls, unit):
        return (str(unit),)

    def __init__(self, unit):
        self.unit = str(unit)
        super().__init__(f"timedelta64[{self.unit}]" if self.unit else "timedelta64",
                         f"m8[{self.unit}]" if self.unit else "m8")

    def _ctor_args(self):
        return (self.unit,)

    def __call__(self, *args):
        if len(args) == 1 and not isinstance(args[0], Type):
            return np.timedelta64(args[0], self.unit) if self.unit else np.timedelta64(args[0])
        return Type.__call__(self, *args)


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


class CPointer(Type):
    """A C pointer to ``dtype`` elements (numba's ``types.CPointer(dtype, addrspace=None)``):
    ``dtype`` a scalar type or a ``Record``, ``addrspace`` None (generic) or an NVVM address
    space number (1 global, 3 shared, 4 constant, 5 local).  Spelled as numba does,
    ``float32*``.  In kernels a pointer is indexed (``p[i]``, ``p[i] = v``, no bounds known on
    the GPU) and passed to declared C functions; as a kernel parameter it is a device address
    (an int).  TypeError for a dtype that is not a scalar or record type, ValueError for
    another address space."""

    @classmethod
    def _key_of(cls, dtype, addrspace=None):
        dtype = as_dtype_type(dtype)
        if addrspace is not None and (not isinstance(addrspace, int) or
                                      isinstance(addrspace, bool) or
                                      addrspace not in (0, 1, 3, 4, 5)):
            raise ValueError(f"CPointer address space must be None or one of 0, 1, 3, 4, 5 "
                             f"(generic, global, shared, constant, local), got {addrspace!r}")
        return (dtype, None if addrspace == 0 else addrspace)

    def __init__(self, dtype, addrspace=None):
        self.dtype, self.addrspace = CPointer._key_of(dtype, addrspace)
        space = "" if self.addrspace is None else f" addrspace({self.addrspace})"
        self.name = f"{self.dtype}{space}*"

    def _ctor_args(self):
        return (self.dtype, self.addrspace)


class RawPointer(Type):
    """An untyped C pointer, ``void*`` (numba's ``types.RawPointer``; ``voidptr`` is its one
    instance).  Kernels pass it on (to declared C functions, as a parameter); it cannot be
    indexed."""

    @classmethod
    def _key_of(cls, name="void*"):
        return (str(name),)

    def __init__(self, name="void*"):
        self.name = str(name)

    def _ctor_args(self):
        return (self.name,)


class Record(Type):
    """A record (structured-dtype element).  ``.dtype`` (np.dtype), ``.fields``:
    ``{name: (type, offset_bytes)}``, ``.size`` (bytes), ``.alignment`` (bytes),
    ``.aligned`` (the dtype was made with ``align=True``).  Dtypes NumPy calls equal but of
    which one is an aligned struct are two record types, as numba's (its ``aligned`` flag)."""

    @classmethod
    def _key_of(cls, dtype):
        dtype = np.dtype(dtype)
        if dtype.fields is None:
            raise TypeError(f"Record needs a structured dtype, got {dtype}")
        return (dtype, dtype.isalignedstruct)

    def __init__(self, dtype):
        self.dtype = np.dtype(dtype)
        self.fields = {}
        for fname, info in self.dtype.fields.items():
            fdt, off = info[0], info[1]
            self.fields[fname] = (_field_type(fdt), off)
        self.size = self.dtype.itemsize
        self.alignment = max([_alignment_of(t) for t, _ in self.fields.values()] or [1])
        self.aligned = self.dtype.isalignedstruct
        self.name = f"Record({self.dtype.descr!r}, {self.size} bytes" \
            f"{', aligned' if self.aligned else ''})"

    def _ctor_args(self):
        return (self.dtype,)

    def field_alignment(self, name):
        """The alignment (bytes, a power of two) field ``name`` has in every element of an
        array of these records that starts at an aligned address: the largest power of two
        dividing both its offset and the record's size (NumPy packs records: ``align=False``
        puts fields at any offset and elements at multiples of any itemsize).  KeyError for
        a name that is not a field."""
        off = self.fields[name][1]
        size = self.size
        return min(off & -off if off else 1 << 30, size & -size if size else 1 << 30)


class CharSeq(Type):
    """A fixed-length string element: NumPy's ``S<n>`` (``kind`` ``'S'``: ``count`` bytes)
    or ``U<n>`` (``kind`` ``'U'``: ``count`` UTF-32 code points, 4 bytes each), numba's
    ``CharSeq`` / ``UnicodeCharSeq``.  Kernels store string and bytes constants into such
    array elements and record fields (shorter ones padded with zeros, longer ones cut, as
    NumPy assigns them); ``.dtype``, ``.size`` (bytes)."""

    @classmethod
    def _key_of(cls, kind, count):
        if kind not in ("S", "U"):
            raise TypeError(f"CharSeq kind is 'S' or 'U', got {kind!r}")
        return (kind, int(count))

    def __init__(self, kind, count):
        self.kind, self.count = CharSeq._key_of(kind, count)
        self.dtype = np.dtype(f"{'S' if self.kind == 'S' else '<U'}{self.count}")
        self.size = self.dtype.itemsize
        self.name = (f"[char x {self.count}]" if self.kind == "S"
                     else f"[unichr x {self.count}]")

    def _ctor_args(self):
        return (self.kind, self.count)

    def encode(self, value):
        """The element's bytes for constant ``value`` (str or bytes) as NumPy stores it:
        padded with zeros or cut to the element's length.  TypeError for a str into an
        ``S`` element that is not ASCII, or bytes into a ``U`` element (NumPy's rules)."""
        return np.array(value, dtype=self.dtype).tobytes()


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
    if isinstance(t, CharSeq):
        return 1 if t.kind == "S" else 4
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

    def __iter__(self):
        return iter(self.types)

    def __getitem__(self, i):
        """The member type(s) at ``i`` (an int or a slice), as Numba's tuple types index;
        a tuple type has no array type, so ``T[::1]`` is not an array spelling here.
        Raises IndexError for an int past the end."""
        return self.types[i]


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

    def __iter__(self):
        return iter(self.types)

    def __getitem__(self, i):
        """The member type(s) at ``i`` (an int or a slice), as Numba's tuple types index.
        Raises IndexError for an int past the end."""
        return self.types[i]


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
bfloat16 = BFloat16()
fp8_e4m3, fp8_e5m2, fp8_e8m0 = FP8("e4m3"), FP8("e5m2"), FP8("e8m0")
intp, uintp = int64, uint64
void = none = NoneType()
voidptr = RawPointer()
byte = uint8

signed_domain = frozenset([int8, int16, int32, int64])
unsigned_domain = frozenset([uint8, uint16, uint32, uint64])
integer_domain = signed_domain | unsigned_domain
real_domain = frozenset([float16, float32, float64])
complex_domain = frozenset([complex64, complex128])
number_domain = integer_domain | real_domain | complex_domain

_BY_DTYPE = {t.dtype: t for t in [boolean] + sorted(number_domain, key=str)}

# Names usable in signature strings and as dtype strings (Numba's, plus NumPy aliases).
if bf16_scalar.HAVE_ML_DTYPES:    # with uint16 storage the dtype stays uint16's
    _BY_DTYPE[bfloat16.dtype] = bfloat16
_NAMES = {str(t): t for t in _BY_DTYPE.values()}
_NAMES["bfloat16"] = bfloat16
_NAMES.update(fp8_e4m3=fp8_e4m3, fp8_e5m2=fp8_e5m2, fp8_e8m0=fp8_e8m0)
_NAMES.update(boolean=boolean, bool_=boolean, b1=boolean, intp=intp, uintp=uintp, void=void,
              none=void, byte=byte, f4=float32, f8=float64, f2=float16, i1=int8, i2=int16,
              i4=int32, i8=int64, u1=uint8, u2=uint16, u4=uint32, u8=uint64, c8=complex64,
              c16=complex128, half=float16, single=float32, double=float64)


def from_dtype(dtype):
    """The cujit type of a NumPy dtype (scalar or structured).

    Raises TypeError for dtypes kernels cannot use (objects, strings, datetimes).
    """
    dt = np.dtype(dtype)
    if dt.metadata and bf16_scalar.is_storage_dtype(dt):
        return bfloat16             # uint16 bits marked as bfloat16 (no ml_dtypes)
    t = _BY_DTYPE.get(dt)
    if t is not None:
        return t
    if dt.fields is not None:
        return Record(dt)
    if dt.kind in "Mm" and dt.byteorder in ("=", "|", "<"):
        unit, count = np.datetime_data(dt)
        if count != 1:
            raise TypeError(f"dtype {dt} counts {count} units per step; kernels take "
                            "datetime64/timedelta64 of one unit per step (as numba)")
        unit = "" if unit == "generic" else unit
        return NPDatetime(unit) if dt.kind == "M" else NPTimedelta(unit)
    if dt.kind in "SU" and dt.itemsize and dt.byteorder in ("=", "|", "<"):
        return CharSeq(dt.kind, dt.itemsize if dt.kind == "S" else dt.itemsize // 4)
    if dt.subdtype is not None:
        raise TypeError(f"dtype {dt} is a sub-array dtype; kernels take it only as a record field")
    if dt.byteorder not in ("=", "|") and dt.newbyteorder("=") in _BY_DTYPE:
        raise TypeError(f"dtype {dt} is not in native byte order; kernels need native order")
    raise TypeError(f"dtype {dt} is not supported in kernels (expected bool, int, uint, float, "
                    "complex, datetime64, timedelta64 or a structured dtype of those)")


def as_dtype_type(obj):
    """A scalar/record cujit type from what users pass as a dtype: a cujit type, a NumPy
    dtype or scalar type (``np.float32``), a Numba type (``numba.float32``, a Numba
    ``Record``), a Python type (``float``/``int``/``bool``/
    ``complex``) or a string (``'float32'``, ``'f4'``).

    Raises TypeError naming ``obj`` when it is none of these (e.g. ``'int33'``).
    """
    if isinstance(obj, (Scalar, Record, CharSeq)):
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
        nt = from_numba_type(obj)
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
    if not isinstance(dtype, (Scalar, Record, CharSeq)):
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


# ---- Numba's type objects ----------------------------------------------------------------


def is_numba_object(obj):
    """True when ``obj`` is an instance of a class defined in a ``numba`` package."""
    mod = getattr(type(obj), "__module__", "") or ""
    return mod == "numba" or mod.startswith(("numba.", "numba_cuda."))


def from_numba_type(obj):
    """The cujit type for Numba type ``obj``, or None when ``obj`` is not a Numba type.

    Scalars map by name (``float32`` → ``cujit.float32``, ``none`` → ``void``); ``Array``
    keeps dtype, ndim, layout and read-only-ness; ``Record`` / ``NestedArray`` map through
    their NumPy dtype; ``UniTuple`` / ``Tuple`` map member by member.  Raises TypeError naming
    the Numba type when it is one that kernels cannot take (e.g. ``unicode_type``).
    """
    if not is_numba_object(obj):
        return None
    cls = type(obj).__name__
    name = getattr(obj, "name", None)
    if cls in ("Array", "ArrayCompatible") or (cls.endswith("Array") and hasattr(obj, "layout")
                                               and cls != "NestedArray"):
        dtype = _member(obj.dtype, obj)
        return Array(dtype, int(obj.ndim), obj.layout, not getattr(obj, "mutable", True))
    if cls == "Record":
        return Record(np.dtype(obj.dtype))
    if cls == "UniTuple":
        return UniTuple(_member(obj.dtype, obj), int(obj.count))
    if cls in ("Tuple", "BaseTuple"):
        return Tuple(tuple(_member(t, obj) for t in obj.types))
    if cls in ("NPDatetime", "NPTimedelta"):
        return (NPDatetime if cls == "NPDatetime" else NPTimedelta)(obj.unit)
    if cls == "CPointer":
        return CPointer(_member(obj.dtype, obj), getattr(obj, "addrspace", None))
    if cls == "RawPointer" or name == "void*":
        return voidptr
    if cls == "NoneType" or name in ("none", "void"):
        return void
    if isinstance(name, str) and name in _NAMES:
        return _NAMES[name]
    raise TypeError(f"Numba type {obj} ({cls}) has no cujit equivalent: kernels take Numba's "
                    "scalar, Array, Record and tuple types")


def _member(t, owner):
    if isinstance(t, Type):
        return t
    got = from_numba_type(t)
    if got is None:
        got = as_dtype_type(t)
    return got


def from_numba_signature(obj):
    """The cujit ``Signature`` for a Numba ``Signature`` (``void(float32[:], int32)`` built from
    Numba types), or None when ``obj`` is not one.  Raises TypeError for a member type that
    has no cujit equivalent."""
    if not is_numba_object(obj) or not (hasattr(obj, "args") and hasattr(obj, "return_type")):
        return None
    ret = obj.return_type
    ret = None if ret is None else _member(ret, obj)
    return Signature(ret, tuple(_member(a, obj) for a in obj.args))
