"""Fuzz (issue 16): device arrays against NumPy for every kind of setitem/copy source -
Python scalars, NumPy scalars of every dtype, sequences, host arrays, device arrays - on
generated shapes, dtypes and keys.  NumPy is the oracle for values *and* for the exception
type; a refused assignment leaves the device array untouched.

About 200 examples per property in CI; ``slow`` repeats each with 2,000."""
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st, HealthCheck

import cujit

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "arrays"))
from arrays_strategies import host_arrays, basic_keys, fill   # noqa: E402

NUMERIC = [np.dtype(t) for t in (np.bool_, np.int8, np.uint8, np.int16, np.uint16, np.int32,
                                 np.uint32, np.int64, np.uint64, np.float16, np.float32,
                                 np.float64, np.complex64, np.complex128)]

_HEALTH = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much]
CI = settings(max_examples=200, deadline=None, suppress_health_check=_HEALTH)
SLOW = settings(max_examples=2000, deadline=None, suppress_health_check=_HEALTH)

python_scalars = st.one_of(
    st.integers(-2**70, 2**70), st.integers(-300, 300), st.booleans(),
    st.floats(allow_nan=True, allow_infinity=True),
    st.complex_numbers(allow_nan=True, allow_infinity=True))


@st.composite
def numpy_scalars(draw):
    dtype = draw(st.sampled_from(NUMERIC))
    raw = draw(python_scalars)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return np.array(raw).astype(dtype)[()]
        except (OverflowError, TypeError, ValueError):
            return dtype.type(0)


scalars = st.one_of(python_scalars, numpy_scalars())


def _assign(target, key, value):
    """``target[key] = value`` with warnings silenced; the exception type or None."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            target[key] = value
        except Exception as exc:        # noqa: BLE001 - NumPy decides which type
            return type(exc)
    return None


def _check_against_numpy(a, key, value):
    want = a.copy()
    exc = _assign(want, key, value)
    d = cujit.to_device(a)
    got = _assign(d, key, value)
    assert got is exc, f"{a.dtype}[{key!r}] = {value!r}: NumPy {exc}, cujit {got}"
    out = d.copy_to_host()
    if exc is None:
        assert out.tobytes() == np.ascontiguousarray(want).tobytes() or \
            np.array_equal(out, want, equal_nan=a.dtype.kind in "fc")
    else:
        assert out.tobytes() == np.ascontiguousarray(a).tobytes()   # untouched


def _scalar_case(data):
    dtype = data.draw(st.sampled_from(NUMERIC))
    shape = data.draw(st.lists(st.integers(1, 4), min_size=1, max_size=3).map(tuple))
    a = fill(shape, dtype)
    key = data.draw(st.one_of(
        st.tuples(*[st.integers(0, n - 1) for n in shape]),     # one element
        basic_keys(shape, allow_none=False)))
    _check_against_numpy(a, key, data.draw(scalars))


def _sequence_case(data):
    dtype = data.draw(st.sampled_from(NUMERIC))
    n = data.draw(st.integers(1, 5))
    a = fill((n,), dtype)
    value = data.draw(st.one_of(
        st.lists(scalars, min_size=n, max_size=n),
        st.lists(scalars, min_size=n, max_size=n).map(tuple),
        st.lists(python_scalars, min_size=1, max_size=1)))
    _check_against_numpy(a, slice(None), value)


def _array_source_case(data):
    a = data.draw(host_arrays(dtype=data.draw(st.sampled_from(NUMERIC))))
    key = data.draw(basic_keys(a.shape, allow_none=False))
    target = a[key]
    shape = target.shape if isinstance(target, np.ndarray) else ()
    src_dtype = data.draw(st.sampled_from(NUMERIC))
    src = fill(shape, src_dtype, data.draw(st.integers(0, 9)))
    if data.draw(st.booleans()):
        src = cujit.to_device(src)
        want = a.copy()
        exc = _assign(want, key, src.copy_to_host())
        d = cujit.to_device(a)
        assert _assign(d, key, src) is exc
        if exc is None:
            assert d.copy_to_host().tobytes() == np.ascontiguousarray(want).tobytes()
        return
    _check_against_numpy(a, key, src)


@CI
@given(st.data())
def test_scalar_setitem_matches_numpy(data):
    _scalar_case(data)


@CI
@given(st.data())
def test_sequence_setitem_matches_numpy(data):
    _sequence_case(data)


@CI
@given(st.data())
def test_array_source_setitem_matches_numpy(data):
    _array_source_case(data)


@CI
@given(st.data())
def test_getitem_and_copies_match_numpy(data):
    a = data.draw(host_arrays())
    key = data.draw(basic_keys(a.shape))
    d = cujit.to_device(a)
    want = a[key]
    got = d[key]
    if isinstance(want, np.ndarray):
        got = got.copy_to_host()
        assert got.shape == want.shape and got.dtype == want.dtype
        assert got.tobytes() == np.ascontiguousarray(want).tobytes()
    else:
        assert np.asarray(got).tobytes() == np.asarray(want).tobytes()


@pytest.mark.slow
@SLOW
@given(st.data())
def test_scalar_setitem_matches_numpy_long(data):
    _scalar_case(data)


@pytest.mark.slow
@SLOW
@given(st.data())
def test_sequence_setitem_matches_numpy_long(data):
    _sequence_case(data)


@pytest.mark.slow
@SLOW
@given(st.data())
def test_array_source_setitem_matches_numpy_long(data):
    _array_source_case(data)
