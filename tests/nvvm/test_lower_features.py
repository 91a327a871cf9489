"""Each kernel-language feature lowers to NVVM IR that libNVVM 13 compiles to PTX, with the
PTX instructions the feature needs."""
import math
import re

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import cujit
import cujit as cuda
from cujit import types as T
from cujit.nvvm.lowering import compile_to_llvm
from cujit.kernelapi import laneid as laneid_stub

pytestmark = pytest.mark.compile


def ptx_of(fn, argtypes):
    from cujit.nvvm.libnvvm import compile_ptx
    lf = compile_to_llvm(fn, argtypes)
    return lf, compile_ptx(lf.llvm_ir)


def run_like_python(fn, out, *args, launch=(1, 1)):
    """Launch ``fn`` as a kernel on the active backend and run it as plain Python on a copy
    of ``out``; return both results so a test can compare the kernel with Python."""
    ref = out.copy()
    cujit.jit(fn)[launch](out, *args)
    fn(ref, *args)
    return out, ref


def indexing(out):
    out[0] = cuda.threadIdx.x + cuda.threadIdx.y + cuda.threadIdx.z
    out[1] = cuda.blockIdx.x + cuda.blockIdx.y + cuda.blockIdx.z
    out[2] = cuda.blockDim.x + cuda.blockDim.y + cuda.blockDim.z
    out[3] = cuda.gridDim.x + cuda.gridDim.y + cuda.gridDim.z
    x, y = cuda.grid(2)
    out[4] = x + y
    a, b, c = cuda.gridsize(3)
    out[5] = a + b + c + cuda.gridsize(1)
    out[6] = cuda.laneid + cuda.warpsize + laneid_stub + cujit.laneid


def test_thread_indexing():
    lf, ptx = ptx_of(indexing, (T.int64[::1],))
    for reg in ("%tid.x", "%tid.y", "%tid.z", "%ctaid.x", "%ntid.y", "%nctaid.z", "%laneid"):
        assert reg in ptx


def barriers(out, p):
    cuda.syncthreads()
    out[0] = cuda.syncthreads_count(p > 0)
    out[1] = cuda.syncthreads_and(p)
    out[2] = cuda.syncthreads_or(p)
    cuda.syncwarp()
    cuda.syncwarp(0xFFFF)
    cuda.threadfence()
    cuda.threadfence_block()
    cuda.threadfence_system()


def test_barriers_and_fences():
    lf, ptx = ptx_of(barriers, (T.int32[::1], T.int32))
    assert "bar.sync" in ptx
    assert "bar.red.popc.u32" in ptx
    assert "bar.red.and.pred" in ptx and "bar.red.or.pred" in ptx
    assert "bar.warp.sync" in ptx
    assert "membar.gl" in ptx or "fence.sc.gpu" in ptx or "fence.acq_rel.gpu" in ptx
    assert "membar.cta" in ptx or "fence.acq_rel.cta" in ptx or "fence.sc.cta" in ptx
    assert "membar.sys" in ptx or "fence.sc.sys" in ptx or "fence.acq_rel.sys" in ptx


def atomics_int(a, u, i, v):
    r = cuda.atomic.add(a, i, v)
    r += cuda.atomic.sub(a, i, v)
    r += cuda.atomic.max(a, i, v)
    r += cuda.atomic.min(a, i, v)
    r += cuda.atomic.and_(a, i, v)
    r += cuda.atomic.or_(a, i, v)
    r += cuda.atomic.xor(a, i, v)
    r += cuda.atomic.exch(a, i, v)
    r += cuda.atomic.cas(a, i, v, 7)
    r += cuda.atomic.compare_and_swap(a, v, 3)
    cuda.atomic.inc(u, i, 10)
    cuda.atomic.dec(u, i, 10)
    cuda.atomic.max(u, i, 5)
    a[0] = r


def test_atomics_int():
    lf, ptx = ptx_of(atomics_int, (T.int32[::1], T.uint32[::1], T.int64, T.int32))
    for op in ("add", "max.s32", "min.s32", "and", "or", "xor", "exch", "cas", "inc", "dec",
               "max.u32"):
        assert re.search(rf"(atom|red)\.(global\.)?(relaxed\.gpu\.)?{op}", ptx), op


