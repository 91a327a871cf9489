"""FP8 in kernels: ``cuda.fp8``'s saturating conversions float32 → E4M3 / E5M2 bits and back
(values against ``narrow_floats``, the PTX ``cvt.rn.satfinite`` rules), their typing errors,
and the inline PTX compiling to an sm_90 cubin."""
import numpy as np
import pytest

import cujit as cuda
from cujit import narrow_floats as nf
from cujit import types as T

from _kl_helpers import ptx_of


def fp8_roundtrip(x, e4, e5, back4, back5):
    i = cuda.grid(1)
    if i < x.size:
        e4[i] = cuda.fp8.float32_to_e4m3(x[i])
        e5[i] = cuda.fp8.float32_to_e5m2(x[i])
        back4[i] = cuda.fp8.e4m3_to_float32(e4[i])
        back5[i] = cuda.fp8.e5m2_to_float32(e5[i])


VALUES = np.array([0.0, -0.0, 1.0, -1.5, 448.0, 449.0, 500.0, 1e6, -1e6, 57344.0, 2.0 ** -9,
                   2.0 ** -10, 2.0 ** -17, 0.1, np.inf, -np.inf, np.nan, 3.3], np.float32)


def test_fp8_conversions_are_the_cvt_bits():
    n = VALUES.size
    e4, e5 = np.zeros(n, np.uint8), np.zeros(n, np.uint8)
    b4, b5 = np.zeros(n, np.float32), np.zeros(n, np.float32)
    cuda.jit(fp8_roundtrip)[1, 32](VALUES, e4, e5, b4, b5)
    assert e4.tolist() == [nf.float_to_fp8_bits(v, "e4m3") for v in VALUES]
    assert e5.tolist() == [nf.float_to_fp8_bits(v, "e5m2") for v in VALUES]
    np.testing.assert_array_equal(b4, [nf.fp8_bits_to_f32(b, "e4m3") for b in e4])
    np.testing.assert_array_equal(b5, [nf.fp8_bits_to_f32(b, "e5m2") for b in e5])
    assert e4[6] == 0x7E and e5[7] == 0x7B and e4[16] == 0x7F       # saturate, NaN


def fp8_from_float(out, x):
    out[0] = cuda.fp8.e4m3_to_float32(x)


def test_fp8_typing_errors():
    with pytest.raises(cuda.TypingError, match="the FP8 bits"):
        cuda.jit(fp8_from_float)[1, 1](np.zeros(1, np.float32), 1.5)


@pytest.mark.compile
def test_fp8_compiles_to_sm90_cubin():
    from cujit.nvvm.linker import link_cubin
    sig = (T.float32[::1], T.uint8[::1], T.uint8[::1], T.float32[::1], T.float32[::1])
    ptx = ptx_of(fp8_roundtrip, argtypes=sig)
    assert "cvt.rn.satfinite.e4m3x2.f32" in ptx and "cvt.rn.f16x2.e5m2x2" in ptx
    assert link_cubin(ptx, (9, 0))[:4] == b"\x7fELF"


# ---- the storage types fp8_e4m3 / fp8_e5m2 / fp8_e8m0 -------------------------------------
from cujit.fp8 import (fp8_e4m3, fp8_e5m2, fp8_e8m0, saturation_t, fp8_interpretation_t,  # noqa: E402
                       cvt_float_to_fp8, cvt_double_to_fp8, cvt_bfloat16raw_to_fp8,
                       cvt_float_to_e8m0, cvt_double_to_e8m0, cvt_bfloat16raw_to_e8m0,
                       cvt_e8m0_to_bf16raw)
from cujit import float16, float32, float64, int8, int32, int64, uint8, uint16, uint64  # noqa: E402
from cujit import bfloat16  # noqa: E402

ROUND_ZERO, ROUND_UP = 1, 2         # cudaRoundMode.cudaRoundZero / cudaRoundPosInf

