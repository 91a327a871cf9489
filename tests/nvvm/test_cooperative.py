"""Cooperative groups (issue 14): ``cuda.cg.this_grid().sync()`` and
``max_cooperative_grid_blocks``.  Unmarked tests run on either backend (the simulator runs the
blocks of a cooperative launch together, cujit/simulator/grid.py); ``sim`` tests check the
simulator's reports of what hangs or is undefined on a GPU."""
import numpy as np
import pytest

import cujit as cuda
from cujit import types as T
from cujit.dispatch.dispatcher import Dispatcher
from cujit.nvvm.lowering import compile_to_llvm


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


def test_grid_sync_two_blocks_rotate():
    a = np.zeros(64, np.int64)
    out = np.zeros(64, np.int64)
    cuda.jit(rotate)[2, 32](a, out)
    assert out.tolist() == [((i + 1) % 64) * 3 for i in range(64)]
    assert (a == 0).all()


def neighbour_block(vals, out):
    # each block writes its own slot; after the grid barrier reads the next block's
    g = cuda.cg.this_grid()
    b = cuda.blockIdx.x
    t = cuda.threadIdx.x
    if t == 0:
        vals[b] = (b + 1) * 100
    g.sync()
    out[b * cuda.blockDim.x + t] = vals[(b + 1) % cuda.gridDim.x] + t


@pytest.mark.parametrize("blocks", [4, 8])
def test_grid_sync_block_reads_another_blocks_value(blocks):
    tpb = 32
    vals = cuda.to_device(np.zeros(blocks, np.int64))
    out = cuda.device_array(blocks * tpb, np.int64)
    cuda.jit(neighbour_block)[blocks, tpb](vals, out)
    got = out.copy_to_host().reshape(blocks, tpb)
    for b in range(blocks):
        assert got[b].tolist() == [((b + 1) % blocks + 1) * 100 + t for t in range(tpb)]


RED_TPB = 64


@cuda.jit(device=True)
def _grid_barrier():
    cuda.cg.this_grid().sync()      # a device function that waits for the grid


def two_phase_sum(x, partial, out):
    s = cuda.shared.array(RED_TPB, np.float64)
    t = cuda.threadIdx.x
    b = cuda.blockIdx.x
    s[t] = x[b * RED_TPB + t]
    cuda.syncthreads()
    stride = RED_TPB // 2
    while stride > 0:
        if t < stride:
            s[t] += s[t + stride]
        cuda.syncthreads()
        stride //= 2
    if t == 0:
        partial[b] = s[0]
    _grid_barrier()
    # phase 2: block 0 sums the partial sums of every block
    if b == 0:
        s[t] = partial[t] if t < cuda.gridDim.x else 0.0
        cuda.syncthreads()
        if t == 0:
            acc = 0.0
            for k in range(RED_TPB):
                acc += s[k]
            out[0] = acc
    cuda.cg.this_grid().sync()
    # phase 3: every block reads the total written by block 0
    if t == 0:
        partial[b] = out[0] - partial[b]


@pytest.mark.parametrize("blocks", [4, 8])
def test_grid_sync_two_phase_reduction(blocks):
    x = np.arange(blocks * RED_TPB, dtype=np.float64) % 11
    partial = cuda.to_device(np.zeros(blocks))
    out = cuda.to_device(np.zeros(1))
    cuda.jit(two_phase_sum)[blocks, RED_TPB](cuda.to_device(x), partial, out)
    total = x.sum()
    assert out.copy_to_host()[0] == total
    per_block = x.reshape(blocks, RED_TPB).sum(axis=1)
    assert partial.copy_to_host().tolist() == (total - per_block).tolist()


def iterate(a, steps):
    # a grid barrier inside a loop: a Jacobi-like sweep over a ring of blocks
    g = cuda.cg.this_grid()
    i = cuda.grid(1)
    n = a.shape[1]
    src = 0
    for _ in range(steps):
        a[1 - src, i] = a[src, (i + n - 1) % n] + 1
        g.sync()
        src = 1 - src
    if i == 0:
        a[1 - src, 0] = -1


def test_grid_sync_in_a_loop():
    n = 4 * 32
    a = np.zeros((2, n), np.int64)
    a[0] = np.arange(n)
    d = cuda.to_device(a)
    cuda.jit(iterate)[4, 32](d, 5)
    got = d.copy_to_host()
    assert got[1].tolist() == [(i - 5) % n + 5 for i in range(n)]
    assert got[0, 0] == -1


@pytest.mark.sim
def test_simulator_max_cooperative_grid_blocks_models_residency():
    # 132 multiprocessors of 2048 threads, at most 32 blocks each (the simulated device)
    k = cuda.jit(rotate)
    assert k.max_cooperative_grid_blocks(1024) == 132 * 2
    assert k.max_cooperative_grid_blocks((8, 8)) == 132 * 32
    assert k.max_cooperative_grid_blocks(32) == 132 * 32


@pytest.mark.sim
def test_simulator_cooperative_launch_too_large_is_an_error():
    from cujit.driver.errors import CudaAPIError
    k = cuda.jit(rotate)
    blocks = k.max_cooperative_grid_blocks(1024) + 1
    a = np.zeros(blocks * 1024, np.int64)
    with pytest.raises(CudaAPIError, match=r"cuLaunchCooperativeKernel failed with "
                       r"CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE: .* 265 blocks of 1024 "
                       r"threads, but at most 264") as ei:
        k[blocks, 1024](a, a.copy())
    assert ei.value.code == 720
    assert (a == 0).all()           # nothing ran
    # a kernel without grid.sync() is not cooperative: the same grid runs
    cuda.jit(lambda_free)[blocks, 1024](a)
    assert a[0] == 1


