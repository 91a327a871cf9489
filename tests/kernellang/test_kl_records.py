"""Records as kernel data (numba-cuda's test_record_dtype behaviour): record scalars
(``np.void``, ``np.record``, ``DeviceRecord``) as arguments with written fields visible
afterwards, whole-record assignment, nested arrays (1-D, 2-D) of records, record arrays in
shared and local memory."""
import numpy as np
import pytest

import cujit as cuda
from cujit import types as T

from _kl_helpers import ptx_of

rec_dt = np.dtype([("a", np.float64), ("b", np.int32), ("v", np.float32, (3,)),
                   ("m", np.int16, (2, 2))], align=True)


def read_write_scalar(r, rec):
    r[0] = rec.a
    r[1] = rec.v[2]
    r[2] = rec.m[1, 0]
    rec.b = 7
    rec.a = rec.a * 2


def copy_records(out, inp):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = inp[i]


def nested(out, recs):
    i = cuda.grid(1)
    if i < recs.size:
        for k in range(3):
            recs[i].v[k] = i + k
        recs[i].m[1, 1] = recs[i].m[0, 0] + 1
        out[i] = recs[i].v[2] + recs[i].m[1, 1]


def shared_local_records(out):
    s = cuda.shared.array(4, rec_dt)
    loc = cuda.local.array(2, rec_dt)
    i = cuda.threadIdx.x
    s[i].a = i * 1.5
    s[i].v[0] = i
    loc[1].b = i + 10
    cuda.syncthreads()
    out[i] = s[3 - i].a + s[3 - i].v[0] + loc[1].b


def make_rec():
    arr = np.zeros(2, rec_dt)
    arr[0]["a"] = 2.5
    arr[0]["v"] = [1, 2, 3]
    arr[0]["m"] = [[1, 2], [3, 4]]
    return arr


def test_np_void_record_argument_fields_read_and_written_back():
    arr = make_rec()
    r = np.zeros(3)
    cuda.jit(read_write_scalar)[1, 1](r, arr[0])
    np.testing.assert_array_equal(r, [2.5, 3.0, 3.0])
    assert arr[0]["b"] == 7 and arr[0]["a"] == 5.0
    assert arr[1]["b"] == 0


def test_np_record_argument():
    rarr = make_rec().view(np.recarray)
    r = np.zeros(3)
    cuda.jit(read_write_scalar)[1, 1](r, rarr[0])
    np.testing.assert_array_equal(r, [2.5, 3.0, 3.0])
    assert rarr[0].b == 7


def test_device_record_argument():
    arr = make_rec()
    d = cuda.to_device(arr[0])
    assert T.typeof(d) is T.Record(rec_dt)
    r = np.zeros(3)
    cuda.jit(read_write_scalar)[1, 1](r, d)
    np.testing.assert_array_equal(r, [2.5, 3.0, 3.0])
    back = d.copy_to_host()
    assert back["b"] == 7 and back["a"] == 5.0


def test_whole_record_assignment():
    inp = make_rec()
    inp[1]["b"] = 9
    out = np.zeros(2, rec_dt)
    cuda.jit(copy_records)[1, 2](out, inp)
    assert out.tobytes() == inp.tobytes()


def test_whole_record_assignment_of_other_dtype_is_typing_error():
    other = np.zeros(2, np.dtype([("a", np.float64)]))
    with pytest.raises(cuda.TypingError, match="record of the same dtype"):
        cuda.jit(copy_records)[1, 2](np.zeros(2, rec_dt), other)


def test_nested_arrays_read_and_written():
    recs = np.zeros(3, rec_dt)
    recs["m"][:, 0, 0] = [5, 6, 7]
    out = np.zeros(3, np.float32)
    cuda.jit(nested)[1, 3](out, recs)
    np.testing.assert_array_equal(recs["v"], [[0, 1, 2], [1, 2, 3], [2, 3, 4]])
    np.testing.assert_array_equal(recs["m"][:, 1, 1], [6, 7, 8])
    np.testing.assert_array_equal(out, [8, 10, 12])


def test_record_arrays_in_shared_and_local_memory():
    out = np.zeros(4)
    cuda.jit(shared_local_records)[1, 4](out)
    np.testing.assert_array_equal(out, [(3 - i) * 2.5 + i + 10 for i in range(4)])


