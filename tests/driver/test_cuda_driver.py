"""The real backend over cuda-bindings, on a GPU: the same contract as the fake driver."""
import threading

import numpy as np
import pytest

from cujit.driver.errors import CudaAPIError

pytestmark = pytest.mark.gpu


@pytest.fixture(scope="module")
def drv():
    from cujit.driver.cuda import CudaDriver
    d = CudaDriver()
    ctx = d.primary_ctx_retain(0)
    d.ctx_set_current(ctx)
    return d


def test_device_queries(drv):
    assert drv.get_device_count() >= 1
    assert drv.driver_version() >= 12000
    assert isinstance(drv.device_name(0), str) and drv.device_name(0)
    assert drv.device_attribute(0, "MAX_THREADS_PER_BLOCK") == 1024
    assert drv.device_attribute(0, "WARP_SIZE") == 32
    assert drv.device_uuid(0).startswith("GPU-")
    free, total = drv.mem_get_info()
    assert 0 < free <= total == drv.device_total_memory(0)


def test_alloc_copy_roundtrip(drv):
    a = np.arange(1000, dtype=np.int32)
    p = drv.mem_alloc(a.nbytes)
    drv.memcpy_htod(p, a.ctypes.data, a.nbytes)
    q = drv.mem_alloc(a.nbytes)
    drv.memcpy_dtod(q, p, a.nbytes)
    drv.memset_d8(q, 0, 8)
    b = np.empty_like(a)
    drv.memcpy_dtoh(b.ctypes.data, q, a.nbytes)
    assert b[:2].tolist() == [0, 0] and (b[2:] == a[2:]).all()
    assert drv.mem_get_address_range(p + 40) == (p, a.nbytes)
    drv.mem_free(p)
    drv.mem_free(q)


def test_errors_name_call_and_code(drv):
    with pytest.raises(CudaAPIError) as ei:
        drv.mem_alloc(1 << 50)
    assert ei.value.code == 2 and ei.value.name == "CUDA_ERROR_OUT_OF_MEMORY"
    assert "cuMemAlloc" in str(ei.value)


def test_memcpy_2d_pageable_and_device(drv):
    src = np.arange(24, dtype=np.uint8).reshape(4, 6)
    p = drv.mem_alloc(12)
    drv.memcpy_2d(p, 3, src.ctypes.data + 2, 6, 3, 4)
    out = np.zeros((4, 3), np.uint8)
    drv.memcpy(out.ctypes.data, p, 12)
    np.testing.assert_array_equal(out, src[:, 2:5])
    drv.mem_free(p)


def test_stream_host_func_and_events(drv):
    s = drv.stream_create()
    done = threading.Event()
    drv.launch_host_func(s, done.set)
    drv.stream_synchronize(s)
    assert done.wait(5)
    e1, e2 = drv.event_create(), drv.event_create()
    drv.event_record(e1, s)
    h = drv.mem_host_alloc(1 << 24)
    p = drv.mem_alloc(1 << 24)
    drv.memcpy_htod(p, h, 1 << 24, s)
    drv.event_record(e2, s)
    drv.event_synchronize(e2)
    assert drv.event_query(e2) and drv.stream_query(s)
    assert drv.event_elapsed_time(e1, e2) > 0
    drv.mem_free(p)
    drv.mem_free_host(h)
    drv.event_destroy(e1)
    drv.event_destroy(e2)
    drv.stream_destroy(s)


def test_mapped_and_registered(drv):
    h = drv.mem_host_alloc(4096, mapped=True)
    d = drv.mem_host_get_device_pointer(h)
    drv.memset_d8(d, 7, 4096)
    drv.ctx_synchronize()
    view = np.ctypeslib.as_array((np.ctypeslib.ctypes.c_uint8 * 4096).from_address(h))
    assert (view == 7).all()
    drv.mem_free_host(h)
    a = np.zeros(1 << 16, np.uint8)
    drv.mem_host_register(a.ctypes.data, a.nbytes, mapped=True)
    d = drv.mem_host_get_device_pointer(a.ctypes.data)
    drv.memset_d8(d, 3, 16)
    drv.ctx_synchronize()
    assert a[:16].tolist() == [3] * 16 and a[16] == 0
    drv.mem_host_unregister(a.ctypes.data)


def test_managed_and_pool(drv):
    m = drv.mem_alloc_managed(4096)
    drv.memset_d8(m, 9, 4096)
    drv.ctx_synchronize()
    view = np.ctypeslib.as_array((np.ctypeslib.ctypes.c_uint8 * 4096).from_address(m))
    assert (view == 9).all()
    drv.mem_free(m)
    pool = drv.device_mempool(0)
    drv.mempool_set_release_threshold(pool, 1 << 30)
    s = drv.stream_create()
    p = drv.mem_alloc_from_pool_async(1 << 20, pool, s)
    assert p != 0
    drv.memset_d8(p, 1, 1 << 20, s)
    back = np.zeros(1 << 20, np.uint8)
    drv.memcpy_dtoh(back.ctypes.data, p, back.nbytes, s)
    drv.stream_synchronize(s)
    assert (back == 1).all()                  # the pool block is real, writable memory
    drv.mem_free_async(p, s)
    drv.stream_synchronize(s)
    # with the release threshold raised, the freed block stays reserved and is handed out again
    q = drv.mem_alloc_from_pool_async(1 << 20, pool, s)
    drv.stream_synchronize(s)
    assert q == p
    drv.mem_free_async(q, s)
    drv.stream_synchronize(s)
    drv.stream_destroy(s)
