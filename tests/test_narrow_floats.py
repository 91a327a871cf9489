"""Bit-exact bfloat16 and FP8 rounding (``cujit.narrow_floats``), the ``BF16`` value
(``cujit.bf16_scalar``) and ``cuda.fp8``: known bit patterns of each rule (PTX ``cvt``
semantics), the scalar and vector paths against each other, and ml_dtypes' conversions
(round to nearest even) where it is installed."""
import math

import numpy as np
import pytest

import cujit as cuda
from cujit import narrow_floats as nf
from cujit.bf16_scalar import BF16, HAVE_ML_DTYPES, STORAGE_DTYPE, from_storage, to_storage

F32_MAX_BITS = 0x7F7FFFFF


def f32(bits):
    return np.uint32(bits).view(np.float32)


@pytest.mark.parametrize("x,mode,want", [
    (1.0, "rn", 0x3F80), (-2.5, "rn", 0xC020),
    (f32(0x3F808000), "rn", 0x3F80),        # a tie: to even
    (f32(0x3F818000), "rn", 0x3F82),        # a tie: to even (up)
    (f32(0x3F808001), "rn", 0x3F81),
    (f32(0x3F80FFFF), "rz", 0x3F80), (f32(0x3F800001), "ru", 0x3F81),
    (f32(0x3F800001), "rd", 0x3F80), (f32(0xBF800001), "rd", 0xBF81),
    (f32(0xBF800001), "ru", 0xBF80),
    (f32(F32_MAX_BITS), "rn", 0x7F80), (f32(F32_MAX_BITS), "rz", 0x7F7F),
    (f32(F32_MAX_BITS), "ru", 0x7F80), (-f32(F32_MAX_BITS), "ru", 0xFF7F),
    (np.float32("inf"), "rz", 0x7F80), (np.float32("-inf"), "rn", 0xFF80),
    (f32(0x7FC12345), "rn", 0x7FFF), (f32(0xFF800001), "rz", 0x7FFF),    # NaN: canonical
    (np.float32(-0.0), "rn", 0x8000), (f32(0x00000001), "rn", 0x0000),
    (f32(0x00000001), "ru", 0x0001),
])
def test_f32_to_bf16_follows_cvt(x, mode, want):
    assert int(nf.f32_to_bf16_bits(np.float32(x), mode)) == want
    if not math.isnan(x):
        assert nf.round_exact_to_bf16(float(x), mode) == want


def test_f64_to_bf16_rounds_once():
    # just above a float32 tie: rounding to float32 first would land on the tie and go to
    # even (down); cvt.rn.bf16.f64 rounds once (up)
    d = 1.0 + 2.0 ** -8 + 2.0 ** -40
    assert int(nf.f64_to_bf16_bits(d)) == 0x3F81
    assert int(nf.f32_to_bf16_bits(np.float32(d))) == 0x3F80
    assert int(nf.f64_to_bf16_bits(1e300)) == 0x7F80
    assert int(nf.f64_to_bf16_bits(-1e-300)) == 0x8000
    assert int(nf.f64_to_bf16_bits(float("nan"))) == 0x7FC0


def test_f64_nan_to_bf16_keeps_sign_and_top_payload_bits():
    # the H200's cvt.rn.bf16.f64: sign and 7 payload bits kept, quiet bit set (a float32 NaN
    # gives the canonical 0x7FFF instead)
    u = np.array([0x7FF8000000000000, 0xFFF8000000000000, 0x7FF4000000000000,
                  0x7FF4321000000000, 0x7FF0000000000001, 0x7FFFFFFFFFFFFFFF], np.uint64)
    assert nf.f64_to_bf16_bits(u.view(np.float64)).tolist() == \
        [0x7FC0, 0xFFC0, 0x7FE0, 0x7FE1, 0x7FC0, 0x7FFF]
    assert int(nf.f32_to_bf16_bits(np.float32("nan"))) == nf.BF16_NAN


def test_bf16_nan_to_integers_is_zero_up_to_32_bits_and_bit_63_for_64():
    for bits in (0x7FC0, 0xFFC0, 0x7F81):
        assert [nf.bf16_to_int(bits, "rn", s, w) for s in (True, False) for w in (8, 16, 32)] \
            == [0] * 6
        assert nf.bf16_to_int(bits, "rz", True, 64) == -(1 << 63)
        assert nf.bf16_to_int(bits, "ru", False, 64) == 1 << 63


