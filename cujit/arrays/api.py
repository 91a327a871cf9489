"""Public constructors and transfers: ``device_array``, ``device_array_like``, ``to_device``
(numba.cuda names, R-ARR-1..3), the kernel launcher's ``auto_device`` and ``mapped`` (device
views of page-locked host arrays: here rather than in :mod:`.hostmem`, which is below
:mod:`.devicearray`)."""
import contextlib

import numpy as np

from . import _runtime
from . import devicearray
from . import hostmem
from . import layout as L
from .devicearray import DeviceNDArray, _alloc, _copy_htod_contig
from .record import DeviceRecord
from .transfer import copy_htod
from .layout import reject_masked, _DTYPES
from ..memory.protocol import device_pointer

_new = object.__new__

__all__ = ["device_array", "device_array_like", "to_device", "auto_device", "mapped"]


def device_array(shape, dtype=np.float64, strides=None, order="C", stream=0):
    """Uninitialised device array, like ``np.empty``.

    ``shape``: int or tuple of ints (Python or NumPy); ``dtype``: anything ``np.dtype``
    accepts, including cujit types (``cujit.float32``); ``strides``: bytes, one per axis,
    non-negative; ``order``: 'C' or 'F'; ``stream``: 0 or a Stream to bind.  Size 0 allocates
    nothing (NULL pointer).  TypeError for a non-integer shape or a non-dtype, ValueError for
    a negative size, a bad ``order`` or ``len(strides) != ndim``."""
    if type(shape) is int and shape >= 0:
        shape = (shape,)
    else:
        shape = L.normalize_shape(shape)
    try:
        dtype = _DTYPES[dtype]          # normalize_dtype's own cache, without its call
    except (KeyError, TypeError):
        dtype = L.normalize_dtype(dtype)
    if strides is None:
        if order == "C":
            strides = ((dtype.itemsize,) if len(shape) == 1
                       else L.contiguous_strides(shape, dtype.itemsize, "C"))
        elif order == "F":
            strides = L.contiguous_strides(shape, dtype.itemsize, "F")
        else:
            raise ValueError(f"order {order!r} must be 'C' or 'F'")
        layout = "C" if order == "C" else None
    else:
        strides = L.normalize_strides(strides, len(shape))
        if any(s < 0 for s in strides):
            raise ValueError(f"strides {strides} must not be negative for a new allocation")
        layout = None
    if stream:
        _runtime.stream_handle(stream)
    size = 1
    for n in shape:
        size *= n
    if not size:
        nbytes = 0
    elif layout == "C":
        nbytes = size * dtype.itemsize
    else:
        nbytes = L.extent(shape, strides, dtype.itemsize)[1]
    # _alloc and DeviceNDArray._make inlined for the common case (one allocation on the
    # current context, no stream): two Python calls fewer on every allocation
    if not nbytes or stream:
        mem, ptr = _alloc(nbytes, stream)
    else:
        mem = _runtime.current_context().memalloc(nbytes)
        ptr = mem.device_pointer_value
    a = _new(DeviceNDArray)
    a._init(shape, strides, dtype, size, ptr, mem, stream, layout)
    return a


def device_array_like(ary, stream=0):
    """Uninitialised device array with ``ary``'s shape and dtype, packed in its axis order:
    C stays C, F stays F, a strided or permuted input gets fresh contiguous strides in the
    same axis order (numba's ``device_array_like``).  ``ary``: anything with ``shape``,
    ``dtype`` and ``strides`` (NumPy, device, mapped/managed array); TypeError naming what was
    given otherwise (lists, None) or for an object dtype."""
    try:
        shape, dtype, strides = tuple(ary.shape), ary.dtype, tuple(ary.strides)
    except (AttributeError, TypeError):
        raise TypeError(f"device_array_like needs an array (NumPy or device array) with shape, "
                        f"dtype and strides, got {type(ary).__name__}: {ary!r:.80}") from None
    dtype = L.normalize_dtype(dtype)
    strides = L.packed_strides_like(shape, strides, dtype.itemsize)
    return device_array(shape, dtype, strides, stream=stream)


def _is_struct_scalar(obj):
    return isinstance(obj, np.void) and obj.dtype.fields is not None


def _copy_into(to, obj, stream, copy):
    """``to_device(obj, to=to)``: ``obj`` copied into ``to``, which is returned."""
    if not isinstance(to, (DeviceNDArray, DeviceRecord)):
        raise TypeError(f"to_device(to=...) must be a DeviceNDArray or DeviceRecord, got "
                        f"{type(to).__name__}")
    _runtime.stream_handle(stream)
    if copy:
        to.copy_to_device(obj, stream=stream)
    return to


