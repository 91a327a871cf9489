"""cujit.guvectorize(target='cuda'): numba's CUDA generalised ufuncs (R-LIB-2)."""
import warnings

import numpy as np
import pytest

import cujit as cuda
from cujit.ufuncs.gufunc import parse_layout


@cuda.guvectorize(["void(float32[:], float32[:], float32[:])",
                   "void(float64[:], float64[:], float64[:])"], "(n),(n)->(n)", target="cuda")
def vadd(a, b, r):
    for i in range(a.shape[0]):
        r[i] = a[i] + b[i]


@cuda.guvectorize(["void(float64[:,:], float64[:,:], float64[:,:])"], "(m,n),(n,p)->(m,p)")
def matmul(A, B, C):
    for i in range(A.shape[0]):
        for j in range(B.shape[1]):
            acc = 0.0
            for k in range(A.shape[1]):
                acc += A[i, k] * B[k, j]
            C[i, j] = acc


@cuda.jit(device=True)
def _scaled(v, c):
    return v * c


@cuda.guvectorize(["void(float64[:], float64, float64[:])"], "(n),()->()")
def scaled_sum(a, c, r):
    s = 0.0
    for i in range(a.shape[0]):
        s += _scaled(a[i], c)
    r[0] = s


@cuda.guvectorize(["void(float64[:], float64[:], float64[:])"], "(n)->(n),()")
def cumsum_total(a, cs, tot):
    s = 0.0
    for i in range(a.shape[0]):
        s += a[i]
        cs[i] = s
    tot[0] = s


def test_parse_layout():
    assert parse_layout("(n),(n)->(n)") == ([("n",), ("n",)], [("n",)])
    assert parse_layout("(m, n),()->(m)") == ([("m", "n"), ()], [("m",)])
    for bad in ["(n)(n)->(n)", "(n)", "(n)->", "(1)->(n)", 3]:
        with pytest.raises(ValueError, match="layout"):
            parse_layout(bad)


def test_loop_over_rows_with_broadcast_core_input():
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    r = vadd(a, a[0])
    assert isinstance(r, np.ndarray) and r.dtype == np.float32 and r.shape == (3, 4)
    np.testing.assert_array_equal(r, a + a[0])


def test_matmul_stack_host_and_device():
    rng = np.random.default_rng(0)
    A, B = rng.random((5, 2, 3)), rng.random((5, 3, 4))
    np.testing.assert_allclose(matmul(A, B), A @ B, rtol=1e-12)
    d = matmul(cuda.to_device(A), B)
    assert isinstance(d, cuda.DeviceNDArray)
    np.testing.assert_allclose(d.copy_to_host(), A @ B, rtol=1e-12)
    # loop dimensions broadcast (one B for every A)
    np.testing.assert_allclose(matmul(A, B[0]), A @ B[0], rtol=1e-12)


def test_scalar_core_argument_and_output():
    a = np.arange(12, dtype=np.float64).reshape(3, 4)
    np.testing.assert_array_equal(scaled_sum(a, 2.0), (2 * a).sum(1))
    np.testing.assert_array_equal(scaled_sum(a, np.array([1.0, 2.0, 3.0])),
                                  a.sum(1) * [1, 2, 3])


def test_two_outputs():
    a = np.arange(6, dtype=np.float64).reshape(2, 3)
    cs, tot = cumsum_total(a)
    np.testing.assert_array_equal(cs, np.cumsum(a, axis=1))
    np.testing.assert_array_equal(tot, a.sum(1))


def test_outputs_passed_positionally_and_by_out():
    a = np.arange(8, dtype=np.float64).reshape(2, 4)
    r = np.zeros_like(a)
    assert vadd(a, a, r) is r
    np.testing.assert_array_equal(r, 2 * a)
    d = cuda.device_array((2, 4), np.float64)
    assert vadd(a, a, out=d) is d
    np.testing.assert_array_equal(d.copy_to_host(), 2 * a)


