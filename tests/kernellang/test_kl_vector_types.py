"""CUDA vector types (numba.cuda's float32x4, int2, …): the names and aliases, construction
from scalars and vectors in kernels and on the host, .x-.w, vectors as device-function
arguments and results and as kernel arguments, the typing errors, and the PTX."""
import numpy as np
import pytest

import cujit as cuda
from cujit import types as T
from cujit.vector_types import VECTOR_TYPE_NAMES, vector_types
from _kl_helpers import ptx_of


def test_names_and_aliases_are_the_same_classes():
    assert len(vector_types) == 40 and len(VECTOR_TYPE_NAMES) == 88
    assert cuda.float4 is cuda.float32x4 and cuda.double2 is cuda.float64x2
    assert cuda.uchar4 is cuda.uint8x4 and cuda.short2 is cuda.int16x2
    assert cuda.int2 is cuda.int32x2 and cuda.longlong3 is cuda.int64x3
    for cls in vector_types.values():
        for alias in cls.aliases:
            assert getattr(cuda, alias) is cls


def test_host_construction_converts_and_flattens():
    v = cuda.float32x4(cuda.float32x2(1, 2), 3, 4.5)
    assert tuple(v) == (1.0, 2.0, 3.0, 4.5) and (v.x, v.y, v.z, v.w) == (1.0, 2.0, 3.0, 4.5)
    assert type(v.x) is np.float32
    assert tuple(cuda.int8x2(300, -1.7)) == (44, -1)      # C conversion: wrap, truncate
    assert repr(cuda.int32x2(1, 2)) == "int32x2(1, 2)"


def test_host_construction_errors():
    with pytest.raises(TypeError, match="needs 4 member"):
        cuda.float32x4(1, 2, 3)
    with pytest.raises(TypeError, match="takes vectors of float32"):
        cuda.float32x2(cuda.int32x2(1, 2))
    with pytest.raises(TypeError, match="takes scalars"):
        cuda.float32x2("a", 1)
    v = cuda.float32x2(1, 2)
    with pytest.raises(AttributeError, match="read-only"):
        v.x = 3


@cuda.jit(device=True)
def _swap(v):
    return cuda.float32x2(v.y, v.x)


def test_construction_and_members_in_a_kernel():
    @cuda.jit("void(float64[:])")
    def kernel(arr):
        v1 = cuda.float64x4(1.0, 3.0, 5.0, 7.0)
        v2 = cuda.short2(10, 11)
        v3 = cuda.float64x3(cuda.float64x2(v1.w, 2), v2.y)
        arr[0] = v1.x
        arr[1] = v1.y
        arr[2] = v1.z
        arr[3] = v1.w
        arr[4] = v2.x
        arr[5] = v2.y
        arr[6] = v3.x
        arr[7] = v3.y
        arr[8] = v3.z

    res = np.zeros(9)
    kernel[1, 1](res)
    assert res.tolist() == [1, 3, 5, 7, 10, 11, 7, 2, 11]


def test_every_vector_type_builds_from_its_base_type():
    for cls in vector_types.values():
        assert _readout(cls) == list(range(1, cls.num_elements + 1)), cls.name


def _readout(cls):
    base, n = cls.base_type, cls.num_elements
    if n == 1:
        def kernel(res):
            v = cls(base(1))
            res[0] = v.x
    elif n == 2:
        def kernel(res):
            v = cls(base(1), base(2))
            res[0] = v.x
            res[1] = v.y
    elif n == 3:
        def kernel(res):
            v = cls(base(1), base(2), base(3))
            res[0] = v.x
            res[1] = v.y
            res[2] = v.z
    else:
        def kernel(res):
            v = cls(base(1), base(2), base(3), base(4))
            res[0] = v.x
            res[1] = v.y
            res[2] = v.z
            res[3] = v.w
    res = np.zeros(n)
    cuda.jit(kernel)[1, 1](res)
    return res.tolist()