def to_device(obj, stream=0, copy=True, to=None):
    """Copy host data to the device and return the ``DeviceNDArray``.

    ``obj``: a NumPy array (any strides: strided and broadcast arrays are copied exactly), or
    anything ``np.asarray`` accepts, or a structured scalar (→ ``DeviceRecord``).  Device
    arrays are returned as they are; objects with ``__cuda_array_interface__`` become
    zero-copy views.  ``stream``: 0 (synchronous) or a Stream (queued; do not reuse the host
    memory before synchronising).  ``to``: an existing ``DeviceNDArray`` (or ``DeviceRecord``
    for a structured scalar) to copy ``obj`` into and return, whatever ``obj`` is: host,
    device, mapped or managed arrays, records (numba: ``to.copy_to_device(obj)``, with its
    dtype and shape checks: TypeError/ValueError, ``to`` untouched); TypeError when ``to``
    is neither.  ``copy=False`` allocates without copying (numba's meaning; with ``to``,
    nothing is copied)."""
    if to is not None:
        return _copy_into(to, obj, stream, copy)
    if type(obj) is np.ndarray:
        ary = obj
    else:
        if isinstance(obj, (DeviceNDArray, DeviceRecord)):
            return obj
        if device_pointer(obj) is not None \
                and hasattr(obj, "__cuda_array_interface__"):
            return obj      # mapped / managed arrays are device-accessible already
        if not isinstance(obj, np.ndarray) and hasattr(obj, "__cuda_array_interface__"):
            from .interop import as_cuda_array
            return as_cuda_array(obj)
        reject_masked(obj, "to_device")
        if _is_struct_scalar(obj):
            _runtime.stream_handle(stream)
            rec = DeviceRecord(obj.dtype, stream=stream)
            if copy:
                rec.copy_to_device(np.asarray(obj), stream=stream)
            return rec
        ary = np.asarray(obj)
    h = _runtime.stream_handle(stream)
    dtype = ary.dtype
    if dtype.hasobject:
        if not isinstance(obj, np.ndarray):
            # None, [None, 1], a dict: name what was given, not what asarray made of it
            raise TypeError(f"to_device needs an array or array-like of numbers, bools, "
                            f"strings or records; got {type(obj).__name__} {obj!r:.60}, "
                            f"which NumPy turns into an array of Python objects "
                            f"(dtype {dtype})")
        raise TypeError(f"to_device: arrays of Python objects (dtype {dtype}) cannot be copied "
                        "to the device")
    shape = ary.shape
    flags = ary.flags
    if flags.c_contiguous:
        # the hot path: one allocation, one copy
        nbytes = ary.nbytes
        mem, ptr = _alloc(nbytes, stream)
        # an empty array keeps its strides (numba.cuda's copy does; numba issue 8477)
        strides = L.contiguous_strides(shape, dtype.itemsize, "C") if nbytes \
            else tuple(ary.strides)
        dev = DeviceNDArray._make(shape, strides, dtype, ptr, mem, stream, "C")
        if copy and nbytes:
            _copy_htod_contig(ptr, ary, nbytes, h)
        return dev
    dev = device_array_like(ary, stream=stream)
    if copy and dev.size:
        if dev._layout == "F" and flags.f_contiguous:
            _copy_htod_contig(dev._data_ptr, ary, dev.nbytes, h)
        else:
            copy_htod(dev._data_ptr, shape, dev.strides, ary, h)
    return dev


def auto_device(obj, stream=0):
    """Kernel-argument conversion: ``(device_array, copied_from_host)``.

    cujit device arrays, mapped/managed arrays and ``__cuda_array_interface__`` objects are
    used in place (False); DLPack CUDA objects are imported zero-copy (False); anything else
    is converted with ``np.asarray`` and copied to the device (True)."""
    if isinstance(obj, (DeviceNDArray, DeviceRecord)):
        return obj, False
    if device_pointer(obj) is not None:
        return obj, False
    if not isinstance(obj, np.ndarray):
        if hasattr(obj, "__cuda_array_interface__"):
            from .interop import as_cuda_array
            return as_cuda_array(obj), False
        if hasattr(obj, "__dlpack__") and hasattr(obj, "__dlpack_device__"):
            try:
                dev = obj.__dlpack_device__()[0]
            except Exception:
                dev = None
            if dev in (2, 13):
                from .dlpack import from_dlpack
                return from_dlpack(obj), False
    return to_device(obj, stream=stream), True


@contextlib.contextmanager
def mapped(*arylist, stream=0):
    """``with mapped(a, b, ...) as views:`` page-locks and maps the arrays into the device's
    address space and yields device views of them (one array → one ``DeviceNDArray``, several
    → a list); unmaps at once on exit, also on an exception."""
    hostmem._check_stream(stream)
    ctx = _runtime.current_context()
    regs, per = hostmem._pin_all(ctx, arylist, True, "mapped()")
    try:
        views = []
        for ary, (addr, reg) in zip(arylist, per):
            if reg is None:
                mem, dptr = None, 0
            else:
                mem = reg[0]
                dptr = mem.device_pointer_value + (addr - reg[1])
            views.append(DeviceNDArray._make(ary.shape, ary.strides, ary.dtype, dptr, mem,
                                             stream))
        yield views[0] if len(views) == 1 else views
    finally:
        hostmem._unpin_all(regs)


devicearray.provide(to_device=to_device)
