"""bfloat16 in kernels: ``bfloat16(x)``, its operators, comparisons, ``math.*`` of it, the
``cuda.bf16`` intrinsics and conversions in their rounding modes, bfloat16 arrays (host,
shared, local) and the typing errors; values are the bits ``cujit.narrow_floats`` gives (the
GPU's instructions), and the compile tests show libNVVM and nvJitLink accept the inline PTX.
"""
import math

import numpy as np
import pytest

import cujit as cuda
from cujit import bf16 as B
from cujit import narrow_floats as nf
from cujit import types as T
from cujit.bf16 import bfloat16
from cujit.bf16_scalar import BF16, HAVE_ML_DTYPES, STORAGE_DTYPE

from _kl_helpers import ptx_of


def bits(v):
    return BF16(v).bits if not isinstance(v, BF16) else v.bits


def arith(out, a, b):
    x = bfloat16(a)
    y = bfloat16(b)
    out[0] = B.bfloat16_as_int16(x + y)
    out[1] = B.bfloat16_as_int16(x - y)
    out[2] = B.bfloat16_as_int16(x * y)
    out[3] = B.bfloat16_as_int16(x / y)
    out[4] = B.bfloat16_as_int16(-x)
    out[5] = B.bfloat16_as_int16(B.hfma(x, y, x))
    out[6] = B.bfloat16_as_int16(B.habs(y))
    out[7] = B.bfloat16_as_int16(B.hmax(x, y))
    out[8] = B.bfloat16_as_int16(B.hmin(x, y))
    out[9] = B.bfloat16_as_int16(B.hadd_sat(x, y))
    out[10] = B.bfloat16_as_int16(B.hfma_relu(x, y, y))
    out[11] = B.bfloat16_as_int16(math.floor(x))
    out[12] = B.bfloat16_as_int16(math.sqrt(B.habs(x)))


def _want_arith(a, b):
    x, y = BF16(a), BF16(b)
    vals = [x + y, x - y, x * y, x / y, -x, B.hfma(x, y, x), B.habs(y), B.hmax(x, y),
            B.hmin(x, y), B.hadd_sat(x, y), B.hfma_relu(x, y, y), B.hfloor(x),
            B.hsqrt(B.habs(x))]
    return [B.bfloat16_as_int16(v) for v in vals]


@pytest.mark.parametrize("a,b", [(1.25, -2.5), (3.14159, 0.1), (1e38, 1e38), (-7.0, 3.0),
                                 (float("nan"), 1.0), (1.0, 0.0)])
def test_bf16_arithmetic_is_the_reference_bits(a, b):
    out = np.zeros(13, np.int16)
    cuda.jit(arith)[1, 1](out, a, b)
    assert out.tolist() == _want_arith(a, b)


def test_bf16_arithmetic_rounds_once():
    # 1 + 2**-8 is a tie (bfloat16 keeps 7 mantissa bits): even -> 1.0; 1 + 3*2**-9 rounds
    # up; the fma of 1.5 * 1.5 + 1 is 3.25 exactly
    one, tiny = BF16(1.0), BF16(2.0 ** -8)
    assert float(one + tiny) == 1.0
    assert float(one + BF16(3 * 2.0 ** -9)) == 1.0 + 2.0 ** -7
    assert float(B.hfma(BF16(1.5), BF16(1.5), one)) == 3.25
    assert (BF16(3e38) * BF16(3e38)).bits == 0x7F80          # overflow to inf
    assert (BF16(0.0) / BF16(0.0)).bits == nf.BF16_NAN


def compare(out, a, b):
    x = bfloat16(a)
    y = bfloat16(b)
    out[0] = x < y
    out[1] = x <= y
    out[2] = x > y
    out[3] = x >= y
    out[4] = x == y
    out[5] = x != y
    out[6] = B.hne(x, y)
    out[7] = B.hneu(x, y)
    out[8] = B.hisnan(x)
    out[9] = B.hltu(x, y)


