"""What the typer records about nodes that are not calls, for the backends: one frozen
dataclass per kind of record, kept in ``TypedFunction.info[node]`` beside the calls'
:class:`~.callkinds.Call` records.  Backends tell them apart with ``isinstance``; why
classes and not ``(key, data)`` tuples: a misspelled class name fails at import, a
misspelled key string was a silently dead branch.
"""
import dataclasses

__all__ = ["SpecialRegister", "IntIndex", "TupleIndex", "SliceIndex", "ArrayIndex",
           "PointerIndex", "RecordField", "TupleSlice", "TupleItem", "TupleDynamic", "SliceStore", "AugAssign",
           "Iteration", "Raise", "Assert"]


@dataclasses.dataclass(frozen=True)
class SpecialRegister:
    """``threadIdx.x`` and the like (a ``Name`` or ``Attribute``): the register
    (``'threadIdx'``, ``'blockIdx'``, ``'blockDim'``, ``'gridDim'``, ``'laneid'``) and its
    axis (``'x'``, ``'y'``, ``'z'``; None for ``laneid``)."""
    register: str
    axis: object = None


@dataclasses.dataclass(frozen=True, eq=False)
class IntIndex:
    """One integer index of an array subscript: its expression node."""
    node: object


@dataclasses.dataclass(frozen=True, eq=False)
class TupleIndex:
    """One integer of a tuple used as the whole index (``a[idx]``, ``idx`` a homogeneous
    tuple of integers): the tuple's node and the position in it."""
    node: object
    position: int


@dataclasses.dataclass(frozen=True, eq=False)
class SliceIndex:
    """One slice of an array subscript: its ``ast.Slice`` (bounds typed as integers)."""
    node: object


@dataclasses.dataclass(frozen=True, eq=False)
class ArrayIndex:
    """``arr[...]`` of an array: ``parts``, one :class:`IntIndex` / :class:`TupleIndex` /
    :class:`SliceIndex` per indexed dimension, as :func:`.indexing.index_parts` gives them
    (fewer than the array's dimensions: the rest are full slices)."""
    parts: list


@dataclasses.dataclass(frozen=True, eq=False)
class PointerIndex:
    """``ptr[i]`` of a C pointer (``CPointer``): the integer index expression ``node``.  No
    wrap-around and no bounds on the GPU (C's ``ptr[i]``, as numba.cuda)."""
    node: object


@dataclasses.dataclass(frozen=True)
class RecordField:
    """``rec['name']`` of a record: the field's name."""
    name: str


@dataclasses.dataclass(frozen=True)
class TupleSlice:
    """``tup[a:b:c]`` with constant bounds: the positions taken, in order."""
    indices: tuple


@dataclasses.dataclass(frozen=True)
class TupleItem:
    """``tup[k]`` with a constant ``k``: the position (made non-negative)."""
    index: int


@dataclasses.dataclass(frozen=True)
class TupleDynamic:
    """``tup[i]`` of a homogeneous tuple with a run-time integer ``i``."""


@dataclasses.dataclass(frozen=True, eq=False)
class SliceStore:
    """``arr[..., :] = value`` into a view: its index ``parts`` (as :class:`ArrayIndex`) and
    whether the value is an array copied element-wise (``copy``) or a scalar filled in."""
    parts: list
    copy: bool


@dataclasses.dataclass(frozen=True)
class AugAssign:
    """``target op= value``: the target's current type and the result type of the
    operation (stored back at the target's type)."""
    current: object
    result: object


@dataclasses.dataclass(frozen=True)
class Iteration:
    """``for x in seq`` over an array, a homogeneous tuple, or ``enumerate``/``zip``
    (``rules.IterType``): the iterated value's type (a ``range`` loop records nothing)."""
    over: object


@dataclasses.dataclass(frozen=True, eq=False)
class Raise:
    """``raise cls(args)``: the exception class and its constant arguments."""
    cls: type
    args: tuple


@dataclasses.dataclass(frozen=True, eq=False)
class Assert:
    """``assert test, msg`` (compiled in debug mode): ``AssertionError`` and the message."""
    cls: type
    args: tuple
