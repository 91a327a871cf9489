"""The pool manager: a stream-ordered user-space caching allocator (cujit/memory/pool.py).

Unmarked: these run on the simulator here and on the GPU (the integrator's H200 run)."""
import numpy as np
import pytest

import cujit
from cujit.memory import PoolMemoryManager
from cujit.memory.pool import ROUND


def test_dropped_block_is_reused_on_the_same_stream_without_driver_calls(pool, count_calls):
    allocs = count_calls("mem_alloc")
    frees = count_calls("mem_free")
    p = pool.memalloc(4096)
    addr = p.device_pointer_value
    assert len(allocs) == 1 and allocs[0][0] == 4096
    del p
    assert pool.pool_stats().cached_bytes == 4096 and pool.pool_stats().cached_blocks == 1
    q = pool.memalloc(4000)                   # same rounded size
    assert q.device_pointer_value == addr and q.size == 4000
    assert len(allocs) == 1 and frees == []
    st = pool.pool_stats()
    assert (st.hits, st.misses, st.cached_bytes) == (1, 1, 0)


def test_sizes_are_rounded_to_the_unit(pool, count_calls):
    allocs = count_calls("mem_alloc")
    a = pool.memalloc(1)
    b = pool.memalloc(ROUND + 1)
    assert [c[0] for c in allocs] == [ROUND, 2 * ROUND]
    assert a.size == 1 and b.size == ROUND + 1
    del a
    c = pool.memalloc(2 * ROUND)              # a different size class: a new block
    assert len(allocs) == 3
    del b, c


def test_other_stream_reuses_only_after_the_event_says_done(pool, count_calls, monkeypatch):
    from cujit.driver import get_driver
    drv = get_driver()
    s1, s2 = cujit.stream(), cujit.stream()
    records = count_calls("event_record")
    p = pool.memalloc(4096, stream=s1)
    addr = p.device_pointer_value
    del p
    done = [False]
    real_query = drv.event_query
    monkeypatch.setattr(drv, "event_query", lambda ev: done[0] and real_query(ev))
    q = pool.memalloc(4096, stream=s2)        # s1's work may still run: not reused
    assert q.device_pointer_value != addr
    assert len(records) == 1 and records[0][1] == s1.handle
    done[0] = True
    r = pool.memalloc(4096, stream=s2)        # the event says done: reused
    assert r.device_pointer_value == addr
    assert len(records) == 1                  # one event covered it, no second record
    assert pool.pool_stats().cross_stream_hits == 1
    del q, r


@pytest.fixture
def events_complete_at_once(monkeypatch):
    """cuEventQuery waits for the event first: on a GPU an event just recorded on an idle
    stream may still read NOT_READY for a moment, which would make these tests flaky."""
    from cujit.driver import get_driver
    drv = get_driver()
    real_sync, real_query = drv.event_synchronize, drv.event_query
    monkeypatch.setattr(drv, "event_query", lambda ev: real_sync(ev) is None and real_query(ev))


def test_other_stream_reuse_when_done_at_once(pool, events_complete_at_once):
    s1, s2 = cujit.stream(), cujit.stream()
    p = pool.memalloc(8192, stream=s1)
    addr = p.device_pointer_value
    s1.synchronize()
    del p
    q = pool.memalloc(8192, stream=s2)
    assert q.device_pointer_value == addr
    st = pool.pool_stats()
    assert (st.hits, st.cross_stream_hits, st.misses) == (0, 1, 1)


def test_defer_cleanup_keeps_dead_blocks_out_of_the_cache(pool):
    with pool.defer_cleanup():
        p = pool.memalloc(4096)
        addr = p.device_pointer_value
        del p
        assert pool.get_stats().pending_frees == 1
        q = pool.memalloc(4096)
        assert q.device_pointer_value != addr   # still owned by the deferred free
    pool.deallocations.clear()
    assert pool.pool_stats().cached_blocks == 1
    del q


