"""Bad input: each gives a clear TypeError/ValueError naming the value(s), and never changes
the destination."""
import numpy as np
import pytest

import cujit


def test_device_array_argument_errors():
    with pytest.raises(TypeError, match="2.5"):
        cujit.device_array((2.5, 3))
    with pytest.raises(ValueError, match="negative dimension -1"):
        cujit.device_array((-1, 3))
    with pytest.raises(ValueError, match="order 'X'"):
        cujit.device_array(3, order="X")
    with pytest.raises(ValueError, match="1 entries but the shape has 2"):
        cujit.device_array((2, 3), strides=(8,))
    with pytest.raises(ValueError, match="negative"):
        cujit.device_array(3, strides=(-8,))
    with pytest.raises(TypeError, match="stream"):
        cujit.device_array(3, stream="s")


def test_size_zero_allocates_nothing():
    d = cujit.device_array((0, 5))
    assert d._data_ptr == 0 and d.gpu_data is None and d.alloc_size == 0
    assert d.copy_to_host().shape == (0, 5)
    d.copy_to_device(np.zeros((0, 5)))
    d[:] = 1.0


def test_copy_to_host_mismatches_leave_destination_untouched():
    d = cujit.to_device(np.arange(6.0).reshape(2, 3))
    dst = np.full((3, 2), -1.0)
    with pytest.raises(ValueError, match=r"\(2, 3\).*\(3, 2\)"):
        d.copy_to_host(dst)
    assert (dst == -1).all()
    dst32 = np.full((2, 3), -1, np.float32)
    with pytest.raises(TypeError, match="float64.*float32"):
        d.copy_to_host(dst32)
    assert (dst32 == -1).all()
    with pytest.raises(TypeError, match="numpy.ndarray"):
        d.copy_to_host([0] * 6)
    ro = np.zeros((2, 3))
    ro.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        d.copy_to_host(ro)
    # shapes equal up to length-1 axes are accepted (numba's rule)
    out = np.zeros((1, 2, 3))
    d.copy_to_host(out)
    assert np.array_equal(out[0], np.arange(6.0).reshape(2, 3))


def test_copy_to_device_mismatches_leave_destination_untouched():
    d = cujit.to_device(np.arange(6.0))
    with pytest.raises(ValueError, match=r"\(6,\).*\(5,\)"):
        d.copy_to_device(np.zeros(5))
    with pytest.raises(TypeError, match="float64.*int64"):
        d.copy_to_device(np.zeros(6, np.int64))
    with pytest.raises(TypeError, match="float64.*float32"):
        d.copy_to_device(cujit.device_array(6, np.float32))
    with pytest.raises(ValueError, match="incompatible shape"):
        d.copy_to_device(cujit.device_array(7))
    with pytest.raises(TypeError, match="cannot convert"):
        d.copy_to_device(["a", "b", "c", "d", "e", "f"])
    assert np.array_equal(d.copy_to_host(), np.arange(6.0))


def test_to_device_into_wrong_destination():
    to = cujit.to_device(np.arange(4.0))
    with pytest.raises(ValueError, match="incompatible shape"):
        cujit.to_device(np.zeros(5), to=to)
    with pytest.raises(TypeError, match="DeviceNDArray"):
        cujit.to_device(np.zeros(4), to=np.zeros(4))
    assert np.array_equal(to.copy_to_host(), np.arange(4.0))
    same = cujit.to_device(np.ones(4), to=to)
    assert same is to and to.copy_to_host().tolist() == [1.0] * 4


def test_to_device_into_destination_from_device_mapped_managed_and_record_sources():
    """numba's ``to_device(obj, to=dst)`` is ``dst.copy_to_device(obj)`` whatever ``obj``
    is; device, mapped and record sources used to be returned as they were."""
    dst = cujit.to_device(np.zeros(4))
    src = cujit.to_device(np.arange(4.0))
    assert cujit.to_device(src, to=dst) is dst
    assert dst.copy_to_host().tolist() == [0.0, 1.0, 2.0, 3.0]
    m = cujit.mapped_array(4)
    m[:] = 7
    assert cujit.to_device(m, to=dst) is dst and dst.copy_to_host().tolist() == [7.0] * 4
    g = cujit.managed_array(4)
    g[:] = 5
    assert cujit.to_device(g, to=dst) is dst and dst.copy_to_host().tolist() == [5.0] * 4
    rt = np.dtype([("x", "f8"), ("n", "i4")])
    rec = np.zeros(1, rt)[0]
    rec["x"], rec["n"] = 3.0, 9
    drec = cujit.to_device(np.zeros(1, rt)[0])
    assert cujit.to_device(rec, to=drec) is drec
    assert drec.copy_to_host()["x"] == 3.0 and drec.copy_to_host()["n"] == 9
    other = cujit.to_device(np.zeros(1, rt)[0])
    assert cujit.to_device(drec, to=other) is other and other.copy_to_host()["n"] == 9
    assert cujit.to_device(np.arange(4.0) + 10, to=dst, copy=False) is dst
    assert dst.copy_to_host().tolist() == [5.0] * 4         # copy=False: nothing copied


