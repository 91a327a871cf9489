"""Numba-like types for kernel signatures and typing (``cujit.float32``, ``float32[:, ::1]``, ...).

Every type is *interned*: building the same type twice returns the same object, so the launch
hot path compares types by identity and they hash cheaply.  Names, spelling and the rules of
``typeof`` follow Numba's ``numba.core.types`` / ``numba.typeof`` (Numba docs, "Types and
signatures").

- Scalars: ``boolean``/``bool_``, ``int8..int64``, ``uint8..uint64``, ``float16/32/64``,
  ``complex64/128``, ``intp``/``uintp``, ``void``; ``bfloat16`` (``BFloat16``: its values
  are ``bf16_scalar.BF16``, its dtype ``ml_dtypes.bfloat16`` or the uint16 bits);
  ``fp8_e4m3`` / ``fp8_e5m2`` / ``fp8_e8m0`` (``FP8``: values ``fp8_scalar.FP8``, kernel
  scalars only).  Calling one with a value casts it
  (``float32(1.5)`` → ``np.float32(1.5)``); calling one with types builds a signature
  (``void(float32[:], int32)``).  ``.dtype`` is the NumPy dtype, so ``np.dtype(float32)`` works.
- Arrays: ``float32[:]`` (any layout, 'A'), ``float32[::1]`` / ``float32[:, ::1]`` (C),
  ``float32[::1, :]`` (F), or ``Array(dtype, ndim, layout)``.
- ``Record`` (structured dtypes), ``UniTuple`` / ``Tuple``, ``Signature``.
- C pointers: ``CPointer(float32)`` (``float32*``) and ``voidptr`` (``void*``, a
  ``RawPointer``), numba's names; usable in signature strings
  (``"float32(CPointer(float32), int32)"``).
- ``VectorType``: CUDA vector types (``cujit.float32x4.vector_type``; the value classes are
  in :mod:`cujit.vector_types`).
"""
import numpy as np

from .. import bf16_scalar
from ..memory.protocol import cuda_core_kind, cuda_core_parts
from .core import (  # noqa: F401 - the public module re-exports the core
    Array, BFloat16, Boolean, CPointer, Complex, FP8, Float, Integer, IntegerLiteral,
                   NestedArray, CharSeq, NoneType, NPDatetime, NPTimedelta, RawPointer, Record, Scalar, Signature, Tuple, Type, UniTuple, _BY_DTYPE, _CACHE,
                   _Interned, _NAMES, _alignment_of, _array_from_slices, _field_type, _rebuild,
                   as_dtype_type, bool_, boolean, byte, complex128, bfloat16, complex64,
                   complex_domain, fp8_e4m3, fp8_e5m2, fp8_e8m0, float16, float32, float64, from_dtype, int16, int32, int64,
                   int8, integer_domain, intp, none, number_domain, real_domain, signed_domain,
                   uint16, uint32, uint64, unsigned_domain, uint8, uintp, void, voidptr, from_numba_type,
                   from_numba_signature)
from .enums import (EnumMember, IntEnumMember, enum_member_type, is_int_enum_member,
                    is_plain_enum_member)
from .tuples import NamedTuple, NamedUniTuple, named_tuple
from .vector import VectorType, VectorValue
from .fragment import Fragment, WarpgroupAccumulator, WgmmaDescriptor, wgmma_descriptor
from .names import C_NAMES
from .names import (  # noqa: F401 - numba.types has the short and C names too
    b1, i1, i2, i4, i8, u1, u2, u4, u8, f2, f4, f8, c8, c16, double, char, uchar,
                    short, ushort, int_, uint, intc, uintc, long_, ulong, longlong, ulonglong,
                    ssize_t, size_t)

__all__ = ["Type", "Boolean", "Integer", "IntegerLiteral", "Float", "BFloat16", "FP8", "Complex", "NoneType", "Array", "Record",
           "NestedArray", "CharSeq", "NPDatetime", "NPTimedelta", "CPointer", "RawPointer", "voidptr", "UniTuple", "Tuple", "NamedUniTuple", "NamedTuple", "named_tuple",
           "VectorType",
           "EnumMember", "IntEnumMember", "Fragment", "WarpgroupAccumulator",
           "WgmmaDescriptor", "wgmma_descriptor",
           "Signature", "boolean", "bool_", "int8",
           "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float16",
           "float32", "float64", "bfloat16", "fp8_e4m3", "fp8_e5m2", "fp8_e8m0", "complex64", "complex128", "intp", "uintp", "void",
           "none", "typeof", "from_dtype", "as_dtype_type", "parse_signature",
           "integer_domain", "signed_domain", "unsigned_domain", "real_domain",
           "complex_domain", "number_domain",
           "b1", "i1", "i2", "i4", "i8", "u1", "u2", "u4", "u8", "f2", "f4", "f8", "c8",
           "c16", "double", "char", "uchar", "short", "ushort", "int_", "uint", "intc",
           "uintc", "long_", "ulong", "longlong", "ulonglong", "ssize_t", "size_t"]


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


