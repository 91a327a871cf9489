"""Lowering of the cache-hinted loads and stores to inline PTX ``ld.global.<op>.b<width>``
/ ``st.global.<op>.b<width>`` on the element's address (numba-cuda's
``numba.cuda.cache_hints``).  An 8-bit element travels in a 32-bit register (PTX loads and
stores ``.b8`` through wider registers); floats are moved as integers of their width."""
from llvmlite import ir

from .. import types as T
from . import lower_arrays as LA
from .ltypes import cast

__all__ = ["lower_cache_load", "lower_cache_store"]

# element width -> (register type, constraint letter)
_REGS = {8: (ir.IntType(32), "r"), 16: (ir.IntType(16), "h"), 32: (ir.IntType(32), "r"),
         64: (ir.IntType(64), "l")}


def _pointer(lw, node):
    arr_node, idx_node = node.args[0], node.args[1]
    aty, it = lw.ty(arr_node), lw.ty(idx_node)
    arr, idx = lw.expr(arr_node), lw.expr(idx_node)
    if isinstance(aty, T.CPointer):
        return LA.pointer_element(lw, arr, aty, idx, it), aty.dtype
    if isinstance(it, (T.UniTuple, T.Tuple)):
        vals = [(lw.b.extract_value(idx, k), t) for k, t in enumerate(it.types)]
    else:
        vals = [(idx, it)]
    idxs = [LA._wrap(lw, v, t, LA.dim(lw, arr, k)) for k, (v, t) in enumerate(vals)]
    return LA._elem_ptr(lw, arr, aty, idxs), aty.dtype


def lower_cache_load(lw, node, c):
    """``ld.global.<op>`` of the element ``node`` addresses; its value, of the element type."""
    ptr, dt = _pointer(lw, node)
    reg, letter = _REGS[dt.bitwidth]
    fn = ir.FunctionType(reg, [ptr.type])
    asm = ir.InlineAsm(fn, f"ld.global.{c.data.operator}.b{dt.bitwidth} $0, [$1];",
                       f"={letter},l", side_effect=True)
    raw = lw.b.call(asm, [ptr])
    ity = ir.IntType(dt.bitwidth)
    if reg.width != dt.bitwidth:
        raw = lw.b.trunc(raw, ity)
    return lw.b.bitcast(raw, ptr.type.pointee) if isinstance(dt, T.Float) else raw


def lower_cache_store(lw, node, c):
    """``st.global.<op>`` of the value (converted to the element type) at the element
    ``node`` addresses; no value."""
    ptr, dt = _pointer(lw, node)
    v = cast(lw.b, lw.expr(node.args[2]), lw.ty(node.args[2]), dt)
    reg, letter = _REGS[dt.bitwidth]
    if isinstance(dt, T.Float):
        v = lw.b.bitcast(v, ir.IntType(dt.bitwidth))
    if reg.width != dt.bitwidth:
        v = lw.b.zext(v, reg)
    fn = ir.FunctionType(ir.VoidType(), [ptr.type, reg])
    asm = ir.InlineAsm(fn, f"st.global.{c.data.operator}.b{dt.bitwidth} [$0], $1;",
                       f"l,{letter},~{{memory}}", side_effect=True)
    return lw.b.call(asm, [ptr, v])
