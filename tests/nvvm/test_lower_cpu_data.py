"""Values of the issue-13 data kinds computed by the *generated IR*, run on the host as in
test_lower_cpu.py (libdevice → libm): cmath against Python's cmath, modf/frexp/ldexp,
bit_count, round at the float limits, records and complex array views."""
import cmath
import math

import numpy as np
import pytest

from cujit import types as T

from test_lower_cpu import run

pytestmark = pytest.mark.compile

CM_UNARY = ("exp", "log", "log10", "sqrt", "sin", "cos", "tan", "asin", "acos", "atan",
            "sinh", "cosh", "tanh", "asinh", "acosh", "atanh")


def cm_all(out, z):
    out[0] = cmath.exp(z)
    out[1] = cmath.log(z)
    out[2] = cmath.log10(z)
    out[3] = cmath.sqrt(z)
    out[4] = cmath.sin(z)
    out[5] = cmath.cos(z)
    out[6] = cmath.tan(z)
    out[7] = cmath.asin(z)
    out[8] = cmath.acos(z)
    out[9] = cmath.atan(z)
    out[10] = cmath.sinh(z)
    out[11] = cmath.cosh(z)
    out[12] = cmath.tanh(z)
    out[13] = cmath.asinh(z)
    out[14] = cmath.acosh(z)
    out[15] = cmath.atanh(z)
    p = cmath.polar(z)
    out[16] = complex(p[0], p[1])
    out[17] = cmath.rect(p[0], cmath.phase(z))
    out[18] = complex(cmath.isnan(z), cmath.isinf(z)) + cmath.isfinite(z) * 10
    out[19] = z.conjugate() + z.real + z.imag * 1j


ZS = [0.3 + 0.4j, -1.5 + 2.0j, 2.5 - 0.7j, -0.2 - 3.0j, 30.0 + 1.0j, -25.0 - 0.5j]


@pytest.mark.parametrize("z", ZS)
@pytest.mark.parametrize("ct,rtol", [(T.complex128, 1e-12), (T.complex64, 2e-5)])
def test_cmath_matches_python(z, ct, rtol):
    dt = ct.dtype
    out = np.zeros(20, dt)
    run(cm_all, (ct[::1], ct), out, dt.type(z))
    zz = complex(dt.type(z))
    want = [getattr(cmath, n)(zz) for n in CM_UNARY]
    p = cmath.polar(zz)
    want += [complex(*p), cmath.rect(p[0], cmath.phase(zz)), 10, zz.conjugate() + zz]
    for k, (g, w) in enumerate(zip(out, want)):
        assert g == pytest.approx(w, rel=rtol, abs=rtol), (k, g, w)


# C99 Annex G: every pair of -inf, negative, -0, +0, positive, +inf, NaN parts (numba-cuda's
# test_complex values), held to Python's cmath with its ulp bound and signed zeros
_EDGE_PARTS = [-math.inf, -math.pi, -1.0, -0.0, 0.0, 1.0, 1.5, math.inf, math.nan]
_EDGE_ZS = [complex(x, y) for x in _EDGE_PARTS for y in _EDGE_PARTS]


def _mag(z):
    return abs(complex(*(0.0 if math.isnan(p) else p for p in (z.real, z.imag))))


def _ulp_close(g, w, delta):
    if math.isnan(w):
        return math.isnan(g)
    if w == 0 and g == 0:
        return math.copysign(1, g) == math.copysign(1, w)
    return g == w or abs(g - w) <= delta


