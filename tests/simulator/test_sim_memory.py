"""Shared, local and constant memory in the simulator, including the cases from public numba
bug reports (numbered as in the task)."""
import numpy as np
import pytest

import cujit as cuda
from cujit.frontend.errors import CompileError, TypingError

pytestmark = pytest.mark.sim

D_GLOBAL = np.float32
BIG_CONST = np.zeros(16 << 20, np.int8)
CONST_32K = (np.arange(32 * 1024) % 251).astype(np.int8)
MUTABLE = np.array([1.0, 2.0])
REC = np.dtype([("a", np.float32, (2,)), ("rec", [("x", np.float32), ("y", np.float32)])])


def case1(out):
    arr = cuda.shared.array(0, np.int32)
    a = arr[0:1]
    b = arr[1:2]
    a[0] = 1
    b[0] = 2
    out[0] = a[0]
    out[1] = b[0]


def test_case1_size0_shared_sliced_regions(launch):
    out = np.zeros(2, np.int32)
    launch(case1, 1, 1, out, shmem=8)
    assert out.tolist() == [1, 2]


def case2(out):
    s = cuda.shared.array((32, 32), np.int32)
    r = s.reshape(64, 16)
    r[63, 15] = 42
    out[0] = s[31, 31]
    out[1] = r.shape[0] * 100 + r.shape[1]


def test_case2_reshaped_static_shared_aliases(launch):
    out = np.zeros(2, np.int32)
    launch(case2, 1, 1, out)
    assert out.tolist() == [42, 6416]


def case3(out):
    dyn = cuda.shared.array(0, dtype=D_GLOBAL)
    dyn[0] = 3.14
    out[0] = dyn[0]


def test_case3_dynamic_shared_dtype_from_global(launch):
    out = np.zeros(1, np.float32)
    launch(case3, 1, 1, out, shmem=4)
    assert out[0] == np.float32(3.14)


def case4(out):
    a = cuda.shared.array(2, np.int32)
    b = cuda.shared.array((2, 3), np.int32)
    out[0] = a.size
    out[1] = b.size
    out[2] = b.shape[0]
    out[3] = b.shape[1]
    out[4] = len(a)


def test_case4_size_and_shape_of_static_shared(launch):
    out = np.zeros(5, np.int64)
    launch(case4, 1, 1, out)
    assert out.tolist() == [2, 6, 2, 3, 2]


def case5_big(out):
    s = cuda.shared.array((2, 7000), np.float32)
    out[0] = s[0, 0]


def case5_ok(out):
    s = cuda.shared.array((2, 6000), np.float32)
    s[1, 5999] = 7
    out[0] = s[1, 5999]


def test_case5_static_shared_limit(launch, either_check):
    with pytest.raises(CompileError) as ei:
        launch(case5_big, 1, 1, np.zeros(1, np.float32))
    msg = str(ei.value)
    assert msg.startswith("shared memory: shared.array of shape (2, 7000) and dtype float32 "
                          "asks 56000 bytes of static shared memory")
    assert "the limit for static shared memory is 49152 bytes (48 KiB" in msg
    assert "s = cuda.shared.array((2, 7000), np.float32)" in msg
    out = np.zeros(1, np.float32)
    launch(case5_ok, 1, 1, out)
    assert out[0] == 7


def case6(out):
    s = cuda.shared.array(2, REC)
    s[0].a[0] = 45.0
    s[0]["a"][1] = 45.0
    s[1].rec.x = 2.0
    s[1]["rec"]["y"] = 3.0
    out[0] = s[0].a[0]
    out[1] = s[0]["a"][1]
    out[2] = s[1].rec.x + s[1].rec.y


def test_case6_structured_shared(launch):
    out = np.zeros(3, np.float32)
    launch(case6, 1, 1, out)
    assert out.tolist() == [45.0, 45.0, 5.0]


def case9(out):
    a = cuda.local.array((5,), np.int32)
    z = cuda.local.array((), np.int32)
    for i in range(5):
        a[i] = i
    z[()] = 9
    out[0] = len(a)
    out[1] = a[4]
    out[2] = z[()]
    out[3] = z.ndim


def test_case9_local_tuple_and_0d_shapes(launch):
    out = np.zeros(4, np.int32)
    launch(case9, 1, 1, out)
    assert out.tolist() == [5, 4, 9, 0]


def make_case10(dt):
    def k(out):
        loc = cuda.local.array(2, dt)
        sh = cuda.shared.array(2, dt)
        loc[0] = 1.5
        sh[0] = 2.25
        out[0] = loc[0] + sh[0]
    return k


