"""NumPy whole-array reductions in kernels (``np.sum(a)``, ``a.max()``, the ``nan*``
functions, ``count_nonzero``) and ``literal_unroll`` loops over compile-time tuples of arrays
of different types (numba-cuda's test_array_reductions).  Values against NumPy's, zero signs
and NaN included; each kernel also compiles to PTX."""
import warnings

import numpy as np
import pytest

import cujit as cuda
from cujit import literal_unroll
from cujit import types as T

from _kl_helpers import ptx_of

NAN, INF = np.nan, np.inf
CASES = (
    np.float64([1.0, 2.0, 0.0, -0.0, 1.0, -1.5]),
    np.float64([-0.0, -1.5]),
    np.float64([-1.5, 2.5, INF, -INF]),
    np.float64([NAN, -1.5, 2.5, NAN, 3.0]),
    np.float64([NAN, NAN]),
    np.float64([[1.0, 1.5], [INF, NAN]]),
    np.float64([[0.0, -0.0], [1.5, 0.0]])[::-1],      # a negative-stride 2-d view
    np.float64([[0.0, -0.0], [-0.0, 0.0]]).T,
)
INTS = (np.int32([3, -7, 0, 12]), np.uint8([[200, 100], [0, 7]]), np.array([True, False]))
FLOAT_NAMES = ("sum", "prod", "mean", "var", "std", "min", "max", "nansum", "nanprod",
               "nanmean", "nanmin", "nanmax", "all", "any", "count_nonzero")


def _kernel(name, cases_name):
    src = (f"def kernel(out):\n    i = 0\n    for arr in literal_unroll({cases_name}):\n"
           f"        out[i] = np.{name}(arr)\n        i += 1\n")
    glb = {"np": np, "literal_unroll": literal_unroll, "CASES": CASES, "INTS": INTS}
    exec(compile(src, f"<reduction {name}>", "exec"), glb)
    return glb["kernel"]


def _same(got, want):
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    assert np.array_equal(got, want, equal_nan=True), (got, want)
    numbers = ~np.isnan(want)
    assert np.array_equal(np.signbit(got[numbers]), np.signbit(want[numbers])), (got, want)


def _numpy(name, cases):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)     # all-NaN slices
        return [getattr(np, name)(a) for a in cases]


@pytest.mark.parametrize("name", FLOAT_NAMES)
def test_reduction_of_float_arrays_matches_numpy(name):
    out = np.zeros(len(CASES))
    cuda.jit(_kernel(name, "CASES"))[1, 1](out)
    _same(out, _numpy(name, CASES))


@pytest.mark.parametrize("name", ["sum", "prod", "mean", "var", "std", "min", "max",
                                  "count_nonzero", "all", "any"])
def test_reduction_of_integer_and_bool_arrays_matches_numpy(name):
    out = np.zeros(len(INTS))
    cuda.jit(_kernel(name, "INTS"))[1, 1](out)
    _same(out, _numpy(name, INTS))


def methods(out, ints, a):
    out[0] = a.sum()
    out[1] = a.prod()
    out[2] = a.mean()
    out[3] = a.var()
    out[4] = a.std()
    out[5] = a.min()
    out[6] = a.max()
    out[7] = a.all()
    out[8] = a.any()
    out[9] = a[1:].sum()
    ints[0] = a.sum() > 0
    ints[1] = np.count_nonzero(a)


def test_array_methods_of_an_argument_array():
    a = np.array([[1.5, -2.0, 4.0], [0.5, 3.0, -1.0]])
    out = np.zeros(10)
    ints = np.zeros(2, np.int64)
    cuda.jit(methods)[1, 1](out, ints, a)
    want = [a.sum(), a.prod(), a.mean(), a.var(), a.std(), a.min(), a.max(), a.all(),
            a.any(), a[1:].sum()]
    _same(out, want)
    assert ints.tolist() == [1, 6]


def result_types(f32, i64, u64, c64, a32, ai, au, ac):
    f32[0] = np.sum(a32)
    f32[1] = np.mean(a32)
    i64[0] = np.sum(ai)
    u64[0] = np.sum(au)
    c64[0] = np.sum(ac)
    f32[2] = np.var(ac)


