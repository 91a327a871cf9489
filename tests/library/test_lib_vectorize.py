"""cujit.vectorize(target='cuda'): numba's CUDA ufuncs (R-LIB-2).  Unmarked tests run on the
active backend (simulator here, the GPU on the device machine)."""
import numpy as np
import pytest

import cujit as cuda


@cuda.vectorize(["float32(float32, float32, float32)", "float64(float64, float64, float64)"],
                target="cuda")
def axpy(a, x, y):
    return a * x + y


@cuda.jit(device=True)
def _square(v):
    return v * v


@cuda.vectorize(["float64(float64)", "int64(int64)"])
def square_plus_one(v):
    return _square(v) + 1


@cuda.vectorize(target="cuda")
def lazy_add(a, b):
    return a + b


def test_host_arrays_in_host_array_out():
    x = np.arange(10, dtype=np.float32)
    y = np.ones(10, np.float32)
    r = axpy(np.float32(2), x, y)
    assert isinstance(r, np.ndarray) and r.dtype == np.float32
    np.testing.assert_array_equal(r, 2 * x + y)


def test_python_scalar_takes_the_arrays_signature():
    x = np.arange(6, dtype=np.float64)
    r = axpy(0.5, x, 1.0)
    assert r.dtype == np.float64
    np.testing.assert_array_equal(r, 0.5 * x + 1.0)


def test_device_arrays_in_device_array_out():
    x = np.arange(8, dtype=np.float32)
    dx = cuda.to_device(x)
    r = axpy(3.0, dx, x)
    assert isinstance(r, cuda.DeviceNDArray)
    np.testing.assert_array_equal(r.copy_to_host(), 3 * x + x)


def test_broadcasting_like_numpy():
    a = np.arange(12, dtype=np.float64).reshape(3, 4)
    row = np.arange(4, dtype=np.float64)
    col = np.arange(3, dtype=np.float64).reshape(3, 1)
    np.testing.assert_array_equal(axpy(2.0, a, row), 2 * a + row)
    np.testing.assert_array_equal(axpy(col, a, row), col * a + row)
    d = axpy(2.0, cuda.to_device(a), cuda.to_device(col))
    np.testing.assert_array_equal(d.copy_to_host(), 2 * a + col)


def test_non_contiguous_inputs():
    a = np.arange(20, dtype=np.float64).reshape(4, 5)
    np.testing.assert_array_equal(axpy(1.0, a.T, 2.0), a.T + 2.0)
    np.testing.assert_array_equal(axpy(1.0, a[:, ::2], a[:, 1::2][:, :1]),
                                  a[:, ::2] + a[:, 1::2][:, :1])


def test_out_host_and_device():
    x = np.arange(5, dtype=np.float32)
    out = np.zeros(5, np.float32)
    assert axpy(2.0, x, x, out=out) is out
    np.testing.assert_array_equal(out, 3 * x)
    dout = cuda.device_array(5, np.float32)
    assert axpy(1.0, x, x, out=dout) is dout
    np.testing.assert_array_equal(dout.copy_to_host(), 2 * x)


def test_stream():
    s = cuda.stream()
    x = cuda.to_device(np.arange(100, dtype=np.float64), stream=s)
    r = axpy(2.0, x, 1.0, stream=s)
    s.synchronize()
    np.testing.assert_array_equal(r.copy_to_host(), 2 * np.arange(100.0) + 1)


def test_device_function_composes_and_several_signatures():
    np.testing.assert_array_equal(square_plus_one(np.arange(5)), np.arange(5) ** 2 + 1)
    assert square_plus_one(np.arange(5)).dtype == np.int64
    np.testing.assert_array_equal(square_plus_one(np.array([0.5])), [1.25])
    assert square_plus_one.types == ["d->d", "l->l"] and square_plus_one.ntypes == 2
    assert square_plus_one.nin == 1 and square_plus_one.nout == 1


def test_lazy_signatures_use_the_compilers_types():
    r = lazy_add(np.arange(4, dtype=np.int32), np.int32(3))
    assert r.dtype == np.int64                  # Numba: int32 + int32 -> int64
    np.testing.assert_array_equal(r, np.arange(4) + 3)
    r = lazy_add(np.arange(3, dtype=np.float32), np.arange(3, dtype=np.float32))
    assert r.dtype == np.float32
    assert lazy_add(1, 2) == 3