@pytest.mark.parametrize("a,b", [(3.0, 4.0), (4.0, 3.0), (3.0, 3.0), (float("nan"), 1.0)])
def test_bf16_comparisons(a, b):
    out = np.zeros(10, np.bool_)
    cuda.jit(compare)[1, 1](out, a, b)
    nan = math.isnan(a)
    want = [a < b, a <= b, a > b, a >= b, a == b, a != b, (a != b) and not nan,
            a != b, nan, nan or a < b]
    assert out.tolist() == want


def conversions(i2, u2, i4, i8, i1, f4, src):
    a = B.int16_as_bfloat16(src)
    i2[0] = B.bfloat16_to_int16_rn(a)
    i2[1] = B.bfloat16_to_int16_rz(a)
    i2[2] = B.bfloat16_to_int16_rd(a)
    i2[3] = B.bfloat16_to_int16_ru(a)
    u2[0] = B.bfloat16_to_uint16_rn(a)
    u2[1] = B.bfloat16_to_uint16_ru(a)
    i4[0] = B.bfloat16_to_int32_rn(a)
    i4[1] = B.bfloat162int_ru(a)
    i8[0] = B.bfloat16_to_int64_rd(a)
    i8[1] = B.bfloat16_to_uint64_ru(a)
    i1[0] = B.bfloat16_to_int8_rz(a)
    i1[1] = B.bfloat16_to_uint8_rz(a)
    f4[0] = B.bfloat16_to_float32(a)
    f4[1] = float32(a)


float32 = cuda.float32


@pytest.mark.parametrize("value", [1.5, 2.5, -1.5, -300.0, 1e10, float("nan"), 0.75])
def test_bf16_to_integer_conversions(value):
    src = np.int16(np.uint16(bits(value)).view(np.int16))
    i2, u2 = np.zeros(4, np.int16), np.zeros(2, np.uint16)
    i4, i8, i1 = np.zeros(2, np.int32), np.zeros(2, np.int64), np.zeros(2, np.int8)
    i8[1] = 0
    f4 = np.zeros(2, np.float32)
    cuda.jit(conversions)[1, 1](i2, u2, i4, i8, i1, f4, src)
    b = bits(value)
    conv = nf.bf16_to_int
    assert i2.tolist() == [conv(b, m, True, 16) for m in ("rn", "rz", "rd", "ru")]
    assert u2.tolist() == [conv(b, "rn", False, 16), conv(b, "ru", False, 16)]
    assert i4.tolist() == [conv(b, "rn", True, 32), conv(b, "ru", True, 32)]
    assert int(i8[0]) == conv(b, "rd", True, 64)
    assert int(i8.view(np.uint64)[1]) == conv(b, "ru", False, 64)
    assert i1.view(np.uint8)[1] == conv(b, "rz", False, 8)
    assert int(i1[0]) == conv(b, "rz", True, 8)
    np.testing.assert_array_equal(f4, [nf.bf16_bits_to_f32(b)] * 2)


def test_bf16_integer_conversion_modes_of_numba_cuda_test():
    # numba-cuda's test_to_integer_conversions: 1.5 -> rn 2, rz 1, rd 1, ru 2; NaN -> 0
    x = B.int16_as_bfloat16(0x3FC0)
    assert [B.bfloat16_to_int32_rn(x), B.bfloat16_to_int32_rz(x), B.bfloat16_to_int32_rd(x),
            B.bfloat16_to_int32_ru(x)] == [2, 1, 1, 2]
    assert B.bfloat16_to_int16_rn(BF16(float("nan"))) == 0
    assert B.bfloat16_to_int8_rz(BF16(1000.0)) == 127          # clamped


def from_numbers(out, n, f, d):
    out[0] = B.bfloat16_as_int16(B.int32_to_bfloat16_rn(n))
    out[1] = B.bfloat16_as_int16(B.int32_to_bfloat16_rz(n))
    out[2] = B.bfloat16_as_int16(B.int32_to_bfloat16_rd(n))
    out[3] = B.bfloat16_as_int16(B.int32_to_bfloat16_ru(n))
    out[4] = B.bfloat16_as_int16(B.uint64_to_bfloat16_ru(n))
    out[5] = B.bfloat16_as_int16(B.int16_to_bfloat16_rd(n))
    out[6] = B.bfloat16_as_int16(B.float32_to_bfloat16_rn(f))
    out[7] = B.bfloat16_as_int16(B.float32_to_bfloat16_rz(f))
    out[8] = B.bfloat16_as_int16(B.float32_to_bfloat16_rd(f))
    out[9] = B.bfloat16_as_int16(B.float32_to_bfloat16_ru(f))
    out[10] = B.bfloat16_as_int16(B.float64_to_bfloat16(d))
    out[11] = B.bfloat16_as_int16(bfloat16(n))
    out[12] = B.bfloat16_as_int16(bfloat16(f))


