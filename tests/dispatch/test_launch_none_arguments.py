"""None as a kernel argument value (a parameter's default, or passed): typed ``none``
(numba's ``typeof(None)``), a specialisation of its own with no run-time parameter, and
``p is None`` / ``p is not None`` decided when the kernel is compiled, as in device
functions.  Any other read of such a parameter is a TypingError naming it."""
import re

import numpy as np
import pytest

import cujit as cuda
from cujit import types as ct
from cujit.dispatch.launcher import ArgPacker, param_layout
from cujit.nvvm.lowering import compile_to_llvm, flatten_argtypes


@cuda.jit
def add_optional(out, x, y=None):
    i = cuda.grid(1)
    if i < out.size:
        v = x[i]
        if y is not None:
            v += y[i]
        if None is y:
            v += 100.0
        out[i] = v


X = np.arange(8.0)


@pytest.mark.parametrize("call, want", [
    (lambda o, x: add_optional[1, 8](o, x), X + 100),                  # the default
    (lambda o, x: add_optional[1, 8](o, x, None), X + 100),            # passed
    (lambda o, x: add_optional[1, 8](o, x, y=None), X + 100),          # by keyword
    (lambda o, x: add_optional[1, 8](o, x, x), 2 * X),                 # an array
])
def test_none_or_an_array_for_an_optional_parameter(call, want):
    out = cuda.to_device(np.zeros(8))
    call(out, cuda.to_device(X))
    np.testing.assert_array_equal(out.copy_to_host(), want)


def test_none_is_its_own_specialisation():
    @cuda.jit
    def k(out, y=None):
        out[0] = 1.0 if y is None else 2.0
    out = cuda.to_device(np.zeros(1))
    for y, want in ((None, 1.0), (np.ones(1), 2.0), (None, 1.0)):
        k[1, 1](out, y)             # alternating: each launch its own specialisation
        assert out.copy_to_host()[0] == want
    assert sorted(str(s[1]) for s in k.signatures) == ["array(float64, 1d, C)", "none"]


def test_a_conditional_expression_on_is_none_keeps_only_its_branch_taken():
    @cuda.jit
    def k(out, y=None):
        out[0] = -1.0 if y is None else y[0]
    out = cuda.to_device(np.zeros(1))
    k[1, 1](out)
    assert out.copy_to_host()[0] == -1.0
    k[1, 1](out, np.full(1, 6.0))
    assert out.copy_to_host()[0] == 6.0


def test_none_passed_on_to_a_device_function():
    @cuda.jit(device=True)
    def get(y, i):
        if y is None:
            return -1.0
        return y[i]

    @cuda.jit
    def k(out, y=None):
        out[0] = get(y, 0)
    out = cuda.to_device(np.zeros(1))
    k[1, 1](out)
    assert out.copy_to_host()[0] == -1.0
    k[1, 1](out, np.full(1, 5.0))
    assert out.copy_to_host()[0] == 5.0


def _index_it(out, y=None):
    out[0] = y[0]


def _assign_it(out, y=None):
    z = y
    out[0] = 1


def _add_to_it(out, y=None):
    out[0] = y + 1


@pytest.mark.parametrize("pyfunc, line", [(_index_it, "out[0] = y[0]"),
                                          (_assign_it, "z = y"),
                                          (_add_to_it, "out[0] = y + 1")])
def test_other_uses_of_a_none_parameter_are_typingerrors_naming_it(pyfunc, line):
    out = cuda.to_device(np.full(1, 3.0))
    with pytest.raises(cuda.TypingError) as ei:
        cuda.jit(pyfunc)[1, 1](out)
    msg = str(ei.value)
    assert f"parameter 'y' of {pyfunc.__name__} is None here" in msg, msg
    assert "'y is None' / 'y is not None'" in msg and line in msg
    assert out.copy_to_host()[0] == 3.0


def test_a_none_parameter_of_a_device_function_used_as_a_value_names_it():
    @cuda.jit(device=True)
    def plus(x, y):
        return x + y

    @cuda.jit
    def k(out):
        out[0] = plus(1.0, None)
    with pytest.raises(cuda.TypingError, match="parameter 'y' of .*plus is None here"):
        k[1, 1](cuda.to_device(np.zeros(1)))


def test_a_tuple_holding_none_is_typeerror():
    @cuda.jit
    def k(out, t):
        out[0] = 1
    with pytest.raises(TypeError, match=r"argument 1 of kernel \S*k: cannot pass a tuple holding "
                                        r"None \(\(1, None\)\) to a kernel"):
        k[1, 1](cuda.to_device(np.zeros(1)), (1, None))


def test_typeof_none_is_none():
    assert ct.typeof(None) is ct.none


def test_nothing_is_packed_for_none():
    arr = ct.float64[::1]
    assert param_layout(ct.none, "a1") == []
    assert flatten_argtypes((arr, ct.none)) == flatten_argtypes((arr,))
    packer = ArgPacker((ct.int32, ct.none, ct.int64))
    assert packer.nparams == 2
    packer.pack((7, None, 9))
    assert packer.values() == (7, 9)


@pytest.mark.compile
def test_compiled_kernel_has_no_parameter_for_none_and_keeps_one_branch():
    sig_none = (ct.float64[::1], ct.float64[::1], ct.none)
    sig_arr = (ct.float64[::1], ct.float64[::1], ct.float64[::1])
    lowered = compile_to_llvm(add_optional.py_func, sig_none)
    assert len(lowered.param_types) == len(flatten_argtypes(sig_none[:2]))
    ptx_none, _ = cuda.compile_ptx(add_optional.py_func, sig_none)
    ptx_arr, _ = cuda.compile_ptx(add_optional.py_func, sig_arr)
    entry = re.compile(r"\.entry\s+\w+\s*\((.*?)\)", re.S)
    n_none = entry.search(ptx_none).group(1).count(".param")
    n_arr = entry.search(ptx_arr).group(1).count(".param")
    assert n_arr - n_none == 3          # y's pointer, shape and stride
    # y is None: the +100.0 branch stays (0x4059000000000000), y's load is gone
    assert "0d4059000000000000" in ptx_none and "0d4059000000000000" not in ptx_arr
    assert ptx_none.count("ld.global.f64") == 1 and ptx_arr.count("ld.global.f64") == 2


@pytest.mark.gpu
def test_fast_path_tells_none_from_an_array():
    """Warm launches alternate None and an array: the fast path guards the type of each."""
    out = cuda.to_device(np.zeros(8))
    x = cuda.to_device(X)
    for _ in range(4):
        add_optional[1, 8](out, x)
        np.testing.assert_array_equal(out.copy_to_host(), X + 100)
        add_optional[1, 8](out, x, x)
        np.testing.assert_array_equal(out.copy_to_host(), 2 * X)
