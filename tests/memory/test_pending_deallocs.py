"""The pending-deallocations queue, R-DEA-1..5 (numba bug case 29), with exact counts.

References are dropped explicitly (``del``/``pop``); CPython frees a pointer as soon as its
last reference goes, so nothing here depends on garbage-collector timing."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import cujit
from cujit.config import config
from cujit.driver import get_driver
from cujit.driver.errors import CudaAPIError, CUDA_ERROR_OUT_OF_MEMORY
from cujit.memory import DeallocationWarning


def test_case29_eleventh_free_flushes(ctx):
    q = ctx.memory_manager.deallocations
    ptrs = [ctx.memalloc(8) for _ in range(11)]
    lengths = []
    for _ in range(10):
        ptrs.pop()
        lengths.append(len(q))
    assert lengths == list(range(1, 11))
    ptrs.pop()
    assert len(q) == 0


def test_frees_are_deferred_until_flush(ctx, count_calls):
    frees = count_calls("mem_free")
    p = ctx.memalloc(64)
    addr = p.device_pointer_value
    del p
    assert frees == []
    assert len(ctx.memory_manager.deallocations) == 1
    ctx.memory_manager.deallocations.clear()
    assert frees == [(addr,)]


def test_flush_is_oldest_first(ctx, count_calls):
    frees = count_calls("mem_free")
    ptrs = [ctx.memalloc(16) for _ in range(11)]
    order = [p.device_pointer_value for p in ptrs]
    for i in range(11):
        ptrs[i] = None
    assert [a for (a,) in frees] == order


@pytest.mark.parametrize("how", ["attribute", "CUJIT_", "NUMBA_"])
def test_count_limit_changed_at_run_time(ctx, how, monkeypatch):
    q = ctx.memory_manager.deallocations
    if how == "attribute":
        config.CUDA_DEALLOCS_COUNT = 3
    else:
        monkeypatch.setenv(how + "CUDA_MAX_PENDING_DEALLOCS_COUNT", "3")
    ptrs = [ctx.memalloc(8) for _ in range(4)]
    seen = []
    for _ in range(4):
        ptrs.pop()
        seen.append(len(q))
    assert seen == [1, 2, 3, 0]
    # and back to the default while the same context lives on
    if how == "attribute":
        del config.CUDA_DEALLOCS_COUNT
    else:
        monkeypatch.delenv(how + "CUDA_MAX_PENDING_DEALLOCS_COUNT")
    ptrs = [ctx.memalloc(8) for _ in range(5)]
    del ptrs
    assert len(q) == 5


@pytest.mark.parametrize("how", ["attribute", "CUJIT_", "NUMBA_"])
def test_limit_changed_after_the_allocations_applies_at_the_next_free(ctx, how, monkeypatch):
    # the limits are read at each free, not cached at allocation: no allocation happens
    # between the change and the frees it governs
    q = ctx.memory_manager.deallocations
    q.clear()
    ptrs = [ctx.memalloc(8) for _ in range(5)]
    if how == "attribute":
        config.CUDA_DEALLOCS_COUNT = 2
    else:
        monkeypatch.setenv(how + "CUDA_MAX_PENDING_DEALLOCS_COUNT", "2")
    seen = []
    while ptrs:
        ptrs.pop()
        seen.append(len(q))
    assert seen == [1, 2, 0, 1, 2]
    if how == "attribute":
        del config.CUDA_DEALLOCS_COUNT
    else:
        monkeypatch.delenv(how + "CUDA_MAX_PENDING_DEALLOCS_COUNT")
    q.clear()
    ptr = ctx.memalloc(8)
    if how == "attribute":
        config.CUDA_DEALLOCS_RATIO = 0
    else:
        monkeypatch.setenv(how + "CUDA_MAX_PENDING_DEALLOCS_RATIO", "0")
    del ptr                        # 8 bytes > 0 x capacity: the byte limit flushes at once
    assert len(q) == 0 and q.nbytes == 0


def test_malformed_limit_set_after_the_allocation_keeps_the_defaults(ctx, monkeypatch):
    q = ctx.memory_manager.deallocations
    q.clear()
    ptrs = [ctx.memalloc(8) for _ in range(11)]
    monkeypatch.setenv("CUJIT_CUDA_MAX_PENDING_DEALLOCS_RATIO", "lots")
    seen = []
    while ptrs:
        ptrs.pop()
        seen.append(len(q))
    assert seen == list(range(1, 11)) + [0]       # the default count limit, no exception
    with pytest.raises(ValueError, match="CUJIT_CUDA_MAX_PENDING_DEALLOCS_RATIO='lots'"):
        ctx.memalloc(8)


def test_cujit_spelling_wins_over_numba(ctx, monkeypatch):
    q = ctx.memory_manager.deallocations
    monkeypatch.setenv("NUMBA_CUDA_MAX_PENDING_DEALLOCS_COUNT", "1")
    monkeypatch.setenv("CUJIT_CUDA_MAX_PENDING_DEALLOCS_COUNT", "2")
    ptrs = [ctx.memalloc(8) for _ in range(3)]
    seen = []
    while ptrs:
        ptrs.pop()
        seen.append(len(q))
    assert seen == [1, 2, 0]


def test_malformed_setting_is_a_clear_error(ctx, monkeypatch):
    # the allocation reports it; the queue (read inside finalisers) keeps the default of 10
    p = ctx.memalloc(8)
    monkeypatch.setenv("CUJIT_CUDA_MAX_PENDING_DEALLOCS_COUNT", "ten")
    with pytest.raises(ValueError, match="CUJIT_CUDA_MAX_PENDING_DEALLOCS_COUNT"):
        ctx.memalloc(8)
    q = ctx.memory_manager.deallocations
    ran = []
    for i in range(11):
        q.add_item(ran.append, i)
    assert ran == list(range(11)) and len(q) == 0
    monkeypatch.delenv("CUJIT_CUDA_MAX_PENDING_DEALLOCS_COUNT")
    del p


def test_ratio_limit_changed_at_run_time(ctx):
    q = ctx.memory_manager.deallocations
    total = ctx.device.total_memory
    config.CUDA_DEALLOCS_COUNT = 1000
    # limit = 1000 bytes: the 4th 300-byte free (1200 bytes queued) flushes
    config.CUDA_DEALLOCS_RATIO = 1000 / total
    ptrs = [ctx.memalloc(300) for _ in range(4)]
    seen = []
    while ptrs:
        ptrs.pop()
        seen.append((len(q), q.nbytes))
    assert seen == [(1, 300), (2, 600), (3, 900), (0, 0)]
    config.CUDA_DEALLOCS_RATIO = 500 / total
    ptrs = [ctx.memalloc(300) for _ in range(2)]
    ptrs.pop()
    assert len(q) == 1
    ptrs.pop()
    assert len(q) == 0


def test_pinned_and_mapped_frees_count_their_bytes(ctx, count_calls):
    q = ctx.memory_manager.deallocations
    frees = count_calls("mem_free_host")
    config.CUDA_DEALLOCS_COUNT = 1000
    a = ctx.memhostalloc(4096)
    b = ctx.memhostalloc(1024, mapped=True)
    del a
    assert (len(q), q.nbytes) == (1, 4096)
    del b
    assert (len(q), q.nbytes) == (2, 5120)
    assert frees == []
    q.clear()
    assert len(frees) == 2 and q.nbytes == 0


def test_unpinning_is_immediate_and_repinnable(ctx, count_calls):
    unreg = count_calls("mem_host_unregister")
    host = np.zeros(4096, np.uint8)
    q = ctx.memory_manager.deallocations
    pin = ctx.mempin(host, host.ctypes.data, host.nbytes)
    del pin
    assert len(unreg) == 1 and len(q) == 0
    pin = ctx.mempin(host, host.ctypes.data, host.nbytes)    # pinning again works
    assert pin.host_pointer == host.ctypes.data
    del pin
    assert len(unreg) == 2


def test_defer_cleanup_nested_and_exception_safe(ctx):
    q = ctx.memory_manager.deallocations
    ptrs = [ctx.memalloc(8) for _ in range(25)]
    with pytest.raises(KeyError):
        with cujit.defer_cleanup():
            for _ in range(12):
                ptrs.pop()
            assert len(q) == 12
            with cujit.defer_cleanup():
                for _ in range(12):
                    ptrs.pop()
                q.clear()           # explicit flushes are suspended too
                assert len(q) == 24
            assert len(q) == 24     # inner exit: still deferred
            assert q.is_disabled
            raise KeyError("boom")
    # outermost exit (by exception) resumes flushing: 24 > 10 is flushed at once
    assert not q.is_disabled
    assert len(q) == 0
    ptrs.pop()
    assert len(q) == 1


def test_context_defer_cleanup_also_holds_resource_queue(ctx):
    with ctx.defer_cleanup():
        for _ in range(12):
            cujit.stream()          # each new stream dies at once: queued destroy
        assert len(ctx.deallocations) == 12
    assert len(ctx.deallocations) == 0


def test_failing_free_cancels_rest_of_flush_and_warns(ctx):
    q = ctx.memory_manager.deallocations
    done = []

    def ok(h):
        done.append(h)

    def bad(h):
        raise CudaAPIError(1, "simulated failure", "cuMemFree")

    with cujit.defer_cleanup():
        q.add_item(ok, 1)
        q.add_item(bad, 2, 100)
        q.add_item(ok, 3)
        q.add_item(ok, 4)
    failed = q.failed_count
    with pytest.warns(DeallocationWarning, match="cuMemFree"):
        q.clear()
    assert done == [1]
    assert len(q) == 2 and q.failed_count == failed + 1
    assert isinstance(q.last_error, CudaAPIError)
    q.clear()                       # the rest go at the next flush; the process keeps working
    assert done == [1, 3, 4] and len(q) == 0
    p = ctx.memalloc(8)
    assert p.alive


def test_oom_flushes_and_retries_exactly_once(ctx, count_calls):
    """Sim: fill the (reduced) device, drop blocks into the queue, allocate again."""
    if not get_driver().is_simulator:
        pytest.skip("the GPU version is test_real_oom_flush_and_retry")
    config.SIM_DEVICE_MEMORY = get_driver().mem_get_info()[1] - get_driver().mem_get_info()[0] \
        + (64 << 20)
    config.CUDA_DEALLOCS_COUNT = 10**6
    config.CUDA_DEALLOCS_RATIO = 100.0
    block = 8 << 20
    blocks = [ctx.memalloc(block) for _ in range(8)]
    stats0 = ctx.memory_manager.get_stats()
    allocs = count_calls("mem_alloc")
    with pytest.raises(CudaAPIError) as err:
        ctx.memalloc(block)             # full, nothing queued: flush (empty), retry, fail
    assert err.value.code == CUDA_ERROR_OUT_OF_MEMORY and err.value.call == "cuMemAlloc"
    assert len(allocs) == 2
    assert ctx.memory_manager.get_stats().oom_retries == stats0.oom_retries + 1
    blocks[-1].memset(7)
    del blocks[:4]
    q = ctx.memory_manager.deallocations
    assert len(q) == 4
    allocs.clear()
    p = ctx.memalloc(block)             # OOM -> flush 4 -> retry succeeds
    assert len(allocs) == 2 and len(q) == 0
    st1 = ctx.memory_manager.get_stats()
    assert st1.oom_retries == stats0.oom_retries + 2
    # nothing already allocated was lost
    out = np.empty(block, np.uint8)
    get_driver().memcpy_dtoh(out.ctypes.data, blocks[-1].device_pointer_value, block)
    assert (out == 7).all()
    del p, blocks


@pytest.mark.gpu
def test_real_oom_flush_and_retry(ctx):
    """H200: 16 GiB blocks until the driver says out of memory; then drop them all into the
    queue and allocate again: the OOM flushes the queue and the retry succeeds."""
    config.CUDA_DEALLOCS_COUNT = 10**6
    config.CUDA_DEALLOCS_RATIO = 100.0
    mm = ctx.memory_manager
    block = 16 << 30
    blocks = []
    try:
        r0 = mm.get_stats().oom_retries
        with pytest.raises(CudaAPIError) as err:
            for _ in range(64):
                blocks.append(ctx.memalloc(block))
        assert err.value.code == CUDA_ERROR_OUT_OF_MEMORY
        assert mm.get_stats().oom_retries == r0 + 1
        assert len(blocks) >= 2
        n = len(blocks)
        del blocks[:]
        assert len(mm.deallocations) == n
        flushes = mm.get_stats().flushes
        p = ctx.memalloc(block)
        st1 = mm.get_stats()
        assert st1.oom_retries == r0 + 2
        assert st1.flushes == flushes + 1 and st1.pending_frees == 0
        del p
    finally:
        del blocks[:]
        mm.deallocations.clear()


# -- hypothesis: the queue length follows the count rule exactly -----------------------------

@settings(max_examples=40, deadline=None)
@given(limit=st.integers(min_value=0, max_value=12),
       ops=st.lists(st.sampled_from(["alloc", "drop"]), max_size=60))
def test_queue_length_model(limit, ops):
    ctx = cujit.current_context()
    q = ctx.memory_manager.deallocations
    q.clear()
    config.CUDA_DEALLOCS_COUNT = limit
    try:
        live, expected = [], 0
        for op in ops:
            if op == "alloc":
                live.append(ctx.memalloc(32))
            elif live:
                live.pop()
                expected += 1
                if expected > limit:
                    expected = 0
            assert len(q) == expected
        assert len(q) <= max(limit, 0)
        live.clear()
    finally:
        del config.CUDA_DEALLOCS_COUNT
        q.clear()


def test_env_var_names_exist():
    assert config.env_names("CUDA_DEALLOCS_COUNT") == [
        "CUJIT_CUDA_MAX_PENDING_DEALLOCS_COUNT", "NUMBA_CUDA_MAX_PENDING_DEALLOCS_COUNT"]
    assert "CUJIT_CUDA_MAX_PENDING_DEALLOCS_RATIO" in config.env_names("CUDA_DEALLOCS_RATIO")


def test_failed_unpin_is_reported(ctx, monkeypatch):
    host = np.zeros(4096, np.uint8)
    pin = ctx.mempin(host, host.ctypes.data, host.nbytes)
    drv = get_driver()
    real = drv.mem_host_unregister

    def failing(ptr):
        raise CudaAPIError(713, "simulated", "cuMemHostUnregister")

    monkeypatch.setattr(drv, "mem_host_unregister", failing)
    with pytest.warns(DeallocationWarning, match="cuMemHostUnregister"):
        del pin
    monkeypatch.setattr(drv, "mem_host_unregister", real)
    real(host.ctypes.data)              # really unpin, so the buffer can be reused


# -- hypothesis: defer_cleanup nesting, drops and exceptions follow the model ---------------

_program = st.recursive(
    st.sampled_from(["drop", "raise"]),
    lambda inner: st.lists(inner, max_size=6).map(lambda body: ("defer", body)),
    max_leaves=20)


class _Boom(Exception):
    pass


@settings(max_examples=40, deadline=None)
@given(limit=st.integers(min_value=0, max_value=6), program=st.lists(_program, max_size=8))
def test_defer_cleanup_model(limit, program):
    ctx = cujit.current_context()
    q = ctx.memory_manager.deallocations
    q.clear()
    config.CUDA_DEALLOCS_COUNT = limit
    state = {"len": 0, "depth": 0}

    def expect_drop():
        state["len"] += 1
        if state["depth"] == 0 and state["len"] > limit:
            state["len"] = 0

    def run(step):
        if step == "drop":
            p = ctx.memalloc(16)
            del p
            expect_drop()
        elif step == "raise":
            raise _Boom()
        else:
            _, body = step
            try:
                with cujit.defer_cleanup():
                    state["depth"] += 1
                    try:
                        for s in body:
                            run(s)
                    finally:
                        state["depth"] -= 1
            finally:
                if state["depth"] == 0 and state["len"] > limit:
                    state["len"] = 0        # the outermost exit flushes an over-limit backlog
        assert len(q) == state["len"]

    try:
        for step in program:
            try:
                run(step)
            except _Boom:
                pass
            assert len(q) == state["len"] and not q.is_disabled
    finally:
        del config.CUDA_DEALLOCS_COUNT
        q.clear()
