"""The vector executor's array helpers (cujit/simulator/vecops.py) give, element by
element, the bits of the per-thread executor's scalar helpers (cujit/simulator/scalars.py)."""
import numpy as np
import pytest

from cujit import types as T
from cujit.simulator import scalars, vecops


def _edge(dtype):
    dt = np.dtype(dtype)
    if dt.kind == "f":
        fi = np.finfo(dt)
        base = [0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 1.5, -2.5, np.nan, -np.nan, np.inf, -np.inf,
                float(fi.tiny), -float(fi.tiny), float(fi.smallest_subnormal),
                -float(fi.smallest_subnormal), float(fi.max), -float(fi.max), 7.0, -7.0,
                0.1, 1e10, -1e10, 2.0 ** 31, -2.0 ** 31, 2.0 ** 63, -2.0 ** 63, 2.0 ** 64,
                255.5, -128.5, 3.0, 100.25]
        rng = np.random.default_rng(7)
        rand = rng.standard_normal(64) * 10.0 ** rng.integers(-30, 30, 64)
        return np.concatenate([np.array(base, dt), rand.astype(dt)])
    ii = np.iinfo(dt)
    vals = [0, 1, -1, 2, -2, 3, 7, -7, 31, 32, 63, 64, 65, ii.max, ii.min, ii.max - 1,
            ii.min + 1, 100, -100, 12345]
    return np.array([v for v in vals if ii.min <= v <= ii.max], dt)


def _scalar_values(arr, t):
    """The per-thread executor's values: Python ints for integers, NumPy scalars else."""
    conv = scalars.caster(t)
    return [conv(v) for v in (arr.tolist() if arr.dtype.kind in "iub" else list(arr))]


def _bits(values, dtype):
    return np.array(values, dtype=dtype).view(np.uint8)


INTS = [T.int8, T.int16, T.int32, T.int64, T.uint8, T.uint16, T.uint32, T.uint64]
FLOATS = [T.float32, T.float64]


@pytest.mark.parametrize("src", INTS + FLOATS + [T.boolean], ids=str)
@pytest.mark.parametrize("dst", INTS + FLOATS + [T.boolean], ids=str)
@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_conversions_match_scalar(src, dst):
    a = _edge(src.dtype) if src is not T.boolean else np.array([True, False])
    want = [scalars.caster(dst)(v) for v in _scalar_values(a, src)]
    got = vecops.vcaster(dst)(a)
    assert got.dtype == dst.dtype
    np.testing.assert_array_equal(got.view(np.uint8), _bits(want, dst.dtype))


@pytest.mark.parametrize("t", FLOATS, ids=str)
def test_float_floordiv_and_mod_on_lane_arrays_match_each_lane(t):
    # one definition for both executors: the vector executor's call on lane arrays gives,
    # lane by lane, the per-thread executor's call on that lane's scalars
    a = _edge(t.dtype)
    x = np.repeat(a, len(a))
    y = np.tile(a, len(a))
    for fn in (scalars.float_mod, scalars.float_floordiv):
        with np.errstate(all="ignore"):
            got = fn(x, y)
            want = [fn(p, q) for p, q in zip(x, y)]
        assert isinstance(got, np.ndarray) and got.dtype == t.dtype
        assert all(type(w) is t.dtype.type for w in want)
        np.testing.assert_array_equal(got.view(np.uint8), _bits(want, t.dtype),
                                      err_msg=fn.__name__)


def test_float64_floordiv_and_mod_are_cpythons():
    # the lowering emits CPython's float_rem / float_floor_div: Python floats are the
    # reference wherever CPython does not raise (a zero divisor)
    a = _edge(np.float64)
    for p in a:
        for q in a:
            if q == 0:
                continue
            for fn, op in ((scalars.float_mod, float.__mod__),
                           (scalars.float_floordiv, float.__floordiv__)):
                with np.errstate(all="ignore"):
                    got = fn(p, q)
                want = op(float(p), float(q))
                assert np.float64(want).tobytes() == np.float64(got).tobytes() or \
                    (want != want and got != got), (fn.__name__, p, q, got, want)


