"""The device-memory protocol: what makes an object cujit device memory (issue #25).

An object takes part in the launch, copy and simulator paths as memory a kernel can use in
place when it has the attribute ``_data_ptr``: the int device address of its element at index
0...0 (0 when it has no elements), with ``shape``, ``strides`` (bytes), ``dtype``, ``gpu_data``
(what keeps the memory alive) and ``stream`` beside it.  ``DeviceNDArray``, ``DeviceRecord``
and the mapped and managed host arrays carry it; arrays derived from mapped memory that do not
lie in it (ufunc results, ``.copy()``) have no ``_data_ptr`` at all, so they are host arrays.
Foreign device arrays speak ``__cuda_array_interface__`` / DLPack instead and are imported;
cuda.core's ``Buffer`` and ``StridedMemoryView`` are read through their documented attributes
(:func:`cuda_core_kind`, :func:`cuda_core_parts`), as numba-cuda 0.21+ takes them as kernel
arguments.

The launch hot path reads ``a._data_ptr`` as a plain attribute (a slot); every other "is
this cujit device memory" test asks :func:`device_pointer` or :func:`has_device_pointer`
(docs/interfaces.md, "arrays/").  This module imports nothing of cujit, and it lives in the
memory layer because the types layer (``typeof``) reads it as well as the arrays above it.
"""
import numpy as np

__all__ = ["has_device_pointer", "device_pointer", "cuda_core_kind", "cuda_core_parts",
           "CUDA_CORE_BUFFER", "CUDA_CORE_VIEW"]

#: :func:`cuda_core_kind` of a ``cuda.core`` ``Buffer`` (``ManagedBuffer`` too) and of a
#: ``cuda.core.utils.StridedMemoryView``.
CUDA_CORE_BUFFER, CUDA_CORE_VIEW = "Buffer", "StridedMemoryView"
_UINT8 = np.dtype(np.uint8)


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


def cuda_core_kind(obj):
    """:data:`CUDA_CORE_BUFFER` or :data:`CUDA_CORE_VIEW` when ``obj`` is a cuda.core
    ``Buffer`` or ``StridedMemoryView`` (its class, or a base of it, has that name and is
    defined in a ``cuda.core`` module: ``cuda.core._memory._buffer``,
    ``cuda.core._memoryview``, or ``cuda.core.experimental.*`` before cuda-core 0.5), else
    None.  cuda.core is never imported here: such an object passed in means the program
    already did."""
    for c in type(obj).__mro__:
        name = c.__name__
        if (name == CUDA_CORE_BUFFER or name == CUDA_CORE_VIEW) \
                and c.__module__.startswith("cuda.core"):
            return name
    return None


def cuda_core_parts(obj):
    """``(ptr, shape, strides, dtype, readonly)`` of the memory a cuda.core object gives a
    kernel (``ptr`` an int device address, ``strides`` in bytes), read from its documented
    attributes, as numba-cuda types and passes them:

    - a ``Buffer`` is a 1-D C-contiguous ``uint8`` array of ``size`` bytes at ``handle``
      (numba-cuda's ``typeof`` of a Buffer), writable;
    - a ``StridedMemoryView`` is an array of its ``dtype`` and ``shape`` at ``ptr``, with
      ``strides`` (counted in elements, None for C-contiguous) times the item size, read-only
      when ``readonly``.

    Raises ValueError for a closed Buffer and for memory a kernel cannot reach (its
    ``is_device_accessible`` is False: a view of host memory), TypeError for a view without a
    dtype (a DLPack type NumPy has no dtype for) or an object that is neither."""
    kind = cuda_core_kind(obj)
    if kind is None:
        raise TypeError(f"{type(obj).__name__} is not a cuda.core Buffer or StridedMemoryView")
    if kind == CUDA_CORE_BUFFER:
        if getattr(obj, "is_closed", False):
            raise ValueError(f"cuda.core Buffer {obj!r:.80} is closed: its memory was "
                             "released, so a kernel cannot use it")
        if not obj.is_device_accessible:
            raise ValueError(f"cuda.core Buffer {obj!r:.80} is host memory that the device "
                             "cannot access (is_device_accessible is False); allocate it "
                             "from a device, pinned or managed memory resource")
        size = int(obj.size)
        return int(obj.handle or 0), (size,), (1,), _UINT8, False
    if not obj.is_device_accessible:
        raise ValueError(f"cuda.core StridedMemoryView {obj!r:.80} views host memory that "
                         "the device cannot access (is_device_accessible is False); copy it "
                         "to the device first")
    dtype = obj.dtype
    if dtype is None:
        raise TypeError(f"cuda.core StridedMemoryView {obj!r:.80} has no NumPy dtype, so a "
                        "kernel cannot be typed for it")
    dtype = np.dtype(dtype)
    shape = tuple(int(n) for n in obj.shape)
    isz = dtype.itemsize
    counts = obj.strides
    if counts is None:
        strides, acc = [], isz
        for n in reversed(shape):
            strides.append(acc)
            acc *= max(n, 1)
        strides = tuple(reversed(strides))
    else:
        strides = tuple(int(s) * isz for s in counts)
        if len(strides) != len(shape):
            raise ValueError(f"cuda.core StridedMemoryView {obj!r:.80} has {len(strides)} "
                             f"strides for {len(shape)} dimensions")
    return int(obj.ptr or 0), shape, strides, dtype, bool(obj.readonly)
