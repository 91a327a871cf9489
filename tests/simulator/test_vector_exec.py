"""The block-vectorized executor (cujit/simulator/vectorgen.py): each kernel shape runs on
the vector path (the launch counter says so) and ends bit-for-bit equal to the per-thread
executor (``CUJIT_SIM_VECTOR=0``); errors are the per-thread ones; kernels it does not
handle run per thread."""
import math
import sys

import numpy as np
import pytest

import cujit as cuda

pytestmark = pytest.mark.sim     # compares the simulator's two executors
from cujit.simulator.errors import (BarrierDivergenceError, DataRaceError,
                                    OutOfBoundsError)
from cujit.simulator.kernel import simulate

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from vector_helpers import compare, counts, raised, run  # noqa: E402

sys.path.insert(0, __file__.rsplit("/", 2)[0])
from kernels_common import benchmark_kernels, matmul_tiled  # noqa: E402

F32_EDGE = np.array([0.0, -0.0, 1.5, -2.5, np.nan, np.inf, -np.inf, 1e-45, -1e-45, 3e38,
                     -3e38, 7.0, 0.1, 2 ** 31, -2 ** 31, 2 ** 24 + 1], np.float32)
F64_EDGE = np.array([0.0, -0.0, 1.5, -2.5, np.nan, np.inf, -np.inf, 5e-324, -5e-324, 1e308,
                     -1e308, 7.0, 0.1, 2.0 ** 63, -2.0 ** 63, 2.0 ** 53 + 2], np.float64)
I64_EDGE = np.array([0, 1, -1, 7, -7, 2 ** 31 - 1, -2 ** 31, 2 ** 32, 2 ** 63 - 1, -2 ** 63,
                     3, -3, 64, 65, 100, -100], np.int64)


# -- simple shapes ------------------------------------------------------------------------
def axpy(a, x, y, out, n):
    i = cuda.grid(1)
    if i < n:
        out[i] = a * x[i] + y[i]


def test_elementwise_guard(monkeypatch):
    x = np.arange(100, dtype=np.float32) * np.float32(0.37)
    y = np.linspace(-3, 3, 100).astype(np.float32)
    out = compare(monkeypatch, axpy, 4, 32, np.float32(2.5), x, y, np.zeros(100, np.float32),
                  100)[3]
    np.testing.assert_array_equal(out[:100], np.float32(2.5) * x + y)


def early_return(x, out):
    i = cuda.threadIdx.x + cuda.blockIdx.x * cuda.blockDim.x
    if i >= x.size:
        return
    out[i] = x[i] * 0.1       # float32 * float64 literal: float64 (Numba's typing)


def test_early_return_and_literal_typing(monkeypatch):
    x = np.arange(50, dtype=np.float32)
    out = compare(monkeypatch, early_return, 2, 32, x, np.zeros(50))[1]
    np.testing.assert_array_equal(out, x.astype(np.float64) * 0.1)


def grid3(out):
    i, j, k = cuda.grid(3)
    ni, nj, nk = cuda.gridsize(3)
    out[k, j, i] = i + ni * (j + nj * k) + cuda.threadIdx.z * 1000


def test_3d_grid_and_gridsize(monkeypatch):
    out = compare(monkeypatch, grid3, (2, 2, 2), (4, 2, 2), np.zeros((4, 4, 8), np.int64))[0]
    assert out[3, 3, 7] == 7 + 8 * (3 + 4 * 3) + 1000


def grid_stride(x, out):
    start = cuda.grid(1)
    stride = cuda.gridsize(1)
    for j in range(start, x.shape[0], stride):
        out[j] = x[j] * 2 + 1


def test_grid_stride_loop(monkeypatch):
    x = np.arange(1000, dtype=np.int32)
    out = compare(monkeypatch, grid_stride, 3, 64, x, np.zeros(1000, np.int32))[1]
    np.testing.assert_array_equal(out, x * 2 + 1)


def collatz(x, out):
    i = cuda.grid(1)
    if i < x.size:
        v = x[i]
        steps = 0
        while v != 1 and v > 0:
            if v % 2 == 0:
                v = v // 2
            else:
                v = 3 * v + 1
            steps += 1
        out[i] = steps


def test_varying_while_and_if(monkeypatch):
    x = np.arange(1, 200, dtype=np.int64)
    out = compare(monkeypatch, collatz, 4, 64, x, np.zeros(199, np.int64))[1]
    assert out[26] == 111       # 27 takes 111 steps


