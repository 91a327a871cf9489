"""Vector executor: programs written the way numba.cuda users write them, run by
the simulator with ``CUJIT_SIM_VECTOR=1`` and ``=0``, checks on and off: every array argument
bit for bit equal (NaN payloads and -0.0 count), the same executor as when the trial found
them (vector, per thread, or vector then rerun), and NumPy's values where they are known."""
import math

import numpy as np
import pytest

import cujit as cuda
from cujit import float32, int32
from cujit.simulator import vecblock
from cujit.simulator.kernel import simulate

pytestmark = pytest.mark.sim     # compares the simulator's two executors

RNG = np.random.default_rng(2026)


@cuda.jit
def hist_shared(data, bins):
    sh = cuda.shared.array(16, int32)
    t = cuda.threadIdx.x
    if t < 16:
        sh[t] = 0
    cuda.syncthreads()
    i = cuda.grid(1)
    if i < data.size:
        cuda.atomic.add(sh, data[i] & 15, 1)
    cuda.syncthreads()
    if t < 16:
        cuda.atomic.add(bins, t, sh[t])


@cuda.jit
def scan_hillis_steele(a, out):
    sh = cuda.shared.array(128, int32)
    t = cuda.threadIdx.x
    sh[t] = a[t]
    cuda.syncthreads()
    off = 1
    while off < 128:
        v = 0
        if t >= off:
            v = sh[t - off]
        cuda.syncthreads()
        sh[t] += v
        cuda.syncthreads()
        off *= 2
    out[t] = sh[t]


@cuda.jit
def bitonic_sort(a):
    sh = cuda.shared.array(256, float32)
    t = cuda.threadIdx.x
    sh[t] = a[t]
    cuda.syncthreads()
    k = 2
    while k <= 256:
        j = k // 2
        while j > 0:
            ixj = t ^ j
            if ixj > t:
                if (t & k) == 0:
                    if sh[t] > sh[ixj]:
                        tmp = sh[t]
                        sh[t] = sh[ixj]
                        sh[ixj] = tmp
                else:
                    if sh[t] < sh[ixj]:
                        tmp = sh[t]
                        sh[t] = sh[ixj]
                        sh[ixj] = tmp
            cuda.syncthreads()
            j //= 2
        k *= 2
    a[t] = sh[t]


@cuda.jit
def transpose_tiled(a, out):
    tile = cuda.shared.array((16, 17), float32)
    x = cuda.blockIdx.x * 16 + cuda.threadIdx.x
    y = cuda.blockIdx.y * 16 + cuda.threadIdx.y
    if x < a.shape[1] and y < a.shape[0]:
        tile[cuda.threadIdx.y, cuda.threadIdx.x] = a[y, x]
    cuda.syncthreads()
    x = cuda.blockIdx.y * 16 + cuda.threadIdx.x
    y = cuda.blockIdx.x * 16 + cuda.threadIdx.y
    if x < out.shape[1] and y < out.shape[0]:
        out[y, x] = tile[cuda.threadIdx.x, cuda.threadIdx.y]


@cuda.jit
def nbody_accel(pos, acc, n):
    i = cuda.grid(1)
    if i >= n:
        return
    ax = 0.0
    ay = 0.0
    xi = pos[i, 0]
    yi = pos[i, 1]
    for j in range(n):
        dx = pos[j, 0] - xi
        dy = pos[j, 1] - yi
        r2 = dx * dx + dy * dy + 1e-3
        inv = 1.0 / math.sqrt(r2 * r2 * r2)
        ax += dx * inv
        ay += dy * inv
    acc[i, 0] = ax
    acc[i, 1] = ay


@cuda.jit
def early_return_loops(a, o):
    i = cuda.grid(1)
    if i >= a.size:
        return
    if a[i] < 0:
        o[i] = -1
        return
    s = 0
    for j in range(a[i]):
        if j == 7:
            break
        if j % 2:
            continue
        s += j
    o[i] = s


@cuda.jit
def grid3d(o):
    x, y, z = cuda.grid(3)
    if x < o.shape[2] and y < o.shape[1] and z < o.shape[0]:
        o[z, y, x] = x + 100 * y + 10000 * z


@cuda.jit
def stream_compaction(a, out, counter):
    i = cuda.grid(1)
    if i < a.size and a[i] > 0:
        pos = cuda.atomic.add(counter, 0, 1)
        out[pos] = a[i]


@cuda.jit
def casts_and_edges(x, o8, ou32, o64, ob):
    i = cuda.grid(1)
    if i < x.size:
        v = x[i]
        o8[i] = cuda.int8(v)
        ou32[i] = cuda.uint32(v)
        o64[i] = cuda.int64(v) + cuda.int64(v * 3)
        ob[i] = bool(v) and v > -1.0


@cuda.jit
def local_histogram_argmax(a, o):
    i = cuda.grid(1)
    loc = cuda.local.array(16, int32)
    for k in range(16):
        loc[k] = 0
    for k in range(a.size):
        loc[(a[k] + i) % 16] += 1
    best = 0
    for k in range(16):
        if loc[k] > loc[best]:
            best = k
    o[i] = best


