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
    read = config.reader("CUDA_DEALLOCS_COUNT")
    assert read() == 10 == config.default("CUDA_DEALLOCS_COUNT")        # the default
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
    ratio = config.reader("CUDA_DEALLOCS_RATIO")
    assert ratio() == 0.2
    monkeypatch.setenv("NUMBA_CUDA_MAX_PENDING_DEALLOCS_RATIO", "0.5")
    assert ratio() == 0.5


def test_check_settings_returns_both_limits_and_names_a_bad_one(monkeypatch):
    from cujit.config import config
    for n in ("CUJIT_", "NUMBA_"):
        for s in ("COUNT", "RATIO"):
            monkeypatch.delenv(f"{n}CUDA_MAX_PENDING_DEALLOCS_{s}", raising=False)
    assert D.check_settings() == (10, 0.2)
    monkeypatch.setenv("NUMBA_CUDA_MAX_PENDING_DEALLOCS_RATIO", "0.5")
    assert D.check_settings() == (10, 0.5)
    config.CUDA_DEALLOCS_COUNT = 4
    assert D.check_settings() == (4, 0.5)
    monkeypatch.setenv("NUMBA_CUDA_MAX_PENDING_DEALLOCS_RATIO", "-1")
    with pytest.raises(ValueError, match="NUMBA_CUDA_MAX_PENDING_DEALLOCS_RATIO='-1'"):
        D.check_settings()


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
    from cujit.memory.managers import memallocmanaged_fallback
    queue = ctx.deallocations
    queue.clear()
    m = memallocmanaged_fallback(ctx, queue, 256, True)
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
    z = memallocmanaged_fallback(ctx, queue, 0, True)
    assert z.size == 0 and not z.device_pointer_value
    with pytest.raises(ValueError):
        memallocmanaged_fallback(ctx, queue, -1, True)


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


# -- the pending queue and the managers' bookkeeping -----------------------------------------
def test_fresh_queue_counters_and_drop_all():
    q = D.PendingDeallocs()
    assert (q.flush_count, q.freed_count, q.failed_count, q.last_error) == (0, 0, 0, None)
    assert (len(q), q.nbytes, q.is_disabled) == (0, 0, False)
    with q.disable():
        q.add_item(lambda h: None, 1, 100)
        q.add_item(lambda h: None, 2, 50)
        assert (len(q), q.nbytes) == (2, 150)
        q.drop_all()
    assert (len(q), q.nbytes, q.freed_count) == (0, 0, 0)
    assert repr(q) == "<PendingDeallocs 0 entries, 0 bytes>"


def test_manager_construction_and_fresh_stats(ctx):
    from cujit.memory.managers import NumbaCUDAMemoryManager
    with pytest.raises(TypeError, match=r"^a memory manager is constructed with keyword argument "
                                        r"'context' \(the cujit Context it serves\)$"):
        NumbaCUDAMemoryManager(ctx)
    m = NumbaCUDAMemoryManager(context=ctx)
    assert m.deallocations._context is ctx
    assert m.deallocations._capacity == ctx.device.total_memory
    assert tuple(m.get_stats()) == (0,) * 10
    lone = NumbaCUDAMemoryManager(context=None)
    assert lone._drv is None and lone.deallocations._capacity == 0


def test_reset_zeroes_the_counters(ctx):
    mm = ctx.memory_manager
    keep = [cujit.device_array(100, np.uint8), cujit.managed_array(10, np.uint8),
            ctx.memhostalloc(64)]
    st = mm.get_stats()
    assert st.bytes_in_use >= 100 and st.live_allocations >= 1 and st.host_bytes_in_use >= 64
    ctx.reset()                                   # calls the manager's reset()
    st = ctx.memory_manager.get_stats()
    assert (st.bytes_in_use, st.live_allocations, st.host_bytes_in_use) == (0, 0, 0)
    del keep
    gc.collect()                                  # dead generation: nothing is counted back
    st = ctx.memory_manager.get_stats()
    assert (st.bytes_in_use, st.live_allocations, st.host_bytes_in_use) == (0, 0, 0)


