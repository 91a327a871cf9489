"""``cuda.activemask()`` on the simulator returned the lanes that had not yet
finished, in thread order (lane 0 saw 0xffffffff, lane 9 0xfffffe00), not the converged
lanes a GPU reports.  A partial-warp reduction written the usual way (early ``return``,
``mask = activemask()``, ``shfl_down_sync(mask, ...)`` guarded by ``popc(mask)``) then summed
lanes that had exited: 304 instead of 190 with the checks off.  activemask now waits until no
lane of the warp can run on and reports the lanes at that same call.  These run on either
backend: the values are what an H200 computes for converged code."""
import numpy as np
import pytest

import cujit as cuda


@cuda.jit
def _after_early_return(a, masks):
    i = cuda.grid(1)
    if i >= a.size:
        return
    masks[i] = cuda.activemask()


@cuda.jit
def _partial_warp_sum(a, out):
    i = cuda.grid(1)
    if i >= a.size:
        return
    mask = cuda.activemask()
    n = cuda.popc(mask)
    v = a[i]
    off = 16
    while off > 0:
        src = cuda.laneid + off
        if src >= n:
            src = cuda.laneid      # read only lanes of the mask
        w = cuda.shfl_sync(mask, v, src)
        if cuda.laneid + off < n:
            v += w
        off //= 2
    if cuda.laneid == 0:
        out[0] = v
        out[1] = mask


@cuda.jit
def _converged(masks):
    masks[cuda.grid(1)] = cuda.activemask()


@pytest.mark.parametrize("n", [1, 20, 31, 32])
def test_activemask_after_an_early_return_names_the_lanes_still_running(n):
    masks = np.zeros(32, np.int64)
    _after_early_return[1, 32](np.zeros(n), masks)
    assert masks[:n].tolist() == [(1 << n) - 1] * n
    assert (masks[n:] == 0).all()


def test_activemask_of_a_converged_block_is_each_warp_full():
    masks = np.zeros(70, np.int64)
    _converged[1, 70](masks)
    assert masks[:64].tolist() == [0xFFFFFFFF] * 64
    assert masks[64:].tolist() == [0b111111] * 6     # the partial third warp


def test_partial_warp_reduction_with_activemask():
    a = np.arange(20, dtype=np.float64)
    out = np.zeros(2)
    _partial_warp_sum[1, 32](a, out)
    assert out.tolist() == [190.0, 0xFFFFF]


@pytest.mark.sim
def test_activemask_in_divergent_branches_on_the_simulator():
    # On a GPU the two branches are not guaranteed to be apart (independent thread
    # scheduling may reconverge them); the simulator reports each branch's lanes.
    masks = np.zeros(32, np.int64)
    _branches[1, 32](masks)
    assert masks.tolist() == [0x0000FFFF] * 16 + [0xFFFF0000] * 16


@cuda.jit
def _branches(masks):
    t = cuda.threadIdx.x
    if t < 16:
        masks[t] = cuda.activemask()
    else:
        masks[t] = cuda.activemask()
