"""C pointers (``CPointer`` / ``voidptr``): the types, their typing in kernels (indexing,
``ffi.from_buffer``, pointer and array parameters of declared C functions, cache hints),
the PTX they compile to (compile-only, the pip NVVM), linked C code using them, and launches
on a GPU."""
import pickle

import numpy as np
import pytest

import cujit as cuda
from cujit import types as T
from cujit.nvvm import linker, nvrtc
from cujit.dispatch.build import build_kernel
from cujit.frontend.errors import TypingError

cffi = pytest.importorskip("cffi")
ffi = cffi.FFI()

needs_tools = pytest.mark.skipif(
    not (linker.nvjitlink_available() and nvrtc.nvrtc_available()),
    reason="nvJitLink or NVRTC not installed")

SUM_CU = r'''
extern "C" __device__ int sum_reduce(float* ret, float* array, int n)
{
    float s = 0.0f;
    for (int i = 0; i < n; i++) s += array[i];
    *ret = s;
    return 0;
}
extern "C" __device__ void set_first(int* a, int v) { a[0] = v; }
extern "C" __device__ int first_of(int* ret, void* a) { *ret = ((int*)a)[0]; return 0; }
'''


def _param_lines(ptx, symbol):
    """The parameter lines of the ``.extern .func`` declaration of ``symbol``."""
    head = ptx[ptx.index(f" {symbol}\n(") + len(symbol) + 3:]
    return [ln.strip() for ln in head[:head.index(")")].splitlines() if ".param" in ln]


# ---- the types -------------------------------------------------------------------------------
def test_cpointer_is_interned_and_spelled_as_numba():
    p = T.CPointer(T.float32)
    assert p is T.CPointer("float32") is T.CPointer(np.float32)
    assert str(p) == "float32*" and p.dtype is T.float32 and p.addrspace is None
    assert str(T.CPointer(T.int32, 3)) == "int32 addrspace(3)*"
    assert T.CPointer(T.int8, 0) is T.CPointer(T.int8)      # 0 is the generic space
    assert pickle.loads(pickle.dumps(T.CPointer(T.uint8, 1))) is T.CPointer(T.uint8, 1)
    assert str(T.voidptr) == "void*" and isinstance(T.voidptr, T.RawPointer)
    assert cuda.CPointer is T.CPointer and cuda.voidptr is T.voidptr


def test_pointer_types_in_signature_strings():
    sig = T.parse_signature("float32(CPointer(float32), int32)")
    assert sig.return_type is T.float32 and sig.args == (T.CPointer(T.float32), T.int32)
    assert T.parse_signature("void(voidptr)").args == (T.voidptr,)
    assert T.void(T.CPointer(T.uint8), T.uint32).args[0] is T.CPointer(T.uint8)


@pytest.mark.parametrize("args, exc, text", [
    ((T.float32, 2), ValueError, "address space must be None or one of"),
    ((T.float32, True), ValueError, "address space"),
    (("int33",), TypeError, "dtype 'int33' is not understood"),
    ((T.float32[:],), TypeError, "is not a scalar or record type"),
])
def test_cpointer_errors(args, exc, text):
    with pytest.raises(exc, match=text):
        T.CPointer(*args)


def test_numba_pointer_types_convert():
    # numba's classes, known by their module and class names (numba is not imported)
    class CPointer:
        __module__ = "numba.core.types.misc"

        def __init__(self, dtype, addrspace=None):
            self.dtype, self.addrspace, self.name = dtype, addrspace, f"{dtype}*"

    class RawPointer:
        __module__ = "numba.core.types.misc"
        name = "void*"
    assert T.from_numba_type(CPointer(T.float64)) is T.CPointer(T.float64)
    assert T.from_numba_type(CPointer(T.int32, 3)) is T.CPointer(T.int32, 3)
    assert T.from_numba_type(RawPointer()) is T.voidptr


# ---- typing ------------------------------------------------------------------------------
P_F32 = T.CPointer(T.float32)


def _index_void(p):
    p[0] = 1


def _slice(p):
    p[1:2] = 1.0


def _two_indices(p):
    p[0, 1] = 1.0


def _float_index(p):
    p[1.5] = 1.0


def _complex_store(p):
    p[0] = 1j


def _arith(p):
    q = p + 1
    q[0] = 1.0


