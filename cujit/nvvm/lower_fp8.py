"""Lowering of ``cuda.fp8``'s kernel conversions (FP8 values are their bits in a uint8):
to FP8 with ``cvt.rn.satfinite.{e4m3x2,e5m2x2}.f32`` (both halves from the one value, the low
byte kept), from FP8 with ``cvt.rn.f16x2.{e4m3x2,e5m2x2}`` and ``cvt.f32.f16`` (exact).  Both
need sm_89+ (the H200 is sm_90); ``narrow_floats`` gives the simulator the same bits.
"""
from llvmlite import ir

from .. import fp8
from .. import types as T
from .ltypes import cast

__all__ = ["lower_fp8"]

I8, I16 = ir.IntType(8), ir.IntType(16)
F32 = ir.FloatType()


def lower_fp8(lw, node, call):
    """The value of ``cuda.fp8.<name>(x)`` (``call.data.name``)."""
    fmt, direction = fp8.KERNEL_FUNCTIONS[call.data.name]
    b = lw.b
    arg = node.args[0]
    if direction == "to":
        x = cast(b, lw.expr(arg), lw.ty(arg), T.float32)
        pair = b.asm(ir.FunctionType(I16, [F32, F32]),
                     f"cvt.rn.satfinite.{fmt}x2.f32 $0, $1, $2;", "=h,f,f", [x, x],
                     side_effect=False)
        return b.trunc(pair, I8)
    bits = b.zext(cast(b, lw.expr(arg), lw.ty(arg), T.uint8), I16)
    text = (f"{{ .reg .b32 t; .reg .b16 lo, hi; cvt.rn.f16x2.{fmt}x2 t, $1; "
            "mov.b32 {lo, hi}, t; cvt.f32.f16 $0, lo; }")
    return b.asm(ir.FunctionType(F32, [I16]), text, "=f,h", [bits], side_effect=False)
