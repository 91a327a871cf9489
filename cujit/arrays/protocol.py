"""The device-memory protocol: what makes an object cujit device memory (issue #25).

An object takes part in the launch, copy and simulator paths as memory a kernel can use in
place when it has the attribute ``_data_ptr``: the int device address of its element at index
0...0 (0 when it has no elements), with ``shape``, ``strides`` (bytes), ``dtype``, ``gpu_data``
(what keeps the memory alive) and ``stream`` beside it.  ``DeviceNDArray``, ``DeviceRecord``
and the mapped and managed host arrays carry it; arrays derived from mapped memory that do not
lie in it (ufunc results, ``.copy()``) have no ``_data_ptr`` at all, so they are host arrays.
Foreign device arrays speak ``__cuda_array_interface__`` / DLPack instead and are imported.

The launch hot path reads ``a._data_ptr`` as a plain attribute (a slot); every other "is
this cujit device memory" test asks :func:`device_pointer` or :func:`has_device_pointer`
(docs/interfaces.md, "arrays/").  This module imports nothing of cujit: every array module
may use it.
"""

__all__ = ["has_device_pointer", "device_pointer"]


def has_device_pointer(obj):
    """True when ``obj`` carries cujit's device-memory protocol (a ``_data_ptr`` attribute):
    a ``DeviceNDArray``, ``DeviceRecord``, mapped or managed array, or an object made to look
    like one.  False for host arrays, foreign CUDA-array-interface and DLPack objects (import
    them with ``cujit.as_cuda_array`` / ``cujit.from_dlpack``) and everything else."""
    return hasattr(obj, "_data_ptr")


def device_pointer(obj):
    """The device address (int) of ``obj``'s first element when it carries the protocol
    (see :func:`has_device_pointer`), else None."""
    return getattr(obj, "_data_ptr", None)
