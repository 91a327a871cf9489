"""Shapes as NumPy takes them, the ``DeviceNDArray(shape, strides, dtype, stream, gpu_data)``
constructor as numba.cuda's, and NumPy's wording for NumPy-semantics errors (issue 10)."""
import numpy as np
import pytest

import cujit
from cujit.arrays.devicearray import DeviceNDArray


@pytest.mark.parametrize("shape, want", [
    (np.array([10, 10]), (10, 10)),
    (np.array([3], dtype=np.uint8), (3,)),
    (range(2, 4), (2, 3)),
    ([np.int32(2), 5], (2, 5)),
    (np.int64(4), (4,)),
    (np.array(4), (4,)),
    (np.array([], dtype=np.intp), ()),
])
def test_any_sequence_of_integers_is_a_shape(shape, want):
    assert np.empty(shape).shape == want                  # the NumPy rule being followed
    assert cujit.device_array(shape).shape == want
    assert cujit.pinned_array(shape).shape == want
    assert cujit.mapped_array(shape).shape == want
    assert DeviceNDArray(shape, np.empty(want).strides, np.float64).shape == want


@pytest.mark.parametrize("bad", [np.array([2.0, 3.0]), np.array([[1, 2]]), "3", 3.0,
                                 [2, None]])
def test_non_integer_shapes_are_type_errors(bad):
    with pytest.raises(TypeError, match="shape"):
        cujit.device_array(bad)


def test_reshape_takes_an_integer_array():
    d = cujit.to_device(np.arange(6))
    assert d.reshape(np.array([2, 3])).shape == (2, 3)
    assert d.reshape(np.array([-1, 2])).shape == (3, 2)


def test_constructor_with_gpu_data_uses_that_memory():
    mem = cujit.current_context().memalloc(32)
    d = DeviceNDArray((4,), (8,), np.float64, gpu_data=mem)
    assert d.gpu_data is mem and d._data_ptr == mem.device_pointer_value
    d.copy_to_device(np.arange(4.0))
    e = DeviceNDArray((2,), (16,), np.float64, gpu_data=mem)   # every other element
    assert e.copy_to_host().tolist() == [0.0, 2.0]


@pytest.mark.parametrize("bad", [12345, "mem", None.__class__, object()])
def test_constructor_rejects_a_gpu_data_that_is_not_a_pointer(bad):
    with pytest.raises(TypeError, match="gpu_data"):
        DeviceNDArray((2,), (8,), np.float64, gpu_data=bad)


def test_constructor_rejects_gpu_data_too_small_for_the_shape():
    mem = cujit.current_context().memalloc(16)
    with pytest.raises(ValueError, match="reaches 24 bytes but gpu_data holds 16"):
        DeviceNDArray((3,), (8,), np.float64, gpu_data=mem)
    assert DeviceNDArray((0,), (8,), np.float64, gpu_data=mem)._data_ptr == 0


@pytest.mark.parametrize("shape, dstrides, hstrides", [
    ((0,), (8,), (16,)), ((2, 0), (8, 8), (0, 8)), ((0, 3), (24, 8), (8, 0)),
    ((0, 2, 0), (8, 8, 8), (16, 0, 8))])
def test_zero_size_copies_with_strides_unlike_the_destination(shape, dstrides, hstrides):
    d = DeviceNDArray(shape, dstrides, np.float64)
    assert d.size == 0 and d._data_ptr == 0 and d.gpu_data is None and d.strides == dstrides
    h = np.ndarray(shape, np.float64, buffer=np.empty(0), strides=hstrides)
    assert d.copy_to_host(h) is h                        # device -> host
    d.copy_to_device(h)                                  # host -> device
    other = DeviceNDArray(shape, tuple(reversed(dstrides)), np.float64)
    other.copy_to_device(d)                              # device -> device, both ways
    d.copy_to_device(other)
    d[...] = other
    d[...] = h
    assert d.copy_to_host().shape == shape
    assert cujit.to_device(h).shape == shape


# -- NumPy's wording -----------------------------------------------------------------------

def _same_error(np_call, cujit_call):
    with pytest.raises(Exception) as want:
        np_call()
    with pytest.raises(type(want.value)) as got:
        cujit_call()
    assert str(got.value) == str(want.value)


@pytest.mark.parametrize("shape, value", [
    ((2, 3), np.zeros((1, 4))), ((2, 3), np.zeros(4)), ((2, 3), np.zeros((3, 3))),
    ((2, 3), np.zeros((1, 1, 4))), ((2, 3), [1, 2]), ((3,), np.zeros((2, 3))),
    ((2, 3), np.zeros((2, 1, 3)))])
def test_broadcast_errors_use_numpys_words(shape, value):
    a = np.zeros(shape)
    d = cujit.to_device(a)

    def assign(x, v):
        x[...] = v
    _same_error(lambda: assign(a, value), lambda: assign(d, value))
    dv = cujit.to_device(np.asarray(value))
    _same_error(lambda: assign(a, value), lambda: assign(d, dv))
    assert (d.copy_to_host() == 0).all()