DTYPES = [np.float32, "float32", np.dtype("float32")]
try:
    DTYPES.append(cuda.float32)
except (AttributeError, ImportError):
    pass


@pytest.mark.parametrize("dt", DTYPES, ids=str)
def test_case10_dtype_spellings(launch, dt):
    out = np.zeros(1, np.float64)
    launch(make_case10(dt), 1, 1, out)
    assert out[0] == 3.75


def test_case10_bad_dtype_is_typing_error(launch, either_check):
    with pytest.raises(TypingError, match=r"local.array: dtype 'int33' is not"):
        launch(make_case10("int33"), 1, 1, np.zeros(1))


def bad_shape(out, n):
    a = cuda.local.array(n * 1.0, np.int32)
    out[0] = a[0]


def test_non_int_shape_is_typing_error(launch, either_check):
    with pytest.raises(TypingError, match=r"local.array") as ei:
        launch(bad_shape, 1, 1, np.zeros(1), 4)
    if either_check == "run time":
        assert str(ei.value).startswith("local.array: shape 4.0 must be a constant int")
    assert "a = cuda.local.array(n * 1.0, np.int32)" in str(ei.value)


def case12_big(out):
    c = cuda.const.array_like(BIG_CONST)
    out[0] = c[0]


def case12_ok(out):
    c = cuda.const.array_like(CONST_32K)
    i = cuda.grid(1)
    for j in range(i * 1024, i * 1024 + 1024):
        out[j] = c[j]


def test_case12_constant_memory_limit(launch, either_check):
    with pytest.raises(CompileError) as ei:
        launch(case12_big, 1, 1, np.zeros(1, np.int8))
    assert str(ei.value).startswith(
        "constant memory: const.array_like of 16777216 bytes (shape (16777216,), int8) does "
        "not fit; constant memory holds 65536 bytes (64 KiB)")
    out = np.zeros(32 * 1024, np.int8)
    launch(case12_ok, 1, 32, out)
    np.testing.assert_array_equal(out, CONST_32K)


def read_mutable(out):
    c = cuda.const.array_like(MUTABLE)
    out[0] = c[0] + c[1]


def test_const_is_frozen_at_first_launch(launch):
    out = np.zeros(1)
    launch(read_mutable, 1, 1, out)
    assert out[0] == 3.0
    MUTABLE[0] = 100.0
    try:
        launch(read_mutable, 1, 1, out)
        assert out[0] == 3.0                  # the copy taken at the first launch
    finally:
        MUTABLE[0] = 1.0


_MODULE_WITH_A_BIG_GLOBAL = """
import numpy as np
import cujit as cuda
big = cuda.device_array(8 << 20, np.uint8)      # never named by the kernel
small = np.array([5.0])

@cuda.jit
def k(out):
    out[0] = small[0]
"""


def test_a_kernel_keeps_only_the_globals_it_names(tmp_path, monkeypatch):
    import gc
    import importlib
    (tmp_path / "mod_big_global.py").write_text(_MODULE_WITH_A_BIG_GLOBAL)
    monkeypatch.syspath_prepend(str(tmp_path))
    mod = importlib.import_module("mod_big_global")
    out = cuda.device_array(1)
    mod.k[1, 1](out)
    assert out.copy_to_host()[0] == 5.0
    mm = cuda.current_context().memory_manager
    before = mm.get_stats().bytes_in_use
    del mod.big
    gc.collect()
    mm.deallocations.clear()
    assert mm.get_stats().bytes_in_use <= before - (8 << 20)
    mod.small[0] = 7.0
    mod.k[1, 1](out)
    assert out.copy_to_host()[0] == 5.0     # a named host array stays frozen (numba)
    monkeypatch.delitem(__import__("sys").modules, "mod_big_global")


def write_const(out):
    c = cuda.const.array_like(CONST_32K)
    c[0] = 1


def test_const_is_read_only(launch, either_check):
    exc = TypingError if either_check == "front end" else ValueError
    with pytest.raises(exc, match="read-only"):
        launch(write_const, 1, 1, np.zeros(1))


def per_block_shared(out):
    s = cuda.shared.array(1, np.int64)
    if cuda.threadIdx.x == 0:
        s[0] = s[0] + cuda.blockIdx.x + 1     # a fresh buffer per block
    cuda.syncthreads()
    out[cuda.blockIdx.x, cuda.threadIdx.x] = s[0]


def test_shared_is_per_block_and_shared_by_its_threads(launch):
    out = np.zeros((3, 4), np.int64)
    launch(per_block_shared, 3, 4, out)
    assert out.tolist() == [[1] * 4, [2] * 4, [3] * 4]


