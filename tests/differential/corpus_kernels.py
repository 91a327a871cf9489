"""Kernels of the differential corpus (see ``corpus.py``): operators, conversions, maths,
a warp reduction and a histogram, written as users write them.  The benchmark kernels
(axpy, tiled matmul, shared-memory reduction, stencil) are not copied here: the corpus runs
``benchmarks/kernels.py`` itself (``kernels_common.benchmark_kernels``)."""
import math

import numpy as np

import cujit as cuda


@cuda.jit
def arith(a, b, add, sub, mul, div, fdiv, mod):
    i = cuda.grid(1)
    if i < a.size:
        add[i] = a[i] + b[i]
        sub[i] = a[i] - b[i]
        mul[i] = a[i] * b[i]
        div[i] = a[i] / b[i]
        fdiv[i] = a[i] // b[i]
        mod[i] = a[i] % b[i]


@cuda.jit
def compare_ops(a, b, lt, le, eq, ne):
    i = cuda.grid(1)
    if i < a.size:
        lt[i] = a[i] < b[i]
        le[i] = a[i] <= b[i]
        eq[i] = a[i] == b[i]
        ne[i] = a[i] != b[i]


@cuda.jit
def literals(a, times_tenth, plus_one, floordiv_three, neg):
    i = cuda.grid(1)
    if i < a.size:
        times_tenth[i] = a[i] * 0.1
        plus_one[i] = a[i] + 1
        floordiv_three[i] = a[i] // 3
        neg[i] = -a[i]


@cuda.jit
def int_bits(a, b, band, bor, bxor, shl, shr):
    i = cuda.grid(1)
    if i < a.size:
        band[i] = a[i] & b[i]
        bor[i] = a[i] | b[i]
        bxor[i] = a[i] ^ b[i]
        shl[i] = a[i] << (b[i] & 15)
        shr[i] = a[i] >> (b[i] & 15)


@cuda.jit
def basic_math(a, b, c, sqrt_, fma_, fmod_, fabs_, copysign_):
    i = cuda.grid(1)
    if i < a.size:
        sqrt_[i] = math.sqrt(a[i])
        fma_[i] = cuda.fma(a[i], b[i], c[i])
        fmod_[i] = math.fmod(a[i], b[i])
        fabs_[i] = math.fabs(a[i])
        copysign_[i] = math.copysign(a[i], b[i])


@cuda.jit
def transcendental(a, sin_, cos_, exp_, log_, tanh_, atan2_):
    i = cuda.grid(1)
    if i < a.size:
        sin_[i] = math.sin(a[i])
        cos_[i] = math.cos(a[i])
        exp_[i] = math.exp(a[i])
        log_[i] = math.log(a[i])
        tanh_[i] = math.tanh(a[i])
        atan2_[i] = math.atan2(a[i], 0.5)


@cuda.jit
def conversions(a, to_i32, to_u8, to_f32, to_bool, trunc_):
    i = cuda.grid(1)
    if i < a.size:
        to_i32[i] = np.int32(a[i])
        if a[i] >= 0 and a[i] < 256:       # out of range float -> uint8 is undefined
            to_u8[i] = np.uint8(a[i])
        to_f32[i] = np.float32(a[i])
        to_bool[i] = bool(a[i])
        trunc_[i] = math.trunc(a[i])


@cuda.jit
def warp_sum(a, out):
    t = cuda.threadIdx.x
    v = a[t]
    off = 16
    while off > 0:
        v += cuda.shfl_down_sync(0xFFFFFFFF, v, off)
        off //= 2
    if cuda.laneid == 0:
        out[t // 32] = v


@cuda.jit
def int_histogram(x, bins, counts):
    i = cuda.grid(1)
    if i < x.size:
        k = x[i] % bins
        cuda.atomic.add(counts, k, 1)


@cuda.jit
def bf16_ops(a, b, n, add, sub, mul, div, fma_, lt, ne, to_i32, from_i32, from_f64):
    # bfloat16 results are stored as their bits (int16) so the comparison is bit for bit
    i = cuda.grid(1)
    if i < a.size:
        x = cuda.bfloat16(a[i])
        y = cuda.bfloat16(b[i])
        add[i] = cuda.bf16.bfloat16_as_int16(x + y)
        sub[i] = cuda.bf16.bfloat16_as_int16(x - y)
        mul[i] = cuda.bf16.bfloat16_as_int16(x * y)
        div[i] = cuda.bf16.bfloat16_as_int16(x / y)
        fma_[i] = cuda.bf16.bfloat16_as_int16(cuda.bf16.hfma(x, y, x))
        lt[i] = x < y
        ne[i] = x != y
        to_i32[i] = cuda.bf16.bfloat16_to_int32_rn(x)
        from_i32[i] = cuda.bf16.bfloat16_as_int16(cuda.bf16.int32_to_bfloat16_rn(n[i]))
        from_f64[i] = cuda.bf16.bfloat16_as_int16(cuda.bfloat16(np.float64(a[i]) * 1.1))


@cuda.jit
def fp8_types(x, d, q4, q5, q8, r4, r8, n4):
    i = cuda.grid(1)
    if i < x.size:
        q4[i] = cuda.float32(cuda.fp8.fp8_e4m3(x[i]))
        q5[i] = cuda.float32(cuda.fp8.fp8_e5m2(x[i]))
        q8[i] = cuda.float32(cuda.fp8.fp8_e8m0(x[i]))
        r4[i] = cuda.float32(cuda.fp8.fp8_e4m3(d[i]))
        r8[i] = cuda.float32(cuda.fp8.fp8_e8m0(d[i]))
        n4[i] = cuda.int32(cuda.fp8.fp8_e4m3(x[i]))


@cuda.jit
def vector_ops(x, n, s, w, k):
    """CUDA vector types: construction from scalars and from a smaller vector, members read
    back (float32 sums in member order), integer members wrapping to int32."""
    i = cuda.grid(1)
    if i < x.size:
        half = cuda.float32x2(x[i] + cuda.float32(1), -x[i])
        v = cuda.float32x4(x[i], x[i] * cuda.float32(2), half)
        s[i] = v.x + v.y + v.z + v.w
        w[i] = v.w
        iv = cuda.int32x2(n[i], n[i] + 7)
        k[i] = iv.x ^ iv.y


@cuda.jit
def fp8_convs(x, e4, e5, back4, back5):
    i = cuda.grid(1)
    if i < x.size:
        e4[i] = cuda.fp8.float32_to_e4m3(x[i])
        e5[i] = cuda.fp8.float32_to_e5m2(x[i])
        back4[i] = cuda.fp8.e4m3_to_float32(e4[i])
        back5[i] = cuda.fp8.e5m2_to_float32(e5[i])