F32_IN = np.array([0.0, -0.0, 1.0, -1.5, 2.5, 3.3, 448.0, 464.0, 465.0, 1e6, -1e6, 57344.0,
                   61439.0, 61440.0, 2.0 ** -9, 2.0 ** -10, 2.0 ** -17, 0.1, 2.0 ** -127,
                   2.0 ** -130, 2.0 ** 127, 3e38, np.inf, -np.inf, np.nan, 1e-45], np.float32)
F64_IN = np.concatenate([F32_IN.astype(np.float64),
                         [1 + 2.0 ** -40, 448 + 2.0 ** -30, 1e300, -1e-300, 2.0 ** 200,
                          2.0 ** -200, np.float64(np.nan) * -1]])
I64_IN = np.array([0, 1, -1, 2, 3, 7, 17, -100, 300, 2 ** 24 + 1, 2 ** 53 + 1, 2 ** 62 + 1,
                   -(2 ** 63), 2 ** 63 - 1], np.int64)

_NAN16 = 0x7FFFFFFF     # float32 of an E4M3 / E5M2 NaN: cvt.f32.f16 gives the canonical NaN (H200)
_NAN_BF16 = 0x7FFF0000  # float32 of the canonical bfloat16 NaN the E8M0 conversion gives


def _f32_bits_of_fp8(code, fmt):
    """The float32 bits a kernel's float32(v) gives for FP8 ``code``."""
    if fmt == "e8m0":
        f = nf.e8m0_bits_to_f32(code)
        return _NAN_BF16 if np.isnan(f) else int(f.view(np.uint32))
    f = nf.fp8_bits_to_f32(code, fmt)
    return _NAN16 if np.isnan(f) else int(f.view(np.uint32))


def fp8_from_floats(x, d, o4, o5, o8, d4, d5, d8, h4, b5):
    i = cuda.grid(1)
    if i < x.size:
        o4[i] = float32(fp8_e4m3(x[i]))
        o5[i] = float32(fp8_e5m2(x[i]))
        o8[i] = float32(fp8_e8m0(x[i]))
        h4[i] = float32(fp8_e4m3(float16(x[i])))
        b5[i] = float32(fp8_e5m2(bfloat16(x[i])))
    if i < d.size:
        d4[i] = float32(fp8_e4m3(d[i]))
        d5[i] = float32(fp8_e5m2(d[i]))
        d8[i] = float32(fp8_e8m0(d[i]))


@pytest.fixture(params=["0", "1"], ids=["per-thread", "vector"])
def executor(request, monkeypatch):
    """Both simulator executors (on a GPU the setting is not read)."""
    monkeypatch.setenv("CUJIT_SIM_VECTOR", request.param)
    return request.param


def _bits(a):
    return a.view(np.uint32).tolist()