def test_memhostalloc_flags_bytes_and_queue(ctx, monkeypatch):
    from cujit.driver import get_driver
    drv = get_driver()
    seen = []
    real = drv.mem_host_alloc

    def spy(size, **kw):
        seen.append((size, kw))
        return real(size, **kw)
    monkeypatch.setattr(drv, "mem_host_alloc", spy)
    mm = ctx.memory_manager
    before = mm.get_stats().host_bytes_in_use
    a = ctx.memhostalloc(128)
    b = ctx.memhostalloc(256, mapped=True, portable=True, wc=True)
    assert seen == [(128, {"mapped": False, "portable": False, "wc": False}),
                    (256, {"mapped": True, "portable": True, "wc": True})]
    assert a.context is ctx and b.context is ctx and a.is_managed is True
    assert mm.get_stats().host_bytes_in_use == before + 384
    z = ctx.memhostalloc(0)
    assert z.size == 0 and z.context is ctx and not z.host_pointer
    q = mm.deallocations
    q.clear()
    del a
    gc.collect()
    assert (len(q), q.nbytes) == (1, 128)
    assert mm.get_stats().host_bytes_in_use == before + 256
    del b


def test_allocation_retry_rules(ctx):
    from cujit.driver.errors import CUDA_ERROR_OUT_OF_MEMORY
    mm = ctx.memory_manager
    calls = []

    def oom_once():
        calls.append(1)
        if len(calls) == 1:
            raise CudaAPIError(CUDA_ERROR_OUT_OF_MEMORY, "full", "cuMemAlloc")
        return "ok"
    retries = mm.get_stats().oom_retries
    assert mm._attempt_allocation(oom_once) == "ok" and len(calls) == 2
    assert mm.get_stats().oom_retries == retries + 1

    def invalid_value():
        calls.append(2)
        raise CudaAPIError(1, "bad", "cuMemAlloc")
    calls.clear()
    with pytest.raises(CudaAPIError) as ei:
        mm._attempt_allocation(invalid_value)
    assert ei.value.code == 1 and calls == [2]          # not retried

    def invalid_context_once():
        calls.append(3)
        if len(calls) == 1:
            raise CudaAPIError(201, "", "cuMemAlloc")
        return "again"
    calls.clear()
    assert mm._attempt_allocation(invalid_context_once) == "again" and calls == [3, 3]


def test_plugin_validation_messages():
    from cujit.memory.managers import (MemoryManagerError, NumbaCUDAMemoryManager,
                                       set_memory_manager)

    class Lacking:
        pass
    with pytest.raises(TypeError, match=r"^set_memory_manager: memory manager "
                                        r".*Lacking lacks the EMM method\(s\) memalloc, "
                                        r"memhostalloc, mempin, initialize"):
        set_memory_manager(Lacking)

    class Old(NumbaCUDAMemoryManager):
        @property
        def interface_version(self):
            return 0
    with pytest.raises(MemoryManagerError, match=r"^set_memory_manager: EMM plugin .*Old has "
                                                 r"interface version 0; version 1 required$"):
        set_memory_manager(Old)


def test_memory_manager_setting_is_named_in_errors(monkeypatch):
    from cujit.config import config
    from cujit.memory import managers
    monkeypatch.setattr(managers, "_override", None)
    monkeypatch.setenv("CUJIT_CUDA_MEMORY_MANAGER", "no_such_module_xyz")
    with pytest.raises(ImportError, match=r"^CUJIT_CUDA_MEMORY_MANAGER='no_such_module_xyz': "
                                          "cannot import"):
        managers.memory_manager_class()
    monkeypatch.delenv("CUJIT_CUDA_MEMORY_MANAGER")
    config.CUDA_MEMORY_MANAGER = "math"              # importable, but no plugin in it
    with pytest.raises(managers.MemoryManagerError,
                       match=r"^cujit.config.CUDA_MEMORY_MANAGER='math': module math has no "
                             "_numba_memory_manager$"):
        managers.memory_manager_class()
    config.CUDA_MEMORY_MANAGER = "cujit.memory.pool"
    assert managers.memory_manager_class().__name__ == "PoolMemoryManager"
    config.reset()
    assert managers.memory_manager_class() is managers.NumbaCUDAMemoryManager


# -- layout: squeeze and transpose -----------------------------------------------------------
def test_squeeze_axes():
    shape, strides = (1, 3, 1), (24, 8, 8)
    assert L.squeeze(shape, strides) == ((3,), (8,))
    assert L.squeeze(shape, strides, axis=(0, 2)) == ((3,), (8,))
    assert L.squeeze(shape, strides, axis=-3) == ((3, 1), (8, 8))
    assert L.squeeze(shape, strides, axis=2) == ((1, 3), (24, 8))
    for bad in (3, -4):
        with pytest.raises(np.exceptions.AxisError) as ei:
            L.squeeze(shape, strides, axis=bad)
        assert str(ei.value) == str(np.exceptions.AxisError(bad, 3))


