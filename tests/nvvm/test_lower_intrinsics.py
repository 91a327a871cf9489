"""Issue 14 intrinsics and functions as values: match_any/all_sync, selp, mulhi, nanosleep,
bit operations with numba's result types, vote predicate typing, and device functions taking
atomics / math functions / casts / device functions as arguments.  Unmarked tests run on the
active backend (simulator here, the H200 for the integrator)."""
import math

import numpy as np
import pytest

import cujit as cuda
from cujit import int8, int16, int32, int64, uint32, uint64
from cujit import types as T
from cujit.frontend.errors import TypingError
from cujit.nvvm.lowering import compile_to_llvm


def _ptx(fn, argtypes):
    from cujit.nvvm.libnvvm import compile_ptx
    return compile_ptx(compile_to_llvm(fn, argtypes).llvm_ir)


# ---- match_any_sync / match_all_sync ----------------------------------------------------------
def k_match(out, f):
    i = cuda.threadIdx.x
    v = int32(i // 4)
    out[i, 0] = cuda.match_any_sync(0xFFFFFFFF, v)
    m, same = cuda.match_all_sync(0xFFFFFFFF, v)
    out[i, 1] = m
    out[i, 2] = same
    m2, same2 = cuda.match_all_sync(0xFFFFFFFF, f[0])
    out[i, 3] = m2
    out[i, 4] = same2
    out[i, 5] = cuda.match_any_sync(0xFFFFFFFF, f[i % 2])


def test_match_sync_values():
    out = np.zeros((32, 6), np.int64)
    f = np.array([1.5, -0.0])
    cuda.jit(k_match)[1, 32](out, f)
    for i in range(32):
        assert out[i, 0] == 0xF << (4 * (i // 4))
    assert (out[:, 1] == 0).all() and (out[:, 2] == 0).all()
    assert (out[:, 3] == 0xFFFFFFFF).all() and (out[:, 4] == 1).all()
    assert (out[0::2, 5] == 0x55555555).all() and (out[1::2, 5] == 0xAAAAAAAA).all()


@pytest.mark.compile
def test_match_sync_ptx():
    ptx = _ptx(k_match, (T.int64[:, ::1], T.float64[::1]))
    assert "match.any.sync.b32" in ptx and "match.all.sync.b32" in ptx
    assert "match.all.sync.b64" in ptx and "match.any.sync.b64" in ptx


def k_match_bool(out):
    out[0] = cuda.match_any_sync(0xFFFFFFFF, True)


def test_match_sync_rejects_bool_value():
    with pytest.raises(TypingError, match="match_any_sync\\(\\) supports"):
        compile_to_llvm(k_match_bool, (T.int64[::1],))


# ---- selp, mulhi, nanosleep -----------------------------------------------------------------
def k_scalar_ops(out, a, b):
    i = cuda.threadIdx.x
    out[i, 0] = cuda.selp(i > 1, int64(i), int64(-1))
    out[i, 1] = cuda.mulhi(a[0], b[0])
    out[i, 2] = cuda.mulhi(int32(-2), int32(3))
    out[i, 3] = cuda.mulhi(uint32(0xFFFFFFFF), uint32(0xFFFFFFFF))
    out[i, 4] = cuda.selp(a[0] > 0, 2.5, 0.5) * 2
    cuda.nanosleep(100)


def test_selp_mulhi_nanosleep_values():
    out = np.zeros((4, 5), np.int64)
    a = np.array([2 ** 40 + 3], np.int64)
    b = np.array([-(2 ** 40)], np.int64)
    cuda.jit(k_scalar_ops)[1, 4](out, a, b)
    assert out[:, 0].tolist() == [-1, -1, 2, 3]
    assert (out[:, 1] == ((2 ** 40 + 3) * -(2 ** 40)) >> 64).all()
    assert (out[:, 2] == -1).all()
    assert (out[:, 3] == 0xFFFFFFFE).all()
    assert (out[:, 4] == 5).all()


@pytest.mark.compile
def test_selp_mulhi_nanosleep_ptx():
    ptx = _ptx(k_scalar_ops, (T.int64[:, ::1], T.int64[::1], T.int64[::1]))
    for ins in ("mul.hi.s64", "mul.hi.s32", "mul.hi.u32", "nanosleep.u32", "selp"):
        assert ins in ptx, ins


def k_selp_mixed(out, x):
    out[0] = cuda.selp(x > 0, x, 1.0)


def k_mulhi_float(out, x):
    out[0] = cuda.mulhi(x, 2)


def k_nanosleep_float(out, x):
    cuda.nanosleep(x)


@pytest.mark.parametrize("fn,msg", [(k_selp_mixed, "selp\\(\\) needs two values of the same"),
                                    (k_mulhi_float, "mulhi\\(\\) takes integers"),
                                    (k_nanosleep_float, "nanosleep\\(\\) takes an integer")])
def test_scalar_intrinsic_typing_errors(fn, msg):
    with pytest.raises(TypingError, match=msg):
        compile_to_llvm(fn, (T.float32[::1], T.float32))


# ---- bit operations: every width, numba's result types --------------------------------------
def k_bits(out):
    out[0] = cuda.clz(int32(0xFFFFFFFF))
    out[1] = cuda.clz(0xFFFFFFFF)              # an int64 literal
    out[2] = cuda.clz(int8(1))
    out[3] = cuda.popc(int16(-1))
    out[4] = cuda.popc(uint64(0xFFFFFFFFFFFFFFFF))
    out[5] = cuda.brev(int8(-1))              # converted to uint32 first
    out[6] = cuda.brev(uint32(1))
    out[7] = cuda.brev(uint64(1)) >> 32
    out[8] = cuda.ffs(int8(8))
    out[9] = cuda.ffs(int64(1) << 40)
    out[10] = cuda.ffs(int32(0))


def test_bit_operations_values():
    out = np.zeros(11, np.int64)
    cuda.jit(k_bits)[1, 1](out)
    assert out.tolist() == [0, 32, 7, 16, 64, 0xFFFFFFFF, 2 ** 31, 2 ** 31, 4, 41, 0]


def test_bit_operation_result_types():
    from cujit.frontend.typeinfer import infer

    def k(a, b, c, d):
        w = cuda.brev(a)
        x = cuda.brev(b)
        y = cuda.ffs(c)
        z = cuda.clz(d)
        p = cuda.popc(a)
    tf = infer(k, (T.int16, T.int64, T.int64, T.int8))
    vt = tf.vartypes
    assert (vt["w"], vt["x"], vt["y"], vt["z"], vt["p"]) == (
        T.uint32, T.uint64, T.uint32, T.int8, T.int16)


# ---- vote predicates ------------------------------------------------------------------------
def k_vote_float(out, x):
    out[0] = cuda.all_sync(0xFFFFFFFF, x)


def k_vote_ok(out, x):
    out[0] = cuda.ballot_sync(0xFFFFFFFF, x > 0) + cuda.any_sync(0xFFFFFFFF, int32(1))


@pytest.mark.parametrize("name", ["all_sync", "any_sync", "eq_sync", "ballot_sync"])
def test_vote_float_predicate_is_typing_error(name):
    src = {"all_sync": cuda.all_sync, "any_sync": cuda.any_sync, "eq_sync": cuda.eq_sync,
           "ballot_sync": cuda.ballot_sync}[name]

    def k(out, x):
        out[0] = src(0xFFFFFFFF, x)
    with pytest.raises(TypingError, match=f"^Predicate must be an integer or boolean. Got "
                       f"float32: {name}\\(\\) predicate must be a boolean or an integer"):
        compile_to_llvm(k, (T.int64[::1], T.float32))
    compile_to_llvm(k_vote_ok, (T.int64[::1], T.float32))


@pytest.mark.parametrize("mask", [T.float32, T.float64, T.boolean])
def test_vote_mask_that_is_not_an_integer_is_typing_error(mask):
    def k(out, m):
        out[0] = cuda.all_sync(m, 1)
    with pytest.raises(TypingError, match=f"^Mask type must be an integer. Got {mask}: the "
                       "mask of all_sync\\(\\) is an integer"):
        compile_to_llvm(k, (T.int64[::1], mask))
    compile_to_llvm(k, (T.int64[::1], T.uint64))


def test_vote_float_predicate_rejected_at_launch():
    with pytest.raises(TypingError, match="predicate"):
        cuda.jit(k_vote_float)[1, 32](np.zeros(1, np.int64), np.float32(1))


# ---- functions as values --------------------------------------------------------------------
@cuda.jit(device=True)
def apply_atomic(op, ary, idx, val):
    return op(ary, idx, val)


@cuda.jit(device=True)
def twice(f, x):
    return f(f(x))


@cuda.jit(device=True)
def inc(x):
    return x + 1


def k_funcs(a, r):
    i = cuda.threadIdx.x
    apply_atomic(cuda.atomic.add, a, 0, 1)
    apply_atomic(cuda.atomic.max, a, 1, i)
    apply_atomic(cuda.atomic.inc, a, 2, 2)
    apply_atomic(cuda.atomic.and_, a, 3, 6)
    apply_atomic(cuda.atomic.exch, a, 4, 9)
    apply_atomic(cuda.atomic.dec, a, 5, 100)
    r[i] = twice(math.sqrt, 16.0) + twice(inc, i) + twice(int32, 2.7)


def test_functions_passed_to_device_functions():
    a = np.array([0, 0, 0, 7, 0, 50], np.uint32)
    r = np.zeros(8)
    cuda.jit(k_funcs)[1, 8](a, r)
    # inc: 1,2,0,1,2,0,1,2 (wraps to 0 from 2); dec: 50 -> 42
    assert a.tolist() == [8, 7, 2, 6, 9, 42]
    assert r.tolist() == [6.0 + i for i in range(8)]


@pytest.mark.compile
def test_functions_as_values_are_specialised_per_call_site():
    lf = compile_to_llvm(k_funcs, (T.uint32[::1], T.float64[::1]))
    # one device function per distinct function argument: 6 atomics, 3 for twice, inc
    assert lf.llvm_ir.count("define internal") >= 10
    from cujit.nvvm.libnvvm import compile_ptx
    ptx = compile_ptx(lf.llvm_ir)
    for ins in ("add.u32", "max.u32", "inc.u32", "and.b32", "exch.b32", "dec.u32"):
        assert ins in ptx, ins


def k_pass_module(a):
    apply_atomic(np, a, 0, 1)


def test_passing_a_non_function_object_is_typing_error():
    with pytest.raises(TypingError, match="cannot pass"):
        compile_to_llvm(k_pass_module, (T.uint32[::1],))


def k_match_float_mask(out, x):
    out[0] = cuda.match_any_sync(x, 1)


def k_selp_kw(out, x):
    out[0] = cuda.selp(x > 0, x, x, extra=1)


@pytest.mark.parametrize("fn,msg", [(k_match_float_mask, "mask must be an integer"),
                                    (k_selp_kw, "takes no keyword arguments")])
def test_more_intrinsic_typing_errors(fn, msg):
    with pytest.raises(TypingError, match=msg):
        compile_to_llvm(fn, (T.float32[::1], T.float32))


def test_simulator_intrinsic_argument_errors(monkeypatch):
    # the simulator's versions check their arguments too (for code the typer never sees,
    # e.g. called from a simulated device function with Python values)
    from cujit import kernelapi
    monkeypatch.setattr(kernelapi._state, "current", object())
    with pytest.raises(TypeError, match="mask must be an integer"):
        kernelapi.match_any_sync(1.5, 1)
    with pytest.raises(TypeError, match="integer number"):
        kernelapi.nanosleep(1.5)
    with pytest.raises(TypeError, match="expected an integer"):
        kernelapi.mulhi(1.5, 2)
    assert kernelapi.mulhi(np.int32(-2), np.int32(3)) == -1
    assert kernelapi.mulhi(np.uint64(2 ** 63), np.uint64(4)) == 2
    assert kernelapi.mulhi(np.uint64(2 ** 63), 4) == -2        # a signed operand: int64 product


def test_kernel_api_extra_outside_a_kernel():
    for f, args in ((cuda.selp, (True, 1, 2)), (cuda.mulhi, (1, 2)), (cuda.nanosleep, (1,)),
                    (cuda.cg.this_grid, ())):
        with pytest.raises(RuntimeError, match="inside a kernel"):
            f(*args)