def test_vector_and_scalar_paths_agree():
    rng = np.random.default_rng(7)
    xs = rng.integers(0, 2 ** 32, 2000, dtype=np.uint64).astype(np.uint32).view(np.float32)
    xs = xs[~np.isnan(xs)]
    for mode in nf.ROUNDING_MODES:
        vec = nf.f32_to_bf16_bits(xs, mode)
        assert [nf.round_exact_to_bf16(float(x), mode) for x in xs] == vec.tolist()
    ds = rng.standard_normal(2000) * 10.0 ** rng.integers(-40, 39, 2000)
    assert [nf.round_exact_to_bf16(float(d)) for d in ds] == nf.f64_to_bf16_bits(ds).tolist()


@pytest.mark.skipif(not HAVE_ML_DTYPES, reason="ml_dtypes is not installed")
def test_round_to_nearest_matches_ml_dtypes():
    import ml_dtypes
    rng = np.random.default_rng(3)
    xs = rng.integers(0, 2 ** 32, 50000, dtype=np.uint64).astype(np.uint32).view(np.float32)
    xs = xs[~np.isnan(xs)]
    np.testing.assert_array_equal(nf.f32_to_bf16_bits(xs),
                                  xs.astype(ml_dtypes.bfloat16).view(np.uint16))
    for fmt, dt, top in (("e4m3", ml_dtypes.float8_e4m3fn, 448), ("e5m2", ml_dtypes.float8_e5m2,
                                                                 57344)):
        ys = (rng.standard_normal(3000) * 2.0 ** rng.integers(-22, 18, 3000)).astype(np.float32)
        ys = ys[np.abs(ys) < top]
        assert [nf.float_to_fp8_bits(y, fmt) for y in ys] == ys.astype(dt).view(np.uint8).tolist()
        for b in range(256):
            got, want = nf.fp8_bits_to_f32(b, fmt), np.float32(np.uint8(b).view(dt))
            assert got == want or (np.isnan(got) and np.isnan(want)), (fmt, b)


@pytest.mark.parametrize("i,mode,want", [
    (789, "rn", 0x4445), (789, "rz", 0x4445), (789, "ru", 0x4446), (-789, "rd", 0xC446),
    (257, "rn", 0x4380), (259, "rn", 0x4382), (2 ** 64 - 1, "rn", 0x5F80),
    (2 ** 64 - 1, "rz", 0x5F7F), (0, "rn", 0),
])
def test_int_to_bf16_modes(i, mode, want):
    assert nf.int_to_bf16_bits(i, mode) == want


@pytest.mark.parametrize("bits,mode,signed,width,want", [
    (0x3FC0, "rn", True, 32, 2), (0x3FC0, "rz", True, 32, 1), (0x3FC0, "rd", True, 32, 1),
    (0x3FC0, "ru", True, 32, 2), (0x4020, "rn", True, 16, 2),    # 2.5: ties to even
    (0xBFC0, "rd", True, 16, -2), (0xBFC0, "ru", False, 16, 0),   # clamped to 0
    (0x7F80, "rn", True, 8, 127), (0xFF80, "rz", True, 64, -2 ** 63),
    (0x7FFF, "rn", True, 32, 0), (0x5F80, "rz", False, 64, 2 ** 64 - 1),
])
def test_bf16_to_int_rounds_clamps_and_zeroes_nan(bits, mode, signed, width, want):
    assert nf.bf16_to_int(bits, mode, signed, width) == want


def test_fma_rounds_once_and_keeps_signed_zero():
    # (1 + 2**-7) * (1 - 2**-7) = 1 - 2**-14 exactly; + 2**-8: a single rounding gives 1.0
    a, b = BF16(1 + 2.0 ** -7).bits, BF16(1 - 2.0 ** -7).bits
    assert nf.fma_bf16_bits(a, b, BF16(2.0 ** -8).bits) == 0x3F80
    # a product on a tie plus a tiny addend: the addend decides (double rounding would not)
    tie = BF16(1 + 2.0 ** -7).bits          # squared: 1 + 2**-6 + 2**-14
    assert nf.fma_bf16_bits(tie, tie, BF16(2.0 ** -100).bits) == BF16(1 + 2.0 ** -6).bits
    assert nf.fma_bf16_bits(0x8000, 0x3F80, 0x8000) == 0x8000          # -0 * 1 + -0
    assert nf.fma_bf16_bits(0x3F80, 0x3F80, 0xBF80) == 0x0000          # exact cancellation
    assert nf.fma_bf16_bits(0x7F80, 0x0000, 0x3F80) == nf.BF16_NAN      # inf * 0


