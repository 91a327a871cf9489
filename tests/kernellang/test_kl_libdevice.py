"""``cuda.libdevice`` (numba.cuda's ``from numba.cuda import libdevice``): one kernel per
function family on edge inputs, values against independently computed expectations.
Unmarked tests run on the active backend (the simulator here, the H200 for the
integrator); ``compile`` tests check the PTX without a GPU."""
import importlib.util
import math
import os

import numpy as np
import pytest

import cujit as cuda
from cujit import libdevice
from cujit import types as T
from cujit.frontend.errors import TypingError
from cujit.frontend.libdevice_table import FUNCTIONS

from _kl_helpers import ptx_of

ON_SIM = os.environ.get("CUJIT_ENABLE_CUDASIM", "0") not in ("", "0")
F32_NEXT = float(np.nextafter(np.float32(1), np.float32(2)))


def test_module_is_reachable_both_ways():
    assert cuda.libdevice is libdevice
    assert len(FUNCTIONS) == 317 and "sinf" in libdevice.__all__
    assert libdevice.sincos.__name__ == "sincos" and "__nv_sincos" in libdevice.sincos.__doc__


def test_call_outside_a_kernel_is_a_type_error():
    with pytest.raises(TypeError, match=r"libdevice.sinf\(\) can only be called in a kernel"):
        libdevice.sinf(1.0)


def test_stub_run_by_a_simulated_thread_computes_the_value(monkeypatch):
    # the simulator's typed rewrite replaces libdevice calls; a call it leaves as written
    # (a device function run as Python) reaches the stub, which computes the same value
    from cujit.kernelstate import state
    monkeypatch.setattr(state, "current", object())
    r = libdevice.sinf(1.0)
    assert r.dtype == np.float32 and r == np.float32(math.sin(1.0))
    assert libdevice.sincos(0.0) == (0.0, 1.0)
    assert libdevice.popc(2 ** 32 + 3) == 2        # the int32 conversion keeps the low bits
    with pytest.raises(TypeError, match=r"libdevice.popc\(\) takes 1 argument\(s\), got 2"):
        libdevice.popc(1, 2)


# ---- numba-cuda's own checks (tests/cudapy/test_libdevice.py) ----------------------------------
def k_tuples(s, c, frac, ex, r, x, a, b, z):
    i = cuda.grid(1)
    if i < len(x):
        s[i], c[i] = libdevice.sincos(x[i])
        frac[i], ex[i] = cuda.libdevice.frexp(x[i])
        r[i] = libdevice.sad(a[i], b[i], z[i])


def test_sincos_frexp_sad_as_numba():
    x = np.linspace(1.0, 10.0, 100)
    s, c, frac = (np.zeros_like(x) for _ in range(3))
    ex = np.zeros(100, np.int32)
    a, b, z = np.arange(0, 200, 2), np.arange(50, 150), np.arange(15, 115)
    r = np.zeros_like(a)
    cuda.jit(k_tuples)[4, 32](s, c, frac, ex, r, x, a, b, z)
    np.testing.assert_allclose(s, np.sin(x), rtol=1e-15, atol=1e-15)
    np.testing.assert_allclose(c, np.cos(x), rtol=1e-15, atol=1e-15)
    fe, ee = np.frexp(x)
    np.testing.assert_array_equal(frac, fe)
    np.testing.assert_array_equal(ex, ee)
    np.testing.assert_array_equal(r, np.abs(a - b) + z)


