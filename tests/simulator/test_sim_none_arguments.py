"""None as a kernel argument on both simulator executors: the per-thread one and the vector
one run the kernel typed for ``none``, its ``is None`` branches decided at compile time."""
import numpy as np
import pytest

import cujit as cuda
from cujit.simulator import vecblock

pytestmark = pytest.mark.sim     # the simulator's executors


@cuda.jit
def scale_or_add(out, x, y=None, factor=None):
    i = cuda.grid(1)
    if i < out.size:
        v = x[i]
        if y is not None:
            v += y[i]
        if factor is None:
            v *= 2.0
        else:
            v *= factor
        out[i] = v


@pytest.mark.parametrize("vector, ran", [("1", "vector"), ("0", "thread")])
@pytest.mark.parametrize("extra, want", [
    ((), lambda x: 2 * x),
    ((None, None), lambda x: 2 * x),
    ((None, 3.0), lambda x: 3 * x),
    (("x", None), lambda x: 4 * x),
    (("x", 0.5), lambda x: x),
])
def test_none_arguments_on_each_executor(monkeypatch, vector, ran, extra, want):
    monkeypatch.setenv("CUJIT_SIM_VECTOR", vector)
    x = np.arange(64.0)
    out = np.zeros(64)
    args = tuple(x if e == "x" else e for e in extra)
    before = dict(vecblock.launches)
    scale_or_add[2, 32](out, x, *args)
    np.testing.assert_array_equal(out, want(x))
    assert vecblock.launches[ran] - before[ran] == 1