@pytest.mark.parametrize("x,fmt,sat,want", [
    (1.0, "e4m3", True, 0x38), (448.0, "e4m3", True, 0x7E), (500.0, "e4m3", True, 0x7E),
    (500.0, "e4m3", False, 0x7F), (-1e9, "e4m3", True, 0xFE), (float("inf"), "e4m3", True, 0x7E),
    (float("nan"), "e4m3", True, 0x7F), (2.0 ** -9, "e4m3", True, 0x01),
    (2.0 ** -10, "e4m3", True, 0x00),       # a tie with 0: to even
    (1.0, "e5m2", True, 0x3C), (57344.0, "e5m2", True, 0x7B), (1e6, "e5m2", True, 0x7B),
    (1e6, "e5m2", False, 0x7C), (float("-inf"), "e5m2", False, 0xFC),
    (float("nan"), "e5m2", False, 0x7F), (-0.0, "e5m2", True, 0x80),
])
def test_fp8_conversions_follow_cvt_satfinite(x, fmt, sat, want):
    assert nf.float_to_fp8_bits(x, fmt, sat) == want


@pytest.mark.parametrize("x,mode,sat,want", [
    (1.0, "rz", True, 127), (3.0, "rz", True, 128), (3.0, "ru", True, 129),
    (4.0, "ru", True, 129), (2.0 ** -127, "rz", True, 0), (2.0 ** -140, "rz", True, 0),
    (float("inf"), "rz", True, 0xFE), (float("inf"), "rz", False, 0xFF),
    (float("nan"), "ru", True, 0xFF), (-8.0, "rz", True, 130), (0.0, "rz", True, 0),
])
def test_e8m0_conversions(x, mode, sat, want):
    assert nf.float_to_e8m0_bits(x, mode, sat) == want


def test_narrow_float_bad_arguments_are_value_errors():
    with pytest.raises(ValueError, match="rounding mode"):
        nf.f32_to_bf16_bits(np.float32(1), "rm")
    with pytest.raises(ValueError, match="FP8 format"):
        nf.float_to_fp8_bits(1.0, "e3m4")
    with pytest.raises(ValueError, match="FP8 format"):
        nf.fp8_bits_to_f32(1, "e2m5")
    with pytest.raises(ValueError, match="E8M0 rounding"):
        nf.float_to_e8m0_bits(1.0, "rn")
    with pytest.raises(ValueError, match="interpretation"):
        cuda.fp8.cvt_float_to_fp8(1.0, 1, 7)
    with pytest.raises(ValueError, match="saturate"):
        cuda.fp8.cvt_float_to_fp8(1.0, 5, 0)


def test_cuda_fp8_module():
    F = cuda.fp8
    assert F.cvt_float_to_fp8(500.0, F.saturation_t.SATFINITE,
                              F.fp8_interpretation_t.E4M3) == 0x7E
    assert F.cvt_double_to_fp8(1.0, F.saturation_t.NOSAT, F.fp8_interpretation_t.E5M2) == 0x3C
    assert F.cvt_fp8_to_float(0x7E, F.fp8_interpretation_t.E4M3) == 448.0
    assert F.cvt_float_to_e8m0(3.0, F.saturation_t.SATFINITE, "ru") == 129
    assert F.cvt_double_to_e8m0(3.0, F.saturation_t.SATFINITE) == 128
    assert F.cvt_e8m0_to_float(127) == 1.0 and math.isnan(F.cvt_e8m0_to_float(0xFF))
    assert nf.e8m0_bits_to_f32(0) == np.float32(2.0 ** -127)