# ---- rounding modes: exact arithmetic rounded in the named direction ---------------------------
def k_rounding(o, x, y):
    o[0] = libdevice.dadd_rn(x[0], x[1])
    o[1] = libdevice.dadd_ru(x[0], x[1])
    o[2] = libdevice.dadd_rd(x[0], x[1])
    o[3] = libdevice.dadd_rz(-x[0], -x[1])
    o[4] = libdevice.dadd_rd(-x[0], -x[1])
    o[5] = libdevice.ddiv_ru(x[0], x[2])
    o[6] = libdevice.ddiv_rd(x[0], x[2])
    o[7] = libdevice.dmul_rz(x[3], x[3])
    o[8] = libdevice.dsqrt_ru(x[4])
    o[9] = libdevice.dsqrt_rd(x[4])
    o[10] = libdevice.drcp_rn(x[2])
    o[11] = libdevice.fma_ru(x[0], x[0], x[1])
    o[12] = libdevice.dadd_rd(x[0], -x[0])
    o[13] = libdevice.dadd_rn(x[0], -x[0])
    y[0] = libdevice.fdiv_rn(y[1], y[2])
    y[3] = libdevice.fdiv_rd(y[1], y[2])
    y[4] = libdevice.fdiv_ru(y[1], y[2])
    y[5] = libdevice.fsqrt_rz(y[6])
    y[7] = libdevice.frcp_rz(y[2])
    y[8] = libdevice.fmul_ru(y[9], y[9])
    y[10] = libdevice.fadd_ru(y[1], y[11])
    y[12] = libdevice.fmaf_rd(y[1], y[1], -y[11])
    y[13] = libdevice.fsub_rz(y[1], y[11])


def test_rounding_modes():
    tiny = 2.0 ** -60
    x = np.array([1.0, tiny, 3.0, 1.0 + 2.0 ** -52, 2.0])
    o = np.zeros(14)
    y = np.zeros(14, np.float32)
    y[1], y[2], y[6], y[9], y[11] = 1, 3, 2, F32_NEXT, 2.0 ** -40
    cuda.jit(k_rounding)[1, 1](o, x, y)
    up, down = np.nextafter(1.0, 2.0), np.nextafter(-1.0, -2.0)
    third = 1 / 3                               # 0.333...31 (below 1/3)
    assert list(o[:5]) == [1.0, up, 1.0, -1.0, down]
    assert o[5] == np.nextafter(third, 1.0) and o[6] == third
    assert o[7] == 1.0 + 2.0 ** -51             # (1 + 2^-52)^2 = 1 + 2^-51 + 2^-104
    r2 = math.sqrt(2.0)                         # 1.41421356237309514547 > sqrt(2)
    assert o[8] == r2 and o[9] == np.nextafter(r2, 0.0)
    assert o[10] == third and o[11] == up
    assert math.copysign(1, o[12]) == -1 and math.copysign(1, o[13]) == 1
    t32 = np.float32(1) / np.float32(3)         # 0.333333343 (above 1/3)
    assert y[0] == t32 and y[4] == t32 and y[3] == np.nextafter(t32, np.float32(0))
    s2 = np.float32(math.sqrt(2.0))             # 1.41421354 (below sqrt(2))
    assert y[5] == s2 and y[7] == y[3]
    assert y[8] == np.float32(1 + 3 * 2.0 ** -23)   # (1 + 2^-23)^2 = 1 + 2^-22 + 2^-46, up
    assert y[10] == np.float32(F32_NEXT)
    assert y[12] == np.nextafter(np.float32(1), np.float32(0))
    assert y[13] == np.nextafter(np.float32(1), np.float32(0))


# ---- conversions -------------------------------------------------------------------------------
def k_convert(o, q, f, d, i, j):
    o[0] = libdevice.double2int_rn(d[0])        # 2.5 -> 2 (ties to even)
    o[1] = libdevice.double2int_rn(d[1])        # 3.5 -> 4
    o[2] = libdevice.double2int_ru(d[2])        # 2.1 -> 3
    o[3] = libdevice.double2int_rd(-d[2])       # -2.1 -> -3
    o[4] = libdevice.double2int_rz(-d[3])       # -2.9 -> -2
    o[5] = libdevice.double2int_rz(d[4])        # 1e10 saturates
    o[6] = libdevice.double2uint_rn(-d[3])      # negative -> 0
    o[7] = libdevice.float2int_rd(f[0])
    o[8] = libdevice.float2uint_ru(f[0])
    q[0] = libdevice.double2ll_rd(-d[4])
    q[1] = libdevice.double2ull_rz(d[5])        # 1e30 -> 2^64 - 1, bits read as int64
    q[2] = libdevice.float2ll_rn(f[1])
    f[2] = libdevice.ll2float_rz(j[0])
    f[3] = libdevice.ll2float_ru(j[0])
    f[4] = libdevice.uint2float_rn(i[0])
    f[5] = libdevice.double2float_ru(d[6])
    f[6] = libdevice.double2float_rd(d[6])
    f[7] = libdevice.int2float_rz(i[1])
    f[8] = libdevice.ull2float_rn(j[1])
    d[7] = libdevice.ull2double_rn(j[1])
    d[8] = libdevice.int2double_rn(i[1])


