"""The differential corpus: kernels, input generators and expected values under Numba's
typing, shared by the simulator-vs-expectation tests (CI) and the simulator-vs-GPU test (H200).

Each :class:`Case` names a kernel, how to build its inputs from a ``numpy.random.Generator``
(or from arrays hypothesis drew), its launch configuration, the outputs to compare and how:
``exact`` (bit for bit, any NaN equal to any NaN: integers, booleans and IEEE basic
operations), ``ulp`` (within a bound in units in the last place: transcendental functions, as
libdevice documents them, plus one for the simulator's own rounding) or ``rel`` (a relative
tolerance: kernels whose float sums the GPU may contract into FMAs or reorder through
atomics).

The expected values (:func:`expected`) are written with NumPy at the dtypes Numba's typing
gives (``int32 + int32`` is int64, float literals are float64, ``int / int`` is float64 ...),
independently of the compiler's ``rules.py``.
"""
import math

import numpy as np

import cujit as cuda
from corpus_kernels import (arith, basic_math, bf16_ops, compare_ops, conversions, fp8_convs,
                            fp8_types, vector_ops,
                            int_bits, int_histogram, literals, transcendental, warp_sum)
from kernels_common import benchmark_kernels, example

__all__ = ["CASES", "Case", "EDGES", "edge_array", "result_dtype", "compare", "expected",
           "defined_divisors"]

# ---- inputs ----------------------------------------------------------------------------

INT_DTYPES = (np.int8, np.int32, np.int64, np.uint32, np.uint64)
FLOAT_DTYPES = (np.float32, np.float64)
DTYPES = INT_DTYPES + FLOAT_DTYPES


def EDGES(dtype):
    """Edge values of ``dtype``: NaN, ±inf, ±0, subnormals, extremes (floats); minimum,
    maximum, 0, ±1 (integers)."""
    dt = np.dtype(dtype)
    if dt.kind == "f":
        fi = np.finfo(dt)
        return np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, fi.smallest_subnormal,
                         -fi.smallest_subnormal, fi.tiny, fi.max, -fi.max, 1.0, -1.0, 0.5,
                         -2.5, 3.0, 1e-3], dt)
    ii = np.iinfo(dt)
    vals = [ii.min, ii.max, 0, 1, ii.max - 1, 2, 7]
    if ii.min < 0:
        vals += [-1, -7, ii.min + 1]
    return np.array(vals, dt)


def edge_array(rng, dtype, n):
    """``n`` values of ``dtype``: edge values first (shuffled), then random ones."""
    dt = np.dtype(dtype)
    e = EDGES(dt)
    rng.shuffle(e)
    if dt.kind == "f":
        r = (rng.standard_normal(n) * 10.0 ** rng.integers(-3, 4, n)).astype(dt)
    else:
        ii = np.iinfo(dt)
        r = rng.integers(ii.min, ii.max, n, dtype=dt, endpoint=True)
    out = np.concatenate([e, r])[:n]
    return out.astype(dt)


def result_dtype(op, da, db=None):
    """The dtype of ``a <op> b`` under Numba's typing: integer arithmetic at least 64 bits,
    signed when either is signed; ``int / int`` float64; float with anything NumPy's
    promotion; comparisons bool."""
    da = np.dtype(da)
    db = da if db is None else np.dtype(db)
    if op in ("<", "<=", "==", "!="):
        return np.dtype(np.bool_)
    if da.kind in "iub" and db.kind in "iub":
        if op == "/":
            return np.dtype(np.float64)
        signed = da.kind in "ib" or db.kind in "ib"
        return np.dtype(np.int64 if signed else np.uint64)
    return np.promote_types(da, db)


def defined_divisors(a, b):
    """``b`` with the divisors that make ``a // b`` / ``a % b`` undefined on a GPU replaced
    by 1: the most negative int64 divided by -1 overflows (LLVM ``sdiv``/``srem`` give
    poison, PTX an unspecified value)."""
    rt = result_dtype("//", a.dtype, b.dtype)
    if rt != np.int64:
        return b
    with np.errstate(all="ignore"):
        bad = (a.astype(np.int64) == np.iinfo(np.int64).min) & (b.astype(np.int64) == -1)
    if bad.any():
        b = b.copy()
        b[bad] = 1
    return b


# ---- expectations (NumPy at the typed dtypes) --------------------------------------------

def _fmod_py(x, y):
    # CPython's float_rem (Numba's real_mod): fmod moved to the divisor's sign; a zero
    # remainder takes the divisor's sign
    r = np.fmod(x, y)
    adj = (r != 0) & ~np.isnan(r) & ((r < 0) != (y < 0))
    r = np.where(adj, r + y, r)
    return np.where(r == 0, np.copysign(np.zeros_like(r), y), r)


