"""datetime64 / timedelta64 in kernels (numba-cuda's test_datetime; NumPy's results, NaT
included): arrays and scalars as arguments, ``-`` and ``+`` of datetimes and timedeltas,
timedeltas scaled by numbers and divided by each other, comparisons, units brought to the
finer one, and the typing errors."""
import numpy as np
import pytest

import cujit as cuda
from cujit import types as T

from _kl_helpers import ptx_of

NAT = np.datetime64("NaT")


def _dates(n=40):
    rng = np.random.default_rng(1)
    a = np.arange("2005-02", "2006-02", dtype="datetime64[D]")[:n]
    b = a + rng.integers(-10000, 10000, a.size)
    a[3] = NAT
    b[7] = NAT
    return a, b


def differences(start, end, delta, back, fwd):
    for i in range(cuda.grid(1), delta.size, cuda.gridsize(1)):
        delta[i] = end[i] - start[i]
        back[i] = end[i] - delta[i]
        fwd[i] = start[i] + delta[i]


def test_datetime_differences_as_numpy():
    a, b = _dates()
    delta = np.zeros(a.size, "m8[D]")
    back, fwd = np.zeros(a.size, "M8[D]"), np.zeros(a.size, "M8[D]")
    cuda.jit(differences)[1, 32](a, b, delta, back, fwd)
    np.testing.assert_array_equal(delta.view("i8"), (b - a).view("i8"))
    np.testing.assert_array_equal(back.view("i8"), (b - (b - a)).view("i8"))
    np.testing.assert_array_equal(fwd.view("i8"), (a + (b - a)).view("i8"))


def comparisons(dates, target, out):
    for i in range(cuda.grid(1), dates.size, cuda.gridsize(1)):
        out[i, 0] = dates[i] == target
        out[i, 1] = dates[i] != target
        out[i, 2] = dates[i] < target
        out[i, 3] = dates[i] >= target


@pytest.mark.parametrize("target", [np.datetime64("2005-02-06"), NAT,
                                    np.datetime64("2005-02-06T12", "h")], ids=str)
def test_datetime_comparisons_as_numpy(target):
    a, _ = _dates()
    out = np.zeros((a.size, 4), np.bool_)
    cuda.jit(comparisons)[1, 32](a, target, out)
    expect = np.stack([a == target, a != target, a < target, a >= target], axis=1)
    np.testing.assert_array_equal(out, expect)


def timedelta_arithmetic(d, e, k, f, out_td, out_f, out_i):
    for i in range(cuda.grid(1), d.size, cuda.gridsize(1)):
        out_td[i, 0] = d[i] * k
        out_td[i, 1] = f * d[i]
        out_td[i, 2] = d[i] / k
        out_td[i, 3] = d[i] % e[i]
        out_td[i, 4] = -d[i]
        out_td[i, 5] = d[i] // k
        out_td[i, 6] = d[i] // f
        out_f[i] = d[i] / e[i]
        out_i[i] = d[i] // e[i]