@pytest.mark.compile
@pytest.mark.parametrize("fn, argtypes, text", [
    (_index_void, (T.voidptr,), r"a void\* pointer has no element type"),
    (_slice, (P_F32,), r"takes one integer index \(p\[i\]\), got '1:2'"),
    (_two_indices, (P_F32,), "takes one integer index"),
    (_float_index, (P_F32,), "index must be an integer, got a value of type float64"),
    (_complex_store, (P_F32,), "cannot store a complex value"),
    (_arith, (P_F32,), r"unsupported operand types for \+: float32\* and int64"),
])
def test_pointer_misuse_is_a_typing_error(fn, argtypes, text):
    with pytest.raises(TypingError, match=text):
        cuda.compile_ptx(fn, argtypes)


def _fb(a):
    p = ffi.from_buffer(a)
    p[0] = 1


def _fb_two(a):
    ffi.from_buffer(a, a)


def _fb_scalar(x):
    ffi.from_buffer(x)


@pytest.mark.compile
@pytest.mark.parametrize("fn, sig, text", [
    (_fb, "void(float32[:])", r"from_buffer\(\) unsupported on non-contiguous buffers"),
    (_fb, "void(float32[::1, :])", "only supports multidimensional arrays with C layout"),
    (_fb_two, "void(float32[::1])", r"takes one array in kernels, got 2"),
    (_fb_scalar, "void(float32)", r"from_buffer\(\) expected a buffer object, got float32"),
])
def test_from_buffer_errors_are_numbas(fn, sig, text):
    with pytest.raises(TypingError, match=text):
        cuda.compile_ptx(fn, sig)


@pytest.mark.compile
def test_declared_pointer_parameter_refuses_other_arguments():
    f = cuda.declare_device("takes_f32p", "int32(CPointer(float32))")
    g = cuda.declare_device("takes_2d", "int32(float32[:, :])")

    def int_array(r, a):
        r[0] = f(a)

    def scalar(r, a):
        r[0] = f(a[0])

    def int_pointer(r, a):
        r[0] = f(ffi.from_buffer(a))

    def one_d(r, a):
        r[0] = g(a)
    with pytest.raises(TypingError, match=r"array\(int32, 1d, C\) cannot be passed as "
                                          r"float32\* \(the element types differ\)"):
        cuda.compile_ptx(int_array, "void(int32[::1], int32[::1])")
    with pytest.raises(TypingError, match=r"pass an array or a pointer from ffi.from_buffer"):
        cuda.compile_ptx(scalar, "void(int32[::1], float32[::1])")
    with pytest.raises(TypingError, match=r"int32\* cannot be passed as float32\* \(the "
                                          r"element types differ\)"):
        cuda.compile_ptx(int_pointer, "void(int32[::1], int32[::1])")
    with pytest.raises(TypingError, match=r"has 1 dimension\(s\), the parameter 2"):
        cuda.compile_ptx(one_d, "void(int32[::1], float32[::1])")


@pytest.mark.compile
def test_cache_hint_of_a_pointer_takes_one_integer():
    def tup(p, r):
        r[0] = cuda.ldcg(p, (0, 1))

    def flt(p, r):
        r[0] = cuda.ldcg(p, 1.0)
    with pytest.raises(TypingError, match="Pointers only support scalar indexing, got tuple of 2"):
        cuda.compile_ptx(tup, (P_F32, T.float32[::1]))
    with pytest.raises(TypingError, match="float64 is not a valid index"):
        cuda.compile_ptx(flt, (P_F32, T.float32[::1]))
    with pytest.raises(TypingError, match="operates on arrays or pointers. Got type float32"):
        cuda.compile_ptx(lambda x, r: cuda.ldcg(x, 0), (T.float32, T.float32[::1]))


# ---- the PTX ---------------------------------------------------------------------------------
def _add_one(x, n):
    i = cuda.grid(1)
    if i < n:
        x[i] += 1


@pytest.mark.compile
def test_pointer_kernel_parameter_is_a_64_bit_address_indexed_in_global_memory():
    ptx, rt = cuda.compile_ptx(_add_one, T.void(T.CPointer(T.uint8), T.uint32))
    assert rt is T.void
    params = [ln for ln in ptx.splitlines() if ln.strip().startswith(".param")]
    assert [p.split()[1] for p in params] == [".u64", ".u32"]
    assert "ld.global.u8" in ptx and "st.global.u8" in ptx


