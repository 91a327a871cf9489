"""``numba.cuda.kernels.transpose``: ``transpose(a, b=None)``, the transpose of a 2-D array
computed on the device, one thread per element (reads of ``a`` along its rows, writes of
``b`` along its columns; numba's version stages tiles through shared memory, which cujit's
kernels cannot yet size by the argument's dtype)."""
import numpy as np

from ..arrays import DeviceNDArray, device_array, to_device
from ..dispatch import jit
from ..kernelapi import grid

__all__ = ["transpose"]

_BLOCK = (32, 8)


@jit
def _transpose_kernel(a, b):
    col, row = grid(2)
    if row < a.shape[0] and col < a.shape[1]:
        b[col, row] = a[row, col]


def transpose(a, b=None):
    """The transpose of 2-D array ``a`` (a NumPy or device array), written into ``b`` (a
    device array of shape ``a.shape[::-1]`` and ``a``'s dtype) or a new device array, and
    returned.  The kernel runs on ``a``'s stream when ``a`` is a device array.  TypeError
    when ``a`` is not 2-D or ``b`` has another dtype, ValueError when ``b`` has the wrong
    shape (numba's ``numba.cuda.kernels.transpose.transpose``)."""
    stream = getattr(a, "stream", 0) if isinstance(a, DeviceNDArray) else 0
    if not isinstance(a, DeviceNDArray):
        a = to_device(np.asarray(a), stream=stream)
    if a.ndim != 2:
        raise TypeError(f"transpose(): a must be a 2-D array, got {a.ndim} dimension(s)")
    rows, cols = a.shape
    if b is None:
        b = device_array((cols, rows), dtype=a.dtype, stream=stream)
    else:
        if getattr(b, "dtype", None) != a.dtype:
            raise TypeError(f"transpose(): b has dtype {getattr(b, 'dtype', None)}, a has "
                            f"{a.dtype}")
        if tuple(b.shape) != (cols, rows):
            raise ValueError(f"transpose(): b must have shape {(cols, rows)} for a of shape "
                             f"{(rows, cols)}, got {tuple(b.shape)}")
    if a.size:
        blocks = (-(-cols // _BLOCK[0]), -(-rows // _BLOCK[1]))
        _transpose_kernel[blocks, _BLOCK, stream](a, b)
    return b
