"""Lowering of calls of external device functions (``cuda.declare_device``, typed as
``CallKind.EXTERN``): a declaration of the C symbol and a call with the declared ABI (see
:mod:`.declared`), and the function's ``link=`` code and cooperative need recorded on the
module (``ModuleContext.linked``, ``uses_grid_sync``) for the kernel's link step.
"""
from llvmlite import ir

from .. import types as T
from .ltypes import I8, I32, cast, ltype

__all__ = ["lower_extern_call"]


def _abi_type(t):
    # a C bool is a byte; everything else is passed in its register type
    return I8 if isinstance(t, T.Boolean) else ltype(t)


def _to_abi(b, v, t):
    return b.zext(v, I8) if isinstance(t, T.Boolean) else v


def _from_abi(b, v, t):
    return b.icmp_unsigned("!=", v, ir.Constant(I8, 0)) if isinstance(t, T.Boolean) else v


def lower_extern_call(lw, node, c):
    """Lower call ``node`` of the declared function ``c.data.function``: arguments converted
    to its parameter types; the result returned directly (``abi='c'``) or read from the slot
    passed first (``abi='numba'``, whose int status is ignored).  CompileError when the
    module already holds the symbol with another signature."""
    fn = c.data.function
    b, m = lw.b, lw.m
    sig = fn.sig
    rt = sig.return_type
    params = [_abi_type(t) for t in sig.args]
    args = [_to_abi(b, cast(b, lw.expr(a), lw.ty(a), t), t) for a, t in zip(node.args, sig.args)]
    void = rt is T.void
    if fn.abi == "c":
        fnty = ir.FunctionType(ir.VoidType() if void else _abi_type(rt), params)
    else:
        slot_ty = I8 if void else _abi_type(rt)
        fnty = ir.FunctionType(I32, [slot_ty.as_pointer()] + params)
    existing = m.module.globals.get(fn.name)
    if existing is not None and existing.function_type != fnty:
        raise lw.error(f"declared device function {fn.name} is declared twice with different "
                       f"signatures ({existing.function_type} and {fnty})", node)
    callee = m.declare(fn.name, fnty)
    m.record_extern(fn)
    if fn.abi == "c":
        r = b.call(callee, args)
        return None if void else _from_abi(b, r, rt)
    with b.goto_entry_block():
        slot = b.alloca(slot_ty, name=f"{fn.name}_ret")
    b.call(callee, [slot] + args)
    return None if void else _from_abi(b, b.load(slot), rt)