def test_to_device_into_destination_keeps_numba_checks_and_the_destination():
    dst = cujit.to_device(np.arange(4.0))
    with pytest.raises(TypeError, match="incompatible dtype"):
        cujit.to_device(cujit.to_device(np.zeros(4, np.float32)), to=dst)
    with pytest.raises(ValueError, match="incompatible shape"):
        cujit.to_device(cujit.to_device(np.zeros(5)), to=dst)
    with pytest.raises(ValueError, match="incompatible shape"):
        cujit.to_device(cujit.mapped_array(3), to=dst)
    assert dst.copy_to_host().tolist() == [0.0, 1.0, 2.0, 3.0]
    rt = np.dtype([("x", "f8")])
    drec = cujit.to_device(np.zeros(1, rt)[0])
    with pytest.raises(TypeError, match="incompatible dtype"):
        cujit.to_device(np.zeros(1, [("y", "i8")])[0], to=drec)
    with pytest.raises(TypeError, match="incompatible dtype"):
        cujit.to_device(cujit.to_device(np.zeros(1, [("y", "i8")])[0]), to=drec)
    assert drec.copy_to_host()["x"] == 0.0
    with pytest.raises(TypeError, match="DeviceNDArray or DeviceRecord"):
        cujit.to_device(dst, to=cujit.mapped_array(4))
    with pytest.raises(TypeError, match="stream"):
        cujit.to_device(np.zeros(4), to=dst, stream=2.5)


def test_to_device_rejects_object_arrays():
    with pytest.raises(TypeError, match="object"):
        cujit.to_device(np.array([object(), None]))


def test_setitem_errors_leave_array_untouched():
    d = cujit.to_device(np.arange(12).reshape(3, 4))
    with pytest.raises(ValueError, match=r"broadcast.*\(3,\).*\(3,4\)"):
        d[:] = np.arange(3)
    with pytest.raises(ValueError, match="broadcast"):
        d[0] = cujit.to_device(np.arange(3))
    with pytest.raises(IndexError, match="out of bounds"):
        d[3] = 1
    with pytest.raises(IndexError, match="too many"):
        d[0, 0, 0] = 1
    with pytest.raises(TypeError):
        d[[0, 1]] = 1
    with pytest.raises(ValueError):
        d[0] = "abc"
    assert np.array_equal(d.copy_to_host(), np.arange(12).reshape(3, 4))


def test_stream_arguments_must_be_streams():
    d = cujit.to_device(np.arange(4.0))
    for bad in ("0", 1.0, 3, object()):
        with pytest.raises(TypeError, match="stream"):
            d.copy_to_host(stream=bad)
        with pytest.raises(TypeError, match="stream"):
            cujit.to_device(np.arange(4.0), stream=bad)
        with pytest.raises(TypeError, match="stream"):
            d.copy_to_device(np.arange(4.0), stream=bad)


def test_view_errors():
    d = cujit.device_array((4, 6))
    with pytest.raises(NotImplementedError, match="needs a copy"):
        d[:, :3].reshape(12)
    with pytest.raises(ValueError, match="cannot reshape"):
        d.reshape(5, 5)
    with pytest.raises(ValueError, match="contiguous"):
        d[:, ::2].view(np.int32)
    with pytest.raises(ValueError, match="1-D"):
        d.split(2)
    with pytest.raises(ValueError, match="unit stride"):
        d[0, ::2].split(2)
    with pytest.raises(ValueError, match="size not equal to one"):
        d.squeeze(0)


@pytest.mark.parametrize("desc, exc, match", [
    ("notadict", TypeError, "dict"),
    ({"shape": (2,), "typestr": "<f8", "data": (1 << 40, False), "version": 3,
      "mask": object()}, NotImplementedError, "Masked arrays are not supported"),
    ({"typestr": "<f8", "data": (1 << 40, False), "version": 3}, ValueError, "'shape'"),
    ({"shape": (2,), "typestr": "<f8", "data": 5, "version": 3}, ValueError, "data"),
    ({"shape": (2,), "typestr": "<zz", "data": (1 << 40, False), "version": 3}, ValueError,
     "typestr"),
    ({"shape": (2.5,), "typestr": "<f8", "data": (1 << 40, False), "version": 3}, ValueError,
     "shape"),
    ({"shape": (2,), "typestr": "<f8", "data": (1 << 40, False), "version": 3,
      "strides": (8, 8)}, ValueError, "strides"),
    ({"shape": (2,), "typestr": "<f8", "data": (0, False), "version": 3}, ValueError, "NULL"),
    ({"shape": (2,), "typestr": "<f8", "data": (1 << 40, False), "version": 3, "stream": 0},
     ValueError, "forbids"),
    ({"shape": (2,), "typestr": "<f8", "data": (1 << 40, False), "version": 3,
      "stream": "s"}, ValueError, "stream"),
    ({"shape": (2,), "typestr": "<f8", "data": (1 << 40, False), "version": "3"}, ValueError,
     "version"),
])
def test_malformed_cuda_array_interface(desc, exc, match):
    with pytest.raises(exc, match=match):
        cujit.from_cuda_array_interface(desc)


