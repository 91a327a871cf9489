"""Thread indexing, barriers with predicates, atomics, warp intrinsics and the integer/float
intrinsics in the simulator."""
import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import cujit as cuda

pytestmark = pytest.mark.sim


def indices(out):
    x, y, z = cuda.grid(3)
    gx, gy, gz = cuda.gridsize(3)
    lin = x + gx * (y + gy * z)
    out[lin, 0] = cuda.threadIdx.x + 10 * cuda.threadIdx.y + 100 * cuda.threadIdx.z
    out[lin, 1] = cuda.blockIdx.x + 10 * cuda.blockIdx.y + 100 * cuda.blockIdx.z
    out[lin, 2] = cuda.blockDim.x + 10 * cuda.blockDim.y + 100 * cuda.blockDim.z
    out[lin, 3] = cuda.gridDim.x + 10 * cuda.gridDim.y + 100 * cuda.gridDim.z
    out[lin, 4] = cuda.laneid
    out[lin, 5] = cuda.grid(1) + 1000 * cuda.gridsize(1)
    out[lin, 6] = cuda.warpsize


def test_thread_indexing_3d(launch):
    grid, block = (2, 3, 2), (4, 2, 5)
    n = 2 * 3 * 2 * 4 * 2 * 5
    out = np.zeros((n, 7), np.int64)
    launch(indices, grid, block, out)
    seen = set()
    for bz in range(2):
        for by in range(3):
            for bx in range(2):
                for tz in range(5):
                    for ty in range(2):
                        for tx in range(4):
                            x, y, z = bx * 4 + tx, by * 2 + ty, bz * 5 + tz
                            lin = x + 8 * (y + 6 * z)
                            row = out[lin].tolist()
                            assert row[:4] == [tx + 10 * ty + 100 * tz, bx + 10 * by + 100 * bz,
                                               524, 232]
                            assert row[4] == (tx + 4 * ty + 8 * tz) % 32
                            assert row[5] == x + 8000
                            assert row[6] == 32
                            seen.add(lin)
    assert len(seen) == n


def sync_preds(out):
    t = cuda.threadIdx.x
    out[t, 0] = cuda.syncthreads_count(t % 3 == 0)
    out[t, 1] = cuda.syncthreads_and(t < 100)
    out[t, 2] = cuda.syncthreads_and(t < 5)
    out[t, 3] = cuda.syncthreads_or(t == 7)
    out[t, 4] = cuda.syncthreads_or(t > 100)


def test_syncthreads_predicates(launch):
    out = np.zeros((10, 5), np.int64)
    launch(sync_preds, 1, 10, out)
    assert (out == [4, 1, 0, 1, 0]).all()


def barrier_loop(out, n):
    s = cuda.shared.array(1024, np.int32)
    t = cuda.threadIdx.x
    s[t] = 0
    cuda.syncthreads()
    for k in range(n):
        v = s[(t + 1) % 1024]
        cuda.syncthreads()
        s[t] = v + 1
        cuda.syncthreads()
    cuda.threadfence()
    cuda.threadfence_block()
    cuda.threadfence_system()
    out[t] = s[t]


def test_1024_threads_with_barrier_in_loop(launch):
    out = np.zeros(1024, np.int32)
    launch(barrier_loop, 1, 1024, out, 20)
    assert (out == 20).all()


# -- atomics ---------------------------------------------------------------------------------
def atomics(a, u, f, old):
    t = cuda.threadIdx.x
    old[t, 0] = cuda.atomic.add(a, 0, 1)
    cuda.atomic.sub(a, 1, 2)
    cuda.atomic.max(a, 2, t)
    cuda.atomic.min(a, 3, -t)
    cuda.atomic.and_(a, 4, ~(1 << t))
    cuda.atomic.or_(a, 5, 1 << t)
    cuda.atomic.xor(a, 6, 1 << (t % 2))
    cuda.atomic.exch(a, 7, 5)
    cuda.atomic.inc(u, 0, np.uint32(3))
    cuda.atomic.dec(u, 1, np.uint32(3))
    cuda.atomic.inc(u, 2, np.uint32(100))
    old[t, 1] = cuda.atomic.cas(a, 10, t, t + 1)
    cuda.atomic.nanmax(f, 0, np.float64(t))
    cuda.atomic.nanmin(f, 1, np.float64(t))
    cuda.atomic.add(f, (2,), 0.5)


