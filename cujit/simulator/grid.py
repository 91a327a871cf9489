"""Cooperative launches on the simulator: ``cg.this_grid().sync()`` across blocks.

A kernel that calls ``grid.sync()`` (the typed function says so: :func:`.typedexec.cooperative`)
runs its blocks together rather than one after another: every block's runner
(:class:`.threads.Block`) runs in a greenlet of its own under one grid hub.  A block runs its
threads round by round as usual; once every live thread of it waits at ``grid.sync()`` it
switches to the grid hub, which starts or resumes the next block.  When every block waits
there, the hub resumes them in block order, each releasing its threads (a new barrier
interval for the shared-memory race tracker, as after ``syncthreads()``).

A GPU runs such a launch only when every block is resident at once
(``cuLaunchCooperativeKernel`` fails with CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE for grids
larger than ``max_cooperative_grid_blocks``).  The simulator models the residency of its
device (an H100-like one: ``MULTIPROCESSOR_COUNT`` multiprocessors of
``MAX_THREADS_PER_MULTIPROCESSOR`` threads, at most 32 blocks each; registers and shared
memory are not modelled) and refuses larger grids with the same error.

Errors (both with checks on and off, since a GPU would hang): blocks that finish while
others wait at ``grid.sync()``, and threads of one block of which some wait at
``grid.sync()`` and others at ``syncthreads()``: :class:`BarrierDivergenceError`.
"""
from .errors import BarrierDivergenceError, fmt_dim, frame_site

__all__ = ["max_cooperative_blocks", "check_cooperative_size", "run_grid"]

# CUDA's limit of resident blocks per multiprocessor (compute capability 9.0)
_MAX_BLOCKS_PER_SM = 32


def _attr(name):
    from ..driver import get_driver
    return int(get_driver().device_attribute(0, name))


def max_cooperative_blocks(nthreads):
    """The most blocks of ``nthreads`` threads (int >= 1) a cooperative launch may have on the
    simulated device: multiprocessors x blocks resident per multiprocessor, the latter
    limited by threads per multiprocessor and by 32 blocks (registers and shared memory are
    not modelled)."""
    per_sm = min(_MAX_BLOCKS_PER_SM, _attr("MAX_THREADS_PER_MULTIPROCESSOR") // nthreads)
    return max(per_sm, 0) * _attr("MULTIPROCESSOR_COUNT")


def check_cooperative_size(nblocks, blockdim, dynamic_shared_bytes=0):
    """Raise ``CudaAPIError`` (CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE, call
    ``cuLaunchCooperativeKernel``) when ``nblocks`` blocks of ``blockdim`` (3-tuple) threads
    cannot all be resident on the simulated device, as the driver does for a cooperative
    launch."""
    bx, by, bz = blockdim
    limit = max_cooperative_blocks(bx * by * bz)
    if nblocks > limit:
        from ..driver.errors import CudaAPIError
        raise CudaAPIError(
            720, f"a kernel that calls grid.sync() is launched with {nblocks} blocks of "
            f"{bx * by * bz} threads, but at most {limit} such blocks can be resident at once "
            f"on the simulated device ({_attr('MULTIPROCESSOR_COUNT')} multiprocessors of "
            f"{_attr('MAX_THREADS_PER_MULTIPROCESSOR')} threads; see "
            "kernel.max_cooperative_grid_blocks(blockdim))", "cuLaunchCooperativeKernel")


def run_grid(launch, step):
    """Run every block of ``launch`` (a :class:`.kernel.Launch` of a cooperative kernel)
    together, ``grid.sync()`` being a barrier over all of them; ``step()`` is called as each
    block finishes (the progress bar).  Raises what a block raises, after unwinding the
    others."""
    from greenlet import GreenletExit, getcurrent, greenlet
    from .threads import Block
    gx, gy, gz = launch.griddim
    hub = getcurrent()
    blocks = [Block(launch, (x, y, z)) for z in range(gz) for y in range(gy)
              for x in range(gx)]
    glets = []
    for b in blocks:
        b.grid_hub = hub
        glets.append(greenlet(b.run, hub))
    live = list(range(len(blocks)))
    first = True
    try:
        while live:
            if not first and launch.races is not None:
                # every block waits at grid.sync(): all before it is ordered with all after
                launch.races.grid_sync()
            first = False
            waiting, finished = [], []
            for i in live:
                glets[i].switch()       # back when block i finished or waits at grid.sync()
                if glets[i].dead:
                    finished.append(i)
                    step()
                else:
                    waiting.append(i)
            if waiting and finished:
                _diverged(blocks, waiting, finished)
            live = waiting
    except BaseException:
        for g in glets:
            if g and not g.dead:
                try:
                    g.throw(GreenletExit)
                except BaseException:
                    pass
        raise


def _blocks(blocks, idx):
    n = len(idx)
    first, last = blocks[idx[0]].bid, blocks[idx[-1]].bid
    if n == 1:
        return f"1 block (blockIdx {fmt_dim(first)})"
    return f"{n} blocks (blockIdx {fmt_dim(first)} ... {fmt_dim(last)})"


def _diverged(blocks, waiting, finished):
    f = blocks[waiting[0]].at_grid[0].req[1]
    raise BarrierDivergenceError(
        f"grid barrier divergence: {_blocks(blocks, waiting)} wait at grid.sync() at "
        f"{frame_site(f)}, but {_blocks(blocks, finished)} have finished without reaching it "
        "(on a GPU the launch would hang)")
