"""Kernels through ``@cujit.jit`` whose results the simulator and the GPU must agree on
(unmarked: they run on the simulator here and on the H200 with ``pytest -m gpu``)."""
import numpy as np

import cujit as cuda


@cuda.jit
def indexing_3d(out):
    x, y, z = cuda.grid(3)
    gx, gy, gz = cuda.gridsize(3)
    lin = x + gx * (y + gy * z)
    out[lin, 0] = cuda.threadIdx.x + 10 * cuda.threadIdx.y + 100 * cuda.threadIdx.z
    out[lin, 1] = cuda.blockIdx.x + 10 * cuda.blockIdx.y + 100 * cuda.blockIdx.z
    out[lin, 2] = cuda.blockDim.x + 10 * cuda.blockDim.y + 100 * cuda.blockDim.z
    out[lin, 3] = cuda.gridDim.x + 10 * cuda.gridDim.y + 100 * cuda.gridDim.z


def test_indexing_3d():
    out = np.zeros((4 * 3 * 2 * 2 * 2 * 2, 4), np.int64)
    indexing_3d[(2, 2, 2), (4, 3, 2)](out)
    cuda.synchronize()
    rows = set()
    for bz in range(2):
        for by in range(2):
            for bx in range(2):
                for tz in range(2):
                    for ty in range(3):
                        for tx in range(4):
                            x, y, z = bx * 4 + tx, by * 3 + ty, bz * 2 + tz
                            lin = x + 8 * (y + 6 * z)
                            assert out[lin].tolist() == [tx + 10 * ty + 100 * tz,
                                                         bx + 10 * by + 100 * bz, 234, 222]
                            rows.add(lin)
    assert len(rows) == out.shape[0]


@cuda.jit
def barrier_predicates(out):
    t = cuda.threadIdx.x
    out[t, 0] = cuda.syncthreads_count(t % 3 == 0)
    out[t, 1] = cuda.syncthreads_and(t < 100)
    out[t, 2] = cuda.syncthreads_and(t < 5)
    out[t, 3] = cuda.syncthreads_or(t == 7)
    out[t, 4] = cuda.syncthreads_or(t > 100)


def test_barrier_predicates():
    out = np.zeros((64, 5), np.int32)
    barrier_predicates[1, 64](out)
    cuda.synchronize()
    assert (out == [22, 1, 0, 1, 0]).all()


@cuda.jit
def atomics(a, u, old):
    t = cuda.threadIdx.x
    old[t] = cuda.atomic.add(a, 0, 1)
    cuda.atomic.max(a, 1, t)
    cuda.atomic.min(a, 2, -t)
    cuda.atomic.inc(u, 0, np.uint32(3))
    cuda.atomic.dec(u, 1, np.uint32(3))


def test_atomics_agree():
    a = np.zeros(3, np.int32)
    u = np.zeros(2, np.uint32)
    old = np.zeros(64, np.int32)
    atomics[1, 64](a, u, old)
    cuda.synchronize()
    assert sorted(old.tolist()) == list(range(64))
    assert a.tolist() == [64, 63, -63]
    assert u.tolist() == [0, 0]              # 64 wrap-around steps of period 4


@cuda.jit
def warp_reduce(a, out, ballots):
    t = cuda.threadIdx.x
    v = a[t]
    off = 16
    while off > 0:
        v += cuda.shfl_down_sync(0xFFFFFFFF, v, off)
        off //= 2
    b = cuda.ballot_sync(0xFFFFFFFF, a[t] % 3 == 0)
    if cuda.laneid == 0:
        out[t // 32] = v
        ballots[t // 32] = b


def test_warp_shuffle_reduction_and_ballot():
    a = np.arange(128, dtype=np.int32)
    out = np.zeros(4, np.int32)
    ballots = np.zeros(4, np.uint32)
    warp_reduce[1, 128](a, out, ballots)
    cuda.synchronize()
    assert out.tolist() == a.reshape(4, 32).sum(1).tolist()
    expect = [sum(1 << i for i in range(32) if (w * 32 + i) % 3 == 0) for w in range(4)]
    assert ballots.tolist() == expect


@cuda.jit
def bit_ops(x, out):
    i = cuda.grid(1)
    if i < x.shape[0]:
        v = x[i]
        out[i, 0] = cuda.popc(v)
        out[i, 1] = cuda.clz(v)
        out[i, 2] = cuda.ffs(v)


def test_bit_intrinsics_agree():
    x = np.array([0, 1, 2, 0x80000000, 0x7FFFFFFF, 12345678], np.uint32)
    out = np.zeros((6, 3), np.int64)
    bit_ops[1, 8](x, out)
    cuda.synchronize()
    for k, v in enumerate(x.tolist()):
        assert out[k].tolist() == [bin(v).count("1"), 32 - v.bit_length(),
                                   (v & -v).bit_length()]


@cuda.jit
def int64_to_float32(src, out, out_u):
    i = cuda.grid(1)
    if i < src.shape[0]:
        out[i] = np.float32(src[i])
        out_u[i] = np.float32(np.uint64(src[i]) * np.uint64(2))


def test_int64_to_float32_rounds_once():
    # cvt.rn.f32.s64 rounds once; going through float64 first rounds twice and is one ulp
    # off for 2**60 + 2**36 + 1 (1.1529215e18 instead of 1.1529216e18)
    vals = np.array([2**60 + 2**36 + 1, -(2**60 + 2**36 + 1), 2**62 + 2**38 + 3, 2**53 + 1,
                     3, -(2**63)], np.int64)
    out = np.zeros(vals.size, np.float32)
    out_u = np.zeros(vals.size, np.float32)
    int64_to_float32[1, 32](vals, out, out_u)
    cuda.synchronize()
    assert out.tolist() == vals.astype(np.float32).tolist()
    assert out.view(np.uint32)[0] == np.array([2**60 + 2**36 + 1]).astype(np.float32).view(
        np.uint32)[0]
    assert out_u.tolist() == (vals.astype(np.uint64) * np.uint64(2)).astype(np.float32).tolist()


@cuda.jit
def int_abs(src, out):
    i = cuda.grid(1)
    if i < src.shape[0]:
        v = src[i]
        out[i, 0] = abs(v) < 0
        out[i, 1] = abs(v) == v


def test_abs_of_the_integer_minimum_wraps():
    # llabs(INT64_MIN) is INT64_MIN on the GPU: negative, and equal to itself
    src = np.array([-(2**63), -5, 0, 2**63 - 1], np.int64)
    out = np.zeros((4, 2), np.bool_)
    int_abs[1, 32](src, out)
    cuda.synchronize()
    assert out.tolist() == [[True, True], [False, False], [False, True], [False, True]]
