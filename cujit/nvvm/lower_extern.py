"""Lowering of calls of external device functions (``cuda.declare_device``, typed as
``CallKind.EXTERN``): a declaration of the C symbol and a call with the declared ABI (see
:mod:`.declared`), and the function's ``link=`` code and cooperative need recorded on the
module (``ModuleContext.linked``, ``uses_grid_sync``) for the kernel's link step.  Pointer
and array parameters are C pointers (``T*``): an array argument passes its data pointer.
Also cffi's ``ffi.from_buffer(array)``, the data pointer of an array.
"""
from llvmlite import ir

from .. import types as T
from .ltypes import I8, I32, cast, ltype, mtype

__all__ = ["lower_extern_call", "lower_from_buffer"]


def _abi_type(t):
    # a C bool is a byte; an array is its data pointer (T*); everything else is passed in
    # its register type
    if isinstance(t, T.Boolean):
        return I8
    if isinstance(t, T.Array):
        return mtype(t.dtype).as_pointer()
    return ltype(t)


def _to_abi(b, v, t):
    return b.zext(v, I8) if isinstance(t, T.Boolean) else v


def _argument(b, v, at, t):
    """Argument value ``v`` (of type ``at``) as parameter type ``t`` of the C function."""
    if isinstance(t, (T.CPointer, T.RawPointer, T.Array)):
        ptr = b.extract_value(v, 0) if isinstance(at, T.Array) else v
        want = _abi_type(t)
        if ptr.type == want:
            return ptr
        if ptr.type.addrspace != want.addrspace:
            ptr = b.bitcast(ptr, want.pointee.as_pointer(ptr.type.addrspace))
            return b.addrspacecast(ptr, want)
        return b.bitcast(ptr, want)
    return _to_abi(b, cast(b, v, at, t), t)


def lower_from_buffer(lw, node, c):
    """``ffi.from_buffer(arr)``: the array's data pointer (typed ``CPointer(arr.dtype)``)."""
    return lw.b.extract_value(lw.expr(node.args[0]), 0)


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
    args = [_argument(b, lw.expr(a), lw.ty(a), t) for a, t in zip(node.args, sig.args)]
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