def test_atomics(launch):
    a = np.zeros(11, np.int64)
    a[4] = -1
    u = np.array([0, 0, 5], np.uint32)
    f = np.array([np.nan, np.nan, 0.0])
    old = np.zeros((8, 2), np.int64)
    launch(atomics, 1, 8, a, u, f, old)
    assert sorted(old[:, 0].tolist()) == list(range(8))
    assert a.tolist() == [8, -16, 7, -7, -1 & ~0xFF, 0xFF, 0, 5, 0, 0, 8]
    assert u.tolist() == [0, 0, 13]      # CUDA's wrap-around inc/dec, 8 times each
    assert old[:, 1].tolist() == list(range(8))      # each thread swaps in turn
    assert f.tolist() == [7.0, 0.0, 4.0]


def atomic_oob(a):
    cuda.atomic.add(a, 4, 1)


def atomic_shared_counter(out):
    c = cuda.shared.array(1, np.int32)
    cuda.atomic.add(c, 0, 1)
    cuda.syncthreads()
    out[cuda.threadIdx.x] = c[0]


def test_atomic_bounds_and_shared_counter(launch):
    with pytest.raises(IndexError, match=r"index 4 is out of bounds .* array 'a' of shape "
                       r"\(4,\)"):
        launch(atomic_oob, 1, 1, np.zeros(4))
    out = np.zeros(64, np.int32)
    launch(atomic_shared_counter, 1, 64, out)
    assert (out == 64).all()


# -- warp intrinsics -------------------------------------------------------------------------
def warp_ops(out, vals):
    t = cuda.threadIdx.x
    v = vals[t]
    full = 0xFFFFFFFF
    out[t, 0] = cuda.shfl_sync(full, v, 3)
    out[t, 1] = cuda.shfl_up_sync(full, v, 2)
    out[t, 2] = cuda.shfl_down_sync(full, v, 4)
    out[t, 3] = cuda.shfl_xor_sync(full, v, 1)
    out[t, 4] = cuda.ballot_sync(full, v % 2 == 1)
    out[t, 5] = cuda.all_sync(full, v >= 0)
    out[t, 6] = cuda.any_sync(full, v == 100)
    out[t, 7] = cuda.eq_sync(full, v < 1000)
    out[t, 8] = cuda.activemask()
    out[t, 9] = cuda.lanemask_lt()
    cuda.syncwarp()
    out[t, 10] = cuda.laneid


def test_warp_intrinsics(launch):
    vals = np.arange(64, dtype=np.int64) * 3
    out = np.zeros((64, 11), np.int64)
    launch(warp_ops, 1, 64, out, vals)
    for t in range(64):
        lane, w = t % 32, t // 32 * 32
        v = vals[w:w + 32]
        odd = sum(1 << i for i in range(32) if v[i] % 2 == 1)
        assert out[t].tolist() == [
            v[3], v[lane - 2] if lane >= 2 else v[lane], v[lane + 4] if lane + 4 < 32 else v[lane],
            v[lane ^ 1], odd, 1, int(any(v == 100)), 1,
            0xFFFFFFFF, (1 << lane) - 1, lane]


def warp_partial(out):
    t = cuda.threadIdx.x
    if t < 16:
        out[t] = cuda.shfl_down_sync(0xFFFF, t * 2, 1)
    else:
        out[t] = cuda.ballot_sync(0xFFFF0000, True)


def test_warp_intrinsics_with_disjoint_masks(launch, checks):
    checks(False)
    out = np.zeros(32, np.int64)
    launch(warp_partial, 1, 32, out)
    assert out[:15].tolist() == [2 * (t + 1) for t in range(15)]
    assert out[15] == 30                      # unchecked: lane 16 is not in the mask: own value
    assert (out[16:] == 0xFFFF0000).all()


def test_shuffle_from_lane_outside_the_mask_is_reported(launch):
    from cujit.simulator.errors import WarpDivergenceError
    with pytest.raises(WarpDivergenceError, match=r"threadIdx=\(15, 0, 0\).*calls "
                       r"shfl_down_sync at test_sim_intrinsics.py:\d+ reading lane 16, which is "
                       r"not in the mask 0x0000ffff; on a GPU the value is undefined"):
        launch(warp_partial, 1, 32, np.zeros(32, np.int64))


def mask_without_caller(out):
    t = cuda.threadIdx.x
    out[t] = cuda.shfl_down_sync(0xFFFF0000, t, 1)


def test_lanes_outside_their_own_mask_are_reported(launch):
    from cujit.simulator.errors import WarpDivergenceError
    with pytest.raises(WarpDivergenceError, match=r"16 threads \(threadIdx \(0, 0, 0\) \.\.\. "
                       r"\(15, 0, 0\)\) call shfl_down_sync at .* with mask 0xffff0000, which does "
                       r"not include their own lanes"):
        launch(mask_without_caller, 1, 32, np.zeros(32, np.int64))


