"""The kernel backends (cujit/dispatch/backends.py): the one choice from the driver, kept on
the dispatcher per driver, and what each backend answers for the introspection calls."""
import numpy as np
import pytest

import cujit
from cujit.dispatch import backends
from cujit.dispatch.dispatcher import Dispatcher
from cujit.driver.api import Driver
from cujit.driver.errors import CudaSupportError


class _Gpu(Driver):
    pass


class _Sim(Driver):
    is_simulator = True


def add_one(a):
    i = cujit.grid(1)
    if i < a.size:
        a[i] += 1


def test_backend_of_follows_the_driver_contract():
    assert backends.backend_of(_Gpu()) is backends.NVVM
    assert backends.backend_of(_Sim()) is backends.SIMULATOR
    assert backends.NVVM.compiled and not backends.NVVM.is_simulator
    assert backends.SIMULATOR.is_simulator and not backends.SIMULATOR.compiled


def test_dispatcher_keeps_its_backend_per_driver():
    k = Dispatcher(add_one, None, {"device": False})
    gpu, sim = _Gpu(), _Sim()
    assert k.backend_for(gpu) is backends.NVVM
    assert k._backend == (gpu, backends.NVVM)
    assert k.backend_for(gpu) is backends.NVVM
    # another driver (a test's stand-in, say) gets its own backend, not the kept one
    assert k.backend_for(sim) is backends.SIMULATOR
    assert k._backend == (sim, backends.SIMULATOR)


def test_dispatcher_backend_without_a_driver_is_nvvm(monkeypatch):
    from cujit import driver

    def no_driver():
        raise CudaSupportError("no CUDA driver here")
    monkeypatch.setattr(driver, "get_driver", no_driver)
    k = Dispatcher(add_one, None, {"device": False})
    assert k.backend is backends.NVVM


def test_abstract_backend_names_what_is_missing():
    b = backends.KernelBackend()
    with pytest.raises(NotImplementedError):
        b.declare(None, ())
    with pytest.raises(NotImplementedError):
        b.launch(None, None, (), None, None)
    with pytest.raises(NotImplementedError):
        b.forall_block_size(None, (), None, None)
    with pytest.raises(NotImplementedError):
        b.func_attribute(None, None, "NUM_REGS", None, None)
    with pytest.raises(NotImplementedError):
        b.cooperative_grid_blocks(None, 32, 0, None, None)


@pytest.mark.sim
def test_simulated_launch_goes_through_the_simulator_backend():
    k = cujit.jit(add_one)
    d = cujit.to_device(np.zeros(40, np.float32))
    k[2, 32](d)
    assert d.copy_to_host().tolist() == [1.0] * 40
    assert k.backend is backends.SIMULATOR
    assert k._fast is None          # the simulator hands back no fast path
    assert list(k.signatures) == [(cujit.types.Array(cujit.float32, 1, "C"),)]
    with pytest.raises(RuntimeError, match="NUM_REGS of kernel add_one is a property of "
                                           "compiled GPU code"):
        k.get_regs_per_thread()
    assert backends.SIMULATOR.forall_block_size(k, (d,), None, None) == 128
