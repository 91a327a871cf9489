"""Hypothesis strategies shared by the arrays tests: NumPy arrays of generated shapes, dtypes
(including structured), orders and basic-indexing keys.  NumPy is the oracle."""
import numpy as np
from hypothesis import strategies as st

STRUCT = np.dtype([("a", np.int32), ("b", np.float64), ("c", np.uint8, (2,))])
DTYPES = [np.dtype(t) for t in (np.int8, np.uint16, np.int32, np.int64, np.float32,
                                np.float64, np.complex64, np.bool_)] + [STRUCT]

dtypes = st.sampled_from(DTYPES)
shapes = st.lists(st.integers(0, 5), min_size=0, max_size=4).map(tuple)
nonempty_shapes = st.lists(st.integers(1, 5), min_size=0, max_size=4).map(tuple)


def fill(shape, dtype, seed=0):
    """Deterministic distinct-ish contents for any dtype."""
    n = int(np.prod(shape, dtype=np.int64))
    raw = (np.arange(n * dtype.itemsize, dtype=np.int64) * 37 + seed * 11) % 251
    out = raw.astype(np.uint8).view(dtype)
    if dtype.kind == "b":
        out = (raw[:n] % 2).astype(np.bool_)
    elif dtype.kind in "fc":
        out = (np.arange(n) * 1.5 + seed).astype(dtype)
    return out.reshape(shape)


@st.composite
def host_arrays(draw, shape=None, dtype=None, allow_f=True):
    shape = draw(shapes) if shape is None else shape
    dtype = draw(dtypes) if dtype is None else dtype
    a = fill(shape, dtype, draw(st.integers(0, 9)))
    if allow_f and draw(st.booleans()):
        a = np.asfortranarray(a)
    return a


def _slice_for(n):
    return st.builds(slice,
                     st.one_of(st.none(), st.integers(-n - 2, n + 2)),
                     st.one_of(st.none(), st.integers(-n - 2, n + 2)),
                     st.one_of(st.none(), st.sampled_from([1, 2, 3, -1, -2, -3])))


@st.composite
def basic_keys(draw, shape, allow_int=True, allow_none=True):
    """A basic-indexing key valid for ``shape`` (ints in range, slices, one Ellipsis, None)."""
    parts = []
    for n in shape:
        choices = [_slice_for(n)]
        if allow_int and n > 0:
            choices.append(st.integers(-n, n - 1))
        parts.append(draw(st.one_of(*choices)))
    if parts and draw(st.booleans()):
        # replace a run of trailing items with Ellipsis
        k = draw(st.integers(0, len(parts)))
        parts = parts[:k] + [Ellipsis]
    if allow_none and draw(st.integers(0, 4)) == 0:
        parts.insert(draw(st.integers(0, len(parts))), None)
    if len(parts) == 1 and draw(st.booleans()):
        return parts[0]
    return tuple(parts)
