"""The simulated driver refuses, with CudaAPIError (INVALID_VALUE), every copy, memset, pin
or kernel access of memory that is not live (freed, reset, never allocated, wild) on every
path: contiguous, strided, 2-D, 3-D, staged (issue 12).  Before, strided paths treated unknown
addresses as host memory and crashed the process."""
import numpy as np
import pytest

import cujit as cuda
from cujit.driver import get_driver
from cujit.driver.errors import CudaAPIError, CUDA_ERROR_INVALID_VALUE, \
    CUDA_ERROR_OUT_OF_MEMORY

pytestmark = pytest.mark.sim

WILD = 0xDEADBEEF000


class _CAI:
    def __init__(self, ptr, shape, strides, typestr="<f8"):
        self.__cuda_array_interface__ = {"data": (ptr, False), "shape": shape,
                                         "strides": strides, "typestr": typestr,
                                         "version": 3}


def _invalid(excinfo):
    assert excinfo.value.code == CUDA_ERROR_INVALID_VALUE


@pytest.fixture
def reset_ctx():
    ctx = cuda.current_context()
    yield ctx
    ctx.reset()


@pytest.mark.parametrize("view", [lambda a: a, lambda a: a[::2], lambda a: a.reshape(4, 4)[:, 1:3],
                                  lambda a: a.reshape(2, 2, 4)[:, :, ::2]],
                         ids=["contiguous", "strided", "2d", "3d"])
def test_copy_from_reset_context_is_refused(reset_ctx, view):
    a = cuda.to_device(np.arange(16.0))
    v = view(a)
    reset_ctx.reset()
    with pytest.raises(CudaAPIError) as e:
        v.copy_to_host()
    _invalid(e)


def test_copy_to_freed_memory_at_driver_level_is_refused():
    # raw driver memory, so no array finaliser frees it a second time later
    drv = get_driver()
    ptr = drv.mem_alloc(128)
    host = np.zeros(16)
    drv.mem_free(ptr)
    for call in (lambda: drv.memcpy(ptr, host.ctypes.data, 64),
                 lambda: drv.memcpy(host.ctypes.data, ptr, 64),
                 lambda: drv.memcpy_2d(ptr, 16, host.ctypes.data, 8, 8, 4),
                 lambda: drv.memcpy_2d(host.ctypes.data, 8, ptr, 16, 8, 4),
                 lambda: drv.memset_d8(ptr, 0, 8)):
        with pytest.raises(CudaAPIError) as e:
            call()
        _invalid(e)


def test_strided_setitem_after_reset_is_refused(reset_ctx):
    a = cuda.to_device(np.arange(16.0))
    reset_ctx.reset()
    with pytest.raises(CudaAPIError):
        a[::2] = 1.0


def test_wild_cuda_array_interface_copy_is_refused():
    d = cuda.as_cuda_array(_CAI(WILD, (4, 2), (32, 8)))
    with pytest.raises(CudaAPIError) as e:
        d.copy_to_host()
    _invalid(e)
    d2 = cuda.as_cuda_array(_CAI(WILD, (8,), (8,)))
    with pytest.raises(CudaAPIError) as e:
        d2.copy_to_host()
    _invalid(e)


def test_negative_strides_below_a_live_allocation_are_refused():
    a = cuda.to_device(np.arange(16.0))
    base = a.__cuda_array_interface__["data"][0]
    d = cuda.as_cuda_array(_CAI(base, (4, 2), (-32, 8)))
    with pytest.raises(CudaAPIError) as e:
        d.copy_to_host()
    _invalid(e)
    # the same view starting at the last row is in bounds and copies
    d = cuda.as_cuda_array(_CAI(base + 96, (4, 2), (-32, 8)))
    assert d.copy_to_host().tolist() == [[12, 13], [8, 9], [4, 5], [0, 1]]


@pytest.mark.parametrize("ptr", [WILD, -1, 0])
def test_pinning_wild_pointers_is_refused(ptr):
    with pytest.raises(CudaAPIError) as e:
        get_driver().mem_host_register(ptr, 4096)
    _invalid(e)


@pytest.mark.parametrize("ptr", [WILD, -1])
def test_context_mempin_of_wild_pointers_is_refused(ptr):
    ctx = cuda.current_context()
    with pytest.raises(CudaAPIError) as e:
        ctx.mempin(object(), ptr, 4096)
    _invalid(e)


def test_pinning_freed_device_memory_range_is_refused():
    drv = get_driver()
    ptr = drv.mem_alloc(4096)
    drv.mem_free(ptr)
    with pytest.raises(CudaAPIError):
        drv.mem_host_register(ptr, 4096)


def test_pinning_real_host_memory_still_works():
    host = np.zeros(8192, np.uint8)
    drv = get_driver()
    drv.mem_host_register(host.ctypes.data, host.nbytes)
    drv.mem_host_unregister(host.ctypes.data)


def test_huge_managed_array_is_out_of_memory():
    with pytest.raises(CudaAPIError) as e:
        cuda.managed_array(2**40)
    assert e.value.code == CUDA_ERROR_OUT_OF_MEMORY


def test_use_after_free_is_reported_at_once():
    ctx = cuda.current_context()
    m = ctx.memalloc(64)
    a = cuda.DeviceNDArray((8,), (8,), np.float64, gpu_data=m)
    a.copy_to_device(np.arange(8.0))
    with ctx.deallocations.disable():
        m.free()
        with pytest.raises(CudaAPIError):
            a.copy_to_host()
        with pytest.raises(CudaAPIError):
            a[::2].copy_to_host()
        with pytest.raises(CudaAPIError):
            a.copy_to_device(np.zeros(8))

        @cuda.jit
        def touch(x):
            x[0] = 1.0
        # the launch refuses it before the driver (launch_args.check_alive): on a GPU the
        # freed address may belong to a newer allocation
        from cujit.memory import DeadMemoryError
        with pytest.raises(DeadMemoryError, match="argument 0 of kernel .*touch"):
            touch[1, 1](a)
    ctx.deallocations.clear()
