"""Copies between device arrays on two devices (peer access) and one thread per GPU
(docs/scaling.md, issue 17 "Two GPUs").

The simulator tests make the simulated driver report two devices (``CUJIT_SIM_DEVICES`` /
``cujit.config.SIM_DEVICES``); the ``gpu`` tests need two real GPUs (the nvidia-h200-x2
machine) and skip with the reason otherwise."""
import threading

import numpy as np
import pytest

import cujit
from cujit.driver import get_driver
from cujit.driver.errors import CudaAPIError


def _on(dev, fn):
    with cujit.gpus[dev]:
        return fn()


class _Spy:
    """Counts the calls of a driver method (and passes them on)."""

    def __init__(self, monkeypatch, name):
        drv = get_driver()
        self.calls = []
        real = getattr(drv, name)

        def spy(*args):
            self.calls.append(args)
            return real(*args)
        monkeypatch.setattr(drv, name, spy)


# -- simulator: two devices ----------------------------------------------------------------
@pytest.mark.sim
def test_sim_reports_the_configured_devices(two_sim_devices):
    drv = get_driver()
    assert len(cujit.gpus) == 2
    assert cujit.gpus[0].uuid != cujit.gpus[1].uuid
    assert drv.device_can_access_peer(0, 1) is True
    assert drv.device_can_access_peer(1, 1) is False
    c0, c1 = two_sim_devices
    assert c0.handle != c1.handle
    with pytest.raises(CudaAPIError) as exc:
        drv.device_can_access_peer(0, 2)
    assert exc.value.code == 101          # CUDA_ERROR_INVALID_DEVICE


@pytest.mark.sim
def test_sim_device_count_setting_is_checked():
    with pytest.raises(ValueError, match="SIM_DEVICES"):
        cujit.config.SIM_DEVICES = 0
    with pytest.raises(ValueError, match="SIM_DEVICES"):
        cujit.config.SIM_DEVICES = 17


def _device_of(arr):
    return get_driver().pointer_device(arr.gpu_data.device_pointer_value)


def test_allocations_belong_to_the_current_device(two_devices):
    c0, c1 = two_devices
    a = cujit.device_array(8, np.float32)
    b = _on(1, lambda: cujit.device_array(8, np.float32))
    assert a.gpu_data.context is c0 and b.gpu_data.context is c1
    assert (_device_of(a), _device_of(b)) == (0, 1)


def test_making_another_context_current_does_not_move_this_threads_allocations(two_devices):
    c0, c1 = two_devices
    cujit.current_context()
    c1.synchronize()                       # binds device 1 in the driver for the call
    assert _device_of(cujit.device_array(4)) == 0
    s1 = _on(1, cujit.stream)
    s1.synchronize()                        # a stream of device 1, from device 0's thread
    assert _device_of(cujit.device_array(4)) == 0


def test_a_flush_of_the_other_devices_queue_does_not_move_allocations(two_devices):
    c0, c1 = two_devices
    cujit.current_context()
    cujit.config.CUDA_DEALLOCS_COUNT = 3
    try:
        with cujit.gpus[1]:
            arrs = [cujit.device_array(10) for _ in range(8)]
        flushes = c1.memory_manager.get_stats().flushes
        del arrs                            # their frees flush device 1's queue from here
        assert c1.memory_manager.get_stats().flushes > flushes
        a = cujit.device_array(10)
        assert a.gpu_data.context is c0 and _device_of(a) == 0
    finally:
        del cujit.config.CUDA_DEALLOCS_COUNT


def _driver_current_context():
    drv = get_driver()
    if drv.is_simulator:
        return drv._current_ctx()
    from cuda.bindings import driver as d
    err, ctx = d.cuCtxGetCurrent()
    assert not err
    return int(ctx)


def test_a_flush_of_the_other_devices_queue_puts_the_threads_binding_back(two_devices):
    """A finalizer flushing device 1's deferred frees while the thread works on device 0
    must leave device 0's context current in the driver: copies do not rebind (on two H200s
    a mapped copy right after such a flush failed with CUDA_ERROR_INVALID_VALUE)."""
    from cujit.runtime.devices import thread_binding
    c0, c1 = two_devices
    cujit.current_context()
    cujit.config.CUDA_DEALLOCS_COUNT = 3
    try:
        with cujit.gpus[1]:
            arrs = [cujit.device_array(10) for _ in range(8)]
        host = np.arange(100, dtype=np.float32)
        with cujit.mapped(host) as view:
            flushes = c1.memory_manager.get_stats().flushes
            del arrs                            # device 1's queue flushes here
            assert c1.memory_manager.get_stats().flushes > flushes
            assert thread_binding.bound is c0
            assert _driver_current_context() == c0.handle
            assert np.array_equal(view.copy_to_host(), host)
    finally:
        del cujit.config.CUDA_DEALLOCS_COUNT


