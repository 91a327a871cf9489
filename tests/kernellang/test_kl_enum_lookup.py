"""numba-cuda programs ported unchanged: numba-cuda's test_enums.py looks an IntEnum
member up by name (``RequestError["internal_error"]``) in a vectorized function and in
kernels; cujit said "a value of type Global(<enum 'RequestError'>) cannot be indexed".  A
constant member name now gives the member, a compile-time constant."""
import enum

import numpy as np
import pytest

import cujit as cuda


class RequestError(enum.IntEnum):
    dummy = 2
    not_found = 404
    internal_error = 500


def _f(x):
    if x != RequestError.not_found:
        return RequestError["internal_error"]
    return RequestError["dummy"]


def test_intenum_member_by_name_in_vectorize_as_numba_test_enums():
    ufunc = cuda.vectorize("int64(int64)", target="cuda")(_f)
    arr = np.array([2, 404, 500, 404], dtype=np.int64)
    assert ufunc(arr).tolist() == [500, 2, 500, 2]


@cuda.jit
def _kernel(out, x):
    out[0] = x + RequestError["not_found"]
    out[1] = RequestError["dummy"] * 2


def test_intenum_member_by_name_in_a_kernel():
    out = np.zeros(2, np.int64)
    _kernel[1, 1](out, 1)
    assert out.tolist() == [405, 4]


@cuda.jit
def _unknown_member(out):
    out[0] = RequestError["teapot"]


@cuda.jit
def _variable_name(out, i):
    out[0] = RequestError[i]


@pytest.mark.parametrize("kernel,args", [(_unknown_member, ()), (_variable_name, (1,))])
def test_enum_lookup_needs_a_constant_member_name(kernel, args):
    out = np.zeros(1, np.int64)
    with pytest.raises(cuda.TypingError, match=r"RequestError\[\.\.\.\] in a kernel takes a "
                       r"constant member name \(one of dummy, not_found, internal_error\)"):
        kernel[1, 1](out, *args)
    assert out[0] == 0


@pytest.mark.compile
def test_intenum_lookup_compiles_to_a_constant():
    from cujit.nvvm import libnvvm as nvvm
    if not nvvm.nvvm_available():
        pytest.skip("libNVVM is not installed")
    ptx, _ = cuda.compile_ptx(_kernel.py_func, "void(int64[::1], int64)")
    assert ".entry" in ptx and "404" in ptx
