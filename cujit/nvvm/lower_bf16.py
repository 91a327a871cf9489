"""Lowering of ``cuda.bf16`` intrinsics (and ``math.*`` of a bfloat16, typed as them): each
argument is converted to its parameter's type (``bf16.SIGNATURES``), then the operation is
the PTX instruction of ``bf16_ptx``; the functions (``hsqrt``, ``hexp`` ...) run libdevice's
float32 function on the exact float32 value and round once, as ``cuda.bf16``'s simulator
bodies do with NumPy.
"""
from llvmlite import ir

from .. import bf16 as B
from . import bf16_ptx as P
from .lower_ops import libdevice
from .ltypes import cast

__all__ = ["lower_bf16"]

F32 = ir.FloatType()
_ORDERED = {"heq": "==", "hne": "!=", "hge": ">=", "hgt": ">", "hle": "<=", "hlt": "<"}
_UNORDERED = {"hequ": "==", "hneu": "!=", "hgeu": ">=", "hgtu": ">", "hleu": "<=",
              "hltu": "<"}
_ZERO, _ONE = 0x0000, 0x3F80


def _sat(b, r):
    """``r`` clamped to [0, 1] (``max.bf16`` with a NaN gives the 0)."""
    return P.extremum(b, P.extremum(b, r, P.bits_const(_ZERO), True, False),
                      P.bits_const(_ONE), False, False)


def lower_bf16(lw, node, call):
    """The value of ``cuda.bf16.<name>(...)`` (``call.data.name``, the function's own name)."""
    name = call.data.name
    b = lw.b
    params, result = B.SIGNATURES[name]
    xs = [cast(b, lw.expr(a), lw.ty(a), p) for a, p in zip(node.args, params)]
    if name in ("hadd", "hsub", "hmul", "hdiv"):
        return {"hadd": P.add, "hsub": P.sub, "hmul": P.mul, "hdiv": P.div}[name](b, *xs)
    if name in ("hadd_sat", "hsub_sat", "hmul_sat"):
        return _sat(b, {"hadd_sat": P.add, "hsub_sat": P.sub, "hmul_sat": P.mul}[name](b, *xs))
    if name == "hfma":
        return P.fma(b, *xs)
    if name == "hfma_sat":
        return _sat(b, P.fma(b, *xs))
    if name == "hfma_relu":
        return P.fma_relu(b, *xs)
    if name == "hneg":
        return P.neg(b, xs[0])
    if name == "habs":
        return P.abs_(b, xs[0])
    if name in _ORDERED or name in _UNORDERED:
        op = _ORDERED.get(name) or _UNORDERED[name]
        f, g = P.to_f32(b, xs[0]), P.to_f32(b, xs[1])
        return (b.fcmp_ordered if name in _ORDERED else b.fcmp_unordered)(op, f, g)
    if name in ("hmax", "hmin", "hmax_nan", "hmin_nan"):
        return P.extremum(b, xs[0], xs[1], name.startswith("hmax"), name.endswith("_nan"))
    if name == "hisnan":
        f = P.to_f32(b, xs[0])
        return b.fcmp_unordered("uno", f, f)
    if name == "hisinf":
        mag = b.and_(xs[0], P.bits_const(0x7FFF))
        is_inf = b.icmp_unsigned("==", mag, P.bits_const(0x7F80))
        neg = b.icmp_unsigned(">=", xs[0], P.bits_const(0x8000))
        sign = b.select(neg, ir.Constant(ir.IntType(32), -1), ir.Constant(ir.IntType(32), 1))
        return b.select(is_inf, sign, ir.Constant(ir.IntType(32), 0))
    if name == "bfloat16_to_float32":
        return P.to_f32(b, xs[0])
    if name.startswith("float32_to_bfloat16"):
        return P.from_f32(b, xs[0], name[-2:] if name[-3] == "_" else "rn")
    if name == "float64_to_bfloat16":
        return P.from_f64(b, xs[0])
    if name.startswith("bfloat16_as_") or name.endswith("_as_bfloat16"):
        return xs[0]                # the same 16 bits
    if name.startswith("bfloat16_to_"):
        return P.to_int(b, xs[0], result.signed, result.bitwidth, name[-2:])
    if name.endswith(tuple("_to_bfloat16_" + m for m in ("rn", "rz", "rd", "ru"))):
        return P.from_int(b, xs[0], params[0].signed, name[-2:])
    # the float32 functions
    f = P.to_f32(b, xs[0])
    if name == "hrcp":
        r = b.fdiv(ir.Constant(F32, 1.0), f)
    else:
        fn = libdevice(lw, "__nv_" + B.UNARY[name][1], [F32], F32)
        r = b.call(fn, [f])
    return P.from_f32(b, r)

