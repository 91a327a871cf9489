"""Vector executor: blocks of one thread.

- ``kernel[1, 1]`` with a serial loop (``for k in range(a.size): s += a[k] * a[k]``, then
  ``o[0] = s``) ran on the vector executor with one-lane NumPy arrays: the store of the
  lane array ``s`` at the uniform index 0 raised NumPy's "setting an array element with a
  sequence", so the block was rolled back and rerun per thread after the whole loop: right
  values, 40x slower than per thread.  A store of a one-lane array at a uniform index now
  stores its element, and launches whose vectors would have one lane (one block of one
  thread; blocks of one thread of a kernel with shared memory or barriers) run per thread.
- The last chunk of a multi-block launch can still be a single one-thread block: its
  uniform-index stores (``o[cuda.blockIdx.x] = ...``) must not send it per thread.
"""
import numpy as np
import pytest

import cujit as cuda
from cujit.simulator import vecblock
from cujit.simulator.kernel import simulate
from cujit.simulator.vecmem import one_element

pytestmark = pytest.mark.sim     # the simulator's executors


@cuda.jit
def _serial(a, o):
    s = 0.0
    for k in range(a.size):
        s += a[k] * a[k]
    o[0] = s


@cuda.jit
def _per_block(a, o):
    o[cuda.blockIdx.x] = a[cuda.blockIdx.x] * 2.0


@cuda.jit
def _shared_one(a, o):
    sh = cuda.shared.array(2, cuda.float64)
    sh[1] = a[cuda.blockIdx.x]
    cuda.syncthreads()
    o[cuda.blockIdx.x] = sh[1] + 1.0


def _launch(monkeypatch, vector, kernel, griddim, blockdim, *args):
    monkeypatch.setenv("CUJIT_SIM_VECTOR", "1" if vector else "0")
    args = [a.copy() for a in args]
    before = dict(vecblock.launches)
    simulate(kernel, griddim, blockdim, *args)
    return args, {k: vecblock.launches[k] - before[k] for k in before}


def test_one_thread_launch_runs_per_thread(monkeypatch):
    a = np.arange(500, dtype=np.float64)
    (_, o), delta = _launch(monkeypatch, True, _serial, 1, 1, a, np.zeros(1))
    assert delta == {"vector": 0, "thread": 1, "rerun": 0}
    assert o[0] == float((a * a).sum())


def test_one_thread_blocks_with_shared_memory_run_per_thread(monkeypatch):
    a = np.arange(5, dtype=np.float64)
    (_, o), delta = _launch(monkeypatch, True, _shared_one, 5, 1, a, np.zeros(5))
    assert delta == {"vector": 0, "thread": 1, "rerun": 0}
    assert o.tolist() == [1.0, 2.0, 3.0, 4.0, 5.0]


def test_single_block_chunk_stores_at_a_uniform_index(monkeypatch):
    n = vecblock.CHUNK_LANES + 1        # the last chunk is one block of one thread
    a = np.arange(n, dtype=np.float64)
    (_, vec), delta = _launch(monkeypatch, True, _per_block, n, 1, a, np.zeros(n))
    assert delta == {"vector": 1, "thread": 0, "rerun": 0}
    assert (vec == a * 2.0).all()


def test_one_element_of_a_one_lane_value():
    assert one_element((0,), np.array([2.5])) == 2.5
    assert one_element((3, 1), np.array([7], np.int32)).dtype == np.int32
    lanes = np.array([1.0, 2.0])
    assert one_element((0,), lanes) is lanes              # a race, reported elsewhere
    idx = (np.array([4]),)
    assert one_element(idx, np.array([1.0])).shape == (1,)  # gathered index: as given