def test_fp8_types_from_floats_are_the_cvt_bits(executor):
    n, m = F32_IN.size, F64_IN.size
    outs = [np.zeros(k, np.float32) for k in (n, n, n, m, m, m, n, n)]
    cuda.jit(fp8_from_floats)[1, 64](F32_IN, F64_IN, *outs)
    o4, o5, o8, d4, d5, d8, h4, b5 = outs
    with np.errstate(over="ignore"):
        halves = F32_IN.astype(np.float16).astype(np.float32)
    bf = nf.bf16_bits_to_f32(nf.f32_to_bf16_bits(F32_IN))
    def want(values, convert, fmt):
        return [_f32_bits_of_fp8(convert(v), fmt) for v in values]

    assert _bits(o4) == want(F32_IN, lambda v: nf.float_to_fp8_bits(v, "e4m3"), "e4m3")
    assert _bits(o5) == want(F32_IN, lambda v: nf.float_to_fp8_bits(v, "e5m2"), "e5m2")
    assert _bits(o8) == want(F32_IN, lambda v: nf.float_to_e8m0_bits(v, "ru"), "e8m0")
    assert _bits(h4) == want(halves, lambda v: nf.float_to_fp8_bits(v, "e4m3"), "e4m3")
    assert _bits(b5) == want(bf, lambda v: nf.float_to_fp8_bits(v, "e5m2"), "e5m2")
    assert _bits(d4) == [_f32_bits_of_fp8(nf.double_to_fp8_bits(v, "e4m3"), "e4m3")
                         for v in F64_IN]
    assert _bits(d5) == [_f32_bits_of_fp8(nf.double_to_fp8_bits(v, "e5m2"), "e5m2")
                         for v in F64_IN]
    assert _bits(d8) == [_f32_bits_of_fp8(nf.float_to_e8m0_bits(v, "ru"), "e8m0")
                         for v in F64_IN]
    # the hand-checked corners: saturation, the rounding boundary, E8M0 rounding up
    assert o4[6] == o4[7] == o4[8] == 448.0 and o5[13] == 57344.0 and o5[22] == 57344.0
    assert o8[4] == 4.0 and o8[2] == 1.0 and o8[21] == 2.0 ** 127 and o8[22] == 2.0 ** 127
    # float64 excess beyond float32's precision still rounds E8M0 up (the sticky bit)
    assert d4[n + 1] == 448.0 and d8[n] == 2.0 and d8[n + 2] == 2.0 ** 127


def fp8_from_ints(x, o4, o5, o8, s8, u16):
    i = cuda.grid(1)
    if i < x.size:
        o4[i] = float32(fp8_e4m3(x[i]))
        o5[i] = float32(fp8_e5m2(x[i]))
        o8[i] = float64(fp8_e8m0(x[i]))
        s8[i] = float32(fp8_e8m0(int8(x[i])))
        u16[i] = float32(fp8_e4m3(uint16(x[i])))


def test_fp8_types_from_integers(executor):
    n = I64_IN.size
    o4, o5, s8, u16 = (np.zeros(n, np.float32) for _ in range(4))
    o8 = np.zeros(n, np.float64)
    cuda.jit(fp8_from_ints)[1, 32](I64_IN, o4, o5, o8, s8, u16)
    assert o4.tolist() == [nf.fp8_bits_to_f32(nf.float_to_fp8_bits(np.float32(v), "e4m3"),
                                              "e4m3") for v in I64_IN]
    assert o5.tolist() == [nf.fp8_bits_to_f32(nf.float_to_fp8_bits(np.float32(v), "e5m2"),
                                              "e5m2") for v in I64_IN]
    # E8M0 of an integer: its magnitude rounded up to a power of two, exactly
    want = [0.0 if v == 0 else 2.0 ** (abs(int(v)) - 1).bit_length() for v in I64_IN]
    want[0] = 2.0 ** -127                   # 0 gives the code 0x00
    assert o8.tolist() == want
    assert o8[11] == 2.0 ** 63 and o8[10] == 2.0 ** 54 and o8[12] == 2.0 ** 63
    wrapped = [int(np.int64(v).astype(np.int8)) for v in I64_IN]
    assert s8.tolist() == [float(nf.e8m0_bits_to_f32(nf.int_to_e8m0_bits(w))) for w in wrapped]
    assert u16.tolist() == [nf.fp8_bits_to_f32(nf.float_to_fp8_bits(
        np.float32(int(v) & 0xFFFF), "e4m3"), "e4m3") for v in I64_IN]


def fp8_to_types(x, i8, u8, i32, u64, i64, h, bf, f64, t):
    i = cuda.grid(1)
    if i < x.size:
        v4 = fp8_e4m3(x[i])
        v5 = fp8_e5m2(x[i])
        v8 = fp8_e8m0(x[i])
        i8[i, 0] = int8(v4)
        i8[i, 1] = int8(v8)
        u8[i, 0] = uint8(v5)
        u8[i, 1] = uint8(v8)
        i32[i, 0] = int32(v4)
        i32[i, 1] = int32(v5)
        u64[i, 0] = uint64(v5)
        u64[i, 1] = uint64(v8)
        i64[i, 0] = int64(v4)
        i64[i, 1] = int(v5)
        h[i, 0] = float16(v4)
        h[i, 1] = float16(v5)
        h[i, 2] = float16(v8)
        bf[i, 0] = float32(bfloat16(v4))
        bf[i, 1] = float32(bfloat16(v8))
        f64[i, 0] = float64(v5)
        f64[i, 1] = float(v8)
        t[i, 0] = bool(v4)
        t[i, 1] = bool(v5)
        t[i, 2] = bool(v8)


