"""The thread's CUDA context stack as numba's driver object shows it
(``driver.get_active_context()``, ``driver.pop_active_context()``) and ``with gpus[i]:``,
which gives the thread back the context it had (numba-cuda's test_context_stack.py)."""
import numpy as np

import cujit
from cujit.cudadrv.driver import driver


def _drain():
    while driver.pop_active_context() is not None:
        pass


def test_active_context_is_cujits_current_one():
    ctx = cujit.current_context()
    with driver.get_active_context() as ac:
        assert ac and int(ac.context_handle) == int(ctx.handle)
        assert ac.devnum == ctx.device.id


def test_popped_context_is_bound_again_at_cujits_next_use():
    ctx = cujit.current_context()
    assert driver.pop_active_context() == ctx.handle
    _drain()
    with driver.get_active_context() as ac:
        assert not ac and ac.context_handle is None and ac.devnum is None
    assert driver.pop_active_context() is None
    d = cujit.to_device(np.arange(8))           # cujit makes its context current again
    np.testing.assert_equal(d.copy_to_host(), np.arange(8))
    with driver.get_active_context() as ac:
        assert ac.context_handle == cujit.current_context().handle


def test_gpus_block_leaves_no_context_when_there_was_none():
    cujit.current_context()
    _drain()
    with cujit.gpus[0]:
        with driver.get_active_context() as ac:
            assert ac.devnum == 0
    with driver.get_active_context() as ac:
        assert ac.context_handle is None
    np.testing.assert_equal(cujit.to_device(np.ones(3)).copy_to_host(), 1)


def test_gpus_block_restores_the_previous_context():
    outer = cujit.current_context()
    with cujit.gpus[0]:
        pass
    with driver.get_active_context() as ac:
        assert int(ac.context_handle) == int(outer.handle)
    assert cujit.current_context() is outer
