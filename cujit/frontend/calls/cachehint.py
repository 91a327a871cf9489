"""Typing of the cache-hinted loads and stores (``cuda.ldcg(arr, i)``, ``cuda.stcg(arr, i,
v)``), with numba-cuda's rules (``numba.cuda.cache_hints``): the array's elements are
integers or floats of 8, 16, 32 or 64 bits; the index is an integer for a 1-D array or a
C pointer (``CPointer``), or a tuple of one integer per dimension.  Records a :class:`~.callkinds.CacheHint`.
"""
from ... import types as T
from .. import rules
from ..callkinds import CacheHint, Call, CallKind

__all__ = ["type_cache_hint"]

_WIDTHS = (8, 16, 32, 64)


def type_cache_hint(typer, node, kind, hint, args, kws):
    """Result type of cache-hint call ``node``: the element type for a load
    (``kind`` CACHE_LOAD), void for a store; ``hint`` is ``(operator, name)``.  TypingError
    (numba's messages) for keywords, a wrong argument count, a non-array, an element type
    that is not an integer or float of 8 to 64 bits, an index that is not an integer or
    tuple of integers, or an index count other than the array's dimensions, and for a
    stored value that is not a number."""
    operator, name = hint
    store = kind is CallKind.CACHE_STORE
    want = 3 if store else 2
    if kws:
        raise typer.error(f"{name}() takes no keyword arguments", node)
    if len(args) != want:
        raise typer.error(f"{name}() takes {want} arguments "
                          f"({'array, index, value' if store else 'array, index'}), "
                          f"got {len(args)}", node)
    arr, index = args[0], args[1]
    if not isinstance(arr, (T.Array, T.CPointer)):
        raise typer.error(f"{name} operates on arrays or pointers. Got type {arr}",
                          node.args[0])
    dt = arr.dtype
    if not isinstance(dt, (T.Integer, T.Float)) or dt.bitwidth not in _WIDTHS:
        raise typer.error(f"{name} requires array of integer or float type, got {dt}",
                          node.args[0])
    if isinstance(arr, T.CPointer):
        if isinstance(index, (T.UniTuple, T.Tuple)):
            raise typer.error(f"Pointers only support scalar indexing, got tuple of "
                              f"{len(index.types)}", node.args[1])
        if not rules.is_int(index):
            raise typer.error(f"{index} is not a valid index", node.args[1])
    elif rules.is_int(index):
        if arr.ndim != 1:
            raise typer.error(f"Expected {arr.ndim} indices, got a scalar", node.args[1])
    elif isinstance(index, (T.UniTuple, T.Tuple)) and all(rules.is_int(t) for t in index.types):
        if len(index.types) != arr.ndim:
            raise typer.error(f"Expected {arr.ndim} indices, got {len(index.types)}",
                              node.args[1])
    else:
        raise typer.error(f"{index} is not a valid index", node.args[1])
    if store:
        if not rules.is_number(args[2]) or isinstance(args[2], T.Complex):
            raise typer.error(f"{name}() stores integers and floats into {arr}, got a value "
                              f"of type {args[2]}", node.args[2])
        if isinstance(arr, T.Array) and arr.readonly:
            raise typer.error(f"{name}() cannot store into a read-only array ({arr})",
                              node.args[0])
    typer.tf.info[node] = Call(kind, CacheHint(operator, name))
    return T.void if store else dt
