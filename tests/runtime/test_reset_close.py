"""Context.reset() and cujit.close(): new generations (numba bug case 22, memory half).

The primary context is shared with other libraries, so a reset frees what cujit made (live
and queued) through the driver's free calls and never resets the context itself."""
import numpy as np
import pytest

import cujit
from cujit.driver import get_driver
from cujit.memory import DeadMemoryError


def _roundtrip(ctx, value):
    p = ctx.memalloc(64)
    p.memset(value)
    out = np.zeros(64, np.uint8)
    get_driver().memcpy_dtoh(out.ctypes.data, p.device_pointer_value, 64)
    return out


def test_case22_reset_then_new_allocations_work(ctx, count_calls):
    frees = count_calls("mem_free")
    old = ctx.memalloc(256)
    old_view = old.view(128)
    with cujit.defer_cleanup():
        dropped = ctx.memalloc(128)
        del dropped                         # queued before the reset
        assert len(ctx.memory_manager.deallocations) == 1
        resets = count_calls("primary_ctx_reset")
        ctx.reset()
        assert len(ctx.memory_manager.deallocations) == 0   # sent despite defer_cleanup
    assert resets == []
    assert len(frees) == 2                  # the queued one and the live `old`
    frees.clear()
    assert cujit.current_context() is ctx
    assert (_roundtrip(ctx, 1) == 1).all()
    ctx.memory_manager.deallocations.clear()    # the round trip's own (new) pointer
    assert len(frees) == 1
    frees.clear()
    # old pointers: clear errors, no crash, and dropping them sends nothing
    assert not old.alive and not old_view.alive
    with pytest.raises(DeadMemoryError, match="reset"):
        old.memset(0)
    with pytest.raises(DeadMemoryError):
        old_view.view(0, 8)
    with pytest.raises(DeadMemoryError):
        old.free()
    del old, old_view
    assert len(ctx.memory_manager.deallocations) == 0
    ctx.memory_manager.deallocations.clear()
    assert frees == []


def test_reset_drops_resource_queue_and_streams_work_after(ctx, count_calls):
    destroys = count_calls("stream_destroy")
    s = cujit.stream()
    with ctx.defer_cleanup():
        t = cujit.stream()
        th = t.handle
        del t
        assert len(ctx.deallocations) == 1
        ctx.reset()
        assert len(ctx.deallocations) == 0
    # t's queued destroy and the live s's, once each (other live streams of the process,
    # e.g. held by kernels' cached launch configurations, are destroyed too)
    assert destroys.count((s.handle,)) == 1 and destroys.count((th,)) == 1
    destroys.clear()
    del s                                   # destroyed by the reset already
    assert len(ctx.deallocations) == 0 and destroys == []
    s2 = cujit.stream()
    s2.synchronize()
    assert cujit.default_stream().handle in (0, 2)
    assert ctx.memory_manager.get_stats().live_allocations == 0


def test_close_makes_a_fresh_context(count_calls):
    ctx = cujit.current_context()
    ctx.memory_manager.deallocations.clear()
    frees = count_calls("mem_free")         # before: the finaliser binds mem_free
    old = ctx.memalloc(64)
    old_ptr = old.device_pointer_value
    with cujit.defer_cleanup():
        pass
    cujit.close()
    new = cujit.current_context()
    assert new is not ctx
    assert (_roundtrip(new, 9) == 9).all()
    assert not old.alive
    with pytest.raises(DeadMemoryError):
        old.memset(1)
    del old
    assert frees == [(old_ptr,)]            # freed once, by close, never again
    with pytest.raises(cujit.CudaAPIError, match="closed"):
        ctx.create_stream()
