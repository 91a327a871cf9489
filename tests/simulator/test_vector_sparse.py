"""Vector executor speed cliffs: a loop that keeps running for one lane of a
large vector block.  ``if i == 0: for k in range(20000): ...`` over 64 blocks of 256 threads
(one chunk of 16K lanes) took 10 s on the vector executor and 0.02 s per thread: each
iteration merged 16K-lane arrays for one active lane.  ``VectorBlock.spin`` now stops such a
block (few active lanes over its loop iterations) and reruns it per thread; the rest of the
launch stays vector.  No timings here: the tests assert which executor ran, how many blocks
ran per thread and the values (both executors bit for bit)."""
import numpy as np
import pytest

import cujit as cuda
from cujit.simulator import threads, vecblock
from cujit.simulator.kernel import simulate

pytestmark = pytest.mark.sim     # the simulator's executors


@cuda.jit
def _one_thread_works(a, o):
    i = cuda.grid(1)
    if i == 0:
        s = 0.0
        for k in range(3000):
            s += a[k % a.size]
        o[0] = s


@cuda.jit
def _one_lane_long(a, o):
    i = cuda.grid(1)
    s = 0
    k = 0
    while k < a[i]:
        s += k * k
        k += 1
    o[i] = s


@cuda.jit
def _triangular(o):
    i = cuda.grid(1)
    s = 0
    for j in range(i):
        s += j
    o[i] = s


def _launch(monkeypatch, vector, kernel, griddim, blockdim, *args):
    """(copies of args after the launch, launch counter deltas, blocks run per thread)."""
    monkeypatch.setenv("CUJIT_SIM_VECTOR", "1" if vector else "0")
    args = [a.copy() for a in args]
    ran = []
    orig = threads.Block.run

    def counted(self):
        ran.append(self)
        return orig(self)
    monkeypatch.setattr(threads.Block, "run", counted)
    before = dict(vecblock.launches)
    simulate(kernel, griddim, blockdim, *args)
    monkeypatch.setattr(threads.Block, "run", orig)
    delta = {k: vecblock.launches[k] - before[k] for k in before}
    return args, delta, len(ran)


def _same(a, b):
    return a.dtype == b.dtype and a.view(np.uint8).tolist() == b.view(np.uint8).tolist()


def test_serial_loop_of_one_thread_in_a_chunk_runs_per_thread(monkeypatch):
    args = (np.arange(100, dtype=np.float32), np.zeros(1, np.float32))
    vec, delta, per_thread = _launch(monkeypatch, True, _one_thread_works, 64, 256, *args)
    ref, _, _ = _launch(monkeypatch, False, _one_thread_works, 64, 256, *args)
    assert delta["rerun"] == 1 and per_thread == 64      # the one chunk of 64 blocks
    assert _same(vec[1], ref[1])
    assert vec[1][0] == np.float32(sum(float(k % 100) for k in range(3000)))


def test_only_the_sparse_chunk_runs_per_thread(monkeypatch):
    a = np.ones(32 * 2048, np.int32)
    a[0] = 2000                     # lane 0 of the first chunk (1024 blocks of 32)
    args = (a, np.zeros(a.size, np.int32))
    vec, delta, per_thread = _launch(monkeypatch, True, _one_lane_long, 2048, 32, *args)
    ref, _, _ = _launch(monkeypatch, False, _one_lane_long, 2048, 32, *args)
    assert delta == {"vector": 1, "thread": 0, "rerun": 1}
    assert per_thread == vecblock.CHUNK_LANES // 32       # the second chunk stays vector
    assert _same(vec[1], ref[1])
    want = np.array([sum(k * k for k in range(2000))], np.int64).astype(np.int32)[0]
    assert vec[1][0] == want                            # wrapped past 2**31


def test_one_long_lane_of_a_large_block(monkeypatch):
    a = np.ones(256, np.int32)
    a[5] = 3000
    vec, delta, per_thread = _launch(monkeypatch, True, _one_lane_long, 1, 256, a,
                                     np.zeros(256, np.int32))
    ref, _, _ = _launch(monkeypatch, False, _one_lane_long, 1, 256, a, np.zeros(256, np.int32))
    assert delta["rerun"] == 1 and per_thread == 1
    assert _same(vec[1], ref[1])


def test_busy_loops_of_uneven_length_stay_vector(monkeypatch):
    # half the lane slots busy on average: per thread would be far slower
    vec, delta, per_thread = _launch(monkeypatch, True, _triangular, 4, 256,
                                     np.zeros(1024, np.int64))
    assert delta == {"vector": 1, "thread": 0, "rerun": 0} and per_thread == 0
    assert vec[0].tolist() == [i * (i - 1) // 2 for i in range(1024)]


@cuda.jit
def _thread0_scan(a, o):
    sh = cuda.shared.array(256, cuda.int32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    sh[t] = a[i]
    cuda.syncthreads()
    if t == 0:
        for k in range(1, 256):
            sh[k] += sh[k - 1]
    cuda.syncthreads()
    o[i] = sh[t]


def test_serial_loop_of_thread_zero_in_every_block_runs_per_thread(monkeypatch):
    # two blocks stop as Sparse, then the rest of the launch runs per thread
    a = np.arange(8 * 256, dtype=np.int32) % 7
    vec, delta, per_thread = _launch(monkeypatch, True, _thread0_scan, 8, 256, a,
                                     np.zeros_like(a))
    ref, _, _ = _launch(monkeypatch, False, _thread0_scan, 8, 256, a, np.zeros_like(a))
    assert delta == {"vector": 1, "thread": 0, "rerun": 2} and per_thread == 8
    assert _same(vec[1], ref[1])
    assert (vec[1].reshape(8, 256) == np.cumsum(a.reshape(8, 256), axis=1)).all()


@cuda.jit
def _found_flag(a, found, out):
    i = cuda.grid(1)
    if i < a.size:
        out[i] = a[i] * 2
        if a[i] < 0:
            found[0] = 1        # several threads write one element: the chunk reruns


@pytest.mark.parametrize("negative,reruns,per_thread_blocks", [
    ((5, 7), 1, 32),                    # chunk 0 reruns, chunks 1 and 2 stay vector
    ((5, 7, 40000, 40002), 2, 96),      # chunks 0 and 1 rerun: the rest runs per thread
])
def test_after_a_racy_chunk_the_next_chunk_runs_vector_again(monkeypatch, negative, reruns,
                                                             per_thread_blocks):
    # a flag set by a few threads is a race (CUJIT_SIM_GLOBAL_RACES); here its executors count
    monkeypatch.setenv("CUJIT_SIM_GLOBAL_RACES", "0")
    per = vecblock.CHUNK_LANES // 1024          # blocks per chunk
    a = np.ones(3 * per * 1024, np.float32)
    a[list(negative)] = -1.0
    (_, found, out), delta, per_thread = _launch(monkeypatch, True, _found_flag, 3 * per,
                                                 1024, a, np.zeros(1, np.int32),
                                                 np.zeros_like(a))
    assert delta["vector"] == 1 and delta["thread"] == 0
    assert delta["rerun"] == reruns and per_thread == per_thread_blocks
    assert found[0] == 1 and (out == a * 2).all()
