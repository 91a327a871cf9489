"""numba-cuda programs ported unchanged: numba.cuda's ``cuda.is_float16_supported()``,
``cuda.is_bfloat16_supported()`` (used to choose a code path) and the ``@cuda.require_context``
decorator were AttributeErrors on ``import cujit as cuda``; with ``config.NUMBA_COMPAT`` (the
numba alias) the simulator answers the bfloat16 / FP8 queries as numba.cuda's simulator."""
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


def test_bfloat16_support_follows_the_device():
    cc = cuda.get_current_device().compute_capability
    assert cuda.is_bfloat16_supported() is (cc >= (8, 0))
    assert cuda.bf16.bfloat16 is cuda.bfloat16


@pytest.fixture
def numba_compat():
    """``cujit.config.NUMBA_COMPAT`` on for one test (as the numba alias sets it)."""
    cuda.config.NUMBA_COMPAT = True
    yield
    del cuda.config.NUMBA_COMPAT


def test_fp8_support_follows_the_device():
    cc = cuda.get_current_device().compute_capability
    assert cuda.is_fp8_supported() is (cc >= (8, 9))


@pytest.mark.sim
def test_cujits_simulator_supports_bfloat16_and_fp8():
    assert cuda.config.NUMBA_COMPAT is False
    assert cuda.is_bfloat16_supported() is True
    assert cuda.is_fp8_supported() is True


@pytest.mark.sim
def test_numba_compat_simulator_answers_as_numbas_simulator(numba_compat):
    # numba.cuda's simulator answers False to both; code written for it imports the
    # bfloat16 / FP8 names only off the simulator and skips on these answers
    assert cuda.is_bfloat16_supported() is False
    assert cuda.is_fp8_supported() is False
    assert cuda.is_float16_supported() is True
    del cuda.config.NUMBA_COMPAT
    assert cuda.is_bfloat16_supported() is True and cuda.is_fp8_supported() is True


@pytest.mark.gpu
def test_numba_compat_leaves_a_gpus_answers_to_the_device(numba_compat):
    cc = cuda.get_current_device().compute_capability
    assert cuda.is_bfloat16_supported() is (cc >= (8, 0))
    assert cuda.is_fp8_supported() is (cc >= (8, 9))


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
