"""Streams and events made before ``context.reset()`` were destroyed by it, but
their objects still passed the old handle to the driver (CUDA may by then have given that
handle to a new stream or event; on the simulator the call failed only because handles are
never reused there).  They now raise CudaAPIError (CUDA_ERROR_INVALID_HANDLE) naming the
object before any driver call; default streams stay valid."""
import numpy as np
import pytest

import cujit as cuda


@pytest.mark.parametrize("use", [
    lambda s, e: s.synchronize(),
    lambda s, e: s.query(),
    lambda s, e: s.add_callback(lambda *a: None),
    lambda s, e: cuda.to_device(np.ones(3), stream=s),
    lambda s, e: cuda.event().record(s),
    lambda s, e: e.record(),
    lambda s, e: e.synchronize(),
    lambda s, e: e.query(),
    lambda s, e: e.wait(),
    lambda s, e: cuda.event_elapsed_time(e, e),
], ids=["sync", "query", "callback", "to_device", "record-on", "record", "esync", "equery",
        "wait", "elapsed"])
def test_stream_or_event_from_before_reset_is_refused(ctx, count_calls, use):
    # (ctx.reset() written in the test itself: conftest runs resetting tests last on a GPU)
    s, e = cuda.stream(), cuda.event()
    ctx.reset()
    calls = [count_calls(n) for n in ("stream_synchronize", "stream_query", "event_record",
                                      "event_synchronize", "event_query", "stream_wait_event",
                                      "launch_host_func", "event_elapsed_time")]
    with pytest.raises(cuda.CudaAPIError, match="was destroyed when its context was reset"):
        use(s, e)
    assert not any(calls), "the stale handle reached the driver"


def test_new_streams_and_default_streams_work_after_reset(ctx):
    ctx.reset()
    s = cuda.stream()
    d = cuda.to_device(np.arange(3.0), stream=s)
    s.synchronize()
    cuda.default_stream().synchronize()
    assert (d.copy_to_host(stream=cuda.default_stream()) == np.arange(3.0)).all()


@cuda.jit
def _inc(x):
    i = cuda.grid(1)
    if i < x.size:
        x[i] += 1


def test_cached_launch_configuration_with_a_stream_from_before_reset_is_refused(ctx):
    s = cuda.stream()
    x = cuda.to_device(np.zeros(4))
    _inc[1, 4, s](x)                # caches the configuration (and the stream's handle)
    s.synchronize()
    ctx.reset()
    y = cuda.to_device(np.zeros(4))
    with pytest.raises(cuda.CudaAPIError, match="was destroyed when its context was reset"):
        _inc[1, 4, s](y)
    assert (y.copy_to_host() == 0).all()
