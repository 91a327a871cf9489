"""CUDA graphs (R-LIB-4): ``with cujit.graph(stream) as g`` captures, ``g.launch()`` replays.

Unmarked tests run on the simulator here and on the GPU in the integrator's run; ``sim`` tests
check simulator-only refusals whose exact driver code the GPU may spell differently."""
import gc

import numpy as np
import pytest

import cujit
from cujit.driver.errors import CudaAPIError


@cujit.jit
def add_one(x):
    i = cujit.grid(1)
    if i < x.size:
        x[i] += 1


@cujit.jit
def scale_into(out, x, factor):
    i = cujit.grid(1)
    if i < x.size:
        out[i] = x[i] * factor


@pytest.fixture
def s():
    return cujit.stream()


def test_capture_records_without_running_then_replays(s):
    d = cujit.to_device(np.zeros(64, np.float32))
    with cujit.graph(s) as g:
        for _ in range(3):
            add_one[1, 64, s](d)
    s.synchronize()
    np.testing.assert_array_equal(d.copy_to_host(), 0)      # captured, not run
    assert g.node_count == 3
    g.launch()
    g.launch(s)
    s.synchronize()
    np.testing.assert_array_equal(d.copy_to_host(), 6)
    g.close()


def test_copies_and_memsets_are_captured(s):
    n = 256
    h_in = cujit.pinned_array(n, np.float32)
    h_out = cujit.pinned_array(n, np.float32)
    d_in = cujit.device_array(n, np.float32)
    d_out = cujit.device_array(n, np.float32)
    with cujit.graph(s) as g:
        d_in.copy_to_device(h_in, stream=s)
        d_out.gpu_data.memset(0, stream=s)
        scale_into[1, n, s](d_out, d_in, np.float32(2.0))
        d_out.copy_to_host(h_out, stream=s)
    assert g.node_count == 4
    for k in range(3):          # new inputs each replay: the graph reads h_in when it runs
        h_in[:] = np.arange(n, dtype=np.float32) + k
        g.launch(s)
        s.synchronize()
        np.testing.assert_array_equal(h_out, 2 * (np.arange(n, dtype=np.float32) + k))


def test_graph_keeps_arrays_alive(s, ctx):
    h = cujit.pinned_array(32, np.float32)
    d = cujit.to_device(np.zeros(32, np.float32))
    with cujit.graph(s) as g:
        add_one[1, 32, s](d)
        d.copy_to_host(h, stream=s)
    live = ctx.memory_manager.get_stats().live_allocations
    del d
    gc.collect()
    assert ctx.memory_manager.get_stats().live_allocations == live     # the graph holds it
    g.launch(s)
    g.launch(s)
    s.synchronize()
    np.testing.assert_array_equal(h, 2)
    g.close()
    gc.collect()
    assert ctx.memory_manager.get_stats().live_allocations == live - 1


def test_no_deferred_frees_flush_during_capture(s, ctx, count_calls):
    frees = count_calls("mem_free")
    d = cujit.to_device(np.zeros(16, np.float32))
    with cujit.graph(s) as g:
        add_one[1, 16, s](d)
        q = ctx.memory_manager.deallocations
        assert q.is_disabled
        for _ in range(20):       # more than the pending-count limit
            cujit.device_array(16, np.float32)
        assert frees == []
    assert not ctx.memory_manager.deallocations.is_disabled
    g.close()


def test_synchronising_the_captured_stream_is_refused(s):
    d = cujit.to_device(np.zeros(8, np.float32))
    with pytest.raises(CudaAPIError) as info:
        with cujit.graph(s):
            add_one[1, 8, s](d)
            s.synchronize()
    assert "STREAM_CAPTURE" in info.value.name
    s.synchronize()           # the stream works again after the failed capture
    np.testing.assert_array_equal(d.copy_to_host(), 0)


def test_synchronous_copy_during_capture_is_refused(s):
    d = cujit.to_device(np.zeros(8, np.float32))
    with pytest.raises(CudaAPIError) as info:
        with cujit.graph(s):
            add_one[1, 8, s](d)
            d.copy_to_host()            # legacy default stream, synchronous
    assert "STREAM_CAPTURE" in info.value.name


@pytest.mark.sim
def test_pageable_copy_cannot_be_captured(s):
    d = cujit.to_device(np.zeros(8, np.float32))
    with pytest.raises(CudaAPIError, match="pageable host memory") as info:
        with cujit.graph(s):
            d.copy_to_host(np.empty(8, np.float32), stream=s)
    assert info.value.name == "CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED"


def test_graph_needs_a_created_stream():
    with pytest.raises(TypeError, match="cujit Stream"):
        cujit.graph(0)
    with pytest.raises(TypeError, match="cujit Stream"):
        cujit.graph("stream")
    with pytest.raises(ValueError, match="default streams cannot be captured"):
        cujit.graph(cujit.default_stream())


def test_launch_before_capture_ends_and_after_close(s):
    g = cujit.graph(s)
    with pytest.raises(RuntimeError, match="nothing to launch"):
        g.launch()
    with g:
        with pytest.raises(RuntimeError, match="nothing to launch"):
            g.launch()
    g.launch()
    g.close()
    g.close()
    with pytest.raises(RuntimeError, match="nothing to launch"):
        g.launch()
    with pytest.raises(RuntimeError, match="captures once"):
        with g:
            pass