def test_conversions():
    o = np.zeros(9, np.int32)
    q = np.zeros(3, np.int64)
    f = np.array([-1.5, 2.5, 0, 0, 0, 0, 0, 0, 0], np.float32)
    d = np.array([2.5, 3.5, 2.1, 2.9, 1e10, 1e30, 0.1, 0, 0])
    i = np.array([-1, 2 ** 24 + 1], np.int32)
    j = np.array([2 ** 24 + 1, -1], np.int64)
    cuda.jit(k_convert)[1, 1](o, q, f, d, i, j)
    assert list(o) == [2, 4, 3, -3, -2, 2 ** 31 - 1, 0, -2, 0]
    assert list(q) == [-10 ** 10, -1, 2]
    assert f[2] == 2 ** 24 and f[3] == 2 ** 24 + 2 and f[4] == 2.0 ** 32
    assert float(f[5]) > 0.1 > float(f[6]) and f[5] == np.nextafter(f[6], np.float32(1))
    assert f[7] == 2 ** 24 and f[8] == 2.0 ** 64
    assert d[7] == 2.0 ** 64 and d[8] == 2 ** 24 + 1


# ---- integers and bits -------------------------------------------------------------------------
def k_ints(o, q, a, b):
    o[0] = libdevice.popc(a[0])                 # -1 -> 32
    o[1] = libdevice.popcll(b[0])               # -1 -> 64
    o[2] = libdevice.brev(a[1])                 # 1 -> 0x80000000
    o[3] = libdevice.clz(a[2])                  # 0 -> 32
    o[4] = libdevice.clzll(b[1])                # 1 -> 63
    o[5] = libdevice.ffs(a[3])                  # 8 -> 4
    o[6] = libdevice.byte_perm(a[4], a[5], a[6])
    o[7] = libdevice.mulhi(a[7], a[3])          # 2^30 * 8 >> 32 = 2
    o[8] = libdevice.umulhi(a[0], a[0])         # (2^32 - 1)^2 >> 32 = 2^32 - 2 -> -2
    o[9] = libdevice.sad(a[1], a[8], a[9])      # |1 - 5| + 10
    o[10] = libdevice.usad(a[0], a[2], a[2])    # 2^32 - 1 -> -1
    o[11] = libdevice.umax(a[0], a[1])          # 0xffffffff -> -1
    o[12] = libdevice.umin(a[0], a[1])
    o[13] = libdevice.hadd(a[10], a[10])        # no overflow
    o[14] = libdevice.uhadd(a[0], a[0])
    o[15] = libdevice.mul24(a[11], a[12])       # bit 23 is the sign: -2^23 * 2
    o[16] = libdevice.abs(a[13])                # abs(INT_MIN) = INT_MIN
    o[17] = libdevice.rhadd(a[1], a[12])
    o[18] = libdevice.ffs(a[2])
    o[19] = libdevice.popc(b[2])                # int64 2^32 + 3 passed as int32: 3
    q[0] = libdevice.brevll(b[3])               # 1 -> INT64_MIN
    q[1] = libdevice.mul64hi(b[0], b[0])
    q[2] = libdevice.umul64hi(b[0], b[0])       # -> 2^64 - 2 -> -2
    q[3] = libdevice.ullmax(b[0], b[3])
    q[4] = libdevice.llabs(b[0])


def test_integer_functions():
    o = np.zeros(20, np.int32)
    q = np.zeros(5, np.int64)
    a = np.array([-1, 1, 0, 8, 0x33221100, 0x77665544, 0x7531, 2 ** 30, 5, 10,
                  2 ** 31 - 1, 0x800000, 2, -2 ** 31], np.int32)
    b = np.array([-1, 1, 2 ** 32 + 3, 1], np.int64)
    cuda.jit(k_ints)[1, 1](o, q, a, b)
    assert list(o) == [32, 64, -2 ** 31, 32, 63, 4, 0x77553311, 2, -2, 14, -1, -1, 1,
                       2 ** 31 - 1, -1, -2 ** 24, -2 ** 31, 2, 0, 2]
    assert list(q) == [-2 ** 63, 0, -2, -1, 1]


