"""Streams and events, R-STR-1..4 (numba bug cases 30 and 31)."""
import asyncio
import threading
import time
import warnings

import numpy as np
import pytest

import cujit
from cujit.driver import get_driver
from cujit.driver.errors import CudaAPIError
from cujit.runtime.streams import Stream, stream_handle, CallbackWarning


class ForeignStream:
    """An object following the CUDA stream protocol (as CuPy / cuda.core streams do)."""

    def __init__(self, handle):
        self.handle = handle

    def __cuda_stream__(self):
        return (0, self.handle)


def test_case31_handles_and_reprs(ctx):
    d, leg, pt = cujit.default_stream(), cujit.legacy_default_stream(), \
        cujit.per_thread_default_stream()
    s = cujit.stream()
    ext = cujit.external_stream(int(s))
    assert (d.handle, leg.handle, pt.handle) == (0, 1, 2)
    assert s.handle not in (0, 1, 2) and s.handle != 0
    assert ext.handle == s.handle and int(ext) == int(s)
    assert repr(d).startswith("<Default CUDA stream")
    assert repr(leg).startswith("<Legacy default CUDA stream")
    assert repr(pt).startswith("<Per-thread default CUDA stream")
    assert repr(s).startswith(f"<CUDA stream {s.handle:#x}")
    assert repr(ext).startswith(f"<External CUDA stream {s.handle:#x}")
    assert s.__cuda_stream__() == (0, s.handle)
    assert cujit.default_stream() is d          # cached per context


def test_case31_external_wrapper_never_destroys(ctx, count_calls):
    destroys = count_calls("stream_destroy")
    s = cujit.stream()
    h = s.handle
    ext = cujit.external_stream(h)
    assert ext.external and not s.external
    del ext
    assert len(ctx.deallocations) == 0
    ext2 = cujit.external_stream(s)             # objects with __cuda_stream__ are accepted
    assert ext2.handle == h
    del ext2
    assert len(ctx.deallocations) == 0
    s.synchronize()                             # the wrapped stream still works
    del s
    assert len(ctx.deallocations) == 1          # the owner's destroy is queued
    ctx.deallocations.clear()
    assert destroys == [(h,)]


@pytest.mark.parametrize("bad", [1.5, "1", None, True, [1], object()])
def test_case31_external_stream_rejects_non_int(ctx, bad):
    with pytest.raises(TypeError, match="external_stream"):
        cujit.external_stream(bad)


def test_external_stream_from_protocol_object(ctx):
    s = cujit.stream()
    assert cujit.external_stream(ForeignStream(s.handle)).handle == s.handle
    assert cujit.external_stream(np.int64(s.handle)).handle == s.handle


@pytest.mark.sim
def test_simulated_external_stream_runs_work_and_refuses_an_unknown_handle(ctx):
    # numba's simulator refuses every external stream (RuntimeError); cujit's wraps the
    # simulated stream the handle names, and, as the GPU, refuses one that names none
    s = cujit.stream()
    ext = cujit.external_stream(s.handle)

    @cujit.jit
    def add_one(a):
        a[cujit.grid(1)] += 1

    d = cujit.to_device(np.arange(4, dtype=np.int32), stream=ext)
    add_one[1, 4, ext](d)
    ext.synchronize()
    assert d.copy_to_host().tolist() == [1, 2, 3, 4]
    bogus = cujit.external_stream(0x12345678)
    assert int(bogus.handle) == 0x12345678
    with pytest.raises(CudaAPIError, match="CUDA_ERROR_INVALID_HANDLE"):
        bogus.synchronize()
    with pytest.raises(CudaAPIError, match="CUDA_ERROR_INVALID_HANDLE"):
        add_one[1, 4, bogus](d)
    assert d.copy_to_host().tolist() == [1, 2, 3, 4]


def test_stream_handle_helper(ctx):
    s = cujit.stream()
    assert stream_handle(0) == 0 and stream_handle(None) == 0
    assert stream_handle(s) == s.handle
    assert stream_handle(cujit.legacy_default_stream()) == 1
    assert stream_handle(ForeignStream(s.handle)) == s.handle
    for bad in (1, 5, 1.0, "0", False, object(), [0], np.int64(1), np.float64(0)):
        with pytest.raises(TypeError, match="stream"):
            stream_handle(bad)
    # a NumPy integer 0 is the default stream, as numba.cuda takes any falsy stream
    assert stream_handle(np.int64(0)) == 0 and stream_handle(np.uint8(0)) == 0


def test_launch_on_a_numpy_zero_stream(ctx):
    @cujit.jit
    def fill(a):
        a[cujit.grid(1)] = 7
    d = cujit.device_array(4, np.int32)
    fill[1, 4, np.int64(0)](d)
    assert d.copy_to_host().tolist() == [7, 7, 7, 7]