def test_stream_and_device_inputs():
    s = cuda.stream()
    a = cuda.to_device(np.arange(8, dtype=np.float32).reshape(2, 4), stream=s)
    r = vadd(a, a, stream=s)
    s.synchronize()
    np.testing.assert_array_equal(r.copy_to_host(), 2 * np.arange(8.0).reshape(2, 4))


def test_1d_input_is_one_loop_item():
    a = np.arange(4, dtype=np.float64)
    np.testing.assert_array_equal(vadd(a, a), 2 * a)


# ---- errors ----

def test_core_dimension_mismatch():
    with pytest.raises(ValueError, match="core dimension 'n'"):
        vadd(np.zeros((2, 3)), np.zeros((2, 4)))


def test_loop_dimensions_do_not_broadcast():
    with pytest.raises(ValueError, match="loop dimensions"):
        vadd(np.zeros((2, 3)), np.zeros((4, 3)))


def test_too_few_dimensions():
    with pytest.raises(ValueError, match="fewer dimensions"):
        matmul(np.zeros(3), np.zeros((3, 3)))


def test_no_matching_dtype():
    # complex data cannot become float32/float64 under the same_kind rule
    with pytest.raises(TypeError, match="No matching version"):
        vadd(np.zeros(3, np.complex64), np.zeros(3, np.complex64))


@cuda.guvectorize(["void(float32[:], float32[:])"], "(n)->()", target="cuda")
def l2_norm(vec, out):
    acc = 0.0
    for value in vec:
        acc += value ** 2
    out[0] = acc ** 0.5


def test_host_inputs_cast_to_the_first_castable_signature():
    """numba-cuda casts host inputs to the first compatible signature (its GTC tutorial's
    l2_norm on float64 data): float64 rows run the float32 signature."""
    x = np.random.default_rng(1).random((8, 4))
    r = l2_norm(x)
    assert r.dtype == np.float32
    np.testing.assert_allclose(r, np.linalg.norm(x.astype(np.float32), axis=1), rtol=1e-6)
    r = vadd(np.arange(3, dtype=np.int32), np.arange(3, dtype=np.int32))
    assert r.dtype == np.float32                # int32 -> float32, the first signature
    np.testing.assert_array_equal(r, [0, 2, 4])
    r = vadd(np.arange(3, dtype=np.float32), np.arange(3, dtype=np.float64))
    assert r.dtype == np.float32                # mixed: both cast to the first that fits


def test_device_input_needing_a_cast_is_typeerror():
    d = cuda.to_device(np.ones((2, 4)))
    with pytest.raises(TypeError, match=r"does not support \.astype\(\)"):
        l2_norm(d)


def test_positional_argument_count_is_numbas_message():
    with pytest.raises(TypeError, match="This gufunc accepts 2 positional arguments "
                                        r"\(when providing input only\) or 3 positional "
                                        r"arguments \(when providing input and output\)\. "
                                        r"Got 1 positional argument\."):
        vadd(np.zeros(3))
    with pytest.raises(TypeError, match="Got 4 positional arguments"):
        vadd(np.zeros(3), np.zeros(3), np.zeros(3), np.zeros(3))


def test_out_both_positional_and_keyword_is_valueerror():
    a = np.zeros(3, np.float32)
    r = np.ones(3, np.float32)
    with pytest.raises(ValueError, match="cannot specify argument 'out' as both positional "
                                         "and keyword"):
        vadd(a, a, r, out=r)
    np.testing.assert_array_equal(r, 1.0)       # nothing written


def test_gufunc_signature_with_a_return_value_is_typeerror():
    with pytest.raises(TypeError, match="guvectorized functions cannot return values: "
                                        "signature .* specifies int32 return type"):
        cuda.guvectorize([cuda.int32(cuda.int32[:], cuda.int32[:])], "(m)->(m)")(
            lambda x, y: None)