@pytest.mark.parametrize("n,f", [(789, 1.5), (-789, -3.0e-3), (257, 3.4e38), (12345, -0.1)])
def test_bf16_from_number_conversions(n, f):
    out = np.zeros(13, np.int16)
    d = float(np.float64(f) * (1 + 2.0 ** -30))
    cuda.jit(from_numbers)[1, 1](out, np.int32(n), np.float32(f), d)
    s16 = lambda b: b - 0x10000 if b & 0x8000 else b      # noqa: E731
    i16 = int(np.int16(np.int32(n).astype(np.int16)))
    want = [nf.int_to_bf16_bits(n, m) for m in ("rn", "rz", "rd", "ru")]
    want += [nf.int_to_bf16_bits(n % 2 ** 64, "ru"), nf.int_to_bf16_bits(i16, "rd")]
    want += [int(nf.f32_to_bf16_bits(np.float32(f), m)) for m in ("rn", "rz", "rd", "ru")]
    want += [int(nf.f64_to_bf16_bits(d)), nf.int_to_bf16_bits(n),
             int(nf.f32_to_bf16_bits(np.float32(f)))]
    assert out.tolist() == [s16(w) for w in want]


def scale_arrays(out, x, y, k):
    i = cuda.grid(1)
    s = cuda.shared.array(8, bfloat16)
    loc = cuda.local.array(2, bfloat16)
    if i < x.size:
        s[i] = x[i]
        loc[0] = y[i]
        loc[1] = k
        cuda.syncthreads()
        out[i] = s[7 - i] * loc[1] + loc[0]
        out[i] += k


def test_bf16_arrays_host_shared_local():
    xs = np.array([BF16(v).bits for v in np.linspace(-3, 5, 8)], np.uint16)
    ys = np.array([BF16(v).bits for v in np.linspace(0.1, 9.3, 8)], np.uint16)
    x, y = xs.view(STORAGE_DTYPE), ys.view(STORAGE_DTYPE)
    out = np.zeros(8, STORAGE_DTYPE)
    k = BF16(1.75)
    sig = (T.bfloat16[::1], T.bfloat16[::1], T.bfloat16[::1], T.bfloat16)
    cuda.jit(sig)(scale_arrays)[1, 8](out, x, y, k)
    want = [(BF16.from_bits(xs[7 - i]) * k + BF16.from_bits(ys[i])) + k for i in range(8)]
    assert out.view(np.uint16).tolist() == [w.bits for w in want]


@pytest.mark.skipif(not HAVE_ML_DTYPES, reason="ml_dtypes is not installed")
def test_bf16_ml_dtypes_arrays_type_as_bfloat16():
    import ml_dtypes
    a = np.ones(4, ml_dtypes.bfloat16)
    assert T.typeof(a) == T.bfloat16[::1]
    assert T.typeof(a[0]) is T.bfloat16
    assert T.typeof(BF16(1)) is T.bfloat16


def stores_float(out, x):
    out[0] = x


def mixes(out, x):
    out[0] = float32(bfloat16(1.5) + x)


def needs_bf16(out, x):
    out[0] = float32(B.hadd(x, x))


def converts(out, ints, x, n):
    out[0] = x                                  # a float stored: bfloat16(x)
    out[1] = B.hadd(x, n)                       # real arguments: bfloat16(x)
    ints[0] = B.int16_as_bfloat16(n)            # 0x3FC0 is 1.5; stored into int16: 1
    ints[1] = B.int16_as_bfloat16(B.bfloat16_as_int16(n))     # n -> bfloat16(16320.0) -> n