def test_launch_rejects_a_bad_stream(s):
    with cujit.graph(s) as g:
        pass
    with pytest.raises(TypeError):
        g.launch("nope")
    g.close()


def test_nested_capture_of_one_stream_is_refused(s):
    with cujit.graph(s):
        with pytest.raises(RuntimeError, match="already being captured"):
            with cujit.graph(s):
                pass


def test_exception_inside_capture_propagates_and_ends_it(s):
    d = cujit.to_device(np.zeros(8, np.float32))
    with pytest.raises(KeyError):
        with cujit.graph(s) as g:
            add_one[1, 8, s](d)
            raise KeyError("user")
    with pytest.raises(RuntimeError, match="nothing to launch"):
        g.launch()
    add_one[1, 8, s](d)              # the stream runs work again
    s.synchronize()
    np.testing.assert_array_equal(d.copy_to_host(), 1)


@pytest.mark.sim      # cuGraphLaunch inside a capture: to be checked on the GPU separately
def test_graph_replayed_inside_another_capture(s):
    d = cujit.to_device(np.zeros(4, np.float32))
    with cujit.graph(s) as inner:
        add_one[1, 4, s](d)
    with cujit.graph(s) as outer:
        inner.launch(s)
        inner.launch(s)
    outer.launch(s)
    s.synchronize()
    np.testing.assert_array_equal(d.copy_to_host(), 2)


def test_dropped_graph_is_destroyed_through_the_resource_queue(s, ctx, count_calls):
    import gc
    destroyed = count_calls("graph_exec_destroy")
    d = cujit.to_device(np.zeros(4, np.float32))
    with cujit.graph(s) as g:
        add_one[1, 4, s](d)
    n = len(ctx.deallocations)
    del g
    gc.collect()
    assert len(ctx.deallocations) == n + 1 and destroyed == []
    ctx.deallocations.clear()
    assert len(destroyed) == 1


@pytest.mark.parametrize("end", ["reset", "close"])
def test_reset_or_close_inside_capture_ends_it_and_later_work_runs(end):
    """A reset or close inside ``with graph(s)`` ends the capture before the stream is
    destroyed: the block raises INVALIDATED, and synchronous work, kernels and new captures
    work afterwards (a capture left open refused them for good)."""
    from cujit.driver import get_driver
    s = cujit.stream()
    d = cujit.to_device(np.zeros(8), stream=s)
    g = cujit.graph(s)
    with pytest.raises(CudaAPIError, match=r"inside the `with graph") as info:
        with g:
            add_one[1, 8, s](d)
            if end == "reset":
                cujit.current_context().reset()
            else:
                cujit.close()
    assert info.value.name == "CUDA_ERROR_STREAM_CAPTURE_INVALIDATED"
    assert g.node_count is None
    with pytest.raises(RuntimeError, match="nothing to launch"):
        g.launch()
    ctx = cujit.current_context()
    assert ctx.captures == {}
    h = cujit.to_device(np.arange(8.0))
    cujit.synchronize()
    add_one[1, 8](h)
    assert h.copy_to_host().tolist() == [float(i + 1) for i in range(8)]
    s2 = cujit.stream()
    with cujit.graph(s2) as g2:
        add_one[1, 8, s2](h)
    g2.launch()
    s2.synchronize()
    assert h.copy_to_host()[0] == 2.0
    if get_driver().is_simulator:
        assert get_driver()._capture.active == {}


def test_close_inside_capture_while_another_exception_propagates_keeps_it():
    s = cujit.stream()
    d = cujit.to_device(np.zeros(8), stream=s)
    with pytest.raises(KeyError, match="mine"):
        with cujit.graph(s):
            add_one[1, 8, s](d)
            cujit.close()
            raise KeyError("mine")
    assert cujit.to_device(np.ones(2)).copy_to_host().tolist() == [1.0, 1.0]


def _zeroed(a):
    a[:] = 0
    return a


@pytest.mark.parametrize("make", [
    lambda: np.zeros(8),
    lambda: _zeroed(cujit.pinned_array(8)),      # pinned_array is uninitialised, as np.empty
    lambda: cujit.InOut(np.zeros(8)),
    lambda: cujit.In(np.zeros(8)),
    lambda: (np.zeros(8),),
], ids=["pageable", "pinned", "InOut", "In", "tuple"])
def test_kernel_on_a_host_array_cannot_be_captured(s, make):
    """A launch during capture that would copy a host array to the device and back is refused
    before anything is recorded, on the simulator as on a GPU; nothing writes the host array
    afterwards."""
    arg = make()
    with pytest.raises(CudaAPIError, match="argument 0 of kernel add_one is a host") as info:
        with cujit.graph(s) as g:
            add_one[1, 8, s](arg)
    assert info.value.name == "CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED"
    assert g.node_count is None
    host = arg.value if hasattr(arg, "value") else arg[0] if isinstance(arg, tuple) else arg
    assert host.tolist() == [0.0] * 8


def test_capture_refusing_a_host_array_leaves_device_and_mapped_arrays_capturable(s):
    d = cujit.to_device(np.zeros(8))
    m = cujit.mapped_array(8)
    m[:] = 0
    with cujit.graph(s) as g:
        add_one[1, 8, s](d)
        add_one[1, 8, s](m)
    g.launch()
    g.launch()
    s.synchronize()
    assert d.copy_to_host().tolist() == [2.0] * 8 and m.tolist() == [2.0] * 8
