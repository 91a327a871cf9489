"""numba.cuda's module-level helpers of ``cudadrv.devicearray`` in
``cujit.cudadrv.devicearray``: contiguity, array cores, arrays and records made like
others, the CUDA ndarray checks."""
import numpy as np
import pytest

import cujit
from cujit.cudadrv import devicearray as da


@pytest.mark.parametrize("make", [
    lambda: cujit.device_array(10),
    lambda: cujit.device_array((10, 12)),
    lambda: cujit.device_array((10, 12)).T,
    lambda: cujit.device_array((10, 12), order="F"),
    lambda: cujit.device_array((10, 12, 14), order="F").T,
    lambda: np.zeros(10)[::2],
    lambda: np.zeros((10, 12))[::2, ::2],
    lambda: np.zeros((10, 12), order="F")[:, :1],
    lambda: np.broadcast_to(np.arange(3.0), (4, 3)),
    lambda: np.broadcast_to(np.arange(3.0)[:, None], (3, 4)),
])
def test_is_contiguous_agrees_with_the_core_s_c_flag(make):
    view = make()
    assert da.is_contiguous(view) == bool(da.array_core(view).flags["C_CONTIGUOUS"])


def test_array_core_drops_broadcast_axes():
    b = np.broadcast_to(np.arange(3.0), (4, 3))
    assert da.array_core(b).shape == (3,)
    assert da.is_contiguous(b) and not da.is_contiguous(np.zeros((4, 3)).T)


def test_sentry_contiguous_raises_numbas_message_for_a_gappy_array():
    da.sentry_contiguous(np.zeros((4, 3), order="F"))
    with pytest.raises(ValueError) as e:
        da.sentry_contiguous(np.zeros((4, 6))[:, ::2])
    assert str(e.value) == da.errmsg_contiguous_buffer


def test_verify_cuda_ndarray_interface():
    for dary in (cujit.device_array(100), cujit.to_device(np.asarray(1.25)),
                 cujit.mapped_array(4)):
        assert da.is_cuda_ndarray(dary)
        da.verify_cuda_ndarray_interface(dary)
    assert not da.is_cuda_ndarray(np.zeros(3))
    with pytest.raises(TypeError, match="expected a CUDA device array.*ndarray"):
        da.verify_cuda_ndarray_interface(np.zeros(3))


def test_from_record_like_makes_a_new_record_of_the_dtype():
    dt = np.dtype([("a", np.int32), ("b", np.float32)], align=True)
    host = np.zeros(1, dt)[0]
    rec = da.from_record_like(host)
    assert isinstance(rec, cujit.DeviceRecord) and rec.dtype == dt and rec.alloc_size == 8
    rec2 = da.from_record_like(rec)
    assert rec2.gpu_data is not rec.gpu_data and rec2.dtype == dt
    with pytest.raises(TypeError, match="structured dtype"):
        da.from_record_like(np.zeros(2))


def test_from_array_like_keeps_shape_strides_and_dtype():
    h = np.zeros((3, 4), dtype=np.float32, order="F")
    dary = da.from_array_like(h)
    assert (dary.shape, dary.strides, dary.dtype) == (h.shape, h.strides, h.dtype)
    other = da.from_array_like(dary)
    assert other.gpu_data is not dary.gpu_data
    mem = cujit.current_context().memalloc(8)
    with pytest.raises(ValueError, match="gpu_data holds 8 bytes"):
        da.from_array_like(h, gpu_data=mem)
