"""Numba-cuda's documented "Calling a NumPy UFunc" example (``np.sin(x, r)`` in a
kernel) failed with "math.sin() takes 1 argument(s), got 2" - the typer's internal key, not
what the user wrote, and no hint that whole-array ufuncs are the problem.  Messages about
math/NumPy calls now name the callee as written; NumPy ufuncs on arrays with an output run
(tests/kernellang/test_kl_array_ufuncs.py), and the calls that would allocate an array or
pass arrays to scalar functions say what to write instead."""
import numpy as np
import pytest

import cujit as cuda
from cujit import TypingError


@cuda.jit
def _ufunc_array_value(r, x):
    r[0] = np.sin(x)


@cuda.jit
def _abs_array(r, x):
    y = abs(x)
    r[0] = y[0]


@cuda.jit
def _maximum_array(r, x):
    r[0] = np.maximum(x, 1.0)


@cuda.jit
def _floor_two_args(r, x):
    r[0] = np.floor(x[0], x[1])


@cuda.jit
def _per_element(r, x):
    i = cuda.grid(1)
    if i < x.size:
        r[i] = np.sin(x[i]) + abs(x[i]) + np.maximum(x[i], 0.5) + np.floor(x[i])


@pytest.mark.parametrize("kernel,words", [
    (_ufunc_array_value, ("np.sin() of an array returns a new array", "cannot allocate",
                          "np.sin(x, out)")),
    (_abs_array, ("abs() takes numbers, not arrays", "np.absolute(x, out)",
                  "out[i] = abs(x[i])")),
    (_maximum_array, ("np.maximum() of an array returns a new array",
                      "np.maximum(x, 1.0, out)")),
])
def test_ufunc_on_whole_arrays_is_a_clear_typing_error(kernel, words):
    x = np.arange(10, dtype=np.float32) - 5
    r = np.zeros_like(x)
    with pytest.raises(TypingError) as e:
        kernel[1, 1](r, x)
    msg = str(e.value)
    for w in words:
        assert w in msg, msg
    assert "math.sin" not in msg
    assert (r == 0).all()       # nothing ran


def test_extra_argument_error_names_the_callee_as_written():
    # was "npfloor() takes 1 argument(s), got 2" (an internal key); a second argument of a
    # ufunc is its output, which must be an array
    with pytest.raises(TypingError, match=r"np\.floor\(\): the output must be an array, "
                                          r"got a value of type float64"):
        _floor_two_args[1, 1](np.zeros(2), np.ones(2))


def test_per_element_ufuncs_still_compute_numpy_values():
    x = np.linspace(-2, 2, 16)
    r = np.zeros_like(x)
    _per_element[1, 16](r, x)
    np.testing.assert_allclose(r, np.sin(x) + abs(x) + np.maximum(x, 0.5) + np.floor(x),
                               rtol=1e-14)


@cuda.jit
def _sequential_rows(M):
    # numba-cuda's cooperative-groups docs example
    col = cuda.grid(1)
    g = cuda.cg.this_grid()
    rows = M.shape[0]
    cols = M.shape[1]
    for row in range(1, rows):
        opposite = cols - col - 1
        M[row, col] = M[row - 1, opposite] + 1
        g.sync()


def test_cooperative_docs_example_overload_max_cooperative_grid_blocks():
    # numba.cuda: overload = kernel.overloads[sig]; overload.max_cooperative_grid_blocks(b)
    # (was AttributeError on cujit's CompiledKernel)
    A = np.zeros((64, 64), dtype=np.int32)
    _sequential_rows[4, 16](A)
    assert (A == np.arange(64, dtype=np.int32)[:, None]).all()
    sig = _sequential_rows.signatures[0]
    overload = _sequential_rows.overloads[sig]
    n = overload.max_cooperative_grid_blocks(16)
    assert isinstance(n, int) and n >= 4
    assert n == _sequential_rows.max_cooperative_grid_blocks(16)
    assert overload.max_cooperative_grid_blocks((4, 4)) == n
    with pytest.raises(ValueError, match="blockdim"):
        overload.max_cooperative_grid_blocks(0)
    with pytest.raises(ValueError, match="blockdim"):
        overload.max_cooperative_grid_blocks("16")
