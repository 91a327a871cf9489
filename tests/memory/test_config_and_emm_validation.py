"""Defects outside the arrays layer: environment values that were accepted
although meaningless, and EMM plugins whose memalloc returns something unusable."""
import numpy as np
import pytest

import cujit as cuda
from cujit.config import config
from cujit.memory import managers


@pytest.mark.parametrize("var,attr,text", [
    ("CUJIT_CUDA_MAX_PENDING_DEALLOCS_COUNT", "CUDA_DEALLOCS_COUNT", "-5"),
    ("NUMBA_CUDA_MAX_PENDING_DEALLOCS_COUNT", "CUDA_DEALLOCS_COUNT", "-1"),
    ("CUJIT_CUDA_MAX_PENDING_DEALLOCS_RATIO", "CUDA_DEALLOCS_RATIO", "nan"),
    ("CUJIT_CUDA_MAX_PENDING_DEALLOCS_RATIO", "CUDA_DEALLOCS_RATIO", "-0.5"),
    ("CUJIT_CUDA_MAX_PENDING_DEALLOCS_RATIO", "CUDA_DEALLOCS_RATIO", "inf"),
    ("CUJIT_SIM_DEVICE_MEMORY", "SIM_DEVICE_MEMORY", "-1"),
    ("CUJIT_SIM_DEVICE_MEMORY", "SIM_DEVICE_MEMORY", "-2GiB"),
])
def test_out_of_range_environment_value_is_value_error(monkeypatch, var, attr, text):
    # A negative count/ratio/capacity or a NaN ratio used to be taken as is (a NaN ratio
    # never flushes; a negative capacity reported "-1 of -1 free" at the first allocation).
    monkeypatch.setenv(var, text)
    with pytest.raises(ValueError, match=f"{var}={text!r}"):
        getattr(config, attr)


@pytest.mark.parametrize("var,attr,text,value", [
    ("CUJIT_CUDA_MAX_PENDING_DEALLOCS_COUNT", "CUDA_DEALLOCS_COUNT", "0", 0),
    ("CUJIT_CUDA_MAX_PENDING_DEALLOCS_RATIO", "CUDA_DEALLOCS_RATIO", "0", 0.0),
    ("CUJIT_CUDA_MAX_PENDING_DEALLOCS_RATIO", "CUDA_DEALLOCS_RATIO", "1.5", 1.5),
    ("CUJIT_SIM_DEVICE_MEMORY", "SIM_DEVICE_MEMORY", "0", 0),
])
def test_boundary_environment_values_still_accepted(monkeypatch, var, attr, text, value):
    monkeypatch.setenv(var, text)
    assert getattr(config, attr) == value


def test_memory_manager_error_names_the_variable_that_was_set(monkeypatch):
    monkeypatch.setenv("CUJIT_CUDA_MEMORY_MANAGER", "os")
    monkeypatch.delenv("NUMBA_CUDA_MEMORY_MANAGER", raising=False)
    monkeypatch.setattr(managers, "_override", None)
    with pytest.raises(managers.MemoryManagerError, match="CUJIT_CUDA_MEMORY_MANAGER='os'"):
        managers.memory_manager_class()


class _ReturnsNone(cuda.NumbaCUDAMemoryManager):
    def memalloc(self, size):
        return None


class _ReturnsInt(cuda.NumbaCUDAMemoryManager):
    def memalloc(self, size):
        return 0x1000


class _TooSmall(cuda.NumbaCUDAMemoryManager):
    def memalloc(self, size):
        return super().memalloc(max(1, size // 2))


@pytest.fixture
def plugin_ctx(ctx):
    """The current context with its manager swapped for a test plugin, restored after."""
    saved = ctx.memory_manager
    yield ctx
    ctx.memory_manager = saved


@pytest.mark.parametrize("plugin", [_ReturnsNone, _ReturnsInt])
def test_plugin_memalloc_returning_non_pointer_is_type_error(plugin_ctx, plugin):
    plugin_ctx.memory_manager = plugin(context=plugin_ctx)
    with pytest.raises(TypeError, match=f"{plugin.__qualname__}.memalloc"):
        cuda.device_array(8)


def test_plugin_memalloc_too_small_is_value_error_before_any_copy(plugin_ctx):
    # The simulator caught the overrun at the copy; on a GPU the copy would write past the
    # plugin's allocation into someone else's memory.
    plugin_ctx.memory_manager = _TooSmall(context=plugin_ctx)
    with pytest.raises(ValueError, match="256 bytes"):
        cuda.to_device(np.arange(32.0))


def test_builtin_manager_memalloc_stays_unwrapped(ctx):
    # the allocation hot path calls the built-in manager's bound method directly
    assert ctx.memalloc == ctx.memory_manager.memalloc


def test_mempin_null_pointer_is_cuda_api_error(ctx):
    # The simulator used to page-lock address 0 and hand back <PinnedMemory 0x0 of 100 bytes>;
    # cuMemHostRegister refuses a NULL pointer with CUDA_ERROR_INVALID_VALUE.
    with pytest.raises(cuda.CudaAPIError, match="cuMemHostRegister"):
        ctx.mempin(None, 0, 100)


@pytest.mark.parametrize("attr,value", [
    ("CUDA_DEALLOCS_COUNT", "abc"), ("CUDA_DEALLOCS_COUNT", -5), ("CUDA_DEALLOCS_COUNT", 2.5),
    ("CUDA_DEALLOCS_RATIO", "x"), ("CUDA_DEALLOCS_RATIO", float("nan")),
    ("SIM_CHECKS", "maybe"), ("SIM_DEVICE_MEMORY", -1), ("ENABLE_CUDASIM", 2),
])
def test_bad_config_attribute_override_is_value_error(attr, value):
    # Overrides were stored unchecked; CUDA_DEALLOCS_COUNT = "abc" then made every later
    # free fail inside a finalizer (error swallowed, memory never freed).
    before = getattr(config, attr)
    with pytest.raises(ValueError, match=f"cujit.config.{attr}"):
        setattr(config, attr, value)
    assert getattr(config, attr) == before


@pytest.mark.parametrize("attr,value,expect", [
    ("CUDA_DEALLOCS_COUNT", 3, 3), ("CUDA_DEALLOCS_COUNT", "7", 7),
    ("CUDA_DEALLOCS_RATIO", 100.0, 100.0), ("CUDA_DEALLOCS_RATIO", 1e-5, 1e-5),
    ("SIM_CHECKS", False, False), ("SIM_DEVICE_MEMORY", 1 << 20, 1 << 20),
    ("SIM_DEVICE_MEMORY", "64MiB", 64 << 20), ("CUDA_MEMORY_MANAGER", "default", "default"),
])
def test_good_config_attribute_override_is_kept(attr, value, expect):
    setattr(config, attr, value)
    assert getattr(config, attr) == expect