@pytest.mark.compile
def test_from_buffer_and_arrays_pass_data_pointers_to_declared_functions():
    sum_reduce = cuda.declare_device("sum_reduce", "float32(CPointer(float32), int32)")
    f1 = cuda.declare_device("f1", "int32(float32[:])")
    set_first = cuda.declare_device("set_first", "void(CPointer(int32), int32)", abi="c")

    def k(result, array, r, ia):
        p = ffi.from_buffer(array)
        result[()] = sum_reduce(p, len(array))
        r[0] = f1(array)
        set_first(ia, 7)                # an array for a pointer parameter: its data pointer
    ptx, _ = cuda.compile_ptx(k, "void(float32[::1], float32[::1], int32[::1], int32[::1])")
    # numba ABI: the result slot, then one 64-bit pointer per pointer or array parameter
    assert [ln.split()[1] for ln in _param_lines(ptx, "sum_reduce")] == [".b64", ".b64", ".b32"]
    assert [ln.split()[1] for ln in _param_lines(ptx, "f1")] == [".b64", ".b64"]
    assert [ln.split()[1] for ln in _param_lines(ptx, "set_first")] == [".b64", ".b32"]


@pytest.mark.compile
def test_pointer_parameter_in_an_address_space_takes_a_generic_pointer():
    f = cuda.declare_device("shared_f", T.int32(T.CPointer(T.int32, 3)), abi="c")

    def k(r):
        sm = cuda.shared.array(4, np.int32)
        r[0] = f(ffi.from_buffer(sm))       # generic → shared: an addrspacecast
    ptx, _ = cuda.compile_ptx(k, "void(int32[::1])")
    assert [ln.split()[1] for ln in _param_lines(ptx, "shared_f")] == [".b64"]


@pytest.mark.compile
def test_void_pointer_parameter_takes_any_pointer_or_array():
    first_of = cuda.declare_device("first_of", "int32(voidptr)")

    def k(r, a, b):
        r[0] = first_of(ffi.from_buffer(a)) + first_of(b)
    ptx, _ = cuda.compile_ptx(k, "void(int32[::1], float64[::1], int32[:, ::1])")
    assert ptx.count("call.uni") >= 2


@pytest.mark.compile
@pytest.mark.parametrize("op, fn", [("ld.global.cg.b32", cuda.ldcg),
                                    ("ld.global.cs.b32", cuda.ldcs)])
def test_cache_hinted_load_through_a_pointer(op, fn):
    def k(p, r, n):
        for i in range(n):
            r[i] = fn(p, i)
    ptx, _ = cuda.compile_ptx(k, (T.CPointer(T.int32), T.int32[:], T.intp))
    assert op in ptx


@pytest.mark.compile
def test_cache_hinted_store_through_a_pointer():
    def k(p, v, n):
        for i in range(n):
            cuda.stwt(p, i, v[i])
    ptx, _ = cuda.compile_ptx(k, (T.CPointer(T.float64), T.float64[:], T.intp))
    assert "st.global.wt.b64" in ptx


@pytest.mark.compile
def test_pointer_passes_to_a_device_function_and_returns_from_a_declared_one():
    get = cuda.declare_device("get_ptr", "CPointer(float32)(int32)")

    @cuda.jit(device=True)
    def put(p, i, v):
        p[i] = v

    def k(a):
        put(ffi.from_buffer(a), 1, 2.5)
        q = get(0)
        q[0] = a[1]
    ptx, _ = cuda.compile_ptx(k, "void(float32[::1])")
    # the device function's store of 2.5 through the pointer (as its bits), and the store
    # through the returned pointer
    assert "get_ptr" in ptx and str(np.float32(2.5).view(np.uint32)) in ptx
    assert "st.f32" in ptx


# ---- linked C code ---------------------------------------------------------------------------
def _kernel_calling_c_code():
    """A kernel calling sum.cu's three functions through pointer parameters: a float*
    from ``ffi.from_buffer``, an int* and a void* from an array."""
    src = cuda.CUSource(SUM_CU, name="sum.cu")
    sum_reduce = cuda.declare_device("sum_reduce", "float32(CPointer(float32), int32)",
                                     link=src)
    set_first = cuda.declare_device("set_first", "void(CPointer(int32), int32)", abi="c",
                                    link=src)
    first_of = cuda.declare_device("first_of", "int32(voidptr)", link=src)

    @cuda.jit
    def k(r, x, ia, out):
        r[()] = sum_reduce(ffi.from_buffer(x), len(x))
        set_first(ia, 3)
        out[0] = first_of(ia)
    return k


@needs_tools
@pytest.mark.compile
def test_linked_c_code_with_pointer_parameters_links():
    k = _kernel_calling_c_code()
    # the one source of three declarations is linked once (no duplicate symbols)
    spec = build_kernel(k.py_func, (T.Array(T.float32, 0, "C"), T.float32[::1], T.int32[::1],
                                    T.int32[::1]), k.targetoptions)
    assert spec.cubin[:4] == b"\x7fELF" and len(spec.link_files) == 1


