"""One typing for both backends (issue 12): kernels whose results depend on Numba's typing
(float literals are float64, integer arithmetic is at least 64 bits and wraps, floor division
and modulo of negative values, saturating float → int casts, math at the argument's
precision).  Unmarked: they run on the simulator here and on the GPU with ``pytest -m gpu``;
the expected values are the compiled kernel's, computed with NumPy at the typed dtypes."""
import math
import warnings

import numpy as np
import pytest

import cujit as cuda


@cuda.jit
def scale_literal(x, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = x[i] * 0.1


def test_float32_times_float_literal_computes_in_float64():
    x = np.linspace(-3, 3, 64).astype(np.float32)
    out = np.zeros(64, np.float64)
    scale_literal[1, 64](x, out)
    cuda.synchronize()
    expect = x.astype(np.float64) * 0.1
    assert np.array_equal(out, expect)
    assert not np.array_equal(out, (x * np.float32(0.1)).astype(np.float64))


@cuda.jit
def fmod_trunc(x, out, it):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = math.fmod(x[i] * 7.0, 1.3)
        it[i] = math.trunc(x[i])


def test_fmod_of_float32_times_literal_and_trunc_of_float32():
    x = np.array([0.5, -2.75, 3.3, 1e-3, -0.0, 100.25], np.float32)
    out = np.zeros(6, np.float64)
    it = np.zeros(6, np.int64)
    fmod_trunc[1, 6](x, out, it)
    cuda.synchronize()
    expect = np.fmod(x.astype(np.float64) * 7.0, 1.3)
    assert np.array_equal(out, expect)
    assert it.tolist() == [0, -2, 3, 0, 0, 100]


@cuda.jit
def int_ops(a, b, out):
    i = cuda.grid(1)
    if i < a.size:
        x = a[i]
        y = b[i]
        out[i, 0] = x + y           # int32 + int32 is int64: no 32-bit overflow
        out[i, 1] = x * y
        out[i, 2] = x // y          # floor division (0 for a zero divisor)
        out[i, 3] = x % y           # sign of the divisor
        out[i, 4] = -x
        out[i, 5] = x << 3
        out[i, 6] = (x * 4294967296) * 4294967296     # wraps at 64 bits
        out[i, 7] = x > y


def test_integer_semantics_match_numba_typing():
    a = np.array([7, -7, 2**31 - 1, -2**31, 0, 5], np.int32)
    b = np.array([2, 2, 2**31 - 1, -1, 3, 0], np.int32)
    out = np.zeros((6, 8), np.int64)
    int_ops[1, 6](a, b, out)
    cuda.synchronize()
    a64, b64 = a.astype(np.int64), b.astype(np.int64)
    with np.errstate(all="ignore"):
        expect = np.stack([a64 + b64, a64 * b64, np.floor_divide(a64, b64),
                           np.remainder(a64, b64), -a64, a64 << 3,
                           (a64 * 4294967296) * 4294967296, (a64 > b64).astype(np.int64)],
                          axis=1)
    assert out.tolist() == expect.tolist()
    assert out[2, 0] == 2**32 - 2 and out[4, 2] == 0 and out[5, 2] == 0 and out[5, 3] == 0
    assert out[1, 2] == -4 and out[1, 3] == 1


@cuda.jit
def float_ops(a, b, out):
    i = cuda.grid(1)
    if i < a.size:
        out[i, 0] = a[i] // b[i]
        out[i, 1] = a[i] % b[i]
        out[i, 2] = a[i] / b[i]
        out[i, 3] = a[i] ** 2


def test_float_floordiv_and_mod_of_negative_values_and_signed_zero():
    a = np.array([7.5, -7.5, -4.0, 4.0, 1.0, -0.0], np.float64)
    b = np.array([2.0, 2.0, 2.0, -2.0, 0.0, 3.0], np.float64)
    out = np.zeros((6, 4), np.float64)
    float_ops[1, 6](a, b, out)
    cuda.synchronize()
    assert out[:4, 0].tolist() == [3.0, -4.0, -2.0, -2.0]
    assert out[:4, 1].tolist() == [1.5, 0.5, 0.0, 0.0]
    # a zero remainder takes the divisor's sign (CPython, Numba): -4.0 % 2.0 == 0.0 and
    # 4.0 % -2.0 == -0.0
    assert math.copysign(1, out[2, 1]) == 1.0 and math.copysign(1, out[3, 1]) == -1.0
    assert out[4, 2] == math.inf and math.isnan(out[4, 1])
    assert out[:, 3].tolist() == (a * a).tolist()


@cuda.jit
def int_true_div(a, b, out):
    i = cuda.grid(1)
    if i < a.size:
        out[i] = a[i] / b[i]


def test_int_true_division_is_float64_and_divide_by_zero_is_inf():
    a = np.array([1, -1, 0, 7], np.int32)
    b = np.array([3, 0, 0, 2], np.int32)
    out = np.zeros(4, np.float64)
    int_true_div[1, 4](a, b, out)
    cuda.synchronize()
    assert out[0] == 1 / 3 and out[1] == -math.inf and math.isnan(out[2]) and out[3] == 3.5


@cuda.jit
def casts(x, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i, 0] = np.int32(x[i])
        out[i, 1] = int(x[i])
        out[i, 2] = np.uint8(np.int64(x[i]) + 250)


def test_float_to_int_casts_truncate_saturate_and_nan_is_the_minimum():
    x = np.array([2.9, -2.9, np.nan, 1e30, -1e30, 0.5], np.float64)
    out = np.zeros((6, 3), np.int64)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)    # NumPy's overflow warnings
        casts[1, 6](x, out)
        cuda.synchronize()
    # NaN → the minimum of int32 / int64, as an H200 computes it
    assert out[:, 0].tolist() == [2, -2, -2**31, 2**31 - 1, -2**31, 0]
    assert out[:, 1].tolist() == [2, -2, -2**63, 2**63 - 1, -2**63, 0]
    assert out[[0, 1, 5], 2].tolist() == [252, 248, 250]


