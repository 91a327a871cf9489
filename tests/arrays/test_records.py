"""Record elements of device arrays write through to device memory (issue 10; numba.cuda's
``DeviceRecord``): scalar, string, nested-record and array fields, on every array kind."""
import numpy as np
import pytest

import cujit
from cujit.arrays.record import DeviceRecord

INNER = np.dtype([("i", np.int32), ("j", np.float32, (2, 2))])
REC = np.dtype([("a", np.float64), ("b", np.int32), ("s", np.str_, 5), ("t", "S4"),
                ("y", INNER), ("arr", np.int16, (3,))], align=True)


def _zeros(n=3):
    return cujit.to_device(np.zeros(n, REC))


def test_element_is_a_device_record_view():
    d = _zeros()
    r = d[1]
    assert type(r) is DeviceRecord and r.dtype == REC
    assert r._data_ptr == d._data_ptr + REC.itemsize
    assert r.gpu_data is d.gpu_data and len(r) == 6


def test_scalar_field_write_reaches_the_device():
    d = _zeros()
    d[1]["a"] = 0.5
    d[2]["b"] = -7
    h = d.copy_to_host()
    assert h[1]["a"] == 0.5 and h[2]["b"] == -7
    assert h["a"].tolist() == [0.0, 0.5, 0.0] and h["b"].tolist() == [0, 0, -7]
    assert d[1]["a"] == 0.5 and d[2]["b"] == -7


def test_string_fields_write_through():
    d = _zeros()
    d[0]["s"] = "hello"
    d[2]["t"] = b"ab"
    h = d.copy_to_host()
    assert h[0]["s"] == "hello" and h[2]["t"] == b"ab" and h[1]["s"] == ""
    assert d[0]["s"] == "hello" and d[2]["t"] == b"ab"


def test_nested_record_and_array_fields_write_through():
    d = _zeros()
    d[0]["y"]["i"] = 1
    d[0]["y"]["j"][0, 0] = 2.0
    d[1]["y"]["j"] = 3.0                    # broadcast into the whole array field
    d[2]["arr"][1] = 9
    d[1]["arr"] = [4, 5, 6]
    h = d.copy_to_host()
    assert h[0]["y"]["i"] == 1 and h[0]["y"]["j"].tolist() == [[2.0, 0.0], [0.0, 0.0]]
    assert (h[1]["y"]["j"] == 3.0).all()
    assert h[2]["arr"].tolist() == [0, 9, 0] and h[1]["arr"].tolist() == [4, 5, 6]
    assert type(d[0]["y"]) is DeviceRecord
    assert d[0]["y"]["j"].copy_to_host().tolist() == [[2.0, 0.0], [0.0, 0.0]]


def test_field_by_position_and_errors():
    d = _zeros()
    d[1][0] = 1.5                           # np.void: an int picks the field by position
    assert d.copy_to_host()[1]["a"] == 1.5 and d[1][-6] == 1.5
    with pytest.raises(KeyError, match="no field 'zz'"):
        d[0]["zz"]
    with pytest.raises(KeyError, match="no field 'zz'"):
        d[0]["zz"] = 1
    with pytest.raises(IndexError, match="invalid index 6"):
        d[0][6]
    before = d.copy_to_host()
    with pytest.raises(ValueError, match="needs a scalar"):
        d[0]["a"] = [1.0, 2.0]
    with pytest.raises(ValueError):
        d[0]["arr"] = [1, 2]                # does not broadcast to (3,)
    assert (d.copy_to_host() == before).all()


def test_zero_d_record_array_and_bound_stream():
    d = cujit.to_device(np.zeros((), REC))
    r = d[()]
    assert type(r) is DeviceRecord
    r["b"] = 3
    assert d.copy_to_host()["b"] == 3
    s = cujit.stream()
    e = _zeros().getitem(1, stream=s)
    assert e.stream is s
    e["a"] = 2.5
    s.synchronize()
    assert e["a"] == 2.5


def test_field_name_indexing_gives_a_strided_view():
    d = _zeros(4)
    a = d["a"]
    assert a.shape == (4,) and a.strides == (REC.itemsize,) and a.dtype == np.float64
    d["b"] = 5
    a[2] = 8.0
    arr = d["arr"]
    assert arr.shape == (4, 3) and arr.strides == (REC.itemsize, 2)
    arr[:, 2] = 1
    h = d.copy_to_host()
    assert h["b"].tolist() == [5] * 4 and h["a"].tolist() == [0, 0, 8.0, 0]
    assert h["arr"][:, 2].tolist() == [1] * 4 and h["arr"][:, :2].sum() == 0
    assert d[np.str_("b")].copy_to_host().tolist() == [5] * 4       # NumPy string keys too
    with pytest.raises(KeyError, match="no field of name nope"):
        d["nope"]
    with pytest.raises(IndexError, match="only integers, slices"):
        cujit.device_array(3)["a"]


