"""numba's driver-object surface that ported code and numba-cuda's tests use:
``cudadrv.driver.binding`` (the cuda.bindings.driver module), ``Context(device, handle)``
for a context another library made current, ``cudadrv.driver._to_core_stream`` and
``cuda.devices``."""
import sys
import types

import pytest

import cujit
from cujit.cudadrv import driver as cudadrv_driver
from cujit.driver.errors import CudaSupportError


# ---- driver.binding ---------------------------------------------------------------------

@pytest.mark.sim
def test_binding_is_a_gpu_name():
    with pytest.raises(AttributeError, match="cuda.bindings.driver"):
        cudadrv_driver.binding


@pytest.mark.gpu
def test_binding_is_the_cuda_bindings_driver_module():
    import cuda.bindings.driver as expected
    assert cudadrv_driver.binding is expected
    dev = cudadrv_driver.binding.CUdevice(0)
    hctx = cudadrv_driver.driver.cuDevicePrimaryCtxRetain(dev)
    try:
        assert int(hctx) == cujit.current_context().handle
    finally:
        cudadrv_driver.driver.cuDevicePrimaryCtxRelease(dev)


def test_other_missing_names_are_attribute_errors():
    with pytest.raises(AttributeError, match="no_such_name"):
        cudadrv_driver.no_such_name


# ---- Context(device, handle) --------------------------------------------------------------

@pytest.mark.parametrize("device", ["ordinal", "device"])
def test_context_of_the_primary_handle_is_cujits_context(device):
    ctx = cujit.current_context()
    dev = ctx.device.id if device == "ordinal" else ctx.device
    again = cujit.Context(dev, ctx.handle)
    assert again is ctx
    assert again.memory_manager is ctx.memory_manager      # not initialised a second time
    again.push()
    assert cujit.current_context() is ctx
    again.pop()
    d = cujit.to_device([1, 2, 3])
    assert d.copy_to_host().tolist() == [1, 2, 3]


def test_context_of_another_handle_is_refused():
    ctx = cujit.current_context()
    with pytest.raises(RuntimeError, match="non-primary CUDA context"):
        cujit.Context(ctx.device.id, ctx.handle + 0x10)
    assert cujit.current_context() is ctx


@pytest.mark.parametrize("device, error", [("0", TypeError), (True, TypeError),
                                           (999, IndexError)])
def test_context_of_a_bad_device_is_refused(device, error):
    with pytest.raises(error):
        cujit.Context(device, cujit.current_context().handle)


# ---- _to_core_stream ------------------------------------------------------------------------

@pytest.fixture
def fake_core(monkeypatch):
    """A stand-in ``cuda.core`` module with cuda.core's Stream.from_handle."""
    class Stream:
        def __init__(self, handle):
            self.handle = handle

        @classmethod
        def from_handle(cls, handle):
            return cls(handle)
    Stream.__module__ = "cuda.core._stream"

    class GraphBuilder:
        def __init__(self, stream):
            self.stream = stream
    GraphBuilder.__module__ = "cuda.core._graph"
    mod = types.ModuleType("cuda.core")
    mod.Stream, mod.GraphBuilder = Stream, GraphBuilder
    monkeypatch.setitem(sys.modules, "cuda.core", mod)
    return mod


@pytest.mark.sim
def test_to_core_stream_converts_each_kind(fake_core):
    s = cujit.stream()
    assert cudadrv_driver._to_core_stream(s).handle == s.handle
    assert cudadrv_driver._to_core_stream(0).handle == 0
    assert cudadrv_driver._to_core_stream(None).handle == 0
    assert cudadrv_driver._to_core_stream(cujit.default_stream()).handle == 0
    core_stream = fake_core.Stream(77)
    assert cudadrv_driver._to_core_stream(core_stream) is core_stream
    assert cudadrv_driver._to_core_stream(fake_core.GraphBuilder(core_stream)) is core_stream


@pytest.mark.parametrize("bad", ["stream", 5, 1.0, True, object()])
def test_to_core_stream_refuses_other_objects(bad):
    with pytest.raises(TypeError, match="_to_core_stream: expected a Stream"):
        cudadrv_driver._to_core_stream(bad)


def test_to_core_stream_without_cuda_core_says_what_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "cuda.core", None)     # import cuda.core fails
    with pytest.raises(CudaSupportError, match="pip install cuda-core"):
        cudadrv_driver._to_core_stream(0)


@pytest.mark.gpu
def test_to_core_stream_gives_a_cuda_core_stream_on_the_same_handle():
    core = pytest.importorskip("cuda.core")
    s = cujit.stream()
    cs = cudadrv_driver._to_core_stream(s)
    assert isinstance(cs, core.Stream) and int(cs.handle) == s.handle


# ---- cuda.devices ---------------------------------------------------------------------------

def test_cuda_devices_is_numbas_devices_module():
    import cujit.cudadrv.devices as devices
    assert cujit.devices is devices
    assert cujit.devices.get_context() is cujit.current_context()
    assert "devices" in cujit.__all__

