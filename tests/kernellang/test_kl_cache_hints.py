"""Cache-hinted loads and stores (cuda.ldca … ldcv, stcg … stwt): the PTX carries each cache
operator at the element's width; values on the simulator (and GPU) are the indexing
access's; numba's typing errors."""
import numpy as np
import pytest

import cujit as cuda
from cujit import types as T

LOADS = ((cuda.ldca, "ca"), (cuda.ldcg, "cg"), (cuda.ldcs, "cs"), (cuda.ldlu, "lu"),
         (cuda.ldcv, "cv"))
STORES = ((cuda.stcg, "cg"), (cuda.stcs, "cs"), (cuda.stwb, "wb"), (cuda.stwt, "wt"))
DTYPES = (np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64,
          np.float16, np.float32, np.float64)


@pytest.mark.compile
@pytest.mark.parametrize("load,op", LOADS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_load_ptx_has_the_cache_operator(load, op, dtype):
    def f(r, x):
        for i in range(x.shape[0]):
            for j in range(x.shape[1]):
                r[i, j] = load(x, (i, j))
    ty = T.from_dtype(np.dtype(dtype))
    ptx, _ = cuda.compile_ptx(f, (ty[:, ::1], ty[:, ::1]))
    assert f"ld.global.{op}.b{np.dtype(dtype).itemsize * 8}" in ptx


@pytest.mark.compile
@pytest.mark.parametrize("store,op", STORES)
@pytest.mark.parametrize("dtype", DTYPES)
def test_store_ptx_has_the_cache_operator(store, op, dtype):
    def f(r, x):
        for i in range(x.shape[0]):
            store(r, i, x[i])
    ty = T.from_dtype(np.dtype(dtype))
    ptx, _ = cuda.compile_ptx(f, (ty[::1], ty[::1]))
    assert f"st.global.{op}.b{np.dtype(dtype).itemsize * 8}" in ptx


@pytest.mark.parametrize("dtype", (np.int8, np.uint16, np.float16, np.float64))
def test_hinted_copies_move_the_values(dtype):
    @cuda.jit
    def copy2d(r, x):
        for i in range(x.shape[0]):
            for j in range(x.shape[1]):
                cuda.stwb(r, (i, j), cuda.ldcv(x, (i, j)) + cuda.ldca(x, (i, -1)))

    x = np.arange(12).reshape(3, 4).astype(dtype)
    r = np.zeros_like(x)
    copy2d[1, 1](r, x)
    np.testing.assert_equal(r, x + x[:, -1:])


def test_hinted_store_out_of_bounds_is_caught_on_the_simulator():
    if not cuda.config.ENABLE_CUDASIM:
        pytest.skip("bounds checks are the simulator's")
    from cujit.simulator.errors import OutOfBoundsError

    @cuda.jit
    def past_the_end(out):
        cuda.stcs(out, 4, 1.0)

    with pytest.raises(OutOfBoundsError):
        past_the_end[1, 1](np.zeros(4, np.float32))


@pytest.mark.parametrize("src,sig,msg", [
    ("cuda.ldcs(x, 1.0)", "void(float32[::1])", "float64 is not a valid index"),
    ("cuda.ldcs(x, (1, 2))", "void(float32[::1])", "Expected 1 indices, got 2"),
    ("cuda.ldcs(x, 1)", "void(float32[:, ::1])", "Expected 2 indices, got a scalar"),
    ("cuda.ldcs(x, (1,))", "void(float32[:, ::1])", "Expected 2 indices, got 1"),
    ("cuda.ldcs(x, 0)", "void(complex64[::1])", "ldcs requires array of integer or float type"),
    ("cuda.ldcs(x, 0)", "void(boolean[::1])", "ldcs requires array of integer or float type"),
    ("cuda.ldcg(1.0, 0)", "void(float32[::1])", "ldcg operates on arrays or pointers"),
    ("cuda.ldcg(x)", "void(float32[::1])", "ldcg\\(\\) takes 2 arguments"),
    ("cuda.stcg(x, 0, 1j)", "void(float32[::1])", "stores integers and floats"),
])
def test_typing_errors_are_numbas(src, sig, msg):
    ns = {"cuda": cuda}
    exec(f"def f(x):\n    {src}\n", ns)
    with pytest.raises(cuda.TypingError, match=msg):
        cuda.compile_ptx(ns["f"], sig)


def test_store_into_a_read_only_array_is_refused():
    ro = np.arange(4.0)
    ro.flags.writeable = False

    @cuda.jit
    def write_const(out):
        cuda.stcg(out, 0, 1.0)

    with pytest.raises(cuda.TypingError, match="read-only"):
        write_const[1, 1](ro)


def test_host_functions_index_like_the_kernel():
    a = np.arange(6.0).reshape(2, 3)
    assert cuda.ldcg(a, (1, -1)) == 5.0
    cuda.stwt(a, (0, 0), 9.0)
    assert a[0, 0] == 9.0


@pytest.mark.gpu
def test_hinted_loads_and_stores_on_the_gpu():
    @cuda.jit
    def f(r, x):
        i = cuda.grid(1)
        if i < x.shape[0]:
            cuda.stcg(r, i, cuda.ldcs(x, i) * 2)

    x = np.arange(64, dtype=np.float32)
    r = np.zeros_like(x)
    f[1, 64](r, x)
    np.testing.assert_equal(r, 2 * x)


def test_keyword_arguments_to_a_hint_are_a_typing_error():
    def kw(x):
        cuda.ldcg(x, i=0)

    with pytest.raises(cuda.TypingError, match="ldcg\\(\\) takes no keyword arguments"):
        cuda.compile_ptx(kw, "void(float32[::1])")


def test_hinted_stores_are_race_checked_on_the_simulator():
    if not cuda.config.ENABLE_CUDASIM:
        pytest.skip("race checks are the simulator's")
    from cujit.simulator.errors import DataRaceError

    @cuda.jit
    def racy(out):
        cuda.stwt(out, 0, cuda.grid(1))       # every thread, one element, different values

    with pytest.raises(DataRaceError):
        racy[2, 32](np.zeros(1, np.int64))