@cuda.jit
def racy_shift(a):
    i = cuda.grid(1)
    if i + 1 < a.size:
        a[i + 1] = a[i] + 1


EDGES = np.array([0.0, -0.0, np.nan, np.inf, -np.inf, 1e-45, -1e-45, 3.4e38, -3.4e38, 0.5,
                  -2.5, 2.5, 2 ** 31, 300.7, -129.5, 255.5], np.float32)
DATA = RNG.integers(0, 1000, 1280).astype(np.int32)
SCAN = RNG.integers(-100, 100, 128).astype(np.int32)
SORT = RNG.standard_normal(256).astype(np.float32)
MAT = RNG.standard_normal((40, 50)).astype(np.float32)
POS = RNG.standard_normal((100, 2)).astype(np.float32)
POSNEG = RNG.standard_normal(3000).astype(np.float32)

# name: (kernel, griddim, blockdim, args, executor of the vector launch, NumPy check)
PROGRAMS = {
    "histogram_shared_atomics": (hist_shared, 10, 128, (DATA, np.zeros(16, np.int32)),
                                 "vector",
                                 lambda r: (r[1] == np.bincount(DATA & 15, minlength=16)).all()),
    "scan_hillis_steele": (scan_hillis_steele, 1, 128, (SCAN, np.zeros(128, np.int32)),
                           "vector", lambda r: (r[1] == np.cumsum(SCAN)).all()),
    "bitonic_sort": (bitonic_sort, 1, 256, (SORT,), "vector",
                     lambda r: (r[0] == np.sort(SORT)).all()),
    "transpose_tiled": (transpose_tiled, (4, 3), (16, 16), (MAT, np.zeros((50, 40), np.float32)),
                        "vector", lambda r: (r[1] == MAT.T).all()),
    "nbody": (nbody_accel, 2, 64, (POS, np.zeros_like(POS), 100), "vector", None),
    "early_return_loops": (early_return_loops, 3, 4,
                           (np.array([-3, 0, 1, 5, 9, 100, -1, 4, 2, 3], np.int32),
                            np.zeros(10, np.int32)), "vector",
                           lambda r: r[1].tolist() == [-1, 0, 0, 6, 12, 12, -1, 2, 0, 2]),
    "grid3d_odd_block": (grid3d, (2, 3, 2), (3, 5, 7), (np.zeros((13, 14, 5), np.int32),),
                         "vector", lambda r: (r[0] == np.fromfunction(
                             lambda z, y, x: x + 100 * y + 10000 * z, (13, 14, 5))).all()),
    "stream_compaction": (stream_compaction, 12, 256,
                          (POSNEG, np.zeros(3000, np.float32), np.zeros(1, np.int32)), "vector",
                          lambda r: (r[1][:r[2][0]] == POSNEG[POSNEG > 0]).all()),
    "casts_nan_inf_subnormal": (casts_and_edges, 1, 32,
                                (EDGES, np.zeros(16, np.int8), np.zeros(16, np.uint32),
                                 np.zeros(16, np.int64), np.zeros(16, np.bool_)), "vector", None),
    "local_array_argmax": (local_histogram_argmax, 2, 48, (DATA[:60], np.zeros(96, np.int32)),
                           "vector", None),
    "racy_global_shift": (racy_shift, 2, 32, (np.zeros(64, np.int32),), "rerun",
                          lambda r: (r[0] == np.arange(64)).all()),
    "empty_arrays": (early_return_loops, 1, 32, (np.zeros(0, np.int32), np.zeros(0, np.int32)),
                     "vector", None),
}


def _run(monkeypatch, vector, kernel, griddim, blockdim, args):
    monkeypatch.setenv("CUJIT_SIM_VECTOR", "1" if vector else "0")
    args = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    before = dict(vecblock.launches)
    simulate(kernel, griddim, blockdim, *args)
    ran = [k for k in ("rerun", "vector", "thread") if vecblock.launches[k] > before[k]]
    return args, ran[0]


@pytest.mark.parametrize("checks", [True, False])
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_program_vector_equals_per_thread(monkeypatch, name, checks):
    monkeypatch.setattr(cuda.config, "SIM_CHECKS", checks)
    if name.startswith("racy"):
        # here for its simulated (per-thread) order, not for the race report
        monkeypatch.setenv("CUJIT_SIM_GLOBAL_RACES", "0")
    kernel, griddim, blockdim, args, executor, expect = PROGRAMS[name]
    vec, ran = _run(monkeypatch, True, kernel, griddim, blockdim, args)
    ref, ran_ref = _run(monkeypatch, False, kernel, griddim, blockdim, args)
    assert (ran, ran_ref) == (executor, "thread")
    for v, r in zip(vec, ref):
        if isinstance(v, np.ndarray):
            assert v.dtype == r.dtype and v.shape == r.shape
            assert v.view(np.uint8).tolist() == r.view(np.uint8).tolist()
    if expect is not None:
        assert expect(ref)
