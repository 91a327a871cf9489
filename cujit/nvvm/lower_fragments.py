"""What the tensor-core lowerings (``lower_wmma``, ``lower_wgmma``) share: a fragment or
accumulator is a reference to the thread's registers (an entry-block alloca ``[n x T]`` that
SROA keeps in registers, every access having a constant index), read and written whole
around the side-effecting inline-PTX statements that use them.
"""
from llvmlite import ir

from .ltypes import I32

__all__ = ["arg_node", "asm", "load_registers", "store_registers"]


def arg_node(node, i, name):
    """The argument node bound to parameter ``name`` (position ``i``) of call ``node``, or
    None when it is left out (the typer has checked the binding)."""
    if i < len(node.args):
        return node.args[i]
    for kw in node.keywords:
        if kw.arg == name:
            return kw.value
    return None


def asm(lw, text, ret, args, constraint):
    """A side-effecting inline-PTX statement ``text`` with result type ``ret`` (a struct for
    several outputs), operands ``args`` and LLVM constraint string ``constraint``."""
    fnty = ir.FunctionType(ret, [a.type for a in args])
    return lw.b.call(ir.InlineAsm(fnty, text, constraint, side_effect=True), args)


def load_registers(lw, slot, n):
    """The ``n`` register values held in fragment ``slot``."""
    b = lw.b
    return [b.load(b.gep(slot, [ir.Constant(I32, 0), ir.Constant(I32, i)])) for i in range(n)]


def store_registers(lw, slot, values):
    """Write ``values`` into fragment ``slot``'s registers."""
    b = lw.b
    for i, v in enumerate(values):
        b.store(v, b.gep(slot, [ir.Constant(I32, 0), ir.Constant(I32, i)]))
