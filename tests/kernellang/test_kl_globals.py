"""Device arrays and ``__cuda_array_interface__`` objects captured as globals or closure
variables, read and written by kernels (numba-cuda supports this; the array is frozen when
the kernel is compiled)."""
import numpy as np
import pytest

import cujit as cuda

from _kl_helpers import ptx_of


class CAIWrapper:
    """An object that only exposes ``__cuda_array_interface__`` (like a CuPy array)."""

    def __init__(self, dev):
        self._dev = dev

    @property
    def __cuda_array_interface__(self):
        return self._dev.__cuda_array_interface__


# set by _make_globals (not at import: no device memory while tests are collected)
G_DEV = G_CAI_BACK = G_CAI = None


def _make_globals():
    global G_DEV, G_CAI_BACK, G_CAI
    G_DEV = cuda.to_device(np.arange(4.0))
    G_CAI_BACK = cuda.to_device(np.zeros(3, np.int32))
    G_CAI = CAIWrapper(G_CAI_BACK)


def use_globals(r):
    i = cuda.grid(1)
    if i < G_DEV.size:
        r[i] = G_DEV[i] * 2
        G_DEV[i] = i + 10.0
    if i < 3:
        G_CAI[i] = i * 3


def test_global_device_array_and_cai_object_read_and_written():
    r = np.zeros(4)
    _make_globals()
    cuda.jit(use_globals)[1, 4](r)
    np.testing.assert_array_equal(r, [0, 2, 4, 6])
    np.testing.assert_array_equal(G_DEV.copy_to_host(), [10, 11, 12, 13])
    np.testing.assert_array_equal(G_CAI_BACK.copy_to_host(), [0, 3, 6])


def make_closure_kernel():
    dev = cuda.to_device(np.array([1.0, 2.0, 3.0]))

    def k(r):
        i = cuda.grid(1)
        if i < dev.shape[0]:
            r[i] = dev[i] + 1
            dev[i] = -1.0
    return k, dev


def test_closure_device_array_read_and_written():
    k, dev = make_closure_kernel()
    r = np.zeros(3)
    cuda.jit(k)[1, 3](r)
    np.testing.assert_array_equal(r, [2, 3, 4])
    np.testing.assert_array_equal(dev.copy_to_host(), [-1, -1, -1])


@pytest.mark.compile
def test_captured_device_arrays_compile():
    _make_globals()
    assert ".entry" in ptx_of(use_globals, np.zeros(4))
    k, _ = make_closure_kernel()
    assert ".entry" in ptx_of(k, np.zeros(3))


def make_device_function_capture():
    table = cuda.to_device(np.array([5.0, 6.0]))
    wrapped = CAIWrapper(cuda.to_device(np.zeros(2)))

    @cuda.jit(device=True)
    def lookup(i):
        wrapped[i] = table[i] + 1
        return table[i]

    def k(r):
        i = cuda.grid(1)
        if i < 2:
            r[i] = lookup(i)
    return k, wrapped


def test_device_function_captured_arrays():
    k, wrapped = make_device_function_capture()
    r = np.zeros(2)
    cuda.jit(k)[1, 2](r)
    np.testing.assert_array_equal(r, [5.0, 6.0])
    np.testing.assert_array_equal(wrapped._dev.copy_to_host(), [6.0, 7.0])


@pytest.mark.compile
def test_device_function_captured_arrays_compile():
    k, _ = make_device_function_capture()
    assert ".entry" in ptx_of(k, np.zeros(2))


def test_cache_key_refuses_a_kernel_referring_to_device_arrays():
    # numba's rule: the array's address is frozen into the code, so such a kernel is not
    # cached (it was keyed by the address before, so each allocation made a new entry)
    import pickle
    from cujit import types as T
    from cujit.dispatch.cache import cache_key
    _make_globals()
    with pytest.raises(pickle.PicklingError, match="global device arrays"):
        cache_key(use_globals, (T.float64[::1],), {}, (9, 0))