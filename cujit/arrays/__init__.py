"""Device arrays, host memory kinds, transfers, CUDA Array Interface and DLPack.

Modules, bottom first (each imports only modules before it; the device-memory protocol,
:func:`has_device_pointer` and :func:`device_pointer`, is :mod:`cujit.memory.protocol`, below
the types layer that also reads it): :mod:`._runtime`
(doors to the layers below), :mod:`.layout` (shape/stride arithmetic, argument checks), :mod:`.transfer`
(strided copies), :mod:`.cai` (CUDA Array Interface export), :mod:`.hostmem`
(pinned/mapped/managed host memory), :mod:`.staging` (pipelined large copies),
:mod:`.devicearray` (``DeviceNDArray``), :mod:`.record` (``DeviceRecord``), :mod:`.ipc`,
:mod:`.interop` (CUDA Array Interface import), :mod:`.dlpack`, :mod:`.api` (constructors,
``auto_device``, ``mapped``).  ``DeviceNDArray``'s methods that return or call something of a
module above it get it through :func:`.devicearray.provide`, which those modules call when
imported; this file imports them all, so every piece is in place before any array exists.
"""
from ..memory.protocol import has_device_pointer, device_pointer, cuda_core_kind
from .devicearray import DeviceNDArray
from .record import DeviceRecord, is_device_array
from .api import device_array, device_array_like, to_device, auto_device, mapped
from .hostmem import (pinned_array, pinned_array_like, pinned, mapped_array, mapped_array_like,
                      managed_array, MappedNDArray, ManagedNDArray)
from .interop import (as_cuda_array, is_cuda_array, from_cuda_array_interface,
                      wait_for_exporter, from_cuda_core)
from .dlpack import from_dlpack
# importing ipc also hands IpcArrayHandle to DeviceNDArray (devicearray.provide)
from .ipc import open_ipc_array

__all__ = ["device_array", "device_array_like", "to_device", "DeviceNDArray", "DeviceRecord",
           "MappedNDArray", "ManagedNDArray", "pinned_array", "pinned_array_like", "pinned",
           "mapped_array", "mapped_array_like", "mapped", "managed_array", "as_cuda_array",
           "is_cuda_array", "from_cuda_array_interface", "from_dlpack", "open_ipc_array",
           "auto_device", "wait_for_exporter",
           "is_device_array", "has_device_pointer", "device_pointer", "from_cuda_core",
           "cuda_core_kind"]