@pytest.mark.parametrize("ct", [T.complex128, T.complex64])
def test_cmath_special_values_match_python(ct):
    dt, bits = ct.dtype, (53 if ct is T.complex128 else 24)
    wrong = []
    for z in _EDGE_ZS:
        out = np.zeros(20, dt)
        run(cm_all, (ct[::1], ct), out, dt.type(z))
        z = complex(dt.type(z))     # the argument the kernel saw
        for name, g in zip(CM_UNARY, out):
            try:
                w = getattr(cmath, name)(z)
            except ValueError:      # a pole or domain edge: Python has no value to compare
                continue
            # numba's assertPreciseEqual at 2 ulp: relative to the complex magnitudes (of
            # the parts that are numbers; numba skips a pair that both hold a NaN)
            delta = 2.0 ** (1 - bits) * (_mag(complex(g)) + _mag(w))
            for gp, wp in ((g.real, w.real), (g.imag, w.imag)):
                # the tangents' zero signs are their last bits (numba ignores them)
                if name in ("tan", "tanh", "atanh") and gp == 0 and wp == 0:
                    continue
                if not _ulp_close(float(gp), wp, delta):
                    wrong.append((name, z, complex(g), w))
                    break
    assert not wrong, wrong[:10]


@pytest.mark.parametrize("name", ["exp", "log", "sqrt", "cosh", "sinh", "tanh", "acos",
                                  "acosh", "asinh", "atanh"])
def test_special_table_holds_for_every_finite_value(name):
    # the table stands for a whole class of finite parts; exp/cosh/sinh/tanh of an infinite
    # real part and a finite nonzero imaginary part are computed (C99's formulas) instead
    from cujit.nvvm.lower_complex import CLASS_VALUES, special_table
    base = special_table(name)
    for neg, pos in ((-0.25, 3.0), (-7.5, 0.6)):
        vals = list(CLASS_VALUES)
        vals[1], vals[4] = neg, pos
        other = special_table(name, tuple(vals))
        for i in range(7):
            for j in range(7):
                finite = i not in (0, 5, 6) and j not in (0, 5, 6)
                formula = name in ("exp", "cosh", "sinh", "tanh") and i in (0, 5) \
                    and j in (1, 4)
                if finite or formula:
                    continue
                np.testing.assert_array_equal(other[7 * i + j], base[7 * i + j],
                                              err_msg=f"{name} at class ({i}, {j})")


def cm_rect(out, r, phi):
    out[0] = cmath.rect(r, phi)


def _same_parts(g, w):
    # equal values, NaN where Python has NaN, and the sign of each zero
    return all((math.isnan(a) and math.isnan(e)) or
               (a == e and math.copysign(1, a) == math.copysign(1, e)) or
               (e != 0 and abs(a - e) <= 1e-6 * abs(e))
               for a, e in ((g.real, w.real), (g.imag, w.imag)))


@pytest.mark.parametrize("ft,ct", [(T.float64, T.complex128), (T.float32, T.complex64)])
def test_cmath_rect_special_values_match_python(ft, ct):
    # numba-cuda's test_rect: rect(0, -inf) is 0, rect(r, -0.0) keeps the sign of r * -0.0,
    # rect(inf, phi) signs its infinities by cos/sin phi
    wrong = []
    for r in _EDGE_PARTS:
        for phi in _EDGE_PARTS:
            r32, phi32 = float(ft.dtype.type(r)), float(ft.dtype.type(phi))
            try:
                w = cmath.rect(r32, phi32)
            except ValueError:      # r nonzero and phi infinite: Python has no value
                continue
            out = np.zeros(1, ct.dtype)
            run(cm_rect, (ct[::1], ft, ft), out, r, phi)
            if not _same_parts(complex(out[0]), w):
                wrong.append((r, phi, complex(out[0]), w))
    assert not wrong, wrong[:10]


def cm_complex_parts(out, z, y):
    out[0] = complex(*cmath.polar(z))
    out[1] = complex(z.real, y)
    out[2] = complex(z, y)


@pytest.mark.parametrize("ct", [T.complex128, T.complex64])
def test_complex_constructor_keeps_signed_zero_imaginary_part(ct):
    # complex(x, -0.0) is (x, -0.0) in Python: only a complex argument's other part is
    # added in (numba-cuda's test_polar at inf-1j: polar's phase is -0.0)
    out = np.zeros(3, ct.dtype)
    run(cm_complex_parts, (ct[::1], ct, ct.underlying_float), out,
        ct.dtype.type(complex(math.inf, -1.0)), -0.0)
    want = [complex(*cmath.polar(complex(math.inf, -1.0))), complex(math.inf, -0.0),
            complex(complex(math.inf, -1.0), -0.0)]
    for g, w in zip(out, want):
        assert _same_parts(complex(g), w), (complex(g), w)


