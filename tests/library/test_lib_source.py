"""cujit.ufuncs._source: lambdas become defs the compiler can read; generated kernels."""
import numpy as np
import pytest

import cujit as cuda
from cujit.frontend.errors import TypingError
from cujit.ufuncs._source import as_def, define

SCALE = 3


def test_two_lambdas_on_one_line_are_told_apart():
    add, mul = cuda.reduce(lambda a, b: a + b), cuda.reduce(lambda a, b: a * b)
    x = np.arange(1, 6, dtype=np.int64)
    assert add(x) == 15 and mul(x, init=1) == 120


def test_lambda_spread_over_lines_and_using_globals():
    f = cuda.vectorize(["int64(int64)"])(
        lambda v:
            v * SCALE)
    np.testing.assert_array_equal(f(np.arange(3)), [0, 3, 6])


def test_def_is_returned_as_is():
    def g(a):
        return a
    assert as_def(g) is g


def test_lambda_capturing_locals_is_a_typing_error():
    k = 2
    with pytest.raises(TypingError, match="captures local variables"):
        as_def(lambda a: a * k)


def test_same_argnames_different_bodies_resolved_by_code():
    fs = [lambda a: a + 1, lambda a: a - 1, lambda a: a + 2]
    import linecache
    texts = ["".join(linecache.getlines(as_def(f).__code__.co_filename)) for f in fs]
    assert "a + 1" in texts[0] and "a - 1" in texts[1] and "a + 2" in texts[2]


def test_lambda_without_source_is_rebuilt_from_its_bytecode():
    f = eval("lambda a: a * SCALE + 1 if a > 0 else -a")        # no file behind it
    g = as_def(f)
    assert g.__name__ == "_lambda" and [g(v) for v in (-2, 0, 2)] == [2, 0, 7]
    ufunc = cuda.vectorize(["int64(int64)"])(f)
    np.testing.assert_array_equal(ufunc(np.array([-2, 0, 2])), [2, 0, 7])


def test_not_a_function():
    with pytest.raises(TypeError, match="Python function"):
        as_def(np.add)


def test_define_registers_source_for_the_compiler():
    import linecache
    f = define("def _twice(x):\n    return 2 * x\n", "_twice", {})
    assert f(4) == 8
    assert "return 2 * x" in "".join(linecache.getlines(f.__code__.co_filename))