def _floordiv_py(x, y):
    mod = np.fmod(x, y)
    div = (x - mod) / y
    fix = (mod != 0) & ~np.isnan(mod) & ((y < 0) != (mod < 0))
    div = np.where(fix, div - 1, div)
    fl = np.floor(div)
    fl = np.where(div - fl > 0.5, fl + 1, fl)
    zero = np.copysign(np.zeros_like(x), x / y)
    return np.where(div == 0, zero, fl)


def _sat_int(x, dt):
    """Float → integer as the H200 computes it: truncate, saturate; NaN gives int64's
    minimum, int32's minimum from float64 and 0 from float32 (measured), 0 otherwise."""
    ii = np.iinfo(dt)
    wide = np.asarray(x).dtype.itemsize >= 8
    x = np.asarray(x, np.float64)
    nan = float(ii.min) if ii.min < 0 and (ii.bits == 64 or (ii.bits == 32 and wide)) else 0.0
    t = np.trunc(np.nan_to_num(x, nan=nan, posinf=np.inf, neginf=-np.inf))
    out = np.empty(x.shape, dt)
    for k, v in enumerate(t.tolist()):
        out[k] = ii.max if v >= ii.max else ii.min if v <= ii.min else int(v)
    return out


def _bf16_bits(v, like):
    """bfloat16 bits (int) of the exact value ``v`` (a Fraction, or a float for non-finite
    values) rounded to nearest even; ``like`` (a float of the same value computed in float64)
    gives the sign of an exact zero.  NaN is the canonical 0x7FFF (CUDART_NAN_BF16).
    Written from the bfloat16 format (8-bit significand, exponents -126..127), not from
    cujit's implementation."""
    from fractions import Fraction
    if isinstance(v, float) and math.isnan(v):
        return 0x7FFF
    if isinstance(v, float) and math.isinf(v):
        return 0xFF80 if v < 0 else 0x7F80
    if v == 0:
        return 0x8000 if math.copysign(1.0, like) < 0 else 0
    sign = 0x8000 if v < 0 else 0
    m = abs(Fraction(v))
    e = m.numerator.bit_length() - m.denominator.bit_length()
    if Fraction(2) ** e > m:
        e -= 1
    q = max(e, -126) - 7
    scaled = m / Fraction(2) ** q
    n = scaled.numerator // scaled.denominator
    rem = scaled - n
    if rem > Fraction(1, 2) or (rem == Fraction(1, 2) and n % 2):
        n += 1
    if n < 128:
        return sign | n
    k = n.bit_length() - 1
    biased = k + q + 127
    if biased >= 255:
        return sign | 0x7F80
    return sign | (biased << 7) | ((n >> (k - 7)) & 0x7F)


def _bf16_value(bits):
    return float(np.uint32(bits << 16).view(np.float32))


def _as_i16(bits):
    return bits - 0x10000 if bits & 0x8000 else bits


def _bf16_expected(ins):
    from fractions import Fraction
    a, b, n = ins["a"], ins["b"], ins["n"]
    out = {k: [] for k in ("add", "sub", "mul", "div", "fma_", "lt", "ne", "to_i32",
                           "from_i32", "from_f64")}

    def rnd(exact_fn, float_fn, *xs):
        f = float_fn(*xs)
        if not all(map(math.isfinite, xs)) or not math.isfinite(f) or (
                exact_fn is None):
            return _bf16_bits(f, f)
        return _bf16_bits(exact_fn(*map(Fraction, xs)), f)

    for k in range(a.size):
        fa, fb = float(a[k]), float(b[k])
        x = _bf16_value(_bf16_bits(Fraction(fa) if math.isfinite(fa) else fa, fa))
        y = _bf16_value(_bf16_bits(Fraction(fb) if math.isfinite(fb) else fb, fb))
        out["add"].append(rnd(lambda p, q: p + q, lambda p, q: p + q, x, y))
        out["sub"].append(rnd(lambda p, q: p - q, lambda p, q: p - q, x, y))
        out["mul"].append(rnd(lambda p, q: p * q, lambda p, q: p * q, x, y))
        if y == 0 or not (math.isfinite(x) and math.isfinite(y)):
            with np.errstate(all="ignore"):
                q = float(np.float64(x) / np.float64(y))
            out["div"].append(_bf16_bits(q, q))
        else:
            out["div"].append(_bf16_bits(Fraction(x) / Fraction(y), x / y))
        out["fma_"].append(rnd(lambda p, q: p * q + p, lambda p, q: p * q + p, x, y))
        out["lt"].append(x < y)
        out["ne"].append(x != y)
        if math.isnan(x):
            out["to_i32"].append(0)
        elif math.isinf(x):
            out["to_i32"].append(2 ** 31 - 1 if x > 0 else -2 ** 31)
        else:
            out["to_i32"].append(min(max(round(x), -2 ** 31), 2 ** 31 - 1))
        out["from_i32"].append(_bf16_bits(Fraction(int(n[k])), float(n[k])))
        d = float(np.float64(fa) * 1.1)
        if math.isnan(d):
            # cvt.rn.bf16.f64 keeps the sign and the top 7 payload bits, quiet bit set
            u = int(np.float64(np.float64(fa) * 1.1).view(np.uint64))
            out["from_f64"].append(((u >> 48) & 0x8000) | 0x7FC0 | ((u >> 45) & 0x7F))
        else:
            out["from_f64"].append(_bf16_bits(Fraction(d) if math.isfinite(d) else d, d))
    res = {k: np.array([_as_i16(v) for v in vals], np.int16)
           for k, vals in out.items() if k not in ("lt", "ne", "to_i32")}
    res["lt"] = np.array(out["lt"], np.bool_)
    res["ne"] = np.array(out["ne"], np.bool_)
    res["to_i32"] = np.array(out["to_i32"], np.int32)
    return res


