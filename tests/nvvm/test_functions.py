"""Issue 14, functions: keyword arguments, defaults and ``*args`` of device functions, ``def``
nested in kernels closing over locals, ``in``/``not in`` on tuples, recursion errors.
Values on the active backend (simulator here, the H200 for the integrator), the compiled IR
run on the host through MCJIT (compile-only), and typing errors."""
import numpy as np
import pytest

import cujit as cuda
from cujit import types as T
from cujit.frontend.errors import TypingError
from cujit.nvvm.lowering import compile_to_llvm


@cuda.jit(device=True)
def axpy(a, x, y=1.0, scale=2):
    return a * x * scale + y


@cuda.jit(device=True)
def total(first, *rest):
    s = first
    for v in rest:
        s += v
    return s + len(rest)


@cuda.jit(device=True)
def count(*args):
    return len(args)


@cuda.jit(device=True)
def second(*args):
    return args[1]


def k_calls(r):
    r[0] = axpy(2.0, 3.0)
    r[1] = axpy(2.0, 3.0, scale=1)
    r[2] = axpy(y=0.5, x=1.0, a=4.0)
    r[3] = total(1.0, 2.0, 3.0)
    r[4] = count() + count(1, 2.0)
    r[5] = second(7, 8.5, 9)


CALLS = [13.0, 7.0, 8.5, 8.0, 2.0, 8.5]


def k_closures(r, a):
    i = cuda.threadIdx.x
    scale = a[0]

    def f(x):
        return x * scale + i

    def g(y):
        def h(z):
            return z - scale
        return h(y) * 2
    r[i, 0] = f(2.0)
    scale = 10.0
    r[i, 1] = f(1.0)
    r[i, 2] = g(5.0)
    r[i, 3] = 3 in (1, 2, i)
    r[i, 4] = i not in (0, 1)
    r[i, 5] = 2.0 in ()
    r[i, 6] = 1.5 in (1, 1.5)


def _closures_expected(i):
    return [6.0 + i, 10.0 + i, -10.0, float(i == 3), float(i not in (0, 1)), 0.0, 1.0]


# ---- values on the active backend -----------------------------------------------------------
def test_keyword_default_and_star_args_values():
    r = np.zeros(6)
    cuda.jit(k_calls)[1, 1](r)
    assert r.tolist() == CALLS


def test_closures_and_in_values():
    r = np.zeros((4, 7))
    cuda.jit(k_closures)[1, 4](r, np.array([3.0]))
    for i in range(4):
        assert r[i].tolist() == _closures_expected(i)


# ---- the compiled IR, run on the host -------------------------------------------------------
@pytest.mark.compile
def test_compiled_calls_match_python():
    from test_lower_cpu import run
    r = np.zeros(6)
    run(k_calls, (T.float64[::1],), r)
    assert r.tolist() == CALLS


@pytest.mark.compile
def test_compiled_closures_match_python():
    from test_lower_cpu import run
    r = np.zeros((1, 7))
    run(k_closures, (T.float64[:, ::1], T.float64[::1]), r, np.array([3.0]))
    assert r[0].tolist() == _closures_expected(0)


@pytest.mark.compile
def test_defaults_are_specialised_not_passed_as_objects():
    lf = compile_to_llvm(k_calls, (T.float64[::1],))
    assert "define internal" in lf.llvm_ir
    from cujit.nvvm.libnvvm import compile_ptx
    assert ".entry" in compile_ptx(lf.llvm_ir)


# ---- typing errors --------------------------------------------------------------------------
@cuda.jit(device=True)
def two(a, b):
    return a + b


@cuda.jit(device=True)
def with_obj_default(a, b=np):
    return a


def k_missing(r):
    r[0] = two(1)


def k_unknown_kw(r):
    r[0] = two(1, c=2)


def k_twice(r):
    r[0] = two(1, a=2)


def k_too_many(r):
    r[0] = two(1, 2, 3)


def k_bad_default(r):
    r[0] = with_obj_default(1)


def k_in_array(r):
    r[0] = 1 in r


def k_in_nested(r):
    r[0] = 1 in ((1, 2), (3, 4))


def k_closure_default(r):
    s = r[1]

    def f(x, y=1):
        return x + y + s        # compiled on its own: s must be a constant
    r[0] = f(1)


def k_closure_passed(r):
    s = r[1]

    def f(x):
        return x * s
    r[0] = apply1(f, 1)


@cuda.jit(device=True)
def apply1(fn, x):
    return fn(x)


def k_closure_recursive(r):
    def f(x):
        return f(x - 1) if x > 0 else 0
    r[0] = f(3)


def k_closure_args(r):
    def f(x):
        return x
    r[0] = f(1, 2)