def test_all_scalars_give_a_one_element_array():
    """As numba's CUDA ufuncs, which run on ``np.array([x])`` (numba's test_scalar)."""
    r = axpy(np.float64(2.0), 3.0, 1.0)
    assert isinstance(r, np.ndarray) and r.shape == (1,) and r.dtype == np.float64
    assert r[0] == 7.0
    # Python floats are float64 first
    r = axpy(1.2, 2.3, 0.5)
    assert r.shape == (1,) and r[0] == 1.2 * 2.3 + 0.5 and r.dtype == np.float64


def test_tuples_and_namedtuples_are_arrays():
    from collections import namedtuple
    P = namedtuple("P", "x y z")
    r = axpy(1.0, (1.0, 2.0, 3.0), P(4.0, 5.0, 6.0))
    np.testing.assert_array_equal(r, [5.0, 7.0, 9.0])
    arr = np.arange(10, dtype=np.int64)
    np.testing.assert_array_equal(square_plus_one((arr, arr + 1)),
                                  np.array([arr, arr + 1]) ** 2 + 1)


@pytest.mark.parametrize("nd", [2, 3, 5, 7])
@pytest.mark.parametrize("order", ["C", "F"])
def test_nd_and_fortran_order(nd, order):
    rng = np.random.default_rng(nd)
    data = rng.random((3,) * nd)
    data2 = np.array(data.T, order=order)
    np.testing.assert_array_equal(axpy(1.0, data, data2), data + data2)


def test_int32_reduce_keeps_dtype():
    @cuda.vectorize(["int32(int32, int32)", "float32(float32, float32)"])
    def vector_add(a, b):
        return a + b
    for n in (8, 100, 1025):
        r = vector_add.reduce(np.arange(n, dtype=np.int32))
        assert r == n * (n - 1) // 2 and r.dtype == np.int32


def test_empty_arrays():
    r = axpy(1.0, np.zeros(0, np.float32), np.zeros(0, np.float32))
    assert r.shape == (0,) and r.dtype == np.float32


def test_reduce_method():
    assert lazy_add.reduce(np.arange(1000, dtype=np.float64)) == 499500.0
    with pytest.raises(ValueError, match="zero-size"):
        lazy_add.reduce(np.zeros(0))
    with pytest.raises(TypeError, match="binary"):
        square_plus_one.reduce(np.arange(3.0))


def test_lambda_ufunc():
    twice = cuda.vectorize(["float64(float64)"])(lambda v: 2 * v)
    np.testing.assert_array_equal(twice(np.arange(3.0)), [0.0, 2.0, 4.0])


# ---- errors ----

def test_shape_mismatch_is_valueerror():
    with pytest.raises(ValueError, match="broadcast"):
        axpy(1.0, np.zeros(3, np.float32), np.zeros(4, np.float32))


def test_no_exact_signature_is_typeerror():
    with pytest.raises(TypeError, match="No matching version"):
        axpy(1.0, np.zeros(3, np.int32), np.zeros(3, np.int32))
    with pytest.raises(TypeError, match="No matching version"):
        axpy(1.0, np.zeros(3, np.float32), np.zeros(3, np.float64))


def test_ambiguous_scalars_are_typeerror():
    with pytest.raises(TypeError, match="ambiguous"):
        square_plus_one(np.float32(2.0))      # neither float64 nor int64: both by casting


def test_wrong_number_of_inputs():
    with pytest.raises(TypeError, match="takes 3 input"):
        axpy(1.0, np.zeros(3))


def test_bad_out():
    x = np.zeros(3, np.float32)
    with pytest.raises(ValueError, match="shape"):
        axpy(1.0, x, x, out=np.zeros(4, np.float32))
    with pytest.raises(TypeError, match="dtype"):
        axpy(1.0, x, x, out=np.zeros(3, np.float64))
    with pytest.raises(TypeError, match="out must be"):
        axpy(1.0, x, x, out=[0.0, 0.0, 0.0])
    ro = np.zeros(3, np.float32)
    ro.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        axpy(1.0, x, x, out=ro)


