"""Complex numbers: ``cmath`` functions, ``.real`` / ``.imag`` / ``.conjugate()``, and atomics
on the ``.real`` / ``.imag`` views of complex arrays.  Values against Python's cmath."""
import cmath
import math

import numpy as np
import pytest

import cujit as cuda
from cujit import types as T

from _kl_helpers import ptx_of

NAMES = ("exp", "log", "log10", "sqrt", "sin", "cos", "tan", "asin", "acos", "atan", "sinh",
         "cosh", "tanh", "asinh", "acosh", "atanh")


def cm(out, zs):
    i = cuda.grid(1)
    if i < zs.size:
        z = zs[i]
        out[i, 0] = cmath.exp(z)
        out[i, 1] = cmath.log(z)
        out[i, 2] = cmath.log10(z)
        out[i, 3] = cmath.sqrt(z)
        out[i, 4] = cmath.sin(z)
        out[i, 5] = cmath.cos(z)
        out[i, 6] = cmath.tan(z)
        out[i, 7] = cmath.asin(z)
        out[i, 8] = cmath.acos(z)
        out[i, 9] = cmath.atan(z)
        out[i, 10] = cmath.sinh(z)
        out[i, 11] = cmath.cosh(z)
        out[i, 12] = cmath.tanh(z)
        out[i, 13] = cmath.asinh(z)
        out[i, 14] = cmath.acosh(z)
        out[i, 15] = cmath.atanh(z)
        r, phi = cmath.polar(z)
        out[i, 16] = cmath.rect(r, phi)
        out[i, 17] = complex(cmath.phase(z), abs(z))
        out[i, 18] = z.conjugate() + z.real + z.imag


def cm_flags(flags, zs):
    i = cuda.grid(1)
    if i < zs.size:
        z = zs[i]
        flags[i, 0] = cmath.isnan(z)
        flags[i, 1] = cmath.isinf(z)
        flags[i, 2] = cmath.isfinite(z)


ZS = [0.3 + 0.4j, -1.5 + 2.0j, 2.5 - 0.7j, -0.2 - 3.0j, 30.0 + 1.0j]


@pytest.mark.parametrize("dt,rtol", [(np.complex128, 1e-12), (np.complex64, 3e-5)])
def test_cmath_values(dt, rtol):
    zs = np.array(ZS, dt)
    out = np.zeros((zs.size, 19), dt)
    cuda.jit(cm)[1, zs.size](out, zs)
    for i, z in enumerate(ZS):
        z = complex(dt(z))
        want = [getattr(cmath, n)(z) for n in NAMES]
        want += [z, complex(cmath.phase(z), abs(z)), z.conjugate() + z.real + z.imag]
        for k, w in enumerate(want):
            assert out[i, k] == pytest.approx(w, rel=rtol, abs=rtol), (i, k)


_PARTS = [-np.inf, -np.pi, -1.0, -0.0, 0.0, 1.0, 1.5, np.inf, np.nan]
EDGE = [complex(x, y) for x in _PARTS for y in _PARTS]


def _part_close(g, w, delta):
    if np.isnan(w):
        return bool(np.isnan(g))
    if g == 0 and w == 0:
        return np.copysign(1, g) == np.copysign(1, w)
    return g == w or abs(g - w) <= delta


def _mag(z):
    return abs(complex(*(0.0 if np.isnan(p) else p for p in (z.real, z.imag))))


@pytest.mark.parametrize("dt,bits", [(np.complex128, 53), (np.complex64, 24)])
def test_cmath_special_values_are_c99(dt, bits):
    # every pair of infinite, NaN, signed-zero and finite parts: Python's cmath (C99 Annex
    # G) to 2 ulp, zero signs included (numba-cuda's test_complex values)
    zs = np.array(EDGE, dt)
    out = np.zeros((zs.size, 19), dt)
    cuda.jit(cm)[1, zs.size](out, zs)
    wrong = []
    for i, z in enumerate(zs):
        z = complex(z)
        for k, name in enumerate(NAMES):
            try:
                w = getattr(cmath, name)(z)
            except ValueError:      # a pole or domain edge: Python gives no value
                continue
            g = complex(out[i, k])
            delta = 2.0 ** (1 - bits) * (_mag(g) + _mag(w))
            for gp, wp in ((g.real, w.real), (g.imag, w.imag)):
                if name in ("tan", "tanh", "atanh") and gp == 0 and wp == 0:
                    continue        # numba's tests ignore these zeros' signs
                if not _part_close(gp, wp, delta):
                    wrong.append((name, z, g, w))
                    break
    assert not wrong, wrong[:10]