def test_per_thread_default_stream_setting(ctx, monkeypatch):
    monkeypatch.setenv("NUMBA_CUDA_PER_THREAD_DEFAULT_STREAM", "1")
    assert cujit.default_stream().handle == 2
    assert cujit.default_stream() is cujit.per_thread_default_stream()
    results, errors = {}, []
    nbytes = 1 << 16

    def work(tid):
        try:
            s = cujit.default_stream()
            dev = cujit.current_context().memalloc(nbytes)
            src = np.full(nbytes, tid, np.uint8)
            dst = np.zeros(nbytes, np.uint8)
            drv = get_driver()
            for _ in range(20):
                drv.memcpy_htod(dev.device_pointer_value, src.ctypes.data, nbytes, s.handle)
                drv.memcpy_dtoh(dst.ctypes.data, dev.device_pointer_value, nbytes, s.handle)
            s.synchronize()
            results[tid] = (s.handle, int(dst.min()), int(dst.max()))
        except Exception as exc:     # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(t,)) for t in (3, 4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert results == {3: (2, 3, 3), 4: (2, 4, 4)}
    monkeypatch.setenv("NUMBA_CUDA_PER_THREAD_DEFAULT_STREAM", "0")
    assert cujit.default_stream().handle == 0


def test_stream_released_through_context_queue(ctx, count_calls):
    destroys = count_calls("stream_destroy")
    s = cujit.stream()
    h = s.handle
    del s
    assert len(ctx.deallocations) == 1 and destroys == []
    ctx.deallocations.clear()
    assert destroys == [(h,)]


def test_auto_synchronize(ctx, count_calls):
    syncs = count_calls("stream_synchronize")
    s = cujit.stream()
    with s.auto_synchronize() as t:
        assert t is s and syncs == []
    assert syncs == [(s.handle,)]
    with pytest.raises(ZeroDivisionError):
        with s.auto_synchronize():
            1 / 0
    assert len(syncs) == 2


def test_add_callback_runs_after_work(ctx):
    s = cujit.stream()
    seen = []
    n = 1 << 20
    src = np.arange(n, dtype=np.uint8)
    host = cujit.current_context().memhostalloc(n)
    dev = ctx.memalloc(n)
    drv = get_driver()
    drv.memcpy_htod(dev.device_pointer_value, src.ctypes.data, n, s.handle)
    drv.memcpy_dtoh(host.host_pointer, dev.device_pointer_value, n, s.handle)

    def cb(stream, status, arg):
        # work queued before the callback is complete when it runs
        seen.append((stream, status, arg, bool((host.host_array() == src).all())))

    s.add_callback(cb, "payload")
    s.synchronize()
    assert seen == [(s, 0, "payload", True)]


def test_add_callback_exception_becomes_warning(ctx):
    s = cujit.stream()

    def cb(stream, status, arg):
        raise ValueError("callback failed on purpose")

    with pytest.warns(CallbackWarning, match="callback failed on purpose"):
        s.add_callback(cb)
        s.synchronize()
    s.synchronize()                 # the stream keeps working
    with pytest.raises(TypeError, match="callable"):
        s.add_callback(42)


def test_callback_taking_the_gil_does_not_deadlock(ctx):
    """The main thread waits on the stream while callbacks run Python code."""
    s = cujit.stream()
    count = []

    def cb(stream, status, arg):
        total = 0
        for i in range(20000):      # holds the GIL for a while
            total += i
        time.sleep(0.001)
        count.append(total)

    import faulthandler
    # A deadlock would hold the GIL, so only a C-level watchdog can end it: dump the
    # stacks and exit instead of hanging the run.
    faulthandler.dump_traceback_later(300, exit=True)
    try:
        for _ in range(30):
            s.add_callback(cb)
            s.synchronize()
    finally:
        faulthandler.cancel_dump_traceback_later()
    assert len(count) == 30


def test_case30_async_done_four_streams_with_busy_thread(ctx):
    streams = [cujit.stream() for _ in range(4)]
    n = 4096
    devs = [ctx.memalloc(n) for _ in streams]
    hosts = [np.full(n, i, np.uint8) for i in range(4)]
    outs = [np.zeros(n, np.uint8) for _ in range(4)]
    drv = get_driver()
    stop = threading.Event()
    errors = []

    def busy():
        try:
            c = cujit.current_context()
            buf = np.ones(8192, np.uint8)
            while not stop.is_set():
                p = c.memalloc(8192)
                drv.memcpy_htod(p.device_pointer_value, buf.ctypes.data, 8192)
                drv.memcpy_dtoh(buf.ctypes.data, p.device_pointer_value, 8192)
                del p
        except Exception as exc:     # pragma: no cover - reported below
            errors.append(exc)

    async def round_trip(k):
        for i, s in enumerate(streams):
            hosts[i][:] = (i + k) % 256
            drv.memcpy_htod(devs[i].device_pointer_value, hosts[i].ctypes.data, n, s.handle)
            drv.memcpy_dtoh(outs[i].ctypes.data, devs[i].device_pointer_value, n, s.handle)
        done = await asyncio.wait_for(
            asyncio.gather(*(s.async_done() for s in streams)), timeout=60)
        assert done == streams
        for i in range(4):
            assert outs[i][0] == (i + k) % 256 and outs[i][-1] == (i + k) % 256

    async def main():
        for k in range(300):
            await round_trip(k)

    t = threading.Thread(target=busy)
    t.start()
    try:
        asyncio.run(main())
    finally:
        stop.set()
        t.join()
    assert errors == []