def test_bf16_implicit_conversions_of_arguments_and_stores():
    # numba-cuda's test_bfloat16_as_bitcast passes an int16 to bfloat16_as_int16
    out = np.zeros(2, STORAGE_DTYPE)
    ints = np.zeros(2, np.int16)
    sig = (T.bfloat16[::1], T.int16[::1], T.float64, T.int16)
    cuda.jit(sig)(converts)[1, 1](out, ints, 3.14159, np.int16(0x3FC0))
    x, n = BF16(3.14159), BF16(0x3FC0)        # the int16 argument converted as bfloat16(n)
    assert out.view(np.uint16).tolist() == [x.bits, B.hadd(x, n).bits]
    assert ints.tolist() == [1, 0x3FC0]


def test_bf16_typing_errors():
    with pytest.raises(cuda.TypingError, match="unsupported operand types for \\+: bfloat16 "
                                               "and complex128"):
        cuda.jit(mixes)[1, 1](np.zeros(1, np.float32), 1j)
    with pytest.raises(cuda.TypingError, match="takes bfloat16 values"):
        cuda.jit(needs_bf16)[1, 1](np.zeros(1, np.float32), 1j)
    with pytest.raises(cuda.TypingError, match="cannot store a value of type complex128"):
        cuda.jit((T.bfloat16[::1], T.complex128))(stores_float)
    with pytest.raises(TypeError, match="bfloat16"):
        BF16("1.0")
    with pytest.raises(TypeError, match="bfloat16 values"):
        B.hadd(1.0, BF16(1))
    with pytest.raises(TypeError, match="bfloat16 value"):
        cuda.bf16_scalar.to_storage(1.0)


def test_bf16_support_queries_and_names():
    assert cuda.is_bfloat16_supported() is (
        cuda.get_current_device().compute_capability >= (8, 0))
    assert cuda.bf16.bfloat16 is cuda.bfloat16 is T.bfloat16
    assert B.float2bfloat16_rz is B.float32_to_bfloat16_rz
    assert B.bfloat162short_rn is B.bfloat16_to_int16_rn
    assert set(B.SIGNATURES) == set(B.INTRINSICS)


@pytest.mark.compile
def test_bf16_compiles_to_sm90_cubin():
    from cujit.nvvm.linker import link_cubin
    kernels = [
        (arith, (T.int16[::1], T.float64, T.float64)),
        (compare, (T.boolean[::1], T.float64, T.float64)),
        (conversions, (T.int16[::1], T.uint16[::1], T.int32[::1], T.int64[::1],
                       T.int8[::1], T.float32[::1], T.int16)),
        (from_numbers, (T.int16[::1], T.int32, T.float32, T.float64)),
        (scale_arrays, (T.bfloat16[::1], T.bfloat16[::1], T.bfloat16[::1], T.bfloat16)),
    ]
    for fn, sig in kernels:
        ptx = ptx_of(fn, argtypes=sig)
        assert ".entry" in ptx
        assert link_cubin(ptx, (9, 0))[:4] == b"\x7fELF", fn.__name__
    ptx = ptx_of(arith, argtypes=kernels[0][1])
    assert "fma.rn.bf16" in ptx and "cvt.rn.bf16.f64" in ptx


@pytest.mark.compile
def test_bf16_every_intrinsic_compiles():
    from cujit.nvvm.linker import link_cubin
    from cujit.nvvm.lowering import compile_to_llvm
    from cujit.nvvm.libnvvm import compile_ptx
    src = ["def every(out, bo, a, n, f, d):"]
    for k, name in enumerate(B.INTRINSICS):
        params, result = B.SIGNATURES[name]
        args = ", ".join({T.bfloat16: "a", T.float32: "f", T.float64: "d"}.get(p, "n")
                         for p in params)
        call = f"B.{name}({args})"
        if result is T.bfloat16:
            call = f"B.bfloat16_as_int16({call})"
        src.append(f"    {'bo' if result is T.boolean else 'out'}[{k}] = {call}")
    ns = {"B": B}
    exec(compile("\n".join(src), "<every>", "exec"), ns)   # one kernel calling each name
    import linecache
    linecache.cache["<every>"] = (0, None, [s + "\n" for s in src], "<every>")
    sig = (T.int64[::1], T.boolean[::1], T.bfloat16, T.int32, T.float32, T.float64)
    ptx = compile_ptx(compile_to_llvm(ns["every"], sig).llvm_ir)
    assert link_cubin(ptx, (9, 0))[:4] == b"\x7fELF"