def test_transpose_axes():
    shape, strides = (2, 3, 4), (96, 32, 8)
    assert L.transpose(shape, strides) == ((4, 3, 2), (8, 32, 96))
    assert L.transpose(shape, strides, (-1, 0, 1)) == ((4, 2, 3), (8, 96, 32))
    assert L.transpose(shape, strides, (2, -3, -2)) == ((4, 2, 3), (8, 96, 32))
    assert L.transpose(shape, strides, (0, 1, 2)) == (shape, strides)
    with pytest.raises(TypeError, match=r"^axes \(0, 1.5, 2\) must be a sequence of ints$"):
        L.transpose(shape, strides, (0, 1.5, 2))


def test_stream_hash_and_new_event_generation():
    s = cujit.stream()
    t = cujit.external_stream(s.handle)
    assert hash(s) == hash(t) and s == t
    assert hash(s) != hash(cujit.stream())
    e = cujit.event(timing=False)
    assert e.generation == cujit.current_context().generation and e.timing is False


# -- layout: dtype views, reshape, shapes ----------------------------------------------------
@pytest.mark.parametrize("args,want", [
    (((3, 4), (32, 8), 8, 4), ((3, 8), (32, 4))), (((3, 4), (32, 8), 8, 16), ((3, 2), (32, 16))),
    (((3, 0), (32, 8), 8, 4), ((3, 0), (32, 4))), (((), (), 4, 4), ((), ())),
    (((2, 6), (48, 8), 8, 24), ((2, 2), (48, 24)))])
def test_view_dtype(args, want):
    assert L.view_dtype(*args) == want
    shape, strides, old, new = args
    a = np.lib.stride_tricks.as_strided(np.zeros(64, f"V{old}"), shape, strides)
    assert a.view(f"V{new}").shape == want[0]


@pytest.mark.parametrize("args,msg", [
    (((), (), 4, 8), "Changing the dtype of a 0d array is only supported if the itemsize is "
                     "unchanged"),
    # NumPy's own wording (ndarray.view), so code matching on it keeps working
    (((3, 4), (32, 16), 8, 4), "To change to a dtype of a different size, the last axis must be "
                               "contiguous"),
    (((3, 3), (24, 8), 8, 16), "When changing to a larger dtype, its size must be a divisor "
                               "of the total size in bytes of the last axis of the array."),
    (((3, 4), (32, 8), 8, 3), "When changing to a smaller dtype, its size must be a divisor "
                              "of the size of original dtype")])
def test_view_dtype_errors(args, msg):
    with pytest.raises(ValueError) as ei:
        L.view_dtype(*args)
    assert str(ei.value) == msg


@pytest.mark.parametrize("newshape,order,want", [
    ((2, 3), "C", ((2, 3), (24, 8))), ((2, 3), "A", ((2, 3), (24, 8))),
    ((2, 3), "F", ((2, 3), (8, 16))), ([2, 3], "C", ((2, 3), (24, 8))),
    (np.int64(6), "C", ((6,), (8,))), ((np.int32(3), -1), "C", ((3, 2), (16, 8))),
    ((-1,), "C", ((6,), (8,)))])
def test_reshape_forms(newshape, order, want):
    assert L.reshape((6,), (8,), 8, newshape, order) == want


@pytest.mark.parametrize("newshape,order,exc,msg", [
    ((2, 3), "Q", ValueError, "order 'Q' must be 'C', 'F' or 'A'"),
    ((2.0, 3), "C", TypeError, "shape (2.0, 3) must be ints"),
    ((4, -1), "C", ValueError, "cannot reshape array of size 6 into shape (4,newaxis)"),  # NumPy's
    ((-1, -1), "C", ValueError, "can only specify one unknown dimension (-1), got shape "
                                "(-1, -1)")])
def test_reshape_errors(newshape, order, exc, msg):
    with pytest.raises(exc) as ei:
        L.reshape((6,), (8,), 8, newshape, order)
    assert ei.type is exc and str(ei.value) == msg


def test_reshape_of_an_f_array_with_order_a_keeps_f():
    assert L.reshape((2, 3), (8, 16), 8, (3, 2), "A") == ((3, 2), (8, 24))


def test_normalize_shape():
    assert L.normalize_shape((0, 3)) == (0, 3)
    assert L.normalize_shape(np.int64(3)) == (3,)
    assert L.normalize_shape(3) == (3,)
    with pytest.raises(ValueError) as ei:
        L.normalize_shape((2, -1))
    assert str(ei.value) == "shape (2, -1): negative dimension -1 is not allowed"
    with pytest.raises(TypeError) as ei:
        L.normalize_shape((2, 1.5))
    assert str(ei.value) == ("shape (2, 1.5): 1.5 (float) is not an integer; shape must be an "
                             "int or a tuple of ints")
    with pytest.raises(TypeError) as ei:
        L.normalize_shape((2, 1.5), what="strides")
    assert str(ei.value).startswith("strides (2, 1.5): 1.5 (float) is not an integer; strides")


