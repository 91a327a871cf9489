"""Closures that escape (passed to a kernel or device function) or that have defaults,
``*args`` or keyword calls: each is compiled as a device function of its own, its reads of
the enclosing function's constants baked in, as numba-cuda's MakeFunctionToJitFunction pass
does.  Values on the active backend (the simulator here), the compiled IR run on the host
(MCJIT), and the errors."""
import numpy as np
import pytest

import cujit as cuda
from cujit import types as T
from cujit.frontend.errors import TypingError
from cujit.nvvm.lowering import compile_to_llvm

OFFSET = 100


@cuda.jit
def consumer(func, *args):
    return func(*args)


@cuda.jit(device=True)
def consumer2(func1, func2):
    return func2(func1)


def k_escapes(r, x):
    y = 10

    def ten():
        return 10

    def add_consts(z):
        return y + z + OFFSET       # a constant local and a global

    def call_it(f):
        return f()

    def with_defaults(a, b, c=3, d=4):
        k = 5
        return a + b + c * d + k + y

    def spread(*z):
        s = 0
        for v in z:
            s += v
        return s + len(z)

    def count(*z):
        return len(z)

    r[0] = consumer(ten)
    r[1] = consumer(add_consts, x[0])
    r[2] = consumer2(ten, call_it)
    r[3] = with_defaults(1, 2)
    r[4] = with_defaults(1, 2, d=10)
    r[5] = consumer(with_defaults, 1, 2, 0)
    r[6] = spread(1, 2, 3)
    r[7] = count()
    t = (4, 5)
    r[8] = with_defaults(*t)


def _expected(x0):
    return [10, 10 + x0 + OFFSET, 10, 1 + 2 + 12 + 5 + 10, 1 + 2 + 30 + 5 + 10,
            1 + 2 + 0 + 5 + 10, 6 + 3, 0, 4 + 5 + 12 + 5 + 10]


SIG = (T.int64[::1], T.int64[::1])


def test_escaping_closures_give_their_values():
    r = np.zeros(9, np.int64)
    cuda.jit(k_escapes)[1, 1](r, np.array([7]))
    assert r.tolist() == _expected(7)


@pytest.mark.compile
def test_compiled_escaping_closures_match_python():
    from test_lower_cpu import run
    r = np.zeros(9, np.int64)
    run(k_escapes, SIG, r, np.array([7]))
    assert r.tolist() == _expected(7)
    from cujit.nvvm.libnvvm import compile_ptx
    assert ".entry" in compile_ptx(compile_to_llvm(k_escapes, SIG).llvm_ir)


def test_closure_escaping_from_a_called_kernel():
    """numba-cuda's pattern: a kernel calls a jitted function that passes its closure on."""
    def impl(x):
        y = 10

        def callinner(z):
            return y + z + OFFSET
        return consumer(callinner, x)
    jitted = cuda.jit(impl)

    @cuda.jit
    def kernel(out, v):
        out[0] = jitted(v)
    out = np.zeros(1, np.int64)
    kernel[1, 1](out, 5)
    assert out[0] == 115


def k_non_constant(r, x):
    s = x[0]

    def f(z):
        return z + s
    r[0] = consumer(f, 1)


def k_passed_on_by_another(r, x):
    def f(z):
        return z

    def g(h):
        return consumer(h, 1)       # h is g's parameter: g did not define it
    r[0] = g(f)


@pytest.mark.parametrize("fn, msg", [
    (k_non_constant, "Cannot capture the non-constant value associated with variable 's'"),
    (k_passed_on_by_another, "can be passed on only by the function that defines it"),
])
def test_escaping_closure_errors(fn, msg):
    with pytest.raises(TypingError, match=msg):
        compile_to_llvm(fn, SIG)


def k_multiply_defined(r, x):
    c = x[0]
    if c:
        y = 3
    else:
        y = 6

    def inner(z):
        return z + y
    r[0] = consumer(inner, 1)


def test_a_variable_assigned_twice_cannot_be_captured():
    with pytest.raises(TypingError, match="Cannot capture a constant value for variable 'y' "
                                          "as there are multiple definitions present"):
        compile_to_llvm(k_multiply_defined, SIG)


@cuda.jit(device=True)
def pick(*args):
    # the length of *args is known from its type: the branch not taken is pruned
    if len(args) == 1:
        return args[0]
    return args[0] + args[1]


def k_star_length(r, x):
    y = 10

    def callinner(*z):
        if len(z) == 1:
            tmp = z[0]
        elif len(z) == 2:
            tmp = z[0] + z[1]
        return y + tmp

    r[0] = consumer(callinner, x[0]) + consumer(callinner, x[0], x[0])
    r[1] = pick(x[0]) * 100 + pick(x[0], 1)


def test_length_of_star_args_decides_branches():
    r = np.zeros(2, np.int64)
    cuda.jit(k_star_length)[1, 1](r, np.array([5]))
    assert r.tolist() == [(10 + 5) + (10 + 10), 5 * 100 + 6]


@pytest.mark.compile
def test_compiled_length_of_star_args_decides_branches():
    from test_lower_cpu import run
    r = np.zeros(2, np.int64)
    run(k_star_length, SIG, r, np.array([5]))
    assert r.tolist() == [(10 + 5) + (10 + 10), 5 * 100 + 6]
