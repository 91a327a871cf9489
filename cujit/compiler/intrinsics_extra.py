"""Typing and lowering of the kernel-API functions added with issue 14 (numba.cuda's names):
``selp``, ``mulhi``, ``nanosleep``, ``match_any_sync``, ``match_all_sync``.

- ``selp(test, a, b)``: ``a`` and ``b`` of one type among float64, float32, (u)int16,
  (u)int32, (u)int64 (numba's rule: otherwise a TypingError); an LLVM ``select``.
- ``mulhi(a, b)``: integers; the common type is 64-bit if either operand is, signed if
  either is; libdevice ``__nv_(u)mulhi`` / ``__nv_(u)mul64hi``.
- ``nanosleep(ns)``: an integer, converted to uint32; PTX ``nanosleep.u32`` (sm_70+).
- ``match_any_sync(mask, value)`` → uint32; ``match_all_sync(mask, value)`` →
  ``(uint32, bool)``; value (u)int32, (u)int64, float32, float64 (floats compared bitwise),
  ``llvm.nvvm.match.{any,all}.sync.i32/i64`` (sm_70+).

The simulator's versions are in :mod:`cujit.kernelapi_extra`.
"""
from llvmlite import ir

from .. import types as T
from . import rules
from .ltypes import I1, I32, cast, ltype

__all__ = ["KEYS", "type_intrinsic", "LOWERERS"]

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
        typer.tf.info[node] = (key, rt)
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
    typer.tf.info[node] = (key, vt)
    return T.uint32 if key == "match_any_sync" else T.Tuple((T.uint32, T.boolean))


def _args(lw, node):
    return [lw.expr(a) for a in node.args], [lw.ty(a) for a in node.args]


def _selp(lw, node, data):
    (c, a, b), (ct, at, bt) = _args(lw, node)
    from .ltypes import truth
    return lw.b.select(truth(lw.b, c, ct), a, b)


def _mulhi(lw, node, rt):
    from .lower_ops import libdevice
    (a, b), (at, bt) = _args(lw, node)
    a, b = cast(lw.b, a, at, rt), cast(lw.b, b, bt, rt)
    name = ("__nv_" + ("" if rt.signed else "u") + ("mul64hi" if rt.bitwidth == 64
                                                      else "mulhi"))
    lt = ltype(rt)
    return lw.b.call(libdevice(lw, name, [lt, lt], lt), [a, b])


def _nanosleep(lw, node, data):
    (ns,), (t,) = _args(lw, node)
    v = cast(lw.b, ns, t, T.uint32)
    asm = ir.InlineAsm(ir.FunctionType(ir.VoidType(), [I32]), "nanosleep.u32 $0;", "r",
                       side_effect=True)
    lw.b.call(asm, [v])


def _match(lw, node, vt):
    key = lw.tf.info[node][0]
    b = lw.b
    (m, v), (mt, _vt) = _args(lw, node)
    mask = cast(b, m, mt, T.uint32)
    v = cast(b, v, _vt, vt)
    w = vt.bitwidth
    it = ir.IntType(w)
    if rules.is_float(vt):
        v = b.bitcast(v, it)
    if key == "match_any_sync":
        fn = lw.m.declare(f"llvm.nvvm.match.any.sync.i{w}", ir.FunctionType(I32, [I32, it]))
        return b.call(fn, [mask, v])
    fn = lw.m.declare(f"llvm.nvvm.match.all.sync.i{w}p",
                      ir.FunctionType(ir.LiteralStructType([I32, I1]), [I32, it]))
    r = b.call(fn, [mask, v])
    out = ir.Constant(ltype(T.Tuple((T.uint32, T.boolean))), ir.Undefined)
    out = b.insert_value(out, b.extract_value(r, 0), 0)
    return b.insert_value(out, b.extract_value(r, 1), 1)


LOWERERS = {"selp": _selp, "mulhi": _mulhi, "nanosleep": _nanosleep,
            "match_any_sync": _match, "match_all_sync": _match}