def guarded(a, n, out):
    i = cuda.grid(1)
    # the right operand must not read a[i] where i >= n (that would be out of bounds)
    if i < n and a[i] > 0:
        out[i] = 1
    out[i] += 10 if i < n or a[0] > 5 else 20


def test_short_circuit_never_reads_unused_side(monkeypatch):
    a = np.array([1, -1, 2, 0, 5], np.float64)
    out = compare(monkeypatch, guarded, 1, 8, a, 5, np.zeros(8, np.int32))[2]
    assert out.tolist() == [11, 10, 11, 10, 11, 20, 20, 20]


# -- typed arithmetic -----------------------------------------------------------------------
def int_ops(a, b, out):
    i = cuda.grid(1)
    if i < a.size:
        x = a[i]
        y = b[i]
        out[i, 0] = x // y
        out[i, 1] = x % y
        out[i, 2] = x << (y & 127)
        out[i, 3] = x >> (y & 127)
        out[i, 4] = x * y
        out[i, 5] = -x
        out[i, 6] = np.int32(x) + np.int32(y)
        out[i, 7] = np.uint64(x) + y
        out[i, 8] = np.uint64(x) < y
        out[i, 9] = x < np.uint64(y)
        out[i, 10] = np.int8(x) * np.int8(3)
        out[i, 11] = x ^ ~y
        out[i, 12] = np.uint32(x) >> np.uint32(3)
        out[i, 13] = bool(x) + bool(y)


def test_integer_semantics(monkeypatch):
    a = I64_EDGE
    b = np.roll(I64_EDGE, 3)
    out = compare(monkeypatch, int_ops, 1, 16, a, b, np.zeros((16, 14), np.int64))[2]
    assert out[0, 0] == 0           # 0 // 3 ... and division by zero gives 0
    assert out[np.flatnonzero(b == 0)[0], 0] == 0


def float_ops(a, b, out, iout):
    i = cuda.grid(1)
    if i < a.size:
        x = a[i]
        y = b[i]
        out[i, 0] = x // y
        out[i, 1] = x % y
        out[i, 2] = x / y
        out[i, 3] = x ** 2
        out[i, 4] = -x
        out[i, 5] = x * y + x
        iout[i, 0] = np.int32(x)
        iout[i, 1] = np.int64(x)
        iout[i, 2] = np.uint8(x)
        iout[i, 3] = np.uint64(x)
        iout[i, 4] = np.int16(y)
        iout[i, 5] = x > y
        iout[i, 6] = x == y
        iout[i, 7] = not x
        iout[i, 8] = np.int64(x) < y


@pytest.mark.parametrize("edge", [F32_EDGE, F64_EDGE], ids=["float32", "float64"])
def test_float_semantics_and_casts(monkeypatch, edge):
    a = edge
    b = np.roll(edge, 5)
    compare(monkeypatch, float_ops, 1, 16, a, b, np.zeros((16, 6), edge.dtype),
            np.zeros((16, 9), np.int64))


def maths(a, out):
    i = cuda.grid(1)
    if i < a.size:
        x = a[i]
        out[i, 0] = math.sqrt(x)
        out[i, 1] = math.sin(x)
        out[i, 2] = math.exp(x)
        out[i, 3] = math.fabs(x)
        out[i, 4] = math.floor(x) if math.isfinite(x) else 0
        out[i, 5] = math.atan2(x, a[0])
        out[i, 6] = math.log(x)
        out[i, 7] = math.copysign(x, -1.0)


@pytest.mark.parametrize("edge", [F32_EDGE, F64_EDGE], ids=["float32", "float64"])
def test_math_functions(monkeypatch, edge):
    a = np.concatenate([edge, np.linspace(-20, 20, 48).astype(edge.dtype)])
    compare(monkeypatch, maths, 2, 32, a, np.zeros((64, 8), edge.dtype))


# -- shared memory and barriers ---------------------------------------------------------------
# the benchmarks' block reduction (a grid-stride sum, then a shared-memory tree)
_BENCH, _BENCH_KERNELS = benchmark_kernels()
RED = _BENCH.RED_TPB
block_sum = _BENCH_KERNELS["reduce"].py_func


