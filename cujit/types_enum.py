"""The type of ``enum.Enum`` members in kernels (numba.cuda's ``EnumMember``): the member's
Enum class and the type of its value, which is how the member is represented on the device.

``IntEnum`` members are integers (typed as such, as before); this type is for the other
Enums, whose members numba.cuda lets kernels take as arguments and constants, compare with
``==`` / ``!=`` (members of one Enum) and ``is`` / ``is not``, and read ``.value`` of.
"""
import enum

from .types_core import Type

__all__ = ["EnumMember", "enum_member_type"]


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


def enum_member_type(member, typeof):
    """The ``EnumMember`` type of ``member`` (``typeof`` types the values).  As in numba,
    all members of the Enum must have values of one type: TypeError naming the Enum and the
    types otherwise."""
    cls = type(member)
    types = {typeof(m.value) for m in cls.__members__.values()}
    if len(types) != 1:
        raise TypeError(f"the members of Enum {cls.__name__} have values of different types "
                        f"({', '.join(sorted(map(str, types)))}); a kernel needs one type")
    return EnumMember(cls, types.pop())


def is_plain_enum_member(value):
    """True for a member of an Enum that is not also a number (IntEnum members are ints)."""
    return isinstance(value, enum.Enum) and not isinstance(value, (int, float, complex))