@pytest.mark.parametrize("fn,msg", [
    (k_missing, "two\\(\\) missing required argument 'b'"),
    (k_unknown_kw, "two\\(\\) got an unexpected keyword argument 'c'"),
    (k_twice, "two\\(\\) got multiple values for argument 'a'"),
    (k_too_many, "two\\(\\) takes 2 positional argument\\(s\\) but 3 were given"),
    (k_bad_default, "default value .* of parameter 'b'"),
    (k_in_array, "'in' in kernels needs a tuple on its right"),
    (k_in_nested, "'in' in kernels needs a tuple of numbers"),
    (k_closure_default, "Cannot capture the non-constant value associated with variable 's'"),
    (k_closure_passed, "Cannot capture the non-constant value associated with variable 's'"),
    (k_closure_recursive, "recursive call of f\\(\\)"),
    (k_closure_args, "f\\(\\) takes 1 argument\\(s\\) but 2 were given"),
])
def test_function_typing_errors(fn, msg):
    with pytest.raises(TypingError, match=msg):
        compile_to_llvm(fn, (T.float64[::1],))


def k_kernel_default(r, x=1):
    r[0] = x


def k_kernel_star(r, *xs):
    r[0] = 1


def test_kernel_with_default_compiles_for_all_its_parameters():
    """The launch fills defaults in (Dispatcher._bind): the kernel takes every parameter."""
    lowered = compile_to_llvm(k_kernel_default, (T.float64[::1], T.int64))
    assert lowered.argtypes == (T.float64[::1], T.int64)


def test_kernel_with_star_args_is_typing_error():
    with pytest.raises(TypingError, match="kernels cannot have \\*args"):
        compile_to_llvm(k_kernel_star, (T.float64[::1],))


@cuda.jit(device=True)
def star(*args):
    return len(args)


def k_star_func(r):
    r[0] = star(1, apply1)


def k_closure_kwargs(r):
    s = r[1]

    def f(x):
        return x + s
    r[0] = f(x=1)


def k_in_left_tuple(r):
    r[0] = (1, 2) in (1, 2)


@pytest.mark.parametrize("fn,msg", [
    (k_star_func, "cannot pass .* in \\*args"),
    (k_closure_kwargs, "Cannot capture the non-constant value associated with variable 's'"),
    (k_in_left_tuple, "'in' in kernels tests a number"),
])
def test_more_function_typing_errors(fn, msg):
    with pytest.raises(TypingError, match=msg):
        compile_to_llvm(fn, (T.float64[::1],))


@cuda.jit(device=True)
def forward(*args):
    return total(*args)


def k_star_calls(r):
    t = (2.0, 1.5, 1.0)
    r[0] = forward(1.0, 2.0, 4.0)
    r[1] = axpy(*t)
    r[2] = axpy(1.0, *(2.0,), scale=3)
    r[3] = total(*t, 10.0)


STAR = [9.0, 7.0, 7.0, 17.5]


def test_star_call_values():
    r = np.zeros(4)
    cuda.jit(k_star_calls)[1, 1](r)
    assert r.tolist() == STAR


@pytest.mark.compile
def test_compiled_star_calls_match_python():
    from test_lower_cpu import run
    r = np.zeros(4)
    run(k_star_calls, (T.float64[::1],), r)
    assert r.tolist() == STAR


def k_star_not_tuple(r):
    r[0] = axpy(*r)


def k_star_builtin(r):
    r[0] = max(*(1.0, 2.0))


def k_star_local_alias(r):
    f = max
    r[0] = f(*(1.0, 2.0))       # a function held by a local: not named by globals


def test_star_call_of_a_recognised_function():
    r = np.zeros(1)
    cuda.jit(k_star_builtin)[1, 1](r)
    assert r[0] == 2.0


@pytest.mark.parametrize("fn,msg", [(k_star_not_tuple, "\\*r in a call must be a tuple"),
                                    (k_star_local_alias, "recognises")])
def test_star_call_errors(fn, msg):
    with pytest.raises(TypingError, match=msg):
        compile_to_llvm(fn, (T.float64[::1],))


def k_sibling_closures(r):
    scale = 3.0
    offset = 1.0

    def f(x):
        return x * scale

    def g(y):
        return f(y) + offset
    r[0] = g(2.0)
    scale = 5.0
    r[1] = g(2.0)


def test_closure_calling_a_sibling_closure():
    r = np.zeros(2)
    cuda.jit(k_sibling_closures)[1, 1](r)
    assert r.tolist() == [7.0, 11.0]


@pytest.mark.compile
def test_compiled_sibling_closures_match_python():
    from test_lower_cpu import run
    r = np.zeros(2)
    run(k_sibling_closures, (T.float64[::1],), r)
    assert r.tolist() == [7.0, 11.0]
