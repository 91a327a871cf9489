"""Values computed by compiled kernels: the numba bug-report cases and Python semantics.

Unmarked tests run on the active backend (the simulator here, the GPU on the device
machine, where they check the code this front end generates); ``gpu`` tests need a GPU."""
import math

import numpy as np
import pytest

import cujit as cuda

import kernels_common

jit = cuda.jit


# ---- case 1: dynamic shared slices use the launch-time length -----------------------------
@jit
def case1(out):
    arr = cuda.shared.array(0, dtype=np.int32)
    a = arr[0:1]
    b = arr[1:2]
    a[0] = 1
    b[0] = 2
    out[0] = a[0]
    out[1] = b[0]
    out[2] = len(arr)
    out[3] = arr[-1]
    out[4] = arr.size


def test_case1_dynamic_shared_slices():
    out = np.zeros(5, np.int32)
    case1[1, 1, 0, 8](out)
    assert out.tolist() == [1, 2, 2, 2, 2]


# ---- seed: aliasing of size-0 shared arrays -----------------------------------------------
@jit
def seed_alias(out_f, out_i):
    f32_arr = cuda.shared.array(0, dtype=np.float32)
    i32_arr = cuda.shared.array(0, dtype=np.int32)
    f32_arr[0] = 3.14
    out_f[0] = f32_arr[0]
    out_i[0] = i32_arr[0]


@jit
def seed_view(out_f, out_i):
    f32_arr = cuda.shared.array(0, dtype=np.float32)
    i32_arr = cuda.shared.array(0, dtype=np.int32)[1:]
    f32_arr[0] = 3.14
    i32_arr[0] = 1
    out_f[0] = f32_arr[0]
    out_i[0] = i32_arr[0]


def test_seed_dynamic_shared_alias_and_view():
    f = np.zeros(1, np.float32)
    i = np.zeros(1, np.int32)
    seed_alias[1, 1, 0, 4](f, i)
    assert f[0] == np.float32(3.14) and i[0] == 1078523331
    seed_view[1, 1, 0, 8](f, i)
    assert f[0] == np.float32(3.14) and i[0] == 1


# ---- case 2: reshape of a static shared array ---------------------------------------------
@jit
def case2(out):
    a = cuda.shared.array((32, 32), dtype=np.int32)
    b = a.reshape((64, 16))
    b[63, 15] = 7
    cuda.syncthreads()
    out[0] = a[31, 31]


def test_case2_reshape_aliases():
    out = np.zeros(1, np.int32)
    case2[1, 1](out)
    assert out[0] == 7


# ---- case 3: dtype from a module global ---------------------------------------------------
G_DTYPE = np.float64


@jit
def case3(out):
    a = cuda.shared.array(0, dtype=G_DTYPE)
    a[0] = 3.14
    out[0] = a[0]


def test_case3_global_dtype():
    out = np.zeros(1, np.float64)
    case3[1, 1, 0, 8](out)
    assert out[0] == 3.14


# ---- case 4: sizes of static shared arrays ------------------------------------------------
@jit
def case4(out):
    a = cuda.shared.array(2, dtype=np.float32)
    b = cuda.shared.array((2, 3), dtype=np.float32)
    out[0] = a.size
    out[1] = b.size
    out[2] = b.shape[0]
    out[3] = b.shape[1]


def test_case4_sizes():
    out = np.zeros(4, np.int64)
    case4[1, 1](out)
    assert out.tolist() == [2, 6, 2, 3]


# ---- case 6: structured shared arrays -----------------------------------------------------
case6 = jit(kernels_common.records_in_shared)


def test_case6_records_in_shared():
    out = np.zeros(3, np.float64)
    case6[1, 1](out)
    assert out.tolist() == [45.0, 45.0, 5.0]


# ---- case 8: local arrays sized by globals ------------------------------------------------
N = 20


@jit
def case8(a, b, out):
    row = cuda.local.array(N, cuda.float32)
    i = cuda.grid(1)
    if i < a.shape[0]:
        for j in range(a.shape[1]):
            row[j] = a[i, j]
        for j in range(b.shape[1]):
            row[a.shape[1] + j] = b[i, j]
        for j in range(N):
            out[i, j] = row[j]


def test_case8_local_hstack():
    a = np.arange(40, dtype=np.float32).reshape(4, 10)
    b = -np.arange(40, dtype=np.float32).reshape(4, 10)
    out = np.zeros((4, 20), np.float32)
    case8[1, 4](a, b, out)
    np.testing.assert_array_equal(out, np.hstack([a, b]))


