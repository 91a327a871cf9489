"""Choosing among declared signatures (numba's overload resolution): the conversion kinds, a
kernel launched with several signatures, ambiguity, device functions declared with
signatures, ``specialize`` with types and single-signature kernels as specialisations."""
import re

import numpy as np
import pytest

import cujit as cuda
from cujit import types as T
from cujit.nvvm import libnvvm as nvvm
from cujit.dispatch.dispatcher import compile_ptx
from cujit.frontend.errors import TypingError
from cujit.frontend.overloads import (EXACT, PROMOTE, SAFE, UNSAFE, best_overloads,
                                      conversion, numba_repr)

F64 = T.float64[::1]


def add(x, y):
    return x + y


def add_kernel(r, x, y):
    r[0] = x + y


@pytest.mark.parametrize("have,want,kind", [
    (T.int32, T.int32, EXACT),
    (T.int32, T.int64, PROMOTE),
    (T.float32, T.float64, PROMOTE),
    (T.uint8, T.int16, SAFE),
    (T.int32, T.float64, SAFE),
    (T.int16, T.float32, SAFE),
    (T.float32, T.complex64, SAFE),
    (T.boolean, T.int32, SAFE),
    (T.int64, T.float64, UNSAFE),
    (T.int32, T.float32, UNSAFE),
    (T.float64, T.float32, UNSAFE),
    (T.float64, T.int64, UNSAFE),
    (T.int64, T.int32, UNSAFE),
    (T.int32, T.uint64, UNSAFE),
    (T.complex128, T.float64, None),
    (T.complex64, T.int64, None),
    (T.float64[::1], T.float64[:], SAFE),
    (T.float64[:], T.float64[::1], None),
    (T.float32[::1], T.float64[::1], None),
    (T.float64[:, ::1], T.float64[::1], None),
    # a device address for a pointer parameter (numba.cuda's CPointer arguments)
    (T.int64, T.CPointer(T.float32), UNSAFE),
    (T.uint64, T.voidptr, UNSAFE),
    (T.float64, T.CPointer(T.float32), None),
    (T.float32[::1], T.CPointer(T.float32), None),
])
def test_conversion_kinds(have, want, kind):
    assert conversion(have, want) == kind


def test_best_overload_counts_unsafe_then_safe_then_promote():
    sigs = [(T.float32, T.float32), (T.float64, T.float64)]
    # int64 -> float64 unsafe once; to float32 twice unsafe
    assert best_overloads((T.int64, T.float64), sigs) == [(T.float64, T.float64)]
    assert best_overloads((T.float32, T.float32), sigs) == [(T.float32, T.float32)]
    assert best_overloads((T.complex128, T.float64), sigs) == []
    tie = [(T.float32, T.float64), (T.float64, T.float32), (T.int64, T.int64)]
    assert best_overloads((T.float64, T.float64), tie) == tie[:2]
    assert best_overloads((T.float64, T.float64), [(T.int64, T.int64)],
                          allow_unsafe=False) == []


def test_kernel_picks_the_signature_its_arguments_convert_to_best():
    f = cuda.jit(["(float64[::1], float32, float32)",
                  "(float64[::1], float64, float64)"])(add_kernel)
    r = np.zeros(1)
    f[1, 1](r, np.float32(1), np.float32(2 ** -25))
    assert r[0] == 1.0                      # float32 arithmetic: the small term is lost
    f[1, 1](r, 1, 2 ** -25)
    assert r[0] == 1.0000000298023224       # (int64, float64) -> the float64 signature


def test_kernel_with_no_convertible_signature_says_no_matching_definition():
    f = cuda.jit(["(int64[::1], int64, int64)", "(float64[::1], float64, float64)"])(add_kernel)
    with pytest.raises(TypeError, match=r"No matching definition for argument type\(s\) "
                                        r"array\(complex128, 1d, C\), complex128, complex128"):
        f[1, 1](np.zeros(1, np.complex128), 1j, 1j)