def test_block_reduction(monkeypatch):
    # each block's partial sum is added atomically into out[0]
    a = np.random.default_rng(1).standard_normal(4 * RED).astype(np.float32)
    out = compare(monkeypatch, block_sum, 4, RED, a, np.zeros(1, np.float32))[1]
    np.testing.assert_allclose(out[0], a.astype(np.float64).sum(), rtol=1e-4, atol=1e-4)


def test_tiled_matmul(monkeypatch):
    rng = np.random.default_rng(2)
    A = rng.standard_normal((20, 13)).astype(np.float32)
    B = rng.standard_normal((13, 11)).astype(np.float32)
    C = compare(monkeypatch, matmul_tiled, (2, 3), (8, 8), A, B,
                np.zeros((20, 11), np.float32))[2]
    np.testing.assert_allclose(C, A @ B, rtol=1e-4, atol=1e-4)


def missing_barrier(out):
    s = cuda.shared.array(32, np.int32)
    t = cuda.threadIdx.x
    s[t] = t
    out[t] = s[(t + 1) % 32]          # reads a neighbour's slot: no barrier in between


def same_slot(out):
    s = cuda.shared.array(4, np.int32)
    t = cuda.threadIdx.x
    s[t % 4] = t                      # threads t and t + 4 write one element
    cuda.syncthreads()
    out[t] = s[t % 4]


def test_races_are_the_per_thread_errors(monkeypatch):
    for kernel, n in ((missing_barrier, 32), (same_slot, 8)):
        vec, ref = raised(monkeypatch, DataRaceError, kernel, 1, n, np.zeros(n, np.int32))
        assert vec[2] == "rerun" and vec[0] == ref[0]
        assert "data race on shared memory" in vec[0]


def test_racy_kernel_with_checks_off_keeps_thread_order(monkeypatch, checks):
    checks(False)
    out = compare(monkeypatch, missing_barrier, 1, 32, np.zeros(32, np.int32),
                  expect="rerun")[0]
    # threads ran one after another: each read its neighbour's slot before it was written
    assert out.tolist() == [0] * 31 + [0]


def shift_right(a):
    i = cuda.threadIdx.x
    if i < a.size - 1:
        a[i + 1] = a[i]              # a global race inside the block: order matters


def test_global_conflict_runs_per_thread(monkeypatch):
    # the thread order of a deliberate race, with the global race check off
    monkeypatch.setenv("CUJIT_SIM_GLOBAL_RACES", "0")
    a = compare(monkeypatch, shift_right, 1, 8, np.arange(8, dtype=np.int32),
                expect="rerun")[0]
    assert a.tolist() == [0] * 8


def early_exit_then_barrier(out):
    t = cuda.threadIdx.x
    if t >= 4:
        return
    cuda.syncthreads()
    out[t] = t


def test_divergent_barrier(monkeypatch):
    vec, ref = raised(monkeypatch, BarrierDivergenceError, early_exit_then_barrier, 1, 8,
                      np.zeros(8, np.int32))
    assert vec[0] == ref[0]


def test_divergent_barrier_checks_off(monkeypatch, checks):
    checks(False)
    out = compare(monkeypatch, early_exit_then_barrier, 1, 8, np.zeros(8, np.int32))[0]
    assert out.tolist() == [0, 1, 2, 3, 0, 0, 0, 0]


# -- bounds ---------------------------------------------------------------------------------
def off_by_one(a, out):
    i = cuda.grid(1)
    out[i] = a[i + 1]


def write_past(out):
    i = cuda.grid(1)
    out[i * 2] = i


def test_out_of_bounds_read_and_write(monkeypatch):
    for kernel, args in ((off_by_one, (np.arange(8.0), np.zeros(8))),
                         (write_past, (np.zeros(8),))):
        vec, ref = raised(monkeypatch, OutOfBoundsError, kernel, 1, 8, *args)
        # the same message, and the same stores made before the error
        assert vec[:2] == ref[:2]


def negative_index(a, out):
    i = cuda.threadIdx.x
    out[i] = a[-1 - i]


def test_negative_index_wraps_once(monkeypatch):
    out = compare(monkeypatch, negative_index, 1, 8, np.arange(8.0), np.zeros(8))[1]
    assert out.tolist() == list(np.arange(8.0)[::-1])


# -- fallbacks ------------------------------------------------------------------------------
def shuffle(out):
    t = cuda.threadIdx.x
    out[t] = cuda.shfl_down_sync(0xFFFFFFFF, t, 1)


