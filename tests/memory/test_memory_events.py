"""The memory layer's hook points (``cujit.memory.events``): every manager announces its
allocations (the pool's stream-ordered ones with their stream), queued and immediate frees,
and each flush with its reason."""
import gc

import numpy as np
import pytest

import cujit
from cujit.memory import events


@pytest.fixture
def heard():
    seen = {"allocated": [], "freed": [], "free_queued": [], "flushed": []}
    # the pointer objects are not kept (that would keep the memory alive): their address
    fns = {name: (lambda *a, _n=name: seen[_n].append(a)) for name in seen}
    fns["allocated"] = lambda kind, mem, n, stream: seen["allocated"].append(
        (kind, getattr(mem, "device_pointer_value", None), n, stream))
    fns["free_queued"] = lambda q, handle, n: seen["free_queued"].append((q, None, n))
    for name, fn in fns.items():
        getattr(events, name).subscribe(fn)
    yield seen
    for name, fn in fns.items():
        getattr(events, name).unsubscribe(fn)


def test_default_manager_announces_device_host_and_managed_allocations(ctx, heard):
    d = ctx.memalloc(100)
    h = ctx.memhostalloc(64)
    m = ctx.memallocmanaged(32)
    buf = np.zeros(16, np.uint8)
    p = ctx.mempin(buf, buf.ctypes.data, 16)
    kinds = [(k, n, s) for k, _, n, s in heard["allocated"]]
    assert kinds == [("device", 100, 0), ("host (cuMemHostAlloc)", 64, 0), ("managed", 32, 0),
                     ("host (pinned)", 16, 0)]
    assert heard["allocated"][0][1] == d.device_pointer_value
    del p
    gc.collect()
    assert heard["freed"] == [("host (pinned)", buf.ctypes.data, 16)]
    del d, h, m


def test_pool_announces_stream_ordered_allocations_and_returns(pool, heard):
    s = cujit.stream()
    a = cujit.device_array(1000, stream=s)
    b = cujit.device_array(10)
    assert [(k, n, st) for k, _, n, st in heard["allocated"]] == [("device", 8000, s.handle),
                                                                 ("device", 80, 0)]
    ptr = a.gpu_data.device_pointer_value
    del a
    gc.collect()
    assert heard["freed"][0][0] == "device (pool cache)" and heard["freed"][0][1] == ptr
    del b


def test_plugin_allocations_are_announced_once(ctx, heard):
    from cujit.memory.managers import NumbaCUDAMemoryManager, HostOnlyCUDAMemoryManager

    class Plugin(HostOnlyCUDAMemoryManager):
        def __init__(self, *a, **k):
            super().__init__(*a, **k)
            self.inner = NumbaCUDAMemoryManager(context=self.context)

        def memalloc(self, size):
            return self.inner.memalloc(size)   # announced by the built-in manager, once

        def get_ipc_handle(self, memory):
            raise NotImplementedError

    class OwnAllocator(Plugin):
        """Allocates without a built-in manager (as RMM's plugin does)."""
        def memalloc(self, size):
            from cujit.memory import MemoryPointer
            drv = cujit.driver.get_driver()
            ptr = drv.mem_alloc(size)
            return MemoryPointer(self.context, ptr, size, finalizer=lambda: drv.mem_free(ptr))

    saved = ctx.memory_manager
    try:
        ctx.memory_manager = Plugin(context=ctx)
        x = cujit.device_array(4)
        ctx.memory_manager = OwnAllocator(context=ctx)
        y = cujit.device_array(8)
    finally:
        ctx.memory_manager = saved
    # once each: by the built-in manager inside the first, by the context for the second
    assert [n for _, _, n, _ in heard["allocated"]] == [32, 64]
    del x, y


def test_queue_announces_frees_and_flushes_with_their_reason(ctx, heard, monkeypatch):
    monkeypatch.setenv("CUJIT_CUDA_MAX_PENDING_DEALLOCS_COUNT", "2")
    q = ctx.memory_manager.deallocations
    q.clear()
    for _ in range(3):
        x = cujit.device_array(8, np.uint8)
        del x
        gc.collect()
    assert [n for _, _, n in heard["free_queued"]] == [8, 8, 8]
    (flush,) = heard["flushed"]
    assert flush[0] is q and flush[1] == "count limit" and flush[3:] == (3, 24)
    x = cujit.device_array(8, np.uint8)
    del x
    gc.collect()
    q.clear()
    assert heard["flushed"][-1][1] == "clear()"
