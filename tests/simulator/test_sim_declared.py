"""Declared device functions (``cuda.declare_device``) on the simulator: the ``sim=``
Python implementation runs per thread; without one, the launch fails naming the function."""
import numpy as np
import pytest

import cujit as cuda

pytestmark = pytest.mark.sim


def test_sim_implementation_runs_with_the_declared_types():
    calls = []

    def mul_impl(x, y):
        calls.append((type(x), type(y)))
        return x * y
    mul = cuda.declare_device("mul_f32_f32", "float32(float32, float32)",
                              link=cuda.CUSource("/* not compiled on the simulator */"),
                              sim=mul_impl)

    @cuda.jit
    def k(r, x, y):
        i = cuda.grid(1)
        if i < len(r):
            r[i] = mul(x[i], y[i])
    x = np.arange(16, dtype=np.float32)
    r = np.zeros_like(x)
    k[2, 8](r, x, x + 1)
    np.testing.assert_array_equal(r, x * (x + 1))
    assert len(calls) == 16


def test_simulator_decorator_sets_the_implementation():
    clamp = cuda.declare_device("clamp_i32", "int32(int32)", abi="c")

    @clamp.simulator
    def _(v):
        return min(v, 5)

    @cuda.jit
    def k(r):
        i = cuda.grid(1)
        r[i] = clamp(i)
    r = np.zeros(8, dtype=np.int32)
    k[1, 8](r)
    np.testing.assert_array_equal(r, np.minimum(np.arange(8), 5))


def test_result_is_converted_to_the_declared_type():
    half = cuda.declare_device("half_i", "int32(float64)", sim=lambda v: v / 2)

    @cuda.jit
    def k(r):
        r[0] = half(7.0) + 1

    r = np.zeros(1, dtype=np.float64)
    k[1, 1](r)
    assert r[0] == 4.0      # int32(3.5) == 3, then + 1


def test_without_implementation_the_launch_names_the_function():
    ext = cuda.declare_device("gpu_only_fn", "float32(float32)", link="gpu_only.cu")

    @cuda.jit
    def k(r):
        r[0] = ext(r[0])
    with pytest.raises(NotImplementedError, match="gpu_only_fn has no Python implementation"):
        k[1, 1](np.zeros(1, dtype=np.float32))
