"""The simulator must run kernels that are valid on a GPU with the GPU's result."""
import cmath

import numpy as np
import pytest

import cujit as cuda


@cuda.jit
def _plus_one_into(x, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = x[i] + 1


def test_narrowing_integer_store_wraps_as_on_the_gpu():
    # The simulator raised NumPy's OverflowError ("Python integer 301 out of bounds for
    # int8"); a compiled kernel truncates (LLVM trunc), as Numba does.  Fixed in the checked
    # arrays; with CUJIT_SIM_CHECKS=0 the simulator hands kernels bare NumPy arrays and still
    # raises (known limitation, see the user-trial report).
    cuda.config.SIM_CHECKS = True
    x = np.full(3, 300, np.int64)
    out = np.zeros(3, np.int8)
    _plus_one_into[1, 4](x, out)
    assert (out == np.int8(301 - 256)).all()


@cuda.jit
def _mapped_write(m):
    i = cuda.grid(1)
    if i < m.size:
        m[i] = i * 3


def test_mapped_and_managed_arrays_written_by_a_kernel_are_seen_on_the_host():
    for make in (cuda.mapped_array, cuda.managed_array):
        m = make(16, dtype=np.int32)
        m[:] = -1
        _mapped_write[1, 32](m)
        cuda.synchronize()
        assert (np.asarray(m) == np.arange(16) * 3).all(), make.__name__


@cuda.jit
def _cmath_poles(z, out):
    out[0] = cmath.log(z[0])
    out[1] = cmath.log10(z[0])


def test_cmath_at_its_poles_gives_c99_values_instead_of_raising():
    # Python's cmath raises ValueError at log(0); the GPU (log of the modulus, atan2 of the
    # parts) and NumPy give -inf+0j, so the simulator failed numba-cuda's complex log tests
    out = np.zeros(2, np.complex128)
    _cmath_poles[1, 1](np.array([0j]), out)
    assert out.tolist() == [complex(-np.inf, 0.0)] * 2