def k_bits(o, q, f, d, h):
    o[0] = libdevice.float_as_int(f[0])
    f[1] = libdevice.int_as_float(o[1])
    o[2] = libdevice.double2hiint(d[0])
    o[3] = libdevice.double2loint(d[0])
    d[1] = libdevice.hiloint2double(o[2], o[3])
    q[0] = libdevice.double_as_longlong(d[0])
    d[2] = libdevice.longlong_as_double(q[1])
    h[0] = libdevice.float2half_rn(f[0])
    f[2] = libdevice.half2float(h[1])


def test_bit_casts():
    o = np.array([0, 0x40490FDB, 0, 0], np.int32)
    q = np.array([0, 0x400921FB54442D18], np.int64)
    f = np.array([1.0, 0, 0], np.float32)
    d = np.array([1.0, 0, 0])
    h = np.array([0, 0x3C00], np.int16)
    cuda.jit(k_bits)[1, 1](o, q, f, d, h)
    assert o[0] == 0x3F800000 and f[1] == np.float32(math.pi)
    assert o[2] == 0x3FF00000 and o[3] == 0 and d[1] == 1.0
    assert q[0] == 0x3FF0000000000000 and d[2] == math.pi
    assert h[0] == 0x3C00 and f[2] == 1.0


# ---- float functions (within libdevice's documented error bounds) ------------------------------
F64_CASES = [  # (function, arguments, expected)
    ("sin", (0.5,), math.sin(0.5)), ("cos", (2.0,), math.cos(2.0)),
    ("exp", (1.5,), math.exp(1.5)), ("log", (3.0,), math.log(3.0)),
    ("exp10", (2.0,), 100.0), ("cbrt", (-27.0,), -3.0), ("rcbrt", (8.0,), 0.5),
    ("rsqrt", (4.0,), 0.5), ("sinpi", (0.5,), 1.0), ("cospi", (1.0,), -1.0),
    ("tgamma", (5.0,), 24.0), ("lgamma", (0.5,), math.log(math.sqrt(math.pi))),
    ("erfinv", (math.erf(0.5),), 0.5), ("erfcinv", (math.erfc(1.25),), 1.25),
    ("normcdf", (0.0,), 0.5), ("normcdfinv", (0.975,), 1.959963984540054),
    ("logb", (8.0,), 3.0), ("round", (-2.5,), -3.0), ("rint", (2.5,), 2.0),
    ("nearbyint", (-1.5,), -2.0), ("trunc", (-1.7,), -1.0), ("fdim", (1.0, 3.0), 0.0),
    ("fdim", (3.0, 1.0), 2.0), ("fmax", (math.nan, 1.0), 1.0), ("hypot", (3.0, 4.0), 5.0),
    ("remainder", (7.0, 2.0), -1.0), ("nextafter", (1.0, 2.0), 1.0 + 2.0 ** -52),
    ("powi", (2.0, 10), 1024.0), ("ldexp", (0.75, 4), 12.0), ("scalbn", (1.0, -3), 0.125),
    ("pow", (2.0, 0.5), math.sqrt(2.0)), ("copysign", (2.0, -0.0), -2.0),
    ("fmod", (7.5, 2.0), 1.5), ("atan2", (1.0, 1.0), math.pi / 4),
    ("fma", (2.0, 3.0, 1.0), 7.0),
]


def _kernel_for(fn, nargs, ints):
    """A 1-thread kernel ``out[0] = fn(...)`` with float arguments from ``a`` and int ones
    (positions ``ints``) from ``n``; ``fn`` is captured from the closure."""
    if nargs == 1:
        def k(out, a, n):
            out[0] = fn(a[0])
    elif nargs == 3:
        def k(out, a, n):
            out[0] = fn(a[0], a[1], a[2])
    elif ints == (0,):
        def k(out, a, n):
            out[0] = fn(n[0], a[1])
    elif ints == (1,):
        def k(out, a, n):
            out[0] = fn(a[0], n[1])
    else:
        def k(out, a, n):
            out[0] = fn(a[0], a[1])
    return cuda.jit(k)


