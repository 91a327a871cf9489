"""``x in tup`` / ``x not in tup`` for tuples (numba.cuda's rule: the tuple's length and
element types are known when compiling, so the test is one ``==`` per element).

Typing: the tuple is a ``UniTuple``/``Tuple`` of numbers (an empty tuple too) and ``x`` a
number; otherwise a TypingError.  Lowering: the OR of ``x == element`` over the elements
(Python's ``==`` between numbers, complex included); ``x in ()`` is False.
"""
from llvmlite import ir

from .. import types as T
from . import rules
from .ltypes import I1

__all__ = ["type_in", "lower_in"]


def type_in(typer, x_t, seq_t, node):
    """Check ``x_t in seq_t`` (TypingError naming ``node`` when unsupported)."""
    if not isinstance(seq_t, (T.UniTuple, T.Tuple)):
        raise typer.error(f"'in' in kernels needs a tuple on its right, got {seq_t}", node)
    if not rules.is_number(x_t):
        raise typer.error(f"'in' in kernels tests a number, got {x_t}", node)
    for et in seq_t.types:
        if not rules.is_number(et):
            raise typer.error(f"'in' in kernels needs a tuple of numbers, got {seq_t}", node)


def lower_in(lw, op, x, xt, seq, seq_t, cmp2):
    """i1 of ``x in seq`` (``op == "in"``) or ``x not in seq``; ``cmp2`` is the scalar
    comparison of :mod:`.lower_ops`."""
    b = lw.b
    found = ir.Constant(I1, 0)
    for i, et in enumerate(seq_t.types):
        found = b.or_(found, cmp2(lw, "==", x, xt, b.extract_value(seq, i), et))
    return found if op == "in" else b.xor(found, ir.Constant(I1, 1))
