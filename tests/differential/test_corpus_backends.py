"""Simulator against compiled kernel, in one process: every corpus case runs on the GPU and
on the simulator (``cujit.simulator.kernel.simulate``, host arrays) with the same inputs, and
the outputs must agree: bit for bit for integers, booleans and IEEE basic operations, within
libdevice's ulp bounds for transcendental functions, within a relative tolerance where the GPU
contracts multiply-adds or orders atomics differently.  The GPU side is ``gpu``-marked (the
H200 run); the simulator-only checks of ``simulate`` run everywhere."""
import numpy as np
import pytest

import cujit as cuda
from cujit.simulator.kernel import simulate

from corpus import CASES, compare, arith


def _copy(args):
    return [a.copy() if isinstance(a, np.ndarray) else a for a in args]


@pytest.mark.gpu
@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_simulator_and_gpu_agree(case, seed):
    rng = np.random.default_rng(seed)
    ins, outs, griddim, blockdim, args = case.make(rng)
    sim_args = _copy(args)
    case.kernel[griddim, blockdim](*args)
    cuda.synchronize()
    simulate(case.kernel, griddim, blockdim, *sim_args)
    # outputs are found by identity among the launch arguments
    idx = {id(a): k for k, a in enumerate(args)}
    bad = {}
    for name, mode in case.modes.items():
        k = idx[id(outs[name])]
        msg = compare(sim_args[k], args[k], mode)
        if msg:
            bad[name] = msg
    assert not bad, f"{case.name} seed {seed}: simulator vs GPU {bad}"


def test_simulate_matches_a_launch_on_the_active_backend():
    a = np.array([7, -7, 3], np.int32)
    b = np.array([2, 2, 0], np.int32)
    outs1 = [np.zeros(3, np.int64) for _ in range(3)] + [np.zeros(3, np.float64)] + \
        [np.zeros(3, np.int64) for _ in range(2)]
    outs2 = [o.copy() for o in outs1]
    arith[1, 32](a, b, *outs1)
    cuda.synchronize()
    simulate(arith, 1, 32, a, b, *outs2)
    for x, y in zip(outs1, outs2):
        assert x.tobytes() == y.tobytes()
    assert outs2[4].tolist() == [3, -4, 0] and outs2[5].tolist() == [1, 1, 0]


def test_simulate_rejects_device_arrays_and_bad_dims():
    with pytest.raises(TypeError, match="argument 0 must be a host NumPy array or a scalar, "
                                        "got list"):
        simulate(arith, 1, 32, [1, 2])
    with pytest.raises(ValueError, match=r"blockdim must be a positive int or a tuple of 1 to "
                                         r"3 positive ints, got \(0,\)"):
        simulate(arith, 1, (0,), np.zeros(1))
    with pytest.raises(ValueError, match="dynamic shared memory size must be >= 0 bytes"):
        simulate(arith, 1, 1, np.zeros(1), dynamic_shared_bytes=-1)