def printing(out):
    t = cuda.threadIdx.x
    if t == 0:
        print("hello", t)
    out[t] = t


def test_unsupported_kernels_run_per_thread(monkeypatch, capsys):
    out = compare(monkeypatch, shuffle, 1, 32, np.zeros(32, np.int64), expect="thread")[0]
    assert out[:31].tolist() == list(range(1, 32))
    out = compare(monkeypatch, printing, 1, 4, np.zeros(4, np.int64), expect="thread")[0]
    assert out.tolist() == [0, 1, 2, 3]


def test_access_recorder_runs_per_thread(monkeypatch):
    monkeypatch.setenv("CUJIT_SIM_VECTOR", "1")
    x = np.arange(64, dtype=np.float32)
    before = counts()
    with cuda.access_report(sample_blocks=None) as rep:
        simulate(axpy, 2, 32, np.float32(1), x, x, np.zeros(64, np.float32), 64)
    assert counts()["thread"] == before["thread"] + 1
    assert counts()["vector"] == before["vector"]
    assert rep.rows


def test_env_var_turns_vector_off(monkeypatch):
    _, ran = run(monkeypatch, axpy, 1, 8, [np.float32(1), np.ones(8, np.float32),
                                           np.ones(8, np.float32), np.zeros(8, np.float32),
                                           8], False)
    assert ran == "thread"


def test_generated_function_is_observable():
    from cujit import types as T
    from cujit.simulator.typedexec import typed_function
    tk = typed_function(block_sum, (T.Array(T.float32, 1, "C"),) * 2)
    assert tk.vector is not None and tk.why_not is None
    assert "def __cj_vblock" in tk.vector.source
    tk = typed_function(shuffle, (T.Array(T.int64, 1, "C"),))
    assert tk.vector is None
    assert tk.why_not


# -- breadth: atomics, barrier reductions, min/max/abs ------------------------------------
def histogram(x, bins, old):
    i = cuda.grid(1)
    if i < x.size:
        old[i] = cuda.atomic.add(bins, x[i] % bins.size, 1)


def float_atomics(x, total, hi):
    i = cuda.grid(1)
    if i < x.size:
        cuda.atomic.add(total, 0, x[i])
        cuda.atomic.max(hi, 0, x[i])
        cuda.atomic.add(total, 0, x[i] * np.float32(0.5))   # the same element again


def test_atomics_in_thread_order(monkeypatch):
    x = np.random.default_rng(3).integers(0, 100, 300).astype(np.int64)
    out = compare(monkeypatch, histogram, 3, 128, x, np.zeros(7, np.int32),
                  np.zeros(300, np.int32))
    np.testing.assert_array_equal(out[1], np.bincount(x % 7, minlength=7))
    # float sums: the per-thread order of additions (thread by thread, so both updates of
    # one thread before the next thread's): the vector order differs, the block reruns
    f = np.random.default_rng(4).standard_normal(200).astype(np.float32)
    compare(monkeypatch, float_atomics, 2, 128, f, np.zeros(1, np.float32),
            np.full(1, -np.inf, np.float32), expect="rerun")


def one_atomic_per_thread(x, total):
    i = cuda.grid(1)
    if i < x.size:
        cuda.atomic.add(total, i % 3, x[i])


def test_float_atomic_one_statement(monkeypatch):
    f = np.random.default_rng(5).standard_normal(200).astype(np.float64)
    compare(monkeypatch, one_atomic_per_thread, 2, 128, f, np.zeros(3))


def votes(x, out):
    t = cuda.threadIdx.x
    n = cuda.syncthreads_count(x[t] > 0)
    a = cuda.syncthreads_and(x[t] > -5)
    o = cuda.syncthreads_or(x[t] > 100)
    out[t] = n * 100 + a * 10 + o


def test_barrier_reductions(monkeypatch):
    x = np.array([1, -1, 3, 0, 7, -9, 2, 2], np.int32)
    out = compare(monkeypatch, votes, 1, 8, x, np.zeros(8, np.int64))[1]
    assert out.tolist() == [500] * 8


def extremes(a, b, out):
    i = cuda.grid(1)
    if i < a.size:
        out[i, 0] = min(a[i], b[i])
        out[i, 1] = max(a[i], b[i], np.float32(0.5))
        out[i, 2] = abs(a[i])


