"""The cujit type of a CUDA vector value (:class:`VectorType`, a namedtuple type of ``n``
members of one base type) and the base class of the vector value classes
(:class:`VectorValue`: construction from scalars and vectors with C's conversions).  The 40
value classes themselves (``cujit.float32x4``...) and numba's names for them are made in
:mod:`cujit.vector_types`.
"""
import math

import numpy as np

from . import core as T
from .tuples import NamedUniTuple

__all__ = ["VectorType", "VectorValue"]


class VectorType(NamedUniTuple):
    """The cujit type of a vector value: ``num_elements`` members of ``base_type`` named
    ``.x`` … ``.w``; ``pyclass`` is the value class (``cujit.float32x4``)."""

    def __init__(self, dtype, count, pyclass):
        super().__init__(dtype, count, pyclass)
        self.name = pyclass.__name__

    @property
    def base_type(self):
        return self.dtype

    @property
    def num_elements(self):
        return self.count


class VectorValue(tuple):
    """Base of the vector value classes.  ``cls(*parts)``: ``parts`` are scalars (converted
    to the base type: an integer wraps, a float truncates) and vectors of the same base type
    whose members, in order, make the ``num_elements`` members.  TypeError for a part that
    is neither, a vector of another base type, or a member count other than
    ``num_elements``; ValueError for a NaN, infinite or out-of-range float given to an
    integer vector."""
    __slots__ = ()
    name = "?"
    base_type = None
    num_elements = 0
    aliases = ()

    def __new__(cls, *parts):
        if cls.base_type is None:
            raise TypeError("VectorValue is abstract: construct a vector type such as "
                            "cujit.float32x4")
        members = []
        convert = cls.base_type.dtype.type
        for p in parts:
            if isinstance(p, VectorValue):
                if p.base_type is not cls.base_type:
                    raise TypeError(f"{cls.name}() takes vectors of {cls.base_type}, got "
                                    f"{type(p).name} {p!r}")
                members.extend(p)
            elif isinstance(p, (bool, int, float, np.integer, np.floating, np.bool_)):
                members.append(p)
            else:
                raise TypeError(f"{cls.name}() takes scalars and {cls.base_type} vectors, "
                                f"got {p!r:.60}")
        if len(members) != cls.num_elements:
            raise TypeError(f"{cls.name}() needs {cls.num_elements} member(s) in all, got "
                            f"{len(members)} from {len(parts)} argument(s)")
        with np.errstate(all="ignore"):     # C conversion: out-of-range values wrap
            return tuple.__new__(cls, [convert(_c_convert(m, cls.base_type)) for m in members])

    def __getnewargs__(self):
        return tuple(self)

    def __repr__(self):
        return f"{self.name}({', '.join(repr(m.item()) for m in self)})"

    def __setattr__(self, attr, value):
        raise AttributeError(f"{self.name} members are read-only (vector values are "
                             f"immutable); build a new {self.name}")


def _c_convert(value, base):
    """``value`` converted to ``base`` on the host: an integer to an integer type wraps (as
    ``cujit.int32(0xFFFFFFFF) == -1``); a float to an integer type truncates toward zero.
    ValueError for a NaN, infinite or out-of-range float converted to an integer type (C
    leaves it undefined; in kernels cujit's cast rules apply)."""
    if isinstance(base, T.Integer) and isinstance(value, (float, np.floating)):
        info = np.iinfo(base.dtype)
        if not (math.isfinite(value) and info.min - 1 < value < info.max + 1):
            raise ValueError(f"{value!r} is out of the range of {base} (a {base} vector "
                             f"member)")
        return int(value)
    if isinstance(base, T.Integer):
        bits = base.bitwidth
        value = int(value) & ((1 << bits) - 1)
        if base.signed and value >= 1 << (bits - 1):
            value -= 1 << bits
    return value