def test_kernel_with_two_equally_good_signatures_is_ambiguous():
    f = cuda.jit(["(float64[::1], float32, float64)", "(float64[::1], float64, float32)",
                  "(float64[::1], int64, int64)"])(add_kernel)
    with pytest.raises(TypeError, match="Ambiguous overloading") as e:
        f[1, 1](np.zeros(1), 1.0, 2.0)
    arr = r"Array\(float64, 1, 'C', False, aligned=True\)"
    # numba's text: the function's repr, the argument types, the two best, each by repr
    assert re.match(rf"Ambiguous overloading for <function add_kernel at 0x[0-9a-f]+> "
                    rf"\({arr}, float64, float64\):\n\({arr}, float32, float64\) -> none\n"
                    rf"\({arr}, float64, float32\) -> none\n\(kernel add_kernel: ",
                    str(e.value)), str(e.value)
    assert "int64" not in str(e.value)      # only the two best are named


def test_numba_repr_of_types():
    assert numba_repr(T.float32[:, ::1]) == "Array(float32, 2, 'C', False, aligned=True)"
    ro = T.Array(T.int8, 1, "A", readonly=True)
    assert numba_repr(ro) == "Array(int8, 1, 'A', True, aligned=True)"
    assert numba_repr(T.UniTuple(F64, 2)) == ("UniTuple(Array(float64, 1, 'C', False, "
                                              "aligned=True), 2)")
    assert numba_repr(T.Tuple((T.int32, T.float64))) == "Tuple(int32, float64)"
    assert numba_repr(T.complex64) == "complex64"


def test_specialize_takes_types_and_keeps_its_kernels():
    k = cuda.jit(add_kernel)
    assert k.specializations == {}
    s = k.specialize(F64, T.float64, T.float64)
    assert k.specializations == {(F64, T.float64, T.float64): s}
    assert k.specialize(F64, T.float64, T.float64) is s
    t = k.specialize(T.float64[:], T.float64, T.float64)
    assert t is not s and len(k.specializations) == 2
    r = np.zeros(1)
    s[1, 1](r, 1.5, 2.0)
    assert r[0] == 3.5
    with pytest.raises(RuntimeError, match="Dispatcher already specialized"):
        s.specialize(F64, T.float64, T.float64)


def test_one_signature_makes_a_specialised_kernel_and_a_list_does_not():
    one = cuda.jit("void(float64[::1], float64, float64)")(add_kernel)
    many = cuda.jit(["void(float64[::1], float64, float64)"])(add_kernel)
    assert one.specialized and not many.specialized
    with pytest.raises(RuntimeError, match="Dispatcher already specialized"):
        one.specialize(F64, T.float64, T.float64)
    assert many.specialize(F64, T.float64, T.float64).specialized


needs_nvvm = pytest.mark.skipif(not nvvm.nvvm_available(), reason="libNVVM not installed")


@pytest.mark.compile
@needs_nvvm
def test_device_function_signatures_convert_the_arguments():
    dev = cuda.jit(["(int64, int64)"], device=True)(add)

    @cuda.jit
    def k(r, x, y):
        r[0] = dev(x, y)
    ptx, _ = compile_ptx(k, "void(int64[::1], float64, float64)")
    assert ptx.count("cvt.rzi.s64.f64") == 2    # each float truncated to the int64 parameter


@pytest.mark.compile
@needs_nvvm
def test_device_function_ambiguity_resolves_to_the_first_best():
    dev = cuda.jit(["(float32, float64)", "(float64, float32)", "(int64, int64)"],
                   device=True)(add)

    @cuda.jit
    def k(r, x, y):
        r[0] = dev(x, y)
    ptx, _ = compile_ptx(k, "void(float64[::1], float64, float64)")
    assert "cvt.rn.f32.f64" in ptx              # x narrowed: the first signature's float32


def test_device_function_without_a_matching_signature_is_a_typing_error():
    dev = cuda.jit(["(int64, int64)", "(float64, float64)"], device=True)(add)

    @cuda.jit
    def k(r, x, y):
        r[0] = dev(x, y)
    with pytest.raises(TypingError, match=r"Invalid use of type .* with parameters "
                                          r"\(complex128, complex128\)"):
        k.compile("void(complex128[::1], complex128, complex128)")