def test_as_cuda_array_needs_the_interface():
    with pytest.raises(TypeError, match="CUDA Array Interface"):
        cujit.as_cuda_array(np.zeros(3))
    assert not cujit.is_cuda_array(np.zeros(3))
    assert cujit.is_cuda_array(cujit.device_array(3))


def test_host_kind_argument_errors():
    with pytest.raises(TypeError):
        cujit.pinned_array(2.5)
    with pytest.raises(ValueError, match="order"):
        cujit.mapped_array(3, order="K")
    with pytest.raises(ValueError, match="negative"):
        cujit.managed_array(-3)
    with pytest.raises(TypeError, match="NumPy arrays"):
        with cujit.pinned([1, 2, 3]):
            pass
    with pytest.raises(TypeError, match="stream"):
        cujit.mapped_array(3, stream=2.0)


def test_masked_values_are_refused_everywhere_and_leave_the_destination():
    d = cujit.to_device(np.arange(4.0))
    m = np.ma.masked_array(np.full(4, 9.0), mask=[0, 1, 0, 0])
    with pytest.raises(NotImplementedError, match=r"np\.ma.*filled"):
        cujit.to_device(m)
    with pytest.raises(NotImplementedError, match="mask"):
        cujit.to_device(m, to=d)
    with pytest.raises(NotImplementedError, match="mask"):
        d[:] = m
    with pytest.raises(NotImplementedError, match="mask"):
        d[1] = np.ma.masked
    assert (d.copy_to_host() == np.arange(4.0)).all()
    assert (cujit.to_device(m.filled(0.0)).copy_to_host() == [9, 0, 9, 9]).all()


@pytest.mark.parametrize("dtype", [object, np.dtype([("a", "f8"), ("o", "O")])])
def test_object_dtypes_are_refused_before_allocating(dtype):
    # this context's allocation statistics, not the device's free memory: other processes
    # (pytest-xdist workers) allocate on the same GPU meanwhile
    mm = cujit.current_context().memory_manager
    before = mm.get_stats()
    for make in (cujit.device_array, cujit.pinned_array, cujit.mapped_array,
                 cujit.managed_array):
        with pytest.raises(TypeError, match="object|O"):
            make(3, dtype=dtype)
    with pytest.raises(TypeError, match="object|O"):
        cujit.to_device(np.zeros(2, dtype))
    after = mm.get_stats()
    assert (after.alloc_count, after.bytes_in_use, after.host_bytes_in_use) == \
        (before.alloc_count, before.bytes_in_use, before.host_bytes_in_use)


@pytest.mark.parametrize("make", ["mapped_array_like", "pinned_array_like",
                                  "device_array_like"])
def test_like_allocators_refuse_none(make):
    with pytest.raises(TypeError, match="None"):
        getattr(cujit, make)(None)


@pytest.mark.parametrize("key", [1.5, np.float64(1), (0, 1.5), (Ellipsis, 0.5)])
def test_non_integer_key_is_numpy_index_error(key):
    """NumPy's exception type and text for a float key, on get and set; nothing written."""
    h = np.arange(6.0).reshape(2, 3)
    with pytest.raises(IndexError) as want:
        h[key]
    d = cujit.to_device(h)
    with pytest.raises(IndexError) as got:
        d[key]
    assert str(got.value) == str(want.value)
    with pytest.raises(IndexError, match="valid indices"):
        d[key] = 7.0
    np.testing.assert_array_equal(d.copy_to_host(), h)


def test_array_key_is_type_error():
    # advanced (array) indexing is not supported on device arrays: a TypeError saying which
    d = cujit.to_device(np.arange(6.0))
    with pytest.raises(TypeError, match="valid indices of a device array"):
        d[np.array([0.5, 1.5])]


def test_empty_host_array_keeps_its_strides_on_the_device():
    # numba issue 8477: the strides of an empty array do not matter, and copies between
    # empty arrays of different strides succeed both ways
    host = np.ndarray(shape=(0,), strides=(0,), dtype=np.int8)
    dev = cujit.to_device(host)
    assert dev.shape == (0,) and dev.strides == (0,)
    other = cujit.device_array((0,), np.int8, strides=(8,))
    other.copy_to_device(dev)
    dev.copy_to_device(other)
    other.copy_to_host(host)