@pytest.mark.parametrize("maker", [
    lambda **kw: cuda.guvectorize(["void(float32[:], float32[:])"], "(x)->(x)", **kw),
    lambda **kw: cuda.vectorize(["float32(float32)"], **kw),
])
def test_builder_keywords_are_checked(maker):
    def f(a, b=None):
        pass
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        maker(nopython=True, fastmath=True)        # accepted
        with pytest.raises(TypeError, match="^nopython flag must be True$"):
            maker(nopython=False)
    with pytest.raises(TypeError, match="caching is not supported"):
        maker(cache=True)
    for numbas_error in (TypeError, KeyError):
        with pytest.raises(numbas_error) as ei:
            maker(what1=True, ever2=False)
        assert "'what1', 'ever2'" in str(ei.value)


def test_guvectorize_unknown_options_message_is_numba_cudas():
    # numba-cuda's exact text, the option names its only content; what is accepted is a note
    with pytest.raises(TypeError) as ei:
        cuda.guvectorize(["void(float32[:], float32[:])"], "(x)->(x)", what1=True, ever2=0)
    assert str(ei.value) == "The following target options are not supported: 'what1', 'ever2'"
    assert ei.value.__notes__ == ["guvectorize accepts the options 'nopython', 'fastmath', "
                                  "'debug', 'lineinfo', 'opt'"]


def test_vectorize_unknown_options_message_is_numbas():
    with pytest.raises(KeyError) as ei:
        cuda.vectorize(["float32(float32)"], nonexistent=2)
    assert str(ei.value) == ("Unrecognized options. cuda vectorize target does not support "
                             "option(s): 'nonexistent' (accepted: 'nopython', 'fastmath', "
                             "'debug', 'lineinfo', 'opt')")


def test_vectorize_warns_that_nopython_is_redundant():
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        cuda.vectorize(["float32(float32)"], nopython=True)
        cuda.guvectorize(["void(float32[:], float32[:])"], "(x)->(x)", nopython=True)
    assert [(x.category, str(x.message)) for x in w] == [
        (RuntimeWarning, "nopython kwarg for cuda target is redundant")]
    assert w[0].filename == __file__


def test_wrong_argument_count_and_out():
    with pytest.raises(TypeError, match="input"):
        vadd(np.zeros(3))
    with pytest.raises(ValueError, match="core dimension 'n' is 3, but output 0 has 4"):
        vadd(np.zeros(3), np.zeros(3), out=np.zeros(4))
    with pytest.raises(ValueError, match="shape"):
        vadd(np.zeros(3), np.zeros(3), out=np.zeros((2, 3)))
    with pytest.raises(TypeError, match="output"):
        vadd(np.zeros(3), np.zeros(3), out=(np.zeros(3), np.zeros(3)))


def test_output_size_unknown():
    @cuda.guvectorize(["void(float64[:], float64[:])"], "(n)->(m)")
    def f(a, r):
        r[0] = a[0]
    with pytest.raises(ValueError, match="not given by any input"):
        f(np.zeros(3))
    np.testing.assert_array_equal(f(np.ones(3), out=np.zeros(2))[:1], [1.0])


def test_signature_must_fit_layout():
    with pytest.raises(TypeError, match="argument"):
        cuda.guvectorize(["void(float64[:], float64[:])"], "(n),(n)->(n)")(lambda a, b, c: None)
    with pytest.raises(TypeError, match="core dimensions"):
        cuda.guvectorize(["void(float64[:,:], float64[:])"], "(n)->(n)")(lambda a, b: None)
    with pytest.raises(ValueError, match="target='cuda'"):
        cuda.guvectorize(["void(float64[:], float64[:])"], "(n)->(n)", target="parallel")


# ---- numba-cuda's gufunc scalar cases (tests/cudapy/test_gufunc_scalar.py) ----

@cuda.guvectorize(["void(int32, int32[:])"], "()->()", target="cuda")
def twice(inp, out):
    out[0] = inp * 2


def test_scalar_in_scalar_out():
    assert twice(10) == 20
    arg = np.arange(10).astype(np.int32)
    r = twice(arg)
    assert r.dtype == np.int32
    np.testing.assert_array_equal(r, arg * 2)


