"""numba-cuda programs ported unchanged: numba-cuda's documentation example "globals
are captured as constants" (doc_examples/test_globals.py) changes a global NumPy array after
the first launch; numba (and cujit on a GPU: constant memory) keeps the values of the first
compilation, but cujit's simulator read the array live and printed the new totals.  The
simulator now freezes a captured host array when it types the kernel for a signature."""
import numpy as np

import cujit as cuda

PRICES = np.array([10.0, 25.0, 5.0, 15.0, 30.0])
TAX_RATE = 0.08
SCALE = np.array([2.0, 3.0])


@cuda.jit
def compute_totals(quantities, totals):
    i = cuda.grid(1)
    if i < totals.size:
        totals[i] = quantities[i] * PRICES[i] * (1 + TAX_RATE)


def test_host_array_global_keeps_its_first_compile_values():
    global TAX_RATE
    saved = PRICES.copy(), TAX_RATE
    try:
        q = cuda.to_device(np.array([1.0, 2.0, 3.0, 4.0, 5.0]))
        totals = cuda.device_array(5)
        compute_totals[1, 32](q, totals)
        TAX_RATE = 0.10
        PRICES[:] = [20.0, 50.0, 10.0, 30.0, 60.0]
        compute_totals[1, 32](q, totals)
        np.testing.assert_allclose(totals.copy_to_host(), [10.8, 54.0, 16.2, 64.8, 162.0])
        # a new specialisation is a new compilation: it captures the values of now
        q32 = cuda.to_device(np.ones(5, np.float32))
        compute_totals[1, 32](q32, totals)
        np.testing.assert_allclose(totals.copy_to_host(), [22.0, 55.0, 11.0, 33.0, 66.0])
    finally:
        PRICES[:] = saved[0]
        TAX_RATE = saved[1]


@cuda.jit(device=True)
def _scaled(x, k):
    return x * SCALE[k]


def _make(table):
    @cuda.jit
    def kernel(out):
        i = cuda.grid(1)
        if i < out.size:
            out[i] = _scaled(table[i], i)
    return kernel


def test_device_function_global_and_closure_array_are_frozen_too():
    saved = SCALE.copy()
    try:
        table = np.array([1.0, 1.0])
        k = _make(table)
        out = np.zeros(2)
        k[1, 2](out)
        SCALE[:] = 100
        table[:] = 7
        k[1, 2](out)
        assert out.tolist() == [2.0, 3.0]
    finally:
        SCALE[:] = saved


DEVICE_PRICES = None


def test_device_array_global_is_read_in_place():
    # the doc example's second half: a captured device array is a pointer, not a copy
    global DEVICE_PRICES
    DEVICE_PRICES = cuda.to_device(np.array([10.0, 25.0, 5.0], np.float32))
    try:
        out = cuda.device_array(3, np.float32)
        _read_device_prices[1, 32](out)
        DEVICE_PRICES[:] = np.array([20.0, 50.0, 10.0], np.float32)
        _read_device_prices[1, 32](out)
        assert out.copy_to_host().tolist() == [20.0, 50.0, 10.0]
    finally:
        DEVICE_PRICES = None


@cuda.jit
def _read_device_prices(out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = DEVICE_PRICES[i]


MAPPED = None


@cuda.jit
def _read_mapped(out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = MAPPED[i]


def test_mapped_array_global_is_a_constant_too():
    # a mapped array is an np.ndarray: typed as a constant array (read-only), so its values
    # are those of the compilation on both backends
    global MAPPED
    MAPPED = cuda.mapped_array(3, np.float64)
    try:
        MAPPED[:] = [1.0, 2.0, 3.0]
        out = np.zeros(3)
        _read_mapped[1, 3](out)
        MAPPED[:] = 0
        _read_mapped[1, 3](out)
        assert out.tolist() == [1.0, 2.0, 3.0]
    finally:
        MAPPED = None
