"""The pool manager's ``trim(keep_bytes)`` and ``Context.as_current()``.

``trim(-1)``/``trim("a")`` said "allocation size must be ...", naming a value the user did
not pass.  ``with ctx.as_current():`` bound the context in the driver only: allocations,
launches and ``get_current_device()`` in the block still used the thread's own device, so
``with gpus[1].get_primary_context().as_current(): cuda.device_array(3)`` gave device 0's
memory."""
import numpy as np
import pytest

import cujit
from cujit.driver import get_driver


@pytest.mark.parametrize("bad, exc", [(-1, ValueError), ("a", TypeError), (None, TypeError),
                                      (1.5, TypeError), (True, TypeError),
                                      (1 << 70, ValueError)])
def test_pool_trim_bad_keep_bytes_names_the_argument(pool, bad, exc):
    d = cujit.to_device(np.arange(64.0))
    del d
    pool.deallocations.clear()
    cached = pool.pool_stats().cached_bytes
    assert cached > 0
    with pytest.raises(exc, match=r"trim\(keep_bytes\)"):
        pool.trim(bad)
    assert pool.pool_stats().cached_bytes == cached        # nothing released
    assert pool.trim(0) == cached


@pytest.fixture
def two_devices():
    if get_driver().is_simulator:
        cujit.config.SIM_DEVICES = 2
        try:
            yield
        finally:
            del cujit.config.SIM_DEVICES
            cujit.current_context()
        return
    try:
        n = len(cujit.gpus)
    except Exception:
        n = 0
    if n < 2:
        pytest.skip("needs two GPUs (the nvidia-h200-x2 machine)")
    yield


@cujit.jit
def _fill(a, v):
    i = cujit.grid(1)
    if i < a.size:
        a[i] = v


def test_as_current_makes_the_block_use_that_device(two_devices):
    ctx1 = cujit.gpus[1].get_primary_context()
    before = cujit.get_current_device().id
    with ctx1.as_current() as c:
        assert c is ctx1
        assert cujit.get_current_device().id == 1
        d = cujit.device_array(8, np.float32)
        assert d.gpu_data.context is ctx1
        _fill[1, 32](d, 3.0)
        np.testing.assert_array_equal(d.copy_to_host(), np.full(8, 3.0, np.float32))
        with cujit.gpus[0]:
            assert cujit.device_array(2).gpu_data.context.device.id == 0
        assert cujit.device_array(2).gpu_data.context is ctx1
    assert cujit.get_current_device().id == before
    assert cujit.device_array(2).gpu_data.context.device.id == before


def test_as_current_puts_the_device_back_after_an_exception(two_devices):
    ctx1 = cujit.gpus[1].get_primary_context()
    before = cujit.get_current_device().id
    with pytest.raises(KeyError):
        with ctx1.as_current():
            raise KeyError("x")
    assert cujit.get_current_device().id == before
    assert cujit.device_array(2).gpu_data.context.device.id == before