@pytest.mark.parametrize("t", INTS, ids=str)
def test_shifts_match_scalar(t):
    x = _edge(t.dtype)
    n = np.array([0, 1, 3, 7, 8, 15, 16, 31, 32, 63, 64, 65, 200, -1, -64], np.int64)
    x2, n2 = np.repeat(x, len(n)), np.tile(n, len(x))
    shl = scalars.wrapper(t)
    n2 = vecops.vcaster(t)(n2)     # the operation's type, as the rewriter converts
    want_l = [shl(scalars.int_shl(int(p), int(q), t.bitwidth)) for p, q in zip(x2, n2)]
    want_r = [shl(scalars.int_shr(int(p), int(q), t.bitwidth)) for p, q in zip(x2, n2)]
    np.testing.assert_array_equal(vecops.vshl(x2, n2, t.bitwidth), np.array(want_l, t.dtype))
    np.testing.assert_array_equal(vecops.vshr(x2, n2, t.bitwidth), np.array(want_r, t.dtype))


@pytest.mark.parametrize("t", INTS, ids=str)
def test_int_floordiv_and_mod_on_lane_arrays_match_each_lane(t):
    # one definition for both executors: on lane arrays (wrapping natively) it gives, lane
    # by lane, what it gives on one thread's Python ints once wrapped; 0 for a zero divisor
    x = _edge(t.dtype)
    x2, y2 = np.repeat(x, len(x)), np.tile(x, len(x))
    wrap = scalars.wrapper(t)
    for fn in (scalars.int_floordiv, scalars.int_mod):
        with np.errstate(all="ignore"):
            got = fn(x2, y2)
        want = [wrap(fn(int(p), int(q))) for p, q in zip(x2, y2)]
        assert got.dtype == t.dtype
        np.testing.assert_array_equal(got, np.array(want, t.dtype), err_msg=fn.__name__)
        assert fn(7, 0) == 0 and fn(x2, np.zeros_like(x2)).tolist() == [0] * len(x2)
    assert scalars.int_floordiv(-7, 2) == -4 and scalars.int_mod(-7, 2) == 1
    assert scalars.int_mod(7, -2) == -1
    # NumPy integer scalars (a uniform operand) follow the same rules
    assert scalars.int_mod(np.int64(7), np.int64(-2)) == -1
    assert scalars.int_floordiv(np.int32(7), np.int32(0)) == 0


def test_int_floordiv_by_zero_raises_under_debug_error_state():
    with np.errstate(divide="raise"):
        with pytest.raises(ZeroDivisionError):
            scalars.int_floordiv(1, 0)
        with pytest.raises(ZeroDivisionError):
            scalars.int_mod(1, 0)


@pytest.mark.parametrize("op", ["<", "<=", ">", ">=", "==", "!="])
def test_compare_int64_uint64_exactly(op):
    a = np.array([-1, 0, 1, 2 ** 63 - 1, -2 ** 63, 5], np.int64)
    b = np.array([2 ** 64 - 1, 0, 1, 2 ** 63, 0, 5], np.uint64)
    x, y = np.repeat(a, len(b)), np.tile(b, len(a))
    import operator
    pyop = {"<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge,
            "==": operator.eq, "!=": operator.ne}[op]
    want = [pyop(int(p), int(q)) for p, q in zip(x, y)]
    assert vecops.vcompare(op, x, y).tolist() == want
    want = [pyop(int(q), int(p)) for p, q in zip(x, y)]
    assert vecops.vcompare(op, y, x).tolist() == want


