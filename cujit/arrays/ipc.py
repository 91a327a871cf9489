"""``DeviceNDArray.get_ipc_handle()``'s result: an IPC memory handle plus the array layout;
``open_ipc_array``: an array over a raw IPC handle another process exported."""
import contextlib
import operator

import numpy as np

from . import devicearray
from . import layout as L
from .devicearray import DeviceNDArray

__all__ = ["IpcArrayHandle", "open_ipc_array"]

IPC_HANDLE_SIZE = 64       # CU_IPC_HANDLE_SIZE: bytes of a CUipcMemHandle


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


def _handle_bytes(handle):
    """The 64 bytes of a raw IPC memory handle given as bytes/bytearray/memoryview or a
    sequence of ints 0..255 (numba.cuda accepts both); TypeError/ValueError otherwise."""
    if isinstance(handle, (bytes, bytearray, memoryview)):
        raw = bytes(handle)
    elif isinstance(handle, (str, np.ndarray)) or not hasattr(handle, "__len__"):
        raise TypeError(f"open_ipc_array: handle must be {IPC_HANDLE_SIZE} bytes (bytes or a "
                        f"sequence of ints 0..255), got {type(handle).__name__}")
    else:
        try:
            raw = bytes(operator.index(b) for b in handle)
        except (TypeError, ValueError):
            raise TypeError(f"open_ipc_array: handle must be {IPC_HANDLE_SIZE} bytes (bytes "
                            f"or a sequence of ints 0..255), got {handle!r}"[:300]) from None
    if len(raw) != IPC_HANDLE_SIZE:
        raise ValueError(f"open_ipc_array: an IPC memory handle has {IPC_HANDLE_SIZE} bytes, "
                         f"got {len(raw)}")
    return raw


@contextlib.contextmanager
def open_ipc_array(handle, shape, dtype, strides=None, offset=0):
    """Context manager (numba.cuda's ``open_ipc_array``): open a raw CUDA IPC memory handle
    that another process exported and yield a ``DeviceNDArray`` over it; the handle is closed
    (cuIpcCloseMemHandle) when the block exits.

    ``handle``: the 64 bytes of a ``CUipcMemHandle`` (bytes, or a sequence of ints 0..255),
    e.g. ``d.get_ipc_handle().ipc_handle.handle`` in the exporting process; ``shape``: int or
    tuple of ints; ``dtype``: anything ``np.dtype`` takes; ``strides`` (bytes): C-contiguous
    when None; ``offset``: bytes from the start of the exported allocation to element 0.

    Raises TypeError/ValueError for a malformed handle, shape, dtype, strides or offset
    (before the driver is called); CudaAPIError from the driver when the handle cannot be
    opened (in the exporting process itself, or on the simulator, which has no IPC)."""
    from ..memory.pointers import IpcHandle
    raw = _handle_bytes(handle)
    shape = L.normalize_shape(shape)
    dtype = L.normalize_dtype(dtype)
    strides = (L.contiguous_strides(shape, dtype.itemsize) if strides is None
               else L.normalize_strides(strides, len(shape)))
    if isinstance(offset, (bool, np.bool_)):
        raise TypeError(f"open_ipc_array: offset must be an int (bytes), got {offset!r}")
    try:
        offset = operator.index(offset)
    except TypeError:
        raise TypeError(f"open_ipc_array: offset must be an int (bytes), got {offset!r}") \
            from None
    if offset < 0:
        raise ValueError(f"open_ipc_array: offset must be >= 0 bytes, got {offset}")
    lo, hi = L.extent(shape, strides, dtype.itemsize)
    if lo < 0:
        raise ValueError(f"open_ipc_array: strides {strides} reach before element 0; an IPC "
                         "array must lie at or after offset")
    arrays = IpcArrayHandle(IpcHandle(None, raw, hi, offset=offset), shape, strides, dtype)
    arr = arrays.open()         # in the current context (IpcHandle.open's default)
    try:
        yield arr
    finally:
        arrays.close()


devicearray.provide(IpcArrayHandle=IpcArrayHandle)