@pytest.mark.parametrize("name, args, want", F64_CASES, ids=lambda v: str(v)[:12])
def test_float_functions(name, args, want):
    ints = tuple(k for k, v in enumerate(args) if isinstance(v, int))
    single = FUNCTIONS[name + "f"] if name + "f" in FUNCTIONS else None
    # the bounds libdevice documents reach 10 ulp (tgamma) and 8 (normcdfinv): 1e-14 / 2e-6
    for fname, dt, rtol in ((name, np.float64, 1e-14),
                            (name + "f", np.float32, 2e-6) if single else (None, None, None)):
        if fname is None:
            continue
        k = _kernel_for(getattr(libdevice, fname), len(args), ints)
        out = np.zeros(1, dt)
        a = np.array([v if k not in ints else 0 for k, v in enumerate(args)], dt)
        n = np.array([v if k in ints else 0 for k, v in enumerate(args)], np.int32)
        k[1, 1](out, a, n)
        assert out.dtype == dt
        np.testing.assert_allclose(out[0], want, rtol=rtol, atol=1e-300,
                                   err_msg=f"libdevice.{fname}{args}")


def k_fast(out, a):
    out[0] = libdevice.fast_sinf(a[0])
    out[1] = libdevice.fast_cosf(a[0])
    out[2] = libdevice.fast_expf(a[0])
    out[3] = libdevice.fast_logf(a[1])
    out[4] = libdevice.fast_powf(a[1], a[0])
    out[5] = libdevice.fast_fdividef(a[0], a[1])
    out[6], out[7] = libdevice.fast_sincosf(a[0])
    out[8] = libdevice.fast_log2f(a[1])
    out[9] = libdevice.fast_exp10f(a[0])
    out[10] = libdevice.fast_tanf(a[0])
    out[11] = libdevice.fast_log10f(a[1])


def test_fast_approximations_are_close_to_the_precise_functions():
    # the simulator computes the precise function; a GPU's fast variants differ by at most
    # a few 2^-21 (libdevice guide: fast_sinf 2^-21.41 absolute in [-pi, pi], ...)
    out = np.zeros(12, np.float32)
    a = np.array([0.5, 3.0], np.float32)
    cuda.jit(k_fast)[1, 1](out, a)
    want = [math.sin(0.5), math.cos(0.5), math.exp(0.5), math.log(3.0), 3.0 ** 0.5, 0.5 / 3,
            math.sin(0.5), math.cos(0.5), math.log2(3.0), 10 ** 0.5, math.tan(0.5),
            math.log10(3.0)]
    np.testing.assert_allclose(out, want, rtol=2e-6, atol=2e-6)


def k_misc(o, f, t, q, x, y):
    o[0] = libdevice.isnand(x[0])
    o[1] = libdevice.isinfd(x[1])
    o[2] = libdevice.signbitd(x[2])
    o[3] = libdevice.finitef(y[0])
    o[4] = libdevice.isnanf(y[1])
    o[5] = libdevice.ilogb(x[3])
    o[6] = libdevice.ilogb(x[4])
    o[7] = libdevice.ilogbf(y[0])
    o[8] = libdevice.signbitf(y[2])
    q[0] = libdevice.llround(x[5])
    q[1] = libdevice.llround(-x[5])
    q[2] = libdevice.llrint(x[5])
    q[3] = libdevice.llroundf(y[3])
    f[0] = libdevice.saturatef(y[1])
    f[1] = libdevice.saturatef(y[3])
    f[2] = libdevice.saturatef(y[2])
    f[3] = libdevice.saturatef(y[4])
    t[0], t[1] = libdevice.modf(x[6])
    t[2], o[9] = libdevice.remquo(x[7], x[8])
    t[3], t[4] = libdevice.sincospi(x[9])
    f[4], o[10] = libdevice.frexpf(y[4])
    f[5], f[6] = libdevice.modff(y[3])
    f[7], f[8] = libdevice.sincospif(y[4])
    f[9] = libdevice.sinf(x[6])                 # a float64 argument rounds to float32


