"""Typing of ``enum.Enum`` members in kernels, as numba.cuda types them (its
``enumdecl.py``): members of one Enum compare with ``==`` / ``!=`` (by value), any two
members with ``is`` / ``is not`` (members of different Enums are never the same, IntEnum
ones included), and ``member.value`` is the value, of the type all the Enum's values share.  Members are kernel
arguments and compile-time constants (``Color.red``, ``Color["red"]``); on the device a
member is its value (``types.enums.EnumMember``).  The lowering is in ``lower_ops``
(comparisons) and ``llvmgen`` (``.value``).
"""
import ast

from .. import types as T

__all__ = ["involves_enum", "type_compare", "type_attr"]


_MEMBERS = (T.EnumMember, T.IntEnumMember)


def involves_enum(op, a, b):
    """True when the comparison ``a <op> b`` is typed here: an EnumMember on either side, or
    ``is`` / ``is not`` with an IntEnum member (otherwise IntEnum members are integers)."""
    if isinstance(a, T.EnumMember) or isinstance(b, T.EnumMember):
        return True
    return isinstance(op, (ast.Is, ast.IsNot)) and (isinstance(a, T.IntEnumMember) or
                                                     isinstance(b, T.IntEnumMember))


def type_compare(typer, op, a, b, node):
    """Check one comparison ``a <op> b`` that :func:`involves_enum`; TypingError (naming
    both types) for what numba.cuda refuses."""
    if isinstance(op, (ast.Is, ast.IsNot)) and isinstance(a, _MEMBERS) and \
            isinstance(b, _MEMBERS):
        return
    if not (isinstance(a, T.EnumMember) and isinstance(b, T.EnumMember)):
        raise typer.error(f"cannot compare {a} with {b}: an Enum member compares only with "
                          "members of its own Enum (use .value to compare its value)", node)
    if not isinstance(op, (ast.Eq, ast.NotEq)):
        raise typer.error(f"Enum members compare only with ==, !=, is and is not (got "
                          f"{type(op).__name__} between {a} and {b})", node)
    if a is not b:
        raise typer.error(f"cannot compare {a} with {b}: == and != take members of one Enum "
                          "(as in numba.cuda); 'is' tells members of different Enums apart",
                          node)


def type_attr(typer, node, base, attr):
    """The type of ``member.<attr>``: ``.value`` only (numba.cuda's one Enum attribute)."""
    if attr == "value":
        return base.base if isinstance(base, T.IntEnumMember) else base.dtype
    raise typer.error(f"an Enum member in a kernel has only the attribute 'value' (got "
                      f"'{attr}' of {base})", node)