def cm_log_base(out, z, base):
    out[0] = cmath.log(z, base)


@pytest.mark.parametrize("z,base", [(2 + 1j, 3 - 2j), (-1.5 + 0.5j, 10.0 + 0j),
                                    (0.25 - 4j, 0.5 + 0.5j)])
def test_cmath_log_with_base(z, base):
    out = np.zeros(1, np.complex128)
    run(cm_log_base, (T.complex128[::1], T.complex128, T.complex128), out, z, base)
    assert out[0] == pytest.approx(cmath.log(z, base), rel=1e-14)


def minmax_pair(out, x, y):
    out[0] = max(x, y)
    out[1] = min(x, y)
    out[2] = max(x, y, 0.0)


@pytest.mark.parametrize("ft", [T.float32, T.float64])
@pytest.mark.parametrize("x,y", [(math.nan, 1.0), (1.0, math.nan), (-2.0, 3.0)])
def test_two_float_minmax_ignore_nan(ft, x, y):
    # numba-cuda's lowering: libdevice fmax/fmin for two floats, Python's rule for more
    out = np.zeros(3, ft.dtype)
    run(minmax_pair, (ft[::1], ft, ft), out, x, y)
    np.testing.assert_array_equal(out, [np.fmax(x, y), np.fmin(x, y), max(x, y, 0.0)])


def modf_frexp(out, x, n):
    f, i = math.modf(x)
    out[0] = f
    out[1] = i
    m, e = math.frexp(x)
    out[2] = m
    out[3] = e
    out[4] = math.ldexp(m, e + n)
    out[5] = round(x, 2)
    out[6] = round(x, -1)


@pytest.mark.parametrize("x", [3.75, -2.125, 1e-300, 6.02e23, 0.0])
def test_modf_frexp_ldexp_round(x):
    out = np.zeros(7)
    run(modf_frexp, (T.float64[::1], T.float64, T.int64), out, x, 3)
    f, i = math.modf(x)
    m, e = math.frexp(x)
    np.testing.assert_array_equal(out[:5], [f, i, m, e, math.ldexp(m, e + 3)])
    assert out[5] == numba_round(x, 2)
    assert out[6] == numba_round(x, -1)


def numba_round(x, nd):
    """numba's round_ndigits (CPython's fallback algorithm, not its correctly rounded one:
    round(2.675, 2) is 2.68 there, 2.67 in CPython)."""
    if math.isinf(x) or math.isnan(x):
        return x
    if nd >= 0:
        pow1, pow2 = (10.0 ** (nd - 22), 1e22) if nd > 22 else (10.0 ** nd, 1.0)
        y = (x * pow1) * pow2
        if math.isinf(y):
            return x
    else:
        pow1 = 10.0 ** -nd if nd > -309 else math.inf
        y = x / pow1
    z = float(np.rint(y))
    if nd >= 0:
        return (z / pow2) / pow1
    return z if z == 0 else z * pow1


def round_limits(out, x, nd):
    out[0] = round(x, nd)


@pytest.mark.parametrize("x,nd", [(1.7976931348623157e308, 2), (-1.7976931348623157e308, 5),
                                  (1.7976931348623157e308, 300), (5e-324, 3), (1e300, 30),
                                  (123.456, -400), (2.675, 2), (0.5, 0)])
def test_round_at_float64_limits(x, nd):
    out = np.zeros(1)
    run(round_limits, (T.float64[::1], T.float64, T.int64), out, x, nd)
    assert out[0] == numba_round(x, nd)
    if (x, nd) != (2.675, 2):
        assert out[0] == round(x, nd)


@pytest.mark.parametrize("x,nd", [(3.4028235e38, 3), (-3.4028235e38, 1), (1.5e-45, 2),
                                  (0.3425, 3)])   # float64 scaling: 0.343
