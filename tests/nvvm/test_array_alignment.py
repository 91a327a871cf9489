"""``shared.array`` / ``local.array`` with ``alignment=`` (numba-cuda's keyword and its rules:
a compile-time int, positive, a power of 2, a multiple of the pointer size): the compiled
global / stack slot gets that alignment, the simulator's arrays that address alignment."""
import re

import numpy as np
import pytest

import cujit as cuda
from cujit import types as T
from cujit.frontend.errors import RequireLiteralValue, TypingError
from cujit.nvvm.lowering import compile_to_llvm
from cujit.frontend.typecheck import typecheck
from cujit.simulator.memory import aligned_zeros


def _kernel(alignment):
    @cuda.jit
    def k(out):
        loc = cuda.local.array(3, np.uint8, alignment=alignment)
        sh = cuda.shared.array(shape=(2, 3), dtype=np.uint8, alignment=alignment)
        loc[0] = 1
        sh[1, 2] = 2
        out[0] = loc[0] + sh[1, 2]
    return k


@pytest.mark.parametrize("alignment", [None, 16, 64, 256])
def test_aligned_arrays_hold_values(alignment):
    out = np.zeros(1)
    _kernel(alignment)[1, 1](out)
    assert out[0] == 3.0


@pytest.mark.compile
@pytest.mark.parametrize("alignment", [16, 256])
def test_compiled_arrays_get_the_alignment(alignment):
    ir = compile_to_llvm(_kernel(alignment).py_func, (T.float64[::1],)).llvm_ir
    shared = re.search(r"@\"?_cujit_shared\S*\"? = internal addrspace\(3\) global .*align (\d+)",
                       ir)
    local = re.search(r"alloca \[3 x i8\], align (\d+)", ir)
    assert int(shared.group(1)) == alignment and int(local.group(1)) == alignment


@pytest.mark.compile
def test_without_alignment_the_dtype_decides():
    ir = compile_to_llvm(_kernel(None).py_func, (T.float64[::1],)).llvm_ir
    assert re.search(r"alloca \[3 x i8\], align 4\b", ir)


@pytest.mark.parametrize("alignment", [16, 64, 256, 4096])
def test_simulator_arrays_are_aligned(alignment):
    for shape in [(1,), (3, 5), ()]:      # () : a 0-d local array, one element
        a = aligned_zeros(shape, np.dtype(np.float64), alignment)
        assert a.shape == shape and not a.any()
        assert a.__array_interface__["data"][0] % alignment == 0


@pytest.mark.parametrize("bad,msg", [
    (3, "Alignment must be a power of 2: local.array"),
    (17, "Alignment must be a power of 2: local.array"),
    (4, r"Alignment must be a multiple of 8 \(the pointer size\): local.array"),
    (0, "Alignment must be positive: local.array"),
    (-8, "Alignment must be positive: local.array"),
])
def test_bad_alignment_ints_are_value_errors(bad, msg):
    # numba-cuda's cudaimpl._validate_alignment raises ValueError with these words
    with pytest.raises(ValueError, match=msg):
        typecheck(_kernel(bad).py_func, (T.float64[::1],))


@pytest.mark.parametrize("bad", [2.0, 3.2, "16", True])
def test_alignment_that_is_not_an_int_is_a_typing_error(bad):
    # numba's RequireLiteralValue, a TypingError
    with pytest.raises(RequireLiteralValue, match="RequireLiteralValue: local.array's "
                                                  "alignment must be a constant integer, "
                                                  f"got {re.escape(repr(bad))}"):
        typecheck(_kernel(bad).py_func, (T.float64[::1],))


def _runtime_alignment(out, n):
    loc = cuda.local.array(3, np.uint8, alignment=n)
    out[0] = loc[0]


def test_alignment_must_be_a_constant():
    with pytest.raises(TypingError, match="the alignment of local.array must be a "
                                          "compile-time constant"):
        typecheck(_runtime_alignment, (T.float64[::1], T.int64))


def _dynamic_aligned(out):
    sh = cuda.shared.array(0, np.float32, alignment=16)
    out[0] = sh[0]


def test_dynamic_shared_memory_takes_no_alignment():
    with pytest.raises(TypingError, match="dynamic shared memory .* takes no alignment"):
        typecheck(_dynamic_aligned, (T.float64[::1],))


def _unknown_keyword(out):
    loc = cuda.local.array(3, np.uint8, align=16)
    out[0] = loc[0]


def test_unknown_keyword_is_a_typing_error():
    with pytest.raises(TypingError, match="unexpected or repeated argument 'align'"):
        typecheck(_unknown_keyword, (T.float64[::1],))


def _addresses(out, arr, which):
    # numba-cuda's test_array_alignment reads the addresses through arr.ctypes.data
    loc = cuda.local.array(5, np.uint8, alignment=64)
    sh = cuda.shared.array(7, np.uint8, alignment=256)
    loc[0] = 1
    sh[0] = 2
    if which == 0:
        out[0] = loc.ctypes.data
        out[1] = sh.ctypes.data
        out[2] = arr.ctypes.data
        out[3] = arr[1:].ctypes.data


def test_ctypes_data_is_the_array_address():
    out = np.zeros(4, np.uint64)
    arr = cuda.device_array(4, np.float64)
    cuda.jit(_addresses)[1, 1](out, arr, 0)
    assert out[0] % 64 == 0 and out[1] % 256 == 0
    assert out[0] != 0 and out[1] != 0 and out[2] != 0
    assert out[3] - out[2] == 8          # a view starts one float64 later


@pytest.mark.gpu
def test_ctypes_data_of_a_device_array_is_its_device_pointer():
    out = np.zeros(4, np.uint64)
    arr = cuda.device_array(4, np.float64)
    cuda.jit(_addresses)[1, 1](out, arr, 0)
    assert int(out[2]) == arr.device_ctypes_pointer.value


@pytest.mark.compile
def test_ctypes_data_compiles_to_the_pointer_value():
    ir = compile_to_llvm(_addresses, (T.uint64[::1], T.float64[::1], T.int64)).llvm_ir
    assert "ptrtoint" in ir


def _ctypes_other(out, arr):
    out[0] = arr.ctypes.shape


def _ctypes_kept(out, arr):
    c = arr.ctypes
    out[0] = c.data


def test_ctypes_other_than_data_is_a_typing_error():
    with pytest.raises(TypingError, match="arr.ctypes has only 'data' in kernels"):
        typecheck(_ctypes_other, (T.uint64[::1], T.float64[::1]))
    with pytest.raises(TypingError, match="cannot assign ctypes of .* to variable 'c'"):
        typecheck(_ctypes_kept, (T.uint64[::1], T.float64[::1]))
