"""Kernels through ``@cujit.jit`` and ``kernel[grid, block, stream, shmem](...)``: the same
results as NumPy on whichever backend is active (simulator here, the GPU on the device
machine), plus simulator-only checks of argument kinds and stream ordering."""
import numpy as np
import pytest

import cujit as cuda
from cujit.demo.shared_alias import make_kernels

from kernels_common import TPB, matmul_tiled

COEFFS = np.array([0.25, 0.5, 0.25], dtype=np.float32)


# The seed guide's programs with output arrays instead of prints (the demo's kernels)
seed_alias, seed_view = make_kernels(cuda)


def test_seed_examples_through_jit():
    of, oi = np.zeros(1, np.float32), np.zeros(1, np.int32)
    seed_alias[1, 1, 0, 4](of, oi)
    cuda.synchronize()
    assert (of[0], oi[0]) == (np.float32(3.14), 1078523331)
    seed_view[1, 1, 0, 8](of, oi)
    cuda.synchronize()
    assert (of[0], oi[0]) == (np.float32(3.14), 1)


matmul = cuda.jit(matmul_tiled)


def test_tiled_matmul_device_arrays():
    rng = np.random.default_rng(0)
    A = rng.random((20, 12), dtype=np.float32)
    B = rng.random((12, 9), dtype=np.float32)
    dA, dB = cuda.to_device(A), cuda.to_device(B)
    dC = cuda.device_array((20, 9), np.float32)
    matmul[(2, 3), (TPB, TPB)](dA, dB, dC)
    np.testing.assert_allclose(dC.copy_to_host(), A @ B, rtol=1e-5)


@cuda.jit
def block_sum(a, out):
    s = cuda.shared.array(64, np.float32)
    tid = cuda.threadIdx.x
    i = cuda.grid(1)
    if i < a.shape[0]:
        s[tid] = a[i]
    else:
        s[tid] = 0
    cuda.syncthreads()
    stride = 32
    while stride > 0:
        if tid < stride:
            s[tid] += s[tid + stride]
        cuda.syncthreads()
        stride //= 2
    if tid == 0:
        out[cuda.blockIdx.x] = s[0]


def test_block_reduction_on_stream_then_callback():
    a = np.arange(300, dtype=np.float32)
    s = cuda.stream()
    da = cuda.to_device(a, stream=s)
    dout = cuda.device_array(5, np.float32, stream=s)
    block_sum[5, 64, s](da, dout)
    seen = []
    s.add_callback(lambda stream, status, arg: seen.append(arg), "done")
    res = dout.copy_to_host(stream=s)
    s.synchronize()
    assert seen == ["done"]
    np.testing.assert_allclose(res, np.add.reduceat(a, np.arange(0, 300, 64)))


@cuda.jit
def stencil(x, y):
    c = cuda.const.array_like(COEFFS)
    i = cuda.grid(1)
    if i >= 1 and i < x.shape[0] - 1:
        y[i] = c[0] * x[i - 1] + c[1] * x[i] + c[2] * x[i + 1]


def test_const_stencil_through_jit():
    x = np.random.default_rng(1).random(40).astype(np.float32)
    y = np.zeros(40, np.float32)
    stencil[2, 32](x, y)
    cuda.synchronize()
    np.testing.assert_allclose(y[1:-1], np.convolve(x, COEFFS[::-1], "valid"), rtol=1e-6)


@cuda.jit
def local_reverse(a, out):
    tmp = cuda.local.array(4, np.int64)
    i = cuda.grid(1)
    if i < a.shape[0]:
        for j in range(4):
            tmp[j] = a[i, j]
        for j in range(4):
            out[i, j] = tmp[3 - j]


def test_local_array_through_jit():
    a = np.arange(28, dtype=np.int64).reshape(7, 4)
    out = np.zeros_like(a)
    local_reverse[2, 4](a, out)
    cuda.synchronize()
    np.testing.assert_array_equal(out, a[:, ::-1])


@cuda.jit
def scale(a, f):
    i = cuda.grid(1)
    if i < a.shape[0]:
        a[i] = a[i] * f


@pytest.mark.sim
def test_argument_kinds_on_the_simulator():
    # device array view with a negative stride
    d = cuda.to_device(np.arange(6.0))
    scale[1, 8](d[::-2], 10.0)
    assert d.copy_to_host().tolist() == [0, 10, 2, 30, 4, 50]
    # mapped and managed arrays are used in place
    m = cuda.mapped_array(4, np.float64)
    m[:] = 1
    scale[1, 4](m, 3.0)
    cuda.synchronize()
    assert m.tolist() == [3.0] * 4
    g = cuda.managed_array(4, np.float64)
    g[:] = 2
    scale[1, 4](g, 2.0)
    cuda.synchronize()
    assert g.tolist() == [4.0] * 4

    # an object exporting the CUDA Array Interface
    class Foreign:
        def __init__(self, dev):
            self._dev = dev
            self.__cuda_array_interface__ = dev.__cuda_array_interface__
    f = Foreign(cuda.to_device(np.ones(3)))
    scale[1, 4](f, 7.0)
    assert f._dev.copy_to_host().tolist() == [7.0] * 3


@pytest.mark.sim
def test_simulated_launch_reports_out_of_bounds_through_jit():
    from cujit.simulator.errors import OutOfBoundsError

    @cuda.jit
    def bad(a):
        a[cuda.grid(1)] = 1

    with pytest.raises(OutOfBoundsError, match=r"array 'a' of shape \(4,\): "
                       r"threadIdx=\(4, 0, 0\) blockIdx=\(0, 0, 0\)"):
        bad[1, 5](cuda.to_device(np.zeros(4)))


@pytest.mark.sim
def test_dlpack_only_objects_are_used_in_place():
    class OnlyDLPack:
        """Exports an array through DLPack alone (like a framework tensor)."""

        def __init__(self, arr):
            self._arr = arr

        def __dlpack__(self, **kw):
            return self._arr.__dlpack__(**kw)

        def __dlpack_device__(self):
            return self._arr.__dlpack_device__()

    host = np.ones(4)
    scale[1, 4](OnlyDLPack(host), 5.0)
    cuda.synchronize()
    assert host.tolist() == [5.0] * 4
    dev = cuda.to_device(np.ones(3))
    scale[1, 4](OnlyDLPack(dev), 6.0)
    assert dev.copy_to_host().tolist() == [6.0] * 3