def test_unknown_field_is_typing_error():
    def bad(r, rec):
        r[0] = rec.nope
    with pytest.raises(cuda.TypingError, match="no field 'nope'"):
        cuda.jit(bad)[1, 1](np.zeros(1), make_rec()[0])


@pytest.mark.compile
@pytest.mark.parametrize("fn,args", [
    (read_write_scalar, (np.zeros(3), make_rec()[0])),
    (copy_records, (np.zeros(2, rec_dt), np.zeros(2, rec_dt))),
    (nested, (np.zeros(3, np.float32), np.zeros(3, rec_dt))),
    (shared_local_records, (np.zeros(4),)),
], ids=lambda v: getattr(v, "__name__", ""))
def test_records_compile(fn, args):
    assert ".entry" in ptx_of(fn, *args)


def store_nested(recs, src1, src2):
    recs[0]["v"] = src1
    recs[1].m = src2
    r = recs[2]
    r.v = src1


def test_store_array_into_nested_fields():
    recs = np.zeros(3, rec_dt)
    cuda.jit(store_nested)[1, 1](recs, np.array([1.0, 2.0, 3.0], np.float32),
                                 np.array([[1, 2], [3, 4]], np.int16))
    np.testing.assert_array_equal(recs["v"], [[1, 2, 3], [0, 0, 0], [1, 2, 3]])
    np.testing.assert_array_equal(recs["m"][1], [[1, 2], [3, 4]])


def test_store_wrong_ndim_into_nested_field_is_typing_error():
    with pytest.raises(cuda.TypingError, match="cannot store"):
        cuda.jit(store_nested)[1, 1](np.zeros(3, rec_dt), np.zeros((3, 1), np.float32),
                                     np.zeros((2, 2), np.int16))


@pytest.mark.compile
def test_store_nested_compiles():
    assert ".entry" in ptx_of(store_nested, np.zeros(3, rec_dt), np.zeros(3, np.float32),
                              np.zeros((2, 2), np.int16))


def test_launcher_conversion_of_host_records_and_tuples():
    # the real-driver path's conversion (launcher.convert_arg), checked on either backend
    from cujit.dispatch import launcher as ln
    arr = make_rec()
    dev, backs, fast = ln.convert_arg(0, arr[0], 0)
    assert T.typeof(dev) is T.Record(rec_dt) and fast is False
    dev.copy_to_device(np.array([(9.0, 4, [0, 0, 0], [[0, 0], [0, 0]])], rec_dt)[0])
    for host, d in backs:
        host.copy_back(d, 0)
    assert arr[0]["a"] == 9.0 and arr[0]["b"] == 4 and arr[1]["a"] == 0.0
    h = np.zeros(2)
    conv, backs, fast = ln.convert_arg(0, (h, 3, (h,)), 0)
    assert conv[1] == 3 and hasattr(conv[0], "_data_ptr") and hasattr(conv[2][0], "_data_ptr")
    assert len(backs) == 2 and all(b[0] is h for b in backs)


@cuda.jit(device=True)
def bump(r, by):
    r.b = r.b + by
    r.v[0] = r.a
    return r.b


def records_through_device_function(recs, out):
    i = cuda.grid(1)
    if i < recs.size:
        out[i] = bump(recs[i], i + 1)


def test_record_passed_to_device_function():
    recs = np.zeros(2, rec_dt)
    recs["a"] = [1.5, 2.5]
    out = np.zeros(2, np.int32)
    cuda.jit(records_through_device_function)[1, 2](recs, out)
    np.testing.assert_array_equal(recs["b"], [1, 2])
    np.testing.assert_array_equal(recs["v"][:, 0], [1.5, 2.5])
    np.testing.assert_array_equal(out, [1, 2])


@pytest.mark.compile
def test_record_through_device_function_compiles():
    assert ".entry" in ptx_of(records_through_device_function, np.zeros(2, rec_dt),
                              np.zeros(2, np.int32))


POS = np.dtype([("g", np.int32), ("h", np.float32, 2)], align=True)


