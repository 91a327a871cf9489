"""Exact contracts of small core functions, written to kill the mutants that survived the
mutation run of docs/testing.md (each test names what a broken version would get wrong)."""
import gc

import numpy as np
import pytest

import cujit
from cujit.arrays import layout as L
from cujit.driver.errors import CudaAPIError
from cujit.memory import deallocations as D


# -- the pending queue's settings reader -----------------------------------------------------
def test_setting_reader_precedence_and_parsing(monkeypatch):
    from cujit.config import config
    monkeypatch.delenv("CUJIT_CUDA_MAX_PENDING_DEALLOCS_COUNT", raising=False)
    monkeypatch.delenv("NUMBA_CUDA_MAX_PENDING_DEALLOCS_COUNT", raising=False)
    read = D._setting_reader("CUDA_DEALLOCS_COUNT")
    assert read() == 10 == D._default_of("CUDA_DEALLOCS_COUNT")          # the default
    monkeypatch.setenv("NUMBA_CUDA_MAX_PENDING_DEALLOCS_COUNT", "7")
    assert read() == 7                                                    # second spelling
    monkeypatch.setenv("CUJIT_CUDA_MAX_PENDING_DEALLOCS_COUNT", "5")
    assert read() == 5                                                    # first spelling wins
    assert type(read()) is int
    monkeypatch.setenv("CUJIT_CUDA_MAX_PENDING_DEALLOCS_COUNT", "12")
    assert read() == 12 and read() == 12                                  # re-read, cached parse
    config.CUDA_DEALLOCS_COUNT = 3
    assert read() == 3                                                    # override beats env
    config.reset()
    assert read() == 12
    monkeypatch.setenv("CUJIT_CUDA_MAX_PENDING_DEALLOCS_COUNT", "ten")
    with pytest.raises(ValueError, match="CUJIT_CUDA_MAX_PENDING_DEALLOCS_COUNT='ten'"):
        read()
    monkeypatch.delenv("CUJIT_CUDA_MAX_PENDING_DEALLOCS_COUNT")
    monkeypatch.delenv("NUMBA_CUDA_MAX_PENDING_DEALLOCS_COUNT")
    ratio = D._setting_reader("CUDA_DEALLOCS_RATIO")
    assert ratio() == 0.2
    monkeypatch.setenv("NUMBA_CUDA_MAX_PENDING_DEALLOCS_RATIO", "0.5")
    assert ratio() == 0.5


# -- layout ----------------------------------------------------------------------------------
@pytest.mark.parametrize("shape,strides,itemsize,code", [
    ((3, 4), (32, 8), 8, "C"), ((3, 4), (8, 24), 8, "F"), ((3, 4), (64, 16), 8, "A"),
    ((3, 4), (16, 48), 4, "A"), ((3, 4), (4, 12), 4, "F"), ((5,), (4,), 4, "C"),
    ((5,), (8,), 4, "A"), ((1, 4), (999, 2), 2, "C"), ((4, 1), (2, 999), 2, "C")])
def test_layout_code(shape, strides, itemsize, code):
    assert L.layout_code(shape, strides, itemsize) == code
    a = np.lib.stride_tricks.as_strided(np.zeros(64, np.uint8).view(f"u{itemsize}"),
                                        shape, strides)
    want = "C" if a.flags.c_contiguous else "F" if a.flags.f_contiguous else "A"
    assert code == want


@pytest.mark.parametrize("shape,strides,itemsize,want", [
    ((3, 4), (32, 8), 8, (0, 96)), ((3, 4), (-32, 8), 8, (-64, 32)),
    ((3, 4), (32, -8), 8, (-24, 72)), ((2, 3, 4), (96, 32, 8), 8, (0, 192)),
    ((3, 0), (32, 8), 8, (0, 0)), ((), (), 4, (0, 4)), ((5,), (0,), 4, (0, 4))])
def test_extent(shape, strides, itemsize, want):
    assert L.extent(shape, strides, itemsize) == want


def test_normalize_strides():
    assert L.normalize_strides(8, 1) == (8,)
    assert L.normalize_strides(np.int64(8), 1) == (8,)
    out = L.normalize_strides([np.int32(16), 8], 2)
    assert out == (16, 8) and all(type(s) is int for s in out)
    with pytest.raises(TypeError, match=r"strides \(1.5,\) must be a tuple of ints \(bytes\)"):
        L.normalize_strides((1.5,), 1)
    with pytest.raises(ValueError, match=r"strides \(8,\) has 1 entries but the shape has 2 "
                                         "dimensions"):
        L.normalize_strides((8,), 2)


