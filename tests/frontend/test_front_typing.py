"""Type inference follows Numba's rules (numba/core/typing/builtins.py): integer arithmetic
at least 64 bits, NumPy promotion between ints and floats, int / int → float64, one type per
variable unified over all its assignments."""
import math

import numpy as np
import pytest
from hypothesis import given, strategies as st

import cujit as cuda
from cujit import types as T
from cujit.frontend import rules
from cujit.frontend.typeinfer import infer

INTS = [T.int8, T.int16, T.int32, T.int64, T.uint8, T.uint16, T.uint32, T.uint64]
FLOATS = [T.float16, T.float32, T.float64]


@given(st.sampled_from(INTS), st.sampled_from(INTS), st.sampled_from(["+", "-", "*", "//",
                                                                      "%", "&"]))
def test_integer_ops_are_at_least_64_bits(a, b, op):
    r = rules.binop_type(op, a, b)
    assert r.bitwidth == 64
    assert r.signed == (a.signed or b.signed)


@given(st.sampled_from(INTS), st.sampled_from(INTS), st.sampled_from(["<<", ">>"]))
def test_shifts_take_the_left_operands_signedness(a, b, op):
    # Numba's BitwiseShiftOperation: max(left, intp) or max(left, uintp)
    assert rules.binop_type(op, a, b) is (T.int64 if a.signed else T.uint64)


@given(st.sampled_from(INTS + FLOATS), st.sampled_from(FLOATS), st.booleans())
def test_int_float_mix_is_numpy_promotion(a, f, swap):
    x, y = (f, a) if swap else (a, f)
    assert rules.binop_type("*", x, y) is T.from_dtype(np.promote_types(a.dtype, f.dtype))


@given(st.sampled_from(INTS), st.sampled_from(INTS))
def test_true_division_of_ints_is_float64(a, b):
    assert rules.binop_type("/", a, b) is T.float64


def test_specific_rules():
    assert rules.binop_type("*", T.float32, T.int64) is T.float64
    assert rules.binop_type("*", T.float32, T.int16) is T.float32
    assert rules.binop_type("/", T.float32, T.float32) is T.float32
    assert rules.binop_type("**", T.float32, T.int64) is T.float32
    assert rules.binop_type("+", T.boolean, T.boolean) is T.int64
    assert rules.binop_type("&", T.boolean, T.boolean) is T.boolean
    assert rules.binop_type("+", T.complex64, T.float64) is T.complex128
    assert rules.binop_type("%", T.complex64, T.float64) is None
    assert rules.binop_type("+", T.float32[:], T.int32) is None
    assert rules.unary_type("-", T.int8) is T.int64
    assert rules.unary_type("-", T.float32) is T.float32
    assert rules.unary_type("not", T.float32) is T.boolean
    assert rules.unify(T.int32, T.int64) is T.int64
    assert rules.unify(T.int64, T.float32) is T.float64
    assert rules.unify(T.int64, T.uint64) is T.float64
    assert rules.unify(T.int32, T.uint32) is T.int64
    assert rules.unify(T.float32[::1], T.float32[:]) is T.float32[:]
    assert rules.unify(T.float32[::1], T.int32[::1]) is None


def typed(fn, *argtypes):
    return infer(fn, argtypes).vartypes


def k_accumulate(out, x):
    s = 0
    for i in range(x.size):
        s = s + x[i]
    out[0] = s


def k_indices(out):
    tid = cuda.threadIdx.x
    i = cuda.grid(1)
    j = tid + cuda.blockIdx.x * cuda.blockDim.x
    lane = cuda.laneid
    out[0] = tid + i + j + lane


def k_literals(out, f):
    a = 1
    b = 1.0
    c = f * 2
    d = f * np.float32(2)
    e = 7 / 2
    g = 7 // 2
    h = True
    out[0] = a + b + c + d + e + g + h


def k_range_types(out, n32, n64, u64):
    for i in range(n32):
        out[0] = i
    for j in range(n64):
        out[0] = j
    for k in range(u64):
        out[0] = k


def k_math_types(out, f, d, n):
    a = math.sqrt(f)
    b = math.sqrt(d)
    c = math.sqrt(n)
    e = math.floor(f)
    g = abs(n)
    h = min(f, n)
    out[0] = a + b + c + e + g + h


def test_variable_types():
    v = typed(k_accumulate, T.float64[::1], T.float32[::1])
    assert v["s"] is T.float64 and v["i"] is T.int64
    v = typed(k_indices, T.int64[::1])
    assert v["tid"] is T.int32 and v["i"] is T.int64 and v["j"] is T.int64
    assert v["lane"] is T.int32
    v = typed(k_literals, T.float64[::1], T.float32)
    assert (v["a"], v["b"], v["c"], v["d"], v["e"], v["g"], v["h"]) == (
        T.int64, T.float64, T.float64, T.float32, T.float64, T.int64, T.boolean)
    v = typed(k_range_types, T.int64[::1], T.int32, T.int64, T.uint64)
    assert (v["i"], v["j"], v["k"]) == (T.int32, T.int64, T.uint64)
    v = typed(k_math_types, T.float64[::1], T.float32, T.float64, T.int32)
    assert (v["a"], v["b"], v["c"], v["e"], v["g"], v["h"]) == (
        T.float32, T.float64, T.float64, T.int64, T.int32, T.float64)


def k_views(a2, out):
    r = a2[1]
    c = a2[:, 1]
    s = a2[1:3]
    t = a2[::2, 1:]
    sh = a2.shape
    sz = a2.size
    out[0] = r[0] + c[0] + s[0, 0] + t[0, 0] + sh[0] + sz


def test_view_types_and_layouts():
    v = typed(k_views, T.float32[:, ::1], T.float64[::1])
    assert v["r"] is T.float32[::1]
    assert v["c"] is T.float32[:]
    assert v["s"] is T.float32[:, ::1]
    assert v["t"] is T.float32[:, :]
    assert v["sh"] is T.UniTuple(T.int64, 2) and v["sz"] is T.int64


def k_shared_types(out):
    a = cuda.shared.array(4, np.float32)
    b = cuda.shared.array((2, 3), "int16")
    c = cuda.local.array(5, cuda.complex64)
    d = cuda.shared.array(0, float)
    out[0] = a[0] + b[0, 0] + d[0]


def test_memory_array_types():
    tf = infer(k_shared_types, (T.float64[::1],))
    v = tf.vartypes
    assert v["a"] is T.float32[::1] and v["b"] is T.int16[:, ::1]
    assert v["c"] is T.complex64[::1] and v["d"] is T.float64[::1]
    assert tf.shared_bytes == 16 + 12 and tf.uses_dynamic_shared


def k_shape_from_local(out):
    n = 4 * 2
    shape = (n, 3)
    a = cuda.shared.array(shape, np.float32)
    out[0] = a.size


def test_local_constant_shape():
    tf = infer(k_shape_from_local, (T.int64[::1],))
    assert tf.shared_bytes == 8 * 3 * 4


def k_reassigned_shape(out, m):
    n = 4
    if m > 0:
        n = 5
    a = cuda.local.array(n, np.float32)
    out[0] = a[0]


def test_reassigned_local_is_not_constant():
    from cujit.frontend.errors import TypingError
    with pytest.raises(TypingError, match="compile-time constant"):
        infer(k_reassigned_shape, (T.int64[::1], T.int64))
