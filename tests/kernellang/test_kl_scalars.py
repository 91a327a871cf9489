"""Scalar features: ``int.bit_count()``, ``round(x, ndigits)`` at the float limits (numba's
algorithm), ``math.modf`` / ``frexp`` / ``ldexp``, functions imported by name."""
import math
from math import floor, frexp

import numpy as np
import pytest

import cujit as cuda
from cujit import types as T

from _kl_helpers import ptx_of


def bits(out, a, b):
    out[0] = a.bit_count()
    out[1] = b.bit_count()


def rounds(out, x, nd):
    out[0] = round(x, nd)


def modf_frexp(out, x, n):
    f, i = math.modf(x)
    out[0] = f
    out[1] = i
    m, e = frexp(x)
    out[2] = m
    out[3] = e
    out[4] = math.ldexp(m, e + n)
    out[5] = floor(x)


def test_bit_count():
    out = np.zeros(2, np.int64)
    cuda.jit(bits)[1, 1](out, -5, np.uint32(2 ** 32 - 1))
    np.testing.assert_array_equal(out, [2, 32])


def test_bit_count_of_float_is_typing_error():
    with pytest.raises(cuda.TypingError, match="bit_count"):
        cuda.jit(bits)[1, 1](np.zeros(2, np.int64), 1.5, 2)


@pytest.mark.parametrize("x,nd,want", [
    (1.7976931348623157e308, 2, 1.7976931348623157e308),
    (-1.7976931348623157e308, 5, -1.7976931348623157e308),
    (1e300, 30, 1e300),
    (123.456, -400, 0.0),
    (123.456, 1, 123.5),
    (2.675, 2, 2.68),          # numba's algorithm (CPython's correctly rounded one: 2.67)
    (1234.5, -1, 1230.0),
])
def test_round_ndigits_float64(x, nd, want):
    out = np.zeros(1)
    cuda.jit(rounds)[1, 1](out, x, nd)
    assert out[0] == want


def test_round_ndigits_of_float32_computes_in_float64():
    # numba's round_ndigits scales by the float64 10.0 ** ndigits: float32(0.3425) is
    # 0.34250000119..., so 343 after scaling in float64 (342.5, a tie to 342, in float32)
    out = np.zeros(1, np.float32)
    cuda.jit(rounds)[1, 1](out, np.float32(0.3425), 3)
    assert out[0] == np.float32(0.343)


def test_round_ndigits_float32_limit():
    out = np.zeros(1, np.float32)
    cuda.jit(rounds)[1, 1](out, np.float32(3.4028235e38), 3)
    assert out[0] == np.float32(3.4028235e38)


def test_modf_frexp_ldexp_and_imported_names():
    out = np.zeros(6)
    cuda.jit(modf_frexp)[1, 1](out, 6.75, 2)
    np.testing.assert_array_equal(out, [0.75, 6.0, 0.84375, 3, 27.0, 6.0])


def test_ldexp_needs_an_integer_exponent():
    def bad(out, x):
        out[0] = math.ldexp(x, 1.5)
    with pytest.raises(cuda.TypingError, match="must be an integer"):
        cuda.jit(bad)[1, 1](np.zeros(1), 1.0)


def narrow(out, v):
    out[0] = v


def test_python_int_to_narrower_explicit_parameter():
    k = cuda.jit("void(int64[::1], int8)")(narrow)
    out = np.zeros(1, np.int64)
    k[1, 1](out, 100)
    assert out[0] == 100
    k[1, 1](out, 300)               # converted as numba's ctypes marshalling: 300 → 44
    assert out[0] == 44
    k[1, 1](out, -129)
    assert out[0] == 127


def test_wrap_declared_ints():
    from cujit.dispatch.launch_args import wrap_declared_ints
    got = wrap_declared_ints((T.uint8, T.int16, T.float32), (257, -5, 1.5))
    assert got == (1, -5, 1.5) and type(got[0]) is np.uint8 and type(got[1]) is int
    assert wrap_declared_ints((T.int64,), (np.int64(3),)) is None


def triple(o, x):
    o[0] = x * 3


def test_declared_float32_param_gets_float32_value():
    # numba.cuda passes 0.1 to a float32 parameter as float32 (0.10000000149...): both
    # backends must compute 0.30000000447034836, not the float64 0.30000000000000004
    k = cuda.jit("void(float64[::1], float32)")(triple)
    out = np.zeros(1)
    k[1, 1](out, 0.1)
    assert out[0] == np.float64(np.float32(0.1)) * 3
    assert out[0] != 0.1 * 3


def test_lazy_kernel_python_float_is_float64():
    k = cuda.jit(triple)
    out = np.zeros(1)
    k[1, 1](out, 0.1)
    assert out[0] == 0.1 * 3


def test_declared_complex_and_bool_params():
    def cb(o, z, b):
        o[0] = z.real * 3
        o[1] = 1.0 if b else 2.0
    k = cuda.jit("void(float64[::1], complex64, boolean)")(cb)
    out = np.zeros(2)
    k[1, 1](out, 0.1 + 0j, True)
    assert out[0] == np.float64(np.float32(0.1)) * 3 and out[1] == 1.0