@cuda.jit(device=True)
def helper(s, v):
    arr = cuda.shared.array(4, np.int32)
    arr[cuda.threadIdx.x] = v
    return arr


def device_fn_shared(out):
    a = helper(None, 1)
    cuda.syncthreads()
    b = helper(None, 2)      # same call site inside helper: the same array
    cuda.syncthreads()
    out[cuda.threadIdx.x] = a[cuda.threadIdx.x] * 10 + b[(cuda.threadIdx.x + 1) % 4]


def test_shared_array_per_call_site_in_device_function(launch):
    out = np.zeros(4, np.int32)
    launch(device_fn_shared, 1, 4, out)
    assert out.tolist() == [22] * 4


def local_per_thread(out):
    loc = cuda.local.array(1, np.int32)
    for _ in range(3):
        loc[0] += cuda.threadIdx.x
    out[cuda.grid(1)] = loc[0]


def test_local_is_per_thread_and_zeroed(launch):
    out = np.zeros(8, np.int32)
    launch(local_per_thread, 2, 4, out)
    assert out.tolist() == [0, 3, 6, 9] * 2


def dyn_len(out):
    a = cuda.shared.array(0, np.int16)
    out[0] = len(a)
    out[1] = a.size
    a[-1] = 5
    out[2] = a[a.shape[0] - 1]


def test_dynamic_shared_sized_at_launch(launch):
    out = np.zeros(3, np.int64)
    launch(dyn_len, 1, 1, out, shmem=10)
    assert out.tolist() == [5, 5, 5]


def test_bad_dynamic_shared_size(launch):
    with pytest.raises(ValueError, match="-1"):
        launch(dyn_len, 1, 1, np.zeros(3), shmem=-1)
    with pytest.raises(ValueError, match="232449 bytes exceeds the device's maximum of 232448"):
        launch(dyn_len, 1, 1, np.zeros(3), shmem=232449)


def static_and_dynamic(out):
    a = cuda.shared.array(10240, np.float32)      # 40 KiB static
    d = cuda.shared.array(0, np.float32)
    t = cuda.threadIdx.x
    a[t] = 1
    d[t] = 2
    out[t] = a[t] + d[t]


def test_static_plus_dynamic_shared_over_the_opt_in_maximum_is_refused(launch):
    # the GPU launcher refuses it (launcher.check_function_limits): so must the simulator
    out = np.zeros(32)
    with pytest.raises(ValueError, match=r"needs 245760 bytes of shared memory per block "
                       r"\(40960 static \+ 204800 dynamic\), more than the device's "
                       r"MAX_SHARED_MEMORY_PER_BLOCK_OPTIN = 232448 bytes"):
        launch(static_and_dynamic, 1, 32, out, shmem=200 * 1024)
    assert not out.any()
    launch(static_and_dynamic, 1, 32, out, shmem=232448 - 40960)     # exactly the maximum
    assert out.tolist() == [3.0] * 32


def sum_all(x, out):
    s = 0.0
    for i in range(x.shape[0]):
        s += x[i]
    out[0] = s


def test_misaligned_device_arrays_are_refused_as_the_gpu_faults():
    from cujit.driver.errors import CudaAPIError
    out = cuda.device_array(1)
    k = cuda.jit(sum_all)
    with pytest.raises(CudaAPIError, match=r"'x' is a float64 array .* not 8-byte aligned "
                       r"\(its stride 3 of axis 0") as ei:
        k[1, 1](cuda.device_array(4, np.float64, strides=(3,)), out)
    assert ei.value.code == 716
    raw = cuda.to_device(np.zeros(8 * 9, np.uint8))

    class Cai:
        def __init__(self, shift, typestr):
            self.__cuda_array_interface__ = {
                "shape": (8,), "strides": None, "typestr": typestr, "version": 3,
                "data": (raw.__cuda_array_interface__["data"][0] + shift, False)}
    with pytest.raises(CudaAPIError, match="data pointer .* is not a multiple of 8") as ei:
        k[1, 1](Cai(1, "<f8"), out)
    assert ei.value.code == 716
    with pytest.raises(CudaAPIError, match="not a multiple of 8"):
        k[1, 1](cuda.as_cuda_array(Cai(1, "<f8")), out)
    k[1, 1](Cai(8, "<f8"), out)                        # aligned: runs
    k[1, 1](Cai(4, "<f4"), out)                        # float32 needs 4 bytes only
    assert out.copy_to_host()[0] == 0.0
