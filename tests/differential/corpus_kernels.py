"""Kernels of the differential corpus (see ``corpus.py``): operators, conversions, maths
and small versions of the benchmark kernels, written as users write them."""
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
def axpy(y, a, x):
    i = cuda.grid(1)
    if i < y.size:
        y[i] = a * x[i] + y[i]


TPB = 8


@cuda.jit
def matmul(A, B, C):
    sA = cuda.shared.array(shape=(TPB, TPB), dtype=np.float32)
    sB = cuda.shared.array(shape=(TPB, TPB), dtype=np.float32)
    x, y = cuda.grid(2)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    acc = np.float32(0.0)
    for step in range(A.shape[1] // TPB):
        sA[tx, ty] = A[x, step * TPB + ty]
        sB[tx, ty] = B[step * TPB + tx, y]
        cuda.syncthreads()
        for k in range(TPB):
            acc += sA[tx, k] * sB[k, ty]
        cuda.syncthreads()
    C[x, y] = acc


RED = 64


@cuda.jit
def reduce_sum(x, out):
    buf = cuda.shared.array(RED, dtype=np.float32)
    tid = cuda.threadIdx.x
    acc = np.float32(0.0)
    for i in range(cuda.grid(1), x.size, cuda.gridsize(1)):
        acc += x[i]
    buf[tid] = acc
    cuda.syncthreads()
    s = RED // 2
    while s > 0:
        if tid < s:
            buf[tid] += buf[tid + s]
        cuda.syncthreads()
        s //= 2
    if tid == 0:
        cuda.atomic.add(out, 0, buf[0])


@cuda.jit
def stencil(a, b):
    i, j = cuda.grid(2)
    if 0 < i < a.shape[0] - 1 and 0 < j < a.shape[1] - 1:
        b[i, j] = np.float32(0.25) * (a[i - 1, j] + a[i + 1, j] + a[i, j - 1] + a[i, j + 1])


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