def test_convert_declared_scalars():
    from cujit.dispatch.launch_args import convert_declared_scalars
    got = convert_declared_scalars((T.float32, T.uint8, T.complex128, T.boolean, T.float64),
                                   (0.1, 257, 1.5, 1, 2.0))
    assert type(got[0]) is np.float32 and got[0] == np.float32(0.1)
    assert type(got[1]) is np.uint8 and got[1] == 1
    assert type(got[2]) is np.complex128 and got[2] == 1.5
    assert type(got[3]) is np.bool_ and got[3]
    assert type(got[4]) is np.float64
    assert convert_declared_scalars((T.float32,), (np.float32(1),)) is None
    got = convert_declared_scalars((T.int32, T.uint64), (5, np.int64(7)))
    assert type(got[0]) is np.int32 and type(got[1]) is np.uint64 and got == (5, 7)


def _clz(o, x):
    o[0] = cuda.clz(x)


def _brev(o, x):
    o[0] = cuda.brev(x)


def test_declared_int32_param_keeps_its_width_in_bit_intrinsics():
    # numba-cuda's test_intrinsics: clz(0x00100000) of an int32 parameter is 11, and brev of
    # a uint32 0x30F0 is 0x0F0C0000 (a Python int argument must not count 64 bits)
    out = np.zeros(1, dtype=np.int32)
    cuda.jit("void(int32[:], int32)")(_clz)[1, 1](out, 0x00100000)
    assert out[0] == 11
    outu = np.zeros(1, dtype=np.uint32)
    cuda.jit("void(uint32[:], uint32)")(_brev)[1, 1](outu, 0x000030F0)
    assert outu[0] == 0x0F0C0000


@pytest.mark.compile
@pytest.mark.parametrize("fn,argtypes", [
    (bits, (T.int64[::1], T.int64, T.uint32)),
    (rounds, (T.float64[::1], T.float64, T.int64)),
    (rounds, (T.float32[::1], T.float32, T.int32)),
    (modf_frexp, (T.float64[::1], T.float64, T.int64)),
    (modf_frexp, (T.float64[::1], T.float32, T.int64)),
], ids=lambda v: getattr(v, "__name__", ""))
def test_scalars_compile(fn, argtypes):
    assert ".entry" in ptx_of(fn, argtypes=argtypes)


def float_of_strings(out):
    out[0] = float("nan")
    out[1] = float("-inf")
    out[2] = float("1.5") + 1.0


def bad_float_string(out):
    out[0] = float("one")


def test_float_of_a_constant_string_is_a_constant():
    out = np.zeros(3)
    cuda.jit(float_of_strings)[1, 1](out)
    assert np.isnan(out[0]) and out[1] == -np.inf and out[2] == 2.5
    with pytest.raises(cuda.TypingError, match="not a number"):
        cuda.jit(bad_float_string)[1, 1](out)


def float_keeps(out, x, n):
    # float() of a float32 stays float32 (numba-cuda's typing): the sum rounds to float32
    out[0] = float(x) + np.float32(1e-8)
    out[1] = float(n) + 1e-8


def test_float_of_a_float_keeps_its_type():
    out = np.zeros(2)
    cuda.jit(float_keeps)[1, 1](out, np.float32(1.0), 1)
    assert out[0] == 1.0            # 1 + 1e-8 in float32
    assert out[1] == 1.0 + 1e-8     # float() of an integer is float64


@pytest.mark.compile
def test_float_of_float32_stores_32_bits():
    from cujit import compile_ptx

    def native_cast(x):
        return float(x)
    ptx, rt = compile_ptx(native_cast, (T.float32,), device=True)
    assert rt is T.float32 and "st.param.f32" in ptx


def remainder_nextafter(out, f, x, y, u, v):
    out[0] = math.remainder(x, y)
    out[1] = math.nextafter(x, y)
    out[2] = math.remainder(7, 2)          # integers compute in float64
    out[3] = math.remainder(x, 0.0)        # NaN on the GPU, where Python raises
    f[0] = math.nextafter(u, v)            # in float32: one float32 ulp
    f[1] = math.remainder(u, v)


def test_math_remainder_and_nextafter():
    out = np.zeros(4)
    f = np.zeros(2, np.float32)
    cuda.jit(remainder_nextafter)[1, 1](out, f, 5.5, 2.0, np.float32(1.0), np.float32(2.0))
    assert out[0] == math.remainder(5.5, 2.0) and out[1] == math.nextafter(5.5, 2.0)
    assert out[2] == math.remainder(7, 2) and np.isnan(out[3])
    assert f[0] == np.nextafter(np.float32(1), np.float32(2)) and f[1] == 1.0


@pytest.mark.compile
def test_math_remainder_and_nextafter_are_libdevice():
    ptx = ptx_of(remainder_nextafter, argtypes=(T.float64[::1], T.float32[::1], T.float64,
                                                T.float64, T.float32, T.float32))
    assert ".entry" in ptx
