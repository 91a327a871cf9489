"""``for ... in range(...)`` keeps Python's semantics now that the trip count is computed before
the loop (``lower_ops.range_count``): the generated IR runs on the host (see
``test_lower_cpu``) and hypothesis compares the items, their count, the loop variable after the
loop and ``else`` with Python's ``range``, for runtime steps of either sign and for start/stop
anywhere in int64 or int32 (differences that do not fit the type must not wrap the count)."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from cujit import types as T
from test_lower_cpu import run

pytestmark = pytest.mark.compile

I64 = (-2 ** 63, 2 ** 63 - 1)
I32 = (-2 ** 31, 2 ** 31 - 1)


def ranged(out, start, stop, step):
    n = 0
    first = 0
    last = 0
    i = 7               # stays 7 when the range is empty
    for i in range(start, stop, step):
        if n == 0:
            first = i
        last = i
        n += 1
    else:
        out[4] = 1
    out[0] = n
    out[1] = first
    out[2] = last
    out[3] = i


def _bounded(lo, hi):
    """(start, stop, step) of at most ~60 items anywhere in [lo, hi]."""
    def make(start, step, k, d):
        stop = start + k * step + d
        return start, min(max(stop, lo), hi), step
    return st.builds(make, st.integers(lo, hi),
                     st.one_of(st.integers(-3, 3), st.integers(lo, hi)).filter(bool),
                     st.integers(0, 60), st.integers(-5, 5))


def _check(t, start, stop, step):
    out = np.zeros(5, np.int64)
    run(ranged, (T.int64[::1], t, t, t), out, start, stop, step)
    r = range(start, stop, step)
    exp = [len(r), r[0] if r else 0, r[-1] if r else 0, r[-1] if r else 7, 1]
    assert out.tolist() == exp, (start, stop, step)


@settings(max_examples=200, deadline=None)
@given(_bounded(*I64))
def test_range_int64_matches_python(args):
    _check(T.int64, *args)


@settings(max_examples=100, deadline=None)
@given(_bounded(*I32))
def test_range_int32_matches_python(args):
    _check(T.int32, *args)


@pytest.mark.parametrize("start,stop,step", [
    (I64[0], I64[1], 2 ** 62), (I64[1], I64[0], -2 ** 62), (I64[0], I64[1], I64[1]),
    (I64[1], I64[0], I64[0]), (0, I64[1], 2 ** 61), (-1, I64[0], I64[0]),
    (I64[1] - 2, I64[1], 1), (I64[0] + 2, I64[0], -1), (5, 5, 1), (5, 5, -1)])
def test_range_at_int64_limits(start, stop, step):
    _check(T.int64, start, stop, step)


def test_range_zero_runtime_step_runs_no_iteration():
    # Python raises ValueError; a kernel cannot, and must not loop forever either
    out = np.zeros(5, np.int64)
    run(ranged, (T.int64[::1], T.int64, T.int64, T.int64), out, 0, 10, 0)
    assert out.tolist() == [0, 0, 0, 7, 1]


def breaks(out, n, step):
    t = 0
    for i in range(n, -1, step):
        if i % 5 == 0:
            continue
        if i < 3:
            break
        t += i
    else:
        t = -t
    out[0] = t
    out[1] = i


@pytest.mark.parametrize("n,step", [(20, -1), (20, -3), (2, -1), (-1, -1), (9, 2)])
def test_range_break_continue_else(n, step):
    out = np.zeros(2, np.int64)
    run(breaks, (T.int64[::1], T.int64, T.int64), out, n, step)
    t, i, broke = 0, None, False
    for i in range(n, -1, step):
        if i % 5 == 0:
            continue
        if i < 3:
            broke = True
            break
        t += i
    if not broke:
        t = -t
    assert out[0] == t
    if i is not None:
        assert out[1] == i


def backwards(a, out, n):
    t = 0.0
    for i in range(n - 1, -n - 1, -1):      # reaches negative indices when n > 0
        t = t * 3.0 + a[i]
    out[0] = t


@pytest.mark.parametrize("n", [0, 1, 2, 5])
def test_descending_range_keeps_negative_index_wrap(n):
    a = np.arange(1.0, 6.0)
    out = np.zeros(1)
    run(backwards, (T.float64[::1], T.float64[::1], T.int64), a, out, n)
    t = 0.0
    for i in range(n - 1, -n - 1, -1):
        t = t * 3.0 + a[i]
    assert out[0] == t
