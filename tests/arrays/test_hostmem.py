"""Pinned, mapped and managed host memory (R-HOST-1..4) and the pinned-buffer cache."""
import gc

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st, HealthCheck

import cujit
from cujit.arrays import _runtime as _rt
from cujit.arrays import hostmem, staging, auto_device
from cujit.arrays.transfer import host_ptr


def _drv():
    return _rt.driver()


@pytest.mark.parametrize("order", ["C", "F"])
def test_pinned_array_geometry(order):
    a = cujit.pinned_array((3, 5), dtype=np.int16, order=order)
    assert type(a) is np.ndarray and a.shape == (3, 5) and a.dtype == np.int16
    assert a.flags.c_contiguous if order == "C" else a.flags.f_contiguous
    assert hostmem.is_pinned(host_ptr(a), a.nbytes)
    s = cujit.pinned_array((2, 3), np.float32, strides=(24, 8))
    assert s.strides == (24, 8)
    assert cujit.pinned_array(0).shape == (0,)
    like = cujit.pinned_array_like(np.zeros((4, 6), order="F")[:, ::2])
    assert like.shape == (4, 3) and like.flags.f_contiguous


def test_pinned_cache_reuses_buffers(monkeypatch):
    ctx = cujit.current_context()
    gc.collect()
    hostmem.clear_pinned_cache()
    calls = []
    real = type(ctx).mempin     # pinned buffers are Python-owned mmaps, registered
    monkeypatch.setattr(type(ctx), "mempin",
                        lambda self, o, p, n, **kw: calls.append(n) or real(self, o, p, n, **kw))
    a = cujit.pinned_array(512)
    p = host_ptr(a)
    view = a[10:]
    del a
    gc.collect()
    b = cujit.pinned_array(512)
    # the view still uses the first buffer, so it is not handed out again
    pb = host_ptr(b)
    assert pb != p
    view[:] = 7.0
    del b, view
    gc.collect()
    c = cujit.pinned_array(400)         # same size class
    d = cujit.pinned_array(512)
    assert {host_ptr(c), host_ptr(d)} == {p, pb}
    assert calls == [4096, 4096]


def test_pinned_context_manager_unpins_even_on_error():
    a = np.arange(10000, dtype=np.float64)
    with pytest.raises(RuntimeError, match="boom"):
        with cujit.pinned(a):
            assert hostmem.is_pinned(host_ptr(a), a.nbytes)
            raise RuntimeError("boom")
    assert not hostmem.is_pinned(host_ptr(a), a.nbytes)
    with cujit.pinned(a, np.zeros(3)):
        d = cujit.to_device(a)
    assert np.array_equal(d.copy_to_host(), a)


def test_mapped_array_is_device_usable_and_shares_memory():
    m = cujit.mapped_array((4, 3), np.int32)
    assert isinstance(m, cujit.MappedNDArray) and isinstance(m, np.ndarray)
    m[:] = np.arange(12).reshape(4, 3)
    d = cujit.as_cuda_array(m)      # through its __cuda_array_interface__
    assert d._data_ptr == m._data_ptr
    assert np.array_equal(d.copy_to_host(), m)
    # a device-side write is seen on the host at once
    src = np.array([100, 101, 102], np.int32)
    _drv().memcpy_htod(m[2]._data_ptr, host_ptr(src), src.nbytes)
    assert m[2].tolist() == [100, 101, 102]
    sl = m[1:, 1]
    assert sl._data_ptr == m._data_ptr + 3 * 4 + 4 and sl.gpu_data is m.gpu_data
    assert auto_device(sl) == (sl, False)
    # results of ufuncs are new host memory, not device-usable
    r = m + 1
    assert getattr(r, "_data_ptr", None) is None and not hasattr(r, "__cuda_array_interface__")
    dev, copied = auto_device(r)
    assert copied and np.array_equal(dev.copy_to_host(), np.asarray(r))


@pytest.mark.sim
def test_mapped_array_honours_portable_and_wc():
    drv = _drv()
    for portable in (False, True):
        for wc in (False, True):
            m = cujit.mapped_array(16, np.uint8, portable=portable, wc=wc)
            blk = drv._find(m.gpu_data.host_pointer)
            if portable or wc:
                assert blk.flags == {"mapped": True, "portable": portable, "wc": wc}
            else:       # plain mapped arrays are registered Python-owned memory
                assert blk.kind == "registered" and blk.flags["mapped"] is True
    like = cujit.mapped_array_like(np.zeros((2, 3), order="F"), wc=True)
    assert like.flags.f_contiguous
    assert drv._find(like.gpu_data.host_pointer).flags["wc"] is True


