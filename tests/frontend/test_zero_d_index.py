"""A 0-d integer array as an array index (NumPy's and numba's rule: it indexes as the
integer it holds), in loads and stores, compiled and simulated."""
import numpy as np
import pytest

import cujit as cuda
from cujit import types as T
from cujit.nvvm import libnvvm as nvvm
from cujit.dispatch.dispatcher import compile_ptx
from cujit.frontend.errors import TypingError


@cuda.jit
def bump(r, x, i):
    r[i] = x[i] + 1


RT = np.dtype([("a", np.int8), ("b", np.float64)], align=True)


@cuda.jit
def record_at(r, ary, i):
    r[()] = ary[i]


def test_a_0d_integer_array_indexes_loads_and_stores():
    r = np.zeros(4)
    bump[1, 1](r, np.arange(4.0), np.asarray(2))
    assert r.tolist() == [0, 0, 3, 0]
    bump[1, 1](r, np.arange(4.0), np.asarray(-1, np.int32))     # wraps like an int
    assert r.tolist() == [0, 0, 3, 4]


def test_a_0d_index_picks_a_record():
    arr = np.zeros(2, RT)
    arr["a"], arr["b"] = [1, 2], [42.5, 43.5]
    r = np.zeros((), RT)
    record_at[1, 1](r, arr, np.asarray(1))
    assert tuple(r[()]) == (2, 43.5)


def test_a_0d_float_array_or_a_1d_array_is_not_an_index():
    with pytest.raises(TypingError, match="array index must be an integer or a slice"):
        bump[1, 1](np.zeros(2), np.zeros(2), np.asarray(1.0))
    with pytest.raises(TypingError, match="array index must be an integer or a slice"):
        bump[1, 1](np.zeros(2), np.zeros(2), np.arange(1))


@pytest.mark.compile
@pytest.mark.skipif(not nvvm.nvvm_available(), reason="libNVVM not installed")
def test_a_0d_index_compiles_to_a_load_of_its_value():
    ptx, _ = compile_ptx(bump, (T.float64[::1], T.float64[::1], T.Array(T.int64, 0, "C")))
    assert "ld.global.u64" in ptx          # the index, read from its 0-d array
