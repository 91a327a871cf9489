"""docs/guide.md §3.6: what each kind of memory does to the pending queue when it dies."""
import gc

import numpy as np
import pytest

import cujit
from cujit.arrays import hostmem

_HOST = np.zeros(1000)


def _queued(ctx, make):
    q = ctx.memory_manager.deallocations
    q.clear()
    obj = make()
    del obj
    gc.collect()
    n = len(q)
    q.clear()
    return n


@pytest.mark.parametrize("make", [
    lambda ctx: cujit.device_array(100),
    lambda ctx: cujit.managed_array(100),
    lambda ctx: ctx.memhostalloc(4096),
    lambda ctx: cujit.mapped_array(100, portable=True),
], ids=["device", "managed", "memhostalloc", "mapped-portable"])
def test_deferred_kinds_queue_one_entry(ctx, make):
    assert _queued(ctx, lambda: make(ctx)) == 1


@pytest.mark.parametrize("make", [
    lambda ctx: cujit.pinned_array(100),
    lambda ctx: cujit.pinned_array(hostmem.CACHE_MAX_BUFFER // 8 + 1),
    lambda ctx: cujit.mapped_array(100),
    lambda ctx: ctx.mempin(_HOST, _HOST.ctypes.data, _HOST.nbytes),
], ids=["pinned-cached", "pinned-big", "mapped", "mempin"])
def test_pinned_kinds_never_queue(ctx, make):
    assert _queued(ctx, lambda: make(ctx)) == 0


def test_mempin_is_unregistered_at_once(ctx):
    h = np.zeros(1000)
    p = ctx.mempin(h, h.ctypes.data, h.nbytes)
    del p
    gc.collect()
    assert len(ctx.memory_manager.deallocations) == 0
    # pinning the same range again would be CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED
    p = ctx.mempin(h, h.ctypes.data, h.nbytes)
    assert p.size == h.nbytes
    del p


def test_big_pinned_array_is_unregistered_at_once():
    n = hostmem.CACHE_MAX_BUFFER // 8 + 1
    a = cujit.pinned_array(n)
    lo = a.ctypes.data
    assert hostmem.is_pinned(lo, a.nbytes)
    del a
    gc.collect()
    assert not hostmem.is_pinned(lo, 8)
