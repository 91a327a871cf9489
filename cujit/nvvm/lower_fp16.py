"""Lowering of ``cuda.fp16`` intrinsics: ``hneg``, ``habs`` and ``hfma`` are the GPU's f16
instructions (``neg.f16``, ``abs.f16``, ``fma.rn.f16``, as numba-cuda emits them); for the
others the operands are widened to float32, the operation runs there (libdevice for the
functions) and the result is rounded once to half.  For ``+ - * /`` and ``sqrt`` that is the
correctly rounded half result (float32 has more than twice half's precision), which is what
the GPU's f16 instructions give.
"""
from llvmlite import ir

from .lower_ops import libdevice
from .ltypes import cast, half_asm, ltype
from .. import types as T

__all__ = ["lower_fp16"]

F32 = ir.FloatType()

_ARITH = {"hadd": "fadd", "hsub": "fsub", "hmul": "fmul", "hdiv": "fdiv"}
_NATIVE = {"hneg": "neg.f16 $0, $1;", "habs": "abs.f16 $0, $1;",
           "hfma": "fma.rn.f16 $0, $1, $2, $3;"}
_CMP = {"heq": "==", "hne": "!=", "hlt": "<", "hle": "<=", "hgt": ">", "hge": ">="}
_LIBDEVICE = {"hsqrt": "sqrtf", "hrsqrt": "rsqrtf", "hexp": "expf", "hexp2": "exp2f",
              "hexp10": "exp10f", "hlog": "logf", "hlog2": "log2f", "hlog10": "log10f",
              "hsin": "sinf", "hcos": "cosf", "hceil": "ceilf", "hfloor": "floorf",
              "htrunc": "truncf", "hrint": "rintf", "hmax": "fmaxf",
              "hmin": "fminf"}


def lower_fp16(lw, node, call):
    """The value of ``cuda.fp16.<name>(...)`` (``call.data.name``): an f16 instruction or
    computed in float32 and rounded to half once."""
    name = call.data.name
    b = lw.b
    halves = [cast(b, lw.expr(a), lw.ty(a), T.float16) for a in node.args]
    if name in _NATIVE:
        # exact (neg, abs) or one rounding (fma): the GPU's f16 instruction, as numba-cuda's
        # cuda_fp16 bindings emit it
        return half_asm(b, _NATIVE[name], *halves)
    xs = [b.fpext(h, F32) for h in halves]
    if name in _CMP:
        return b.fcmp_ordered(_CMP[name], xs[0], xs[1])
    if name in _ARITH:
        r = getattr(b, _ARITH[name])(xs[0], xs[1])
    elif name == "hrcp":
        r = b.fdiv(ir.Constant(F32, 1.0), xs[0])
    else:
        fn = libdevice(lw, "__nv_" + _LIBDEVICE[name], [F32] * len(xs), F32)
        r = b.call(fn, xs)
    return b.fptrunc(r, ltype(T.float16))