def atomics_float(a, d, b2, v):
    r = cuda.atomic.add(a, 0, v)
    r += cuda.atomic.sub(a, 1, v)
    r += cuda.atomic.max(a, 2, v)
    r += cuda.atomic.min(a, 3, v)
    r += cuda.atomic.nanmax(a, 3, v)
    r += cuda.atomic.exch(a, 4, v)
    cuda.atomic.add(d, 0, 1.5)
    cuda.atomic.add(b2, (1, 2), 1)
    a[5] = r


def test_atomics_float_and_2d():
    lf, ptx = ptx_of(atomics_float, (T.float32[::1], T.float64[:], T.int64[:, ::1],
                                     T.float32))
    assert re.search(r"atom(\.global)?(\.relaxed\.gpu)?\.add\.f32", ptx)
    assert re.search(r"atom(\.global)?(\.relaxed\.gpu)?\.add\.f64", ptx)
    assert "atom.global.cas.b32" in ptx or "atom.cas.b32" in ptx or "cas.b32" in ptx
    assert re.search(r"atom(\.global)?(\.relaxed\.gpu)?\.add\.u64", ptx)


def atomics_shared(out):
    s = cuda.shared.array(4, cuda.int32)
    s[0] = 0
    cuda.syncthreads()
    cuda.atomic.add(s, 0, 1)
    cuda.syncthreads()
    out[0] = s[0]


def test_atomic_on_shared_memory():
    lf, ptx = ptx_of(atomics_shared, (T.int32[::1],))
    assert "atom.shared.add" in ptx or "red.shared.add" in ptx


def warp(out, v, f, d):
    i = cuda.laneid
    m = cuda.activemask()
    a = cuda.shfl_sync(0xFFFFFFFF, v, 0)
    b = cuda.shfl_up_sync(m, f, 1)
    c = cuda.shfl_down_sync(m, d, 1)
    e = cuda.shfl_xor_sync(m, i, 1)
    out[0] = a + b + c + e
    out[1] = cuda.ballot_sync(m, v > 0)
    out[2] = cuda.all_sync(m, v) + cuda.any_sync(m, v) + cuda.eq_sync(m, v)
    out[3] = cuda.lanemask_lt() + cuda.popc(v) + cuda.brev(v) + cuda.clz(v) + cuda.ffs(v)
    out[4] = cuda.fma(f, f, f) + cuda.cbrt(d)


def test_warp_intrinsics():
    lf, ptx = ptx_of(warp, (T.float64[::1], T.int64, T.float32, T.float64))
    for op in ("shfl.sync.idx", "shfl.sync.up", "shfl.sync.down", "shfl.sync.bfly",
               "vote.sync.ballot", "vote.sync.all", "vote.sync.any", "vote.sync.uni",
               "activemask", "%lanemask_lt", "popc.b64", "brev.b64", "clz.b64"):
        assert op in ptx, op


def mathk(out, x, f, n):
    out[0] = math.sqrt(x) + math.sin(x) + math.cos(x) + math.exp(x) + math.log(x)
    out[1] = math.sqrt(f) + math.tanh(f) + math.atan2(f, f) + math.pow(f, 2.5)
    out[2] = math.floor(x) + math.ceil(f) + math.trunc(x) + math.fabs(f)
    out[3] = math.isnan(x) + math.isinf(f) + math.isfinite(x) + math.sqrt(n)
    out[4] = math.hypot(x, f) + math.copysign(x, f) + math.fmod(x, f) + math.erf(f)
    out[5] = math.pi + math.e + math.gamma(x) + math.lgamma(x) + math.log10(f) + math.log1p(x)
    out[6] = np.sqrt(f) + np.exp(x) + np.floor(f)
    out[7] = math.degrees(x) + math.radians(f) + math.expm1(x) + math.asinh(x)


