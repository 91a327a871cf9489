"""Cooperative groups (issue 14): ``cuda.cg.this_grid().sync()`` and
``max_cooperative_grid_blocks``.  The multi-block grid barrier runs on the GPU (marker gpu);
the simulator supports single-block grids and says so for larger ones."""
import numpy as np
import pytest

import cujit as cuda
from cujit import types as T
from cujit.compiler.dispatcher import Dispatcher
from cujit.compiler.lowering import compile_to_llvm


def rotate(a, out):
    g = cuda.cg.this_grid()
    i = cuda.grid(1)
    a[i] = i * 3
    g.sync()
    out[i] = a[(i + 1) % a.size]
    cuda.cg.this_grid().sync()
    a[i] = 0


def test_grid_sync_single_block():
    n = 64
    a = np.zeros(n, np.int64)
    out = np.zeros(n, np.int64)
    cuda.jit(rotate)[1, n](a, out)
    assert out.tolist() == [((i + 1) % n) * 3 for i in range(n)]
    assert (a == 0).all()


@pytest.mark.gpu
def test_grid_sync_across_blocks_and_launches():
    k = cuda.jit(rotate)
    k.compile((T.int64[::1], T.int64[::1]))
    blocks = min(k.max_cooperative_grid_blocks(128), 16)
    assert blocks >= 2
    n = blocks * 128
    for _ in range(3):          # the barrier counter is reused across launches
        a = cuda.to_device(np.zeros(n, np.int64))
        out = cuda.device_array(n, np.int64)
        k[blocks, 128](a, out)
        assert out.copy_to_host().tolist() == [((i + 1) % n) * 3 for i in range(n)]


@pytest.mark.gpu
def test_cooperative_launch_too_large_is_an_error():
    from cujit.driver.errors import CudaAPIError
    k = cuda.jit(rotate)
    k.compile((T.int64[::1], T.int64[::1]))
    blocks = k.max_cooperative_grid_blocks(1024) + 1
    n = blocks * 1024
    with pytest.raises(CudaAPIError, match="cuLaunchCooperativeKernel"):
        k[blocks, 1024](cuda.device_array(n, np.int64), cuda.device_array(n, np.int64))


@pytest.mark.sim
def test_simulator_grid_sync_needs_one_block():
    a = np.zeros(64, np.int64)
    with pytest.raises(NotImplementedError, match="single-block grids"):
        cuda.jit(rotate)[2, 32](a, a.copy())


@pytest.mark.sim
def test_simulator_max_cooperative_grid_blocks_is_one():
    assert cuda.jit(rotate).max_cooperative_grid_blocks(64) == 1
    assert cuda.jit(rotate).max_cooperative_grid_blocks((8, 8)) == 1


@pytest.mark.parametrize("bad", [0, -1, 2.5, (4, 0), True])
def test_max_cooperative_grid_blocks_bad_blockdim(bad):
    with pytest.raises(ValueError, match="blockdim"):
        cuda.jit(rotate).max_cooperative_grid_blocks(bad)


@pytest.mark.compile
def test_grid_sync_lowering_and_cooperative_flag():
    lf = compile_to_llvm(rotate, (T.int64[::1], T.int64[::1]))
    assert lf.uses_grid_sync
    from cujit.compiler.nvvm import compile_ptx
    ptx = compile_ptx(lf.llvm_ir)
    assert ptx.count("atom.global.add.u32") == 2
    assert "ld.volatile.global.u32" in ptx and ptx.count("bar.sync") == 4
    spec = Dispatcher(rotate, None, {}).compile("void(int64[::1], int64[::1])")
    assert spec.cooperative
    plain = Dispatcher(lambda_free, None, {}).compile("void(int64[::1])")
    assert not plain.cooperative


def lambda_free(a):
    a[0] = 1


@pytest.mark.gpu
def test_max_cooperative_grid_blocks_needs_one_signature():
    k = cuda.jit(rotate)
    with pytest.raises(ValueError, match="0 compiled signatures"):
        k.max_cooperative_grid_blocks(64)
    k.compile((T.int64[::1], T.int64[::1]))
    k.compile((T.int32[::1], T.int32[::1]))
    with pytest.raises(ValueError, match="2 compiled signatures"):
        k.max_cooperative_grid_blocks(64)
    assert k.max_cooperative_grid_blocks(64, signature=(T.int32[::1], T.int32[::1])) >= 1
    with pytest.raises(KeyError):
        k.max_cooperative_grid_blocks(64, signature=(T.float32[::1], T.float32[::1]))
