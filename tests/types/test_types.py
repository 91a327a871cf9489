"""cujit.types: scalar/array/record/tuple types, typeof, signatures (Numba's rules)."""
import pickle

import numpy as np
import pytest
from hypothesis import given, strategies as st

import cujit
from cujit import types as T
from cujit.types import (Array, Record, Signature, Tuple, UniTuple, as_dtype_type, boolean,
                         complex64, complex128, float16, float32, float64, from_dtype, int8,
                         int16, int32, int64, parse_signature, typeof, uint8, uint64, void)

SCALARS = [T.boolean, T.int8, T.int16, T.int32, T.int64, T.uint8, T.uint16, T.uint32,
           T.uint64, T.float16, T.float32, T.float64, T.complex64, T.complex128]


@pytest.mark.parametrize("t", SCALARS, ids=str)
def test_np_dtype_of_scalar_type(t):
    # numpy (2.4 here, 2.5 on the device) reads the .dtype attribute
    assert np.dtype(t) == t.dtype
    assert np.zeros(2, dtype=t).dtype == t.dtype
    assert from_dtype(t.dtype) is t
    assert as_dtype_type(str(t)) is t


def test_public_names_are_the_types():
    assert cujit.float32 is T.float32 and cujit.bool_ is cujit.boolean
    assert cujit.intp is int64 and cujit.uintp is uint64
    assert repr(cujit.float32) == "float32" and repr(cujit.void) == "none"


def test_cast_by_call():
    v = float32(1.5)
    assert type(v) is np.float32 and v == 1.5
    assert type(int8(3)) is np.int8
    assert type(boolean(1)) is np.bool_
    assert complex64(1 + 2j) == np.complex64(1 + 2j)


def test_interned_and_hashable():
    assert T.Float(32) is float32
    assert Array(float32, 2, "C") is float32[:, ::1]
    assert {float32[:]: 1}[Array(float32, 1, "A")] == 1
    assert pickle.loads(pickle.dumps(float32[:, ::1])) is float32[:, ::1]
    assert pickle.loads(pickle.dumps(int16)) is int16


def test_array_spelling():
    assert float32[:].layout == "A" and float32[:].ndim == 1
    assert float32[::1].layout == "C"
    assert float32[:, ::1].layout == "C"
    assert float32[::1, :].layout == "F"
    assert float32[:, :, :].layout == "A" and float32[:, :, :].ndim == 3
    assert Array(float32, 1, "F") is float32[::1]   # 1-d contiguous is spelled C
    assert str(float32[:, ::1]) == "array(float32, 2d, C)"


@pytest.mark.parametrize("spec", [(slice(None, None, 2),), (slice(1, None),),
                                  (slice(None, None, 1), slice(None, None, 1)), (0,),
                                  (slice(None), slice(None, None, 1), slice(None))])
def test_bad_array_spelling(spec):
    with pytest.raises(ValueError, match="array type spec"):
        float32[spec]


def test_array_bad_args():
    with pytest.raises(ValueError, match="ndim"):
        Array(float32, -1)
    with pytest.raises(ValueError, match="layout"):
        Array(float32, 1, "X")
    with pytest.raises(TypeError, match="dtype"):
        Array("int33", 1)


def test_signatures():
    s = void(float32[:], int32)
    assert isinstance(s, Signature) and s.return_type is void
    assert s.args == (float32[:], int32)
    assert parse_signature("void(float32[:], int32)") == s
    assert parse_signature((float32[:], int32)).args == s.args
    assert parse_signature((float32[:], int32)).return_type is None
    assert parse_signature("float32[:, ::1], int32").args == (float32[:, ::1], int32)
    assert parse_signature("float64(float64)") == float64(float64)
    assert parse_signature("void()").args == ()
    assert repr(s) == "none(array(float32, 1d, A), int32)"


@pytest.mark.parametrize("bad", ["void(float33[:])", "void(", "1 + 2", "__import__('os')"])
def test_bad_signature_strings(bad):
    with pytest.raises(ValueError, match="signature"):
        parse_signature(bad)


def test_bad_signature_objects():
    with pytest.raises(TypeError, match="signature"):
        parse_signature(3)
    with pytest.raises(TypeError, match="not a cujit type"):
        parse_signature((float32, "x"))
    with pytest.raises(TypeError):
        float32(1, 2)


def test_typeof_python_scalars():
    assert typeof(1) is int64 and typeof(-5) is int64
    assert typeof(2 ** 63) is uint64
    assert typeof(1.0) is float64 and typeof(True) is boolean and typeof(1j) is complex128
    with pytest.raises(ValueError, match="int64 or uint64"):
        typeof(2 ** 64)


@pytest.mark.parametrize("t", SCALARS, ids=str)
def test_typeof_numpy_scalars(t):
    assert typeof(t.dtype.type(1)) is t


def test_typeof_arrays():
    a = np.zeros((3, 4), np.float32)
    assert typeof(a) is float32[:, ::1]
    assert typeof(a.T) is float32[::1, :]
    assert typeof(a[:, ::2]) is float32[:, :]
    assert typeof(np.zeros(5, np.int8)[::2]) is int8[:]
    assert typeof(np.zeros((), np.float64)) is Array(float64, 0, "C")
    assert typeof(np.zeros(0, np.uint8)) is uint8[::1]

    class Sub(np.ndarray):   # MappedNDArray / ManagedNDArray are ndarray subclasses
        pass
    assert typeof(np.zeros(4, np.float16).view(Sub)) is float16[::1]


