"""``print(...)`` in kernels through CUDA's ``vprintf(format, args)``, as the call's
:class:`~cujit.frontend.callkinds.PrintFormat` (:mod:`cujit.frontend.calls.printing`) says:
its format text and the values for it.  The argument buffer follows vprintf's layout: each
value aligned to its size (ints widened to 64 bits, floats to double, booleans as the
address of ``"True"``/``"False"``, complex numbers as their two parts).
"""
from llvmlite import ir

from .. import types as T
from ..frontend.calls.printing import warn_if_raw
from ..frontend.rules import PseudoType
from .lower_sreg import sreg
from .ltypes import I8P, I32, cast

__all__ = ["lower_print"]


def lower_print(lw, node, pf):
    """Lower ``print`` call ``node`` whose PrintFormat is ``pf``."""
    b = lw.b
    warn_if_raw(pf)
    args = {}

    def arg(i):
        if i not in args:
            args[i] = lw.expr(node.args[i])
        return args[i]
    vals = []
    for pv in pf.values:
        t = pv.type
        if pv.register is not None:
            v = sreg(lw, *pv.register)
        else:
            v = arg(pv.arg)
            for step in pv.path:
                v = b.extract_value(v, step)
        if isinstance(t, T.Boolean):
            vals.append(b.select(v, lw.m.cstring("True"), lw.m.cstring("False")))
        elif isinstance(t, T.Integer):
            vals.append(cast(b, v, t, T.int64 if t.signed else T.uint64))
        elif isinstance(t, (T.Float, T.BFloat16)):
            vals.append(cast(b, v, t, T.float64))
        else:   # complex
            ft = t.underlying_float
            vals.append(cast(b, b.extract_value(v, 0), ft, T.float64))
            vals.append(cast(b, b.extract_value(v, 1), ft, T.float64))
    # the arguments of a raw format are still evaluated, as Python does
    for i, a in enumerate(node.args):
        if i not in args and not isinstance(lw.ty(a), PseudoType):
            arg(i)
    vprintf = lw.m.declare("vprintf", ir.FunctionType(I32, [I8P, I8P]))
    if vals:
        st = ir.LiteralStructType([v.type for v in vals])
        slot = lw.alloca(st)
        for i, v in enumerate(vals):
            b.store(v, b.gep(slot, [ir.Constant(I32, 0), ir.Constant(I32, i)]))
        buf = b.bitcast(slot, I8P)
    else:
        buf = ir.Constant(I8P, None)
    b.call(vprintf, [lw.m.cstring(pf.text), buf])
    return None