def test_fp8_types_convert_to_the_number_types(executor):
    from cujit.fp8_scalar import FP8
    x = F32_IN
    n = x.size
    outs = (np.zeros((n, 2), np.int8), np.zeros((n, 2), np.uint8), np.zeros((n, 2), np.int32),
            np.zeros((n, 2), np.uint64), np.zeros((n, 2), np.int64),
            np.zeros((n, 3), np.float16), np.zeros((n, 2), np.float32),
            np.zeros((n, 2), np.float64), np.zeros((n, 3), np.bool_))
    cuda.jit(fp8_to_types)[1, 32](x, *outs)
    i8, u8, i32, u64, i64, h, bf, f64, t = outs
    for k, v in enumerate(x):
        c4 = nf.float_to_fp8_bits(v, "e4m3")
        c5 = nf.float_to_fp8_bits(v, "e5m2")
        c8 = nf.float_to_e8m0_bits(v, "ru")
        b4 = int(nf.f32_to_bf16_bits(nf.fp8_bits_to_f32(c4, "e4m3"), "rz"))
        b5 = int(nf.f32_to_bf16_bits(nf.fp8_bits_to_f32(c5, "e5m2"), "rz"))
        b8 = nf.e8m0_bits_to_bf16_bits(c8)
        assert i8[k].tolist() == [nf.bf16_to_int(b4, "rz", True, 8),
                                  nf.bf16_to_int(b8, "rz", True, 8)], v
        assert u8[k].tolist() == [nf.bf16_to_int(b5, "rz", False, 8),
                                  nf.bf16_to_int(b8, "rz", False, 8)], v
        assert i32[k].tolist() == [nf.bf16_to_int(b4, "rz", True, 32),
                                   nf.bf16_to_int(b5, "rz", True, 32)], v
        assert u64[k].tolist() == [nf.bf16_to_int(b5, "rz", False, 64),
                                   nf.bf16_to_int(b8, "rz", False, 64)], v
        assert i64[k].tolist() == [nf.bf16_to_int(b4, "rz", True, 64),
                                   nf.bf16_to_int(b5, "rz", True, 64)], v
        assert h[k].view(np.uint16).tolist()[:2] == [nf.fp8_bits_to_f16_bits(c4, "e4m3"),
                                                     nf.fp8_bits_to_f16_bits(c5, "e5m2")], v
        assert bf[k].view(np.uint32).tolist() == [b4 << 16, b8 << 16], v
        assert t[k].tolist() == [(c4 & 0x7F) != 0, (c5 & 0x7F) != 0, True], v
        assert f64[k].view(np.uint64).tolist() == [
            int(np.uint32(_f32_bits_of_fp8(c5, "e5m2")).view(np.float32).astype(
                np.float64).view(np.uint64)),
            int(np.uint32(_f32_bits_of_fp8(c8, "e8m0")).view(np.float32).astype(
                np.float64).view(np.uint64))], v
        assert h[k, 2].view(np.uint16) == FP8.from_bits("e8m0", c8).to_float16().view(
            np.uint16), v
    # hand-checked: truncation toward zero, clamping, NaN to 0 / bit 63 for 64 bits
    assert i32[3].tolist() == [-1, -1] and u8[9].tolist() == [255, 255]
    assert i8[6].tolist() == [127, 127] and u64[24, 0] == 1 << 63
    assert i32[24].tolist() == [0, 0] and t[24].tolist() == [True, True, True]
    assert u64[22, 0] == 57344 and u64[23, 0] == 0    # ±inf saturate to ±57344


