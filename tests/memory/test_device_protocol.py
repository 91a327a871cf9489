"""The device-memory protocol (cujit/memory/protocol.py): which objects are cujit device
memory, used in place by launches, copies and the simulator."""
import numpy as np

import cujit
from cujit.arrays import has_device_pointer, device_pointer


def test_cujit_device_memory_carries_the_protocol():
    d = cujit.to_device(np.arange(4, dtype=np.float32))
    assert has_device_pointer(d) and device_pointer(d) == d._data_ptr != 0
    assert device_pointer(d[1:]) == d._data_ptr + 4
    rec = cujit.to_device(np.zeros(1, np.dtype([("a", np.int32)])))[0]
    assert has_device_pointer(rec) and device_pointer(rec) == rec._data_ptr
    m = cujit.mapped_array(3, np.int64)
    assert has_device_pointer(m) and device_pointer(m) == m._data_ptr


def test_host_and_foreign_objects_do_not():
    m = cujit.mapped_array(3, np.int64)
    derived = m + 1                     # a ufunc result: host memory, not the mapping
    for obj in (np.zeros(3), derived, m.copy(), 3, None, [1, 2]):
        assert not has_device_pointer(obj)
        assert device_pointer(obj) is None

    class Foreign:                      # a CUDA-array-interface exporter: imported instead
        __cuda_array_interface__ = {"shape": (1,), "typestr": "<f4", "data": (0, False),
                                    "version": 3}
    assert not has_device_pointer(Foreign()) and device_pointer(Foreign()) is None