def by_position(arr, out):
    out[0] = arr[0][0]          # rec[0]: the first field, as NumPy indexes a record
    out[1] = arr[1][-1][1]      # rec[-1]: the last one (an array field)
    arr[1][0] = 7


def test_record_fields_by_position():
    a = np.zeros(2, POS)
    a[0] = (5, (1, 2))
    a[1] = (6, (3, 4))
    out = np.zeros(2)
    cuda.jit(by_position)[1, 1](a, out)
    assert out.tolist() == [5.0, 4.0] and a[1]["g"] == 7


def test_record_position_out_of_range_is_typing_error():
    def k(arr, out):
        out[0] = arr[0][2]
    with pytest.raises(cuda.TypingError, match="constant field name or position"):
        cuda.jit(k)[1, 1](np.zeros(1, POS), np.zeros(1))


@pytest.mark.compile
def test_record_fields_by_position_compile():
    assert ".entry" in ptx_of(by_position, argtypes=(T.from_dtype(POS)[::1], T.float64[::1]))


# ---- ndarray.view(dtype) --------------------------------------------------------------------
def reinterpret(byte_arr, start, stop, output):
    output[0] = byte_arr[start:stop].view(np.int32)[0]


def test_view_reinterprets_bytes_as_numpy():
    # numba-cuda's test_array_methods: a slice of bytes seen as int32
    kernel = cuda.jit(reinterpret)
    byte_arr = np.arange(256, dtype=np.uint8)
    for start in range(0, 256, 64):
        out = np.zeros(1, np.int32)
        kernel[1, 1](byte_arr, start, start + 4, out)
        assert out[0] == byte_arr[start:start + 4].view(np.int32)[0]


U2 = np.dtype("u2")


def same_size_views(a, f, u):
    v = a.view(T.float32)             # a cujit type names the dtype too
    f[0] = v[1]
    w = a[::2].view(np.uint32)        # same element size: any layout
    u[0] = w[1]
    m = a.reshape(2, 2).view(U2)      # a captured np.dtype
    u[1] = m.shape[1]


def test_view_of_the_same_and_a_smaller_element_size():
    a = np.arange(4, dtype=np.int32)
    a[1] = np.float32(2.5).view(np.int32)
    f, u = np.zeros(1, np.float32), np.zeros(2, np.uint32)
    cuda.jit(same_size_views)[1, 1](a, f, u)
    assert f[0] == 2.5 and u[0] == 2 and u[1] == 4


def bad_view(a, out):
    out[0] = a[::2].view(np.uint8)[0]


def test_view_of_a_non_contiguous_last_axis_raises_value_error():
    with pytest.raises(ValueError, match="last axis must be contiguous"):
        cuda.jit(bad_view, debug=True, opt=False)[1, 1](np.arange(4, dtype=np.int32),
                                                        np.zeros(1, np.uint8))


def test_view_needs_a_scalar_dtype():
    def k(a, out):
        out[0] = a.view(3)[0]
    with pytest.raises(cuda.TypingError, match="one scalar dtype"):
        cuda.jit(k)[1, 1](np.zeros(2), np.zeros(1))


@pytest.mark.compile
def test_view_compiles():
    assert ".entry" in ptx_of(reinterpret, argtypes=(T.uint8[::1], T.int64, T.int64,
                                                     T.int32[::1]))
    assert ".entry" in ptx_of(bad_view, argtypes=(T.int32[::1], T.uint8[::1]))


# ---- arr.copy() of a captured array ---------------------------------------------------------
VAL = np.array([1, 2, 3])[::-1]


def copy_captured(out):
    q = VAL.copy()          # a writable local copy, in C order
    q[0] += 10
    for i in range(len(out)):
        out[i] = q[i]


def test_copy_of_a_captured_array_is_a_writable_local_copy():
    # numba-cuda's test_array_methods (test_array_copy)
    out = np.zeros(3)
    cuda.jit(copy_captured)[1, 1](out)
    assert out.tolist() == [13.0, 2.0, 1.0]
    assert VAL.tolist() == [3, 2, 1]


def test_copy_of_an_argument_array_is_typing_error():
    def k(a, out):
        out[0] = a.copy()[0]
    with pytest.raises(cuda.TypingError, match="captured NumPy array"):
        cuda.jit(k)[1, 1](np.zeros(2), np.zeros(1))


