"""Layout arithmetic against NumPy (no device needed)."""
import ctypes

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st, HealthCheck

from cujit.arrays import layout as L
from arrays_strategies import host_arrays, basic_keys, shapes

pytestmark = pytest.mark.sim

# a loaded CI machine must not turn slow data generation into a failure
_SLOW = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much]


def _addr(a):
    return a.__array_interface__["data"][0]


@settings(max_examples=300, deadline=None, suppress_health_check=_SLOW)
@given(st.data())
def test_index_matches_numpy(data):
    a = data.draw(host_arrays())
    if data.draw(st.booleans()) and a.ndim:
        a = a[::-1]
    key = data.draw(basic_keys(a.shape))
    off, shape, strides, elem = L.index(a.shape, a.strides, key)
    v = a[key]
    if elem:
        assert not isinstance(v, np.ndarray)
        start = _addr(a) + off
        raw = ctypes.string_at(start, a.dtype.itemsize)
        assert raw == np.asarray(v, dtype=a.dtype).tobytes()
    else:
        assert isinstance(v, np.ndarray)
        assert shape == v.shape
        if v.size:
            assert strides == v.strides
            assert _addr(a) + off == _addr(v)


@settings(max_examples=100, deadline=None, suppress_health_check=_SLOW)
@given(st.data())
def test_index_errors_match_numpy(data):
    a = data.draw(host_arrays())
    key = data.draw(st.one_of(st.integers(-8, 8),
                              st.tuples(st.integers(-8, 8), st.integers(-8, 8)),
                              st.tuples(st.integers(-3, 3), st.integers(-3, 3),
                                        st.integers(-3, 3), st.integers(-3, 3),
                                        st.integers(-3, 3))))
    try:
        a[key]
    except IndexError:
        with pytest.raises(IndexError):
            L.index(a.shape, a.strides, key)
    else:
        L.index(a.shape, a.strides, key)


def test_index_rejects_non_basic_keys():
    with pytest.raises(IndexError, match="valid indices"):     # NumPy's type and text
        L.index((3,), (8,), 1.5)
    with pytest.raises(TypeError, match="bool"):
        L.index((3,), (8,), True)
    with pytest.raises(TypeError):
        L.index((3,), (8,), [0, 1])
    with pytest.raises(IndexError, match="single ellipsis"):
        L.index((3, 3), (24, 8), (Ellipsis, Ellipsis))
    with pytest.raises(IndexError, match="too many indices"):
        L.index((3,), (8,), (0, 0))


@settings(max_examples=200, deadline=None, suppress_health_check=_SLOW)
@given(st.data())
def test_contiguity_and_axis_order_match_numpy(data):
    a = data.draw(host_arrays())
    if a.ndim:
        perm = data.draw(st.permutations(range(a.ndim)))
        a = a.transpose(perm)
        key = data.draw(basic_keys(a.shape, allow_int=False, allow_none=False))
        a = a[key]
    isz = a.dtype.itemsize
    assert L.is_c_contiguous(a.shape, a.strides, isz) == a.flags.c_contiguous
    assert L.is_f_contiguous(a.shape, a.strides, isz) == a.flags.f_contiguous
    want = np.empty_like(a, order="K").strides
    got = L.packed_strides_like(a.shape, a.strides, isz)
    if a.size:
        # strides of length-1 axes are free; compare the others
        assert [g for g, n in zip(got, a.shape) if n != 1] == \
               [w for w, n in zip(want, a.shape) if n != 1]
    assert L.is_c_contiguous(a.shape, got, isz) or L.is_f_contiguous(a.shape, got, isz) or \
        L.extent(a.shape, got, isz)[1] == a.size * isz


@settings(max_examples=200, deadline=None, suppress_health_check=_SLOW)
@given(st.data())
def test_reshape_matches_numpy(data):
    a = data.draw(host_arrays())
    if a.ndim and data.draw(st.booleans()):
        a = a[data.draw(basic_keys(a.shape, allow_int=False, allow_none=False))]
    n = a.size
    divs = [d for d in range(1, 7) if n % d == 0] if n else [1, 2]
    d = data.draw(st.sampled_from(divs))
    newshape = (d, -1) if n else (d, 0)
    order = data.draw(st.sampled_from(["C", "F"]))
    try:
        want = a.reshape(newshape, order=order, copy=False)
    except ValueError:
        with pytest.raises(NotImplementedError, match="needs a copy"):   # the size always fits
            L.reshape(a.shape, a.strides, a.dtype.itemsize, newshape, order)
        return
    shape, strides = L.reshape(a.shape, a.strides, a.dtype.itemsize, newshape, order)
    assert shape == want.shape
    if want.size:
        assert [s for s, m in zip(strides, shape) if m != 1] == \
               [s for s, m in zip(want.strides, shape) if m != 1]