def test_result_types_follow_numpy():
    a32 = np.float32([0.1, 0.2, 0.3])
    ai = np.int8([100, 100, 100])          # the int8 sum does not wrap: int64 (NumPy's)
    au = np.uint32([4000000000, 4000000000])
    ac = np.complex64([1 + 2j, 3 - 1j])
    f32, i64 = np.zeros(3, np.float32), np.zeros(1, np.int64)
    u64, c64 = np.zeros(1, np.uint64), np.zeros(1, np.complex64)
    cuda.jit(result_types)[1, 1](f32, i64, u64, c64, a32, ai, au, ac)
    assert f32[0] == np.float32(np.float32(np.float32(0.1) + np.float32(0.2)) + np.float32(0.3))
    assert i64[0] == 300 and u64[0] == 8000000000 and c64[0] == 4 + 1j
    assert f32[2] == pytest.approx(np.var(ac), rel=1e-6)


def empty_min(out, a):
    out[0] = np.min(a)


def test_min_of_an_empty_array_raises_value_error():
    # NumPy's error for a reduction without an identity, raised in the thread
    with pytest.raises(ValueError, match="zero-size array"):
        cuda.jit(empty_min, debug=True, opt=False)[1, 1](np.zeros(1), np.zeros(0))


def test_sum_and_mean_of_an_empty_array():
    def k(out, a):
        out[0] = np.sum(a)
        out[1] = np.mean(a)
        out[2] = np.count_nonzero(a)
    out = np.ones(3)
    cuda.jit(k)[1, 1](out, np.zeros(0))
    assert out[0] == 0.0 and not np.signbit(out[0]) and np.isnan(out[1]) and out[2] == 0


@pytest.mark.parametrize("body,match", [
    ("out[0] = np.sum(a, axis=0)", "keyword"),
    ("out[0] = a.sum(0)", "takes no arguments"),
    ("out[0] = np.sum(a, a)", "takes one array"),
    ("out[0] = np.sum(1.5)", "reduces an array"),
    ("out[0] = np.max(c).real", "complex"),
])
def test_reduction_errors_are_typing_errors(body, match):
    src = f"def k(out, a, c):\n    {body}\n"
    glb = {"np": np}
    exec(src, glb)
    with pytest.raises(cuda.TypingError, match=match):
        cuda.jit(glb["k"])[1, 1](np.zeros(1), np.zeros(2), np.zeros(2, np.complex128))


MIXED = (np.int16([1, 2]), np.float32([[0.5], [1.5]]), (3, 4.5))


def unrolled_sizes(out):
    i = 0
    for x in literal_unroll(MIXED):
        out[i] = len(x)
        i += 1
    else:
        out[3] = i


def test_literal_unroll_gives_each_element_its_own_type():
    out = np.zeros(4)
    cuda.jit(unrolled_sizes)[1, 1](out)
    assert out.tolist() == [2, 2, 2, 3]


def unroll_with_break(out):
    for x in literal_unroll(MIXED):
        if len(x) > 1:
            break


def unroll_of_a_local(out):
    t = (1, 2.5)
    for x in literal_unroll(t):     # a local: its length is not known before typing
        out[0] = x


def out_of_range(out):
    out[0] = MIXED[5][0]


@pytest.mark.parametrize("fn,match", [(unroll_with_break, "break/continue"),
                                      (unroll_of_a_local, "global or closure variable"),
                                      (out_of_range, "constant integer in range")])
def test_literal_unroll_errors_are_typing_errors(fn, match):
    with pytest.raises(cuda.TypingError, match=match):
        cuda.jit(fn)[1, 1](np.zeros(1))


@pytest.mark.compile
@pytest.mark.parametrize("name", ["sum", "mean", "std", "nanmin", "max", "count_nonzero",
                                  "all"])
def test_reductions_compile(name):
    assert ".entry" in ptx_of(_kernel(name, "CASES"), argtypes=(T.float64[::1],))


@pytest.mark.compile
def test_array_methods_compile():
    sig = (T.float64[::1], T.int64[::1], T.float64[:, ::1])
    assert ".entry" in ptx_of(methods, argtypes=sig)


def row_sums(out, m):
    i = cuda.grid(1)
    if i < m.shape[0]:
        out[i] = m[i].sum() + np.max(m[i])


def test_reductions_per_thread_over_rows():
    m = np.arange(64 * 5, dtype=np.float64).reshape(64, 5) - 100.0
    out = np.zeros(64)
    cuda.jit(row_sums)[2, 32](out, m)
    np.testing.assert_array_equal(out, m.sum(axis=1) + m.max(axis=1))