def test_async_done_error_becomes_exception(ctx, monkeypatch):
    s = cujit.stream()
    drv = get_driver()

    def failing_query(handle):
        raise CudaAPIError(719, "simulated kernel fault", "cuStreamQuery")

    async def main():
        fut = s.async_done()
        monkeypatch.setattr(drv, "stream_query", failing_query)
        with pytest.raises(CudaAPIError) as err:
            await asyncio.wait_for(fut, timeout=60)
        monkeypatch.undo()
        return err.value

    exc = asyncio.run(main())
    assert exc.name == "CUDA_ERROR_LAUNCH_FAILED" and exc.call == "cuStreamQuery"


def test_async_done_needs_running_loop(ctx):
    with pytest.raises(RuntimeError):
        cujit.stream().async_done()


def test_events(ctx):
    s = cujit.stream()
    a, b = cujit.event(), cujit.event()
    a.record(s)
    dev = ctx.memalloc(1 << 20)
    dev.memset(1, stream=s)
    b.record(s)
    b.synchronize()
    assert b.query() is True
    t = a.elapsed_time(b)
    assert isinstance(t, float) and t >= 0.0
    assert cujit.event_elapsed_time(a, b) >= 0.0
    b.wait(cujit.stream())
    b.wait()                            # default stream
    with pytest.raises(TypeError, match="stream"):
        a.record(stream=7)
    with pytest.raises(TypeError, match="Event"):
        cujit.event_elapsed_time(a, 3)


def test_event_without_timing(ctx):
    a, b = cujit.event(timing=False), cujit.event(timing=False)
    a.record()
    b.record()
    b.synchronize()
    with pytest.raises(CudaAPIError):
        a.elapsed_time(b)


def test_event_released_through_context_queue(ctx, count_calls):
    destroys = count_calls("event_destroy")
    e = cujit.event()
    h = e.handle
    del e
    assert len(ctx.deallocations) == 1
    ctx.deallocations.clear()
    assert destroys == [(h,)]


def test_stream_equality_and_type(ctx):
    s = cujit.stream()
    assert isinstance(s, Stream) and s == cujit.external_stream(s.handle) and s != 0
    assert len({s, cujit.external_stream(s.handle)}) == 1
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        s.synchronize()
        assert s.query() in (True, False)


def test_per_thread_default_streams_do_not_serialise(ctx, monkeypatch):
    """Under NUMBA_CUDA_PER_THREAD_DEFAULT_STREAM=1, thread A's default stream is held by a
    callback that waits until thread B's default-stream work has completed.  If the two
    threads' default streams were one (serialised), B's synchronize would wait behind A's
    callback and the callback would time out (a deadlock guard, not a timing assertion)."""
    monkeypatch.setenv("NUMBA_CUDA_PER_THREAD_DEFAULT_STREAM", "1")
    b_done = threading.Event()
    released = []
    errors = []
    n = 1 << 16

    def thread_a(ready):
        try:
            s = cujit.default_stream()

            def hold(st, status, arg):
                ready.set()         # A's stream is now busy in this callback
                released.append(b_done.wait(timeout=30))

            s.add_callback(hold)
            s.synchronize()
        except Exception as exc:     # pragma: no cover - reported below
            errors.append(exc)

    def thread_b(ready):
        try:
            ready.wait(timeout=30)
            s = cujit.default_stream()
            assert s.handle == 2
            dev = cujit.current_context().memalloc(n)
            src = np.full(n, 5, np.uint8)
            get_driver().memcpy_htod(dev.device_pointer_value, src.ctypes.data, n, s.handle)
            s.synchronize()
            b_done.set()
        except Exception as exc:     # pragma: no cover - reported below
            errors.append(exc)

    ready = threading.Event()
    ta = threading.Thread(target=thread_a, args=(ready,))
    tb = threading.Thread(target=thread_b, args=(ready,))
    tb.start()
    ta.start()
    ta.join()
    tb.join()
    assert errors == []
    assert released == [True]