def test_math_through_libdevice():
    lf, ptx = ptx_of(mathk, (T.float64[::1], T.float64, T.float32, T.int32))
    assert "sqrt.rn.f64" in ptx and "sqrt.rn.f32" in ptx
    assert ".extern" not in ptx.split(".entry")[0] or "__nv_" not in ptx   # all resolved
    assert "lg2.approx" in ptx or "ex2.approx" in ptx


def builtins_k(out, a, b, f, c):
    out[0] = min(a, b) + max(a, b, 3) + abs(a) + abs(f) + abs(c)
    out[1] = round(f) + round(f, 2) + int(f) + float(a) + bool(a)
    out[2] = np.float32(a) + np.int16(f) + cuda.float32(a) + cuda.uint8(b)
    out[3] = min(f, a) + max(f, 1.5)
    out[4] = pow(a, 3) + pow(f, 2) + a ** b + f ** a + f ** f + a ** 2


def test_builtins_and_casts():
    lf, ptx = ptx_of(builtins_k, (T.float64[::1], T.int64, T.int32, T.float32, T.complex64))
    assert "min.s64" in ptx and "max.s64" in ptx and "abs.s64" in ptx
    assert "cvt.rni.f32.f32" in ptx            # round() to nearest even
    assert "cvt.rzi.s16.f32" in ptx            # np.int16(f) truncates
    args = (np.int64(7), np.int32(2), np.float32(2.75), np.complex64(3 + 4j))
    got, want = run_like_python(builtins_k, np.zeros(5), *args)
    np.testing.assert_allclose(got, want, rtol=1e-6)
    assert got[0] == 2 + 7 + 7 + 2.75 + 5       # min, max(.., 3), abs(int/float/complex)


def pysem(out, a, b, f, g):
    out[0] = a // b
    out[1] = a % b
    out[2] = f // g
    out[3] = f % g
    out[4] = a / b
    out[5] = -a // 2 + (-a) % 3
    out[6] = (a << 2) + (a >> 1) + (a & b) + (a | b) + (a ^ b) + ~a
    out[7] = 1 < a <= b < 10
    out[8] = (a > 0 and b > 0) or not (f > g)
    out[9] = a if f > g else b


def test_python_operator_semantics():
    lf, ptx = ptx_of(pysem, (T.float64[::1], T.int64, T.int64, T.float64, T.float64))
    assert "div.s64" in ptx and "cvt.rmi.f64.f64" in ptx    # floor division


def loops(out, n, step):
    t = 0
    for i in range(n):
        t += i
    for i in range(n, 0, -1):
        t += i
    for i in range(0, n, step):
        t -= i
    for i in range(2, n, 3):
        if i == 5:
            continue
        if i > 50:
            break
        t += 1
    else:
        t += 100
    k = 0
    while True:
        k += 1
        if k >= n:
            break
    while k > 0:
        k -= 2
    else:
        t += 1
    out[0] = t + k
    if n < 0:
        return
    out[1] = i


def test_loops_and_control_flow():
    lf, ptx = ptx_of(loops, (T.int64[::1], T.int32, T.int64))
    assert lf.param_types == ["i64*", "i64", "i64", "i32", "i64"]
    assert "bra.uni" in ptx
    got, want = run_like_python(loops, np.zeros(2, np.int64), np.int32(20), np.int64(3))
    assert got.tolist() == want.tolist() == [443, 17]
    # n <= 0: every loop body is skipped, the for-else runs, the early return leaves out[1]
    got, want = run_like_python(loops, np.full(2, 9, np.int64), np.int32(-1), np.int64(1))
    assert got.tolist() == want.tolist()


def layouts(c, f, a, a3, out):
    out[0] = c[1, 2] + f[1, 2] + a[1, 2] + a3[1, 2, 3]
    out[1] = c[-1, -1] + f[-1, 0] + a[0, -2]
    out[2] = c.shape[0] + f.shape[1] + a.strides[0] + a3.ndim + a3.size
    row = c[1]
    col = f[:, 1]
    out[3] = row[0] + col[0] + len(row) + c[1:, ::2][0, 1] + a[::-1, 1:3][0, 0]
    t = c.T
    out[4] = t[2, 1]


