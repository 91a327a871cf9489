"""Cases from public numba bug reports (numbered as in the task brief) for the arrays layer."""
import gc
import os
import resource

import numpy as np
import pytest

import cujit
from cujit.arrays import _runtime as _rt
from cujit.arrays import hostmem


def _jit():
    """``cujit.jit`` (a missing compiler fails the test, it never skips)."""
    return cujit.jit


def test_case13_copy_into_strided_host_view():
    a = np.arange(12).reshape(3, 4)
    d = cujit.to_device(a)
    d[1:, 2:].copy_to_host(a[:2, :2])
    assert a.tolist() == [[6, 7, 2, 3], [10, 11, 6, 7], [8, 9, 10, 11]]


def test_case13_copy_into_strided_device_view():
    d = cujit.to_device(np.zeros((3, 4), np.int64))
    src = cujit.to_device(np.arange(12).reshape(3, 4))
    d[:2, :2].copy_to_device(src[1:, 2:])
    assert d.copy_to_host().tolist() == [[6, 7, 0, 0], [10, 11, 0, 0], [0, 0, 0, 0]]
    d[::2, 1::2].copy_to_device(np.array([[1, 2], [3, 4]]))
    assert d.copy_to_host().tolist() == [[6, 1, 0, 2], [10, 11, 0, 0], [0, 3, 0, 4]]


def test_case14_integer_index_view_matches_host():
    h = np.arange(27).reshape(3, 3, 3)
    d = cujit.to_device(h)
    assert d[2].shape == h[2].shape and d[2].strides == h[2].strides
    assert d[2].copy_to_host().tolist() == [[18, 19, 20], [21, 22, 23], [24, 25, 26]]


def test_case15_broadcast_host_array():
    d = cujit.to_device(np.broadcast_to(np.arange(4), (2, 4)))
    assert d.copy_to_host().tolist() == [[0, 1, 2, 3], [0, 1, 2, 3]]


def test_case16_as_cuda_array_of_views():
    d = cujit.to_device(np.arange(100))
    assert np.array_equal(cujit.as_cuda_array(d).copy_to_host(), np.arange(100))
    assert np.array_equal(cujit.as_cuda_array(d[::2]).copy_to_host(), np.arange(100)[::2])


def test_case17_setitem_broadcasts():
    a = cujit.device_array(10)
    a[...] = 1
    assert a.copy_to_host().tolist() == [1.0] * 10
    b = cujit.to_device(np.arange(12.0).reshape(3, 4))
    h = np.arange(12.0).reshape(3, 4)
    for key, val in (((slice(None),), 0), ((Ellipsis, 1), 7), ((slice(None), 2), 500)):
        b[key] = val
        h[key] = val
    assert np.array_equal(b.copy_to_host(), h)


def test_case17_setitem_does_not_launch_kernels(monkeypatch):
    drv = _rt.driver()
    d = cujit.device_array(4, np.int32)
    calls = []

    def forbidden(*a, **k):
        raise AssertionError("a kernel was launched for an element assignment")

    for name in ("launch_kernel", "run_on_stream"):
        if hasattr(drv, name):
            monkeypatch.setattr(drv, name, forbidden)
    for name in ("memcpy_htod", "memcpy", "memcpy_2d"):
        real = getattr(drv, name)
        monkeypatch.setattr(drv, name, lambda *a, _r=real, _n=name, **k:
                            calls.append(_n) or _r(*a, **k))
    d[2] = 9
    assert calls == ["memcpy_htod"]     # one small copy
    d[:] = 3
    d[1:3] = np.array([5, 6])
    assert d.copy_to_host().tolist() == [3, 5, 6, 3]


def test_case18_zero_d_arrays():
    a = cujit.device_array(())
    assert a.shape == () and a.size == 1
    b = cujit.device_array_like(np.ndarray(()))
    assert b.shape == ()
    c = cujit.to_device(np.array(3.5))
    assert c.shape == ()
    assert c.copy_to_host()[()] == 3.5
    assert c[()] == 3.5
    c[()] = 1.25
    assert c.copy_to_host()[()] == 1.25


def test_case18_kernel_writes_zero_d():
    jit = _jit()

    @jit
    def k(x):
        x[()] = 1.0

    c = cujit.to_device(np.array(3.5))
    k[1, 1](c)
    assert c.copy_to_host()[()] == 1.0


