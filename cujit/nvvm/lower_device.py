"""Lowering of calls of device functions and of closures (functions defined inside a kernel),
typed by :mod:`.calls.device` and :mod:`.closures`: the callee is lowered once per typing as
an internal LLVM function (``lw.m.device_function``), and each call passes only the
parameters that exist at run time (``ltypes.passes_param``).  A callee jitted with
``inline="always"`` is lowered into the caller at each call instead (numba-cuda inlines such
calls before LLVM sees them).
"""
from llvmlite import ir

from .. import types as T
from .ltypes import cast, const, ltype, passes_param
from ..frontend.rules import PseudoType

__all__ = ["lower_device_call", "lower_closure_call"]


def lower_device_call(lw, node, callee, bound):
    """Lower a device-function call typed by :func:`type_device_call` (its callee's
    ``TypedFunction`` and parameter bindings)."""
    b = lw.b
    inline = callee.inline
    fn = None if inline else lw.m.device_function(callee)
    vals = []
    tuples = {}         # a *tuple argument is evaluated once

    def value(payload):
        if isinstance(payload, tuple):
            _, tnode, i = payload
            tv = tuples.get(id(tnode))
            if tv is None:
                tv = tuples[id(tnode)] = lw.expr(tnode)
            return b.extract_value(tv, i), lw.ty(tnode).types[i]
        return lw.expr(payload), lw.ty(payload)
    for (kind, payload, t), want in zip(bound, callee.argtypes):
        if not passes_param(want):
            # a function value or an empty tuple: nothing at run time
            if inline:
                vals.append(None if isinstance(want, PseudoType)
                            else ir.Constant(ltype(want), ir.Undefined))
            continue
        if kind == "node":
            v, vt = value(payload)
            vals.append(cast(b, v, vt, want))
        elif kind == "const":
            vals.append(cast(b, const(t, payload), t, want))
        else:
            out = ir.Constant(ltype(want), ir.Undefined)
            for i, (n, et) in enumerate(zip(payload, want.types)):
                v, vt = value(n)
                out = b.insert_value(out, cast(b, v, vt, et), i)
            vals.append(out)
    if inline:
        return lw.lower_inline(callee, vals)
    r = b.call(fn, vals)
    return None if callee.return_type is T.void else r


def lower_closure_call(lw, node, tf, free):
    """Lower a closure call: its arguments, then the current values of its free variables."""
    b = lw.b
    fn = lw.m.device_function(tf)
    vals = []
    for a, want in zip(node.args, tf.argtypes):
        if passes_param(want):
            vals.append(cast(b, lw.expr(a), lw.ty(a), want))
    for f, want in zip(free, tf.argtypes[len(node.args):]):
        if not passes_param(want):
            continue
        vals.append(cast(b, b.load(lw.vars[f]), lw.tf.vartypes[f], want))
    r = b.call(fn, vals)
    return None if tf.return_type is T.void else r