# ---- cases 9, 10 ---------------------------------------------------------------------------
@jit
def case9(out):
    a = cuda.local.array((5,), cuda.int32)
    z = cuda.local.array((), cuda.int32)
    for i in range(5):
        a[i] = i * i
    z[()] = 9
    out[0] = len(a)
    out[1] = a[4]
    out[2] = z[()]


def test_case9_local_shapes():
    out = np.zeros(3, np.int64)
    case9[1, 1](out)
    assert out.tolist() == [5, 16, 9]


def _dtype_kernel(dt):
    @jit
    def k(out):
        a = cuda.local.array(4, dt)
        s = cuda.shared.array(4, dt)
        a[0] = 1.5
        s[0] = a[0] * 2
        out[0] = s[0]
    return k


@pytest.mark.parametrize("dt", [cuda.float32, np.float32, "float32"], ids=str)
def test_case10_dtype_spellings(dt):
    out = np.zeros(1, np.float32)
    _dtype_kernel(dt)[1, 1](out)
    assert out[0] == 3.0


# ---- cases 11, 12: constant memory --------------------------------------------------------
big_rec = np.zeros(1, dtype=np.dtype([("f", np.float32, (12456,))]))
k32 = (np.arange(32 * 1024) % 127).astype(np.int8)


@jit
def case11(out, i):
    c = cuda.const.array_like(big_rec)
    out[0] = c[0].f[i]


@jit
def case12(out):
    c = cuda.const.array_like(k32)
    i = cuda.grid(1)
    if i < out.size:
        out[i] = c[i]


