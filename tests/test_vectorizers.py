"""``cujit.vectorizers`` (numba.cuda.vectorizers): the builders Numba's own
``numba.vectorize`` / ``numba.guvectorize`` call for ``target='cuda'``."""
import numpy as np
import pytest

import cujit
from cujit.vectorizers import CUDAGUFuncVectorize, CUDAVectorize


def _add(a, b):
    return a + b


def _row_sum(x, out):
    s = 0
    for i in range(x.shape[0]):
        s += x[i]
    out[0] = s


def test_vectorize_builder_makes_a_cujit_ufunc_of_the_added_signatures():
    vec = CUDAVectorize(_add, identity=0, targetoptions={})
    vec.add("float32(float32, float32)")
    vec.disable_compile()
    uf = vec.build_ufunc()
    a = np.arange(8, dtype=np.float32)
    np.testing.assert_array_equal(uf(a, a), a + a)
    lazy = CUDAVectorize(_add).build_ufunc()
    np.testing.assert_array_equal(lazy(a, a), a + a)


def test_guvectorize_builder_makes_a_cujit_gufunc():
    g = CUDAGUFuncVectorize(_row_sum, "(n)->()", targetoptions={}, writable_args=())
    g.add("void(float64[:], float64[:])")
    x = np.arange(12.0).reshape(3, 4)
    np.testing.assert_array_equal(g.build_ufunc()(x), x.sum(axis=1))


def test_builders_pass_cujits_errors_on():
    with pytest.raises(TypeError, match="expected a function"):
        CUDAVectorize(3)
    vec = CUDAVectorize(_add, cache=True)
    vec.add("float32(float32, float32)")
    with pytest.raises(TypeError):
        vec.build_ufunc()
    bad = CUDAVectorize(_add, targetoptions={"no_such_option": 1})
    with pytest.raises(TypeError):
        bad.build_ufunc()