def fp8_cvt_calls(out, x, d, e):
    out[0] = cvt_float_to_fp8(x[0], saturation_t.NOSAT, fp8_interpretation_t.E5M2)
    out[1] = cvt_float_to_fp8(x[0], saturation_t.SATFINITE, fp8_interpretation_t.E5M2)
    out[2] = cvt_float_to_fp8(x[0], saturation_t.NOSAT, fp8_interpretation_t.E4M3)
    out[3] = cvt_float_to_fp8(x[0], saturation_t.SATFINITE, fp8_interpretation_t.E4M3)
    out[4] = cvt_double_to_fp8(d[0], saturation_t.NOSAT, fp8_interpretation_t.E5M2)
    out[5] = cvt_double_to_fp8(d[0], saturation_t.NOSAT, fp8_interpretation_t.E4M3)
    out[6] = cvt_float_to_e8m0(x[1], saturation_t.NOSAT, ROUND_UP)
    out[7] = cvt_float_to_e8m0(x[1], saturation_t.SATFINITE, ROUND_UP)
    out[8] = cvt_double_to_e8m0(d[1], saturation_t.SATFINITE, ROUND_ZERO)
    out[9] = cvt_double_to_e8m0(d[1], saturation_t.NOSAT, ROUND_UP)
    raw = cvt_e8m0_to_bf16raw(e[0])
    out[10] = raw.x
    out[11] = cvt_bfloat16raw_to_fp8(raw, saturation_t.NOSAT, fp8_interpretation_t.E5M2)
    out[12] = cvt_bfloat16raw_to_fp8(raw, saturation_t.SATFINITE, fp8_interpretation_t.E4M3)
    out[13] = cvt_bfloat16raw_to_e8m0(raw, saturation_t.NOSAT, ROUND_ZERO)
    out[14] = cvt_bfloat16raw_to_e8m0(cvt_e8m0_to_bf16raw(e[1]), saturation_t.NOSAT,
                                      ROUND_UP)
    out[15] = cvt_e8m0_to_bf16raw(e[1]).x
    out[16] = cvt_float_to_fp8(x[2], saturation_t.NOSAT, fp8_interpretation_t.E4M3)
    out[17] = cvt_double_to_fp8(d[2], saturation_t.SATFINITE, fp8_interpretation_t.E5M2)


@pytest.mark.parametrize("x, d, e", [
    ((1e20, np.nextafter(np.float32(2.0 ** 127), np.float32(np.inf)), np.nan),
     (-1e300, 2.0 ** 127 * (1 + 2.0 ** -40), -np.nan), (254, 0xFF)),
    ((-465.0, 3.0, 61440.0), (448.0 + 2.0 ** -40, 0.75, 1e-300), (127, 0)),
])
def test_fp8_cvt_functions_in_kernels_match_the_host_functions(executor, x, d, e):
    x, d, e = np.array(x, np.float32), np.array(d, np.float64), np.array(e, np.uint8)
    out = np.zeros(18, np.uint16)
    cuda.jit(fp8_cvt_calls)[1, 1](out, x, d, e)
    S, N = saturation_t.SATFINITE, saturation_t.NOSAT
    E4, E5 = fp8_interpretation_t.E4M3, fp8_interpretation_t.E5M2
    raw0, raw1 = cvt_e8m0_to_bf16raw(e[0]), cvt_e8m0_to_bf16raw(e[1])
    want = [cvt_float_to_fp8(x[0], N, E5), cvt_float_to_fp8(x[0], S, E5),
            cvt_float_to_fp8(x[0], N, E4), cvt_float_to_fp8(x[0], S, E4),
            cvt_double_to_fp8(d[0], N, E5), cvt_double_to_fp8(d[0], N, E4),
            cvt_float_to_e8m0(x[1], N, "ru"), cvt_float_to_e8m0(x[1], S, "ru"),
            cvt_double_to_e8m0(d[1], S, "rz"), cvt_double_to_e8m0(d[1], N, "ru"),
            raw0.x, cvt_bfloat16raw_to_fp8(raw0, N, E5), cvt_bfloat16raw_to_fp8(raw0, S, E4),
            cvt_bfloat16raw_to_e8m0(raw0, N, "rz"), cvt_bfloat16raw_to_e8m0(raw1, N, "ru"),
            raw1.x, cvt_float_to_fp8(x[2], N, E4), cvt_double_to_fp8(d[2], S, E5)]
    assert out.tolist() == [int(w) for w in want]


