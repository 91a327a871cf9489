"""The compiler issue's kernels on the simulator give NumPy's results (docs/requirements.md §9)."""
import numpy as np
import pytest

import cujit as cuda

pytestmark = pytest.mark.sim

from kernels_common import TPB, example, matmul_tiled

COEFFS = np.array([0.25, 0.5, 0.25], dtype=np.float64)
N_LOCAL = 20


# The seed guide's two dynamic shared memory programs, as examples/ has them
_SEED = example("shared_memory_aliasing")
seed_alias, seed_disjoint = _SEED.f.py_func, _SEED.f_with_view.py_func


def test_seed_dynamic_shared_aliasing(launch, capsys):
    launch(seed_alias, 1, 1, shmem=4)
    # vprintf's text, as the GPU prints it (floats as %f)
    assert capsys.readouterr().out == "3.140000\n1078523331\n"


def test_seed_dynamic_shared_disjoint_views(launch, capsys):
    launch(seed_disjoint, 1, 1, shmem=8)
    assert capsys.readouterr().out == "3.140000\n1\n"


matmul = matmul_tiled


@pytest.mark.parametrize("check", [True, False])
def test_tiled_matmul_matches_numpy(launch, checks, check):
    checks(check)
    rng = np.random.default_rng(0)
    A = rng.random((13, 11), dtype=np.float32)
    B = rng.random((11, 17), dtype=np.float32)
    C = np.zeros((13, 17), np.float32)
    launch(matmul, ((17 + TPB - 1) // TPB, (13 + TPB - 1) // TPB), (TPB, TPB), A, B, C)
    np.testing.assert_allclose(C, A @ B, rtol=1e-5)


def block_sum(a, out):
    s = cuda.shared.array(128, np.float64)
    tid = cuda.threadIdx.x
    i = cuda.grid(1)
    s[tid] = a[i] if i < a.shape[0] else 0.0
    cuda.syncthreads()
    stride = cuda.blockDim.x // 2
    while stride > 0:
        if tid < stride:
            s[tid] += s[tid + stride]
        cuda.syncthreads()
        stride //= 2
    if tid == 0:
        out[cuda.blockIdx.x] = s[0]


def test_block_reduction_matches_numpy(launch):
    a = np.random.default_rng(1).random(1000)
    out = np.zeros(8)
    launch(block_sum, 8, 128, a, out)
    np.testing.assert_allclose(out, np.add.reduceat(a, np.arange(0, 1000, 128)))


def stencil(x, y):
    c = cuda.const.array_like(COEFFS)
    i = cuda.grid(1)
    if 1 <= i < x.shape[0] - 1:
        y[i] = c[0] * x[i - 1] + c[1] * x[i] + c[2] * x[i + 1]


def test_const_stencil_matches_numpy(launch):
    x = np.random.default_rng(2).random(50)
    y = np.zeros(50)
    launch(stencil, 2, 32, x, y)
    np.testing.assert_allclose(y[1:-1], np.convolve(x, COEFFS[::-1], "valid"))
    assert y[0] == 0 and y[-1] == 0


def local_reverse(a, out):
    tmp = cuda.local.array(4, np.int64)
    i = cuda.grid(1)
    for j in range(4):
        tmp[j] = a[i, j]
    for j in range(4):
        out[i, j] = tmp[3 - j]


def test_local_array_kernel_matches_numpy(launch):
    a = np.arange(24, dtype=np.int64).reshape(6, 4)
    out = np.zeros_like(a)
    launch(local_reverse, 2, 3, a, out)
    np.testing.assert_array_equal(out, a[:, ::-1])


def local_concat(a, b, out):
    row = cuda.local.array(N_LOCAL, np.float32)
    i = cuda.grid(1)
    for j in range(10):
        row[j] = a[i, j]
        row[10 + j] = b[i, j]
    for j in range(N_LOCAL):
        out[i, j] = row[j]


def test_local_array_global_size_hstack(launch):
    """Numba bug-report case 8: local.array(N, float32), N a module-level int."""
    rng = np.random.default_rng(3)
    a = rng.random((4, 10), dtype=np.float32)
    b = rng.random((4, 10), dtype=np.float32)
    out = np.zeros((4, 20), np.float32)
    launch(local_concat, 1, 4, a, b, out)
    np.testing.assert_array_equal(out, np.hstack([a, b]))


def neighbours(x):
    sdata = cuda.shared.array(32, dtype=np.float32)
    tid = cuda.threadIdx.x
    sdata[tid] = x[tid]
    cuda.syncthreads()
    x[tid] = sdata[(tid + 1) % 32]


def test_seed_shared_neighbour_rotation(launch):
    x = np.arange(32, dtype=np.float32)
    launch(neighbours, 1, 32, x)
    np.testing.assert_array_equal(x, np.roll(np.arange(32, dtype=np.float32), -1))