# -- streams and events ----------------------------------------------------------------------
def test_event_elapsed_time_names_the_bad_argument():
    e = cujit.event()
    with pytest.raises(TypeError, match=r"^evtstart must be a cujit Event, got 3$"):
        cujit.event_elapsed_time(3, e)
    with pytest.raises(TypeError, match=r"^evtend must be a cujit Event, got None$"):
        cujit.event_elapsed_time(e, None)
    a, b = cujit.event(), cujit.event()
    a.record()
    b.record()
    b.synchronize()
    assert a.query() is True and b.query() is True
    ms = cujit.event_elapsed_time(a, b)
    assert isinstance(ms, float) and ms >= 0.0
    assert a.elapsed_time(b) >= 0.0


def test_event_timing_flag():
    assert cujit.event().timing is True
    assert cujit.event(timing=False).timing is False
    a, b = cujit.event(timing=False), cujit.event(timing=False)
    a.record()
    b.record()
    b.synchronize()
    with pytest.raises(CudaAPIError, match="cuEventElapsedTime"):
        cujit.event_elapsed_time(a, b)


def test_stale_streams_and_events_name_the_refused_call():
    s = cujit.stream()
    e = cujit.event()
    e.record(s)
    cujit.current_context().reset()
    cases = [(s.synchronize, "cuStreamSynchronize"), (s.query, "cuStreamQuery"),
             (e.record, "cuEventRecord"), (e.wait, "cuStreamWaitEvent"),
             (e.synchronize, "cuEventSynchronize"), (e.query, "cuEventQuery")]
    for fn, call in cases:
        with pytest.raises(CudaAPIError) as ei:
            fn()
        assert ei.value.call == call and ei.value.name == "CUDA_ERROR_INVALID_HANDLE"
        assert "was destroyed when its context was reset" in str(ei.value)
    f = cujit.event()
    with pytest.raises(CudaAPIError) as ei:
        cujit.event_elapsed_time(e, f)
    assert ei.value.call == "cuEventElapsedTime"


def test_event_wait_orders_the_given_stream(count_calls):
    s = cujit.stream()
    e = cujit.event()
    e.record()
    waits = count_calls("stream_wait_event")
    e.wait(s)
    e.wait()
    assert waits == [(s.handle, e.handle), (0, e.handle)]


def test_event_record_on_a_stream(count_calls):
    s = cujit.stream()
    e = cujit.event()
    recs = count_calls("event_record")
    e.record(s)
    e.record()
    assert recs == [(e.handle, s.handle), (e.handle, 0)]


# -- managed memory --------------------------------------------------------------------------
def test_managed_memory_is_queued_with_its_bytes(ctx, count_calls):
    allocs = count_calls("mem_alloc_managed")
    q = ctx.memory_manager.deallocations
    m = ctx.memallocmanaged(4096, attach_global=False)
    assert m.size == 4096 and m.device_pointer_value
    assert len(allocs) == 1 and allocs[0][0] == 4096
    del m
    gc.collect()
    assert len(q) == 1 and q.nbytes == 4096


def test_managed_memory_for_a_plugin_without_memallocmanaged(ctx):
    """Managers lacking ``memallocmanaged`` (third-party plugins) get the built-in path:
    a usable ManagedMemory, freed through the context's own queue."""
    from cujit.memory.managers import _memallocmanaged
    queue = ctx.deallocations
    queue.clear()
    m = _memallocmanaged(ctx, queue, 256, True)
    assert type(m).__name__ == "ManagedMemory" and m.size == 256 and m.device_pointer_value
    view = np.ctypeslib.as_array((np.ctypeslib.ctypes.c_uint8 * 256).from_address(
        m.device_pointer_value))
    view[:] = 7
    assert int(view.sum()) == 7 * 256
    del view, m
    gc.collect()
    assert len(queue) == 1 and queue.nbytes == 256
    queue.clear()
    assert len(queue) == 0
    z = _memallocmanaged(ctx, queue, 0, True)
    assert z.size == 0 and not z.device_pointer_value
    with pytest.raises(ValueError):
        _memallocmanaged(ctx, queue, -1, True)


# -- the __cuda_stream__ protocol ------------------------------------------------------------
def test_cuda_stream_protocol_messages():
    class Bad:
        def __init__(self, v):
            self.v = v

        def __cuda_stream__(self):
            return self.v

    with pytest.raises(TypeError, match=r"^Bad.__cuda_stream__\(\) returned \(1, 2, 3\); "
                                        r"expected a \(version, handle\) tuple$"):
        cujit.external_stream(Bad((1, 2, 3)))
    with pytest.raises(TypeError, match=r"^Bad.__cuda_stream__\(\) gave handle 1.5; expected "
                                        r"an int$"):
        cujit.external_stream(Bad((0, 1.5)))
    with pytest.raises(ValueError, match=r"^Bad.__cuda_stream__\(\) gave handle -1; expected a "
                                         r"pointer value in 0..2\*\*64-1$"):
        cujit.external_stream(Bad((0, -1)))
    assert cujit.external_stream(Bad((0, np.int64(4096)))).handle == 4096

    class Attr:                                 # a plain tuple attribute is accepted too
        __cuda_stream__ = (0, 8192)
    assert cujit.external_stream(Attr()).handle == 8192
