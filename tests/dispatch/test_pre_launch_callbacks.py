"""``kernel[grid, block].pre_launch_callbacks``: numba-cuda's host functions called as
``callback(kernel, config)`` right before each launch through that configuration."""
import pickle

import numpy as np
import pytest

import cujit as cuda


def _kernel():
    @cuda.jit
    def add_one(a):
        a[0] += 1
    return add_one


def test_callbacks_run_in_order_before_the_launch_with_the_kernel_and_config():
    k = _kernel()
    cfg = k[1, 1]
    a = cuda.to_device(np.zeros(1, np.int64))
    seen = []
    cfg.pre_launch_callbacks.append(lambda kern, c: seen.append(("first", kern, c,
                                                                 int(a.copy_to_host()[0]))))
    cfg.pre_launch_callbacks.append(lambda kern, c: seen.append(("second", kern, c, None)))
    cfg(a)
    cfg(a)
    assert [s[0] for s in seen] == ["first", "second"] * 2
    assert all(s[2] is cfg for s in seen)
    assert [s[3] for s in seen[::2]] == [0, 1]         # called before each launch
    kern = seen[0][1]
    if k.backend.compiled:      # the specialisation about to run
        assert kern is k.overloads[(cuda.types.int64[::1],)] and kern.ptx
    else:                       # the simulator compiles none: the kernel itself
        assert kern is k
    assert a.copy_to_host()[0] == 2


def test_a_callback_that_raises_stops_the_launch():
    k = _kernel()
    cfg = k[1, 1]
    a = cuda.to_device(np.zeros(1, np.int64))

    def refuse(kern, c):
        raise RuntimeError("not now")
    cfg.pre_launch_callbacks.append(refuse)
    with pytest.raises(RuntimeError, match="not now"):
        cfg(a)
    assert a.copy_to_host()[0] == 0


def test_a_configuration_with_callbacks_is_not_shared_by_later_configurations():
    # numba-cuda makes a fresh configuration per kernel[...]; cujit caches them, so the
    # one whose list was taken leaves the cache
    k = _kernel()
    cfg = k[1, 1]
    assert k[1, 1] is cfg
    calls = []
    cfg.pre_launch_callbacks.append(lambda kern, c: calls.append(c))
    other = k[1, 1]
    assert other is not cfg and other.pre_launch_callbacks == []
    a = cuda.to_device(np.zeros(1, np.int64))
    k[1, 1](a)
    other(a)
    assert calls == [] and a.copy_to_host()[0] == 2
    cfg(a)
    assert calls == [cfg]


def test_pickling_a_configuration_with_callbacks_is_refused():
    k = _kernel()
    cfg = k[2, 4]
    pickle.dumps(cfg)       # without callbacks: pickled as kernel and values
    cfg.pre_launch_callbacks.append(print)
    with pytest.raises(pickle.PicklingError,
                       match="Cannot pickle configured launches with pre-launch callbacks"):
        pickle.dumps(cfg)