# ---- on a GPU --------------------------------------------------------------------------------
@pytest.mark.gpu
def test_gpu_pointer_kernel_parameter_from_a_device_address():
    k = cuda.jit(T.void(T.CPointer(T.uint8), T.uint32))(_add_one)
    x = cuda.to_device(np.array([0, 1, 2, 255, 9], dtype=np.uint8))
    k[1, 32](x.__cuda_array_interface__["data"][0], len(x))
    np.testing.assert_array_equal(x.copy_to_host(), [1, 2, 3, 0, 10])


@pytest.mark.gpu
def test_gpu_from_buffer_and_array_arguments_reach_c_code():
    k = _kernel_calling_c_code()
    x = np.arange(10, dtype=np.float32)
    r = np.zeros((), np.float32)
    ia = np.zeros(2, np.int32)
    out = np.zeros(1, np.int32)
    k[1, 1](r, x, ia, out)
    assert r[()] == 45.0 and ia[0] == 3 and out[0] == 3


@pytest.mark.gpu
def test_gpu_cache_hints_through_pointers():
    @cuda.jit(T.void(T.CPointer(T.float32), T.CPointer(T.float32), T.int32))
    def k(dst, src, n):
        i = cuda.grid(1)
        if i < n:
            cuda.stcs(dst, i, cuda.ldcg(src, i) * 2)
    a = cuda.to_device(np.arange(40, dtype=np.float32))
    b = cuda.device_array(40, np.float32)
    k[2, 32](b.__cuda_array_interface__["data"][0], a.__cuda_array_interface__["data"][0], 40)
    np.testing.assert_array_equal(b.copy_to_host(), np.arange(40, dtype=np.float32) * 2)


# ---- carray / farray -----------------------------------------------------------------------
def _carray_not_pointer(a):
    x = cuda.carray(a, (2,))
    x[0] = 1


def _carray_float_shape(p):
    x = cuda.carray(p, 2.0)
    x[0] = 1


def _carray_wrong_dtype(p):
    x = cuda.carray(p, 2, dtype=np.float64)
    x[0] = 1


def _carray_void(p):
    x = cuda.carray(p, 2)
    x[0] = 1


@pytest.mark.compile
@pytest.mark.parametrize("fn, argtypes, text", [
    (_carray_not_pointer, (T.float32[::1],), r"carray\(\) takes a C pointer \(CPointer\), got "
                                             r"a value of type array"),
    (_carray_float_shape, (P_F32,), r"the shape of carray\(\) must be an integer or a tuple "
                                    r"of integers, got float64"),
    (_carray_wrong_dtype, (P_F32,), r"mismatching dtype 'float64' for pointer float32\*"),
    (_carray_void, (T.voidptr,), r"explicit dtype required for void\* argument of carray"),
])
def test_carray_errors(fn, argtypes, text):
    with pytest.raises(TypingError, match=text):
        cuda.compile_ptx(fn, argtypes)


@pytest.mark.compile
def test_carray_and_farray_compile_to_global_accesses():
    def k(p, q, n, m, out):
        c = cuda.carray(p, (n, m))
        f = cuda.farray(q, (n, m), dtype=np.float64)
        out[0] = c.strides[0]
        out[1] = c.strides[1]
        out[2] = f.strides[0]
        out[3] = f.strides[1]
        c[1, 2] = f[1, 2]
    ptx = cuda.compile_ptx(k, (T.CPointer(T.float64), T.voidptr, T.int64, T.int64,
                               T.int64[::1]))[0]
    assert "ld.global.f64" in ptx and "st.global.f64" in ptx


@pytest.mark.gpu
def test_gpu_carray_and_farray_over_a_device_address():
    @cuda.jit(T.void(T.CPointer(T.int32), T.int32, T.int32, T.int64[::1]))
    def k(p, n, m, strides):
        c = cuda.carray(p, (n, m))
        f = cuda.farray(p, (n, m))
        c[1, 0] = 5          # element 1 * m
        f[1, 0] += 7          # element 1
        strides[0] = c.strides[0]
        strides[1] = f.strides[1]
    d = cuda.to_device(np.zeros(6, np.int32))
    s = np.zeros(2, np.int64)
    k[1, 1](int(d.gpu_data.device_pointer), 2, 3, s)
    np.testing.assert_array_equal(d.copy_to_host(), [0, 7, 0, 5, 0, 0])
    assert list(s) == [12, 8]