def test_case11_12_constants():
    out = np.ones(1, np.float32)
    case11[1, 1](out, 12455)
    assert out[0] == 0.0
    out = np.zeros(k32.size, np.int8)
    case12[k32.size // 256, 256](out)
    np.testing.assert_array_equal(out, k32)


# ---- seed: const coefficients, neighbour exchange -----------------------------------------
coefficients = np.array([1.0, 2.0, 3.0], dtype=np.float32)


@jit
def seed_const(x):
    i = cuda.grid(1)
    if i < x.size:
        x[i] = x[i] * cuda.const.array_like(coefficients)[i % 3]


@jit
def seed_neighbour(x):
    sdata = cuda.shared.array(32, dtype=cuda.float32)
    tid = cuda.threadIdx.x
    sdata[tid] = x[tid]
    cuda.syncthreads()
    x[tid] = sdata[(tid + 1) % 32]


def test_seed_const_and_neighbour():
    x = np.ones(10, np.float32)
    seed_const[1, 32](x)
    assert x.tolist() == [1, 2, 3] * 3 + [1]
    x = np.arange(32, dtype=np.float32)
    seed_neighbour[1, 32](x)
    assert x.tolist() == [float((i + 1) % 32) for i in range(32)]


# ---- Python semantics ----------------------------------------------------------------------
@jit
def pysem(ints, floats, a, b, f, g):
    ints[0] = a // b
    ints[1] = a % b
    ints[2] = -a // b
    ints[3] = -a % b
    ints[4] = a ** 3
    ints[5] = 2 ** 10
    ints[6] = ints[-1]
    ints[7] = max(a, b, 4) - min(a, -b)
    floats[0] = f // g
    floats[1] = f % g
    floats[2] = -f % g
    floats[3] = a / b
    floats[4] = f ** 2
    floats[5] = math.sqrt(f) + math.floor(-f)
    floats[6] = round(2.5) + round(3.5)
    floats[7] = 1 < a <= b


def test_python_semantics():
    ints = np.zeros(9, np.int64)
    ints[-1] = 42
    floats = np.zeros(8, np.float64)
    pysem[1, 1](ints, floats, 7, 3, 7.5, 2.0)
    assert ints.tolist()[:8] == [2, 1, -3, 2, 343, 1024, 42, 7 - (-3)]
    assert floats.tolist() == [3.0, 1.5, 0.5, 7 / 3, 56.25, math.sqrt(7.5) - 8, 6.0, 0.0]


loops = jit(kernels_common.loops)


def test_loops():
    out = np.zeros(6, np.int64)
    loops[1, 1](out, 10, -2 + 5)
    assert out.tolist() == [55, 4, 2 + 8 + 11 + 14 + 17 + 20, 23, 112, len(range(10, -10, -3))]


@jit
def views(a, out):
    v = a[1:, ::2]
    out[0] = v[0, 0]
    out[1] = v.shape[0] * 10 + v.shape[1]
    out[2] = a[::-1, -1][0]
    out[3] = a[-1, -2]
    r = a[2]
    out[4] = r[1] + r[2]
    out[5] = a.T[3, 1]


def test_views_and_negative_indices():
    a = np.arange(20, dtype=np.float64).reshape(4, 5)
    out = np.zeros(6, np.float64)
    views[1, 1](a, out)
    assert out.tolist() == [5.0, 33.0, 19.0, 18.0, 11.0 + 12.0, 8.0]


@jit
def atomics(counts, fl, mx):
    i = cuda.grid(1)
    cuda.atomic.add(counts, 0, 1)
    cuda.atomic.add(fl, 0, 0.5)
    cuda.atomic.max(mx, 0, i)
    cuda.atomic.min(mx, 1, i)
    cuda.atomic.max(fl, 1, i * 1.0)


def test_atomics_values():
    counts = np.zeros(1, np.int32)
    fl = np.zeros(2, np.float32)
    mx = np.array([-1, 1 << 30], np.int64)
    atomics[4, 64](counts, fl, mx)
    assert counts[0] == 256 and fl[0] == 128.0 and fl[1] == 255.0
    assert mx.tolist() == [255, 0]


@jit
def reduce_warp(x, out):
    i = cuda.grid(1)
    v = x[i]
    off = 16
    while off > 0:
        v += cuda.shfl_down_sync(0xFFFFFFFF, v, off)
        off //= 2
    if cuda.laneid == 0:
        cuda.atomic.add(out, 0, v)


def test_warp_reduction():
    x = np.arange(128, dtype=np.float32)
    out = np.zeros(1, np.float32)
    reduce_warp[1, 128](x, out)
    assert out[0] == x.sum()


@jit(device=True)
def dev_poly(x, a):
    return a[0] + a[1] * x + a[2] * x * x


@jit
def call_dev(x, coeffs, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = dev_poly(x[i], coeffs)


def test_device_function_values():
    x = np.linspace(0, 1, 50)
    c = np.array([1.0, -2.0, 0.5])
    out = np.zeros_like(x)
    call_dev[1, 64](x, c, out)
    np.testing.assert_allclose(out, c[0] + c[1] * x + c[2] * x * x)


@jit
def complex_k(z, out):
    w = z[0] * z[1] + z[0] / z[1]
    out[0] = w
    out[1] = abs(z[0])
    out[2] = z[0].conjugate()


def test_complex_values():
    z = np.array([1 + 2j, 3 - 1j])
    out = np.zeros(3, np.complex128)
    complex_k[1, 1](z, out)
    np.testing.assert_allclose(out, [z[0] * z[1] + z[0] / z[1], abs(z[0]), z[0].conjugate()])


@pytest.mark.gpu
def test_print_output(capfd):
    @jit
    def p(x):
        print("value", x, 1.5, True)
    p[1, 1](3)
    cuda.synchronize()
    assert "value 3 1.500000 True" in capfd.readouterr().out


# ---- range loops: trip count computed first (lower_ops.range_count) -------------------------
@jit
def range_items(out, start, stop, step):
    n = 0
    last = 0
    for i in range(start, stop, step):
        last = i
        n += 1
    out[0] = n
    out[1] = last


@jit
def grid_stride_sum(x, out):
    acc = 0.0
    for i in range(cuda.grid(1), x.size, cuda.gridsize(1)):
        acc += x[i]
    cuda.atomic.add(out, 0, acc)


@pytest.mark.parametrize("start,stop,step", [
    (0, 10, 3), (10, -10, -3), (5, 5, 1), (-2 ** 63, 2 ** 63 - 1, 2 ** 62),
    (2 ** 63 - 1, -2 ** 63, -2 ** 62), (2 ** 63 - 4, 2 ** 63 - 1, 2), (-2 ** 63 + 3, -2 ** 63, -1)])
def test_range_trip_count_and_last_value(start, stop, step):
    out = np.zeros(2, np.int64)
    range_items[1, 1](out, np.int64(start), np.int64(stop), np.int64(step))
    r = range(start, stop, step)
    assert out.tolist() == [len(r), r[-1] if r else 0]


@pytest.mark.parametrize("n", [0, 1, 255, 1000, 4099])
def test_grid_stride_loop_visits_each_item_once(n):
    # the unrolled loop and its remainder: every trip count modulo 4 (and none)
    x = np.arange(n, dtype=np.float64)
    out = np.zeros(1)
    grid_stride_sum[3, 64](x, out)
    assert out[0] == x.sum()