def test_bad_stream_and_args():
    x = np.zeros(3, np.float32)
    with pytest.raises(TypeError):
        axpy(1.0, x, x, stream="s")
    with pytest.raises(TypeError, match="arrays or scalars"):
        axpy(1.0, x, {"a": 1})


def test_bad_target_and_signature():
    with pytest.raises(ValueError, match="target='cuda'"):
        cuda.vectorize(["float32(float32)"], target="cpu")
    with pytest.raises(TypeError, match="argument"):
        cuda.vectorize(["float32(float32)"])(lambda a, b: a + b)
    with pytest.raises(TypeError, match="scalar"):
        cuda.vectorize(["float32(float32[:])"])(lambda a: a)


@pytest.mark.compile
def test_flat_kernel_ptx_is_the_hand_written_one():
    """Same-shape contiguous arrays go through one flat index: the axpy PTX has one fma, two
    loads and one store, no division (the index is not unravelled)."""
    from cujit import types as ct
    from cujit.dispatch.dispatcher import compile_ptx
    k = axpy._kernel(axpy._sigs[0], 1, ("s", "f", "f"))
    ptx, _ = compile_ptx(k, (ct.float32, ct.float32[::1], ct.float32[::1], ct.float32[::1]))
    assert ptx.count("ld.global.f32") == 2 and ptx.count("st.global.f32") == 1
    assert "fma.rn.f32" in ptx and "div" not in ptx and "rem" not in ptx


class _CAI:
    """A foreign device array: only ``__cuda_array_interface__`` (like CuPy's)."""

    def __init__(self, d):
        self._d = d
        self.__cuda_array_interface__ = d.__cuda_array_interface__


def test_cuda_array_interface_objects_in_and_out():
    x = np.arange(6, dtype=np.float32)
    dx = cuda.to_device(x)
    r = axpy(2.0, _CAI(dx), x)
    assert isinstance(r, cuda.DeviceNDArray)
    np.testing.assert_array_equal(r.copy_to_host(), 3 * x)
    out = cuda.device_array(6, np.float32)
    axpy(1.0, x, x, out=_CAI(out))
    np.testing.assert_array_equal(out.copy_to_host(), 2 * x)
    assert cuda.reduce(lambda a, b: a + b)(_CAI(dx)) == x.sum()


def test_strided_device_out():
    base = cuda.to_device(np.zeros((4, 6), np.float64))
    view = base[:, ::2]
    a = np.arange(12, dtype=np.float64).reshape(4, 3)
    assert axpy(2.0, a, 1.0, out=view) is view
    h = base.copy_to_host()
    np.testing.assert_array_equal(h[:, ::2], 2 * a + 1)
    assert (h[:, 1::2] == 0).all()


def test_inputs_broadcast_up_to_out_as_numpy():
    out = np.zeros((3, 4), np.float64)
    axpy(2.0, np.arange(4.0), 1.0, out=out)
    np.testing.assert_array_equal(out, np.broadcast_to(2 * np.arange(4.0) + 1, (3, 4)))
    with pytest.raises(ValueError, match="shape"):
        axpy(2.0, np.zeros((3, 4)), 1.0, out=np.zeros(4))      # out never broadcasts


def test_zero_dimensional_arrays_are_scalars():
    x = np.arange(4, dtype=np.float32)
    np.testing.assert_array_equal(axpy(np.array(2.0, np.float32), x, x), 3 * x)
    d0 = cuda.to_device(np.array(3.0, np.float32))
    np.testing.assert_array_equal(axpy(d0, x, x).copy_to_host(), 4 * x)


def test_signature_of_argument_types_only_gets_the_inferred_return_type():
    from cujit import types as T

    @cuda.vectorize([(T.int32, T.int32), (T.float32, T.float32)], target="cuda")
    def add(a, b):
        return a + b

    assert add.types == ["ii->l", "ff->f"]
    np.testing.assert_array_equal(add(np.arange(3, dtype=np.int32), np.int32(1)), [1, 2, 3])
