"""Lowering of the asynchronous-copy calls of :mod:`cujit.pipeline` to inline PTX (PTX ISA,
"Data Movement and Conversion Instructions: cp.async"; sm_80 and later):

- ``memcpy_async``: ``cp.async.cg.shared.global [dst], [src], 16;`` (``.ca`` for 4 and 8
  bytes: ``.cg`` takes only 16), ``dst`` the 32-bit shared-window address of the destination
  element (``cvta.to.shared`` of its generic address), ``src`` the global address of the
  source element;
- ``commit``: ``cp.async.commit_group;``;
- ``wait_prior(n)``: ``cp.async.wait_group n;``.

Each is a side-effecting asm statement with a memory clobber, so LLVM keeps shared-memory
loads of the destination after the wait and no store of the source moves across a copy;
ptxas schedules them by its own knowledge of cp.async.
"""
from llvmlite import ir

from .. import types as T
from . import lower_arrays as LA
from .ltypes import I32, cast

__all__ = ["lower_copy", "lower_commit", "lower_wait"]

_I64 = ir.IntType(64)
_I8 = ir.IntType(8)


def _element(lw, arr_node, idx_node):
    """Generic pointer to the element ``arr_node[idx_node]`` (an array value and an integer
    or tuple index).  Indices are not wrapped (``cujit.pipeline``'s rule): a copy's address
    costs only the multiply-adds."""
    aty, it = lw.ty(arr_node), lw.ty(idx_node)
    arr, idx = lw.expr(arr_node), lw.expr(idx_node)
    if isinstance(it, (T.UniTuple, T.Tuple)):
        vals = [(lw.b.extract_value(idx, k), t) for k, t in enumerate(it.types)]
    else:
        vals = [(idx, it)]
    idxs = [cast(lw.b, v, t, T.int64) for v, t in vals]
    return LA._elem_ptr(lw, arr, aty, idxs)


def _asm(lw, text, args, constraint):
    fnty = ir.FunctionType(ir.VoidType(), [a.type for a in args])
    return lw.b.call(ir.InlineAsm(fnty, text, constraint, side_effect=True), args)


def lower_copy(lw, node, c):
    """``memcpy_async(dst, dst_index, src, src_index, nbytes)``."""
    b = lw.b
    dst = b.bitcast(_element(lw, node.args[0], node.args[1]), _I8.as_pointer())
    src = b.bitcast(_element(lw, node.args[2], node.args[3]), _I8.as_pointer())
    sdst = b.trunc(b.ptrtoint(b.addrspacecast(dst, _I8.as_pointer(3)), _I64), I32)
    gsrc = b.ptrtoint(b.addrspacecast(src, _I8.as_pointer(1)), _I64)
    n = c.data.nbytes
    _asm(lw, f"cp.async.{c.data.operator}.shared.global [$0], [$1], {n};",
         [sdst, gsrc], "r,l,~{memory}")


def lower_commit(lw, node, c):
    """``commit()``."""
    _asm(lw, "cp.async.commit_group;", [], "~{memory}")


def lower_wait(lw, node, c):
    """``wait_prior(n)``."""
    _asm(lw, f"cp.async.wait_group {c.data.n};", [], "~{memory}")
