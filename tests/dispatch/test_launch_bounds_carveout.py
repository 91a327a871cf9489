"""numba-cuda's kernel tuning options: ``launch_bounds`` (``.maxntid`` / ``.minnctapersm`` /
``.maxclusterrank``, refused launches beyond them), ``shared_memory_carveout`` (validated;
the driver's function attribute on a GPU) and architecture-specific targets
(``cc=(9, 0, 'a')`` → ``sm_90a``)."""
import re

import numpy as np
import pytest

import cujit as cuda
from cujit.frontend.jitoptions import carveout_percent, check_launch_bounds
from cujit.nvvm.linker import sm_option
from cujit.nvvm.libnvvm import arch_option


def fill(x):
    i = cuda.grid(1)
    if i < x.size:
        x[i] = i + 1


def _directives(ptx):
    return re.findall(r"\.(maxntid|minnctapersm|maxclusterrank)\s+([\d, ]+)", ptx)


@pytest.mark.compile
@pytest.mark.parametrize("bounds, want", [
    (128, [("maxntid", "128, 1, 1")]),
    ((128,), [("maxntid", "128, 1, 1")]),
    ((128, 2), [("maxntid", "128, 1, 1"), ("minnctapersm", "2")]),
    ((128, 2, 4), [("maxntid", "128, 1, 1"), ("minnctapersm", "2"), ("maxclusterrank", "4")]),
])
def test_launch_bounds_become_ptx_directives(bounds, want):
    ptx, _ = cuda.compile_ptx(fill, "void(int32[:])", launch_bounds=bounds)
    assert [(d, v.strip()) for d, v in _directives(ptx)] == want


@pytest.mark.compile
def test_kernel_without_launch_bounds_has_no_directives():
    ptx, _ = cuda.compile_ptx(fill, "void(int32[:])")
    assert _directives(ptx) == []


@pytest.mark.compile
def test_a_kernel_given_to_compile_ptx_brings_its_launch_bounds():
    kernel = cuda.jit(launch_bounds=(256, 2))(fill)
    ptx, _ = cuda.compile_ptx(kernel, "void(int32[:])")
    assert [(d, v.strip()) for d, v in _directives(ptx)] == [("maxntid", "256, 1, 1"),
                                                            ("minnctapersm", "2")]
    # bounds given to the call win over the decorator's
    ptx, _ = cuda.compile_ptx(kernel, "void(int32[:])", launch_bounds=64)
    assert [(d, v.strip()) for d, v in _directives(ptx)] == [("maxntid", "64, 1, 1")]


@pytest.mark.parametrize("bounds, exc, text", [
    ((128, 2, 4, 8), ValueError, "Got 4 launch bounds"),
    ((), ValueError, "at least the maximum number of threads"),
    (0, ValueError, "between 1 and"),
    ((128, -1), ValueError, "min_blocks_per_sm=-1"),
    (128.0, TypeError, "must be an int or a tuple"),
    ((128, "2"), TypeError, "min_blocks_per_sm='2' must be an int"),
    ((True,), TypeError, "must be an int"),
])
def test_bad_launch_bounds_are_refused_at_decoration(bounds, exc, text):
    with pytest.raises(exc, match=re.escape(text)):
        cuda.jit(launch_bounds=bounds)(fill)
    with pytest.raises(exc, match=re.escape(text)):
        cuda.jit("void(int32[:])", launch_bounds=bounds)(fill)


def test_launch_bounds_normalise_to_a_tuple():
    assert check_launch_bounds(None) is None
    assert check_launch_bounds(np.int32(64)) == (64,)
    assert check_launch_bounds([256, 1]) == (256, 1)


def test_launch_within_bounds_runs_and_beyond_is_invalid_value():
    k = cuda.jit(launch_bounds=128)(fill)
    d = cuda.to_device(np.zeros(256, np.int32))
    k[2, 128](d)
    np.testing.assert_array_equal(d.copy_to_host(), np.arange(1, 257))
    before = d.copy_to_host()
    with pytest.raises(cuda.CudaAPIError, match="CUDA_ERROR_INVALID_VALUE") as info:
        k[1, 256](d)
    assert info.value.code == 1
    assert "max_threads_per_block=128" in str(info.value) and "asks 256" in str(info.value)
    np.testing.assert_array_equal(d.copy_to_host(), before)   # nothing ran


def fill_block(x):
    bx, by = cuda.blockDim.x, cuda.blockDim.y
    t = cuda.threadIdx.x + bx * (cuda.threadIdx.y + by * cuda.threadIdx.z)
    if t < x.size:
        x[t] = t + 1            # one element per thread of a 2-d or 3-d block


