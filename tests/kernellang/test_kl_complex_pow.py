"""numba-cuda programs ported unchanged: ``x ** y``, ``pow(x, y)`` and ``x **= y`` on
complex values (numba-cuda's test_math.py ``test_cpow_*``, and ``z ** 2`` in user kernels)
were a TypingError "unsupported operand types for **: complex128 and int64".  Both backends
now compute numba-cuda's algorithm (its translation of CPython's ``_Py_c_pow``, in the
precision of the complex type)."""
import numpy as np
import pytest

import cujit as cuda


@cuda.jit
def _vec_pow(r, x, y):
    i = cuda.grid(1)
    if i < len(r):
        r[i] = pow(x[i], y[i])


@cuda.jit
def _vec_pow_binop(r, x, y):
    i = cuda.grid(1)
    if i < len(r):
        r[i] = x[i] ** y[i]


@cuda.jit
def _vec_pow_inplace(r, x):
    i = cuda.grid(1)
    if i < len(r):
        r[i] **= x[i]


def _inputs(dtype):
    rng = np.random.default_rng(0)
    n = 64
    x = (rng.random(n) * 4 - 2 + 1j * (rng.random(n) * 4 - 2)).astype(dtype)
    y = (rng.random(n) * 4 - 2 + 1j * (rng.random(n) * 4 - 2)).astype(dtype)
    return x, y


@pytest.mark.parametrize("dtype,rtol", [(np.complex64, 3e-6), (np.complex128, 1e-13)])
@pytest.mark.parametrize("kernel", [_vec_pow, _vec_pow_binop])
def test_complex_power_matches_numpy(kernel, dtype, rtol):
    x, y = _inputs(dtype)
    r = np.zeros_like(x)
    kernel[1, 64](r, x, y)
    assert r.dtype == dtype
    np.testing.assert_allclose(r, x ** y, rtol=rtol)


@pytest.mark.parametrize("dtype,rtol", [(np.complex64, 3e-6), (np.complex128, 1e-13)])
def test_complex_power_inplace(dtype, rtol):
    x, y = _inputs(dtype)
    r = x.copy()
    _vec_pow_inplace[1, 64](r, y)
    np.testing.assert_allclose(r, x ** y, rtol=rtol)


@cuda.jit
def _square_and_cases(out, z):
    out[0] = z ** 2                 # complex128 ** int64: the int is made complex
    out[1] = z ** 0.5
    out[2] = z ** 0j                # a zero exponent: exactly 1
    out[3] = 0j ** z                # a zero base: 0, as CPython
    out[4] = (2 + 0j) ** (3 + 0j)
    out[5] = 1j ** 2j               # numba-cuda's zero test (both real parts 0) gives 0 here


def test_complex_power_special_cases_as_numba():
    out = np.zeros(6, np.complex128)
    z = 1.5 - 2j
    _square_and_cases[1, 1](out, z)
    np.testing.assert_allclose(out[:2], [z ** 2, z ** 0.5], rtol=1e-14)
    assert out[2] == 1 and out[3] == 0
    np.testing.assert_allclose(out[4], 8, rtol=1e-15)
    np.testing.assert_allclose(out[5], np.exp(-np.pi), rtol=1e-15)


@pytest.mark.compile
@pytest.mark.parametrize("ct", ["complex64", "complex128"])
def test_complex_power_compiles_to_ptx(ct):
    from cujit.nvvm import libnvvm as nvvm
    if not nvvm.nvvm_available():
        pytest.skip("libNVVM is not installed")
    ptx, _ = cuda.compile_ptx(_vec_pow_binop.py_func, f"void({ct}[::1], {ct}[::1], {ct}[::1])")
    assert ".entry" in ptx
