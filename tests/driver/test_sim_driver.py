"""The simulator's fake driver: the contract of cujit.driver.api on host memory."""
import numpy as np
import pytest

from cujit.config import config
from cujit.driver.errors import CudaAPIError

pytestmark = pytest.mark.sim


@pytest.fixture
def drv():
    from cujit.driver.sim import SimDriver
    return SimDriver()


def test_alloc_copy_roundtrip(drv):
    a = np.arange(100, dtype=np.int32)
    p = drv.mem_alloc(a.nbytes)
    assert p >= 2**32  # fake addresses live above 4 GiB
    drv.memcpy_htod(p, a.ctypes.data, a.nbytes)
    b = np.zeros_like(a)
    drv.memcpy_dtoh(b.ctypes.data, p, a.nbytes)
    np.testing.assert_array_equal(a, b)
    q = drv.mem_alloc(a.nbytes)
    drv.memcpy_dtod(q, p + 40, 40)
    c = np.zeros(10, np.int32)
    drv.memcpy_dtoh(c.ctypes.data, q, 40)
    np.testing.assert_array_equal(c, np.arange(10, 20))
    drv.mem_free(p)
    drv.mem_free(q)


def test_memory_info_tracks_allocations(drv):
    free0, total = drv.mem_get_info()
    p = drv.mem_alloc(1 << 20)
    assert drv.mem_get_info() == (free0 - (1 << 20), total)
    drv.mem_free(p)
    assert drv.mem_get_info() == (free0, total)


def test_out_of_memory(drv):
    config.SIM_DEVICE_MEMORY = 1 << 20
    try:
        p = drv.mem_alloc(1 << 19)
        with pytest.raises(CudaAPIError) as ei:
            drv.mem_alloc(1 << 20)
        assert ei.value.code == 2 and ei.value.name == "CUDA_ERROR_OUT_OF_MEMORY"
        assert "cuMemAlloc" in str(ei.value)
        drv.mem_free(p)
        drv.mem_free(drv.mem_alloc(1 << 20))
    finally:
        del config.SIM_DEVICE_MEMORY


@pytest.mark.parametrize("size", [0, -1, 1.5, None])
def test_bad_sizes(drv, size):
    with pytest.raises(CudaAPIError, match="CUDA_ERROR_INVALID_VALUE"):
        drv.mem_alloc(size)


def test_double_free_and_use_after_free(drv):
    p = drv.mem_alloc(64)
    drv.mem_free(p)
    with pytest.raises(CudaAPIError, match="freed twice"):
        drv.mem_free(p)
    buf = np.zeros(8, np.uint8)
    with pytest.raises(CudaAPIError, match="not device-accessible"):
        drv.memcpy_htod(p, buf.ctypes.data, 8)


def test_copy_past_end_is_refused(drv):
    p = drv.mem_alloc(16)
    buf = np.zeros(32, np.uint8)
    with pytest.raises(CudaAPIError, match="runs past the end"):
        drv.memcpy_htod(p, buf.ctypes.data, 32)


def test_mapped_host_alloc_aliases(drv):
    h = drv.mem_host_alloc(64, mapped=True)
    d = drv.mem_host_get_device_pointer(h)
    assert d != h
    drv.memset_d8(d, 7, 64)
    assert (drv.host_view(h, 64) == 7).all()
    drv.mem_free_host(h)
    with pytest.raises(CudaAPIError):
        drv.memset_d8(d, 0, 64)


def test_register_unregister(drv):
    a = np.zeros(1024, np.uint8)
    drv.mem_host_register(a.ctypes.data, a.nbytes, mapped=True)
    with pytest.raises(CudaAPIError, match="ALREADY_REGISTERED"):
        drv.mem_host_register(a.ctypes.data, a.nbytes)
    d = drv.mem_host_get_device_pointer(a.ctypes.data)
    drv.memset_d8(d, 3, 10)
    assert a[:10].tolist() == [3] * 10 and a[10] == 0
    drv.mem_host_unregister(a.ctypes.data)
    with pytest.raises(CudaAPIError, match="NOT_REGISTERED"):
        drv.mem_host_unregister(a.ctypes.data)


def test_memcpy_2d(drv):
    src = np.arange(24, dtype=np.uint8).reshape(4, 6)
    dst = np.zeros((4, 3), np.uint8)
    drv.memcpy_2d(dst.ctypes.data, 3, src.ctypes.data + 2, 6, 3, 4)
    np.testing.assert_array_equal(dst, src[:, 2:5])


def test_streams_events(drv):
    s = drv.stream_create()
    calls = []
    drv.launch_host_func(s, lambda: calls.append(1))
    assert calls == [1]
    e1, e2 = drv.event_create(), drv.event_create()
    with pytest.raises(CudaAPIError, match="never recorded"):
        drv.event_elapsed_time(e1, e2)
    drv.event_record(e1, s)
    drv.event_record(e2, s)
    assert drv.event_elapsed_time(e1, e2) >= 0
    drv.stream_destroy(s)
    with pytest.raises(CudaAPIError, match="INVALID_HANDLE"):
        drv.stream_synchronize(s)


def test_modules_not_supported(drv):
    with pytest.raises(CudaAPIError, match="NOT_SUPPORTED"):
        drv.module_load_data(b"\0")


def test_reset_frees_everything(drv):
    p = drv.mem_alloc(128)
    drv.primary_ctx_reset(0)
    assert drv.mem_get_info()[0] == drv.mem_get_info()[1]
    with pytest.raises(CudaAPIError):
        drv.mem_free(p)


def test_simulator_calls_are_in_the_driver_contract_and_refused_elsewhere():
    from cujit.driver.api import Driver
    from cujit.driver.sim import SimDriver
    for name in ("run_on_stream", "host_view", "pointer_kind"):
        assert getattr(SimDriver, name) is not getattr(Driver, name)
    with pytest.raises(NotImplementedError, match="host_view: simulator only"):
        Driver().host_view(0, 8)