def test_timedelta_arithmetic_as_numpy():
    d = np.array([7, -7, 0, 5, -9, 12], "m8[h]")
    d[3] = np.timedelta64("NaT")
    e = np.array([2, 2, 3, 4, 0, -5], "m8[h]")
    n = d.size
    out_td, out_f, out_i = np.zeros((n, 7), "m8[h]"), np.zeros(n), np.zeros(n, np.int64)
    cuda.jit(timedelta_arithmetic)[1, 8](d, e, 3, 1.5, out_td, out_f, out_i)
    with np.errstate(all="ignore"):
        expect_td = np.stack([d * 3, 1.5 * d, d / 3, d % e, -d, d // 3, d // 1.5], axis=1)
        np.testing.assert_array_equal(out_td.view("i8"), expect_td.view("i8"))
        np.testing.assert_array_equal(out_f, d / e)
        np.testing.assert_array_equal(out_i, d // e)


def mixed_units(days, hours, out, same):
    i = cuda.grid(1)
    if i < days.size:
        out[i] = days[i] + hours[i]         # datetime64[D] + timedelta64[h] -> [h]
        same[i] = days[i] == days[i] + hours[i]


def test_units_are_brought_to_the_finer_one():
    days = np.array(["2005-02-01", "2005-02-03", "NaT"], "M8[D]")
    hours = np.array([5, -30, 1], "m8[h]")
    out, same = np.zeros(3, "M8[h]"), np.ones(3, np.bool_)
    cuda.jit(mixed_units)[1, 4](days, hours, out, same)
    np.testing.assert_array_equal(out.view("i8"), (days + hours).view("i8"))
    np.testing.assert_array_equal(same, days == days + hours)


def store_coarser(src, dst):
    i = cuda.grid(1)
    if i < src.size:
        dst[i] = src[i]


def test_a_store_into_a_coarser_unit_floors_as_numpy():
    src = np.array([-1, 25, -49, 0], "m8[h]")
    dst = np.zeros(4, "m8[D]")
    cuda.jit(store_coarser)[1, 4](src, dst)
    np.testing.assert_array_equal(dst.view("i8"), src.astype("m8[D]").view("i8"))


@pytest.mark.compile
def test_datetime_kernels_compile():
    a, b = _dates(8)
    z = np.zeros(8, "m8[D]")
    assert ".entry" in ptx_of(differences, a, b, z, a.copy(), a.copy())
    assert ".entry" in ptx_of(comparisons, a, np.datetime64("2005-02-06T12", "h"),
                              np.zeros((8, 4), np.bool_))
    d = np.zeros(4, "m8[h]")
    assert ".entry" in ptx_of(timedelta_arithmetic, d, d, 3, 1.5, np.zeros((4, 7), "m8[h]"),
                              np.zeros(4), np.zeros(4, np.int64))
    assert ".entry" in ptx_of(store_coarser, d, np.zeros(4, "m8[D]"))


def add_dates(a, out):
    out[0] = a[0] + a[1]


def years_and_days(y, d, out):
    out[0] = y[0] - d[0]


def date_into_delta(a, out):
    out[0] = a[0]


def date_vs_delta(a, d, out):
    out[0] = a[0] < d[0]


@pytest.mark.parametrize("fn,args,msg", [
    (add_dates, (np.zeros(2, "M8[D]"), np.zeros(1, "M8[D]")),
     "unsupported operand types for \\+: datetime64\\[D\\] and datetime64\\[D\\]"),
    (years_and_days, (np.zeros(1, "M8[Y]"), np.zeros(1, "m8[D]"), np.zeros(1, "M8[D]")),
     "unsupported operand types for -: datetime64\\[Y\\] and timedelta64\\[D\\]"),
    (date_into_delta, (np.zeros(1, "M8[D]"), np.zeros(1, "m8[D]")),
     "cannot store a value of type datetime64\\[D\\] into an array of timedelta64\\[D\\]"),
    (date_vs_delta, (np.zeros(1, "M8[D]"), np.zeros(1, "m8[D]"), np.zeros(1, np.bool_)),
     "cannot compare datetime64\\[D\\] with timedelta64\\[D\\]"),
], ids=["two datetimes", "years and days", "datetime into timedelta", "compare kinds"])
def test_datetime_typing_errors(fn, args, msg):
    with pytest.raises(cuda.TypingError, match=msg):
        cuda.jit(fn)[1, 1](*args)


def test_datetime_types():
    assert T.from_dtype(np.dtype("M8[D]")) is T.NPDatetime("D")
    assert T.typeof(np.timedelta64(3, "h")) is T.NPTimedelta("h")
    assert T.typeof(np.zeros(2, "M8[s]")) is T.Array(T.NPDatetime("s"), 1, "C")
    assert str(T.NPDatetime("D")) == "datetime64[D]" and T.NPTimedelta("D")(3) == \
        np.timedelta64(3, "D")
    with pytest.raises(TypeError, match="counts 2 units per step"):
        T.from_dtype(np.dtype("M8[2D]"))


def test_vectorize_datetime_signature_of_argument_types():
    dt = T.from_dtype(np.dtype("M8[D]"))

    @cuda.vectorize([(dt, dt)], target="cuda")
    def timediff(start, end):
        return end - start

    a, b = _dates(10)
    np.testing.assert_array_equal(timediff(a, b).view("i8"), (b - a).view("i8"))
    assert timediff.types == ["MM->m"]


def shift(out, when):
    out[0] = when


def test_a_scalar_of_another_unit_is_another_specialisation():
    k = cuda.jit(shift)
    out_d = np.zeros(1, "M8[s]")
    for _ in range(2):                        # the second launch may take the fast path
        k[1, 1](out_d, np.datetime64("2005-02-01", "D"))
    k[1, 1](out_d, np.datetime64("2005-02-01T00:00:07", "s"))
    assert out_d[0] == np.datetime64("2005-02-01T00:00:07", "s")
    assert len(k.signatures) == 2