def test_min_max_abs_python_semantics(monkeypatch):
    a = F32_EDGE
    b = np.roll(F32_EDGE, 1)
    compare(monkeypatch, extremes, 1, 16, a, b, np.zeros((16, 3), np.float32))


# -- several blocks as one vector (no shared memory, no barriers) ---------------------------
def block_ids(out):
    i = cuda.grid(1)
    out[i] = cuda.blockIdx.x * 1000 + cuda.threadIdx.x


def test_blocks_run_together(monkeypatch):
    from cujit.simulator import vectorgen
    from cujit import types as T
    from cujit.simulator.typedexec import typed_function
    tk = typed_function(block_ids, (T.Array(T.int64, 1, "C"),))
    assert tk.vector.multi is not None
    assert typed_function(block_sum, (T.Array(T.float32, 1, "C"),) * 2) \
        .vector.multi is None      # shared memory: one block at a time
    out = compare(monkeypatch, block_ids, 300, 8, np.zeros(2400, np.int64))[0]
    assert out[2399] == 299 * 1000 + 7
    assert vectorgen is not None


def last_writer(out, x):
    i = cuda.grid(1)
    out[0] = x[i]            # every thread of every block: the last one's value stays


def oob_in_block_two(x, out):
    i = cuda.grid(1)
    out[i] = x[i + 20]


def test_blocks_together_keep_per_thread_errors_and_order(monkeypatch):
    monkeypatch.setenv("CUJIT_SIM_GLOBAL_RACES", "0")
    x = np.arange(64, dtype=np.float64)
    out = compare(monkeypatch, last_writer, 8, 8, np.zeros(1), x, expect="rerun")[0]
    assert out[0] == 63.0
    vec, ref = raised(monkeypatch, OutOfBoundsError, oob_in_block_two, 8, 8, np.arange(60.0),
                      np.zeros(64))
    assert vec[:2] == ref[:2]
    assert "blockIdx=(5, 0, 0)" in vec[0]


# -- global-memory conflict records -----------------------------------------------------------
def scale_in_place(a, reps):
    i = cuda.grid(1)
    if i < a.size:
        for _ in range(reps):
            a[i] = a[i] * 2 + 1      # each thread its own element: no conflict


def neighbour_after_write(a, b):
    i = cuda.grid(1)
    if i < a.size:
        a[i] = i
        b[i] = a[i ^ 1]              # another thread's element, written in this interval


def grid_stride_accumulate(out, n):
    for j in range(cuda.grid(1), n, cuda.gridsize(1)):
        out[j % 7] += 1              # many threads update one element: thread order


def test_in_place_updates_stay_vector(monkeypatch):
    a = np.arange(100, dtype=np.int32)
    out = compare(monkeypatch, scale_in_place, 2, 64, a, 5)[0]
    np.testing.assert_array_equal(out, a * 32 + 31)
    # a view with negative strides, updated in place
    base = np.arange(40, dtype=np.float64)
    out = compare(monkeypatch, scale_in_place, 1, 64, base[::-2], 3)[0]
    np.testing.assert_array_equal(out, base[::-2] * 8 + 7)


def test_cross_thread_global_access_reruns(monkeypatch):
    monkeypatch.setenv("CUJIT_SIM_GLOBAL_RACES", "0")
    compare(monkeypatch, neighbour_after_write, 2, 32, np.zeros(64, np.int64),
            np.zeros(64, np.int64), expect="rerun")
    out = compare(monkeypatch, grid_stride_accumulate, 2, 32, np.zeros(64, np.int64), 1000,
                  expect="rerun")[0]
    assert out.sum() == 1000


def atomic_then_read(c, out):
    i = cuda.grid(1)
    cuda.atomic.add(c, 0, 1)
    if i == 0:
        out[0] = c[0]                # lane 0 reads an element all lanes updated


def test_atomic_then_plain_read_reruns(monkeypatch):
    out = compare(monkeypatch, atomic_then_read, 1, 8, np.zeros(1, np.int64),
                  np.zeros(1, np.int64), expect="rerun")[1]
    assert out[0] == 1               # thread 0 ran before the others


def maybe_unassigned(out, n):
    i = cuda.threadIdx.x
    if i < n:
        v = i * 2
    out[i] = v


