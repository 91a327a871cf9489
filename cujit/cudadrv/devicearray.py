"""``numba.cuda.cudadrv.devicearray``'s names that cujit has: re-exports of cujit's array
classes (for ported imports) and numba's module-level helpers that user code and numba-cuda's
tests call (``is_contiguous``, ``array_core``, ``from_record_like``, ``from_array_like``,
``verify_cuda_ndarray_interface``, ``errmsg_contiguous_buffer``...)."""
import numpy as np

from ..arrays import DeviceNDArray, DeviceRecord, ManagedNDArray, MappedNDArray
from ..arrays.api import auto_device
from ..arrays.ipc import IpcArrayHandle

__all__ = ["DeviceNDArray", "DeviceRecord", "ManagedNDArray", "MappedNDArray", "auto_device",
           "IpcArrayHandle", "is_cuda_ndarray", "require_cuda_ndarray",
           "verify_cuda_ndarray_interface", "array_core", "is_contiguous",
           "errmsg_contiguous_buffer", "sentry_contiguous", "from_array_like",
           "from_record_like"]

#: numba's wording of the error for a copy between non-contiguous memory (callers match on
#: it).  cujit copies strided arrays itself, so its copies raise it only where
#: :func:`sentry_contiguous` is called.
errmsg_contiguous_buffer = ("Array contains non-contiguous buffer and cannot be transferred "
                            "as a single memory region. Please ensure contiguous buffer with "
                            "numpy .ascontiguousarray()")


def is_cuda_ndarray(obj):
    """True when ``obj`` is a cujit device array: it has a true ``__cuda_ndarray__``
    (``DeviceNDArray`` and its subclasses; not records, pointers or host arrays)."""
    return bool(getattr(obj, "__cuda_ndarray__", False))


def require_cuda_ndarray(obj):
    """TypeError naming ``obj`` unless :func:`is_cuda_ndarray` (numba raises ValueError)."""
    if not is_cuda_ndarray(obj):
        raise TypeError(f"expected a CUDA device array (DeviceNDArray), got "
                        f"{type(obj).__name__}")


def verify_cuda_ndarray_interface(obj):
    """Check that ``obj`` is a device array with numba's array attributes: ``shape`` and
    ``strides`` tuples of ints, ``dtype`` a ``numpy.dtype``, ``size`` an int.  TypeError when
    ``obj`` is not a device array or an attribute has the wrong type, AttributeError when
    one is missing."""
    require_cuda_ndarray(obj)
    for name, kind in (("shape", tuple), ("strides", tuple), ("dtype", np.dtype),
                       ("size", int)):
        if not hasattr(obj, name):
            raise AttributeError(f"{type(obj).__name__} has no attribute {name!r}")
        value = getattr(obj, name)
        if not isinstance(value, kind):
            raise TypeError(f"{type(obj).__name__}.{name} must be a {kind.__name__}, got "
                            f"{type(value).__name__}")
        if kind is tuple and not all(isinstance(v, int) for v in value):
            raise TypeError(f"{type(obj).__name__}.{name} must hold ints, got {value!r}")


def array_core(ary):
    """The part of array ``ary`` (NumPy or device) that broadcasting repeats: index 0 on
    every axis of stride 0, the whole array otherwise (as numba's ``array_core``)."""
    if not ary.strides or not ary.size:
        return ary
    key = tuple(0 if s == 0 else slice(None) for s in ary.strides)
    return ary[key]


def is_contiguous(ary):
    """True when ``ary`` (NumPy or device array) is C-contiguous once its broadcast axes
    (stride 0) and its axes of length 1 are left out (numba's ``is_contiguous``)."""
    expected = ary.dtype.itemsize
    for n, s in zip(reversed(ary.shape), reversed(ary.strides)):
        if n == 1 or s == 0:
            continue
        if s != expected:
            return False
        expected *= n
    return True


def sentry_contiguous(ary):
    """ValueError with :data:`errmsg_contiguous_buffer` unless the core of ``ary``
    (:func:`array_core`) is C- or F-contiguous, i.e. one block of memory."""
    core = array_core(ary)
    if not core.flags["C_CONTIGUOUS"] and not core.flags["F_CONTIGUOUS"]:
        raise ValueError(errmsg_contiguous_buffer)


def from_array_like(ary, stream=0, gpu_data=None):
    """A ``DeviceNDArray`` of ``ary``'s shape, strides and dtype (``ary``: a NumPy or device
    array), in new device memory or over ``gpu_data``; nothing is copied.  The
    ``DeviceNDArray`` constructor's errors (a ``gpu_data`` too small for the strides...)."""
    return DeviceNDArray(ary.shape, ary.strides, ary.dtype, stream=stream, gpu_data=gpu_data)


def from_record_like(rec, stream=0, gpu_data=None):
    """A ``DeviceRecord`` of ``rec``'s dtype (``rec``: a NumPy record or a device record), in
    new device memory or over ``gpu_data``; nothing is copied.  TypeError when the dtype is
    not structured."""
    return DeviceRecord(rec.dtype, stream=stream, gpu_data=gpu_data)