def test_reshape_errors():
    with pytest.raises(ValueError, match="cannot reshape"):
        L.reshape((6,), (8,), 8, (4, -1))
    with pytest.raises(ValueError, match="one unknown"):
        L.reshape((6,), (8,), 8, (-1, -1))
    with pytest.raises(ValueError, match="order"):
        L.reshape((6,), (8,), 8, (6,), "Z")


@settings(max_examples=150, deadline=None, suppress_health_check=_SLOW)
@given(st.data())
def test_view_dtype_matches_numpy(data):
    a = data.draw(host_arrays(dtype=np.dtype(data.draw(st.sampled_from(
        ["i1", "i2", "i4", "f8", "c16"])))))
    if a.ndim and data.draw(st.booleans()):
        a = a[data.draw(basic_keys(a.shape, allow_int=False, allow_none=False))]
    new = np.dtype(data.draw(st.sampled_from(["u1", "i2", "f4", "i8", "c16"])))
    try:
        want = a.view(new)
    except ValueError:
        with pytest.raises(ValueError):
            L.view_dtype(a.shape, a.strides, a.dtype.itemsize, new.itemsize)
        return
    shape, strides = L.view_dtype(a.shape, a.strides, a.dtype.itemsize, new.itemsize)
    assert shape == want.shape
    if want.size:
        assert [s for s, m in zip(strides, shape) if m != 1] == \
               [s for s, m in zip(want.strides, shape) if m != 1]


@settings(deadline=None, suppress_health_check=_SLOW)
@given(shapes)
def test_squeeze_transpose_match_numpy(shape):
    a = np.empty(shape, np.int16)
    assert L.squeeze(a.shape, a.strides) == (np.squeeze(a).shape, np.squeeze(a).strides)
    assert L.transpose(a.shape, a.strides) == (a.T.shape, a.T.strides)
    ones = tuple(i for i, n in enumerate(shape) if n == 1)
    if ones:
        s = np.squeeze(a, axis=ones[0])
        assert L.squeeze(a.shape, a.strides, ones[0]) == (s.shape, s.strides)


def test_squeeze_transpose_errors():
    with pytest.raises(ValueError, match="size not equal to one"):
        L.squeeze((2, 1), (8, 8), 0)
    with pytest.raises(np.exceptions.AxisError):
        L.squeeze((2, 1), (8, 8), 5)
    with pytest.raises(ValueError, match="repeated axis in transpose"):   # NumPy's words
        L.transpose((2, 3), (24, 8), (0, 0))


def test_normalize_shape():
    assert L.normalize_shape(np.int32(5)) == (5,)
    assert L.normalize_shape((np.int64(2), 3)) == (2, 3)
    assert L.normalize_shape(()) == ()
    with pytest.raises(TypeError, match="2.0"):
        L.normalize_shape((2.0, 3))
    with pytest.raises(TypeError):
        L.normalize_shape(1.5)
    with pytest.raises(ValueError, match="negative"):
        L.normalize_shape((-1,))
    with pytest.raises(TypeError, match="bool"):
        L.normalize_shape(True)


def test_normalize_strides_and_dtype():
    with pytest.raises(ValueError, match="2 entries"):
        L.normalize_strides((8, 8), 3)
    with pytest.raises(TypeError):
        L.normalize_strides(("a",), 1)
    with pytest.raises(TypeError, match="not a data type"):
        L.normalize_dtype("notadtype")
    assert L.normalize_dtype("float32") == np.float32


def test_extent_negative_and_empty():
    assert L.extent((3,), (-8,), 8) == (-16, 8)
    assert L.extent((0, 4), (32, 8), 8) == (0, 0)
    assert L.extent((), (), 4) == (0, 4)
