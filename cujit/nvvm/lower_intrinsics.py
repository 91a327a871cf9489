"""Lowering of the kernel-API functions added with issue 14 (numba.cuda's names):
``selp``, ``mulhi``, ``nanosleep``, ``match_any_sync``, ``match_all_sync``.

- ``selp(test, a, b)``: ``a`` and ``b`` of one type among float64, float32, (u)int16,
  (u)int32, (u)int64 (numba's rule: otherwise a TypingError); an LLVM ``select``.
- ``mulhi(a, b)``: integers; the common type is 64-bit if either operand is, signed if
  either is; libdevice ``__nv_(u)mulhi`` / ``__nv_(u)mul64hi``.
- ``nanosleep(ns)``: an integer, converted to uint32; PTX ``nanosleep.u32`` (sm_70+).
- ``match_any_sync(mask, value)`` → uint32; ``match_all_sync(mask, value)`` →
  ``(uint32, bool)``; value (u)int32, (u)int64, float32, float64 (floats compared bitwise),
  ``llvm.nvvm.match.{any,all}.sync.i32/i64`` (sm_70+).

Typing is in :mod:`.intrinsics_types`; the simulator's versions are in
:mod:`cujit.kernelapi`.
"""
from llvmlite import ir

from .. import types as T
from ..frontend import rules
from ..frontend.callkinds import CallKind
from .lower_ops import libdevice
from .ltypes import I1, I32, cast, ltype, truth

__all__ = ["lower_selp", "lower_mulhi", "lower_nanosleep", "lower_match"]


def _args(lw, node):
    return [lw.expr(a) for a in node.args], [lw.ty(a) for a in node.args]


def lower_selp(lw, node, call):
    (c, a, b), (ct, at, bt) = _args(lw, node)
    return lw.b.select(truth(lw.b, c, ct), a, b)


def lower_mulhi(lw, node, call):
    rt = call.data.type
    (a, b), (at, bt) = _args(lw, node)
    a, b = cast(lw.b, a, at, rt), cast(lw.b, b, bt, rt)
    name = ("__nv_" + ("" if rt.signed else "u") + ("mul64hi" if rt.bitwidth == 64
                                                      else "mulhi"))
    lt = ltype(rt)
    return lw.b.call(libdevice(lw, name, [lt, lt], lt), [a, b])


def lower_nanosleep(lw, node, call):
    (ns,), (t,) = _args(lw, node)
    v = cast(lw.b, ns, t, T.uint32)
    asm = ir.InlineAsm(ir.FunctionType(ir.VoidType(), [I32]), "nanosleep.u32 $0;", "r",
                       side_effect=True)
    lw.b.call(asm, [v])


def lower_match(lw, node, call):
    vt = call.data.type
    b = lw.b
    (m, v), (mt, _vt) = _args(lw, node)
    mask = cast(b, m, mt, T.uint32)
    v = cast(b, v, _vt, vt)
    w = vt.bitwidth
    it = ir.IntType(w)
    if rules.is_float(vt):
        v = b.bitcast(v, it)
    if call.kind is CallKind.MATCH_ANY_SYNC:
        fn = lw.m.declare(f"llvm.nvvm.match.any.sync.i{w}", ir.FunctionType(I32, [I32, it]))
        return b.call(fn, [mask, v])
    fn = lw.m.declare(f"llvm.nvvm.match.all.sync.i{w}p",
                      ir.FunctionType(ir.LiteralStructType([I32, I1]), [I32, it]))
    r = b.call(fn, [mask, v])
    out = ir.Constant(ltype(T.Tuple((T.uint32, T.boolean))), ir.Undefined)
    out = b.insert_value(out, b.extract_value(r, 0), 0)
    return b.insert_value(out, b.extract_value(r, 1), 1)