def test_mapped_context_manager_views():
    a = np.arange(6.0)
    b = np.arange(12, dtype=np.int32).reshape(3, 4)[:, ::2]
    with cujit.mapped(a) as va:
        assert isinstance(va, cujit.DeviceNDArray)
        va[0] = 42.0
        assert a[0] == 42.0
    with cujit.mapped(a, b) as views:
        assert isinstance(views, list) and len(views) == 2
        assert np.array_equal(views[1].copy_to_host(), b)
        assert views[1].strides == b.strides
    assert not hostmem.is_pinned(host_ptr(a), a.nbytes)


def test_managed_array():
    m = cujit.managed_array((8,), np.float32)
    assert isinstance(m, cujit.ManagedNDArray)
    assert m._data_ptr == m.gpu_data.host_pointer == host_ptr(m)
    m[:] = 3
    assert np.array_equal(cujit.as_cuda_array(m).copy_to_host(), np.full(8, 3, np.float32))
    assert m[2:]._data_ptr == m._data_ptr + 8
    z = cujit.managed_array(0)
    assert z.size == 0 and z._data_ptr == 0


@pytest.mark.sim
def test_managed_attach_flag_reaches_the_driver():
    drv = _drv()
    for flag in (True, False):
        m = cujit.managed_array(4, np.uint8, attach_global=flag)
        assert drv._find(m._data_ptr).flags["attach_global"] is flag