# -- launch configuration --------------------------------------------------------------------
def test_make_config_messages_and_args():
    from cujit.dispatch import launcher as ln
    with pytest.raises(TypeError) as ei:
        ln.make_config(1.5, 1, 0, 0, 0, None)
    assert str(ei.value) == ("griddim must be a sequence of integers, got [1.5]: an int or a "
                             "tuple of 1 to 3 ints is expected, 1.5 is of type float (in the "
                             "launch configuration [1.5, 1, stream=0, dynamic_shared_bytes=0])")
    with pytest.raises(ValueError) as ei:
        ln.make_config(1, (1, 2, 3, 4), 0, 0, 0, None)
    assert str(ei.value) == ("blockdim must be a sequence of 1, 2 or 3 integers, got [1, 2, 3, "
                             "4]: 4 dimensions in the launch configuration [1, (1, 2, 3, 4), "
                             "stream=0, dynamic_shared_bytes=0]")
    s = cujit.stream()
    cfg = ln.make_config((2, 3), 32, s, 16, 0, None)
    assert (cfg.griddim, cfg.blockdim, cfg.sharedmem) == ((2, 3, 1), (32, 1, 1), 16)
    assert cfg.stream_handle == s.handle
    assert cfg.largs == (2, 3, 1, 32, 1, 1, 16, s.handle)
    wrapped = ln.make_config(1, 1, s, 0, 0, lambda h: ("stream", h))
    assert wrapped.largs[-1] == ("stream", s.handle)


def test_device_limits_are_the_device_attributes():
    from cujit.dispatch import launcher as ln
    lim = ln.device_limits(0)
    dev = cujit.get_current_device()
    assert lim["MAX_THREADS_PER_BLOCK"] == dev.MAX_THREADS_PER_BLOCK
    assert lim["MAX_SHARED_MEMORY_PER_BLOCK"] == dev.MAX_SHARED_MEMORY_PER_BLOCK
    assert lim["MAX_GRID_DIM_X"] == dev.MAX_GRID_DIM_X and lim["MAX_BLOCK_DIM_Z"] == 64
    assert all(type(v) is int for v in lim.values())
    assert ln.device_limits(0) is lim                   # cached per device


def test_stream_handle_rules():
    from cujit.runtime.streams import stream_handle
    s = cujit.stream()
    assert stream_handle(0) == 0 and stream_handle(None) == 0 and stream_handle(s) == s.handle
    for bad in (1, 1.0, "s", True):
        with pytest.raises(TypeError):
            stream_handle(bad)
    cujit.current_context().reset()
    with pytest.raises(CudaAPIError) as ei:
        stream_handle(s)
    assert ei.value.call == "stream argument" and repr(s) in str(ei.value)


# -- more exact results: packed strides, element keys, dtypes, zero-size host/managed memory --
@pytest.mark.parametrize("shape,strides", [((3, 4), (32, 8)), ((3, 4), (8, 24)),
                                           ((3, 4), (64, 16)), ((3, 4), (-32, 8)),
                                           ((4, 3), (8, 32)), ((3, 4), (16, 96)),
                                           ((2, 3, 4), (8, 64, 16)), ((3, 1), (8, 8))])
def test_packed_strides_like_is_numpy_order_k(shape, strides):
    base = np.zeros(512, np.float64)
    a = np.lib.stride_tricks.as_strided(base[256:], shape, strides)
    assert L.packed_strides_like(shape, strides, 8) == np.empty_like(a, order="K").strides


def test_packed_strides_like_zero_length_axis():
    assert L.packed_strides_like((2, 0, 3), (0, 24, 8), 8) == (24, 24, 8)
    assert L.packed_strides_like((0, 3), (8, 0), 4) == (12, 4)


@pytest.mark.parametrize("key,element", [((np.int64(1), np.int64(2)), True), ((1, 2), True),
                                         ((1, None, 2), False), ((Ellipsis, 2), False),
                                         ((1, Ellipsis, 2), False), ((1,), False),
                                         ((np.int64(1), slice(2, 3)), False)])
def test_index_says_when_a_key_picks_one_element(key, element):
    off, shape, strides, is_element = L.index((3, 4), (32, 8), key)
    assert is_element is element
    want = np.zeros((3, 4))[key]
    assert shape == np.shape(want)
    assert (not element) or (shape == () and off == 32 * 1 + 8 * 2)


