"""``x in tup`` / ``x not in tup`` for tuples (numba.cuda's rule: the tuple's length and
element types are known when compiling, so the test is one ``==`` per element).

Typing: the tuple is a ``UniTuple``/``Tuple`` of numbers (an empty tuple too) and ``x`` a
number; otherwise a TypingError.  The lowering (the OR of ``x == element`` over the
elements; ``x in ()`` is False) is the NVVM backend's ``lower_ops._lower_in``: this module is
front end only.
"""
from .. import types as T
from . import rules

__all__ = ["type_in"]


def type_in(typer, x_t, seq_t, node):
    """Check ``x_t in seq_t`` (TypingError naming ``node`` when unsupported)."""
    if not isinstance(seq_t, (T.UniTuple, T.Tuple)):
        raise typer.error(f"'in' in kernels needs a tuple on its right, got {seq_t}", node)
    if not rules.is_number(x_t):
        raise typer.error(f"'in' in kernels tests a number, got {x_t}", node)
    for et in seq_t.types:
        if not rules.is_number(et):
            raise typer.error(f"'in' in kernels needs a tuple of numbers, got {seq_t}", node)