def test_predicates_rounding_and_tuples():
    o = np.zeros(11, np.int32)
    f = np.zeros(10, np.float32)
    t = np.zeros(5)
    q = np.zeros(4, np.int64)
    x = np.array([math.nan, -math.inf, -0.0, 8.0, 0.0, 2.5, -3.25, 7.0, 2.0, 0.25])
    y = np.array([math.inf, math.nan, -0.0, 2.5, 0.5], np.float32)
    cuda.jit(k_misc)[1, 1](o, f, t, q, x, y)
    assert list(o[:9]) == [1, 1, 1, 0, 1, 3, -2 ** 31, 2 ** 31 - 1, 1]
    assert list(q) == [3, -3, 2, 3]
    assert list(f[:4]) == [0.0, 1.0, 0.0, 0.5]
    assert list(t[:3]) == [-0.25, -3.0, -1.0] and o[9] & 7 == 4
    np.testing.assert_allclose(t[3:], [math.sqrt(0.5)] * 2, rtol=1e-15)
    assert f[4] == 0.5 and o[10] == 0 and list(f[5:7]) == [0.5, 2.0]
    np.testing.assert_allclose(f[7:9], [1.0, 0.0], atol=1e-7)
    assert f[9].dtype == np.float32      # sinf: a float64 argument rounded to float32
    np.testing.assert_allclose(f[9], math.sin(-3.25), rtol=3e-7)


def k_special(out, x, n):
    out[0] = libdevice.j0(x[0])
    out[1] = libdevice.j1(x[0])
    out[2] = libdevice.jn(n[0], x[0])
    out[3] = libdevice.y0(x[0])
    out[4] = libdevice.y1(x[0])
    out[5] = libdevice.yn(n[0], x[0])
    out[6] = libdevice.erfcx(x[0])
    out[7] = libdevice.erfcx(x[1])
    out[8] = libdevice.erfcx(-x[0])


def test_special_functions_against_scipy():
    sp = pytest.importorskip("scipy.special")   # the expected values; the simulator's Bessel
    out = np.zeros(9)
    cuda.jit(k_special)[1, 1](out, np.array([2.5, 30.0]), np.array([3], np.int32))
    want = [sp.j0(2.5), sp.j1(2.5), sp.jv(3, 2.5), sp.y0(2.5), sp.y1(2.5), sp.yn(3, 2.5),
            sp.erfcx(2.5), sp.erfcx(30.0), sp.erfcx(-2.5)]
    np.testing.assert_allclose(out, want, rtol=1e-13)


def k_erfcx(out, x):
    for i in range(x.size):
        out[i] = libdevice.erfcx(x[i])


def test_erfcx_without_scipy():
    # erfcx(x) ~ 1 / (x sqrt(pi)) for large x; erfcx(-x) = 2 exp(x^2) - erfcx(x)
    x = np.array([0.0, 1e4, 1e200, -1.0, math.inf, -30.0])
    out = np.zeros(6)
    cuda.jit(k_erfcx)[1, 1](out, x)
    big = 1 / (1e4 * math.sqrt(math.pi)) * (1 - 1 / (2 * 1e8))
    np.testing.assert_allclose(out[:3], [1.0, big, 1 / (1e200 * math.sqrt(math.pi))],
                               rtol=1e-14)
    np.testing.assert_allclose(out[3], 2 * math.e - math.erfc(1.0) * math.e, rtol=1e-14)
    assert out[4] == 0.0 and out[5] == math.inf


# ---- in device functions; typing errors -------------------------------------------------------
@cuda.jit(device=True)
def _dev_hypot(x, y):
    return libdevice.hypotf(x, y)


def k_dev(out, a):
    out[0] = _dev_hypot(a[0], a[1])


def test_in_a_device_function():
    out = np.zeros(1, np.float32)
    cuda.jit(k_dev)[1, 1](out, np.array([3.0, 4.0], np.float32))
    assert out[0] == 5.0


@cuda.jit(device=True)
def _apply(f, x):
    return f(x)


def k_as_value(out, a):
    out[0] = _apply(libdevice.sqrtf, a[0])
    out[1] = _apply(libdevice.cbrtf, a[1])


def test_passed_as_a_function_value():
    out = np.zeros(2, np.float32)
    cuda.jit(k_as_value)[1, 1](out, np.array([16.0, -8.0], np.float32))
    assert list(out) == [4.0, -2.0]


def _rsqrt_clamped(x):
    return libdevice.saturatef(libdevice.rsqrtf(x))


def test_in_a_cuda_ufunc():
    uf = cuda.vectorize("float32(float32)", target="cuda")(_rsqrt_clamped)
    got = uf(np.array([0.25, 4.0, 16.0, -1.0], np.float32))
    np.testing.assert_allclose(got, [1.0, 0.5, 0.25, 0.0], rtol=2e-7)   # rsqrt(-1): NaN -> 0