def test_cai_import_records_write_through_and_readonly_is_refused():
    d = _zeros()

    class Wrapped:
        __cuda_array_interface__ = d.__cuda_array_interface__

    v = cujit.as_cuda_array(Wrapped())
    v[1]["a"] = 6.0
    assert d.copy_to_host()[1]["a"] == 6.0

    class ReadOnly:
        __cuda_array_interface__ = dict(d.__cuda_array_interface__,
                                        data=(d._data_ptr, True))

    ro = cujit.as_cuda_array(ReadOnly())
    assert ro[1]["a"] == 6.0
    with pytest.raises(ValueError, match="read-only"):
        ro[1]["a"] = 1.0
    assert d.copy_to_host()[1]["a"] == 6.0


def test_mapped_and_managed_record_elements_write_through():
    m = cujit.mapped_array(3, REC)
    m[...] = np.zeros(3, REC)
    m[1]["a"] = 3.5
    m[2]["y"]["j"][1, 1] = 4.0
    assert m["a"].tolist() == [0, 3.5, 0] and m[2]["y"]["j"][1, 1] == 4.0
    g = cujit.managed_array(3, REC)
    g[...] = np.zeros(3, REC)
    g[0]["s"] = "abc"
    assert g["s"].tolist() == ["abc", "", ""]


def test_to_device_of_a_record_scalar_writes_through():
    h = np.zeros(1, REC)[0]
    r = cujit.to_device(h)
    r["a"] = 1.25
    r["y"]["i"] = 4
    back = r.copy_to_host()
    assert back["a"] == 1.25 and back["y"]["i"] == 4


@cujit.jit
def _bump(x):
    i = cujit.grid(1)
    if i < x.size:
        x[i] += 1.0


def test_record_writes_are_seen_by_kernels():
    d = _zeros(4)
    d[2]["a"] = 10.0
    a = d["a"]
    _bump[1, 4](a)
    assert d.copy_to_host()["a"].tolist() == [1.0, 1.0, 11.0, 1.0]
    assert d[2]["a"] == 11.0


def test_np_asarray_of_a_record_copies_it_out():
    d = _zeros()
    d[1]["b"] = 4
    h = np.asarray(d[1])
    assert h.shape == () and h.dtype == REC and h["b"] == 4
    with pytest.raises(ValueError, match="without a copy"):
        np.asarray(d[1], copy=False)


def test_numpy_integer_keys_iteration_and_record_to_record_copies():
    rec = np.dtype([("a", np.float64), ("y", [("i", np.int32)])])
    h = np.zeros(3, rec)
    h[1] = (2.0, (5,))
    d = cujit.to_device(h)
    assert type(d[np.int64(1)]) is DeviceRecord
    assert type(d[1, ...]) is cujit.DeviceNDArray and d[1, ...].shape == ()
    assert [type(r) for r in d] == [DeviceRecord] * 3
    d[0] = d[1]                              # device record -> element
    d[2]["y"] = d[1]["y"]                    # nested device record -> field
    held = d[1]
    d[1] = (9.0, (4,))                       # a view taken earlier sees later writes
    out = d.copy_to_host()
    assert out[0].tolist() == (2.0, (5,)) and out[2].tolist() == (0.0, (5,))
    assert held["a"] == 9.0 and held["y"]["i"] == 4


def test_record_getitem_setitem_on_a_stream():
    d = _zeros()
    s = cujit.stream()
    r = d[1]
    r.setitem("b", 12, stream=s)
    r.setitem("s", "xy", stream=s)
    assert r.getitem("b", stream=s) == 12          # read waits for s
    s.synchronize()
    assert d.copy_to_host()[1]["s"] == "xy"
    assert r.getitem("y", stream=s).stream is s


SMALL = np.dtype([("a", np.int32), ("b", np.float32)], align=True)


@pytest.mark.parametrize("make", [np.zeros, np.recarray], ids=["void", "record"])
def test_copy_to_host_fills_a_structured_scalar(make):
    # numba-cuda's test_cuda_devicerecord: np.void / np.record destinations, filled in place
    src = np.zeros(1, SMALL)
    src[0]["a"], src[0]["b"] = 10, 11.0
    dev = DeviceRecord(SMALL)
    dev.copy_to_device(src[0])
    host = make(1, SMALL)[0].copy()
    host["a"], host["b"] = 0, 0.0
    assert dev.copy_to_host(host) is host
    assert (int(host["a"]), float(host["b"])) == (10, 11.0)
    # a scalar taken from an array writes through to the array, as in NumPy
    arr = np.zeros(2, REC)
    rec = cujit.to_device(np.ones(1, REC))[0]
    rec.copy_to_host(arr[1])
    assert arr[1]["a"] == 1.0 and arr[0]["a"] == 0.0
    np.testing.assert_array_equal(arr[1]["y"]["j"], np.ones((2, 2)))


def test_copy_to_host_into_a_scalar_of_another_dtype_is_refused():
    dev = DeviceRecord(SMALL)
    other = np.zeros(1, np.dtype([("a", np.int64)]))[0].copy()
    with pytest.raises(TypeError, match="incompatible dtype"):
        dev.copy_to_host(other)
    assert other["a"] == 0
