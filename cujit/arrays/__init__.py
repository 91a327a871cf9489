"""Device arrays, host memory kinds, transfers, CUDA Array Interface and DLPack.

Modules: :mod:`.layout` (shape/stride arithmetic), :mod:`.transfer` (strided copies),
:mod:`.staging` (pipelined large copies), :mod:`.devicearray` (``DeviceNDArray``,
``DeviceRecord``), :mod:`.hostmem` (pinned/mapped/managed), :mod:`.interop` (CUDA Array
Interface), :mod:`.dlpack`, :mod:`.api` (constructors, ``auto_device``).
"""
from .devicearray import DeviceNDArray, is_device_array
from .record import DeviceRecord
from .api import device_array, device_array_like, to_device, auto_device
from .hostmem import (pinned_array, pinned_array_like, pinned, mapped_array, mapped_array_like,
                      mapped, managed_array, MappedNDArray, ManagedNDArray)
from .interop import as_cuda_array, is_cuda_array, from_cuda_array_interface
from .dlpack import from_dlpack
from .ipc import open_ipc_array

__all__ = ["device_array", "device_array_like", "to_device", "DeviceNDArray", "DeviceRecord",
           "MappedNDArray", "ManagedNDArray", "pinned_array", "pinned_array_like", "pinned",
           "mapped_array", "mapped_array_like", "mapped", "managed_array", "as_cuda_array",
           "is_cuda_array", "from_cuda_array_interface", "from_dlpack", "open_ipc_array",
           "auto_device",
           "is_device_array"]
