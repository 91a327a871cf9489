"""Lowering of ``cuda.libdevice.<name>(...)``: a call of libdevice's ``__nv_<name>``
(linked by :mod:`.nvvm` whenever the IR names an ``__nv_`` function).  Each argument is
converted to the type the table declares (:mod:`.libdevice_table`); out-arguments get a
local slot each, and the result is the tuple of the return value (unless void) and the
slots' values, as numba.cuda's libdevice bindings return them.
"""
from llvmlite import ir

from .. import types as T
from .lower_ops import libdevice
from .ltypes import cast, ltype

__all__ = ["lower_libdevice"]


def lower_libdevice(lw, node, call):
    """The value of ``cuda.libdevice.<name>(...)``: ``__nv_<name>`` called with each
    argument converted to its declared type (``call.data.function``), out-pointers in local
    slots returned with the result as a tuple."""
    fn = call.data.function
    b = lw.b
    args = [cast(b, lw.expr(a), lw.ty(a), t) for a, t in zip(node.args, fn.params)]
    slots = [lw.alloca(ltype(t)) for t in fn.outs]
    ret = ir.VoidType() if fn.ret is T.void else ltype(fn.ret)
    f = libdevice(lw, fn.symbol, [ltype(t) for t in fn.params] +
                  [ltype(t).as_pointer() for t in fn.outs], ret)
    value = b.call(f, args + slots)
    if not fn.outs:
        return value
    vals = ([] if fn.ret is T.void else [value]) + [b.load(s) for s in slots]
    if len(vals) == 1:
        return vals[0]
    out = ir.Constant(ltype(lw.ty(node)), ir.Undefined)
    for i, v in enumerate(vals):
        out = b.insert_value(out, v, i)
    return out