def test_launch_bounds_count_all_block_dimensions():
    k = cuda.jit(launch_bounds=64)(fill_block)
    d = cuda.to_device(np.zeros(64, np.int32))
    k[1, (8, 8)](d)                          # 64 threads: allowed
    with pytest.raises(cuda.CudaAPIError, match="asks 128 threads"):
        k[1, (8, 8, 2)](d)


@pytest.mark.parametrize("value, pct", [("MaxL1", 0), ("maxshared", 100), ("Default", -1),
                                        (-1, -1), (0, 0), (50, 50), (100, 100), (None, None)])
def test_carveout_values_map_to_percent(value, pct):
    assert carveout_percent(value) == pct


@pytest.mark.parametrize("value, exc, text", [
    (150, ValueError, "must be between -1 and 100"),
    (-2, ValueError, "must be between -1 and 100"),
    (101, ValueError, "must be between -1 and 100"),
    ("InvalidOption", ValueError, "Invalid carveout value"),
    (1.5, TypeError, "must be str or int, got float"),
    (True, TypeError, "must be str or int, got bool"),
])
def test_bad_carveout_is_refused_at_decoration(value, exc, text):
    with pytest.raises(exc, match=text):
        cuda.jit(shared_memory_carveout=value)(fill)
    with pytest.raises(exc, match=text):
        cuda.jit("void(int32[:])", shared_memory_carveout=value)(fill)


@pytest.mark.parametrize("value", ["MaxL1", "MaxShared", "default", 0, 50, 100, -1])
def test_kernel_with_carveout_computes_the_same(value):
    k = cuda.jit(shared_memory_carveout=value)(fill)
    d = cuda.to_device(np.zeros(10, np.int32))
    k[1, 10](d)
    np.testing.assert_array_equal(d.copy_to_host(), np.arange(1, 11))


@pytest.mark.gpu
def test_carveout_reaches_the_function_attribute():
    from cujit.driver import get_driver
    sig = "void(int32[:])"
    k = cuda.jit(sig, shared_memory_carveout=25)(fill)
    d = cuda.to_device(np.zeros(10, np.int32))
    k[1, 10](d)
    spec = k.overloads[k.signatures[0]]
    lk = spec.loaded(cuda.current_context(), get_driver())
    drv = get_driver()
    assert drv.func_get_attribute(lk.info.handle, "PREFERRED_SHARED_MEMORY_CARVEOUT") == 25
    spec.set_shared_memory_carveout("MaxShared")
    assert drv.func_get_attribute(lk.info.handle, "PREFERRED_SHARED_MEMORY_CARVEOUT") == 100
    with pytest.raises(ValueError, match="between -1 and 100"):
        spec.set_shared_memory_carveout(101)
    assert drv.func_get_attribute(lk.info.handle, "PREFERRED_SHARED_MEMORY_CARVEOUT") == 100
    k[1, 10](d)
    np.testing.assert_array_equal(d.copy_to_host(), np.arange(1, 11))


@pytest.mark.gpu
def test_launch_bounds_lower_the_function_max_threads():
    from cujit.driver import get_driver
    k = cuda.jit("void(int32[:])", launch_bounds=(96, 1))(fill)
    d = cuda.to_device(np.zeros(96, np.int32))
    k[1, 96](d)
    lk = k.overloads[k.signatures[0]].loaded(cuda.current_context(), get_driver())
    assert get_driver().func_get_attribute(lk.info.handle, "MAX_THREADS_PER_BLOCK") <= 96


@pytest.mark.parametrize("cc, arch, sm", [
    ((9, 0), "compute_90", "sm_90"),
    ((9, 0, "a"), "compute_90a", "sm_90a"),
    ((10, 0, "f"), "compute_100f", "sm_100f"),
])
def test_compute_capability_names_the_target(cc, arch, sm):
    assert arch_option(cc) == arch
    assert sm_option(cc) == sm


@pytest.mark.parametrize("cc, exc", [((9, 0, "b"), ValueError), ((9,), ValueError),
                                     ((9, 0, "a", 1), ValueError), (("9", 0), TypeError)])
def test_bad_compute_capability_is_refused(cc, exc):
    with pytest.raises(exc, match="compute capability"):
        arch_option(cc)


@pytest.mark.compile
def test_arch_specific_target_in_ptx():
    ptx, _ = cuda.compile_ptx(fill, "void(int32[:])", cc=(9, 0, "a"))
    assert ".target sm_90a" in ptx
    ptx, _ = cuda.compile(fill, "void(int32[:])", device=False, cc=(9, 0, "a"))
    assert ".target sm_90a" in ptx


@pytest.mark.compile
def test_launch_bounds_on_a_device_function_are_refused():
    with pytest.raises(ValueError, match="not device functions"):
        cuda.compile_ptx(fill, "void(int32[:])", device=True, launch_bounds=64)