def shuffle_after_exit(out):
    t = cuda.threadIdx.x
    if t == 5:
        return
    out[t] = cuda.shfl_sync(0xFFFFFFFF, t, 5)


def test_shuffle_from_exited_lane_is_reported(launch, checks):
    from cujit.simulator.errors import WarpDivergenceError
    with pytest.raises(WarpDivergenceError, match="reading lane 5, which has exited"):
        launch(shuffle_after_exit, 1, 32, np.zeros(32, np.int64))
    checks(False)
    out = np.zeros(32, np.int64)
    launch(shuffle_after_exit, 1, 32, out)      # unchecked: the caller's own value
    assert out[6] == 6


def warp_reduce(a, out):
    t = cuda.threadIdx.x
    v = a[t]
    off = 16
    while off > 0:
        v += cuda.shfl_down_sync(0xFFFFFFFF, v, off)
        off //= 2
    if cuda.laneid == 0:
        out[t // 32] = v


def test_warp_shuffle_reduction(launch):
    a = np.arange(96, dtype=np.float64)
    out = np.zeros(3)
    launch(warp_reduce, 1, 96, a, out)
    np.testing.assert_array_equal(out, a.reshape(3, 32).sum(1))


def test_activemask_in_partial_warp(launch):
    out = np.zeros((5, 11), np.int64)
    launch(warp_ops, 1, 5, out, np.arange(5, dtype=np.int64))
    assert (out[:, 8] == 0b11111).all()
    assert out[:, 0].tolist() == [3] * 5
    assert out[:, 2].tolist() == [4, 1, 2, 3, 4]   # lanes 5.. absent: own value


# -- bit and float intrinsics ----------------------------------------------------------------
def bits(x, out):
    v = x[0]
    out[0] = cuda.popc(v)
    out[1] = cuda.brev(v)
    out[2] = cuda.clz(v)
    out[3] = cuda.ffs(v)


def _ref(v, width):
    u = v & ((1 << width) - 1)
    rev = int(format(u, f"0{width}b")[::-1], 2)
    return [bin(u).count("1"), rev, width - u.bit_length(), (u & -u).bit_length()]


@settings(max_examples=60, deadline=None)
@given(st.sampled_from([np.int32, np.uint32, np.int64, np.uint64]), st.integers(0, 2**64 - 1))
def test_bit_intrinsics_match_reference(dt, raw):
    from cujit.simulator.kernel import run_kernel
    width = np.dtype(dt).itemsize * 8
    x = np.array([raw & ((1 << width) - 1)], np.uint64).astype(dt)
    out = np.zeros(4, np.uint64)
    run_kernel(bits, (1, 1, 1), (1, 1, 1), 0, 0, (x, out))
    exp = _ref(int(x[0]), width)
    got = out.tolist()
    assert got[0] == exp[0] and got[2] == exp[2] and got[3] == exp[3]
    assert got[1] & ((1 << width) - 1) == exp[1]


def floats(a, out):
    out[0] = cuda.fma(a[0], a[1], a[2])
    out[1] = cuda.cbrt(a[3])


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(-1e6, 1e6, allow_nan=False, width=64), min_size=4, max_size=4))
def test_fma_single_rounding_and_cbrt(vals):
    from cujit.simulator.kernel import run_kernel
    a = np.array(vals)
    out = np.zeros(2)
    run_kernel(floats, (1, 1, 1), (1, 1, 1), 0, 0, (a, out))
    exact = Fraction(vals[0]) * Fraction(vals[1]) + Fraction(vals[2])
    assert out[0] == float(exact)
    assert math.isclose(out[1], math.copysign(abs(vals[3]) ** (1 / 3), vals[3]),
                        rel_tol=1e-12, abs_tol=1e-300)


def test_bit_intrinsic_rejects_floats(launch, either_check):
    from cujit.frontend.errors import TypingError
    if either_check == "front end":
        with pytest.raises(TypingError, match=r"popc\(\) takes an integer, got float64"):
            launch(bits, 1, 1, np.array([1.5]), np.zeros(4))
    else:
        with pytest.raises(TypeError, match="expected an integer, got float64"):
            launch(bits, 1, 1, np.array([1.5]), np.zeros(4))


def test_kernel_api_outside_kernel_raises():
    with pytest.raises(RuntimeError, match="can only be used inside a kernel"):
        cuda.syncthreads()
    with pytest.raises(RuntimeError, match="inside a kernel"):
        cuda.threadIdx.x
