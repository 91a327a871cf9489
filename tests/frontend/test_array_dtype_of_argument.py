"""``cuda.shared.array(n, dtype=ary.dtype)`` / ``cuda.local.array``: the element type taken
from an array argument's ``dtype`` (numba-cuda's pattern), one specialisation per dtype."""
import numpy as np
import pytest

import cujit as cuda
from cujit.frontend.errors import TypingError

N = 8


@cuda.jit
def staged(ary):
    sm = cuda.shared.array(N, dtype=ary.dtype)
    lm = cuda.local.array(N, ary.dtype)
    for j in range(N):
        sm[j] = j
        lm[j] = sm[j] * 3
    for j in range(N):
        ary[j] = lm[j]


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int16, np.complex64])
def test_shared_and_local_arrays_take_the_argument_dtype(dtype):
    a = np.zeros(N, dtype)
    staged[1, 1](a)
    np.testing.assert_array_equal(a, (np.arange(N) * 3).astype(dtype))


def test_the_dtype_of_a_scalar_argument_is_still_an_error():
    @cuda.jit
    def k(out, x):
        sm = cuda.shared.array(N, dtype=x.dtype)
        out[0] = sm[0]
    with pytest.raises(TypingError, match="the dtype of shared.array must be a compile-time"):
        k[1, 1](np.zeros(1), 1.5)
