"""numba-cuda programs ported unchanged: numba.cuda's ``cuda.is_float16_supported()``,
``cuda.is_bfloat16_supported()`` (used to choose a code path) and the ``@cuda.require_context``
decorator were AttributeErrors on ``import cujit as cuda``."""
import numpy as np
import pytest

import cujit as cuda


def test_float16_is_supported_and_works_in_a_kernel():
    assert cuda.is_float16_supported() is True

    @cuda.jit
    def half(out, x):
        out[0] = x * cuda.float16(2)

    out = np.zeros(1, np.float16)
    half[1, 1](out, np.float16(1.5))
    assert out[0] == 3


def test_bfloat16_is_not_supported_by_cujit_kernels():
    assert cuda.is_bfloat16_supported() is False
    assert not hasattr(cuda, "bf16")


def test_require_context_makes_the_context_then_calls():
    seen = []

    @cuda.require_context
    def alloc(n, *, dtype):
        """docstring kept"""
        seen.append(cuda.current_context())
        return cuda.device_array(n, dtype=dtype)

    a = alloc(3, dtype=np.int32)
    assert a.shape == (3,) and a.dtype == np.int32
    assert seen == [cuda.current_context()]
    assert alloc.__name__ == "alloc" and alloc.__doc__ == "docstring kept"


def test_require_context_passes_the_functions_errors_through():
    @cuda.require_context
    def bad():
        raise ValueError("from the function")

    with pytest.raises(ValueError, match="from the function"):
        bad()
