"""``cujit.kernels.transpose.transpose`` (numba.cuda.kernels.transpose): the device
transpose of 2-D arrays of any dtype, into a given or a new array."""
import numpy as np
import pytest

import cujit
from cujit.cudadrv.devicearray import from_array_like
from cujit.kernels.reduction import Reduce
from cujit.kernels.transpose import transpose


@pytest.mark.parametrize("rows, cols, dtype", [(5, 6, np.float64), (33, 40, np.complex128),
                                               (1, 7, np.int8)])
def test_transpose_into_a_given_array(rows, cols, dtype):
    x = np.arange(rows * cols).astype(dtype).reshape(cols, rows)
    y = np.zeros((rows, cols), dtype=dtype)
    dy = from_array_like(y)
    assert transpose(cujit.to_device(x), dy) is dy
    np.testing.assert_array_equal(dy.copy_to_host(), x.T)


def test_transpose_of_records_bools_and_host_arrays():
    rt = np.dtype([("i", np.int32), ("j", np.float32, (3, 2))])
    arr = np.zeros((3, 4), rt)
    arr["i"] = np.arange(12).reshape(3, 4)
    arr["j"] = np.arange(72).reshape(3, 4, 3, 2)
    np.testing.assert_array_equal(transpose(cujit.to_device(arr)).copy_to_host(), arr.T)
    b = np.arange(35).reshape(5, 7) % 3 == 0
    np.testing.assert_array_equal(transpose(b).copy_to_host(), b.T)


def test_transpose_checks_the_arrays():
    d = cujit.to_device(np.zeros((2, 3)))
    with pytest.raises(TypeError, match="2-D array, got 1"):
        transpose(cujit.device_array(4))
    with pytest.raises(ValueError, match=r"shape \(3, 2\)"):
        transpose(d, cujit.device_array((2, 3)))
    with pytest.raises(TypeError, match="dtype"):
        transpose(d, cujit.device_array((3, 2), dtype=np.float32))


def test_reduction_module_holds_cujits_reduce():
    assert Reduce is cujit.Reduce
