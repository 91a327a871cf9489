"""String constants passed to device functions (numba's StringLiteral arguments,
numba-cuda's issue 755 test): the callee is typed for the constant, and its comparisons with
other string constants are decided when it is typed."""
import numpy as np
import pytest

import cujit as cuda
from cujit import types as T
from cujit.frontend.errors import TypingError
from cujit.frontend.typecheck import typecheck



def ptx_of(fn, *args):
    from cujit.nvvm.libnvvm import compile_ptx
    from cujit.nvvm.lowering import compile_to_llvm
    return compile_ptx(compile_to_llvm(fn, tuple(T.typeof(a) for a in args)).llvm_ir)


@cuda.jit(device=True, forceinline=True)
def load(gmem, value):
    if value == "1":
        gmem[cuda.threadIdx.x] = 1.0
    elif value != "3" and value < "5":
        gmem[cuda.threadIdx.x] = 2.0
    else:
        gmem[cuda.threadIdx.x] = 0.0


def choose(buff):
    load(buff, "1")
    if cuda.threadIdx.x == 1:
        load(buff, "2")
    if cuda.threadIdx.x == 2:
        load(buff, "3")


def test_string_argument_selects_the_branch():
    buff = np.full(4, -1.0, np.float32)
    cuda.jit(choose)[1, 4](buff)
    np.testing.assert_array_equal(buff, [1.0, 2.0, 0.0, 1.0])


@pytest.mark.compile
def test_string_argument_compiles():
    assert ".entry" in ptx_of(choose, np.zeros(4, np.float32))


@cuda.jit(device=True)
def order_mixed(out, value):
    out[0] = value < b"x"


def mixed(out):
    order_mixed(out, "a")


def test_ordering_str_with_bytes_is_a_typing_error():
    with pytest.raises(TypingError, match="cannot compare 'a' with b'x'"):
        typecheck(mixed, (T.float64[::1],))
