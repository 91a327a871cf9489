"""Every corpus case compiles to PTX for the argument types it is launched with (no GPU
needed), so a kernel the compiler cannot take is caught here rather than in the GPU run of
the differential tests."""
import numpy as np
import pytest

from corpus import CASES


@pytest.fixture(scope="module")
def compile_ptx():
    from cujit.nvvm import libnvvm as nvvm
    if not nvvm.nvvm_available():
        pytest.skip("libNVVM is not available")
    from cujit.dispatch.dispatcher import compile_ptx
    return compile_ptx


@pytest.mark.compile
@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_case_compiles(case, compile_ptx):
    from cujit import types as T
    _, _, _, _, args = case.make(np.random.default_rng(0))
    argtypes = tuple(T.typeof(a) for a in args)
    ptx, rt = compile_ptx(case.kernel, T.void(*argtypes))
    assert ".entry" in ptx and rt is T.void