def test_statistics_and_trim(pool, count_calls):
    frees = count_calls("mem_free")
    a = pool.memalloc(1000)
    b = pool.memalloc(3000)
    st = pool.get_stats()
    assert (st.bytes_in_use, st.live_allocations, st.alloc_count) == (4000, 2, 2)
    del b
    st = pool.get_stats()
    assert (st.bytes_in_use, st.pending_frees, st.reserved_bytes) == (1000, 0, 1000 + 3072)
    assert pool.trim(keep_bytes=3072) == 0 and frees == []
    assert pool.trim() == 3072 and len(frees) == 1
    assert pool.pool_stats().cached_bytes == 0 and pool.pool_stats().driver_frees == 1
    assert pool.get_stats().reserved_bytes == 1000
    del a


@pytest.mark.parametrize("bad, exc", [(-1, ValueError), (1.5, TypeError), ("4", TypeError)])
def test_trim_rejects_bad_keep_bytes(pool, bad, exc):
    with pytest.raises(exc, match="size"):
        pool.trim(bad)


def test_memalloc_rejects_bad_size_and_stream(pool):
    with pytest.raises(ValueError, match="size"):
        pool.memalloc(-5)
    with pytest.raises(TypeError, match="size"):
        pool.memalloc(2.0)
    with pytest.raises(TypeError, match="stream must be 0, a Stream"):
        pool.memalloc(16, stream="s")
    assert pool.memalloc(0).device_pointer_value == 0
    assert pool.get_stats().alloc_count == 0


@pytest.mark.parametrize("handle", [-3, -1, 1 << 64, 1 << 70])
def test_memalloc_rejects_stream_handles_that_are_not_cu_streams(pool, handle):
    with pytest.raises(ValueError, match=rf"stream handle {handle} is not a CUstream"):
        pool.memalloc(64, stream=handle)
    assert pool.get_stats().alloc_count == 0
    assert all(not isinstance(k, tuple) or k[1] != handle for k in pool._free)


def test_memalloc_rejects_a_stream_destroyed_by_reset(pool):
    from cujit.driver.errors import CudaAPIError
    s = cujit.stream()
    ctx = pool.context
    ctx.reset()
    with pytest.raises(CudaAPIError, match="destroyed when its context was reset") as ei:
        pool.memalloc(64, stream=s)
    assert ei.value.code == 400             # CUDA_ERROR_INVALID_HANDLE
    assert pool.get_stats().alloc_count == 0


def test_memalloc_takes_largest_valid_handle_and_live_streams(pool):
    s = cujit.stream()
    p = pool.memalloc(64, stream=s)
    q = pool.memalloc(64, stream=(1 << 64) - 1)
    assert p.device_pointer_value and q.device_pointer_value
    del p, q
    assert sorted(k[1] for k in pool._free if isinstance(k, tuple)) == \
        sorted([s.handle, (1 << 64) - 1])


def test_out_of_memory_releases_the_cache_and_retries(pool, count_calls, monkeypatch):
    from cujit.driver import get_driver
    from cujit.driver.errors import CudaAPIError, CUDA_ERROR_OUT_OF_MEMORY
    drv = get_driver()
    a = pool.memalloc(ROUND)
    del a
    assert pool.pool_stats().cached_blocks == 1
    real = drv.mem_alloc
    calls = []

    def failing_once(n):
        calls.append(n)
        if len(calls) == 1:
            raise CudaAPIError(CUDA_ERROR_OUT_OF_MEMORY, "out of memory", "cuMemAlloc")
        return real(n)
    monkeypatch.setattr(drv, "mem_alloc", failing_once)
    b = pool.memalloc(4 * ROUND)
    assert len(calls) == 2 and b.device_pointer_value
    assert pool.pool_stats().cached_blocks == 0 and pool.get_stats().oom_retries == 1


def test_device_arrays_work_through_the_pool(pool):
    x = np.arange(1000, dtype=np.float32)
    for _ in range(3):
        d = cujit.to_device(x)
        np.testing.assert_array_equal(d.copy_to_host(), x)
        del d
    st = pool.pool_stats()
    assert st.misses == 1 and st.hits == 2


def test_reset_forgets_the_cache(pool):
    a = pool.memalloc(4096)
    del a
    pool.reset()
    assert pool.pool_stats().cached_blocks == 0 and pool.get_stats().reserved_bytes == 0