ONE_ARG = ["sqrt", "fabs", "sin", "cos", "tan", "exp", "expm1", "log", "log1p", "log2",
           "log10", "asin", "acos", "atan", "sinh", "cosh", "tanh", "asinh", "acosh",
           "atanh", "exp2", "erf", "erfc", "gamma", "lgamma", "npfloor", "npceil",
           "nptrunc", "degrees", "radians"]
TWO_ARG = ["copysign", "fmod", "atan2", "pow", "hypot"]


@pytest.mark.parametrize("t", FLOATS, ids=str)
@pytest.mark.parametrize("name", ONE_ARG + TWO_ARG)
def test_math_array_bits_equal_scalar_bits(t, name):
    """Every vectorized math function, on arrays, gives the scalar helper's bits for NaN,
    infinities, zeros, subnormals, huge and random values (the float32 SIMD loops of
    NumPy's transcendental ufuncs may not: those run element by element)."""
    a = _edge(t.dtype)
    nargs = 2 if name in TWO_ARG else 1
    fn = vecops.vmath(name, [t] * nargs, t)
    sf = scalars.math_func(name, [t] * nargs, t)
    with np.errstate(all="ignore"):
        if nargs == 1:
            got = fn(a)
            want = [sf(v) for v in a]
        else:
            x, y = np.repeat(a, 9), np.tile(a[:9], len(a))
            got = fn(x, y)
            want = [sf(p, q) for p, q in zip(x, y)]
    np.testing.assert_array_equal(np.asarray(got).view(np.uint8), _bits(want, t.dtype))


@pytest.mark.parametrize("name", ["sqrt", "fabs", "copysign", "fmod", "npfloor"])
def test_exact_functions_really_run_vectorized(name):
    # the whitelist is used: these do not go element by element
    t = T.float32
    nargs = 2 if name in ("copysign", "fmod") else 1
    fn = vecops.vmath(name, [t] * nargs, t)
    assert name in vecops.MATH_EXACT and fn.__name__ == "vec"


@pytest.mark.parametrize("name", ["floor", "ceil", "trunc"])
@pytest.mark.parametrize("t", FLOATS, ids=str)
def test_float_to_int_math(name, t):
    a = _edge(t.dtype)
    fn = vecops.vmath(name, [t], T.int64)
    sf = scalars.math_func(name, [t], T.int64)
    np.testing.assert_array_equal(fn(a), np.array([sf(v) for v in a], np.int64))


@pytest.mark.parametrize("t,raw", [
    (np.float32, [0x7fc00001, 0xffc00002, 0x7fa00003, 0xff800004, 0x3f800000, 0x7f800000]),
    (np.float64, [0x7ff8000000000001, 0xfff8000000000002, 0x7ff4000000000003,
                  0xfff0000000000004, 0x3ff0000000000000, 0x7ff0000000000000])],
    ids=["float32", "float64"])
def test_basic_ops_keep_scalar_nan_payloads(t, raw):
    """Two NaN operands: NumPy's scalar ``+``/``*`` keep the second one's payload, its
    array loops the first one's; the vector helpers give the scalar's bits (also for a
    uniform scalar operand on either side)."""
    import operator
    ut = np.uint32 if t is np.float32 else np.uint64
    vals = np.array(raw, ut).view(t)
    x, y = np.repeat(vals, len(vals)), np.tile(vals, len(vals))
    for vf, op in ((vecops.vadd, operator.add), (vecops.vmul, operator.mul)):
        with np.errstate(all="ignore"):
            want = np.array([op(p, q) for p, q in zip(x, y)], t)
            assert vf(x, y).view(ut).tolist() == want.view(ut).tolist()
            for k in range(len(vals)):
                w1 = np.array([op(vals[k], q) for q in vals], t)
                assert vf(vals[k], vals).view(ut).tolist() == w1.view(ut).tolist()
                w2 = np.array([op(p, vals[k]) for p in vals], t)
                assert vf(vals, vals[k]).view(ut).tolist() == w2.view(ut).tolist()
