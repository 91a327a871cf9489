"""``_numba_type_`` of device arrays and records (numba's typing hook, which numba.cuda code
reads): the type ``cujit.types.typeof`` gives, layout and read-only flag included."""
import numpy as np
import pytest

import cujit
from cujit import types
from cujit.arrays.record import DeviceRecord

REC = np.dtype([("a", np.int32), ("b", np.float32)], align=True)


@pytest.mark.parametrize("make, layout", [
    (lambda: np.arange(12.0), "C"),
    (lambda: np.arange(12.0).reshape(3, 4), "C"),
    (lambda: np.asfortranarray(np.arange(12.0).reshape(3, 4)), "F"),
    (lambda: np.zeros((1, 5), np.int16), "C"),
])
def test_array_type_matches_typeof(make, layout):
    d = cujit.to_device(make())
    t = d._numba_type_
    assert t == types.typeof(d)
    assert (t.layout, t.ndim, t.dtype) == (layout, d.ndim, types.from_dtype(d.dtype))


def test_strided_and_transposed_views_are_any_layout_or_swapped():
    d = cujit.to_device(np.arange(24, dtype=np.float32).reshape(4, 6))
    assert d[:, ::2]._numba_type_.layout == "A"
    assert d[::2]._numba_type_.layout == "A"
    assert d.T._numba_type_.layout == "F"
    assert d[1]._numba_type_ == types.float32[::1]


def test_read_only_import_types_read_only():
    class Producer:
        def __init__(self, d):
            cai = dict(d.__cuda_array_interface__)
            cai["data"] = (cai["data"][0], True)
            self.__cuda_array_interface__ = cai
            self.keep = d

    d = cujit.to_device(np.arange(4, dtype=np.int32))
    v = cujit.as_cuda_array(Producer(d))
    assert v._numba_type_.readonly and not d._numba_type_.readonly


def test_record_type_is_its_dtype_record():
    r = DeviceRecord(REC)
    assert r._numba_type_ == types.from_dtype(REC) == types.typeof(r)
    assert r._numba_type_ != types.from_dtype(np.dtype([("a", np.int32), ("b", np.float64)]))
