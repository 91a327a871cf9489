"""Run a kernel on the simulator with the vector executor on and off and compare (the
vector executor's tests)."""
import numpy as np
import pytest

from cujit.simulator import vecblock
from cujit.simulator.kernel import simulate


def counts():
    return dict(vecblock.launches)


def run(monkeypatch, kernel, griddim, blockdim, args, vector):
    """Copies of ``args`` after one launch with ``CUJIT_SIM_VECTOR`` on/off, and which
    executor ran it ('vector', 'thread' or 'rerun': vector, then per thread)."""
    monkeypatch.setenv("CUJIT_SIM_VECTOR", "1" if vector else "0")
    args = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    before = counts()
    simulate(kernel, griddim, blockdim, *args)
    after = counts()
    ran = [k for k in ("rerun", "vector", "thread") if after[k] > before[k]]
    return args, ran[0]


def same_bits(a, b):
    """True when arrays ``a`` and ``b`` hold the same bytes (NaN payloads, -0.0 count)."""
    a, b = np.ascontiguousarray(a), np.ascontiguousarray(b)
    return a.dtype == b.dtype and a.shape == b.shape and \
        np.array_equal(a.view(np.uint8), b.view(np.uint8))


def compare(monkeypatch, kernel, griddim, blockdim, *args, expect="vector"):
    """Launch with the vector executor and per thread; assert the vector launch ran on
    ``expect`` (None: any executor) and every array argument ends bit-for-bit equal.
    Returns the arrays."""
    vec, ran = run(monkeypatch, kernel, griddim, blockdim, args, True)
    ref, ran_ref = run(monkeypatch, kernel, griddim, blockdim, args, False)
    assert ran_ref == "thread"
    assert expect is None or ran == expect, f"vector launch ran as {ran}"
    for i, (v, r) in enumerate(zip(vec, ref)):
        if isinstance(v, np.ndarray):
            assert same_bits(v, r), f"argument {i}: vector {v!r} != per-thread {r!r}"
    return vec


def raised(monkeypatch, exc, kernel, griddim, blockdim, *args):
    """Launch with the vector executor and per thread, each on copies of ``args``, expecting
    ``exc`` both times.  Returns ``(vector, per_thread)``, each ``(message, arrays after the
    error as lists, executor that ran)``."""
    out = []
    for vector in (True, False):
        monkeypatch.setenv("CUJIT_SIM_VECTOR", "1" if vector else "0")
        copies = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
        before = counts()
        with pytest.raises(exc) as ei:
            simulate(kernel, griddim, blockdim, *copies)
        after = counts()
        ran = [k for k in ("rerun", "vector", "thread") if after[k] > before[k]]
        out.append((str(ei.value), [c.tolist() for c in copies if isinstance(c, np.ndarray)],
                    ran[0] if ran else None))
    return out