def test_bf16_value_conversions_and_storage():
    assert BF16(3.14).bits == 0x4049 and float(BF16(3.14)) == 3.140625
    assert BF16(np.float32(1.0) + np.float32(2 ** -8)).bits == 0x3F80
    assert BF16(True).bits == 0x3F80 and BF16(np.int8(-2)).bits == 0xC000
    assert BF16(BF16(2.0)).bits == 0x4000 and int(BF16(-2.75)) == -2
    assert not BF16(-0.0) and BF16(0.5) and BF16(float("nan")).isnan()
    assert BF16(float("-inf")).isinf() and repr(BF16(1.5)) == "bfloat16(1.5)"
    nan = BF16.from_bits(0x7FC1)
    assert from_storage(to_storage(nan)).bits == 0x7FC1      # bits kept through storage
    assert to_storage(BF16(1.0)).dtype == STORAGE_DTYPE
    assert BF16(1.0) != BF16(float("nan")) and not BF16(1.0) == BF16(float("nan"))
    with pytest.raises(TypeError):
        BF16(1.0) + 1.0
    with pytest.raises(TypeError, match="bfloat16"):
        BF16([1.0])
    with pytest.raises(TypeError, match="not a bfloat16 value"):
        from_storage(1.5)
    assert from_storage(np.uint16(0x3FC0)).bits == 0x3FC0


def test_uint16_marked_as_bfloat16_types_as_bfloat16():
    from cujit import types as T
    from cujit.bf16_scalar import is_storage_dtype
    marked = np.dtype(np.uint16, metadata={"cujit": "bfloat16"})
    assert T.from_dtype(marked) is T.bfloat16 and is_storage_dtype(marked)
    assert T.typeof(np.zeros(3, marked)) == T.bfloat16[::1]
    assert T.from_dtype(np.uint16) is T.uint16 and not is_storage_dtype(np.uint16)
    assert is_storage_dtype(STORAGE_DTYPE)


def _f64(bits):
    return float(np.uint64(bits).view(np.float64))


def test_double_to_fp8_keeps_a_nans_sign_and_payload_bit():
    # __nv_cvt_double_to_fp8 (software on every GPU): E4M3 0x7F | sign, E5M2 0x7E | the two
    # payload bits below the exponent | sign
    assert nf.double_to_fp8_bits(math.nan, "e4m3") == 0x7F
    assert nf.double_to_fp8_bits(_f64(0xFFF8000000000000), "e4m3") == 0xFF
    assert nf.double_to_fp8_bits(_f64(0x7FF8000000000000), "e5m2") == 0x7E
    assert nf.double_to_fp8_bits(_f64(0x7FFC000000000000), "e5m2") == 0x7F
    assert nf.double_to_fp8_bits(_f64(0xFFF4000000000000), "e5m2") == 0xFF
    assert nf.double_to_fp8_bits(448.0 + 2.0 ** -40, "e4m3") == 0x7E
    assert nf.double_to_fp8_bits(1e300, "e5m2", saturate=False) == 0x7C
    with pytest.raises(ValueError, match="FP8 format must be one of"):
        nf.double_to_fp8_bits(1.0, "e3m4")


def test_fp8_to_half_and_e8m0_to_bfloat16_bits():
    assert nf.fp8_bits_to_f16_bits(0x38, "e4m3") == 0x3C00          # 1.0
    assert nf.fp8_bits_to_f16_bits(0x3C, "e5m2") == 0x3C00
    assert nf.fp8_bits_to_f16_bits(0x01, "e4m3") == 0x1800          # 2**-9, a half normal
    assert nf.fp8_bits_to_f16_bits(0xFF, "e4m3") == nf.F16_NAN == 0x7FFF
    assert nf.fp8_bits_to_f16_bits(0x7D, "e5m2") == 0x7FFF and \
        nf.fp8_bits_to_f16_bits(0xFC, "e5m2") == 0xFC00               # NaN, -inf
    assert [nf.e8m0_bits_to_bf16_bits(b) for b in (127, 0, 0xFF, 254, 1)] == \
        [0x3F80, 0x0040, 0x7FFF, 0x7F00, 0x0080]


