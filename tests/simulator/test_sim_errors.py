"""The simulator's own error paths (run without the front end's typecheck, which rejects most
of these kernels before they run)."""
import numpy as np
import pytest

import cujit as cuda
from cujit.frontend.errors import CompileError, TypingError
from cujit.simulator.errors import WarpDivergenceError

pytestmark = pytest.mark.sim

HALF_A = np.zeros(40 * 1024, np.int8)
HALF_B = np.zeros(40 * 1024, np.int8)


def bad_grid(n):
    cuda.grid(n)


def bad_gridsize(n):
    cuda.gridsize(n)


def test_grid_and_gridsize_ndim(launch, no_typecheck):
    with pytest.raises(ValueError, match=r"threadIdx=\(0, 0, 0\) blockIdx=\(0, 0, 0\) at "
                       r"test_sim_errors.py:\d+: grid\(ndim\): ndim must be 1, 2 or 3, got 4"):
        launch(bad_grid, 1, 1, 4)
    with pytest.raises(ValueError, match=r"gridsize\(ndim\): ndim must be 1, 2 or 3, got 0"):
        launch(bad_gridsize, 1, 1, 0)


def bad_mask():
    cuda.shfl_sync(1.5, 0, 0)


def test_warp_mask_must_be_an_integer(launch, no_typecheck):
    with pytest.raises(TypeError, match=r"shfl_sync: mask must be an integer lane mask, got 1.5"):
        launch(bad_mask, 1, 1)


def mixed_warp_calls(out):
    t = cuda.threadIdx.x
    if t % 2:
        out[t] = cuda.ballot_sync(0xFFFFFFFF, True)
    else:
        out[t] = cuda.any_sync(0xFFFFFFFF, True)


def test_lanes_in_different_warp_calls(launch, no_typecheck):
    with pytest.raises(WarpDivergenceError, match=r"^warp divergence in block blockIdx=\(0, 0, "
                       r"0\) warp 0: lanes of mask 0xffffffff are in different warp calls: 2 "
                       r"threads \(threadIdx \(0, 0, 0\) \.\.\. \(2, 0, 0\)\) in any_sync at "
                       r"test_sim_errors.py:\d+; 2 threads \(threadIdx \(1, 0, 0\) \.\.\. "
                       r"\(3, 0, 0\)\) in ballot_sync at test_sim_errors.py:\d+$"):
        launch(mixed_warp_calls, 1, 4, np.zeros(4))


def atomic_on_scalar(x):
    cuda.atomic.add(x, 0, 1)


def atomic_on_slice(a):
    cuda.atomic.add(a, slice(0, 2), 1)


def test_atomic_needs_an_array_element(launch, no_typecheck):
    with pytest.raises(TypingError, match=r"atomic.add: expected an array, got int"):
        launch(atomic_on_scalar, 1, 1, 3)
    with pytest.raises(TypingError, match=r"atomic.add: index slice\(0, 2, None\) must select "
                       r"one element of 'a' of shape \(4,\)"):
        launch(atomic_on_slice, 1, 1, np.zeros(4))


def len_0d(a, out):
    out[0] = len(a)


def test_len_of_0d_array(launch, no_typecheck):
    with pytest.raises(TypeError, match=r"len\(\) of 0-d array 'a'"):
        launch(len_0d, 1, 1, np.zeros(()), np.zeros(1))


def negative_shape():
    cuda.local.array((2, -1), np.int32)


def const_of_list():
    cuda.const.array_like([1, 2, 3])


def two_big_consts(out):
    a = cuda.const.array_like(HALF_A)
    b = cuda.const.array_like(HALF_B)
    out[0] = a[0] + b[0]


def test_shape_and_const_errors(launch, no_typecheck):
    with pytest.raises(TypingError, match=r"local.array: shape \(2, -1\) has a negative extent"):
        launch(negative_shape, 1, 1)
    with pytest.raises(TypingError, match=r"const.array_like: expected a NumPy array known at "
                       r"compile time, got list"):
        launch(const_of_list, 1, 1)
    with pytest.raises(CompileError, match=r"^constant memory: the kernel places 81920 bytes in "
                       r"constant memory; constant memory holds 65536 bytes \(64 KiB\)"):
        launch(two_big_consts, 1, 1, np.zeros(1))
