"""Copies into a device array whose elements overlap (a stride of 0 or smaller than the
item) are a ValueError raised before anything is written; they used to fail inside the
transfer planner with ``TypeError: cannot unpack non-iterable NoneType object``
(cujit/arrays/transfer.py)."""
import numpy as np
import pytest

import cujit as cuda


@pytest.mark.parametrize("shape,strides", [((4,), (0,)), ((4,), (4,)), ((2, 3), (16, 8)),
                                           ((2, 3), (8, 8))])
def test_copy_to_device_into_overlapping_view_is_value_error(shape, strides):
    d = cuda.device_array(shape, dtype=np.float64, strides=strides)
    with pytest.raises(ValueError, match=r"elements overlap.*strides \(" + str(strides[0])):
        d.copy_to_device(np.ones(shape))


def test_overlapping_view_of_an_allocation_leaves_its_bytes_unchanged_when_refused():
    base = cuda.to_device(np.arange(8.0))
    view = cuda.DeviceNDArray(shape=(4,), strides=(0,), dtype=np.float64,
                              gpu_data=base.gpu_data)
    with pytest.raises(ValueError, match="elements overlap"):
        view.copy_to_device(np.full(4, 9.0))
    assert (base.copy_to_host() == np.arange(8.0)).all()
    assert (view.copy_to_host() == 0.0).all()


def test_device_to_device_copy_into_overlapping_view_is_value_error():
    dst = cuda.device_array(4, dtype=np.float64, strides=(0,))
    src = cuda.to_device(np.arange(4.0))
    with pytest.raises(ValueError, match="elements overlap"):
        dst.copy_to_device(src)
    with pytest.raises(ValueError, match="elements overlap"):
        dst[:] = src


def test_copies_into_strided_views_that_do_not_overlap_still_work():
    d = cuda.device_array((3, 2), dtype=np.float64, strides=(16, 24))
    host = np.arange(6.0).reshape(3, 2)
    d.copy_to_device(host)
    assert (d.copy_to_host() == host).all()
    e = cuda.device_array(4, dtype=np.float64, strides=(16,))
    e.copy_to_device(np.arange(4.0))
    assert (e.copy_to_host() == np.arange(4.0)).all()
