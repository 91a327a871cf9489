"""Keyword arguments and default values at launch (a cujit extension beyond numba.cuda,
numba-cuda #868): ``kernel[grid, block](x, alpha=2.0)``, Python's binding rules and words."""
import numpy as np
import pytest

import cujit as cuda


@cuda.jit(device=True)
def scaled(a, b=2.0):
    return a * b


@cuda.jit
def axpb(x, alpha=3.0, beta=0.0):
    i = cuda.grid(1)
    if i < x.size:
        x[i] = scaled(x[i], b=alpha) + beta


def _run(*args, **kwargs):
    d = cuda.to_device(np.ones(4))
    axpb[1, 4](d, *args, **kwargs)
    return d.copy_to_host()


@pytest.mark.parametrize("args, kwargs, want", [
    ((), {}, 3.0),                              # both defaults
    ((5.0,), {}, 5.0),
    ((), {"alpha": 5.0}, 5.0),
    ((), {"beta": 1.0}, 4.0),                   # a later default without the earlier one
    ((2.0,), {"beta": 1.0}, 3.0),
    ((), {"beta": 1.0, "alpha": 2.0}, 3.0),     # any order
])
def test_keywords_and_defaults_bind_as_in_python(args, kwargs, want):
    np.testing.assert_array_equal(_run(*args, **kwargs), np.full(4, want))


def test_the_array_argument_by_keyword():
    d = cuda.to_device(np.ones(4))
    axpb[1, 4](x=d, alpha=4.0)
    np.testing.assert_array_equal(d.copy_to_host(), np.full(4, 4.0))


def test_defaults_type_as_their_values():
    """A default is a launch value like any other: its type is part of the signature."""
    @cuda.jit
    def k(x, n=3, f=0.5):
        x[0] = n + f
    d = cuda.to_device(np.zeros(1))
    k[1, 1](d)
    assert d.copy_to_host()[0] == 3.5
    k[1, 1](d, f=1.25)
    assert d.copy_to_host()[0] == 4.25
    assert k.signatures[0][1:] == (cuda.int64, cuda.float64)


@pytest.mark.parametrize("call, text", [
    (lambda d: axpb[1, 4](), "missing a required argument: 'x'"),
    (lambda d: axpb[1, 4](d, gamma=1.0), "got an unexpected keyword argument 'gamma'"),
    (lambda d: axpb[1, 4](d, 1.0, 2.0, 3.0), "too many positional arguments"),
    (lambda d: axpb[1, 4](d, x=d), "multiple values for argument 'x'"),
])
def test_binding_errors_name_the_kernel_and_touch_nothing(call, text):
    d = cuda.to_device(np.ones(4))
    with pytest.raises(TypeError, match=f"kernel axpb\\(\\): {text}"):
        call(d)
    np.testing.assert_array_equal(d.copy_to_host(), np.ones(4))


def test_positional_count_error_without_defaults_is_unchanged():
    @cuda.jit
    def one(x):
        x[0] = 1
    d = cuda.to_device(np.zeros(1))
    with pytest.raises(TypeError, match="takes 1 argument.*2 were given"):
        one[1, 1](d, d)
    with pytest.raises(TypeError, match="got an unexpected keyword argument 'y'"):
        one[1, 1](d, y=1)


def test_keywords_with_declared_signature():
    @cuda.jit("void(float64[:], float64)")
    def k(x, alpha=2.0):
        x[0] = alpha
    d = cuda.to_device(np.zeros(1))
    k[1, 1](d)
    assert d.copy_to_host()[0] == 2.0
    k[1, 1](d, alpha=7)                       # an int for the declared float64
    assert d.copy_to_host()[0] == 7.0


def test_keyword_only_and_var_keyword_kernels_are_refused():
    def kwonly(x, *, alpha=1.0):
        x[0] = alpha

    def varkw(x, **kw):
        x[0] = 1
    d = cuda.to_device(np.zeros(1))
    for f, text in ((kwonly, "keyword-only arguments"), (varkw, r"cannot have \*\*kwargs")):
        with pytest.raises(cuda.TypingError, match=text):
            cuda.jit(f)[1, 1](d)