def test_bf16_scalar_arguments_pack_as_their_bits():
    # the real driver's parameter buffer: a BF16 or an array element of the storage dtype
    # is its 16 bits (the i16 parameter of the kernel ABI)
    from cujit.dispatch.launcher import ArgPacker
    from cujit.bf16_scalar import to_storage
    p = ArgPacker((T.bfloat16, T.int32, T.bfloat16))
    p.pack((BF16(1.5), 7, to_storage(BF16(-2.0))))
    raw = bytes(p.buffer)
    assert raw[0:2] == (0x3FC0).to_bytes(2, "little")
    assert raw[8:10] == (0xC000).to_bytes(2, "little")


def mixed_operands(out, fout, a, n64, n8, n32, f32, f64):
    # numba-cuda resolves a bfloat16 mixed with another number over its operator cases
    out[0] = a * n64            # int64: computed in bfloat16
    out[1] = n8 + a             # int8 converts safely: bfloat16
    out[2] = 2 * a - bfloat16(0.5)
    fout[0] = a * f32           # float32: computed in float32
    fout[1] = a / n32           # int32: computed in float64
    fout[2] = f64 - a           # float64


def test_bf16_mixed_with_other_numbers():
    out = np.zeros(3, STORAGE_DTYPE)
    fout = np.zeros(3)
    a = BF16(1.5)
    cuda.jit(mixed_operands)[1, 1](out, fout, a, 3, np.int8(2), np.int32(4),
                                   np.float32(0.1), 0.1)
    got = [float(BF16.from_bits(int(b))) for b in out.view(np.uint16)]
    assert got == [4.5, 3.5, 2.5]
    assert fout[0] == np.float64(np.float32(1.5) * np.float32(0.1))
    assert fout[1] == 1.5 / 4 and fout[2] == 0.1 - 1.5


@pytest.mark.parametrize("other,expect", [
    (T.int8, T.bfloat16), (T.uint8, T.bfloat16), (T.int64, T.bfloat16),
    (T.uint64, T.bfloat16), (T.int16, T.float32), (T.uint16, T.float32),
    (T.boolean, T.float32), (T.float16, T.float32), (T.float32, T.float32),
    (T.int32, T.float64), (T.uint32, T.float64), (T.float64, T.float64),
    (T.bfloat16, T.bfloat16), (T.complex64, None),
], ids=str)
def test_bf16_mixed_operator_types(other, expect):
    from cujit.frontend.rules import binop_type
    assert binop_type("*", T.bfloat16, other) is expect
    assert binop_type("+", other, T.bfloat16) is expect
    assert binop_type("//", T.bfloat16, other) is None


@pytest.mark.compile
def test_bf16_mixed_operands_compile():
    ptx = ptx_of(mixed_operands, np.zeros(3, STORAGE_DTYPE), np.zeros(3), BF16(1.5), 3,
                 np.int8(2), np.int32(4), np.float32(0.1), 0.1)
    assert ".entry" in ptx


@pytest.mark.skipif(not HAVE_ML_DTYPES, reason="needs ml_dtypes")
def test_ml_dtypes_bfloat16_class_casts_in_kernels():
    import ml_dtypes

    def k(out, a, b):
        i = cuda.grid(1)
        if i < a.size:
            out[i] = 2 * a[i] + 4 * b[i] + ml_dtypes.bfloat16(3.0)

    a = np.asarray([1, 2, 3, 4, 5], dtype=ml_dtypes.bfloat16)
    out = np.zeros(5, ml_dtypes.bfloat16)
    cuda.jit(k)[1, 8](out, a, np.arange(5))
    np.testing.assert_array_equal(out.astype(np.float32), [5, 11, 17, 23, 29])