def test_round_at_float32_limits(x, nd):
    out = np.zeros(1, np.float32)
    run(round_limits, (T.float32[::1], T.float32, T.int64), out, np.float32(x), nd)
    assert out[0] == np.float32(round(float(np.float32(x)), nd))
    assert out[0] == np.float32(numba_round(float(np.float32(x)), nd))


def bit_counts(out, a, b, c):
    out[0] = a.bit_count()
    out[1] = b.bit_count()
    out[2] = c.bit_count()


def test_bit_count():
    out = np.zeros(3, np.int64)
    run(bit_counts, (T.int64[::1], T.int64, T.int32, T.uint64), out, -5, -(2 ** 31),
        2 ** 64 - 1)
    np.testing.assert_array_equal(out, [(-5).bit_count(), (2 ** 31).bit_count(), 64])


REC = np.dtype([("a", np.float64), ("b", np.int32), ("v", np.float32, (3,)),
                ("m", np.int16, (2, 2))], align=True)


def records(out, inp, src, src2):
    out[0] = inp[0]
    out[1]["v"] = src
    out[1].m = src2
    out[1].b = inp[0].b + 1


def test_record_copy_and_nested_store():
    inp = np.zeros(1, REC)
    inp[0]["a"], inp[0]["b"], inp[0]["v"] = 2.5, 7, [1, 2, 3]
    out = np.zeros(2, REC)
    rt = T.Record(REC)
    run(records, (rt[::1], rt[::1], T.float32[::1], T.int16[:, ::1]), out, inp,
        np.array([4, 5, 6], np.float32), np.array([[1, 2], [3, 4]], np.int16))
    assert out[0].tobytes() == inp[0].tobytes()
    np.testing.assert_array_equal(out[1]["v"], [4, 5, 6])
    np.testing.assert_array_equal(out[1]["m"], [[1, 2], [3, 4]])
    assert out[1]["b"] == 8


def real_imag(z, out):
    out[0] = z.real[1] + z.imag[2] * 10
    z.imag[0] = 5.0


def test_complex_array_real_imag_views():
    z = np.array([1 + 2j, 3 + 4j, 5 + 6j], np.complex64)
    out = np.zeros(1, np.float32)
    run(real_imag, (T.complex64[::1], T.float32[::1]), z, out)
    assert out[0] == 3 + 60
    assert z[0] == 1 + 5j


def byte_view(out, b, start):
    v = b[start:start + 8].view(np.int32)
    out[0] = v[0]
    out[1] = v[1]
    out[2] = v.shape[0]
    out[3] = v.strides[0]


def test_array_view_as_a_larger_element():
    b = np.arange(64, dtype=np.uint8)
    out = np.zeros(4, np.int64)
    run(byte_view, (T.int64[::1], T.uint8[::1], T.int64), out, b, 8)
    want = b[8:16].view(np.int32)
    assert out.tolist() == [want[0], want[1], 2, 4]


def reductions(out, a):
    # (min/max raise ValueError for an empty array: a PTX `exit`, which has no host form)
    out[0] = np.sum(a)
    out[1] = np.nansum(a)
    out[2] = a.mean()
    out[3] = np.nanmean(a)
    out[4] = np.count_nonzero(a)


def test_reductions_in_the_generated_ir():
    a = np.array([[1.5, -0.0], [np.nan, 4.0]])[::-1]
    out = np.zeros(5)
    run(reductions, (T.float64[::1], T.float64[:, :]), out, a)
    np.testing.assert_array_equal(out, [np.sum(a), np.nansum(a), a.mean(), np.nanmean(a),
                                        np.count_nonzero(a)])


CAPTURED = np.arange(6.0).reshape(2, 3)[:, ::-1]


def copy_then_write(out):
    q = CAPTURED.copy()
    q[1, 2] = -1.0
    for i in range(2):
        for j in range(3):
            out[i * 3 + j] = q[i, j]


def test_copy_of_a_captured_array_in_the_generated_ir():
    out = np.zeros(6)
    run(copy_then_write, (T.float64[::1],), out)
    want = CAPTURED.copy()
    want[1, 2] = -1.0
    assert out.tolist() == want.ravel().tolist()