def test_fp8_cvt_functions_give_numba_cudas_bits():
    # the values numba-cuda's test_fp8_bindings asserts (cuda_fp8.hpp's rules)
    out = np.zeros(18, np.uint16)
    x = np.array([1e20, np.nextafter(np.float32(2.0 ** 127), np.float32(np.inf)), 1.0],
                 np.float32)
    d = np.array([1e300, np.nextafter(2.0 ** 127, np.inf), np.nan], np.float64)
    cuda.jit(fp8_cvt_calls)[1, 1](out, x, d, np.array([254, 126], np.uint8))
    assert out[:4].tolist() == [0x7C, 0x7B, 0x7F, 0x7E]
    assert out[4:6].tolist() == [0x7C, 0x7F]
    assert out[6:8].tolist() == [0xFF, 0xFE]
    assert out[8:10].tolist() == [0xFE, 0xFF]
    assert out[10] == 0x7F00 and out[11] == 0x7C and out[12] == 0x7E and out[13] == 0xFE
    assert out[14] == 126 and out[15] == 0x3F00 and out[16] == 0x38
    assert out[17] == 0x7E                  # a float64 NaN: 0x7E | the payload's top bit


# ---- typing errors --------------------------------------------------------------------
def fp8_between_formats(out, x):
    out[0] = float32(fp8_e4m3(fp8_e5m2(x[0])))


def fp8_arithmetic(out, x):
    out[0] = float32(fp8_e4m3(x[0]) + fp8_e4m3(x[0]))


def fp8_from_complex(out, x):
    out[0] = float32(fp8_e4m3(complex(x[0], 1.0)))


def fp8_runtime_saturate(out, x, s):
    out[0] = cvt_float_to_fp8(x[0], s, fp8_interpretation_t.E4M3)


def fp8_bad_mode(out, x):
    out[0] = cvt_float_to_e8m0(x[0], saturation_t.NOSAT, 0)


def fp8_bad_raw(out, x):
    out[0] = cvt_bfloat16raw_to_fp8(x[0], saturation_t.NOSAT, fp8_interpretation_t.E4M3)


def fp8_bad_count(out, x):
    out[0] = cvt_float_to_fp8(x[0], saturation_t.NOSAT)


def fp8_bad_interp(out, x):
    out[0] = cvt_double_to_fp8(x[0], saturation_t.NOSAT, 5)


def fp8_bad_saturate(out, x):
    out[0] = cvt_float_to_fp8(x[0], 7, fp8_interpretation_t.E4M3)


def fp8_bad_e8m0_bits(out, x):
    out[0] = cvt_e8m0_to_bf16raw(x[0]).x


