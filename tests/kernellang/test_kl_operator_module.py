"""numba-cuda programs ported unchanged: numba-cuda's test_operator.py calls the
``operator`` module's functions in kernels, often through a captured variable
(``op = operator.add`` ... ``a[i] = op(a[i], b[i])``).  cujit refused them: "'operator.add'
(builtin_function_or_method ...) cannot be called in a kernel".  The front end now writes such
calls as the operator's syntax, so both backends type and compute them as ``a + b``."""
import operator

import numpy as np
import pytest

import cujit as cuda


def _template(op):
    @cuda.jit
    def foo(a, b):
        i = 0
        a[i] = op(a[i], b[i])
    return foo


@pytest.mark.parametrize("op", [operator.add, operator.sub, operator.mul, operator.truediv,
                                operator.floordiv, operator.mod, operator.pow,
                                operator.iadd, operator.itruediv])
def test_captured_operator_function_as_in_numba_test_operator(op):
    a = np.array([7.5])
    b = np.array([2.0])
    res = a.copy()
    _template(op)[1, 1](res, b)
    np.testing.assert_equal(res, op(a.copy(), b))


def test_closures_of_one_code_object_keep_their_own_operator():
    # the closures share one parsed source: a rewrite for the first must not leak
    x = np.array([10.0])
    y = np.array([4.0])
    for op, want in ((operator.add, 14.0), (operator.sub, 6.0), (operator.mul, 40.0)):
        res = x.copy()
        _template(op)[1, 1](res, y)
        assert res[0] == want, op


@cuda.jit
def _module_calls(out, a, b):
    i = cuda.grid(1)
    if i < a.size:
        out[0, i] = operator.lshift(a[i], 2) + operator.rshift(a[i], 1)
        out[1, i] = operator.and_(a[i], b[i]) + operator.or_(a[i], b[i]) * 10
        out[2, i] = operator.xor(a[i], b[i])
        out[3, i] = operator.lt(a[i], b[i]) + 2 * operator.ge(a[i], b[i]) + \
            4 * operator.eq(a[i], b[i]) + 8 * operator.ne(a[i], b[i])
        out[4, i] = operator.neg(a[i]) + operator.invert(b[i]) + operator.pos(a[i])
        out[5, i] = operator.not_(a[i] > 3) + operator.getitem(b, i)


def test_operator_module_calls_compute_like_numpy():
    a = np.arange(1, 9, dtype=np.int64)
    b = np.array([8, 2, 3, 1, 5, 6, 9, 0], dtype=np.int64)
    out = np.zeros((6, 8), np.int64)
    _module_calls[1, 8](out, a, b)
    assert out[0].tolist() == ((a << 2) + (a >> 1)).tolist()
    assert out[1].tolist() == ((a & b) + (a | b) * 10).tolist()
    assert out[2].tolist() == (a ^ b).tolist()
    assert out[3].tolist() == ((a < b) + 2 * (a >= b) + 4 * (a == b) + 8 * (a != b)).tolist()
    assert out[4].tolist() == (-a + ~b + a).tolist()
    assert out[5].tolist() == ((~(a > 3)).astype(np.int64) + b).tolist()


@cuda.jit
def _shadowed(out):
    add = 5             # a local variable named like the operator is not the operator
    out[0] = add


def test_local_name_is_not_taken_for_an_operator():
    add = operator.add      # noqa: F841 (a global of that name would not matter either)
    out = np.zeros(1, np.int64)
    _shadowed[1, 1](out)
    assert out[0] == 5


@cuda.jit
def _wrong_arity(out, a):
    out[0] = operator.add(a[0])


def test_operator_call_with_wrong_argument_count_is_a_typing_error():
    out = np.zeros(1)
    with pytest.raises(cuda.TypingError, match="operator.add"):
        _wrong_arity[1, 1](out, np.ones(1))
    assert out[0] == 0


@pytest.mark.compile
def test_operator_calls_compile_to_ptx():
    from cujit.nvvm import libnvvm as nvvm
    if not nvvm.nvvm_available():
        pytest.skip("libNVVM is not installed")
    ptx, _ = cuda.compile_ptx(_module_calls.py_func, "void(int64[:, ::1], int64[::1], int64[::1])")
    assert ".entry" in ptx and "shl.b64" in ptx
