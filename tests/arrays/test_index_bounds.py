"""Index bounds on every key path (all-integer fast path and the mixed integer/slice path):
the last valid index works, one past it is an IndexError, and nothing is written."""
import numpy as np
import pytest

import cujit
from cujit.arrays import layout as L

SHAPE = (3, 4)
STRIDES = (32, 8)


@pytest.mark.parametrize("key", [(3, slice(None)), (-4, slice(1, 2)), (slice(None), 4),
                                 (Ellipsis, -5), (None, 3, 0), (1, 4), (0, -5)])
def test_layout_index_one_past_either_end_is_index_error(key):
    with pytest.raises(IndexError, match="out of bounds") as ei:
        L.index(SHAPE, STRIDES, key)
    assert ei.type is IndexError


@pytest.mark.parametrize("key,off", [((2, slice(None)), 64), ((-3, slice(1, 2)), 8),
                                     ((slice(None), 3), 24), ((Ellipsis, -4), 0),
                                     ((None, 2, 0), 64), ((2, 3), 88), ((-3, -4), 0)])
def test_layout_index_last_valid_index(key, off):
    assert L.index(SHAPE, STRIDES, key)[0] == off
    want = np.zeros(SHAPE)[key]
    got = L.index(SHAPE, STRIDES, key)
    assert got[1] == np.shape(want)


@pytest.mark.parametrize("key", [(3, slice(None)), (slice(None), 4), (-4, 0), (2, 4)])
def test_device_setitem_past_the_end_writes_nothing(key):
    h = np.arange(12.0).reshape(SHAPE)
    d = cujit.to_device(h)
    with pytest.raises(IndexError, match="out of bounds"):
        d[key] = 99.0
    with pytest.raises(IndexError, match="out of bounds"):
        d[key]
    assert np.array_equal(d.copy_to_host(), h)


def test_device_setitem_last_row_and_column():
    h = np.arange(12.0).reshape(SHAPE)
    d = cujit.to_device(h)
    d[2, :] = -1.0
    d[:, 3] = -2.0
    h[2, :] = -1.0
    h[:, 3] = -2.0
    assert np.array_equal(d.copy_to_host(), h)
    assert d[-1, -1] == -2.0


@pytest.mark.sim
def test_simulated_driver_refuses_a_copy_past_an_allocation():
    """The last line of defence: whatever check above it is wrong, the simulated device memory
    is never written out of bounds (a CudaAPIError, not a corrupted heap or a crash)."""
    from cujit.driver import get_driver
    d = cujit.to_device(np.arange(12.0))
    src = np.ones(4)
    with pytest.raises(cujit.CudaAPIError, match="runs past the end of its 96-byte allocation"):
        get_driver().memcpy_htod(d.device_ctypes_pointer.value + 88, src.ctypes.data, 32)
    assert np.array_equal(d.copy_to_host(), np.arange(12.0))