@cuda.jit
def precision(x, out, kinds):
    i = cuda.grid(1)
    if i < x.size:
        s = math.sqrt(x[i])
        out[i] = s
        kinds[i] = s * np.float32(3.0) == np.float32(math.sqrt(x[i])) * np.float32(3.0)


def test_math_of_float32_stays_float32():
    x = np.array([2.0, 3.0, 5.0, 0.1], np.float32)
    out = np.zeros(4, np.float64)
    kinds = np.zeros(4, np.bool_)
    precision[1, 4](x, out, kinds)
    cuda.synchronize()
    assert np.array_equal(out, np.sqrt(x).astype(np.float64))
    assert kinds.all()


@cuda.jit
def accumulate(x, out):
    s = 0
    for k in range(x.size):
        s += x[k]
    out[0] = s
    t = np.float32(0)
    for k in range(x.size):
        t += x[k]
    out[1] = t


def test_variable_takes_its_unified_type():
    # s: int64 then float32 → one variable of type float64 (Numba's unification)
    x = np.full(10, 0.1, np.float32)
    out = np.zeros(2, np.float64)
    accumulate[1, 1](x, out)
    cuda.synchronize()
    s64 = np.float64(0)
    s32 = np.float32(0)
    for v in x:
        s64 += np.float64(v)
        s32 += v
    assert out[0] == s64 and out[1] == np.float64(s32) and out[0] != out[1]


@cuda.jit(device=True)
def halve(v):
    return v / 2


@cuda.jit
def with_device(a, out):
    i = cuda.grid(1)
    if i < a.size:
        out[i] = halve(a[i]) + 0.25
        a[i] += 1.5


def test_device_function_and_augmented_store_follow_typing():
    a = np.array([3, -3, 1], np.int16)
    out = np.zeros(3, np.float64)
    with_device[1, 3](a, out)
    cuda.synchronize()
    assert out.tolist() == [1.75, -1.25, 0.75]
    assert a.tolist() == [4, -1, 2]      # int16 + 1.5 → float64, stored truncated


