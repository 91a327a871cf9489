"""float16: arithmetic and comparisons on float16 scalars, float16 shared and local arrays,
and the ``cuda.fp16`` intrinsics (values against ``cujit.fp16``'s reference bodies)."""
import numpy as np
import pytest

import cujit as cuda
from cujit import fp16 as F
from cujit import types as T

from _kl_helpers import ptx_of

BIN = ("hadd", "hsub", "hmul", "hdiv", "hmax", "hmin")
CMP = ("heq", "hne", "hlt", "hle", "hgt", "hge")
UN = ("hneg", "habs", "hsqrt", "hrsqrt", "hrcp", "hexp", "hexp2", "hexp10", "hlog", "hlog2",
      "hlog10", "hsin", "hcos", "hceil", "hfloor", "htrunc", "hrint")


def fp16_all(out, flags, a, b):
    out[0] = cuda.fp16.hadd(a, b)
    out[1] = cuda.fp16.hsub(a, b)
    out[2] = cuda.fp16.hmul(a, b)
    out[3] = cuda.fp16.hdiv(a, b)
    out[4] = cuda.fp16.hmax(a, b)
    out[5] = cuda.fp16.hmin(a, b)
    out[6] = cuda.fp16.hneg(a)
    out[7] = cuda.fp16.habs(a)
    out[8] = cuda.fp16.hsqrt(b)
    out[9] = cuda.fp16.hrsqrt(b)
    out[10] = cuda.fp16.hrcp(b)
    out[11] = cuda.fp16.hexp(a)
    out[12] = cuda.fp16.hexp2(a)
    out[13] = cuda.fp16.hexp10(a)
    out[14] = cuda.fp16.hlog(b)
    out[15] = cuda.fp16.hlog2(b)
    out[16] = cuda.fp16.hlog10(b)
    out[17] = cuda.fp16.hsin(a)
    out[18] = cuda.fp16.hcos(a)
    out[19] = cuda.fp16.hceil(a)
    out[20] = cuda.fp16.hfloor(a)
    out[21] = cuda.fp16.htrunc(a)
    out[22] = cuda.fp16.hrint(a)
    out[23] = cuda.fp16.hfma(a, b, a)
    flags[0] = cuda.fp16.heq(a, b)
    flags[1] = cuda.fp16.hne(a, b)
    flags[2] = cuda.fp16.hlt(a, b)
    flags[3] = cuda.fp16.hle(a, b)
    flags[4] = cuda.fp16.hgt(a, b)
    flags[5] = cuda.fp16.hge(a, b)


@pytest.mark.parametrize("a,b", [(-1.25, 2.5), (0.333, 7.0), (3.5, 3.5)])
def test_fp16_intrinsics(a, b):
    a, b = np.float16(a), np.float16(b)
    out = np.zeros(24, np.float16)
    flags = np.zeros(6, np.bool_)
    cuda.jit(fp16_all)[1, 1](out, flags, a, b)
    want = [getattr(F, n)(a, b) for n in BIN] + [getattr(F, n)(b if n in (
        "hsqrt", "hrsqrt", "hrcp", "hlog", "hlog2", "hlog10") else a) for n in UN]
    want.append(F.hfma(a, b, a))
    exact = BIN + ("hneg", "habs", "hsqrt", "hrcp", "hceil", "hfloor", "htrunc", "hrint")
    for k, (n, w) in enumerate(zip(BIN + UN + ("hfma",), want)):
        if n in exact or n == "hfma":
            assert out[k] == w, n
        else:   # approximate functions: within 2 half ulp
            assert abs(float(out[k]) - float(w)) <= 2 * float(np.spacing(np.float16(w))), n
    np.testing.assert_array_equal(flags, [getattr(F, n)(a, b) for n in CMP])


def test_fp16_needs_real_arguments():
    def k(out, x):
        out[0] = cuda.fp16.hadd(x, x)
    with pytest.raises(cuda.TypingError, match="float16"):
        cuda.jit(k)[1, 1](np.zeros(1, np.float16), 1j)