def test_layouts_and_views():
    lf, ptx = ptx_of(layouts, (T.float32[:, ::1], T.float32[::1, :], T.float32[:, :],
                               T.float32[:, :, :], T.float64[::1]))
    assert lf.param_types.count("i64") == 2 * 2 * 3 + 2 * 3 + 2 * 1


def fill_k(a, b, v):
    a[:] = v
    b[1:, :2] = 0


def test_slice_fill():
    lf, ptx = ptx_of(fill_k, (T.float32[::1], T.int32[:, :], T.float32))
    assert "st.global.f32" in ptx and "st.global.u32" in ptx
    a, b = np.ones(5, np.float32), np.ones((3, 3), np.int32)
    cujit.jit(fill_k)[1, 1](a, b, np.float32(2.5))
    assert a.tolist() == [2.5] * 5
    assert b.tolist() == [[1, 1, 1], [0, 0, 1], [0, 0, 1]]   # only b[1:, :2]


class _Dev:
    """A stand-in for a device-function dispatcher (``_cujit_device_function``)."""
    _cujit_device_function = True

    def __init__(self, f):
        self.py_func = f


def _add3(a, b):
    c = a + b
    return c + 3


add3 = _Dev(_add3)


def _first(arr):
    return arr[0]


first = _Dev(_first)


def _sign(x):
    if x < 0:
        return -1
    return 1


sign = _Dev(_sign)


def devcall(out, x):
    out[0] = add3(out[1], 2) + first(x) + sign(out[2])
    out[3] = add3(1.5, 2)


def test_device_functions():
    lf, ptx = ptx_of(devcall, (T.float64[::1], T.float32[::1]))
    assert ptx.count(".entry") == 1


def tuples(out, t):
    p = (1, 2.5)
    a, b = p
    q = t + (4,)
    out[0] = a + b + q[2] + t[0] + len(q)
    s = 0
    for v in t:
        s += v
    out[1] = s + max(t) + t[out.size % 2]


def test_tuples():
    lf, ptx = ptx_of(tuples, (T.float64[::1], T.UniTuple(T.int64, 2)))
    assert lf.param_types == ["double*", "i64", "i64", "i64", "i64"]


def complex_k(out, z, w, c):
    r = z * w + z / w - z + c
    out[0] = r
    out[1] = r.real + r.imag + abs(r)
    out[2] = r.conjugate()
    out[3] = complex(1.0, 2.0) + z


def test_complex():
    lf, ptx = ptx_of(complex_k, (T.complex128[::1], T.complex128, T.complex64, T.float32))
    assert lf.param_types[3:7] == ["double", "double", "float", "float"]


def half_k(out, h):
    out[0] = h + h * np.float16(2)
    out[1] = math.sqrt(h)


def test_float16():
    lf, ptx = ptx_of(half_k, (T.float16[::1], T.float16))
    assert lf.param_types[-1] == "half"
    assert "add.f16" in ptx and "st.global.b16" in ptx
    got, want = run_like_python(half_k, np.zeros(2, np.float16), np.float16(1.5))
    assert got.dtype == np.float16
    assert got.tolist() == want.tolist()
    assert got[0] == 4.5


def bools(out, flags, b):
    flags[0] = b and flags[1]
    out[0] = flags[2] + b


def test_bools_are_bytes():
    lf, ptx = ptx_of(bools, (T.int64[::1], T.boolean[::1], T.boolean))
    assert lf.param_types[-1] == "i8"
    assert "st.global.u8" in ptx


def printing(x, f, b):
    print("x is", x, f, b, 1.5)
    print()


def test_print_uses_vprintf():
    lf, ptx = ptx_of(printing, (T.int32, T.float32, T.boolean))
    assert "vprintf" in ptx


SCALE = 2.5
COUNT = 7
TABLE = np.arange(4, dtype=np.float32)


def globals_k(out):
    out[0] = SCALE * COUNT + TABLE[out.size % 4]


def test_module_constants():
    lf, ptx = ptx_of(globals_k, (T.float64[::1],))
    assert lf.const_bytes == 16 and ".const" in ptx


rec = np.dtype([("x", np.float32), ("n", np.int64), ("v", np.float64, (2,))])