def log_base(out, zs, bs):
    i = cuda.grid(1)
    if i < zs.size:
        out[i] = cmath.log(zs[i], bs[i])


def test_cmath_log_with_base():
    zs = np.array([2 + 1j, -1.5 + 0.5j, 0.25 - 4j, complex(np.inf, 1.0)])
    bs = np.array([3 - 2j, 10 + 0j, 0.5 + 0.5j, 2 + 0j])
    out = np.zeros(zs.size, np.complex128)
    cuda.jit(log_base)[1, zs.size](out, zs, bs)
    want = np.array([cmath.log(z, b) for z, b in zip(zs, bs)])
    np.testing.assert_allclose(out, want, rtol=1e-14)


def test_cmath_log_with_base_of_complex64_stays_complex64():
    def k(out, z, b):
        out[0] = cmath.log(z, b)
    zs = np.array([4 + 0j], np.complex64)
    out = np.zeros(1, np.complex64)
    cuda.jit(k)[1, 1](out, zs[0], np.complex64(2))
    assert out[0] == pytest.approx(2.0, rel=1e-6)


def test_cmath_log_with_three_arguments_is_typing_error():
    def k(out, z):
        out[0] = cmath.log(z, z, z)
    with pytest.raises(cuda.TypingError, match="takes 1 or 2 arguments"):
        cuda.jit(k)[1, 1](np.zeros(1, np.complex128), 1j)


def test_cmath_predicates():
    zs = np.array([1 + 2j, complex(np.nan, 1), complex(np.inf, 0), complex(0, -np.inf)])
    flags = np.zeros((zs.size, 3), np.bool_)
    cuda.jit(cm_flags)[1, zs.size](flags, zs)
    np.testing.assert_array_equal(flags, [[0, 0, 1], [1, 0, 0], [0, 1, 0], [0, 1, 0]])


def test_cmath_on_real_argument_gives_complex128():
    def k(out, x):
        out[0] = cmath.sqrt(x)
    out = np.zeros(1, np.complex128)
    cuda.jit(k)[1, 1](out, -4.0)
    assert out[0] == 2j


def test_cmath_rect_of_complex_is_typing_error():
    def k(out, z):
        out[0] = cmath.rect(z, 1.0)
    with pytest.raises(cuda.TypingError, match="real numbers"):
        cuda.jit(k)[1, 1](np.zeros(1, np.complex128), 1j)


def atomic_parts(arr, n):
    i = cuda.grid(1)
    if i < n:
        cuda.atomic.add(arr.real, 0, 1.0)
        cuda.atomic.add(arr.imag, 0, 2.0)


@pytest.mark.parametrize("dt", [np.complex64, np.complex128])
def test_atomics_on_real_and_imag_views(dt):
    arr = np.zeros(1, dt)
    cuda.jit(atomic_parts)[2, 32](arr, 64)
    assert arr[0] == 64 + 128j


@pytest.mark.compile
@pytest.mark.parametrize("ct", [T.complex64, T.complex128])
def test_cmath_compiles(ct):
    assert ".entry" in ptx_of(cm, argtypes=(ct[:, ::1], ct[::1]))
    assert ".entry" in ptx_of(cm_flags, argtypes=(T.boolean[:, ::1], ct[::1]))


@pytest.mark.compile
def test_atomics_on_views_compile():
    ptx = ptx_of(atomic_parts, argtypes=(T.complex64[::1], T.int64))
    assert "atom.global.add.f32" in ptx or "red.global.add.f32" in ptx


def star_args(out, x, t):
    out[0] = complex(*cmath.polar(x))       # numba-cuda's polar_as_complex_usecase
    out[1] = math.hypot(*t)
    out[2] = max(*t, 0.5)


def test_star_arguments_of_recognised_functions():
    out = np.zeros(3, np.complex128)
    cuda.jit(star_args)[1, 1](out, 1 + 1j, (3.0, 4.0))
    assert out[0] == pytest.approx(complex(*cmath.polar(1 + 1j)), rel=1e-15)
    assert out[1] == 5.0 and out[2] == 4.0


def test_star_argument_that_is_not_a_tuple_is_typing_error():
    def k(out, x):
        out[0] = math.hypot(*x)
    with pytest.raises(cuda.TypingError, match="must be a tuple"):
        cuda.jit(k)[1, 1](np.zeros(1), 2.0)


@pytest.mark.compile
def test_star_arguments_compile():
    assert ".entry" in ptx_of(star_args, argtypes=(T.complex128[::1], T.complex128,
                                                   T.UniTuple(T.float64, 2)))