@pytest.fixture
def restore_manager():
    yield
    from cujit.memory import managers
    managers._override = None
    cujit.close()


def test_pool_manager_via_env_module_caches(restore_manager, monkeypatch):
    monkeypatch.setenv("CUJIT_CUDA_MEMORY_MANAGER", "cujit.memory.pool")
    cujit.close()
    ctx = cujit.current_context()
    assert type(ctx.memory_manager) is PoolMemoryManager
    p = ctx.memalloc(100)
    p.memset(1)
    addr = p.device_pointer_value
    del p
    assert ctx.memalloc(100).device_pointer_value == addr


def test_arrays_with_a_stream_allocate_for_that_stream(pool, events_complete_at_once):
    s1, s2 = cujit.stream(), cujit.stream()
    a = cujit.device_array(1024, np.float32, stream=s1)
    addr = a.device_ctypes_pointer.value
    del a
    b = cujit.to_device(np.ones(1024, np.float32), stream=s1)     # same stream: at once
    s1.synchronize()
    assert b.device_ctypes_pointer.value == addr
    assert pool.pool_stats().hits == 1
    del b
    c = cujit.device_array(1024, np.float32)                       # stream 0: via the event
    assert c.device_ctypes_pointer.value == addr
    assert pool.pool_stats().cross_stream_hits == 1


def test_pointer_in_a_garbage_cycle_returns_its_block(pool):
    import gc
    p = pool.memalloc(4096)
    p.cycle = [p]                     # MemoryPointer has a __dict__
    del p
    assert pool.pool_stats().cached_blocks == 0
    gc.collect()
    assert pool.pool_stats().cached_blocks == 1
    assert pool.get_stats().live_allocations == 0


def test_free_then_alive_and_double_free(pool):
    from cujit.memory.pointers import DeadMemoryError
    p = pool.memalloc(4096)
    assert p.alive
    p.free()
    assert not p.alive and pool.pool_stats().cached_blocks == 1
    with pytest.raises(DeadMemoryError, match="already freed"):
        p.free()
    del p
    assert pool.pool_stats().cached_blocks == 1       # returned once, not twice


def test_detached_block_is_not_returned_until_its_function_runs(pool):
    p = pool.memalloc(4096)
    ptr = p.device_pointer_value
    obj, fn, args = p._finalizer.detach()
    assert obj is None and not p._finalizer.alive and p._finalizer.detach() is None
    del p
    assert pool.pool_stats().cached_blocks == 0       # detached: the drop returns nothing
    assert pool.get_stats().live_allocations == 1
    fn(*args)
    st = pool.pool_stats()
    assert (st.cached_blocks, st.cached_bytes) == (1, 4096)
    assert pool.get_stats().live_allocations == 0
    q = pool.memalloc(4096)                            # the returned block is reused
    assert q.device_pointer_value == ptr and pool.pool_stats().hits == 1


def test_threads_allocating_and_dropping_keep_the_books(pool):
    import threading
    errors = []

    def worker():
        try:
            for i in range(300):
                p = pool.memalloc(512 * (1 + i % 3))
                p.memset(1)
                del p
        except Exception as exc:      # pragma: no cover - reported below
            errors.append(exc)
    ts = [threading.Thread(target=worker) for _ in range(4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert errors == []
    st, ps = pool.get_stats(), pool.pool_stats()
    assert st.live_allocations == 0 and st.bytes_in_use == 0
    assert ps.hits + ps.cross_stream_hits + ps.misses == 1200
    assert ps.misses <= 12            # at most one block per size class per thread


def test_memset_from_a_thread_without_a_current_context(pool):
    """A pointer used from a fresh thread (a pool cache hit calls no driver function that
    would make the context current there) still works: memset makes it current."""
    import threading
    p = pool.memalloc(512)
    errors = []

    def worker():
        try:
            p.memset(7)
        except Exception as exc:      # pragma: no cover - reported below
            errors.append(exc)
    t = threading.Thread(target=worker)
    t.start()
    t.join()
    assert errors == []
    from cujit.driver import get_driver
    out = np.zeros(512, np.uint8)
    get_driver().memcpy(out.ctypes.data, p.device_pointer_value, 512)
    assert (out == 7).all()
