"""Lowering of CUDA vector-type constructions: the ``[n x base]`` aggregate of the
members, each argument's scalars converted to the base type and vectors' members copied
in order (numba-cuda's ``numba.cuda.vector_types`` constructor lowering)."""
from llvmlite import ir

from .ltypes import cast, ltype

__all__ = ["lower_vector_make"]


def lower_vector_make(lw, node, c):
    """The vector value of construction ``node`` (``c.data``: a ``VectorMake``)."""
    vt, parts = c.data.type, c.data.parts
    b = lw.b
    members = []
    for a, width in zip(node.args, parts):
        v = lw.expr(a)
        if width:
            members.extend(b.extract_value(v, i) for i in range(width))
        else:
            members.append(cast(b, v, lw.ty(a), vt.base_type))
    out = ir.Constant(ltype(vt), ir.Undefined)
    for i, m in enumerate(members):
        out = b.insert_value(out, m, i)
    return out