def test_numpy_scalar_of_another_type_is_cast():
    @cuda.guvectorize(["void(int32, int32[:], int32[:])"], "(),(t)->(t)")
    def foo(a, b, out):
        for i in range(b.size):
            out[i] = a * b[i]
    b = np.arange(10).astype(np.int32)
    np.testing.assert_array_equal(foo(np.int64(2), b), 2 * b)
    with pytest.raises(TypeError, match=r"does not support \.astype\(\)"):
        foo(cuda.to_device(np.array([2, 2], dtype=np.int64)), b[:2])


def test_old_style_scalar_as_array_and_loop_of_one():
    @cuda.guvectorize(["void(int32[:], int32[:], int32[:])"], "(n),()->(n)")
    def g(x, y, res):
        for i in range(x.shape[0]):
            res[i] = x[i] + y[0]
    a = np.array([1, 2, 3, 4], dtype=np.int32)
    res = np.zeros(4, dtype=np.int32)
    assert g(a, np.array([2], dtype=np.int32), out=res) is res
    np.testing.assert_array_equal(res, a + 2)
    a2 = np.array([1, 2, 3, 4] * 2, dtype=np.int32).reshape(2, 4)
    res2 = np.zeros((2, 4), dtype=np.int32)
    g(a2, np.array([2, 10], dtype=np.int32), res2)
    np.testing.assert_array_equal(res2, a2 + np.array([[2], [10]]))


def test_saxpy_scalar_input_broadcast_over_loop():
    @cuda.guvectorize(["void(float32, float32[:], float32[:], float32[:])"], "(),(t),(t)->(t)")
    def saxpy(a, x, y, out):
        for i in range(out.shape[0]):
            out[i] = a * x[i] + y[i]
    X = np.arange(10, dtype=np.float32).reshape(5, 2)
    np.testing.assert_array_equal(saxpy(np.float32(2), X, X), 2 * X + X)
    A = np.arange(5, dtype=np.float32)
    np.testing.assert_array_equal(saxpy(A, X, X), A[:, None] * X + X)


def test_device_input_broadcast_on_the_device(count_calls):
    """A device input whose loop dimensions broadcast is expanded by a device kernel: no
    device-to-host copy happens before the result is read."""
    rng = np.random.default_rng(3)
    A, B = rng.random((4, 2, 3)), rng.random((3, 5))
    dA, dB = cuda.to_device(A), cuda.to_device(B)
    dtoh = count_calls("memcpy_dtoh")
    r = matmul(dA, dB)
    assert dtoh == []
    np.testing.assert_allclose(r.copy_to_host(), A @ B, rtol=1e-12)


class _Foreign:
    """A CUDA-array-interface producer that is no cujit array."""

    def __init__(self, arr):
        self.arr = arr
        self.__cuda_array_interface__ = arr.__cuda_array_interface__


def test_foreign_output_is_returned_as_a_device_array_view_of_it():
    a = np.arange(6, dtype=np.float64)
    out = _Foreign(cuda.device_array(6))
    got = vadd(a, a, out=out)
    assert isinstance(got, cuda.DeviceNDArray)
    assert got.device_ctypes_pointer.value == out.arr.device_ctypes_pointer.value
    np.testing.assert_equal(got.copy_to_host(), 2 * a)


def test_given_device_and_host_outputs_are_returned_as_given():
    a = np.arange(6, dtype=np.float64)
    dev, host = cuda.device_array(6), np.zeros(6)
    assert vadd(a, a, out=dev) is dev
    assert vadd(a, a, out=host) is host
    np.testing.assert_equal(host, 2 * a)


def test_gufunc_called_in_a_kernel_is_an_untyped_global_name():
    @cuda.guvectorize(["void(int32[:], int32[:])"], "(n)->(n)")
    def gufunc_copy(a, b):
        for i in range(a.shape[0]):
            b[i] = a[i]

    @cuda.jit
    def calls_gufunc(a, b):
        gufunc_copy(a, b)

    a = np.arange(8, dtype=np.int32)
    b = np.zeros_like(a)
    with pytest.raises(cuda.TypingError,
                       match=r"^Untyped global name 'gufunc_copy': 'gufunc_copy' \(CUDAGUFunc "
                             r".*\) cannot be called in a kernel"):
        calls_gufunc[1, 1](a, b)
    assert (b == 0).all()