def test_vectors_as_device_function_arguments_results_and_kernel_arguments():
    @cuda.jit
    def kernel(out, v):
        s = _swap(v)
        out[0] = s.x
        out[1] = s.y

    out = np.zeros(2, np.float32)
    kernel[1, 1](out, cuda.float32x2(1.5, 2.5))
    assert out.tolist() == [2.5, 1.5]
    assert T.typeof(cuda.float32x2(1, 2)) is cuda.float32x2.vector_type


def test_typing_errors_name_the_problem():
    def too_few(out):
        v = cuda.float32x4(1.0, 2.0)
        out[0] = v.x

    def other_base(out):
        v = cuda.float32x2(cuda.int32x2(1, 2))
        out[0] = v.x

    def complex_member(out):
        v = cuda.float32x2(1j, 2.0)
        out[0] = v.x

    for fn, msg in ((too_few, "needs 4 member"), (other_base, "takes vectors of float32"),
                    (complex_member, "takes integers, floats")):
        with pytest.raises(cuda.TypingError, match=msg):
            cuda.compile_ptx(fn, "void(float32[::1])")


def test_members_are_read_only_in_kernels():
    def assign(out):
        v = cuda.float32x2(1.0, 2.0)
        v.x = 3.0
        out[0] = v.x

    with pytest.raises(cuda.TypingError):
        cuda.compile_ptx(assign, "void(float32[::1])")


@pytest.mark.compile
def test_construction_compiles_to_register_moves():
    def kernel(out, a):
        v = cuda.float32x4(a[0], cuda.float32x2(a[1], a[2]), 4.0)
        out[0] = v.x + v.y + v.z + v.w

    ptx = ptx_of(kernel, argtypes=(T.float32[::1], T.float32[::1]))
    assert ".entry" in ptx
    assert "st.local" not in ptx and "ld.local" not in ptx    # an aggregate in registers


def test_host_float_out_of_range_of_an_integer_vector_is_a_value_error():
    with pytest.raises(ValueError, match="out of the range of int8"):
        cuda.int8x2(1000.0, 1)
    with pytest.raises(ValueError, match="nan"):
        cuda.int32x1(float("nan"))


def test_kernel_conversion_of_members_is_the_kernels_cast():
    @cuda.jit
    def convert(out, f):
        v = cuda.int32x2(f[0], f[1])
        w = cuda.uint8x2(300, f[0])
        out[0] = v.x
        out[1] = v.y
        out[2] = w.x
        out[3] = w.y
        out[4] = cuda.int32(f[1])

    out = np.zeros(5, np.int64)
    convert[1, 1](out, np.array([2.9, -3.7]))
    assert out.tolist() == [2, -3, 44, 2, -3]


def test_kernel_members_from_nan_and_huge_floats_match_the_cast():
    @cuda.jit
    def convert(out, f):
        for i in range(f.shape[0]):
            out[i, 0] = cuda.int32x1(f[i]).x
            out[i, 1] = cuda.int32(f[i])

    f = np.array([np.nan, 1e30, -1e30, np.inf])
    out = np.zeros((4, 2), np.int64)
    convert[1, 1](out, f)
    assert out[:, 0].tolist() == out[:, 1].tolist()


def test_the_base_class_and_unknown_names_are_refused():
    from cujit import vector_types as V
    with pytest.raises(TypeError, match="abstract"):
        V.VectorValue(1, 2)
    with pytest.raises(AttributeError, match="no attribute 'float5'"):
        V.float5
    assert V.float4 is cuda.float32x4 and V.is_vector_class(cuda.int2)
    assert not V.is_vector_class(V.VectorValue) and not V.is_vector_class(tuple)


def test_keyword_arguments_to_a_vector_are_a_typing_error():
    def kw(out):
        v = cuda.float32x2(1.0, y=2.0)
        out[0] = v.x

    with pytest.raises(cuda.TypingError, match="takes no keyword arguments"):
        cuda.compile_ptx(kw, "void(float32[::1])")
