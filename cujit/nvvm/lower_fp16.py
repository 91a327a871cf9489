"""Lowering of ``cuda.fp16`` intrinsics: the operands are widened to float32, the operation
runs there (libdevice for the functions) and the result is rounded once to half.  For
``+ - * /``, ``sqrt`` and ``fma`` that is the correctly rounded half result (float32 has more
than twice half's precision), which is what the GPU's f16 instructions give.
"""
from llvmlite import ir

from .lower_ops import libdevice
from .ltypes import ltype
from .. import types as T

__all__ = ["lower_fp16"]

F32, F64 = ir.FloatType(), ir.DoubleType()

_ARITH = {"hadd": "fadd", "hsub": "fsub", "hmul": "fmul", "hdiv": "fdiv"}
_CMP = {"heq": "==", "hne": "!=", "hlt": "<", "hle": "<=", "hgt": ">", "hge": ">="}
_LIBDEVICE = {"hsqrt": "sqrtf", "hrsqrt": "rsqrtf", "hexp": "expf", "hexp2": "exp2f",
              "hexp10": "exp10f", "hlog": "logf", "hlog2": "log2f", "hlog10": "log10f",
              "hsin": "sinf", "hcos": "cosf", "hceil": "ceilf", "hfloor": "floorf",
              "htrunc": "truncf", "hrint": "rintf", "habs": "fabsf", "hmax": "fmaxf",
              "hmin": "fminf"}


def lower_fp16(lw, node, call):
    """The value of ``cuda.fp16.<name>(...)`` (``call.data.name``): computed in float32
    (float64 for ``hfma``) and rounded to half once."""
    name = call.data.name
    b = lw.b
    xs = [b.fpext(lw.expr(a), F32) for a in node.args]
    if name in _CMP:
        return b.fcmp_ordered(_CMP[name], xs[0], xs[1])
    if name in _ARITH:
        r = getattr(b, _ARITH[name])(xs[0], xs[1])
    elif name == "hneg":
        r = b.fsub(ir.Constant(F32, -0.0), xs[0])
    elif name == "hrcp":
        r = b.fdiv(ir.Constant(F32, 1.0), xs[0])
    elif name == "hfma":
        # a*b of halves is exact in float64 and so is the sum unless the exponents of a*b
        # and c are over ~30 apart (then c or a*b is far below half's precision): one
        # rounding to half gives the fused result; the simulator computes the same
        ds = [b.fpext(x, F64) for x in xs]
        return b.fptrunc(b.fadd(b.fmul(ds[0], ds[1]), ds[2]), ltype(T.float16))
    else:
        fn = libdevice(lw, "__nv_" + _LIBDEVICE[name], [F32] * len(xs), F32)
        r = b.call(fn, xs)
    return b.fptrunc(r, ltype(T.float16))

