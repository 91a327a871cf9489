"""``print(...)`` in kernels through CUDA's ``vprintf(format, args)``.

Arguments are separated by spaces and end with a newline (Python's ``print``); integers print
with ``%lld``/``%llu``, floats as ``%f`` (as numba.cuda), booleans as True/False, complex as
``(re+imj)``; string constants become part of the format.  The argument buffer follows
vprintf's layout: each value aligned to its size (ints widened to 64 bits, floats to double).
"""
from llvmlite import ir

from .. import types as T
from ..frontend import rules
from .ltypes import I8P, I32, cast

__all__ = ["lower_print"]


def lower_print(lw, node):
    b = lw.b
    fmt, vals = [], []
    for a in node.args:
        t = lw.ty(a)
        if isinstance(t, rules.Global):
            fmt.append(str(t.obj).replace("%", "%%"))
            continue
        v = lw.expr(a)
        if isinstance(t, T.Boolean):
            fmt.append("%s")
            vals.append(b.select(v, lw.m.cstring("True"), lw.m.cstring("False")))
        elif isinstance(t, T.Integer):
            fmt.append("%lld" if t.signed else "%llu")
            vals.append(cast(b, v, t, T.int64 if t.signed else T.uint64))
        elif isinstance(t, T.Float):
            fmt.append("%f")
            vals.append(cast(b, v, t, T.float64))
        else:   # complex
            ft = t.underlying_float
            fmt.append("(%f%+fj)")
            vals.append(cast(b, b.extract_value(v, 0), ft, T.float64))
            vals.append(cast(b, b.extract_value(v, 1), ft, T.float64))
    text = " ".join(fmt) + "\n"
    vprintf = lw.m.declare("vprintf", ir.FunctionType(I32, [I8P, I8P]))
    if vals:
        st = ir.LiteralStructType([v.type for v in vals])
        slot = lw.alloca(st)
        for i, v in enumerate(vals):
            b.store(v, b.gep(slot, [ir.Constant(I32, 0), ir.Constant(I32, i)]))
        buf = b.bitcast(slot, I8P)
    else:
        buf = ir.Constant(I8P, None)
    b.call(vprintf, [lw.m.cstring(text), buf])
    return None
