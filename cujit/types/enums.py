"""The types of ``enum.Enum`` members in kernels (numba.cuda's ``EnumMember`` and
``IntEnumMember``): the member's Enum class and the type of its value, which is how the
member is represented on the device.

numba.cuda lets kernels take members as arguments and constants, compare them with ``==`` /
``!=`` (members of one Enum) and ``is`` / ``is not``, and read their ``.value``.
``IntEnum`` members are integers besides (``IntEnumMember`` is an ``Integer``: arithmetic,
comparisons with numbers, casts), whose Enum class only ``is`` and ``.value`` look at.
"""
import enum

from .core import Integer, Type

__all__ = ["EnumMember", "IntEnumMember", "enum_member_type"]


class EnumMember(Type):
    """A member of Enum class ``enum_class``, represented by its value of type ``dtype``."""

    @classmethod
    def _key_of(cls, enum_class, dtype):
        return (enum_class, dtype)

    def __init__(self, enum_class, dtype):
        self.enum_class, self.dtype = enum_class, dtype
        self.name = f"EnumMember(<enum '{enum_class.__name__}'>, {dtype})"

    def _ctor_args(self):
        return (self.enum_class, self.dtype)


class IntEnumMember(Integer):
    """A member of IntEnum class ``enum_class``: an integer of type ``base`` (int64) that
    keeps its class for ``is`` and ``.value``."""

    @classmethod
    def _key_of(cls, enum_class, base):
        return (enum_class, base)

    def __init__(self, enum_class, base):
        super().__init__(base.bitwidth, base.signed)
        self.enum_class, self.base = enum_class, base
        self.name = f"IntEnumMember(<enum '{enum_class.__name__}'>, {base})"

    def _ctor_args(self):
        return (self.enum_class, self.base)


def enum_member_type(member, typeof):
    """The ``EnumMember`` (``IntEnumMember`` for an int Enum) type of ``member`` (``typeof``
    types the values).  As in numba, all members of the Enum must have values of one type:
    TypeError naming the Enum and the types otherwise."""
    cls = type(member)
    types = {typeof(m.value) for m in cls.__members__.values()}
    if len(types) != 1:
        raise TypeError(f"the members of Enum {cls.__name__} have values of different types "
                        f"({', '.join(sorted(map(str, types)))}); a kernel needs one type")
    t = types.pop()
    if isinstance(member, int):
        return IntEnumMember(cls, t)
    return EnumMember(cls, t)


def is_int_enum_member(value):
    """True for a member of an Enum that is also an int (IntEnum, IntFlag)."""
    return isinstance(value, enum.Enum) and isinstance(value, int)


def is_plain_enum_member(value):
    """True for a member of an Enum that is not also a number (IntEnum members are ints)."""
    return isinstance(value, enum.Enum) and not isinstance(value, (int, float, complex))