def k_bad_array(out, a):
    out[0] = libdevice.sqrt(a)


def k_bad_count(out, a):
    out[0] = libdevice.sinf(a[0], a[1])


def k_bad_complex(out, a):
    out[0] = libdevice.sin(a[0] * 1j)


def k_bad_kw(out, a):
    out[0] = libdevice.sin(x=a[0])


@pytest.mark.parametrize("kernel, msg", [
    (k_bad_count, r"libdevice.sinf\(\) takes 1 argument\(s\) \(float32\), got 2"),
    (k_bad_complex, r"libdevice.sin\(\) takes a float64 here, got a value of type complex128"),
    (k_bad_kw, r"libdevice.sin\(\) takes no keyword arguments"),
    (k_bad_array, r"libdevice.sqrt\(\) takes a float64 here, got a value of type array"),
])
def test_typing_errors(kernel, msg):
    from cujit.frontend.typecheck import typecheck_kernel
    with pytest.raises(TypingError, match=msg):
        typecheck_kernel(kernel, (np.zeros(2), np.zeros(2)))


def test_result_types():
    assert FUNCTIONS["sincos"].result == T.UniTuple(T.float64, 2)
    assert FUNCTIONS["frexpf"].result == T.Tuple((T.float32, T.int32))
    assert FUNCTIONS["remquo"].result == T.Tuple((T.float64, T.int32))
    assert FUNCTIONS["fast_sincosf"].result == T.UniTuple(T.float32, 2)
    assert FUNCTIONS["popcll"].result is T.int32 and FUNCTIONS["float2half_rn"].result is T.int16


# ---- compile-only: every function goes through libNVVM -----------------------------------------
def _all_calls_kernel(names):
    """A kernel calling each of ``names`` on values read from arrays, stored to an output."""
    lines = ["def k(out, d, f, i, j, h):"]
    letters = {T.float64: "d", T.float32: "f", T.int32: "i", T.int64: "j", T.int16: "h"}
    for slot, n in enumerate(names):
        fn = FUNCTIONS[n]
        args = ", ".join(f"{letters[t]}[{k}]" for k, t in enumerate(fn.params))
        res = fn.result
        if isinstance(res, (T.Tuple, T.UniTuple)):
            lines.append(f"    r = L.{n}({args})")
            lines += [f"    out[{slot}] += r[{k}]" for k in range(len(res.types))]
        else:
            lines.append(f"    out[{slot}] = L.{n}({args})")
    return "\n".join(lines) + "\n"


@pytest.mark.compile
@pytest.mark.parametrize("part", range(4))
def test_every_function_compiles(part, tmp_path):
    names = sorted(FUNCTIONS)[part::4]
    src = _all_calls_kernel(names)
    path = tmp_path / f"ld_all_{part}.py"
    path.write_text("from cujit import libdevice as L\n" + src)
    spec = importlib.util.spec_from_file_location(f"ld_all_{part}", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    ptx = ptx_of(mod.k, argtypes=(T.float64[::1], T.float64[::1], T.float32[::1],
                                  T.int32[::1], T.int64[::1], T.int16[::1]))
    assert ".extern .func" not in ptx and "__nv_" not in ptx     # all linked and inlined
    assert ptx.count("st.global") >= len(names) // 2


def k_modes(o, d, f, i):
    o[0] = libdevice.dadd_ru(d[0], d[1])
    o[1] = libdevice.dsqrt_rd(d[0])
    o[2] = libdevice.popc(i[0])
    o[3] = libdevice.brev(i[0])
    o[4] = libdevice.double2int_rn(d[0])
    o[5] = libdevice.fmul_rz(f[0], f[1])


@pytest.mark.compile
def test_ptx_uses_the_rounding_instructions():
    ptx = ptx_of(k_modes, argtypes=(T.float64[::1], T.float64[::1], T.float32[::1],
                                    T.int32[::1]))
    for ins in ("add.rp.f64", "sqrt.rm.f64", "popc.b32", "brev.b32", "cvt.rni.s32.f64",
                "mul.rz.f32"):
        assert ins in ptx, ins