def _fp8_value(code, fmt):
    """The value of FP8 ``code`` from the format's definition (E4M3: bias 7, S.1111.111 is
    NaN, no inf; E5M2: bias 15, IEEE inf and NaN)."""
    s = -1.0 if code & 0x80 else 1.0
    if fmt == "e4m3":
        e, m = (code >> 3) & 0xF, code & 7
        if e == 15 and m == 7:
            return math.nan
        return s * (2.0 ** -6 * m / 8 if e == 0 else 2.0 ** (e - 7) * (1 + m / 8))
    e, m = (code >> 2) & 0x1F, code & 3
    if e == 31:
        return s * math.inf if m == 0 else math.nan
    return s * (2.0 ** -14 * m / 4 if e == 0 else 2.0 ** (e - 15) * (1 + m / 4))


def _fp8_code(x, fmt):
    """Saturating round-to-nearest-even FP8 code of float ``x``: the nearest finite code of
    ``x``'s sign (ties to the even code), NaN 0x7F (cvt.rn.satfinite)."""
    from fractions import Fraction
    if math.isnan(x):
        return 0x7F
    sign = 0x80 if math.copysign(1.0, x) < 0 else 0
    cands = [c for c in range(sign, sign + 0x80) if math.isfinite(_fp8_value(c, fmt))]
    if math.isinf(x):
        return max(cands, key=lambda c: abs(_fp8_value(c, fmt)))
    return min(cands, key=lambda c: (abs(Fraction(_fp8_value(c, fmt)) - Fraction(x)), c & 1))


def _e8m0_value(x):
    """E8M0 of float ``x`` from the format's definition: the smallest power of two at or
    above ``|x|`` (cudaRoundPosInf), limited to 2**-127 .. 2**127 (saturating); NaN."""
    from fractions import Fraction
    if math.isnan(x):
        return math.nan
    if math.isinf(x):
        return 2.0 ** 127
    m = abs(Fraction(x))
    k = -127
    while k < 127 and Fraction(2) ** k < m:
        k += 1
    return 2.0 ** k


def _fp8_types_expected(ins):
    out = {}
    for key, fmt in (("q4", "e4m3"), ("q5", "e5m2")):
        out[key] = np.array([_fp8_value(_fp8_code(float(v), fmt), fmt) for v in ins["x"]],
                            np.float32)
    out["r4"] = np.array([_fp8_value(_fp8_code(float(v), "e4m3"), "e4m3") for v in ins["d"]],
                         np.float32)
    out["q8"] = np.array([_e8m0_value(float(v)) for v in ins["x"]], np.float32)
    out["r8"] = np.array([_e8m0_value(float(v)) for v in ins["d"]], np.float32)
    out["n4"] = np.array([0 if math.isnan(v) else math.trunc(float(v)) for v in out["q4"]],
                         np.int32)
    return out


def _fp8_expected(ins):
    out = {}
    for fmt, short in (("e4m3", "4"), ("e5m2", "5")):
        codes = [_fp8_code(float(v), fmt) for v in ins["x"]]
        out["e" + short] = np.array(codes, np.uint8)
        out["back" + short] = np.array([_fp8_value(c, fmt) for c in codes], np.float32)
    return out


