"""NumPy ufuncs on whole arrays in kernels (numba.cuda's "Supported NumPy features":
``np.sin(x, out)``, the loop running in the calling thread), NumPy's loop for the operand
types, broadcasting against the output, and the ufuncs numba.cuda adds on scalars."""
import math

import numpy as np
import pytest

import cujit as cuda
from cujit import TypingError
from cujit import types as T

from _kl_helpers import ptx_of


def _unary(uf):
    @cuda.jit
    def k(x, out):
        uf(x, out)
    return k


def _binary(uf):
    @cuda.jit
    def k(a, b, out):
        uf(a, b, out)
    return k


@pytest.mark.parametrize("uf,x,out_dtype", [
    (np.sin, np.linspace(-3, 3, 7, dtype=np.float32), np.float32),
    (np.arccosh, np.linspace(1, 4, 6).reshape(2, 3), np.float64),
    (np.log, np.array([0j, -1 + 1j, 2 - 0.5j], np.complex64), np.complex64),
    (np.log2, np.array([0j, 4 + 0j, 1j]), np.complex128),
    (np.isnan, np.array([np.nan, 1.0, np.inf]), np.bool_),
    (np.invert, np.array([0, 1, 200], np.uint8), np.uint8),
    (np.logical_not, np.array([0, 2, -1], np.int16), np.int16),   # bool into int16
    (np.rad2deg, np.asfortranarray(np.linspace(0, 3, 6).reshape(2, 3)), np.float64),
])
def test_unary_ufunc_on_an_array_gives_numpys_values(uf, x, out_dtype):
    out = np.zeros(x.shape, out_dtype)
    _unary(uf)[1, 1](x, out)
    with np.errstate(all="ignore"):
        want = uf(x).astype(out_dtype)
    np.testing.assert_allclose(out, want, rtol=1e-6)


_I = np.array([[-1, 0, 7]], np.int64)
_U = np.array([[0], [5]], np.uint64)
_F = np.array([1.0, np.nan, -2.0, np.nan])
_G = np.array([np.nan, 0.5, -3.0, np.nan])


@pytest.mark.parametrize("uf,a,b,out_dtype", [
    (np.greater, _I, _U, np.bool_),              # the exact signed/unsigned loop qQ->?
    (np.less_equal, _U, _I, np.bool_),           # Qq->?
    (np.maximum, _F, _G, np.float64),            # a NaN operand wins
    (np.fmin, _F, _G, np.float64),               # a NaN operand loses
    (np.arctan2, np.float32(1.0), np.linspace(-1, 1, 5, dtype=np.float32), np.float32),
    (np.bitwise_xor, np.array([3, 5], np.int32), np.array([6, 6], np.int32), np.int32),
    (np.logical_and, np.array([0, 1, 2], np.int32), np.int32(2), np.int32),
    (np.equal, np.array([1 + 1j, 2j]), np.array([1 + 1j, 2 + 2j]), np.bool_),
])
def test_binary_ufunc_broadcasts_its_inputs_onto_the_output(uf, a, b, out_dtype):
    shape = np.broadcast_shapes(np.shape(a), np.shape(b))
    out = np.zeros(shape, out_dtype)
    _binary(uf)[1, 1](a, b, out)
    np.testing.assert_allclose(out, uf(a, b).astype(out_dtype), rtol=1e-6)


@cuda.jit
def _scalar_into_array(x, out):
    np.cos(x, out)


def test_scalar_input_fills_the_whole_output():
    out = np.zeros((2, 3), np.float32)
    _scalar_into_array[1, 1](np.float32(0.5), out)
    np.testing.assert_allclose(out, np.full((2, 3), math.cos(0.5)), rtol=1e-6)


@cuda.jit
def _out_keyword_and_result(x, out, first):
    r = np.sqrt(x, out=out)
    first[0] = r[0]          # the call's value is the output array, as in NumPy


def test_out_keyword_and_the_call_returns_the_output():
    x = np.array([4.0, 9.0])
    out, first = np.zeros(2), np.zeros(1)
    _out_keyword_and_result[1, 1](x, out, first)
    assert out.tolist() == [2.0, 3.0] and first[0] == 2.0


@cuda.jit
def _scalar_ufuncs(a, b, out):
    out[0] = np.greater(a, b)
    out[1] = np.logical_xor(a, b)
    out[2] = np.bitwise_and(a, b)
    out[3] = np.fmax(a, b)
    out[4] = np.deg2rad(a)


