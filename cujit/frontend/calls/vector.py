"""Typing of CUDA vector-type constructions in kernels (``cuda.float32x4(1, 2, v2)``).

numba-cuda's constructor overloads (``numba.cuda.vector_types``): every argument is a scalar
(converted to the base type) or a vector of the same base type, and the arguments' members
add up to the vector's member count.  Records a :class:`~.callkinds.VectorMake`.
"""
from ... import types as T
from ...vector_types import VectorType
from .. import rules
from ..callkinds import Call, CallKind, VectorMake

__all__ = ["type_vector_make"]


def type_vector_make(typer, node, cls, args, kws):
    """Result type (``cls.vector_type``) of call ``node`` constructing vector class ``cls``
    from argument types ``args``; TypingError for keywords, an argument that is neither a
    real scalar nor a vector of ``cls``'s base type, or a member count other than
    ``cls.num_elements``."""
    vt = cls.vector_type
    if kws:
        raise typer.error(f"{cls.name}() takes no keyword arguments", node)
    parts = []
    for a, t in zip(node.args, args):
        if isinstance(t, VectorType):
            if t.base_type is not vt.base_type:
                raise typer.error(f"{cls.name}() takes vectors of {vt.base_type}, got a "
                                  f"{t}", a)
            parts.append(t.num_elements)
        elif rules.is_number(t) and not isinstance(t, T.Complex):
            parts.append(0)
        else:
            raise typer.error(f"{cls.name}() takes integers, floats and {vt.base_type} "
                              f"vectors, got a value of type {t}", a)
    total = sum(p or 1 for p in parts)
    if total != vt.num_elements:
        raise typer.error(f"{cls.name}() needs {vt.num_elements} member(s) in all, got "
                          f"{total} from {len(parts)} argument(s)", node)
    typer.tf.info[node] = Call(CallKind.VECTOR, VectorMake(vt, tuple(parts)))
    return vt