def test_case19_device_array_like_is_packed():
    v = cujit.device_array((10, 12))[::2, ::2]
    d = cujit.device_array_like(v)
    assert d.shape == (5, 6) and d.strides == (48, 8)
    f = cujit.device_array_like(np.asfortranarray(np.zeros((3, 4))))
    assert f.strides == (8, 24) and f.is_f_contiguous()
    p = cujit.device_array_like(np.zeros((2, 3, 4)).transpose(1, 2, 0))
    assert p.shape == (3, 4, 2)
    assert p.strides == (32, 8, 96)


def test_case20_array_protocol_dtype():
    d = cujit.to_device(np.arange(10, dtype=np.int16))
    h = np.asarray(d)
    assert h.dtype == np.int16 and h.tolist() == list(range(10))
    f = np.asarray(d, dtype=np.float32)
    assert f.dtype == np.float32 and f.tolist() == list(range(10))


def test_case21_int32_shapes_and_bounds_high_addresses():
    n = np.int32(64)
    d = cujit.device_array((n, np.int32(4)), dtype=np.int64)
    assert d._data_ptr > 2**31 and type(d._data_ptr) is int
    h = np.arange(256).reshape(64, 4)
    d.copy_to_device(h)
    lo, hi, st = np.int32(3), np.int32(60), np.int32(7)
    v = d[lo:hi:st, np.int32(1):]
    assert type(v._data_ptr) is int
    assert np.array_equal(v.copy_to_host(), h[3:60:7, 1:])
    assert d[np.int32(63), np.int32(3)] == 255
    d[np.int32(5), np.int32(2)] = -1
    assert d.copy_to_host()[5, 2] == -1


def test_case22_after_context_reset():
    ctx = cujit.current_context()
    d = cujit.device_array(4)
    ctx.reset()
    hostmem.clear_pinned_cache()
    d2 = cujit.device_array(4)
    d2[0] = 1
    assert d2[0] == 1
    del d


def test_case23_length_one_axis_with_odd_stride_is_contiguous():
    base = np.arange(100.0)
    h = np.lib.stride_tricks.as_strided(base, (1, 10), (800, 8))
    assert h.flags.c_contiguous
    d = cujit.to_device(h)
    assert d.is_c_contiguous()
    assert np.array_equal(d.copy_to_host(), h)


def test_case23_kernel_sums_it():
    jit = _jit()

    @jit
    def total(x, out):
        s = 0.0
        for j in range(x.shape[1]):
            s += x[0, j]
        out[0] = s

    h = np.lib.stride_tricks.as_strided(np.arange(100.0), (1, 10), (800, 8))
    out = cujit.device_array(1)
    total[1, 1](cujit.to_device(h), out)
    assert out.copy_to_host()[0] == 45.0


def test_case24_pin_and_map_twice():
    arr = np.arange(1000, dtype=np.float32)
    with cujit.pinned(arr):
        pass
    with cujit.pinned(arr):
        pass
    with cujit.mapped(arr) as v1:
        assert np.array_equal(v1.copy_to_host(), arr)
    with cujit.mapped(arr) as v2:
        assert np.array_equal(v2.copy_to_host(), arr)
    assert v1 is not None   # the first view's name is still bound