@pytest.mark.compile
def test_copy_of_a_captured_array_compiles():
    assert ".entry" in ptx_of(copy_captured, argtypes=(T.float64[::1],))


# aligned, so that every element's fields sit at their natural alignment (itemsize 24)
flat_dt = np.dtype([("value1", np.int64), ("value2", np.float64), ("flag", np.bool_)],
                   align=True)
packed_dt = np.dtype([("value1", np.int64), ("value2", np.float64), ("flag", np.bool_)])


def fields_as_attributes(x, out1, out2):
    i = cuda.grid(1)
    if i < x.size:
        out1[i] = x.value1[i]
        out2[i] = x.value2[i] * 2
        x.value1[i] = -x.value1[i]


def _flat_records(n):
    a = np.recarray((n,), dtype=flat_dt)
    a.value1 = np.arange(n, dtype=np.int64)
    a.value2 = np.arange(n, dtype=np.float64) / 100
    return a


def test_record_array_fields_read_and_written_as_attributes():
    # numba-cuda's TestRecarray: x.value1 is the strided array of that field
    a = _flat_records(16)
    out1, out2 = np.zeros(16, np.int64), np.zeros(16)
    cuda.jit(fields_as_attributes)[1, 16](a, out1, out2)
    np.testing.assert_array_equal(out1, np.arange(16))
    np.testing.assert_array_equal(out2, np.arange(16) / 50)
    np.testing.assert_array_equal(a.value1, -np.arange(16))


def field_attribute_of_strided_view(x, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = x[::2].value2[i]


def test_record_field_attribute_of_a_strided_view():
    a = _flat_records(8)
    out = np.zeros(4)
    cuda.jit(field_attribute_of_strided_view)[1, 4](a, out)
    np.testing.assert_array_equal(out, a.value2[::2])


def array_attribute_wins_over_field(x, out):
    out[0] = x.size


def test_array_attributes_win_over_same_named_fields():
    dt = np.dtype([("size", np.int32), ("b", np.float32)])
    out = np.zeros(1, np.int64)
    cuda.jit(array_attribute_wins_over_field)[1, 1](np.zeros(5, dt), out)
    assert out[0] == 5


def nested_field_attribute(out, recs):
    out[0] = recs.v[0, 1]


def missing_field_attribute(out, recs):
    out[0] = recs.nope[0]


def test_nested_or_missing_field_attributes_are_typing_errors():
    with pytest.raises(cuda.TypingError, match="field 'v' of .* is a nested array"):
        cuda.jit(nested_field_attribute)[1, 1](np.zeros(1), np.zeros(2, rec_dt))
    with pytest.raises(cuda.TypingError, match="arrays have no attribute 'nope' .*the record "
                                               "fields a, b, v, m"):
        cuda.jit(missing_field_attribute)[1, 1](np.zeros(1), np.zeros(2, rec_dt))


def test_fields_of_packed_records_that_elements_misalign_are_typing_errors():
    # itemsize 17: element 1's int64 sits at byte 17, and an 8-byte load of it faults on a
    # GPU (CUDA_ERROR_MISALIGNED_ADDRESS), so the field cannot be an int64 array
    a = np.recarray((4,), dtype=packed_dt)
    with pytest.raises(cuda.TypingError, match=r"field 'value1' \(int64\) of the packed "
                                               r"record .* not aligned to 8 bytes .*x\[i\]"
                                               r"\.value1.*align=True"):
        cuda.jit(fields_as_attributes)[1, 4](a, np.zeros(4, np.int64), np.zeros(4))


def packed_flag_attribute(x, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = x.flag[i]


def test_a_byte_field_of_a_packed_record_is_an_array_attribute():
    a = np.recarray((5,), dtype=packed_dt)
    a.flag = [True, False, True, True, False]
    out = np.zeros(5, np.bool_)
    cuda.jit(packed_flag_attribute)[1, 5](a, out)
    np.testing.assert_array_equal(out, a.flag)


@pytest.mark.compile
def test_record_fields_as_attributes_compile():
    ptx = ptx_of(fields_as_attributes, _flat_records(4), np.zeros(4, np.int64), np.zeros(4))
    assert ".entry" in ptx and "ld.global.f64" in ptx
