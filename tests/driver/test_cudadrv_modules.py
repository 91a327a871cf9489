"""numba-cuda programs ported unchanged: ported code imports numba.cuda's ``cudadrv``
modules (``from numba.cuda.cudadrv.driver import CudaAPIError``); with ``cujit`` in place
of ``numba.cuda`` those paths give cujit's own objects."""
import importlib

import pytest

import cujit
from cujit.arrays.ipc import IpcArrayHandle
from cujit.nvvm.libnvvm import NvvmError
from cujit.memory.pointers import DeadMemoryError
from cujit.runtime.version import get_version

NAMES = {
    "cujit.cudadrv.driver": {
        "CudaAPIError": cujit.CudaAPIError, "CudaDriverError": cujit.CudaDriverError,
        "CudaSupportError": cujit.CudaSupportError, "DeadMemoryError": DeadMemoryError,
        "MemoryPointer": cujit.MemoryPointer, "NumbaCUDAMemoryManager":
        cujit.NumbaCUDAMemoryManager, "Stream": cujit.Stream, "Event": cujit.Event,
        "Device": cujit.Device, "Context": cujit.Context, "get_version": get_version,
        "set_memory_manager": cujit.set_memory_manager},
    "cujit.cudadrv.devicearray": {
        "DeviceNDArray": cujit.DeviceNDArray, "DeviceRecord": cujit.DeviceRecord,
        "MappedNDArray": cujit.MappedNDArray, "ManagedNDArray": cujit.ManagedNDArray,
        "IpcArrayHandle": IpcArrayHandle},
    "cujit.cudadrv.error": {
        "CudaDriverError": cujit.CudaDriverError, "CudaSupportError": cujit.CudaSupportError,
        "NvvmError": NvvmError},
    "cujit.cudadrv.runtime": {"runtime": cujit.runtime, "get_version": get_version},
    "cujit.cudadrv.linkable_code": {
        name: getattr(cujit, name) for name in ("LinkableCode", "CUSource", "PTXSource",
                                                "Cubin", "Fatbin", "LTOIR", "Archive",
                                                "Object")},
}


@pytest.mark.parametrize("module", sorted(NAMES))
def test_cudadrv_paths_give_cujits_objects(module):
    mod = importlib.import_module(module)
    for name, obj in NAMES[module].items():
        assert getattr(mod, name) is obj, f"{module}.{name}"
    assert set(NAMES[module]) <= set(mod.__all__)
    for name in mod.__all__:
        assert hasattr(mod, name), f"{module}.__all__ names {name}"


def test_a_ported_except_clause_catches_cujits_errors():
    from cujit.cudadrv.driver import CudaAPIError
    d = cujit.device_array(4)
    with pytest.raises(CudaAPIError):
        cujit.driver.get_driver().mem_free(12345)    # not an allocation
    del d


def test_cudadrv_runtime_version():
    from cujit.cudadrv.runtime import runtime
    assert runtime.get_version() == cujit.runtime.get_version()
    assert runtime.is_supported_version() is True