def _rss_kib():
    with open(f"/proc/{os.getpid()}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # pragma: no cover


def test_case25_pinned_arrays_do_not_leak():
    ctx = cujit.current_context()

    def round_():
        a = cujit.pinned_array(50_000_000, dtype=np.uint8)
        a[::4096] = 1
        del a
        gc.collect()
        ctx.memory_manager.deallocations.clear()

    round_()
    round_()
    before = _rss_kib()
    for _ in range(10):
        round_()
    assert _rss_kib() - before < 150_000   # a leak would be ~500 MB (10 x 50 MB)


def test_case26_mapped_bytes_visible_on_host():
    m = cujit.mapped_array(2, np.int32)
    m[:] = 0
    b = m.view("u1")
    b[1] = 1
    b[5] = 1
    assert m.tolist() == [256, 256]
    assert b._data_ptr == m._data_ptr


def test_case27_kernel_on_mapped_slice():
    jit = _jit()

    @jit
    def k(x):
        x[0] = 1

    m = cujit.mapped_array(2, np.int64)
    m[:] = 0
    s = m[:1]
    assert s._data_ptr == m._data_ptr
    k[1, 1](s)
    cujit.synchronize()
    assert m.tolist() == [1, 0]


def test_case28_managed_attach_host_kernel_increment():
    jit = _jit()

    @jit
    def inc(x):
        i = cujit.grid(1)
        if i < x.size:
            x[i] += 1

    m = cujit.managed_array(1024, np.uint8, attach_global=False)
    m[:] = np.arange(1024) % 200
    inc[8, 128](m)
    cujit.synchronize()
    assert np.array_equal(m, (np.arange(1024) % 200 + 1).astype(np.uint8))


class _ForeignStream:
    def __init__(self, handle):
        self.handle = handle

    def __cuda_stream__(self):
        return (0, self.handle)


def test_case32_cuda_stream_protocol_objects():
    s = cujit.stream()
    fs = _ForeignStream(s.handle)
    h = np.arange(16.0)
    d = cujit.to_device(h, stream=fs)
    out = d.copy_to_host(stream=fs)
    s.synchronize()
    assert np.array_equal(out, h)


def test_case33_cai_export():
    cai = cujit.device_array((3, 4)).__cuda_array_interface__
    assert cai["strides"] is None and cai["version"] == 3
    assert cai["typestr"] == "<f8" and cai["data"][1] is False
    assert cai["shape"] == (3, 4) and cai["stream"] is None
    z = cujit.device_array(0).__cuda_array_interface__
    assert z["data"][0] == 0 and type(z["data"][0]) is int
    v = cujit.device_array((4, 6))[:, ::2].__cuda_array_interface__
    assert v["strides"] == (48, 16)
    f = cujit.device_array((3, 4), order="F").__cuda_array_interface__
    assert f["strides"] == (8, 24)


def test_case34_zero_size_foreign_array():
    class Foreign:
        __cuda_array_interface__ = {"shape": (0,), "typestr": "<f4", "data": (0, False),
                                    "version": 3, "strides": None, "stream": None}

    d = cujit.as_cuda_array(Foreign())
    assert d.size == 0 and d._data_ptr == 0
    out = d.copy_to_host()
    assert out.shape == (0,) and out.dtype == np.float32


def test_case34_kernel_with_zero_size_foreign_array():
    jit = _jit()

    class Foreign:
        __cuda_array_interface__ = {"shape": (0,), "typestr": "<f4", "data": (0, False),
                                    "version": 3, "strides": None, "stream": None}

    @jit
    def k(x, seen):
        i = cujit.grid(1)
        seen[i] = x.size + 1
        if i < x.size:
            x[i] = 1.0

    seen = np.zeros(32, np.int64)
    k[1, 32](Foreign(), seen)
    cujit.synchronize()
    assert seen.tolist() == [1] * 32          # every thread ran and saw size 0


def test_case35_cai_stream_consumption(monkeypatch):
    drv = _rt.driver()
    synced = []
    real = drv.stream_synchronize
    monkeypatch.setattr(drv, "stream_synchronize", lambda h: synced.append(h) or real(h))
    d = cujit.device_array(8)
    base = dict(d.__cuda_array_interface__)

    def consume(stream, **kw):
        desc = dict(base, stream=stream)
        return cujit.from_cuda_array_interface(desc, owner=d, **kw)

    synced.clear()
    a = consume(None)
    assert synced == [] and a.stream == 0
    a = consume(1)
    assert synced == [1]
    synced.clear()
    a = consume(2)
    assert synced == [2]
    s = cujit.stream()
    synced.clear()
    a = consume(s.handle)
    assert synced == [s.handle] and int(a.stream) == s.handle
    synced.clear()
    consume(s.handle, sync=False)
    assert synced == []
    monkeypatch.setenv("NUMBA_CUDA_ARRAY_INTERFACE_SYNC", "0")
    consume(s.handle)
    assert synced == []
    monkeypatch.delenv("NUMBA_CUDA_ARRAY_INTERFACE_SYNC")
    with pytest.raises(ValueError, match="forbids"):
        consume(0)
    # producing: bound → its handle; unbound → None; default stream → 1 (never 0)
    assert d.bind(s).__cuda_array_interface__["stream"] == s.handle
    assert d.__cuda_array_interface__["stream"] is None
    assert d.bind(cujit.default_stream()).__cuda_array_interface__["stream"] in (1, 2)


def test_case10_dtype_spellings():
    for dt in ("float32", np.float32, np.dtype("f4"), cujit.float32):
        d = cujit.device_array(100, dt)
        assert d.dtype == np.float32
    with pytest.raises(TypeError, match="not a data type"):
        cujit.device_array(100, "nonsense")
    with pytest.raises(TypeError):
        cujit.device_array(100, object())