def _exporter_dtype(dt, value):
    """``value.dtype`` when the interface's dtype ``dt`` is an opaque void (``<V2``: NumPy
    extension dtypes such as ``ml_dtypes.bfloat16`` have no typestr, so CuPy exports its
    bfloat16 arrays so) and the exporter's own dtype is another of that size; else ``dt``.
    numba-cuda reads the dtype through DLPack; arrays.interop.owner_dtype is the same rule
    for the array view a launch makes."""
    own = getattr(value, "dtype", None)
    if dt.kind != "V" or dt.names is not None or own is None:
        return dt
    try:
        own = np.dtype(own)
    except TypeError:
        return dt
    ok = own.itemsize == dt.itemsize and own.names is None and not own.hasobject
    return own if ok and own != dt else dt


def typeof(value):
    """The cujit type of a kernel launch value (Numba's ``typeof`` rules).

    NumPy arrays (incl. ndarray subclasses such as MappedNDArray/ManagedNDArray, 0-d arrays)
    → ``Array``; cujit ``DeviceNDArray`` (``dtype``, ``ndim``, ``_layout``) → ``Array``;
    objects with ``__cuda_array_interface__`` → ``Array``; a cuda.core ``Buffer`` →
    ``uint8[::1]`` and a ``StridedMemoryView`` → an ``Array`` of its dtype, ndim, layout and
    read-only flag (numba-cuda's ``typeof`` of both); NumPy scalars → their type;
    ``int`` → int64 (uint64 above 2**63-1); ``float`` → float64; ``bool`` → boolean;
    ``complex`` → complex128; structured scalars and ``DeviceRecord`` → ``Record``;
    tuples → ``UniTuple``/``Tuple``; namedtuples → ``NamedUniTuple``/``NamedTuple``;
    the simulator's pointer values → their ``CPointer``;
    ``None`` → ``none`` (numba's ``typeof(None)``: a kernel parameter given None has no
    run-time value, and ``is None`` tests of it are decided when the kernel is compiled).

    Raises TypeError naming the value's type when it cannot be a kernel argument (a tuple
    holding None included: only a parameter itself can be None).
    """
    if value is None:
        return none
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
        dt = _exporter_dtype(dt, value)
        data = cai.get("data")
        readonly = bool(data[1]) if isinstance(data, tuple) and len(data) == 2 else False
        return Array(from_dtype(dt), len(shape),
                     _layout_of(shape, cai.get("strides"), dt.itemsize), readonly)
    if isinstance(value, bool):
        return boolean
    if isinstance(value, int):
        if is_int_enum_member(value):
            return enum_member_type(value, typeof)
        return _typeof_int(int(value))
    if isinstance(value, float):
        return float64
    if isinstance(value, complex):
        return complex128
    if is_plain_enum_member(value):
        return enum_member_type(value, typeof)
    if isinstance(value, VectorValue):
        return cls.vector_type
    if isinstance(value, tuple):
        if any(v is None for v in value):
            raise TypeError(f"cannot pass a tuple holding None ({value!r:.80}) to a kernel: "
                            "None can be the value of a parameter, not of a tuple member")
        if hasattr(cls, "_fields"):
            return named_tuple(tuple(typeof(v) for v in value), cls)
        return Tuple(tuple(typeof(v) for v in value))
    if cuda_core_kind(value) is not None:
        _, shape, strides, dt, readonly = cuda_core_parts(value)
        return Array(from_dtype(dt), len(shape), _layout_of(shape, strides, dt.itemsize),
                     readonly)
    dt = getattr(value, "dtype", None)
    if isinstance(dt, np.dtype) and dt.fields is not None:
        return Record(dt)   # DeviceRecord
    pt = getattr(value, "pointer_type", None)
    if isinstance(pt, (CPointer, RawPointer)):
        return pt           # the simulator's pointer values (cujit.simulator.pointers)
    raise TypeError(f"cannot pass a value of type {cls.__name__} ({value!r:.80}) to a kernel: "
                    "expected an array, a device array, a CUDA-array-interface object, a "
                    "scalar, a record or a tuple of these")


_FAST = {float: float64, bool: boolean, complex: complex128}
_FAST.update({t.dtype.type: t for t in _BY_DTYPE.values()})
_FAST[bf16_scalar.BF16] = bfloat16


def parse_signature(sig):
    """A ``Signature`` from ``"void(float32[:], int32)"``, ``void(float32[:], int32)``, a
    tuple/list of types (no return type), or a string ``"(float32[:], int32)"``; Numba's
    types and ``Signature`` objects are accepted too (``cujit.numba_types``).

    Raises TypeError (not a signature) or ValueError (a string that does not parse, naming it).
    """
    if isinstance(sig, Signature):
        return sig
    nsig = from_numba_signature(sig)
    if nsig is not None:
        return nsig
    if not isinstance(sig, (Type, str, tuple, list)):
        nt = from_numba_type(sig)
        if nt is not None:
            sig = nt
    if isinstance(sig, (tuple, list)):
        args = tuple(a if isinstance(a, Type) else (from_numba_type(a) or a)
                     for a in sig)
        for a in args:
            if not isinstance(a, Type):
                raise TypeError(f"signature {sig!r}: {a!r} is not a cujit type")
        return Signature(None, args)
    if isinstance(sig, str):
        try:
            res = eval(sig, {"__builtins__": {}}, dict(_NAMES, **C_NAMES, Array=Array,
                                                        Record=Record, UniTuple=UniTuple,
                                                        Tuple=Tuple, CPointer=CPointer,
                                                        voidptr=voidptr))
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