@pytest.mark.parametrize("bits, mode, sat, want", [
    (0x3F80, "rz", True, 127), (0x3FC0, "rz", True, 127), (0x3FC0, "ru", True, 128),
    (0xBFC0, "ru", True, 128), (0x7F80, "rz", True, 0xFE), (0x7F80, "ru", False, 0xFF),
    (0x7FC0, "rz", True, 0xFF), (0x0040, "ru", True, 0), (0x0041, "ru", True, 1),
    (0x0030, "ru", True, 0), (0x8000, "ru", True, 0), (0x7F7F, "ru", True, 0xFE),
    (0x7F7F, "ru", False, 0xFF), (0x7F00, "rz", False, 0xFE)])
def test_bf16_to_e8m0_is_cuda_fp8s_rule(bits, mode, sat, want):
    assert nf.bf16_bits_to_e8m0_bits(bits, mode, sat) == want


def test_bf16_to_e8m0_agrees_with_the_exact_rule_on_every_bfloat16():
    for b in range(1 << 16):
        v = float(nf.bf16_bits_to_f32(b))
        for mode in ("rz", "ru"):
            for sat in (True, False):
                assert nf.bf16_bits_to_e8m0_bits(b, mode, sat) == \
                    nf.float_to_e8m0_bits(v, mode, sat), (hex(b), mode, sat)
    with pytest.raises(ValueError, match="E8M0 rounding mode"):
        nf.bf16_bits_to_e8m0_bits(0x3F80, "rn")


def test_float32_to_e8m0_agrees_with_cuda_fp8s_bfloat16_path():
    # __nv_cvt_float_to_e8m0 without the sm_100 instruction: the bfloat16 rounded toward
    # zero (rz) or of the magnitude rounded up (ru), then its exponent
    rng = np.random.default_rng(5)
    xs = rng.integers(0, 1 << 32, 20000, dtype=np.uint64).astype(np.uint32).view(np.float32)
    for x in xs:
        rz = int(nf.f32_to_bf16_bits(x, "rz"))
        ru = int(nf.f32_to_bf16_bits(np.abs(x), "ru"))
        assert nf.float_to_e8m0_bits(x, "rz") == nf.bf16_bits_to_e8m0_bits(rz, "rz"), x
        assert nf.float_to_e8m0_bits(x, "ru") == nf.bf16_bits_to_e8m0_bits(ru, "ru"), x


def test_int_to_e8m0_rounds_the_magnitude_up():
    assert [nf.int_to_e8m0_bits(i) for i in (0, 1, 2, 3, -4, -5, 2 ** 63, 2 ** 62 + 1)] == \
        [0, 127, 128, 129, 129, 130, 190, 190]
    assert nf.int_to_e8m0_bits(2 ** 300) == 0xFE


def test_cuda_fp8_bfloat16_bits_functions_and_modes():
    F = cuda.fp8
    raw = F.cvt_e8m0_to_bf16raw(127)
    assert isinstance(raw, F.BF16RAW) and raw.x == 0x3F80
    assert F.cvt_e8m0_to_bf16raw(0x1FF).x == 0x7FFF                  # the low 8 bits
    assert F.cvt_bfloat16raw_to_fp8(raw, F.saturation_t.NOSAT, F.fp8_interpretation_t.E4M3) \
        == 0x38
    assert F.cvt_bfloat16raw_to_e8m0(F.BF16RAW(0x3FC0), F.saturation_t.NOSAT, 2) == 128
    assert F.cvt_float_to_e8m0(3.0, F.saturation_t.NOSAT, 1) == 128  # cudaRoundZero
    assert [F.round_mode(m) for m in ("rz", "ru", 1, 2)] == ["rz", "ru", "rz", "ru"]
    for bad in (0, 3, "rn", None, 1.5j):
        with pytest.raises(ValueError, match="E8M0 rounding mode must be"):
            F.round_mode(bad)
    with pytest.raises(TypeError, match="as a ushort1"):
        F.cvt_bfloat16raw_to_fp8(0x3F80, F.saturation_t.NOSAT, F.fp8_interpretation_t.E4M3)
    with pytest.raises(TypeError, match="as a ushort1"):
        F.cvt_bfloat16raw_to_e8m0(cuda.uint32x1(0x3F80), F.saturation_t.NOSAT, 1)
    with pytest.raises(ValueError, match="FP8 interpretation"):
        F.interpretation_name(2)
