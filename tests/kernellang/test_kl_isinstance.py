"""``isinstance`` in kernels, decided when the kernel is typed, with Numba's rules
(``numba/cpython/builtins.py``'s ``ol_isinstance``): ``int``/``float``/``complex``/``bool``
stand for exactly ``int64``/``float64``/``complex128``/``boolean``; cujit, Numba and NumPy
scalar types match their own type; a branch on a parameter's isinstance is pruned."""
import numpy as np
import pytest

import cujit as cuda
from cujit import types as T

from _kl_helpers import ptx_of

F64_1D_C = T.float64[::1]


def classify(out, x, arr):
    b = T.bfloat16(1.5)
    out[0] = isinstance(x, float)
    out[1] = isinstance(x, (int, float))
    out[2] = isinstance(x, int)
    out[3] = isinstance(b, T.bfloat16)
    out[4] = isinstance(x, np.float32)
    out[5] = isinstance(arr, F64_1D_C)
    out[6] = isinstance(arr, tuple)
    out[7] = isinstance((x, 1), tuple)
    out[8] = isinstance(np.int32(x), int)       # int stands for int64 only, as in Numba
    out[9] = isinstance(x, (list, dict, set))


EXPECTED = [1, 1, 0, 1, 0, 1, 0, 1, 0, 0]


def test_isinstance_values():
    out = np.full(10, -1.0)
    cuda.jit(classify)[1, 1](out, 2.0, np.zeros(3))
    np.testing.assert_array_equal(out, EXPECTED)


def test_isinstance_of_a_float32_argument():
    out = np.full(10, -1.0)
    cuda.jit(classify)[1, 1](out, np.float32(2.0), np.zeros(3))
    assert out[0] == 0 and out[1] == 0 and out[4] == 1


@cuda.jit(device=True)
def _doubled(v):
    if isinstance(v, tuple):
        return v[0] * 2         # not typable for a scalar: the pruned branch
    else:
        return v * 2


def generic_device_function(out, x):
    out[0] = _doubled(x)
    out[1] = _doubled((x, 1))


def test_branch_on_a_parameter_is_pruned():
    out = np.zeros(2)
    cuda.jit(generic_device_function)[1, 1](out, 3.0)
    np.testing.assert_array_equal(out, [6.0, 6.0])


@pytest.mark.compile
def test_isinstance_compiles_to_a_constant():
    ptx = ptx_of(classify, np.zeros(10), 2.0, np.zeros(3))
    assert ".entry" in ptx
    ptx_of(generic_device_function, np.zeros(2), 3.0)


def of_type_class(out, x):
    out[0] = isinstance(x, T.Integer)


def of_record(out, r):
    out[0] = isinstance(r, float)


def of_runtime_class(out, x, c):
    out[0] = isinstance(x, c)


def with_one_argument(out, x):
    out[0] = isinstance(x)


@pytest.mark.parametrize("fn,args,msg", [
    (of_type_class, (np.zeros(1), 1.0), "the class must be a Python scalar class"),
    (of_record, (np.zeros(1), np.zeros(1, np.dtype([("a", "f8")]))[0]),
     'isinstance\\(\\) does not support variables of type "Record'),
    (of_runtime_class, (np.zeros(1), 1.0, 2), "the class given to isinstance\\(\\) must be a "
                                              "compile-time constant"),
    (with_one_argument, (np.zeros(1), 1.0), "isinstance\\(\\) takes 2 arguments"),
], ids=["type class", "record", "runtime class", "one argument"])
def test_refused_isinstance_is_a_typing_error(fn, args, msg):
    with pytest.raises(cuda.TypingError, match=msg):
        cuda.jit(fn)[1, 1](*args)