def only_block_zero_syncs(a):
    if cuda.blockIdx.x == 0:
        cuda.cg.this_grid().sync()
    a[cuda.grid(1)] = 1


@pytest.mark.sim
@pytest.mark.parametrize("on", [True, False])
def test_simulator_grid_sync_in_divergent_blocks_is_reported(checks, on):
    from cujit.simulator.errors import BarrierDivergenceError
    checks(on)          # a GPU would hang: reported with checks on and off
    a = np.zeros(4 * 32, np.int64)
    with pytest.raises(BarrierDivergenceError, match=r"grid barrier divergence: 1 block "
                       r"\(blockIdx \(0, 0, 0\)\) wait at grid.sync\(\) at "
                       r"test_cooperative.py:\d+, but 3 blocks \(blockIdx \(1, 0, 0\) \.\.\. "
                       r"\(3, 0, 0\)\) have finished"):
        cuda.jit(only_block_zero_syncs)[4, 32](a)
    # the simulator is usable afterwards
    b = np.zeros(64, np.int64)
    cuda.jit(rotate)[2, 32](b, b.copy())


def half_block_syncs(a):
    if cuda.threadIdx.x < 16:
        cuda.cg.this_grid().sync()
    a[cuda.grid(1)] = 1


@pytest.mark.sim
def test_simulator_grid_sync_in_divergent_threads_is_reported():
    from cujit.simulator.errors import BarrierDivergenceError
    a = np.zeros(2 * 32, np.int64)
    with pytest.raises(BarrierDivergenceError, match=r"barrier divergence in block "
                       r"blockIdx=\(0, 0, 0\): 16 threads .* wait at grid.sync\(\) at "
                       r"test_cooperative.py:\d+; 16 threads .* have finished"):
        cuda.jit(half_block_syncs)[2, 32](a)


def grid_or_block_barrier(a):
    if cuda.threadIdx.x < 16:
        cuda.cg.this_grid().sync()
    else:
        cuda.syncthreads()
    a[cuda.grid(1)] = 1


@pytest.mark.sim
@pytest.mark.parametrize("on", [True, False])
def test_simulator_grid_sync_mixed_with_syncthreads_is_reported(checks, on):
    from cujit.simulator.errors import BarrierDivergenceError
    checks(on)
    a = np.zeros(2 * 32, np.int64)
    with pytest.raises(BarrierDivergenceError, match=r"16 threads .* wait at grid.sync\(\) "
                       r"at .*; 16 threads .* wait at syncthreads\(\) at "):
        cuda.jit(grid_or_block_barrier)[2, 32](a)


def raise_in_block_two(a):
    g = cuda.cg.this_grid()
    i = cuda.grid(1)
    a[i] = 1
    g.sync()
    a[i + 1000 * (cuda.blockIdx.x == 2)] = 2      # block 2 reads out of bounds


@pytest.mark.sim
def test_simulator_error_in_one_block_unwinds_the_grid():
    from cujit.simulator.errors import OutOfBoundsError
    a = np.zeros(4 * 32, np.int64)
    with pytest.raises(OutOfBoundsError, match=r"blockIdx=\(2, 0, 0\)"):
        cuda.jit(raise_in_block_two)[4, 32](a)
    assert (a[:64] == 2).all() and (a[64:] == 1).all()
    b = np.zeros(64, np.int64)
    out = np.zeros(64, np.int64)
    cuda.jit(rotate)[2, 32](b, out)
    assert out[0] == 3


def untyped_rotate(a, out):
    i = cuda.grid(1)
    a[i] = i
    cuda.cg.this_grid().sync()
    out[i] = a[(i + 1) % a.size]


@pytest.mark.sim
def test_simulator_grid_sync_untyped_says_why(monkeypatch):
    monkeypatch.setenv("CUJIT_SIM_TYPED", "0")
    a = np.zeros(64, np.int64)
    with pytest.raises(NotImplementedError, match="needs a cooperative launch.*CUJIT_SIM_TYPED"):
        cuda.jit(untyped_rotate)[2, 32](a, a.copy())


@pytest.mark.parametrize("bad", [0, -1, 2.5, (4, 0), True])
def test_max_cooperative_grid_blocks_bad_blockdim(bad):
    with pytest.raises(ValueError, match="blockdim"):
        cuda.jit(rotate).max_cooperative_grid_blocks(bad)


@pytest.mark.compile
def test_grid_sync_lowering_and_cooperative_flag():
    lf = compile_to_llvm(rotate, (T.int64[::1], T.int64[::1]))
    assert lf.uses_grid_sync
    from cujit.nvvm.libnvvm import compile_ptx
    ptx = compile_ptx(lf.llvm_ir)
    assert ptx.count("atom.global.add.u32") == 2
    assert "ld.volatile.global.u32" in ptx and ptx.count("bar.sync") == 4
    spec = Dispatcher(rotate, None, {}).compile("void(int64[::1], int64[::1])")
    assert spec.cooperative
    plain = Dispatcher(lambda_free, None, {}).compile("void(int64[::1])")
    assert not plain.cooperative


def lambda_free(a):
    if cuda.grid(1) == 0:       # one writer: many threads storing to a[0] would race
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


@pytest.mark.compile
def test_grid_sync_in_a_device_function_makes_the_kernel_cooperative():
    from cujit.nvvm.libnvvm import compile_ptx
    sig = (T.float64[::1], T.float64[::1], T.float64[::1])
    lf = compile_to_llvm(two_phase_sum, sig)
    assert lf.uses_grid_sync
    assert compile_ptx(lf.llvm_ir).count("atom.global.add.u32") == 2
    assert Dispatcher(two_phase_sum, None, {}).compile(
        "void(float64[::1], float64[::1], float64[::1])").cooperative
