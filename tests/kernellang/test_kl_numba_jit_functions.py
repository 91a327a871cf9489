"""Numba CPU-JIT functions (``numba.jit`` / ``njit``: a ``CPUDispatcher``) called from kernels
compile as device functions from their Python function, as numba-cuda documents ("CPU-GPU
compatibility").  cujit recognises them duck-typed (class module under ``numba``, a
``py_func``) and never imports numba: a stand-in class shaped like CPUDispatcher runs the
tests without numba; the last test uses real numba when it is installed."""
import math

import numpy as np
import pytest

import cujit as cuda
from cujit.numba_types import numba_jit_function

from _kl_helpers import ptx_of


class CPUDispatcher:
    """Shaped like ``numba.core.registry.CPUDispatcher``: ``py_func`` and ``targetoptions``;
    calling it runs the function (Numba would compile it for the CPU first)."""
    def __init__(self, py_func, **targetoptions):
        self.py_func = py_func
        self.targetoptions = {"nopython": True, **targetoptions}
        self.calls = 0

    def __call__(self, *args):
        self.calls += 1
        return self.py_func(*args)


CPUDispatcher.__module__ = "numba.core.registry"


def _business_logic(x, y, z):
    return 4 * z * (2 * x - (4 * y) / 2 * math.pi)


business_logic = CPUDispatcher(_business_logic)
reciprocal = CPUDispatcher(lambda x: 1.0 / x)


def _scaled(x):
    return business_logic(x, 1, 1) * 2        # a jit function calling a jit function


scaled = CPUDispatcher(_scaled, inline="always")


def k_compat(res, xarr, yarr, zarr):
    tid = cuda.grid(1)
    if tid < len(xarr):
        res[tid] = business_logic(xarr[tid], yarr[tid], zarr[tid])


def test_numba_jit_function_runs_in_a_kernel_as_on_the_cpu():
    # numba-cuda's docs example (tests/doc_examples/test_cpu_gpu_compat.py)
    X, Y, Z = np.array([1, 10, 234]), np.array([2, 2, 4014]), np.array([3, 14, 2211])
    results = np.zeros(3)
    cuda.jit(k_compat).forall(len(X))(results, X, Y, Z)
    expect = [_business_logic(x, y, z) for x, y, z in zip(X, Y, Z)]
    np.testing.assert_equal(results, expect)
    assert business_logic.calls == 0      # compiled from py_func, never called as an object


def k_nested(out, x):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = scaled(x[i])


def test_numba_jit_function_calling_another_runs_in_a_kernel():
    x = np.arange(4, dtype=np.int64)
    out = np.zeros(4)
    cuda.jit(k_nested)[1, 4](out, x)
    np.testing.assert_equal(out, [_scaled(v) for v in x])


def test_numba_jit_function_is_recognised_by_its_class_and_py_func():
    assert numba_jit_function(business_logic) is _business_logic
    assert numba_jit_function(_business_logic) is None           # a plain function
    assert numba_jit_function(CPUDispatcher) is None             # the class itself
    no_py_func = type("CPUDispatcher", (), {"__module__": "numba.core.registry"})()
    assert numba_jit_function(no_py_func) is None
    elsewhere = type("CPUDispatcher", (), {"__module__": "mylib"})()
    elsewhere.py_func = _business_logic
    assert numba_jit_function(elsewhere) is None


@pytest.mark.compile
def test_numba_jit_function_compiles_to_a_device_function():
    from cujit.nvvm.lowering import compile_to_llvm
    ir = compile_to_llvm(k_nested, (cuda.float64[::1], cuda.int64[::1])).llvm_ir
    defs = [ln for ln in ir.splitlines() if ln.startswith("define internal")]
    # its inline="always" lowers _scaled into the kernel (no definition of its own), as
    # numba-cuda inlines it before LLVM; the function it calls keeps its own
    assert len(defs) == 1
    assert "_business_logic" in defs[0] and "alwaysinline" not in defs[0]
    assert ".entry" in ptx_of(k_nested, np.zeros(4), np.arange(4, dtype=np.int64))


def k_via_device(out, x):
    out[0] = as_device(x[0])


def _triple(x):
    return 3 * x


as_device = cuda.jit(device=True)(CPUDispatcher(_triple))


def test_cuda_jit_of_a_numba_jit_function_compiles_its_python_function():
    assert as_device.py_func is _triple
    out = np.zeros(1)
    cuda.jit(k_via_device)[1, 1](out, np.array([2.5]))
    assert out[0] == 7.5


def test_real_numba_jit_function_runs_in_a_kernel():
    numba = pytest.importorskip("numba")

    @numba.njit
    def hypot_sq(x, y):
        return x * x + y * y

    def k(out, x, y):
        i = cuda.grid(1)
        if i < x.size:
            out[i] = hypot_sq(x[i], y[i])
    x, y = np.arange(5.0), np.arange(5.0) + 1
    out = np.zeros(5)
    cuda.jit(k)[1, 8](out, x, y)
    np.testing.assert_equal(out, x * x + y * y)
    assert hypot_sq(3.0, 4.0) == 25.0      # still Numba's CPU function


def _add(a, b):
    return a + b


signature_only = CPUDispatcher(_add)
signature_only._can_compile = False       # numba.jit("(i4, i4)"): explicit signatures only


def k_signature_only(out):
    out[0] = signature_only(1, 2)


def test_numba_jit_function_with_explicit_signatures_is_refused():
    # numba-cuda: "using cpu function on device but its compilation is disabled"
    with pytest.raises(cuda.TypingError, match="Untyped global name 'signature_only': using "
                                               "cpu function on device but its compilation "
                                               "is disabled"):
        cuda.jit(k_signature_only)[1, 1](np.zeros(1))
