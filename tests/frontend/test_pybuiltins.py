"""The builtins the kernel language implements in Python (``frontend/pybuiltins.py``):
``divmod`` of integers and floats, as numba's ``divmod``, on the simulator and compiled."""
import numpy as np
import pytest

import cujit as cuda
from cujit.extending import overload
from cujit.frontend.extensions import overloads
from cujit.frontend.errors import TypingError
from cujit.nvvm import libnvvm as nvvm


@cuda.jit
def _int_divmod(out, a, b):
    q, r = divmod(a, b)
    out[0] = q
    out[1] = r


@cuda.jit
def _float_divmod(out, a, b):
    t = divmod(a, b)
    out[0] = t[0]
    out[1] = t[1]


@pytest.mark.parametrize("a, b", [(17, 5), (17, -5), (-17, 5), (-17, -5), (0, 3)])
def test_divmod_of_integers_is_pythons_floored_division(a, b):
    out = np.zeros(2, np.int64)
    _int_divmod[1, 1](out, a, b)
    assert tuple(out) == divmod(a, b)


def test_integer_divmod_by_zero_gives_zeros_as_the_operators_do():
    out = np.full(2, 9, np.int64)
    _int_divmod[1, 1](out, 7, 0)
    assert tuple(out) == (0, 0)


@pytest.mark.parametrize("a, b", [(7.5, 2.0), (7.5, -2.0), (-7.5, 2.0), (1.0, 0.25)])
def test_divmod_of_floats(a, b):
    out = np.zeros(2)
    _float_divmod[1, 1](out, a, b)
    assert tuple(out) == divmod(a, b)


def test_divmod_of_an_array_is_a_typing_error_naming_divmod():
    @cuda.jit
    def k(x):
        x[0] = divmod(x, 2)[0]
    with pytest.raises(TypingError, match=r"no overload of divmod\(\) accepts"):
        k[1, 1](np.zeros(1))


def test_a_programs_own_overload_of_divmod_comes_first():
    def typing(a, b):
        def impl(a, b):
            return a + b, a - b
        return impl
    overload(divmod)(typing)
    try:
        @cuda.jit
        def k(out, a, b):
            q, r = divmod(a, b)
            out[0] = q
            out[1] = r
        out = np.zeros(2, np.int64)
        k[1, 1](out, 7, 2)
        assert tuple(out) == (9, 5)
    finally:
        overloads.unregister(divmod)
    assert divmod in overloads          # the kernel language's own stays


@pytest.mark.compile
@pytest.mark.skipif(not nvvm.nvvm_available(), reason="libNVVM not installed")
def test_divmod_compiles():
    ptx, _ = cuda.compile_ptx(_int_divmod.py_func, "void(int64[::1], int64, int64)")
    assert "div.s64" in ptx             # the remainder is derived from the quotient
    assert "call" not in ptx            # the implementation is inlined
