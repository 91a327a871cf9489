"""Recursive device functions (numba-cuda's rules): self- and mutually recursive functions
are typed when a declared signature or a return that does not come from the recursion gives
the return type; runaway recursion and a return type that keeps growing are TypingErrors."""
import re

import numpy as np
import pytest

import cujit as cuda
from cujit.frontend.errors import TypingError
from cujit.frontend.typecheck import typecheck


@cuda.jit("i8(i8)", device=True)
def fib_declared(n):
    if n < 2:
        return n
    return fib_declared(n - 1) + fib_declared(n - 2)


@cuda.jit(device=True)
def fib_inferred(n):
    if n < 2:
        return n
    return fib_inferred(n - 1) + fib_inferred(n - 2)


@cuda.jit(device=True)
def is_even(n):
    if n == 0:
        return True
    return is_odd(n - 1)


@cuda.jit(device=True)
def is_odd(n):
    if n == 0:
        return False
    return is_even(n - 1)


@cuda.jit(device=True)
def ping(n):
    # the value of the mutual call goes through variables, typed once pong's is known
    if n <= 0:
        return 0
    v = pong(n - 1)
    w = v + 1
    return w


@cuda.jit(device=True)
def pong(n):
    if n <= 0:
        return 100
    t = ping(n - 1)
    u = t * 2
    return u


@cuda.jit(device=True)
def halve_until_small(x, step):
    # the recursive call has other argument types (int64, float64) than the first
    if x > 1 and step > 0:
        return x + halve_until_small(x - step, step)
    return step


@cuda.jit(device=True)
def countdown(arr, n):
    if n <= 0:
        return
    arr[n - 1] = n
    countdown(arr, n - 1)


@cuda.jit(device=True)
def widening(n):
    # the returns give int64 and float64: the recursion sees their unification
    if n <= 0:
        return 0.5
    if n == 1:
        return 1
    return widening(n - 1) + 1


@cuda.jit(device=True)
def runaway(x):
    return runaway(x)


@cuda.jit(device=True)
def runaway_a(x):
    return runaway_b(x)


@cuda.jit(device=True)
def runaway_b(x):
    return runaway_a(x)


@cuda.jit(device=True)
def growing_tuple(n):
    if n <= 0:
        return None
    return (n, growing_tuple(n - 1))


@cuda.jit(device=True, inline="always")
def inlined_recursive(n):
    if n <= 0:
        return 0
    return inlined_recursive(n - 1) + 1


def recursion_kernel(r, x, f):
    r[0] = fib_declared(x[0])
    r[1] = fib_inferred(x[0])
    r[2] = is_even(x[0])
    r[3] = is_odd(x[0])
    r[4] = is_even(x[0] + 1)
    # 10 levels at most: the GPU's per-thread stack (1 KiB by default) bounds the depth
    f[0] = halve_until_small(x[0], 1.0)
    f[1] = widening(x[0])


def _expected(x):
    def fib(n):
        return n if n < 2 else fib(n - 1) + fib(n - 2)

    def halve(v, step):
        return v + halve(v - step, step) if v > 1 and step > 0 else step

    def widen(n):
        return 0.5 if n <= 0 else 1 if n == 1 else widen(n - 1) + 1
    return ([fib(x), fib(x), x % 2 == 0, x % 2 == 1, x % 2 == 1],
            [halve(x, 1.0), widen(x)])


def test_recursive_functions_give_python_results():
    k = cuda.jit(recursion_kernel)
    x = np.array([10], np.int64)
    r = np.zeros(5, np.int64)
    f = np.zeros(2, np.float64)
    k[1, 1](r, x, f)
    ints, floats = _expected(10)
    assert r.tolist() == [int(v) for v in ints]
    np.testing.assert_allclose(f, floats)


def test_recursive_return_types():
    tf = typecheck(recursion_kernel, (cuda.int64[:], cuda.int64[:], cuda.float64[:]))
    by_name = {}
    for f in tf.all_functions():
        by_name.setdefault(f.fsrc.name, []).append(f)
    assert [f.return_type for f in by_name["fib_declared"]] == [cuda.int64]
    assert [f.return_type for f in by_name["fib_inferred"]] == [cuda.int64]
    assert {f.return_type for f in by_name["is_even"]} == {cuda.boolean}
    assert {f.return_type for f in by_name["is_odd"]} == {cuda.boolean}
    assert {f.return_type for f in by_name["widening"]} == {cuda.float64}
    # halve_until_small(int64, float64) calls halve_until_small(float64, float64)
    assert sorted(str(f.argtypes) for f in by_name["halve_until_small"]) == \
        sorted([str((cuda.int64, cuda.float64)), str((cuda.float64, cuda.float64))])
    assert all(f.recursive for f in by_name["fib_declared"] + by_name["fib_inferred"])


def test_mutual_recursion_through_variables():
    @cuda.jit
    def k(r, x):
        r[0] = ping(x[0])
        r[1] = pong(x[0])

    def py_ping(n):
        return 0 if n <= 0 else py_pong(n - 1) + 1

    def py_pong(n):
        return 100 if n <= 0 else py_ping(n - 1) * 2
    for n in (0, 1, 5, 8):
        r = np.zeros(2, np.int64)
        k[1, 1](r, np.array([n], np.int64))
        assert r.tolist() == [py_ping(n), py_pong(n)]


def test_recursive_function_without_a_value_runs():
    @cuda.jit
    def fill(arr):
        countdown(arr, arr.shape[0])

    arr = np.zeros(6, np.int32)
    fill[1, 1](arr)
    assert arr.tolist() == [1, 2, 3, 4, 5, 6]


def _call(f):
    def kern(r):
        r[0] = f(3)
    return kern


@pytest.mark.parametrize("func, msg", [
    (runaway, "cannot type infer runaway recursion"),
    (runaway_a, "cannot type infer runaway recursion"),
    (growing_tuple, "Return type of recursive function does not converge"),
    (inlined_recursive, "is recursive and cannot be inlined"),
])
def test_recursion_typing_errors(func, msg):
    kern = _call(func)
    kern.__globals__[func.__name__] = func
    with pytest.raises(TypingError, match=msg):
        typecheck(kern, (cuda.int64[:],))


@pytest.mark.compile
def test_recursive_functions_compile_to_calls_of_themselves():
    from cujit.nvvm.lowering import compile_to_llvm
    llvm = compile_to_llvm(recursion_kernel,
                           (cuda.int64[:], cuda.int64[:], cuda.float64[:])).llvm_ir
    m = re.search(r'define internal i64 @"(_cujit_dev_12fib_declared\w*)"', llvm)
    body = llvm[m.end():].split("\n}\n")[0]
    assert f'call i64 @"{m.group(1)}"' in body
    ptx, _ = cuda.compile_ptx(recursion_kernel,
                              "void(int64[:], int64[:], float64[:])", cc=(9, 0))
    assert "call.uni" in ptx


@pytest.mark.gpu
def test_recursive_functions_on_the_gpu():
    k = cuda.jit(recursion_kernel)
    for x in (0, 1, 7, 12):
        r = np.zeros(5, np.int64)
        f = np.zeros(2, np.float64)
        k[1, 1](r, np.array([x], np.int64), f)
        ints, floats = _expected(x)
        assert r.tolist() == [int(v) for v in ints]
        np.testing.assert_allclose(f, floats)
