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


@pytest.mark.parametrize("end", ["reset", "close"])
def test_managed_memory_still_referenced_is_freed_when_its_last_array_dies(end, count_calls):
    """A reset or close must not cuMemFree managed memory a NumPy view still reads (the
    next read was a SIGSEGV): it is freed once, when the last reference dies; until then it
    is dead to cujit (kernels, CAI) and its bytes stay as they were.  After close() the
    primary context stays retained until that free."""
    frees = count_calls("mem_free")
    m = cujit.managed_array(1024)
    m[:] = 3.0
    view = np.asarray(m)[10:20]
    addr = m.gpu_data.device_pointer_value
    releases = count_calls("primary_ctx_release")
    if end == "reset":
        cujit.current_context().reset()
    else:
        cujit.close()
    assert frees == []
    n_released = len(releases)
    assert not m.gpu_data.alive
    with pytest.raises(DeadMemoryError, match="device mapping is gone"):
        m.__cuda_array_interface__
    other = cujit.managed_array(16)          # the next generation allocates as usual
    other[:] = 1.0
    assert float(view.sum()) == 30.0 and float(m.sum()) == 3072.0
    m[5] = 7.0
    assert m[5] == 7.0
    del m
    assert frees == []                       # the slice still reads it
    del view
    import gc
    gc.collect()
    assert frees == [(addr,)]
    if end == "close":
        assert len(releases) == n_released + 1      # the retain kept for it
    else:
        assert len(releases) == n_released
    assert other.sum() == 16.0


def test_managed_memory_dropped_before_reset_is_freed_by_it(ctx, count_calls):
    frees = count_calls("mem_free")
    m = cujit.managed_array(64)
    addr = m.gpu_data.device_pointer_value
    del m
    ctx.reset()
    assert frees == [(addr,)]


@pytest.mark.parametrize("end", ["cuda.current_context().reset()", "cuda.close()"])
def test_reading_a_managed_array_after_reset_or_close_does_not_crash(end):
    import subprocess
    import sys
    code = ("import numpy as np, cujit as cuda\n"
            "m = cuda.managed_array(1 << 16)\n"
            "m[:] = 3.0\n"
            f"{end}\n"
            "print(float(np.asarray(m).sum()))\n"
            "del m\n")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       timeout=300)
    assert p.returncode == 0, p.stderr
    assert p.stdout.split() == [str(3.0 * (1 << 16))]


def test_failed_free_of_outliving_managed_memory_is_warned(ctx, monkeypatch):
    from cujit.driver.errors import CudaAPIError
    from cujit.memory import DeallocationWarning
    drv = get_driver()
    real = drv.mem_free
    refuse = []

    def mem_free(ptr):
        if refuse:
            raise CudaAPIError(1, "refused by the test", "cuMemFree")
        return real(ptr)
    monkeypatch.setattr(drv, "mem_free", mem_free)
    m = cujit.managed_array(32)
    ctx.reset()
    refuse.append(True)
    with pytest.warns(DeallocationWarning, match="outlived its context's reset failed"):
        del m
    refuse.clear()
    cujit.managed_array(8)[:] = 1.0          # the context still allocates and frees


@pytest.mark.parametrize("kw", [{"wc": True}, {"portable": True}])
def test_host_alloc_mapped_array_outlives_reset_until_dropped(ctx, count_calls, kw):
    """Portable / write-combined mapped arrays are cuMemHostAlloc memory: a reset leaves it
    readable while the array lives and frees it (cuMemFreeHost) once it dies."""
    frees = count_calls("mem_free_host")
    m = cujit.mapped_array(256, np.float32, **kw)
    m[:] = 2.0
    addr = m.gpu_data.host_pointer
    ctx.reset()
    assert frees == [] and float(m.sum()) == 512.0
    with pytest.raises(DeadMemoryError):
        m.__cuda_array_interface__
    del m
    assert frees == [(addr,)]