def records(r, arr, out):
    out[0] = r.x + r.n + r.v[1]
    arr[1].x = 5
    arr[0]["n"] = 3
    out[1] = arr[1].v[0]


def test_records():
    lf, ptx = ptx_of(records, (T.Record(rec), T.Array(T.Record(rec), 1, "C"), T.float64[::1]))
    assert lf.param_types[0] == "i8*"


def early_return(out, n):
    i = cuda.grid(1)
    if i >= n:
        return
    out[i] = i


def test_early_return():
    lf, ptx = ptx_of(early_return, (T.int32[::1], T.int64))
    assert "setp.ge.s64" in ptx                 # the i >= n guard
    out = np.full(8, -1, np.int32)
    cujit.jit(early_return)[2, 4](out, np.int64(5))
    assert out.tolist() == [0, 1, 2, 3, 4, -1, -1, -1]


def test_device_function_ir():
    lf = compile_to_llvm(_add3, (T.int32, T.float64), kernel=False)
    assert lf.return_type is T.float64
    assert "nvvm.annotations" not in lf.llvm_ir
    from cujit.nvvm.libnvvm import compile_ptx
    assert ".func" in compile_ptx(lf.llvm_ir)


from kernels_common import TPB, matmul_tiled as tiled_matmul  # noqa: E402


def test_tiled_matmul_keeps_float32_and_unrolls():
    lf, ptx = ptx_of(tiled_matmul, (T.float32[:, ::1],) * 3)
    assert lf.static_shared_bytes == 2 * TPB * TPB * 4
    assert "fma.rn.f32" in ptx and "f64" not in ptx
    assert "ld.shared.f32" in ptx


# ---- every scalar type pair through every operator: typed → lowered → libNVVM --------------
def _op_add(out, a, b):
    out[0] = a + b


def _op_sub(out, a, b):
    out[0] = a - b


def _op_mul(out, a, b):
    out[0] = a * b


def _op_div(out, a, b):
    out[0] = a / b


def _op_floordiv(out, a, b):
    out[0] = a // b


def _op_mod(out, a, b):
    out[0] = a % b


def _op_pow(out, a, b):
    out[0] = a ** b


def _op_bits(out, a, b):
    out[0] = (a & b) | (a ^ b)


def _op_shift(out, a, b):
    out[0] = (a << b) + (a >> b)


def _op_cmp(out, a, b):
    out[0] = (a == b) + (a != b)


def _op_order(out, a, b):
    out[0] = (a < b) + (a >= b) + min(a, b) + max(a, b)


def _op_unary(out, a, b):
    out[0] = -a + abs(a) + (not b)


_OPS = [_op_add, _op_sub, _op_mul, _op_div, _op_floordiv, _op_mod, _op_pow, _op_bits,
        _op_shift, _op_cmp, _op_order, _op_unary]
_SCALARS = [T.boolean, T.int8, T.int16, T.int32, T.int64, T.uint8, T.uint32, T.uint64,
            T.float16, T.float32, T.float64, T.complex64, T.complex128]


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(_OPS), st.sampled_from(_SCALARS), st.sampled_from(_SCALARS))
def test_operators_on_all_scalar_types_compile_or_raise_typing_error(op, a, b):
    from cujit.frontend.errors import TypingError
    from cujit.nvvm.libnvvm import compile_ptx
    out = T.complex128[::1] if T.complex64 in (a, b) or T.complex128 in (a, b) \
        else T.float64[::1]
    try:
        lf = compile_to_llvm(op, (out, a, b))
    except TypingError as e:
        assert e.loc is not None      # an unsupported combination is a located error
        return
    assert ".entry" in compile_ptx(lf.llvm_ir)


def iter_k(a, b, out):
    for i, (x, y) in enumerate(zip(a, b)):
        out[i] = x * y
    for i, row in enumerate(out.reshape((2, -1))):
        row[0] = i


def test_enumerate_zip_compile():
    lf, ptx = ptx_of(iter_k, (T.float32[::1], T.float32[:], T.float32[::1]))
    assert "mul.f32" in ptx or "mul.rn.f32" in ptx