@pytest.mark.parametrize("fn, args, match", [
    (fp8_bad_saturate, (), "7 is not a valid saturation_t"),
    (fp8_bad_e8m0_bits, (), r"takes an integer \(the E8M0 bits\), got float32"),
    (fp8_between_formats, (), "cannot convert fp8_e5m2 to fp8_e4m3"),
    (fp8_arithmetic, (), "fp8_e4m3"),
    (fp8_from_complex, (), "cannot convert complex128 to fp8_e4m3"),
    (fp8_runtime_saturate, (1,), "saturate argument must be a compile-time constant"),
    (fp8_bad_mode, (), "E8M0 rounding mode must be"),
    (fp8_bad_raw, (), "bfloat16 bits as a ushort1"),
    (fp8_bad_count, (), "takes 3 positional arguments, got 2"),
    (fp8_bad_interp, (), "FP8 interpretation must be"),
])
def test_fp8_typing_errors_name_the_value(fn, args, match):
    with pytest.raises(cuda.TypingError, match=match):
        cuda.jit(fn)[1, 1](np.zeros(1, np.uint8), np.ones(1, np.float32), *args)


# ---- the NVVM backend ---------------------------------------------------------------------
@pytest.mark.compile
def test_fp8_types_compile_to_the_cvt_instructions():
    from cujit.nvvm.linker import link_cubin
    sig = (T.float32[::1], T.float64[::1]) + (T.float32[::1],) * 8
    ptx = ptx_of(fp8_from_floats, argtypes=sig)
    for ins in ("cvt.rn.satfinite.e4m3x2.f32", "cvt.rn.satfinite.e5m2x2.f32",
                "cvt.rn.f16x2.e4m3x2", "cvt.rn.f16x2.e5m2x2", "cvt.rz.f32.f64",
                "cvt.rp.bf16.f32"):
        assert ins in ptx, ins
    assert link_cubin(ptx, (9, 0))[:4] == b"\x7fELF"
    sig = (T.uint16[::1], T.float32[::1], T.float64[::1], T.uint8[::1])
    ptx = ptx_of(fp8_cvt_calls, argtypes=sig)
    assert "cvt.rz.bf16.f32" in ptx and "cvt.rn.satfinite.e4m3x2.f32" in ptx
    assert link_cubin(ptx, (9, 0))[:4] == b"\x7fELF"
    sig = (T.int64[::1], T.float32[::1], T.float32[::1], T.float64[::1], T.float32[::1],
           T.float32[::1])
    ptx = ptx_of(fp8_from_ints, argtypes=sig)
    assert "clz.b64" in ptx and link_cubin(ptx, (9, 0))[:4] == b"\x7fELF"
    sig = (T.float32[::1], T.int8[:, ::1], T.uint8[:, ::1], T.int32[:, ::1], T.uint64[:, ::1],
           T.int64[:, ::1], T.float16[:, ::1], T.float32[:, ::1], T.float64[:, ::1],
           T.boolean[:, ::1])
    ptx = ptx_of(fp8_to_types, argtypes=sig)
    assert "cvt.rzi.s8.bf16" in ptx and "cvt.rzi.u64.bf16" in ptx
    assert link_cubin(ptx, (9, 0))[:4] == b"\x7fELF"


def fp8_sweep(x, o4, o5, o8, i4):
    i = cuda.grid(1)
    if i < x.size:
        o4[i] = float32(fp8_e4m3(x[i]))
        o5[i] = float32(fp8_e5m2(x[i]))
        o8[i] = float32(fp8_e8m0(x[i]))
        i4[i] = int32(fp8_e5m2(x[i]))


