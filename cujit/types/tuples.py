"""Namedtuple types (Numba's ``NamedUniTuple`` / ``NamedTuple``): a tuple type that also
knows the namedtuple class and its field names, so kernels read fields by name
(``p.x``) as well as by index.  Re-exported by ``cujit.types``.
"""
from .core import Tuple, UniTuple

__all__ = ["NamedUniTuple", "NamedTuple", "named_tuple"]


class NamedUniTuple(UniTuple):
    """A namedtuple of ``count`` values of one type: ``pyclass`` (the namedtuple class) and
    ``fields`` (its field names), read by name or by index in kernels (Numba's
    ``NamedUniTuple``)."""

    @classmethod
    def _key_of(cls, dtype, count, pyclass):
        return (dtype, int(count), pyclass)

    def __init__(self, dtype, count, pyclass):
        super().__init__(dtype, count)
        self.pyclass = pyclass
        self.fields = tuple(pyclass._fields)
        self.name = f"{pyclass.__name__}({', '.join(map(str, self.types))})"

    def _ctor_args(self):
        return (self.dtype, self.count, self.pyclass)


class NamedTuple(Tuple):
    """A heterogeneous namedtuple (Numba's ``NamedTuple``): ``types``, ``pyclass``,
    ``fields``.  Build both kinds with :func:`named_tuple`."""

    def __new__(cls, types, pyclass):
        return object.__new__(cls)

    @classmethod
    def _key_of(cls, types, pyclass):
        return (tuple(types), pyclass)

    def __init__(self, types, pyclass):
        super().__init__(types)
        self.pyclass = pyclass
        self.fields = tuple(pyclass._fields)
        self.name = f"{pyclass.__name__}({', '.join(map(str, self.types))})"

    def _ctor_args(self):
        return (self.types, self.pyclass)


def named_tuple(types, pyclass):
    """The type of a ``pyclass`` (namedtuple class) value whose members have ``types``."""
    types = tuple(types)
    if types and all(t is types[0] for t in types):
        return NamedUniTuple(types[0], len(types), pyclass)
    return NamedTuple(types, pyclass)
