"""Typing of the kernel-API functions added with issue 14 (numba.cuda's names): ``selp``,
``mulhi``, ``nanosleep``, ``match_any_sync``, ``match_all_sync``.  The rules are listed in
:mod:`.lower_intrinsics`, which lowers them; the simulator's versions are in
:mod:`cujit.kernelapi`.
"""
from .. import types as T
from . import rules
from .callkinds import Call, CallKind, ValueType

__all__ = ["KEYS", "type_intrinsic"]

KEYS = ("selp", "mulhi", "nanosleep", "match_any_sync", "match_all_sync")

_SELP_TYPES = (T.float64, T.float32, T.int16, T.uint16, T.int32, T.uint32, T.int64, T.uint64)
_MATCH_TYPES = (T.int32, T.uint32, T.int64, T.uint64, T.float32, T.float64)


def type_intrinsic(typer, node, key, args, kws, need):
    """Result type of call ``node`` of ``key`` with argument types ``args``."""
    if kws:
        raise typer.error(f"{key}() takes no keyword arguments", node)
    if key == "selp":
        need(3)
        a, b = args[1], args[2]
        if a is not b or a not in _SELP_TYPES:
            raise typer.error(f"selp() needs two values of the same type among "
                              f"{', '.join(map(str, _SELP_TYPES))}; got {a} and {b}", node)
        return a
    if key == "mulhi":
        need(2)
        for a, t in zip(node.args, args):
            if not rules.is_int(t) or isinstance(t, T.Boolean):
                raise typer.error(f"mulhi() takes integers, got {t}", a)
        w = 64 if max(t.bitwidth for t in args) > 32 else 32
        signed = any(t.signed for t in args)
        rt = T.from_dtype(f"{'i' if signed else 'u'}{w // 8}")
        typer.tf.info[node] = Call(CallKind.MULHI, ValueType(rt))
        return rt
    if key == "nanosleep":
        need(1)
        if not rules.is_int(args[0]):
            raise typer.error(f"nanosleep() takes an integer number of nanoseconds, got "
                              f"{args[0]}", node.args[0])
        return T.void
    need(2)
    if not rules.is_int(args[0]):
        raise typer.error(f"{key}() mask must be an integer, got {args[0]}", node.args[0])
    vt = args[1]
    if vt not in _MATCH_TYPES:
        raise typer.error(f"{key}() supports {', '.join(map(str, _MATCH_TYPES))} values, "
                          f"got {vt}", node.args[1])
    typer.tf.info[node] = Call(CallKind(key), ValueType(vt))
    return T.uint32 if key == "match_any_sync" else T.Tuple((T.uint32, T.boolean))