@pytest.mark.sim
def test_sim_pointer_device_of_host_memory_is_an_error():
    with pytest.raises(CudaAPIError) as exc:
        get_driver().pointer_device(np.zeros(4).ctypes.data)
    assert exc.value.code == 1


@pytest.mark.sim
@pytest.mark.parametrize("direction", ["0->1", "1->0"])
def test_sim_peer_copy_values_and_driver_call(two_sim_devices, monkeypatch, direction):
    c0, c1 = two_sim_devices
    src_dev, dst_dev = (0, 1) if direction == "0->1" else (1, 0)
    host = np.arange(1000, dtype=np.float64) * 1.5
    src = _on(src_dev, lambda: cujit.to_device(host))
    dst = _on(dst_dev, lambda: cujit.device_array(1000, np.float64))
    spy = _Spy(monkeypatch, "memcpy_peer")
    dst.copy_to_device(src)
    assert np.array_equal(dst.copy_to_host(), host)
    assert len(spy.calls) == 1
    d, dctx, s, sctx, nbytes, stream = spy.calls[0]
    assert (d, s, nbytes, stream) == (dst.gpu_data.device_pointer_value,
                                      src.gpu_data.device_pointer_value, 8000, 0)
    assert (dctx, sctx) == (dst.gpu_data.context.handle, src.gpu_data.context.handle)


@pytest.mark.sim
def test_sim_peer_access_enabled_once_per_pair(two_sim_devices, monkeypatch):
    c0, c1 = two_sim_devices
    spy = _Spy(monkeypatch, "ctx_enable_peer_access")
    can = _Spy(monkeypatch, "device_can_access_peer")
    a = cujit.to_device(np.arange(64, dtype=np.int32))
    b = _on(1, lambda: cujit.device_array(64, np.int32))
    for _ in range(3):
        b.copy_to_device(a)
        a.copy_to_device(b)
    # one call each way: 1 enables access to 0's memory and 0 to 1's
    assert len(spy.calls) == 2
    assert sorted(spy.calls) == sorted([(c0.handle,), (c1.handle,)])
    assert len(can.calls) == 2
    assert c1.peer_access == {c0: True} and c0.peer_access == {c1: True}
    drv = get_driver()
    assert drv.peer_access_enabled(c1.handle, c0.handle)
    assert drv.peer_access_enabled(c0.handle, c1.handle)
    assert c0.enable_peer_access(c1) is True      # idempotent, no driver call
    assert len(spy.calls) == 2


@pytest.mark.sim
def test_enable_peer_access_restores_the_thread_binding(two_sim_devices):
    c0, c1 = two_sim_devices
    cujit.current_context()
    assert c1.enable_peer_access(c0) is True      # makes c1 current for the call only
    a = cujit.device_array(4, np.float32)
    assert get_driver()._find(a.gpu_data.device_pointer_value).ctx == c0.handle


@pytest.mark.sim
def test_sim_same_device_copies_do_not_use_peer_calls(two_sim_devices, monkeypatch):
    spy = _Spy(monkeypatch, "memcpy_peer")
    en = _Spy(monkeypatch, "ctx_enable_peer_access")
    a = cujit.to_device(np.arange(10, dtype=np.float32))
    b = cujit.device_array(10, np.float32)
    b.copy_to_device(a)
    b[2:4] = a[5:7]
    assert spy.calls == [] and en.calls == []
    assert b.copy_to_host().tolist() == [0, 1, 5, 6, 4, 5, 6, 7, 8, 9]


@pytest.mark.sim
def test_sim_peer_copy_strided_views_and_setitem(two_sim_devices, monkeypatch):
    host = np.arange(48, dtype=np.int64).reshape(6, 8)
    a = cujit.to_device(host)
    b = _on(1, lambda: cujit.to_device(np.zeros((6, 8), np.int64)))
    spy = _Spy(monkeypatch, "memcpy_peer")
    b[:, ::2] = a[:, 1::2]                 # strided: the 2-D unified-addressing copies
    want = np.zeros((6, 8), np.int64)
    want[:, ::2] = host[:, 1::2]
    assert np.array_equal(b.copy_to_host(), want)
    assert spy.calls == []
    b[1:3] = a[4:6]                         # contiguous rows: one peer copy
    want[1:3] = host[4:6]
    assert np.array_equal(b.copy_to_host(), want)
    assert len(spy.calls) == 1 and spy.calls[0][4] == 2 * 8 * 8
    assert b.gpu_data.context.peer_access == {a.gpu_data.context: True}