@cuda.jit
def bool_ops(a, out):
    i = cuda.grid(1)
    if i < a.size:
        p = a[i] > 0
        out[i, 0] = ~p
        out[i, 1] = p + p
        out[i, 2] = p ^ True


def test_booleans_are_booleans():
    a = np.array([1, -1], np.int32)
    out = np.zeros((2, 3), np.int64)
    bool_ops[1, 2](a, out)
    cuda.synchronize()
    assert out.tolist() == [[0, 2, 0], [1, 0, 1]]


@pytest.mark.sim
def test_typed_rewrite_can_be_turned_off(monkeypatch):
    from cujit.simulator import typedexec
    from cujit import types as T

    def k(x, out):
        out[0] = x[0] * 0.1
    monkeypatch.setenv("CUJIT_SIM_TYPED", "0")
    assert typedexec.typed_function(k, (T.Array(T.float32, 1, "C"),) * 2).fn is k
    monkeypatch.setenv("CUJIT_SIM_TYPED", "1")
    fn = typedexec.typed_function(k, (T.Array(T.float32, 1, "C"),
                                      T.Array(T.float64, 1, "C"))).fn
    assert fn is not k and fn.__wrapped__ is k
    out = np.zeros(1)
    fn(np.array([3.7], np.float32), out)
    assert out[0] == np.float64(np.float32(3.7)) * 0.1


@pytest.mark.sim
def test_a_rewrite_failure_runs_the_kernel_untyped_with_a_warning(monkeypatch):
    from cujit.simulator import typedexec
    from cujit import types as T

    def k2(x, out):
        out[0] = x[0] + 1

    def boom(*a, **k):
        raise ValueError("no rewrite")
    monkeypatch.setattr(typedexec, "Rewriter", boom)
    with pytest.warns(RuntimeWarning, match=r"running .*k2 untyped \(ValueError: no rewrite\)"):
        fn = typedexec.typed_function(k2, (T.Array(T.int64, 1, "C"),) * 2).fn
    assert fn is k2


@cuda.jit
def no_barrier(out):
    i = cuda.grid(1)
    out[i] = cuda.threadIdx.x * 10 + cuda.lanemask_lt() % 7


@cuda.jit
def with_barrier(out):
    i = cuda.grid(1)
    cuda.syncthreads()
    out[i] = cuda.threadIdx.x * 10 + cuda.lanemask_lt() % 7


@pytest.mark.sim
def test_kernels_without_barriers_run_plain_and_give_the_same_values():
    from cujit import types as T
    from cujit.simulator import typedexec
    a = np.zeros(70, np.int64)
    b = np.zeros(70, np.int64)
    no_barrier[2, 35](a)
    with_barrier[2, 35](b)
    cuda.synchronize()
    arr = (T.Array(T.int64, 1, "C"),)
    assert not typedexec.needs_threads(typedexec.typed_function(no_barrier.py_func, arr))
    assert typedexec.needs_threads(typedexec.typed_function(with_barrier.py_func, arr))
    # the plain run and the greenlet schedule give the same values
    assert a.tolist() == b.tolist()
    assert a[:3].tolist() == [0, 10 + 1, 20 + 3]
    # activemask waits for the warp's lanes to converge (tests/usertrial/
    # test_sim_activemask.py), so a kernel calling it runs on the greenlet schedule
    assert typedexec.needs_threads(typedexec.typed_function(_activemask_only.py_func, arr))


@cuda.jit
def _activemask_only(out):
    out[cuda.grid(1)] = cuda.activemask()


@cuda.jit
def overflow_after_barrier(x, out):
    i = cuda.grid(1)
    cuda.syncthreads()
    out[i] = x[i] * np.float32(1e30)


def test_float_overflow_gives_inf_without_warnings_in_threads_that_wait():
    x = np.full(4, 1e30, np.float32)
    out = np.zeros(4, np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)    # NumPy's overflow warnings
        overflow_after_barrier[1, 4](x, out)
        cuda.synchronize()
    assert np.isinf(out).all()
