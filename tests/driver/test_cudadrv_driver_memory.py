"""numba.cuda's driver-level memory functions and driver object in
``cujit.cudadrv.driver`` (``numba.cuda.cudadrv.driver`` under the alias): copies, memset,
memory extents, and their typed errors."""
import ctypes

import numpy as np
import pytest

import cujit
from cujit.cudadrv import driver as d


@pytest.fixture
def ctx():
    return cujit.current_context()


def test_host_to_device_and_back_copies_the_bytes(ctx):
    src = np.arange(100, dtype=np.uint32)
    out = np.zeros_like(src)
    mem = ctx.memalloc(src.nbytes)
    d.host_to_device(mem, src, src.nbytes)
    d.device_to_host(out, mem, src.nbytes)
    np.testing.assert_array_equal(out, src)


def test_device_to_device_and_memset(ctx):
    src = np.arange(10, dtype=np.uint32)
    a, b = ctx.memalloc(40), ctx.memalloc(40)
    d.host_to_device(a, src, 40)
    d.device_to_device(b, a, 40)
    d.device_memset(b, 0xAB, 8)
    out = np.zeros_like(src)
    d.device_to_host(out, b, 40)
    assert list(out[:2]) == [0xABABABAB] * 2
    np.testing.assert_array_equal(out[2:], src[2:])


def test_memset_of_device_and_mapped_arrays_uses_their_size():
    dev = cujit.to_device(np.full(10, 7, np.uint32))
    assert d.device_memory_size(dev) == 40
    d.device_memset(dev, 0, d.device_memory_size(dev))
    assert not dev.copy_to_host().any()
    mapped = cujit.mapped_array(10, dtype=np.uint32)
    mapped.fill(123)
    d.device_memset(mapped, 0, d.device_memory_size(mapped))
    cujit.synchronize()
    assert not mapped.any()


def test_device_memory_size_of_a_view_and_a_strided_array(ctx):
    mem = ctx.memalloc(1024)
    assert d.device_memory_size(mem.view(24)) == 1000
    dev = cujit.device_array((4, 6), dtype=np.float64)
    assert d.device_memory_size(dev[:, ::2]) == 8 * (3 * 6 + 4 + 1)


def test_is_device_memory_and_require(ctx):
    assert d.is_device_memory(ctx.memalloc(8))
    assert d.is_device_memory(cujit.device_array(3))
    assert not d.is_device_memory(np.zeros(3))
    d.require_device_memory(cujit.device_array(3))
    with pytest.raises(TypeError, match="expected device memory.*ndarray"):
        d.require_device_memory(np.zeros(3))


def test_device_pointer_of_arrays_and_pointers(ctx):
    mem = ctx.memalloc(64)
    assert d.device_pointer(mem) == mem.device_pointer_value
    assert d.device_ctypes_pointer(mem).value == mem.device_pointer_value
    assert isinstance(d.device_ctypes_pointer(mem), ctypes.c_size_t)
    with pytest.raises(TypeError, match="expected device memory"):
        d.device_pointer(np.zeros(2))


def test_host_memory_extents_and_sizes():
    a = np.arange(100)
    assert d.host_memory_extents(a) == (a.ctypes.data, a.ctypes.data + a.nbytes)
    f = np.asfortranarray(np.arange(100).reshape(2, 50))
    assert d.host_memory_extents(f)[0] == f.ctypes.data and d.host_memory_size(f) == 800
    assert d.host_memory_size(np.asarray(np.uint32(3))) == 4
    rev = np.arange(10, dtype=np.int64)[::-1]
    assert d.host_memory_size(rev) == 80
    assert d.host_memory_extents(rev)[1] == rev.ctypes.data + 8

    class Pair(ctypes.Structure):
        _fields_ = [("x", ctypes.c_int), ("y", ctypes.c_int)]
    assert d.host_memory_size(Pair(1, 2)) == ctypes.sizeof(Pair)
    assert d.host_memory_size(ctypes.c_double(1.0)) == 8
    assert d.host_memory_size(bytearray(13)) == 13
    with pytest.raises(TypeError, match="expected host memory"):
        d.host_memory_size(object())


def test_host_pointer_refuses_a_read_only_buffer_unless_asked():
    ro = np.arange(4)
    ro.flags.writeable = False
    assert d.host_pointer(ro, readonly=True) == ro.ctypes.data
    with pytest.raises(ValueError, match="read-only"):
        d.host_pointer(ro)
    assert d.host_pointer(1234) == 1234


def test_a_size_past_either_side_is_a_value_error_and_copies_nothing(ctx):
    mem = ctx.memalloc(16)
    d.device_memset(mem, 0, 16)
    big = np.ones(8, np.uint8)
    with pytest.raises(ValueError, match="20 bytes exceed the 16 bytes of the destination"):
        d.host_to_device(mem, np.ones(20, np.uint8), 20)
    with pytest.raises(ValueError, match="exceed the 8 bytes of the source"):
        d.host_to_device(mem, big, 12)
    with pytest.raises(ValueError, match="exceed the 16 bytes of the destination"):
        d.device_memset(mem, 1, 17)
    with pytest.raises(ValueError, match=">= 0 bytes"):
        d.device_to_device(mem, mem, -1)
    with pytest.raises(TypeError, match="int number of bytes"):
        d.device_to_host(np.zeros(16, np.uint8), mem, 4.0)
    out = np.full(16, 9, np.uint8)
    d.device_to_host(out, mem, 16)
    assert not out.any()


def test_device_to_host_refuses_a_read_only_destination(ctx):
    mem = ctx.memalloc(8)
    dst = np.zeros(8, np.uint8)
    dst.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        d.device_to_host(dst, mem, 8)


def test_memset_value_must_be_a_byte(ctx):
    with pytest.raises(ValueError, match=r"0\.\.255\), got 256"):
        d.device_memset(ctx.memalloc(8), 256, 8)


def test_the_driver_object_lists_devices():
    drv = d.driver
    n = drv.get_device_count()
    assert n == len(cujit.gpus) >= 1
    dev = drv.get_device(0)
    assert dev is cujit.current_context().device
    assert drv.list_devices() == [drv.get_device(i) for i in range(n)]
    assert drv.is_available is True and drv.initialization_error is None
    with pytest.raises(IndexError, match="out of range"):
        drv.get_device(n)
    with pytest.raises(TypeError, match="must be an int"):
        drv.get_device("0")


def test_the_driver_object_takes_stand_ins_and_refuses_other_names():
    drv = d.driver
    drv.cuStandIn = len
    try:
        assert drv.cuStandIn is len
    finally:
        del drv.cuStandIn
    with pytest.raises(AttributeError, match="no attribute 'get_thing'"):
        drv.get_thing


@pytest.mark.sim
def test_raw_driver_functions_are_absent_on_the_simulator():
    assert getattr(d.driver, "cuMemGetInfo", None) is None
    with pytest.raises(AttributeError, match="simulator has no raw CUDA driver functions"):
        d.driver.cuMemcpyHtoD


@pytest.mark.gpu
def test_raw_driver_functions_call_cuda_bindings_and_check_errors():
    free, total = d.driver.cuMemGetInfo()
    assert 0 < free <= total
    with pytest.raises(cujit.CudaAPIError):
        d.driver.cuMemFree(12345)
