"""CUDA's vector types (numba.cuda's ``float32x4``, ``int2``, ``uchar4`` …): the value
classes kernels construct and the cujit types the compiler gives them.

Each of the 40 types ``<base>x<n>`` (``base`` one of ``int8 … int64``, ``uint8 … uint64``,
``float32``, ``float64``; ``n`` 1 to 4) is a class whose instances are immutable values of
``n`` members of ``base``, read as ``.x``, ``.y``, ``.z``, ``.w`` (read-only, as numba's).
Constructing one takes scalars and vectors of the same base whose members add up to ``n``:
``float32x4(1, 2, 3, 4)``, ``float32x4(float32x2(1, 2), 3, 4)``, ``float32x3(f1, f2)`` (numba
docs, "Vector Types"); scalars are converted to the base type (in kernels by the kernel's
cast; on the host see ``VectorValue``).  The C names are aliases of the same classes (``float4 is float32x4``, ``int2 is
int32x2``, ``long2`` is ``int64x2`` where NumPy's ``long`` is 64 bits), derived from NumPy's C
type sizes as numba-cuda derives them.

In a kernel a vector is a :class:`VectorType` (a namedtuple type of ``n`` members of
``base``), lowered as an ``[n x base]`` aggregate held in registers; on the host and in the
simulator it is an instance of its class, a tuple subclass, so both backends read the same
values.  Vector values may also be kernel and device-function arguments and results.
Reference: numba-cuda's ``numba.cuda.vector_types`` and ``stubs`` (the names, the
constructor overloads), CUDA C Programming Guide "Built-in Vector Types".
"""
import itertools

import numpy as np

from .types import core as T
from .types.vector import VectorType, VectorValue

__all__ = ["VectorType", "VectorValue", "vector_types", "VECTOR_TYPE_NAMES", "is_vector_class"]

_ATTRS = ("x", "y", "z", "w")
_BASES = ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
          "float32", "float64")
# numba-cuda's C names and the NumPy C types whose sizes choose their base types
_C_ALIASES = (("char", "int", np.byte), ("short", "int", np.short), ("int", "int", np.intc),
              ("long", "int", np.int_), ("longlong", "int", np.longlong),
              ("uchar", "uint", np.ubyte), ("ushort", "uint", np.ushort),
              ("uint", "uint", np.uintc), ("ulong", "uint", np.uint),
              ("ulonglong", "uint", np.ulonglong), ("float", "float", np.single),
              ("double", "float", np.double))


def _member(i):
    return property(lambda self: tuple.__getitem__(self, i),
                    doc=f"Member {i} ({_ATTRS[i]}), read-only.")


def _make(base_name, n):
    base = getattr(T, base_name)
    name = f"{base_name}x{n}"
    body = {"__slots__": (), "name": name, "base_type": base, "num_elements": n,
            "_fields": _ATTRS[:n], "aliases": [],
            "__doc__": f"CUDA vector type {name}: {n} {base_name} member(s) "
                       f"({', '.join('.' + a for a in _ATTRS[:n])}).  See "
                       f"cujit.vector_types."}
    body.update({a: _member(i) for i, a in enumerate(_ATTRS[:n])})
    cls = type(name, (VectorValue,), body)
    cls.__module__ = "cujit"
    cls.vector_type = VectorType(base, n, cls)
    # numba-cuda's test helpers read ``vty.user_facing_object`` of its vector-type table
    cls.user_facing_object = cls
    return cls


#: ``{name: class}`` of the 40 vector types by their numba names (``'float32x4'``).
vector_types = {f"{b}x{n}": _make(b, n) for b, n in itertools.product(_BASES, (1, 2, 3, 4))}


def _aliases():
    out = {}
    for alias, kind, ctype in _C_ALIASES:
        base = f"{kind}{np.dtype(ctype).itemsize * 8}"
        for n in (1, 2, 3, 4):
            cls = vector_types[f"{base}x{n}"]
            cls.aliases.append(f"{alias}{n}")
            out[f"{alias}{n}"] = cls
    return out


_ALIAS_TABLE = _aliases()
for _cls in vector_types.values():
    _cls.aliases = tuple(_cls.aliases)

#: Every public vector-type name (the 40 numba names, then the 48 C aliases).
VECTOR_TYPE_NAMES = tuple(vector_types) + tuple(_ALIAS_TABLE)


def is_vector_class(obj):
    """True when ``obj`` is one of the vector value classes (``cujit.float32x4``)."""
    return isinstance(obj, type) and issubclass(obj, VectorValue) and obj.base_type is not None


def __getattr__(name):
    try:
        return vector_types.get(name) or _ALIAS_TABLE[name]
    except KeyError:
        raise AttributeError(f"module 'cujit.vector_types' has no attribute {name!r}") from None