def test_index_two_ellipses_message():
    with pytest.raises(IndexError) as ei:
        L.index((3, 4), (32, 8), (Ellipsis, Ellipsis))
    assert str(ei.value) == "an index can only have a single ellipsis ('...')"


def test_object_dtype_is_refused_with_the_reason():
    for spelling in (object, "O", np.dtype(object)):
        with pytest.raises(TypeError) as ei:
            L.normalize_dtype(spelling)
        assert str(ei.value) == (
            "dtype object holds Python objects, which have no meaning in device or page-locked "
            "memory (the uninitialised bytes would be taken as object pointers); use a numeric, "
            "bool, string or structured dtype")
    assert L.normalize_dtype("f4") is L.normalize_dtype("f4") == np.dtype(np.float32)


def _spy(monkeypatch, name):
    from cujit.driver import get_driver
    drv = get_driver()
    seen, real = [], getattr(drv, name)

    def spy(*a, **kw):
        seen.append((a, kw))
        return real(*a, **kw)
    monkeypatch.setattr(drv, name, spy)
    return seen


@pytest.mark.parametrize("path", ["manager", "plugin"])
def test_managed_memory_fields_flags_and_free(ctx, monkeypatch, path):
    from cujit.memory.managers import memallocmanaged_fallback
    seen = _spy(monkeypatch, "mem_alloc_managed")
    q = ctx.memory_manager.deallocations if path == "manager" else ctx.deallocations
    q.clear()

    def make(n, g):
        if path == "manager":
            return ctx.memory_manager.memallocmanaged(n, attach_global=g)
        return memallocmanaged_fallback(ctx, q, n, g)
    m = make(512, False)
    d = make(256, True)
    assert [kw.get("attach_global") for _, kw in seen] == [False, True]
    assert m.context is ctx and m.size == 512 and m.is_managed is True
    z = make(0, True)
    assert z.context is ctx and z.device_pointer_value == 0 and z.size == 0
    freed, failed = q.freed_count, q.failed_count
    del m, d
    gc.collect()
    assert len(q) == 2 and q.nbytes == 768
    q.clear()
    assert q.freed_count == freed + 2 and q.failed_count == failed   # real frees, no error
    if path == "manager":                     # attach_global defaults to True
        seen.clear()
        ctx.memory_manager.memallocmanaged(128)
        assert seen[0][1].get("attach_global") is True


def test_mempin_fields_and_zero_size(ctx):
    h = np.zeros(512, np.uint8)
    p = ctx.mempin(h, h.ctypes.data, h.nbytes)
    assert p.context is ctx and p.size == 512 and p.is_managed is True
    assert p.host_pointer == h.ctypes.data and p.owner is h
    z = ctx.mempin(h, h.ctypes.data, 0)
    assert z.context is ctx and z.size == 0 and z.host_pointer == h.ctypes.data
    assert z.owner is h
    del p
    gc.collect()
    again = ctx.mempin(h, h.ctypes.data, h.nbytes)    # unregistered at once: pinnable again
    assert again.size == 512


def test_queue_repr_add_item_default_and_clear_with_nothing_queued():
    q = D.PendingDeallocs(None, 1000)
    with q.disable():
        q.add_item(lambda h: None, 1)                  # size defaults to 0 (streams, events)
        assert q.nbytes == 0
        assert repr(q) == "<PendingDeallocs 1 entries, 0 bytes, disabled>"
    assert repr(q) == "<PendingDeallocs 1 entries, 0 bytes>"
    q.clear()
    assert len(q) == 0 and q.flush_count == 1
    q.clear()                                          # empty: no flush is counted
    assert q.flush_count == 1


def test_callback_on_a_stale_stream_names_cu_launch_host_func():
    s = cujit.stream()
    cujit.current_context().reset()
    with pytest.raises(CudaAPIError) as ei:
        s.add_callback(lambda *a: None)
    assert ei.value.call == "cuLaunchHostFunc"


def test_callback_exception_warning_names_the_exception_type():
    from cujit.runtime.streams import CallbackWarning
    s = cujit.stream()

    def boom(stream, status, arg):
        raise KeyError("k")
    with pytest.warns(CallbackWarning, match=r"KeyError: 'k'"):
        s.add_callback(boom)
        s.synchronize()


def test_stream_handle_of_a_protocol_object_names_it():
    from cujit.runtime.streams import stream_handle

    class Proto:
        def __cuda_stream__(self):
            return (0, -5)
    with pytest.raises(ValueError, match=r"^Proto.__cuda_stream__\(\) gave handle -5"):
        stream_handle(Proto())