def expected(name, ins):
    """Expected outputs {output name: array} of case ``name`` for input arrays ``ins``."""
    if name == "bf16_ops":
        return _bf16_expected(ins)
    if name == "fp8_convs":
        return _fp8_expected(ins)
    if name == "fp8_types":
        return _fp8_types_expected(ins)
    if name == "vector_ops":
        return _vector_expected(ins)
    with np.errstate(all="ignore"):
        if name == "arith":
            a, b = ins["a"], ins["b"]
            rt = result_dtype("+", a.dtype, b.dtype)
            x, y = a.astype(rt), b.astype(rt)
            out = {"add": x + y, "sub": x - y, "mul": x * y}
            dt = result_dtype("/", a.dtype, b.dtype)
            out["div"] = a.astype(dt) / b.astype(dt)
            if rt.kind == "f":
                out["fdiv"], out["mod"] = _floordiv_py(x, y), _fmod_py(x, y)
            else:
                out["fdiv"], out["mod"] = np.floor_divide(x, y), np.remainder(x, y)
            return out
        if name == "compare_ops":
            a, b = ins["a"], ins["b"]
            ct = _compare_type(a.dtype, b.dtype)
            x, y = a.astype(ct), b.astype(ct)
            return {"lt": x < y, "le": x <= y, "eq": x == y, "ne": x != y}
        if name == "literals":
            a = ins["a"]
            f = result_dtype("*", a.dtype, np.float64)
            i = result_dtype("+", a.dtype, np.int64)
            x = a.astype(i)
            neg_t = a.dtype if a.dtype.kind == "f" else result_dtype("-", a.dtype, a.dtype)
            return {"times_tenth": a.astype(f) * 0.1, "plus_one": x + i.type(1),
                    "floordiv_three": (_floordiv_py(x, i.type(3)) if i.kind == "f"
                                       else np.floor_divide(x, i.type(3))),
                    "neg": -a.astype(neg_t)}
        if name == "int_bits":
            a, b = ins["a"], ins["b"]
            rt = result_dtype("&", a.dtype, b.dtype)
            x, y = a.astype(rt), b.astype(rt)
            # a shift takes the left operand's signedness at 64 bits (Numba)
            st = np.dtype(np.int64 if a.dtype.kind in "ib" else np.uint64)
            s = (b.astype(result_dtype("&", b.dtype, np.int64)) & 15).astype(st)
            xs = a.astype(st)
            return {"band": x & y, "bor": x | y, "bxor": x ^ y, "shl": xs << s,
                    "shr": xs >> s}
        if name == "basic_math":
            a, b, c = ins["a"], ins["b"], ins["c"]
            out = {"sqrt_": np.sqrt(a), "fmod_": np.fmod(a, b), "fabs_": np.fabs(a),
                   "copysign_": np.copysign(a, b)}
            out["fma_"] = _fma(a, b, c)
            return out
        if name == "transcendental":
            a = ins["a"]
            w = a.astype(np.float64)
            return {"sin_": np.sin(w).astype(a.dtype), "cos_": np.cos(w).astype(a.dtype),
                    "exp_": np.exp(w).astype(a.dtype), "log_": np.log(w).astype(a.dtype),
                    "tanh_": np.tanh(w).astype(a.dtype),
                    "atan2_": np.arctan2(w, 0.5)}
        if name == "conversions":
            a = ins["a"]
            if a.dtype.kind == "f":
                i32 = _sat_int(a, np.int32)
                tr = _sat_int(a, np.int64)
            else:
                i32, tr = a.astype(np.int32), a
            inr = (a >= 0) & (a < 256)
            u8 = np.where(inr, np.trunc(np.where(inr, a, 0).astype(np.float64)), 0) \
                .astype(np.uint8)
            return {"to_i32": i32, "to_u8": u8, "to_f32": a.astype(np.float32),
                    "to_bool": a != 0, "trunc_": tr}
        if name == "bench_axpy":
            return {"y": ins["a"] * ins["x"] + ins["y"]}
        if name == "bench_stencil":
            a = ins["a"]
            b = ins["b"].copy()
            b[1:-1, 1:-1] = np.float32(0.25) * (a[:-2, 1:-1] + a[2:, 1:-1] + a[1:-1, :-2]
                                                + a[1:-1, 2:])
            return {"b": b}
        if name == "warp_sum":
            return {"out": ins["a"].reshape(-1, 32).sum(axis=1)}
        if name == "int_histogram":
            x, bins = ins["x"], ins["bins"]
            k = np.remainder(x.astype(np.int64), np.int64(bins))
            return {"counts": np.bincount(k, minlength=ins["counts"].size)
                    .astype(ins["counts"].dtype)}
        if name == "example_const_kernel":
            return {"x": ins["x"] * np.tile(np.array([1.0, 2.0, 3.0], np.float32),
                                             ins["x"].size // 3 + 1)[:ins["x"].size]}
        if name == "example_const_smooth":
            x = ins["x"]
            y = ins["y"].copy()
            y[1:-1] = np.float32(0.25) * x[:-2] + np.float32(0.5) * x[1:-1] + \
                np.float32(0.25) * x[2:]
            return {"y": y}
        if name == "example_matmul":
            return expected("demo_matmul", ins)
        if name == "example_scale_shift":
            # float32 * float32, then + a float64 literal-typed value in float64
            return {"x": ((ins["x"] * ins["a"]).astype(np.float64) + ins["b"])
                    .astype(np.float32)}
        if name == "demo_fir":
            from cujit.demo.const_filter import reference
            return {"y": reference(ins["x"]).astype(np.float32)}
        if name in ("demo_matmul", "bench_matmul"):
            return {"C": (ins["A"].astype(np.float64) @ ins["B"].astype(np.float64))
                    .astype(np.float32)}
        if name == "demo_axpb":
            return {"x": ins["x"] * ins["a"] + ins["b"]}
        if name == "bench_reduce":
            return {"out": np.array([ins["x"].astype(np.float64).sum()], np.float32)}
    raise KeyError(name)


def _compare_type(da, db):
    if da == db:
        return da
    if da.kind in "iu" and db.kind in "iu" and (da.kind == "i") != (db.kind == "i"):
        # Numba unifies signed with unsigned at 64 bits as float64
        if max(da.itemsize, db.itemsize) >= 8:
            return np.dtype(np.float64)
        return np.dtype(np.int64)
    return np.promote_types(da, db)


def _fma(a, b, c):
    """``a * b + c`` rounded once, from exact rationals (independent of the simulator)."""
    from fractions import Fraction
    out = np.empty(a.shape, a.dtype)
    typ = a.dtype.type
    fi = np.finfo(typ)
    big = Fraction(int(fi.max)) + Fraction(2) ** (fi.maxexp - fi.nmant - 2)
    for k in range(a.size):
        x, y, z = float(a[k]), float(b[k]), float(c[k])
        if not all(map(math.isfinite, (x, y, z))):
            out[k] = typ(x * y + z)
            continue
        v = Fraction(x) * Fraction(y) + Fraction(z)
        if v == 0:
            out[k] = typ(x * y + z)
        elif abs(v) >= big:
            out[k] = typ(math.inf if v > 0 else -math.inf)
        else:
            # nearest of the float grid around v, ties to the even significand
            lo = typ((float(fi.max) if v > 0 else -float(fi.max))) if abs(v) > Fraction(float(fi.max)) \
                else typ(float(v)) if abs(Fraction(float(v))) <= Fraction(float(fi.max)) \
                else typ((float(fi.max) if v > 0 else -float(fi.max)))
            cands = [lo, np.nextafter(lo, typ(np.inf)), np.nextafter(lo, typ(-np.inf))]
            cands = [q for q in cands if np.isfinite(q)]
            ui = np.uint32 if typ is np.float32 else np.uint64
            out[k] = min(cands, key=lambda q: (abs(Fraction(float(q)) - v),
                                               int(np.array(q).view(ui)) & 1))
    return out


# ---- cases -----------------------------------------------------------------------------

class Case:
    """One corpus kernel with its inputs: ``make(rng) -> (ins, outs, griddim, blockdim,
    args)``; ``mode`` {output: ('exact'|'ulp'|'rel', bound)}."""

    def __init__(self, name, kernel, make, modes):
        self.name = name
        self.kernel = kernel
        self.make = make
        self.modes = modes

    def __repr__(self):
        return f"Case({self.name})"


def _elementwise(name, kernel, in_names, out_names, in_dtypes, modes, n=32):
    def make(rng, arrays=None):
        ins = {}
        for k, (nm, dt) in enumerate(zip(in_names, in_dtypes)):
            ins[nm] = arrays[k] if arrays is not None else edge_array(rng, dt, n)
        if name == "arith":
            ins["b"] = defined_divisors(ins["a"], ins["b"])
        exp = expected(name, ins)
        outs = {o: np.zeros(ins[in_names[0]].size, np.asarray(exp[o]).dtype)
                for o in out_names}
        args = [ins[nm] for nm in in_names] + [outs[o] for o in out_names]
        size = ins[in_names[0]].size
        return ins, outs, (size + 31) // 32, 32, args
    return Case(f"{name}[{','.join(np.dtype(d).name for d in in_dtypes)}]", kernel, make,
                modes)


def _cases():
    cases = []
    exact = dict.fromkeys(("add", "sub", "mul", "div", "fdiv", "mod"), ("exact", 0))
    pairs = [(a, b) for a in DTYPES for b in DTYPES]
    for a, b in pairs:
        cases.append(_elementwise("arith", arith, ("a", "b"), tuple(exact), (a, b), exact))
        cases.append(_elementwise("compare_ops", compare_ops, ("a", "b"),
                                  ("lt", "le", "eq", "ne"), (a, b),
                                  dict.fromkeys(("lt", "le", "eq", "ne"), ("exact", 0))))
    for d in DTYPES:
        cases.append(_elementwise("literals", literals, ("a",),
                                  ("times_tenth", "plus_one", "floordiv_three", "neg"), (d,),
                                  dict.fromkeys(("times_tenth", "plus_one", "floordiv_three",
                                                 "neg"), ("exact", 0))))
        cases.append(_elementwise("conversions", conversions, ("a",),
                                  ("to_i32", "to_u8", "to_f32", "to_bool", "trunc_"), (d,),
                                  dict.fromkeys(("to_i32", "to_u8", "to_f32", "to_bool",
                                                 "trunc_"), ("exact", 0))))
    for a in INT_DTYPES:
        cases.append(_elementwise("int_bits", int_bits, ("a", "b"),
                                  ("band", "bor", "bxor", "shl", "shr"), (a, a),
                                  dict.fromkeys(("band", "bor", "bxor", "shl", "shr"),
                                                ("exact", 0))))
    for f in FLOAT_DTYPES:
        cases.append(_elementwise("basic_math", basic_math, ("a", "b", "c"),
                                  ("sqrt_", "fma_", "fmod_", "fabs_", "copysign_"), (f, f, f),
                                  dict.fromkeys(("sqrt_", "fma_", "fmod_", "fabs_",
                                                 "copysign_"), ("exact", 0))))
        # libdevice's documented maximum ulp errors (float / double variants), plus one
        # for the simulator's rounding
        ulp = {"sin_": 3, "cos_": 3, "exp_": 3, "log_": 2, "tanh_": 3, "atan2_": 4} \
            if f is np.float32 else \
            {"sin_": 2, "cos_": 2, "exp_": 2, "log_": 2, "tanh_": 3, "atan2_": 3}
        cases.append(_elementwise("transcendental", transcendental, ("a",), tuple(ulp), (f,),
                                  {k: ("ulp", v) for k, v in ulp.items()}))
    cases.append(_bf16_case())
    cases.append(_fp8_case())
    cases.append(_fp8_types_case())
    cases.append(_vector_case())
    cases += _kernel_cases()
    return cases


def _fp8_case():
    """FP8 E4M3 / E5M2 conversions (and back) of float32 edge values, values around both
    formats' largest finite values and subnormal steps."""
    def make(rng, arrays=None):
        x = edge_array(rng, np.float32, 64)
        x[-12:] = [448.0, 464.0, 465.0, -480.0, 57344.0, 61440.0, 61441.0, 2.0 ** -9,
                   2.0 ** -10, 3 * 2.0 ** -11, 2.0 ** -16, 2.0 ** -17]
        outs = {"e4": np.zeros(64, np.uint8), "e5": np.zeros(64, np.uint8),
                "back4": np.zeros(64, np.float32), "back5": np.zeros(64, np.float32)}
        return {"x": x}, outs, 2, 32, [x, outs["e4"], outs["e5"], outs["back4"],
                                       outs["back5"]]
    return Case("fp8_convs[float32]", fp8_convs, make,
                dict.fromkeys(("e4", "e5", "back4", "back5"), ("exact", 0)))


def _fp8_types_case():
    """The FP8 storage types (``cuda.fp8.fp8_e4m3`` ...) constructed from float32 and float64
    edge values, values on the formats' rounding boundaries and powers of two, converted
    back to float32 and int32."""
    def make(rng, arrays=None):
        n = 64
        x = edge_array(rng, np.float32, n)
        x[-12:] = [448.0, 464.0, 465.0, -480.0, 57344.0, 61440.0, 2.0 ** -127, 2.0 ** 127,
                   3e38, 2.0 ** -9 * 1.5, 0.75, -3.5]
        d = edge_array(rng, np.float64, n)
        d[-6:] = [1 + 2.0 ** -40, 464.0 + 2.0 ** -40, 2.0 ** 127 * (1 + 2.0 ** -40), 1e300,
                  -1e-300, 2.0 ** -130]
        outs = {o: np.zeros(n, np.float32) for o in ("q4", "q5", "q8", "r4", "r8")}
        outs["n4"] = np.zeros(n, np.int32)
        args = [x, d] + [outs[o] for o in ("q4", "q5", "q8", "r4", "r8", "n4")]
        return {"x": x, "d": d}, outs, 2, 32, args
    return Case("fp8_types[float32,float64]", fp8_types, make,
                dict.fromkeys(("q4", "q5", "q8", "r4", "r8", "n4"), ("exact", 0)))


def _vector_expected(ins):
    x = ins["x"]
    with np.errstate(all="ignore"):
        parts = (x, x * np.float32(2), x + np.float32(1), -x)
        total = ((parts[0] + parts[1]) + parts[2]) + parts[3]
    n = ins["n"].astype(np.int64)
    wrapped = ((n + 7 + 2 ** 31) % 2 ** 32 - 2 ** 31).astype(np.int32)
    return {"s": total.astype(np.float32), "w": parts[3].astype(np.float32),
            "k": (ins["n"] ^ wrapped).astype(np.int32)}


def _vector_case():
    """CUDA vector types (``cuda.float32x4`` built from scalars and a ``float32x2``, members
    summed; ``cuda.int32x2`` members wrapping) on float32 edge values and int32 extremes."""
    def make(rng, arrays=None):
        n = 64
        x = edge_array(rng, np.float32, n)
        ints = edge_array(rng, np.int32, n)
        outs = {"s": np.zeros(n, np.float32), "w": np.zeros(n, np.float32),
                "k": np.zeros(n, np.int32)}
        return {"x": x, "n": ints}, outs, 2, 32, [x, ints, outs["s"], outs["w"], outs["k"]]
    return Case("vector_ops[float32,int32]", vector_ops, make,
                dict.fromkeys(("s", "w", "k"), ("exact", 0)))


def _bf16_case():
    """bfloat16 arithmetic, comparisons and conversions on float32 edge values and values
    near bfloat16's rounding boundaries (ties of its 8-bit significand)."""
    outs_i16 = ("add", "sub", "mul", "div", "fma_", "from_i32", "from_f64")

    def make(rng, arrays=None):
        n = 64
        a = edge_array(rng, np.float32, n)
        b = edge_array(rng, np.float32, n)[::-1].copy()
        # float32 values on and next to bfloat16 ties: 1 + 2**-8 (+- 1 ulp), and big ones
        ties = np.array([0x3F808000, 0x3F808001, 0x3F807FFF, 0x3F818000, 0x7F7FFFFF,
                         0x7F7F8000, 0x00008000, 0x80018000], np.uint32).view(np.float32)
        a[-8:] = ties
        ints = rng.integers(-2 ** 31, 2 ** 31, n, dtype=np.int64).astype(np.int32)
        ints[:6] = [789, -789, 257, 259, 2 ** 31 - 1, -2 ** 31]
        ins = {"a": a, "b": b, "n": ints}
        outs = {o: np.zeros(n, np.int16) for o in outs_i16}
        outs["lt"] = np.zeros(n, np.bool_)
        outs["ne"] = np.zeros(n, np.bool_)
        outs["to_i32"] = np.zeros(n, np.int32)
        args = [a, b, ints] + [outs[o] for o in ("add", "sub", "mul", "div", "fma_", "lt",
                                                  "ne", "to_i32", "from_i32", "from_f64")]
        return ins, outs, 2, 32, args
    modes = dict.fromkeys(outs_i16 + ("lt", "ne", "to_i32"), ("exact", 0))
    return Case("bf16_ops[float32,float32,int32]", bf16_ops, make, modes)


def _kernel_cases():
    def make_axpy(rng, arrays=None):
        x = rng.standard_normal(100).astype(np.float32)
        y = rng.standard_normal(100).astype(np.float32)
        a = np.float32(rng.standard_normal())
        ins = {"x": x, "y": y.copy(), "a": a}
        return ins, {"y": y}, 4, 32, [y, a, x]

    def make_warp(rng, arrays=None):
        a = rng.integers(-1000, 1000, 64).astype(np.int64)
        out = np.zeros(2, np.int64)
        return {"a": a}, {"out": out}, 1, 64, [a, out]

    def make_hist(rng, arrays=None):
        x = rng.integers(-50, 50, 300).astype(np.int32)
        counts = np.zeros(7, np.int32)
        return {"x": x, "bins": 7, "counts": counts}, {"counts": counts}, 10, 32, \
            [x, 7, counts]

    from cujit.demo import const_filter, matmul as demo_matmul, pipeline
    fir = const_filter.make_kernel(cuda)
    matmul_tiled = demo_matmul.make_kernel(cuda)
    axpb = pipeline.make_kernel(cuda)
    bench_kernels, bench = benchmark_kernels()

    ex = _examples()

    def make_ex_const(rng, arrays=None):
        x = rng.standard_normal(100).astype(np.float32)
        return {"x": x.copy()}, {"x": x}, 4, 32, [x]

    def make_ex_smooth(rng, arrays=None):
        x = rng.standard_normal(100).astype(np.float32)
        y = np.zeros(100, np.float32)
        return {"x": x, "y": y.copy()}, {"y": y}, 4, 32, [x, y]

    def make_ex_matmul(rng, arrays=None):
        A = rng.standard_normal((20, 13)).astype(np.float32)
        B = rng.standard_normal((13, 18)).astype(np.float32)
        C = np.zeros((20, 18), np.float32)
        t = ex["tiled_matmul"].TPB
        return {"A": A, "B": B}, {"C": C}, ((20 + t - 1) // t, (18 + t - 1) // t), (t, t), \
            [A, B, C]

    def make_ex_scale(rng, arrays=None):
        x = rng.standard_normal(300).astype(np.float32)
        a, b = np.float32(2.5), 0.75
        return {"x": x.copy(), "a": a, "b": b}, {"x": x}, 2, 64, [x, a, b]

    def make_fir(rng, arrays=None):
        x = rng.standard_normal(300).astype(np.float32)
        y = np.zeros(300, np.float32)
        return {"x": x}, {"y": y}, 2, 64, [x, y]

    def make_tiled(rng, arrays=None):
        A = rng.standard_normal((20, 13)).astype(np.float32)
        B = rng.standard_normal((13, 18)).astype(np.float32)
        C = np.zeros((20, 18), np.float32)
        t = demo_matmul.TPB
        return {"A": A, "B": B}, {"C": C}, ((20 + t - 1) // t, (18 + t - 1) // t), (t, t), \
            [A, B, C]

    def make_axpb(rng, arrays=None):
        x = rng.standard_normal(500).astype(np.float32)
        a, b = np.float32(1.5), np.float32(-0.25)
        return {"x": x.copy(), "a": a, "b": b}, {"x": x}, 2, 64, [x, a, b]

    def make_bench_matmul(rng, arrays=None):
        n = 2 * bench_kernels.TPB
        A = rng.standard_normal((n, n)).astype(np.float32)
        B = rng.standard_normal((n, n)).astype(np.float32)
        C = np.zeros((n, n), np.float32)
        t = bench_kernels.TPB
        return {"A": A, "B": B}, {"C": C}, (2, 2), (t, t), [A, B, C]

    def make_bench_reduce(rng, arrays=None):
        x = rng.standard_normal(3000).astype(np.float32)
        out = np.zeros(1, np.float32)
        return {"x": x}, {"out": out}, 4, bench_kernels.RED_TPB, [x, out]

    def make_bench_stencil(rng, arrays=None):
        a = rng.standard_normal((40, 36)).astype(np.float32)
        b = np.zeros_like(a)
        return {"a": a, "b": b.copy()}, {"b": b}, (3, 3), (16, 16), [a, b]

    return [Case("example_const_kernel", ex["constant_memory"].kernel, make_ex_const,
                 {"x": ("exact", 0)}),
            Case("example_const_smooth", ex["constant_memory"].smooth, make_ex_smooth,
                 {"y": ("rel", 1e-6)}),
            Case("example_matmul", ex["tiled_matmul"].matmul, make_ex_matmul,
                 {"C": ("rel", 1e-5)}),
            Case("example_scale_shift", ex["streams_pipeline"].scale_shift, make_ex_scale,
                 {"x": ("exact", 0)}),
            Case("demo_fir", fir, make_fir, {"y": ("rel", 1e-6)}),
            Case("demo_matmul", matmul_tiled, make_tiled, {"C": ("rel", 1e-5)}),
            Case("demo_axpb", axpb, make_axpb, {"x": ("rel", 1e-6)}),
            Case("bench_matmul", bench["matmul"], make_bench_matmul, {"C": ("rel", 1e-5)}),
            Case("bench_reduce", bench["reduce"], make_bench_reduce, {"out": ("rel", 1e-4)}),
            Case("bench_stencil", bench["stencil"], make_bench_stencil, {"b": ("exact", 0)}),
            Case("bench_axpy", bench["axpy"], make_axpy, {"y": ("rel", 1e-6)}),
            Case("warp_sum", warp_sum, make_warp, {"out": ("exact", 0)}),
            Case("int_histogram", int_histogram, make_hist, {"counts": ("exact", 0)})]


def _examples():
    """The kernels of ``examples/*.py`` (their scripts run only under ``__main__``)."""
    return {name: example(name)
            for name in ("constant_memory", "tiled_matmul", "streams_pipeline")}


def _ordered(x):
    x = np.asarray(x)
    it = np.int32 if x.dtype.itemsize == 4 else np.int64
    i = x.view(it).astype(np.int64)
    lo = np.int64(np.iinfo(it).min)
    return np.where(i < 0, lo - i, i)


def compare(got, want, mode):
    """None when ``got`` matches ``want`` under ``mode`` (('exact'|'ulp'|'rel', bound)),
    else a message naming the first mismatching element."""
    kind, bound = mode
    got, want = np.asarray(got), np.asarray(want)
    if got.dtype != want.dtype:
        want = want.astype(got.dtype)
    g, w = got.ravel(), want.ravel()
    for k in range(g.size):
        a, b = g[k], w[k]
        if got.dtype.kind == "f":
            if np.isnan(a) and np.isnan(b):
                continue
            if kind == "exact":
                ok = a.tobytes() == b.tobytes()
            elif kind == "ulp":
                ok = (np.isinf(a) and a == b) or (
                    np.isfinite(a) and np.isfinite(b)
                    and abs(int(_ordered(a)) - int(_ordered(b))) <= bound)
            else:
                ok = a == b or abs(float(a) - float(b)) <= bound * max(abs(float(b)), 1.0)
        else:
            ok = a == b
        if not ok:
            return f"element {k}: got {a!r}, expected {b!r} ({kind} {bound})"
    return None


CASES = _cases()