def test_local_read_before_assignment(monkeypatch):
    # every lane assigned it: fine; some lanes did not: the per-thread UnboundLocalError
    out = compare(monkeypatch, maybe_unassigned, 1, 8, np.zeros(8, np.int64), 8)[0]
    assert out.tolist() == [0, 2, 4, 6, 8, 10, 12, 14]
    vec, ref = raised(monkeypatch, UnboundLocalError, maybe_unassigned, 1, 8,
                      np.zeros(8, np.int64), 5)
    assert vec[0] == ref[0] and "threadIdx=(5, 0, 0)" in vec[0]


def loop_with_return(x, out):
    i = cuda.grid(1)
    if i >= x.size:
        return
    acc = 0
    for k in range(i):
        if x[k] < 0:
            out[i] = -1
            return
        acc += x[k]
    out[i] = acc


def test_return_inside_varying_loop(monkeypatch):
    x = np.array([3, 1, 4, 1, -5, 9, 2, 6, 5, 3], np.int64)
    out = compare(monkeypatch, loop_with_return, 1, 16, x, np.zeros(10, np.int64))[1]
    assert out.tolist() == [0, 3, 4, 8, 9, -1, -1, -1, -1, -1]


def local_sort(x, out):
    i = cuda.grid(1)
    if i < x.shape[0]:
        buf = cuda.local.array(4, np.float64)
        for k in range(4):
            buf[k] = x[i, k]
        for a in range(4):           # insertion sort per thread
            for b in range(a + 1, 4):
                if buf[b] < buf[a]:
                    t = buf[a]
                    buf[a] = buf[b]
                    buf[b] = t
        for k in range(4):
            out[i, k] = buf[k]


def local_oob(out):
    buf = cuda.local.array(3, np.int32)
    i = cuda.threadIdx.x
    buf[i] = 1
    out[i] = buf[i]


def test_local_arrays_per_lane(monkeypatch):
    x = np.random.default_rng(6).standard_normal((50, 4))
    out = compare(monkeypatch, local_sort, 2, 32, x, np.zeros((50, 4)))[1]
    np.testing.assert_array_equal(out, np.sort(x, axis=1))
    vec, ref = raised(monkeypatch, IndexError, local_oob, 1, 4, np.zeros(4, np.int32))
    assert vec[0] == ref[0]


def search(x, target, out):
    i = cuda.grid(1)
    if i < out.size:
        found = -1
        k = 0
        while k < x.shape[1]:
            v = x[i, k]
            k += 1
            if v < 0:
                continue             # skip negatives
            if v == target[i]:
                found = k - 1
                break
        out[i] = found
        s = 0
        for j in range(i):
            if j % 3 == 0:
                continue
            if s > 20:
                break
            s += j
        out[i] += s * 100


def test_break_and_continue_in_varying_loops(monkeypatch):
    rng = np.random.default_rng(8)
    x = rng.integers(-3, 6, (40, 12)).astype(np.int64)
    target = rng.integers(0, 6, 40).astype(np.int64)
    out = compare(monkeypatch, search, 2, 32, x, target, np.zeros(40, np.int64))[2]
    assert out[0] in range(-1, 12)


@cuda.jit(device=True)
def poly(x, k):
    if x < 0:
        return -x * k
    return x * x + k


@cuda.jit(device=True)
def uses_thread_index(x):
    return x + cuda.threadIdx.x