def test_numba_cuda_ufuncs_on_scalars():
    out = np.zeros(5)
    _scalar_ufuncs[1, 1](np.int64(6), np.int64(3), out)
    np.testing.assert_allclose(out, [1, 0, 2, 6, np.deg2rad(6.0)])


@cuda.jit
def _per_thread_rows(x, out):
    i = cuda.grid(1)
    if i < x.shape[0]:
        np.exp(x[i], out[i])


def test_each_thread_runs_its_own_loop():
    x = np.linspace(-1, 1, 12).reshape(4, 3)
    out = np.zeros_like(x)
    _per_thread_rows[1, 4](x, out)
    np.testing.assert_allclose(out, np.exp(x), rtol=1e-12)


def _sin_loop(x, out):
    np.sin(x, out)


def test_an_input_that_does_not_broadcast_raises_in_the_thread():
    # debug=True: the GPU reports a kernel's raise to the host only in debug mode
    k = cuda.jit(debug=True, opt=False)(_sin_loop)
    out = np.zeros(4, np.float32)
    with pytest.raises(ValueError, match=r"np\.sin\(\): input 0 does not broadcast"):
        k[1, 1](np.zeros(3, np.float32), out)
    assert (out == 0).all()


# ---- typing errors ---------------------------------------------------------------------
def _typing_error(fn, argtypes):
    from cujit.frontend.typecheck import typecheck
    with pytest.raises(TypingError) as e:
        typecheck(fn, tuple(argtypes))
    return str(e.value)


def _k_where(x, out):
    np.sin(x, out, where=x)


def _k_twice(x, out):
    np.sin(x, out, out=out)


def _k_too_many(x, out):
    np.sin(x, out, out)


def _k_too_few(x, out):
    np.arctan2(x, out=out)


def _k_tuple_input(x, out):
    np.sin((1.0, 2.0), out)


def _k_fmod(x, out):
    np.fmod(x, x, out)


def _k_sin(x, out):
    np.sin(x, out)


@pytest.mark.parametrize("fn,argtypes,words", [
    (_k_where, (T.float32[:], T.float32[:]), "keyword 'where' is not supported"),
    (_k_twice, (T.float32[:], T.float32[:]), "the output is given twice"),
    (_k_too_many, (T.float32[:], T.float32[:]), "takes 1 input(s) and 1 output, got 3"),
    (_k_too_few, (T.float32[:], T.float32[:]), "np.arctan2() takes 2 input(s), got 1"),
    (_k_tuple_input, (T.float32[:], T.float32[:]), "an input of type UniTuple"),
    (_k_sin, (T.float64[:], T.int32[:]), "NumPy has no loop for operands"),
    (_k_fmod, (T.int32[:], T.int32[:]), "the loop 'ii->i' its operands select is not"),
    (_k_sin, (T.float64[:, :], T.float64[:]), "an input of 2 dimensions does not broadcast"),
    (_k_sin, (T.float64[:], T.Array(T.float64, 1, "A", readonly=True)),
     "the output array is read-only"),
    (_k_sin, (T.float64[:], T.Array(T.from_dtype(np.dtype([("a", np.float64)])), 1, "C")),
     "an output array of"),
])
def test_ufunc_call_errors(fn, argtypes, words):
    msg = _typing_error(fn, argtypes)
    assert words in msg, msg


# ---- compiled code (libNVVM, no GPU needed) -------------------------------------------
@pytest.mark.compile
def test_float32_loop_compiles_in_single_precision_without_allocation():
    ptx = ptx_of(_k_sin, argtypes=(T.float32[:, ::1], T.float32[:, ::1]))
    # the f->f loop: the float32 element is never widened to float64 (sinf, not sin)
    assert "cvt.f64.f32" not in ptx and "ld.global.f32" in ptx
    assert "malloc" not in ptx and "st.global.f32" in ptx


@pytest.mark.compile
def test_signed_unsigned_comparison_and_complex_loops_compile():
    def k(a, b, z, out, zout):
        np.greater(a, b, out)
        np.log2(z, zout)
    ptx = ptx_of(k, argtypes=(T.int64[:], T.uint64[:], T.complex64[:], T.boolean[:],
                              T.complex64[:]))
    assert ".entry" in ptx and "malloc" not in ptx