@pytest.mark.parametrize("axes", [(0, 0), (0,), (0, 5), (0, -3), (1, 2, 0)])
def test_transpose_errors_use_numpys_words(axes):
    a = np.zeros((2, 3))
    _same_error(lambda: a.transpose(axes), lambda: cujit.to_device(a).transpose(axes))


@pytest.mark.parametrize("make, dtype", [
    (lambda m: m(np.zeros(3, np.int8)), np.int16),
    (lambda m: m(np.zeros(3, "V3")), np.int16),
    (lambda m: m(np.zeros((3, 2), np.int32))[:, :1], np.int64),
    (lambda m: m(np.zeros((2, 3), np.int32)).T, np.int64),
    (lambda m: m(np.zeros((), np.int32)), np.int64)])
def test_view_errors_use_numpys_words(make, dtype):
    a = make(lambda x: x)
    d = make(cujit.to_device)
    assert d.shape == a.shape and d.strides == a.strides
    _same_error(lambda: a.view(dtype), lambda: d.view(dtype))


def test_zero_length_int8_with_stride_8_copies_to_a_stride_0_host_array():
    """numba issue 8477: strides are irrelevant when the length is zero."""
    dev = DeviceNDArray(shape=(0,), strides=(8,), dtype=np.int8)
    host = np.ndarray(shape=(0,), strides=(0,), dtype=np.int8)
    assert host.strides == (0,)
    dev.copy_to_host(host)
    dev.copy_to_device(host)
    other = DeviceNDArray(shape=(0,), strides=(0,), dtype=np.int8)
    dev.copy_to_device(other)
    other.copy_to_device(dev)
    assert dev.copy_to_host().shape == (0,)


def test_gpu_data_keyword_with_a_foreign_pointer_object():
    """The pattern of libraries that wrap their own device memory (a MemoryPointer over a
    cuda-bindings CUdeviceptr-like object)."""
    src = cujit.to_device(np.arange(6, dtype=np.int32))

    class DevPtr:                                   # stands in for CUdeviceptr
        def __init__(self, v):
            self.v = v

        def __int__(self):
            return self.v

    mem = cujit.MemoryPointer(cujit.current_context(), DevPtr(src._data_ptr), size=24,
                              owner=src)
    ary = DeviceNDArray(shape=(6,), strides=(4,), dtype=np.dtype(np.int32), gpu_data=mem)
    assert ary.copy_to_host().tolist() == list(range(6))


@pytest.mark.parametrize("newshape", [(4,), (4, 5), (-1, 4), (5, -1), (2, -1, 4), (-1, 4, 5)])
def test_reshape_errors_use_numpys_words(newshape):
    a = np.zeros((2, 3))
    _same_error(lambda: a.reshape(newshape), lambda: cujit.to_device(a).reshape(newshape))


def test_reshape_to_float_dims_is_a_type_error_even_when_equal():
    d = cujit.to_device(np.zeros((2, 3)))
    with pytest.raises(TypeError, match="must be ints"):
        d.reshape(2.0, 3)


def test_np_array_copy_false_uses_numbas_words():
    d = cujit.to_device(np.asarray([1.0, 2.0, 3.0]))
    with pytest.raises(ValueError, match="`copy=False` is not"):
        np.array(d, copy=False)
    assert np.array(d, dtype=np.int32).tolist() == [1, 2, 3]


def test_device_array_methods_get_every_piece_from_the_modules_above():
    # DeviceNDArray reaches records, IPC handles, CAI/DLPack and to_device through
    # devicearray.provide (those modules import devicearray, not the other way round).
    import pickle
    from cujit.arrays import devicearray, dlpack, interop, ipc, record, api
    assert devicearray._above == {
        "DeviceRecord": record.DeviceRecord, "to_device": api.to_device,
        "IpcArrayHandle": ipc.IpcArrayHandle, "as_cuda_array": interop.as_cuda_array,
        "to_dlpack_capsule": dlpack.to_dlpack_capsule, "dlpack_device": dlpack.dlpack_device}
    d = cujit.to_device(np.arange(5.0))
    np.testing.assert_array_equal(pickle.loads(pickle.dumps(d)).copy_to_host(), np.arange(5.0))
    rec = cujit.to_device(np.zeros(2, [("a", "i4"), ("b", "f8")]))[1]
    assert isinstance(rec, record.DeviceRecord) and cujit.arrays.is_device_array(rec)


def test_provide_refuses_an_unknown_piece_and_keeps_what_it_has():
    from cujit.arrays import devicearray
    before = dict(devicearray._above)
    with pytest.raises(TypeError, match="to_devic"):
        devicearray.provide(to_devic=print)
    devicearray.provide()            # None keeps what was given
    assert devicearray._above == before