def call_device(x, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = poly(x[i], np.int32(i)) + poly(np.float32(1.5), 2)


def call_device_with_index(x, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = uses_thread_index(x[i])


def test_device_functions_lane_by_lane(monkeypatch):
    x = np.linspace(-4, 4, 50).astype(np.float32)
    compare(monkeypatch, call_device, 2, 32, x, np.zeros(50, np.float32))
    # a device function reading thread state cannot run lane by lane: per thread
    compare(monkeypatch, call_device_with_index, 2, 32, x, np.zeros(50, np.float32),
            expect="rerun")


def fused(a, b, out):
    i = cuda.grid(1)
    if i < a.size:
        out[i] = cuda.fma(a[i], b[i], a[0])


def test_fma(monkeypatch):
    compare(monkeypatch, fused, 1, 16, F64_EDGE, np.roll(F64_EDGE, 2), np.zeros(16))
    compare(monkeypatch, fused, 1, 16, F32_EDGE, np.roll(F32_EDGE, 2),
            np.zeros(16, np.float32))


NBINS = 8


def shared_histogram(x, out):
    h = cuda.shared.array(NBINS, np.int32)
    t = cuda.threadIdx.x
    if t < NBINS:
        h[t] = 0
    cuda.syncthreads()
    i = cuda.grid(1)
    if i < x.size:
        cuda.atomic.add(h, x[i] % NBINS, 1)
    cuda.syncthreads()
    if t < NBINS:
        cuda.atomic.add(out, t, h[t])


def shared_atomic_then_read(out):
    h = cuda.shared.array(1, np.float32)
    t = cuda.threadIdx.x
    cuda.atomic.add(h, 0, np.float32(t) + np.float32(0.1))
    out[t] = h[0]                    # no barrier: what it sees depends on thread order


def test_shared_atomics(monkeypatch):
    x = np.random.default_rng(9).integers(0, 1000, 500).astype(np.int64)
    out = compare(monkeypatch, shared_histogram, 4, 128, x, np.zeros(NBINS, np.int64))[1]
    np.testing.assert_array_equal(out, np.bincount(x % NBINS, minlength=NBINS))
    compare(monkeypatch, shared_atomic_then_read, 1, 8, np.zeros(8, np.float32),
            expect="rerun")


def _sim_suite():
    import importlib.util
    import pathlib
    path = pathlib.Path(__file__).resolve().parents[2] / "benchmarks" / "sim_suite.py"
    spec = importlib.util.spec_from_file_location("cujit_sim_suite_for_tests", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    mod.cuda, mod.float32 = cuda, np.float32     # what run_side binds for the cujit side
    return mod


def test_sim_suite_kernels_run_vectorized(monkeypatch):
    """benchmarks/sim_suite.py's three kernels (issue 12's figures) take the vector path and
    give the per-thread bits, at small sizes."""
    s = _sim_suite()
    rng = np.random.default_rng(10)
    a = rng.standard_normal(2 * s.RED_TPB).astype(np.float32)
    compare(monkeypatch, s.block_sum, 2, s.RED_TPB, a, np.zeros(2, np.float32))
    A = rng.standard_normal((32, 32)).astype(np.float32)
    B = rng.standard_normal((32, 32)).astype(np.float32)
    C = compare(monkeypatch, s.matmul, (2, 2), (s.TILE, s.TILE), A, B,
                np.zeros((32, 32), np.float32))[2]
    np.testing.assert_allclose(C, A @ B, rtol=1e-4, atol=1e-4)
    g = (np.arange(48 * 48, dtype=np.float32).reshape(48, 48) % 13)
    compare(monkeypatch, s.stencil, (3, 3), (16, 16), g, np.zeros_like(g))


def shape_unpacking(a, out):
    h, w = a.shape
    x, y = cuda.grid(2)
    if x < h and y < w:
        out[x, y] = a[x, y] * 2 + h - w


def varying_unpacking(out):
    i = cuda.grid(1)
    p, q = i, i * 2
    if i < out.shape[0]:
        out[i] = p + q


def test_uniform_tuple_unpacking_runs_vector(monkeypatch):
    # ``h, w = a.shape`` is uniform: the vector executor takes it; a varying unpacking
    # still runs per thread, with the same values
    a = np.arange(35, dtype=np.float32).reshape(5, 7)
    out = compare(monkeypatch, shape_unpacking, (2, 2), (4, 4), a, np.zeros_like(a))[1]
    np.testing.assert_array_equal(out, a * 2 + 5 - 7)
    out = compare(monkeypatch, varying_unpacking, 1, 16, np.zeros(10, np.int64),
                  expect="thread")[0]
    assert out.tolist() == [3 * i for i in range(10)]


def int_abs_lanes(src, out):
    i = cuda.grid(1)
    if i < src.shape[0]:
        v = src[i]
        out[i, 0] = abs(v)
        out[i, 1] = abs(v) < 0


def test_integer_abs_wraps_in_lanes(monkeypatch):
    for dt in (np.int64, np.int32, np.uint64):
        info = np.iinfo(dt)
        src = np.array([info.min, info.min + 1, -3 if info.min else 3, 0, info.max], dt)
        out = compare(monkeypatch, int_abs_lanes, 1, 8, src, np.zeros((5, 2), np.int64))[1]
        expect = np.abs(src)        # NumPy wraps the minimum as the GPU does
        assert out[:, 0].tolist() == expect.astype(np.int64).tolist()
        assert out[:, 1].tolist() == (expect < 0).astype(np.int64).tolist()
