"""Recognise Numba's type objects where cujit takes a type, without importing numba.

Users porting numba.cuda code write ``from numba import float32, void`` and pass those objects
to ``cuda.jit`` signatures, ``shared.array`` / ``local.array`` dtypes and casts.  cujit
converts them to its own interned types here, duck-typed on what Numba's classes expose
(``numba.core.types``: every type has ``.name``; ``Array`` has ``dtype``/``ndim``/``layout``/
``mutable``; ``Record`` has ``dtype``; ``UniTuple`` ``dtype``/``count``; ``Tuple`` ``types``;
``numba.core.typing.templates.Signature`` has ``return_type``/``args``).  Behaviour reference:
Numba's "Types and signatures" documentation.
"""
import numpy as np

__all__ = ["is_numba_object", "from_numba_type", "from_numba_signature"]


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
    from . import types as T
    cls = type(obj).__name__
    name = getattr(obj, "name", None)
    if cls in ("Array", "ArrayCompatible") or (cls.endswith("Array") and hasattr(obj, "layout")
                                               and cls != "NestedArray"):
        dtype = _member(obj.dtype, obj)
        return T.Array(dtype, int(obj.ndim), obj.layout, not getattr(obj, "mutable", True))
    if cls == "Record":
        return T.Record(np.dtype(obj.dtype))
    if cls == "UniTuple":
        return T.UniTuple(_member(obj.dtype, obj), int(obj.count))
    if cls in ("Tuple", "BaseTuple"):
        return T.Tuple(tuple(_member(t, obj) for t in obj.types))
    if cls == "NoneType" or name in ("none", "void"):
        return T.void
    if isinstance(name, str) and name in T._NAMES:
        return T._NAMES[name]
    raise TypeError(f"Numba type {obj} ({cls}) has no cujit equivalent: kernels take Numba's "
                    "scalar, Array, Record and tuple types")


def _member(t, owner):
    from . import types as T
    if isinstance(t, T.Type):
        return t
    got = from_numba_type(t)
    if got is None:
        got = T.as_dtype_type(t)
    return got


def from_numba_signature(obj):
    """The cujit ``Signature`` for a Numba ``Signature`` (``void(float32[:], int32)`` built from
    Numba types), or None when ``obj`` is not one.  Raises TypeError for a member type that
    has no cujit equivalent."""
    if not is_numba_object(obj) or not (hasattr(obj, "args") and hasattr(obj, "return_type")):
        return None
    from . import types as T
    ret = obj.return_type
    ret = None if ret is None else _member(ret, obj)
    return T.Signature(ret, tuple(_member(a, obj) for a in obj.args))