@pytest.mark.sim
def test_sim_peer_copy_on_a_stream(two_sim_devices, monkeypatch):
    host = np.linspace(0, 1, 256, dtype=np.float32)
    a = cujit.to_device(host)

    def on1():
        s = cujit.stream()
        b = cujit.device_array(256, np.float32)
        b.copy_to_device(a, stream=s)
        s.synchronize()
        return s, b
    spy = _Spy(monkeypatch, "memcpy_peer")
    s, b = _on(1, on1)
    assert spy.calls[0][5] == s.handle
    assert np.array_equal(b.copy_to_host(), host)


@pytest.mark.sim
def test_sim_peer_copy_keeps_copy_to_device_checks(two_sim_devices):
    a = cujit.to_device(np.arange(10, dtype=np.float32))
    b = _on(1, lambda: cujit.to_device(np.full(10, 7, np.float32)))
    with pytest.raises(TypeError, match="incompatible dtype"):
        b.copy_to_device(cujit.to_device(np.arange(10, dtype=np.float64)))
    with pytest.raises(ValueError):
        b.copy_to_device(a[:5])
    assert b.copy_to_host().tolist() == [7.0] * 10


@pytest.mark.sim
def test_sim_peer_copy_into_freed_array_on_the_other_device_raises(two_sim_devices):
    a = cujit.to_device(np.arange(10, dtype=np.float32))
    b = _on(1, lambda: cujit.device_array(10, np.float32))
    b.gpu_data.free()
    with pytest.raises(CudaAPIError) as exc:
        b.copy_to_device(a)
    assert exc.value.code == 1              # CUDA_ERROR_INVALID_VALUE, as other copies
    assert a.copy_to_host().tolist() == list(range(10))


@pytest.mark.sim
def test_without_peer_capability_copies_still_work(two_sim_devices, monkeypatch):
    c0, c1 = two_sim_devices
    monkeypatch.setattr(get_driver(), "device_can_access_peer", lambda d, p: False)
    en = _Spy(monkeypatch, "ctx_enable_peer_access")
    a = cujit.to_device(np.arange(16, dtype=np.int16))
    b = _on(1, lambda: cujit.device_array(16, np.int16))
    b.copy_to_device(a)
    assert b.copy_to_host().tolist() == list(range(16))
    assert en.calls == []
    assert c1.peer_access == {c0: False} and c1.enable_peer_access(c0) is False


@pytest.mark.sim
def test_enable_peer_access_errors(two_sim_devices):
    c0, c1 = two_sim_devices
    with pytest.raises(TypeError, match="expects a cujit Context"):
        c0.enable_peer_access(1)
    with pytest.raises(ValueError, match="is the context itself"):
        c0.enable_peer_access(c0)
    assert c0.peer_access == {}


@pytest.mark.sim
def test_sim_driver_peer_errors(two_sim_devices):
    c0, c1 = two_sim_devices
    drv = get_driver()
    cujit.current_context()
    with pytest.raises(CudaAPIError) as exc:
        drv.ctx_enable_peer_access(c0.handle)        # the current context itself
    assert exc.value.code == 201
    with pytest.raises(CudaAPIError) as exc:
        drv.ctx_enable_peer_access(0xdead)
    assert exc.value.code == 201
    drv.ctx_enable_peer_access(c1.handle)
    assert drv.ctx_enable_peer_access(c1.handle) is False   # already enabled: no error
    a = cujit.device_array(4, np.float32)
    b = _on(1, lambda: cujit.device_array(4, np.float32))
    pa, pb = a.gpu_data.device_pointer_value, b.gpu_data.device_pointer_value
    with pytest.raises(CudaAPIError, match="belongs to context") as exc:
        drv.memcpy_peer(pb, c0.handle, pa, c0.handle, 16)    # wrong destination context
    assert exc.value.code == 1
    with pytest.raises(CudaAPIError) as exc:
        drv.memcpy_peer(pb, 0xdead, pa, c0.handle, 16)
    assert exc.value.code == 201
    with pytest.raises(CudaAPIError) as exc:
        drv.memcpy_peer(pb, c1.handle, pa + 8, c0.handle, 16)  # past the source's end
    assert exc.value.code == 1


# -- one thread per GPU (both backends) -----------------------------------------------------
@cujit.jit
def _axpy(out, a, x, y):
    i = cujit.grid(1)
    if i < out.size:
        out[i] = a * x[i] + y[i]


