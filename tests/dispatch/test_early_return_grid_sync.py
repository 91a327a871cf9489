"""numba-cuda programs ported unchanged: numba-cuda's documented 1-D heat equation
(laplace) returns early in the threads past the array, then calls ``grid.sync()``; its
sessionize example calls ``grid.sync()`` only in some threads.  Both run on GPUs (exited
threads release a barrier on compute capability 7.0+) but stop on cujit's simulator with a
BarrierDivergenceError when its checks are on.  The checker stays (CUDA calls this undefined),
but its message now says what happened and how to run such a kernel."""
import numpy as np
import pytest

import cujit as cuda


@cuda.jit
def _heat(buf_0, buf_1, timesteps, k):
    i = cuda.grid(1)
    if i >= len(buf_0):
        return
    grid = cuda.cg.this_grid()
    for step in range(timesteps):
        if (step % 2) == 0:
            data = buf_0
            next_data = buf_1
        else:
            data = buf_1
            next_data = buf_0
        curr = data[i]
        if i == 0:
            nxt = curr + k * (data[i + 1] - (2 * curr))
        elif i == len(data) - 1:
            nxt = curr + k * (data[i - 1] - (2 * curr))
        else:
            nxt = curr + k * (data[i - 1] - (2 * curr) + data[i + 1])
        next_data[i] = nxt
        grid.sync()


def _reference(data, steps, k):
    a, b = data.copy(), np.zeros_like(data)
    for step in range(steps):
        src, dst = (a, b) if step % 2 == 0 else (b, a)
        dst[0] = src[0] + k * (src[1] - 2 * src[0])
        dst[-1] = src[-1] + k * (src[-2] - 2 * src[-1])
        dst[1:-1] = src[1:-1] + k * (src[:-2] - 2 * src[1:-1] + src[2:])
    return b


@pytest.mark.sim
def test_early_return_before_grid_sync_says_how_to_run_it(checks):
    from cujit.simulator.errors import BarrierDivergenceError
    checks(True)
    data = np.zeros(101)
    data[50] = 1000
    with pytest.raises(BarrierDivergenceError, match=r"have finished without reaching it "
                       r"\(CUDA leaves that undefined, though current GPUs release a barrier "
                       r"for exited threads: keep every thread to the barrier, or run with "
                       r"CUJIT_SIM_CHECKS=0\)"):
        _heat[1, 128](cuda.to_device(data), cuda.device_array(101), 10, 0.25)


def test_early_return_example_computes_with_checks_off(checks):
    # runs on a GPU too: the doc example as numba-cuda's test runs it
    checks(False)
    data = np.zeros(101)
    data[50] = 1000
    b0 = cuda.to_device(data)
    b1 = cuda.device_array_like(b0)
    _heat.forall(len(data))(b0, b1, 20, 0.25)
    np.testing.assert_allclose(b1.copy_to_host(), _reference(data, 20, 0.25), rtol=1e-12)


@cuda.jit
def _two_sites(out):
    if cuda.threadIdx.x < 4:
        cuda.syncthreads()
    else:
        cuda.syncthreads()
    out[cuda.threadIdx.x] = 1


@pytest.mark.sim
def test_two_barrier_sites_get_no_early_return_hint(checks):
    from cujit.simulator.errors import BarrierDivergenceError
    checks(True)
    with pytest.raises(BarrierDivergenceError) as e:
        _two_sites[1, 8](np.zeros(8))
    assert "CUJIT_SIM_CHECKS" not in str(e.value)
