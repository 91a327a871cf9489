"""Vector executor: the same buffer passed as two different arrays.

An in-place stencil ``st(x, x[:])`` (``out[i] = a[i - 1] + a[i + 1]`` with ``out`` and ``a``
views of one buffer) is a race whose simulated result is the per-thread order (thread i
reads what thread i - 1 wrote): 0, 2, 5, 9, 14 ...  The vector executor keeps its conflict
records per array argument, so it read the old values (0, 2, 4, 6 ...): a silent wrong
value (the blind spot of docs/design-simulator.md).  Launches whose array arguments may
overlap now run per thread; the same array passed twice still runs vector (one record)."""
import numpy as np
import pytest

import cujit as cuda
from cujit.simulator import vecblock
from cujit.simulator.kernel import _aliased, simulate

pytestmark = pytest.mark.sim     # the simulator's executors


@cuda.jit
def _stencil(a, out):
    i = cuda.grid(1)
    if 0 < i < a.size - 1:
        out[i] = a[i - 1] + a[i + 1]


def _run(monkeypatch, vector, make_args):
    monkeypatch.setenv("CUJIT_SIM_VECTOR", "1" if vector else "0")
    # the race is the point here: its simulated result is the per-thread order
    monkeypatch.setenv("CUJIT_SIM_GLOBAL_RACES", "0")
    x = np.arange(64, dtype=np.float64)
    before = dict(vecblock.launches)
    simulate(_stencil, 2, 32, *make_args(x))
    return x, {k: vecblock.launches[k] - before[k] for k in before}


@pytest.mark.parametrize("make_args", [lambda x: (x, x[:]), lambda x: (x[:], x),
                                       lambda x: (x.reshape(8, 8).ravel(), x)])
def test_overlapping_views_run_per_thread(monkeypatch, make_args):
    vec, delta = _run(monkeypatch, True, make_args)
    ref, _ = _run(monkeypatch, False, make_args)
    assert delta == {"vector": 0, "thread": 1, "rerun": 0}
    assert vec.tolist() == ref.tolist()
    assert vec[:6].tolist() == [0.0, 2.0, 5.0, 9.0, 14.0, 20.0]


def test_same_array_twice_and_disjoint_views_stay_vector(monkeypatch):
    vec, delta = _run(monkeypatch, True, lambda x: (x, x))
    assert delta["vector"] == 1 and delta["thread"] == 0
    assert vec[:6].tolist() == [0.0, 2.0, 5.0, 9.0, 14.0, 20.0]
    x = np.zeros(8)
    assert not _aliased([x[:4], x[4:], 3, np.zeros(0), x[:0]])
    assert _aliased([x[:5], x[4:]])