@pytest.mark.gpu
def test_fp8_types_on_the_gpu_agree_with_narrow_floats_over_a_sweep():
    # every FP8 code's value and its neighbours, and 2**18 float32 bit patterns spread over
    # the whole range: the H200's cvt results against the simulator's rounding rules
    codes = np.arange(256)
    exact = [nf.fp8_bits_to_f32(c, f) for f in ("e4m3", "e5m2") for c in codes]
    exact = np.array(exact + [nf.e8m0_bits_to_f32(c) for c in codes], np.float32)
    near = np.concatenate([exact, np.nextafter(exact, np.float32(np.inf)),
                           np.nextafter(exact, np.float32(-np.inf))])
    spread = (np.arange(1 << 18, dtype=np.uint64) * 16381).astype(np.uint32).view(np.float32)
    x = np.concatenate([near, spread]).astype(np.float32)
    n = x.size
    o4, o5, o8 = (np.zeros(n, np.float32) for _ in range(3))
    i4 = np.zeros(n, np.int32)
    cuda.jit(fp8_sweep)[(n + 255) // 256, 256](x, o4, o5, o8, i4)
    c4 = np.array([nf.float_to_fp8_bits(v, "e4m3") for v in x])
    c5 = np.array([nf.float_to_fp8_bits(v, "e5m2") for v in x])
    c8 = np.array([nf.float_to_e8m0_bits(v, "ru") for v in x])
    assert _bits(o4) == [_f32_bits_of_fp8(c, "e4m3") for c in c4]
    assert _bits(o5) == [_f32_bits_of_fp8(c, "e5m2") for c in c5]
    assert _bits(o8) == [_f32_bits_of_fp8(c, "e8m0") for c in c8]
    b5 = [int(nf.f32_to_bf16_bits(nf.fp8_bits_to_f32(c, "e5m2"), "rz")) for c in c5]
    assert i4.tolist() == [nf.bf16_to_int(b, "rz", True, 32) for b in b5]


def test_the_cast_lowering_refuses_what_the_typing_refuses():
    from llvmlite import ir
    from cujit.nvvm.ltypes import cast
    fn = ir.Function(ir.Module(), ir.FunctionType(ir.VoidType(), [ir.IntType(8)]), "f")
    b = ir.IRBuilder(fn.append_basic_block())
    with pytest.raises(TypeError, match="cannot convert fp8_e5m2 to fp8_e4m3"):
        cast(b, fn.args[0], T.fp8_e5m2, T.fp8_e4m3)
    z = ir.Constant(ir.LiteralStructType([ir.FloatType()] * 2), None)
    with pytest.raises(TypeError, match="cannot convert complex64 to fp8_e8m0"):
        cast(b, z, T.complex64, T.fp8_e8m0)


def fp8_condition(out, x):
    if fp8_e4m3(x[0]):
        out[0] = 1
    if fp8_e8m0(x[0]):
        out[1] = 1


def test_an_fp8_value_as_a_condition_is_its_bool(executor):
    for v, want in ((0.0, [0, 1]), (-0.0, [0, 1]), (2.0 ** -12, [0, 1]), (0.5, [1, 1]),
                    (np.nan, [1, 1])):
        out = np.zeros(2, np.uint8)
        cuda.jit(fp8_condition)[1, 1](out, np.array([v], np.float32))
        assert out.tolist() == want, v


def fp8_shared(out):
    s = cuda.shared.array(4, fp8_e4m3)
    out[0] = float32(s[0])


def test_fp8_arrays_are_typing_errors():
    with pytest.raises(cuda.TypingError, match="FP8 values have no array form"):
        cuda.jit(fp8_shared)[1, 1](np.zeros(1, np.float32))


@cuda.jit(device=True)
def fp8_twice(v):
    return fp8_e5m2(float32(v) * 2)


def fp8_through_device_function(out, x):
    w = fp8_twice(fp8_e4m3(x[0]))
    out[0] = float32(w)


def test_fp8_values_pass_through_device_functions(executor):
    out = np.zeros(1, np.float32)
    cuda.jit(fp8_through_device_function)[1, 1](out, np.array([1.3], np.float32))
    assert out[0] == 2.5             # e4m3(1.3) = 1.25, e5m2(2.5) = 2.5


@pytest.mark.compile
def test_fp8_conditions_and_device_functions_compile():
    from cujit.nvvm.linker import link_cubin
    for fn, sig in ((fp8_condition, (T.uint8[::1], T.float32[::1])),
                    (fp8_through_device_function, (T.float32[::1], T.float32[::1]))):
        ptx = ptx_of(fn, argtypes=sig)
        assert "cvt.rn.satfinite.e4m3x2.f32" in ptx
        assert link_cubin(ptx, (9, 0))[:4] == b"\x7fELF"