def _threads_per_gpu(n, ngpus):
    """The docs/scaling.md pattern: one thread per GPU, each on its share of the data."""
    x = np.arange(n, dtype=np.float32)
    y = np.ones(n, dtype=np.float32)
    parts = np.array_split(np.arange(n), ngpus)
    out = {}
    errors = []

    def work(dev, idx):
        try:
            with cujit.gpus[dev]:
                dx, dy = cujit.to_device(x[idx]), cujit.to_device(y[idx])
                dout = cujit.device_array(len(idx), np.float32)
                _axpy[(len(idx) + 127) // 128, 128](dout, np.float32(2), dx, dy)
                out[dev] = (dout.copy_to_host(), cujit.get_current_device().id,
                            dout.gpu_data.context.device.id)
        except Exception as exc:       # reported below
            errors.append(exc)
    threads = [threading.Thread(target=work, args=(i, parts[i])) for i in range(ngpus)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    for dev in range(ngpus):
        assert out[dev][1:] == (dev, dev)
    got = np.concatenate([out[d][0] for d in range(ngpus)])
    assert np.array_equal(got, 2 * x + y)


def test_launch_after_another_device_was_bound_runs_on_this_device(two_devices):
    c0, c1 = two_devices
    cujit.current_context()
    x = cujit.to_device(np.arange(256, dtype=np.float32))
    y = cujit.to_device(np.ones(256, np.float32))
    out = cujit.device_array(256, np.float32)
    k = _axpy[2, 128]
    for _ in range(2):                      # the second launch takes the warm path
        k(out, np.float32(2), x, y)
    c1.synchronize()                        # binds device 1 in the driver
    out2 = cujit.device_array(256, np.float32)
    k(out2, np.float32(3), x, y)
    cujit.synchronize()
    assert np.array_equal(out2.copy_to_host(), 3 * np.arange(256, dtype=np.float32) + 1)
    assert _device_of(out2) == 0


@pytest.mark.sim
def test_sim_one_thread_per_device(two_sim_devices):
    _threads_per_gpu(1000, 2)


# -- two real GPUs ----------------------------------------------------------------------------
@pytest.mark.gpu
@pytest.mark.parametrize("src_dev,dst_dev", [(0, 1), (1, 0)])
def test_gpu_peer_copy_contiguous(two_gpus, src_dev, dst_dev):
    host = np.random.default_rng(src_dev).random(1 << 20)
    src = _on(src_dev, lambda: cujit.to_device(host))
    dst = _on(dst_dev, lambda: cujit.device_array(1 << 20, np.float64))
    dst.copy_to_device(src)
    assert np.array_equal(dst.copy_to_host(), host)
    dctx, sctx = two_gpus[dst_dev], two_gpus[src_dev]
    can = get_driver().device_can_access_peer(dst_dev, src_dev)
    assert dctx.peer_access[sctx] is can
    # on a stream of the destination device
    host2 = host[::-1].copy()
    _on(src_dev, lambda: src.copy_to_device(host2))

    def on_dst():
        s = cujit.stream()
        dst.copy_to_device(src, stream=s)
        s.synchronize()
    _on(dst_dev, on_dst)
    assert np.array_equal(dst.copy_to_host(), host2)


@pytest.mark.gpu
@pytest.mark.parametrize("src_dev,dst_dev", [(0, 1), (1, 0)])
def test_gpu_peer_copy_strided_views(two_gpus, src_dev, dst_dev):
    host = np.arange(512 * 256, dtype=np.int32).reshape(512, 256)
    src = _on(src_dev, lambda: cujit.to_device(host))
    dst = _on(dst_dev, lambda: cujit.to_device(np.zeros((512, 256), np.int32)))
    dst[:, ::2] = src[:, 1::2]
    dst[100:200] = src[300:400]
    want = np.zeros((512, 256), np.int32)
    want[:, ::2] = host[:, 1::2]
    want[100:200] = host[300:400]
    assert np.array_equal(dst.copy_to_host(), want)


@pytest.mark.gpu
def test_gpu_peer_access_enabled_both_ways(two_gpus):
    c0, c1 = two_gpus
    drv = get_driver()
    if not drv.device_can_access_peer(0, 1):
        pytest.skip("these two GPUs cannot access each other's memory")
    a = _on(0, lambda: cujit.to_device(np.arange(10)))
    b = _on(1, lambda: cujit.device_array(10, np.int64))
    b.copy_to_device(a)
    assert c1.peer_access[c0] is True and c0.peer_access[c1] is True
    # the driver agrees: enabling again reports "already enabled"
    with cujit.gpus[1]:
        c1.make_current()
        assert drv.ctx_enable_peer_access(c0.handle) is False
    assert b.copy_to_host().tolist() == list(range(10))


@pytest.mark.gpu
def test_gpu_one_thread_per_gpu(two_gpus):
    _threads_per_gpu(1 << 22, 2)
