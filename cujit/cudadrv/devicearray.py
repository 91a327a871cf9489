"""``numba.cuda.cudadrv.devicearray``'s names that cujit has (re-exports, for ported
imports)."""
from ..arrays import DeviceNDArray, DeviceRecord, ManagedNDArray, MappedNDArray
from ..arrays.api import auto_device
from ..arrays.ipc import IpcArrayHandle

__all__ = ["DeviceNDArray", "DeviceRecord", "ManagedNDArray", "MappedNDArray", "auto_device",
           "IpcArrayHandle"]