def test_typeof_device_array_like_and_cai():
    class FakeDev:
        dtype = np.dtype(np.complex64)
        ndim = 2
        _layout = "F"
    assert typeof(FakeDev()) is complex64[::1, :]

    class FakeCAI:
        def __init__(self, shape, strides, typestr="<f4"):
            self.__cuda_array_interface__ = {"shape": shape, "strides": strides,
                                             "typestr": typestr, "data": (0, False),
                                             "version": 3}
    assert typeof(FakeCAI((3, 4), None)) is float32[:, ::1]
    assert typeof(FakeCAI((3, 4), (4, 12))) is float32[::1, :]
    assert typeof(FakeCAI((3, 4), (32, 8))) is float32[:, :]
    assert typeof(FakeCAI((5,), (16,), "<i8")) is int64[:]
    assert typeof(FakeCAI((5,), (8,), "<i8")) is int64[::1]


def test_typeof_records_and_tuples():
    dt = np.dtype([("a", "f4", (3,)), ("b", [("x", "f8"), ("y", "i4")])])
    r = typeof(np.zeros(1, dt)[0])
    assert isinstance(r, Record) and r.size == dt.itemsize
    assert r.fields["a"][0] is T.NestedArray(float32, (3,)) and r.fields["a"][1] == 0
    assert isinstance(r.fields["b"][0], Record) and r.fields["b"][1] == 12
    assert r.alignment == 8
    assert typeof(np.zeros(2, dt)) is Array(r, 1, "C")

    class FakeDeviceRecord:
        dtype = dt
    assert typeof(FakeDeviceRecord()) is r
    assert typeof((1, 2)) is UniTuple(int64, 2)
    assert typeof((1, 2.0)) is Tuple((int64, float64))
    assert Tuple((int32, int32)) is UniTuple(int32, 2)


def test_tuple_types_index_and_iterate_their_members():
    # numba-cuda's libdevice tests build one array type per member: [r[::1] for r in tuple_type]
    het = Tuple((float64, int32))
    uni = UniTuple(float32, 2)
    assert list(het) == [float64, int32] and list(uni) == [float32, float32]
    assert het[1] is int32 and het[-1] is int32 and uni[0] is float32
    assert het[:1] == (float64,)
    assert [m[::1] for m in het] == [Array(float64, 1, "C"), Array(int32, 1, "C")]
    with pytest.raises(IndexError):
        het[2]
    with pytest.raises(IndexError):
        uni[2]


def test_typeof_rejects():
    with pytest.raises(TypeError, match="cannot pass a value of type str"):
        typeof("x")
    with pytest.raises(TypeError, match="not supported"):
        typeof(np.zeros(2, dtype=object))
    with pytest.raises(TypeError, match="native byte order"):
        typeof(np.zeros(2, dtype=">f4"))


@pytest.mark.parametrize("spec,expect", [(float32, float32), (np.float32, float32),
                                         ("float32", float32), (np.dtype("f4"), float32),
                                         ("f8", float64), (int, int64), (float, float64),
                                         (bool, boolean), (complex, complex128)])
def test_as_dtype_type(spec, expect):
    assert as_dtype_type(spec) is expect


@pytest.mark.parametrize("bad", ["int33", "floaty", 3.5, void, float32[:]])
def test_as_dtype_type_rejects(bad):
    with pytest.raises(TypeError) as ei:
        as_dtype_type(bad)
    assert str(bad)[:5] in str(ei.value)


@given(st.lists(st.integers(1, 5), min_size=1, max_size=4), st.data())
def test_typeof_layout_matches_numpy_flags(shape, data):
    a = np.zeros(shape, np.float32)
    if data.draw(st.booleans()):
        a = a.T
    slicer = tuple(slice(None, None, data.draw(st.sampled_from([1, 2, -1]))) for _ in shape)
    a = a[slicer]
    t = typeof(a)
    assert t.ndim == a.ndim and t.dtype is float32
    if a.flags.c_contiguous:
        assert t.layout == "C"
    elif a.flags.f_contiguous:
        assert t.layout == "F"
    else:
        assert t.layout == "A"


def test_user_type_subclass_named_by_init():
    # numba.core.types.Type.__init__(name): extension code subclasses it this way
    class StructModelType(T.Type):
        def __init__(self):
            super().__init__(name="TestStructModelType")

    t = StructModelType()
    assert str(t) == "TestStructModelType"
    assert StructModelType() is t        # interned like every cujit type
    assert str(T.float32) == "float32"


def test_aligned_and_packed_dtypes_numpy_calls_equal_are_two_record_types():
    import numpy as np
    from cujit import types as ct
    packed = np.dtype([("x", np.float16), ("y", np.float16)])
    aligned = np.dtype([("x", np.float16), ("y", np.float16)], align=True)
    assert packed == aligned                # NumPy ignores the flag
    rp, ra = ct.Record(packed), ct.Record(aligned)
    assert rp is not ra and rp != ra and ra.aligned and not rp.aligned
    assert str(rp) != str(ra)
    assert ct.Record(np.dtype(packed.descr)) is rp


def test_record_field_alignment_is_what_every_packed_element_guarantees():
    packed = T.Record(np.dtype([("a", np.int8), ("b", np.float64), ("c", np.int32)]))
    assert packed.size == 13
    # an odd itemsize: elements start at any byte, so no field is aligned beyond 1
    assert [packed.field_alignment(n) for n in "abc"] == [1, 1, 1]
    even = T.Record(np.dtype([("a", np.int32), ("b", np.float64), ("c", np.int32)]))
    assert even.size == 16
    assert [even.field_alignment(n) for n in "abc"] == [16, 4, 4]
    aligned = T.Record(np.dtype([("a", np.int8), ("b", np.float64)], align=True))
    assert aligned.field_alignment("b") == 8
    with pytest.raises(KeyError):
        packed.field_alignment("z")
