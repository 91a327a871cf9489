"""A device array made before ``context.reset()`` / ``cujit.close()`` could still
be passed to a kernel.  On the simulator the launch failed deep in its memory map with a
driver-looking error; on a GPU the launcher packed the stale address, which cujit had freed
and the driver may have handed to a newer allocation: the kernel would overwrite another
array.  Launches now refuse such arguments with DeadMemoryError (a ValueError) naming the
argument, on the slow path and (through the pointer's public ``generation``) the fast path,
before the driver sees the address."""
import numpy as np
import pytest

import cujit as cuda
from cujit.memory import DeadMemoryError


@cuda.jit
def _inc(x):
    i = cuda.grid(1)
    if i < x.size:
        x[i] += 1


@cuda.jit
def _inc_first(t):
    t[0][0] += 1


def test_array_from_before_reset_is_refused_and_newer_arrays_are_untouched(ctx):
    stale = cuda.to_device(np.zeros(4))
    ctx.reset()
    fresh = cuda.to_device(np.full(4, 100.0))
    with pytest.raises(DeadMemoryError, match=r"argument 0 of kernel _inc: .*reset or closed"):
        _inc[1, 4](stale)
    assert fresh.copy_to_host().tolist() == [100.0] * 4


def test_array_from_before_reset_is_refused_after_the_fast_path_was_installed(ctx):
    stale = cuda.to_device(np.zeros(4))
    ctx.reset()
    fresh = cuda.to_device(np.full(4, 100.0))
    _inc[1, 4](fresh)           # a launch with a live array of the same kind first
    _inc[1, 4](fresh)
    with pytest.raises(ValueError, match="argument 0 of kernel _inc"):
        _inc[1, 4](stale)
    cuda.synchronize()
    assert fresh.copy_to_host().tolist() == [102.0] * 4


def test_array_from_a_closed_context_is_refused():
    stale = cuda.to_device(np.zeros(4))
    cuda.close()
    fresh = cuda.to_device(np.full(4, 7.0))
    with pytest.raises(DeadMemoryError, match="argument 0 of kernel _inc"):
        _inc[1, 4](stale)
    assert fresh.copy_to_host().tolist() == [7.0] * 4


def test_stale_array_inside_a_tuple_argument_is_refused(ctx):
    stale = cuda.to_device(np.zeros(4))
    ctx.reset()
    with pytest.raises(DeadMemoryError, match="argument 0 of kernel _inc_first"):
        _inc_first[1, 1]((stale,))


def test_mapped_array_from_before_reset_is_refused(ctx):
    m = cuda.mapped_array(4)
    m[:] = 1.0
    ctx.reset()
    with pytest.raises(DeadMemoryError, match="argument 0 of kernel _inc"):
        _inc[1, 4](m)
    assert m.tolist() == [1.0] * 4      # the host bytes stay valid (docs/design-arrays.md)


def test_live_arrays_still_launch(ctx):
    a = cuda.to_device(np.zeros(3))
    _inc[1, 4](a)
    _inc[1, 4]((a,)[0])
    assert a.copy_to_host().tolist() == [2.0] * 3


def test_fast_launch_function_declines_memory_of_another_generation(monkeypatch):
    # The GPU fast path, driven by the fake driver of tests/dispatch/test_launch_fastpath.py
    # (runs without a GPU): an array whose memory is of an older context generation is
    # declined (then the slow path raises DeadMemoryError).
    import sys
    import os
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "dispatch"))
    try:
        import test_launch_fastpath as fp
    finally:
        sys.path.pop(0)
    from cujit import types as ct
    from cujit.runtime import devices

    class Mem:
        generation = 3

    ctx = fp.FakeCtx()
    ctx.generation = 3
    monkeypatch.setattr(devices._tls, "ctx", ctx, raising=False)
    drv = fp.FakeDriver()
    live = fp.FakeArray(0x1000, (8,))
    live.gpu_data = Mem()
    lk, fast = fp.make((ct.float32[::1],), (live,), ctx, drv)
    c = fp.ok_cfg(lk.info)
    assert fast(c, (live,))
    old = fp.FakeArray(0x2000, (8,))
    old.gpu_data = type("OldMem", (), {"generation": 2})()
    assert fast(c, (old,)) is False
    assert len(drv.calls) == 1