def literal_args(out, x, d):
    out[0] = cuda.fp16.hmul(x, 2)          # an int literal converts to float16
    out[1] = cuda.fp16.hmul(x, 2.5)        # so does a float64 constant
    out[2] = cuda.fp16.hadd(x, d)          # and a float64 value, rounded to half first
    out[3] = cuda.fp16.hfma(x, 2, 0.1)


def test_fp16_converts_real_arguments_to_float16():
    # numba-cuda's test_casting (test_literal_to_float16): hmul(np.float16(x), 2)
    out = np.zeros(4, np.float16)
    x = np.float16(321)
    cuda.jit(literal_args)[1, 1](out, x, 0.1)
    h = np.float16
    np.testing.assert_array_equal(out, [x * h(2), x * h(2.5), x + h(0.1),
                                        h(float(x) * 2 + float(h(0.1)))])


def half_arrays(out, x, y):
    s = cuda.shared.array(4, np.float16)
    loc = cuda.local.array(2, np.float16)
    i = cuda.threadIdx.x
    s[i] = x * np.float16(i)
    loc[0] = y - x
    loc[1] = -x
    cuda.syncthreads()
    out[i] = s[3 - i] + loc[0] + loc[1]
    if x < y and not x >= y:
        out[i + 4] = x / y


def test_float16_scalars_and_shared_local_arrays():
    out = np.zeros(8, np.float16)
    x, y = np.float16(1.5), np.float16(4.0)
    cuda.jit(half_arrays)[1, 4](out, x, y)
    want = [np.float16(x * np.float16(3 - i)) + np.float16(y - x) + -x for i in range(4)]
    np.testing.assert_array_equal(out[:4], np.array(want, np.float16))
    np.testing.assert_array_equal(out[4:], [np.float16(x / y)] * 4)


@pytest.mark.compile
def test_fp16_compiles():
    ptx = ptx_of(fp16_all, argtypes=(T.float16[::1], T.boolean[::1], T.float16, T.float16))
    assert ".entry" in ptx
    assert ".shared" in ptx_of(half_arrays, argtypes=(T.float16[::1], T.float16, T.float16))


def half_ops(out, x, i8, u8):
    out[0] = -x
    out[1] = abs(x)
    out[2] = cuda.fp16.hfma(x, x, x)
    out[3] = np.float16(i8)
    out[4] = np.float16(u8)


def test_float16_negation_abs_fma_and_int_conversion_values():
    out = np.zeros(5, np.float16)
    x = np.float16(-1.5)
    cuda.jit(half_ops)[1, 1](out, x, np.int8(-100), np.uint8(250))
    np.testing.assert_array_equal(out, np.array([1.5, 1.5, 0.75, -100, 250], np.float16))


@pytest.mark.compile
def test_float16_ops_are_f16_instructions():
    # numba-cuda's PTX: the f16 instructions, and int -> f16 from the integer's own width
    ptx = ptx_of(half_ops, argtypes=(T.float16[::1], T.float16, T.int8, T.uint8))
    for insn in ("neg.f16", "abs.f16", "fma.rn.f16", "cvt.rn.f16.s8", "cvt.rn.f16.u8"):
        assert insn in ptx, insn


@pytest.mark.compile
@pytest.mark.parametrize("ty,bits", [(T.int16, "s16"), (T.int32, "s32"), (T.int64, "s64"),
                                     (T.uint16, "u16"), (T.uint32, "u32"),
                                     (T.uint64, "u64")])
def test_int_to_float16_converts_from_its_width(ty, bits):
    from cujit import compile_ptx

    def to_half(x):
        return np.float16(x) * np.float16(0.5)
    ptx, rt = compile_ptx(to_half, (ty,), device=True)
    assert rt is T.float16 and f"cvt.rn.f16.{bits}" in ptx


@pytest.mark.compile
def test_exported_float16_device_function_passes_its_bits():
    # libNVVM drops LLVM half parameters/results of an exported .func: cujit passes the
    # bits as i16, so the PTX loads the argument and stores the result
    from cujit import compile_ptx

    def negate(x):
        return -x
    ptx, rt = compile_ptx(negate, (T.float16,), device=True)
    assert rt is T.float16
    assert "ld.param.u16" in ptx and "neg.f16" in ptx and "st.param" in ptx
