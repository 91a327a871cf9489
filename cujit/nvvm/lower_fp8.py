"""Lowering of ``cuda.fp8``'s kernel functions (FP8 values are their bits in a uint8): the
shorthands ``float32_to_e4m3`` & co. (saturating ``cvt.rn.satfinite.{e4m3x2,e5m2x2}.f32``
and the exact ``cvt.rn.f16x2.{e4m3x2,e5m2x2}``), and numba-cuda's ``cvt_*`` bindings with
their constant ``saturate`` / ``interp`` / ``mode`` arguments, through ``fp8_ptx`` (sm_89+;
the H200 is sm_90).  ``narrow_floats`` gives the simulator the same bits.
"""
from llvmlite import ir

from .. import fp8
from .. import types as T
from . import bf16_ptx, fp8_ptx
from .ltypes import cast, ltype

__all__ = ["lower_fp8"]

F32 = ir.FloatType()


def lower_fp8(lw, node, call):
    """The value of ``cuda.fp8.<name>(...)`` (``call.data``: a ``FP8Conversion``)."""
    data = call.data
    b = lw.b
    arg = node.args[0]
    if data.name in fp8.CVT_FUNCTIONS:
        return _lower_cvt(lw, node, data)
    fmt, direction = fp8.KERNEL_FUNCTIONS[data.name]
    if direction == "to":
        return fp8_ptx.from_f32(b, cast(b, lw.expr(arg), lw.ty(arg), T.float32), fmt)
    bits = cast(b, lw.expr(arg), lw.ty(arg), T.uint8)
    return fp8_ptx.to_f32(b, bits, fmt)


def _lower_cvt(lw, node, data):
    b = lw.b
    arg = node.args[0]
    source, target = fp8.CVT_FUNCTIONS[data.name]
    x = lw.expr(arg)
    if source in ("float32", "float64"):
        x = cast(b, x, lw.ty(arg), T.float32 if source == "float32" else T.float64)
    elif source == "bf16raw":
        x = b.extract_value(x, 0)               # the ushort1's .x
    else:
        x = cast(b, x, lw.ty(arg), T.uint8)
    if target == "bf16raw":
        out = ir.Constant(ltype(fp8.BF16RAW.vector_type), ir.Undefined)
        return b.insert_value(out, fp8_ptx.e8m0_to_bf16(b, x), 0)
    if target == "e8m0":
        if source == "bf16raw":
            return fp8_ptx.e8m0_from_bf16(b, x, data.mode, data.saturate)
        fn = fp8_ptx.e8m0_from_f32 if source == "float32" else fp8_ptx.e8m0_from_f64
        return fn(b, x, data.mode, data.saturate)
    if source == "bf16raw":
        x, source = bf16_ptx.to_f32(b, x), "float32"
    fn = fp8_ptx.from_f32 if source == "float32" else fp8_ptx.from_f64
    return fn(b, x, data.fmt, data.saturate)
