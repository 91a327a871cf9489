"""``DeviceNDArray.get_ipc_handle()``'s result: an IPC memory handle plus the array layout."""
import numpy as np

from . import devicearray
from .devicearray import DeviceNDArray

__all__ = ["IpcArrayHandle"]


class IpcArrayHandle:
    """Picklable handle of a device array for another process (numba.cuda's
    ``IpcArrayHandle``).  ``open()`` maps the memory there and returns a ``DeviceNDArray``;
    ``close()`` unmaps it; also a context manager."""

    def __init__(self, ipc_handle, shape, strides, dtype, offset=0):
        self.ipc_handle = ipc_handle
        self.shape, self.strides, self.dtype = tuple(shape), tuple(strides), np.dtype(dtype)
        self.offset = offset

    @property
    def _ipc_handle(self):
        # numba.cuda's attribute name (its EMM tests read it); a plugin's own handle object
        # is kept as returned
        return self.ipc_handle

    def open(self):
        """Open the handle in this process → ``DeviceNDArray`` view of the shared memory."""
        mem = self.ipc_handle.open()
        ptr = mem.device_pointer_value + self.offset
        return DeviceNDArray._make(self.shape, self.strides, self.dtype, ptr, mem, 0)

    def close(self):
        self.ipc_handle.close()

    def __enter__(self):
        return self.open()

    def __exit__(self, *exc):
        self.close()
        return False


devicearray.provide(IpcArrayHandle=IpcArrayHandle)