def test_large_pageable_copy_is_pipelined_and_exact(monkeypatch):
    monkeypatch.setattr(staging, "LARGE", 1 << 16)
    monkeypatch.setattr(staging, "CHUNK", 3000)
    drv = _drv()
    seen = []
    real = drv.memcpy_htod
    monkeypatch.setattr(drv, "memcpy_htod", lambda d, s, n, st=0: seen.append((n, st)) or
                        real(d, s, n, st))
    h = np.random.default_rng(1).integers(0, 1 << 30, 20000, dtype=np.int64)
    d = cujit.to_device(h)
    assert np.array_equal(d.copy_to_host(), h)
    assert len(seen) == -(-h.nbytes // 3000) and all(st == 1 for _, st in seen)
    seen.clear()
    s = cujit.stream()
    d2 = cujit.to_device(h, stream=s)
    s.synchronize()
    assert np.array_equal(d2.copy_to_host(), h)
    assert all(st == s.handle for _, st in seen)
    # device -> pageable host is pipelined the same way
    got = []
    real_d = drv.memcpy_dtoh
    monkeypatch.setattr(drv, "memcpy_dtoh", lambda d_, s_, n, st=0: got.append(n) or
                        real_d(d_, s_, n, st))
    out = np.empty_like(h)
    d2.copy_to_host(out)
    assert np.array_equal(out, h) and len(got) == -(-h.nbytes // 3000)
    assert np.array_equal(d2.copy_to_host(), h)
    # pinned sources skip the staging
    seen.clear()
    p = cujit.pinned_array(h.shape, h.dtype)
    p[:] = h
    d3 = cujit.to_device(p)
    assert len(seen) == 1 and np.array_equal(d3.copy_to_host(), h)


def test_clear_pinned_cache_releases_buffers():
    a = cujit.pinned_array(100)
    del a
    gc.collect()
    assert hostmem.clear_pinned_cache() >= 4096
    assert hostmem.clear_pinned_cache() == 0


def test_pinned_cache_skips_buffers_of_a_reset_context(monkeypatch):
    ctx = cujit.current_context()
    a = cujit.pinned_array(256)
    del a
    gc.collect()
    ctx.reset()
    calls = []
    real = type(ctx).mempin     # pinned buffers are Python-owned mmaps, registered
    monkeypatch.setattr(type(ctx), "mempin",
                        lambda self, o, p, n, **kw: calls.append(n) or real(self, o, p, n, **kw))
    b = cujit.pinned_array(256)
    b[:] = 5.0
    assert calls == [4096]           # a fresh block, not the dead cached one
    assert (cujit.to_device(b).copy_to_host() == 5.0).all()


@pytest.mark.parametrize("attr, make", [
    ("MANAGED_MEMORY", lambda: cujit.managed_array(4)),
    ("CAN_MAP_HOST_MEMORY", lambda: cujit.mapped_array(4)),
])
def test_missing_capability_is_a_clear_error(monkeypatch, attr, make):
    dev = cujit.current_context().device
    monkeypatch.setattr(dev, attr, 0)
    with pytest.raises(cujit.CudaAPIError, match=f"CUDA_ERROR_NOT_SUPPORTED.*{attr}"):
        make()


def test_staging_driver_error_propagates_and_releases_events(monkeypatch):
    monkeypatch.setattr(staging, "LARGE", 1 << 12)
    monkeypatch.setattr(staging, "CHUNK", 1024)
    drv = _drv()
    real_copy, real_create, real_destroy = drv.memcpy_htod, drv.event_create, drv.event_destroy
    n = [0]
    live = set()

    def failing(d, s, nbytes, st=0):
        n[0] += 1
        if n[0] == 3:
            raise cujit.CudaAPIError(1, "injected", "cuMemcpyHtoDAsync")
        return real_copy(d, s, nbytes, st)

    def create(**kw):
        e = real_create(**kw)
        live.add(e)
        return e

    def destroy(e):
        live.discard(e)
        return real_destroy(e)

    monkeypatch.setattr(drv, "memcpy_htod", failing)
    monkeypatch.setattr(drv, "event_create", create)
    monkeypatch.setattr(drv, "event_destroy", destroy)
    with pytest.raises(cujit.CudaAPIError, match="injected"):
        cujit.to_device(np.arange(2048, dtype=np.int32))
    # copy workers that started before the failure may finish their chunks (8 chunks)
    assert 3 <= n[0] <= 8 and not live


def _page_aligned(npages):
    """A float64 array over ``npages`` whole pages starting at a page boundary (carved from
    a larger NumPy buffer), so the test does not depend on where NumPy places memory."""
    raw = np.zeros((npages + 1) * 4096, np.uint8)
    off = -host_ptr(raw) % 4096
    return raw[off:off + npages * 4096].view(np.float64)


@pytest.mark.parametrize("start", [0, 4096 - 240, 4096 - 100, 4096 - 8])
def test_arrays_sharing_a_page_are_registered_once(monkeypatch, start):
    # ``start`` (bytes from a page boundary) places the 64-element buffer inside one page,
    # across a boundary past the pinned views (its tail lies in a page no view touches), or
    # with the views themselves straddling the boundary.
    ctx = cujit.current_context()
    calls = []
    real = type(ctx).mempin
    monkeypatch.setattr(type(ctx), "mempin", lambda self, owner, p, n, mapped=False:
                        calls.append((p, n)) or real(self, owner, p, n, mapped=mapped))
    pages = _page_aligned(4)
    buf = pages[start // 8:start // 8 + 64]
    buf[:] = np.arange(64)
    a, b = buf[:10], buf[20:30][::-1]
    far = np.arange(100000, dtype=np.float64)
    with cujit.pinned(a, b, far):
        assert hostmem.is_pinned(host_ptr(a), a.nbytes)
        assert hostmem.is_pinned(host_ptr(buf[20:30]), b.nbytes)
        # bytes [0, 240) of buf are covered; the rest only when it shares their last page
        tail_covered = (start + 240 - 1) // 4096 == (start + buf.nbytes - 1) // 4096
        assert hostmem.is_pinned(host_ptr(buf), buf.nbytes) == tail_covered
        assert hostmem.is_pinned(host_ptr(buf), 240)
    assert sum(p <= host_ptr(buf) < p + n for p, n in calls) == 1 and len(calls) <= 2
    assert all(p % 4096 == 0 and n % 4096 == 0 for p, n in calls)
    assert not hostmem.is_pinned(host_ptr(buf), 240)
    with cujit.mapped(a, b, np.zeros(0)) as (va, vb, vz):
        assert np.array_equal(va.copy_to_host(), a)
        assert np.array_equal(vb.copy_to_host(), b)
        vb[0] = -1.0
        assert b[0] == -1.0 and buf[29] == -1.0
        assert vz.size == 0 and vz._data_ptr == 0


def test_arrays_on_adjacent_pages_register_one_merged_range(monkeypatch):
    ctx = cujit.current_context()
    calls = []
    real = type(ctx).mempin
    monkeypatch.setattr(type(ctx), "mempin", lambda self, owner, p, n, mapped=False:
                        calls.append((p, n)) or real(self, owner, p, n, mapped=mapped))
    pages = _page_aligned(4)
    # a ends at a page boundary, b starts there; c is alone on page 3 (page 2 untouched)
    a, b, c = pages[500:512], pages[512:520], pages[1536 + 3:1536 + 5]
    with cujit.pinned(a, b, c):
        assert hostmem.is_pinned(host_ptr(pages), 2 * 4096)
        assert not hostmem.is_pinned(host_ptr(pages), 2 * 4096 + 8)
        assert hostmem.is_pinned(host_ptr(pages) + 3 * 4096, 4096)
    assert calls == [(host_ptr(pages), 2 * 4096), (host_ptr(pages) + 3 * 4096, 4096)]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_views_of_mapped_and_managed_arrays_stay_device_usable(data):
    from arrays_strategies import basic_keys, fill
    kind = data.draw(st.sampled_from(["mapped", "managed"]))
    shape = tuple(data.draw(st.lists(st.integers(1, 5), min_size=1, max_size=3)))
    make = cujit.mapped_array if kind == "mapped" else cujit.managed_array
    m = make(shape, np.int32)
    m[...] = fill(shape, np.dtype(np.int32))
    v = m[data.draw(basic_keys(shape))]
    if not isinstance(v, np.ndarray):
        return
    if v.size == 0:
        assert v._data_ptr == 0     # size 0: NULL, as device arrays
    else:
        assert v._data_ptr == m._data_ptr + (host_ptr_any(v) - host_ptr_any(m))
    assert v.gpu_data is m.gpu_data
    assert np.array_equal(cujit.as_cuda_array(v).copy_to_host(), v)


def host_ptr_any(a):
    return a.__array_interface__["data"][0]


@pytest.mark.parametrize("finish", ["reset", "close"])
def test_pinned_and_mapped_arrays_keep_their_bytes_after_a_reset(finish):
    p = cujit.pinned_array(300, np.int64)
    p[:] = np.arange(300)
    m = cujit.mapped_array((4, 5), np.float32)
    m[:] = 2.5
    big = cujit.pinned_array(hostmem.CACHE_MAX_BUFFER // 8 + 1, np.float64)
    big[-3:] = 1.5
    if finish == "reset":
        cujit.current_context().reset()
    else:
        cujit.close()
    gc.collect()
    junk = [np.full(8192 + k, 0xAB, np.uint8) for k in range(0, 4096, 512)]
    assert (p == np.arange(300)).all() and (m == 2.5).all() and (big[-3:] == 1.5).all()
    p[0] = 9                          # still writable host memory
    assert p[0] == 9 and len(junk) == 8
    # and usable as ordinary host data by a fresh context
    assert (cujit.to_device(p).copy_to_host()[1:] == np.arange(1, 300)).all()
    from cujit.memory.pointers import DeadMemoryError
    with pytest.raises(DeadMemoryError, match="context was reset or closed") as exc:
        m.__cuda_array_interface__
    assert exc.type is DeadMemoryError


@pytest.mark.parametrize("threads", [1, 3])
def test_large_pageable_copy_with_several_workers(monkeypatch, threads):
    monkeypatch.setattr(staging, "LARGE", 1 << 14)
    monkeypatch.setattr(staging, "CHUNK", 4096)
    monkeypatch.setattr(staging, "THREADS", threads)
    monkeypatch.setattr(staging, "_pool", None)      # a pool sized for this THREADS
    drv = _drv()
    offsets = []
    real = drv.memcpy_htod
    monkeypatch.setattr(drv, "memcpy_htod", lambda d, s, n, st=0: offsets.append(n) or
                        real(d, s, n, st))
    h = np.random.default_rng(2).integers(0, 255, 100_003, dtype=np.uint8)  # not a chunk multiple
    d = cujit.to_device(h)
    assert sorted(offsets) == sorted([4096] * (len(h) // 4096) + [len(h) % 4096])
    s = cujit.stream()
    out = np.zeros_like(h)
    d.copy_to_host(out, stream=s)
    np.testing.assert_array_equal(out, h)
    out[:] = 0
    d.copy_to_host(out)                                 # synchronous form too
    np.testing.assert_array_equal(out, h)


def test_large_copy_worker_error_propagates_and_releases_buffers(monkeypatch):
    from cujit.driver.errors import CudaAPIError
    monkeypatch.setattr(staging, "LARGE", 1 << 14)
    monkeypatch.setattr(staging, "CHUNK", 4096)
    monkeypatch.setattr(staging, "THREADS", 2)
    monkeypatch.setattr(staging, "_pool", None)
    drv = _drv()
    calls = []

    def failing(d, s, n, st=0):
        calls.append(n)
        if len(calls) == 3:
            raise CudaAPIError(1, "injected", "cuMemcpyHtoDAsync")
        return None
    monkeypatch.setattr(drv, "memcpy_htod", failing)
    d = cujit.device_array(1 << 15, np.uint8)
    with pytest.raises(CudaAPIError, match="injected"):
        d.copy_to_device(np.ones(1 << 15, np.uint8))
    import gc
    gc.collect()
    assert len(hostmem._cache.get(4096, [])) >= 4     # both workers' two buffers went back


@pytest.mark.parametrize("alloc", ["pinned_array", "mapped_array"])
def test_host_alloc_out_of_memory_is_cuda_error(alloc):
    # 2**44 float64 = 2**47 bytes: more than an x86-64/aarch64 process can map, whatever the
    # overcommit policy, so the mmap fails at once (nothing is touched, nothing swaps)
    from cujit.driver.errors import CudaAPIError, CUDA_ERROR_OUT_OF_MEMORY
    with pytest.raises(CudaAPIError) as ei:
        getattr(cujit, alloc)(2**44, np.float64)
    assert ei.value.code == CUDA_ERROR_OUT_OF_MEMORY and ei.value.call == "cuMemHostAlloc"
    assert str(2**47) in str(ei.value)


def test_host_alloc_other_os_errors_propagate(monkeypatch):
    import errno

    def refuse(*a, **k):
        raise OSError(errno.EACCES, "denied")
    monkeypatch.setattr(hostmem.mmap, "mmap", refuse)
    with pytest.raises(PermissionError):
        cujit.pinned_array((37 << 20) + 12345, np.uint8)    # a size no cached buffer has


def _cached_bytes():
    return sum(k * len(lst) for k, lst in list(hostmem._cache.items()))


def test_pinned_cache_cap_counts_blocks_in_use(monkeypatch):
    # the cap covers the cache's blocks in use and free together: with room for two more
    # 4 KiB blocks, three arrays dropped leave two cached and free the third
    hostmem.clear_pinned_cache()
    gc.collect()
    in_use = hostmem._cache_bytes - _cached_bytes()
    monkeypatch.setattr(hostmem, "CACHE_MAX_BYTES", in_use + 2 * 4096)
    arrays = [cujit.pinned_array(1024, np.float32) for _ in range(3)]
    assert hostmem._cache_bytes - _cached_bytes() == in_use + 3 * 4096
    del arrays
    gc.collect()
    assert _cached_bytes() == 2 * 4096
    assert hostmem._cache_bytes == in_use + 2 * 4096
    hostmem.clear_pinned_cache()
    assert hostmem._cache_bytes == in_use


def test_pinned_cache_accounting_holds_under_threads():
    # takes and give-backs run without a lock: after threads allocate and drop concurrently,
    # the count still equals the blocks in use before plus the blocks now cached
    import threading
    cujit.pinned_array(1024, np.float32)     # the context exists before the threads start
    gc.collect()
    in_use = hostmem._cache_bytes - _cached_bytes()
    errors = []

    def work():
        try:
            for i in range(400):
                a = cujit.pinned_array(256 + (i % 3) * 2048, np.float32)
                a[:] = i
                b = cujit.pinned_array(64, np.uint8)
                assert (a == i).all() and b.size == 64
                del a, b
        except Exception as e:      # noqa: BLE001 - reported below
            errors.append(e)
    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    gc.collect()
    assert errors == []
    assert hostmem._cache_bytes - _cached_bytes() == in_use


def test_auto_device_of_a_strided_host_array_copies_it_compactly():
    # numba-cuda raises ValueError (its copy is one memcpy); cujit copies the elements
    # (docs/requirements.md §10)
    x = np.arange(10, dtype=np.float64)
    dev, copied = auto_device(x[:-1:2])
    assert copied and dev.shape == (5,) and dev.strides == (8,)
    np.testing.assert_array_equal(dev.copy_to_host(), [0.0, 2.0, 4.0, 6.0, 8.0])
    np.testing.assert_array_equal(x, np.arange(10.0))
