"""``DeviceRecord``: one record of a structured dtype in device memory (numba.cuda's
``DeviceRecord``); ``to_device(np_structured_scalar)`` makes one."""
import ctypes

import numpy as np

from . import _runtime
from . import layout as L
from .devicearray import DeviceNDArray, _alloc, _handle, _check_host_dst
from .transfer import host_ptr, host_values

__all__ = ["DeviceRecord"]


class DeviceRecord:
    """A structured scalar (one record of a structured dtype) in device memory.

    ``DeviceRecord(dtype, stream=0, gpu_data=None)`` as numba.cuda; ``to_device(np_record)``
    makes one.  Members: ``dtype``, ``shape`` (``()``), ``strides`` (``()``), ``size``
    (1), ``nbytes``, ``_data_ptr``, ``gpu_data``, ``stream``, ``copy_to_host``,
    ``copy_to_device``, ``device_ctypes_pointer``, and ``rec[field]`` (a NumPy scalar for a
    scalar field, a ``DeviceNDArray`` view for an array field, a ``DeviceRecord`` for a nested
    record)."""

    __slots__ = ("dtype", "stream", "gpu_data", "_data_ptr", "__weakref__")
    shape = ()
    strides = ()
    ndim = 0
    size = 1
    _layout = "C"
    __cuda_memory__ = True

    def __init__(self, dtype, stream=0, gpu_data=None):
        dtype = L.normalize_dtype(dtype)
        if dtype.fields is None:
            raise TypeError(f"DeviceRecord needs a structured dtype, got {dtype}")
        if gpu_data is None:
            gpu_data, ptr = _alloc(dtype.itemsize)
        else:
            ptr = gpu_data.device_pointer_value
        self.dtype, self.stream, self.gpu_data, self._data_ptr = dtype, stream, gpu_data, ptr

    @property
    def nbytes(self):
        return self.dtype.itemsize

    @property
    def alloc_size(self):
        return 0 if self.gpu_data is None else self.gpu_data.size

    @property
    def device_ctypes_pointer(self):
        return ctypes.c_void_p(self._data_ptr or None)

    def copy_to_host(self, ary=None, stream=0):
        """The record as a NumPy structured scalar, or copied into 0-d/size-1 ``ary``."""
        h = _handle(stream, self.stream)
        out = np.empty((), self.dtype) if ary is None else ary
        if ary is not None:
            _check_host_dst(ary, self.dtype, (), "DeviceRecord.copy_to_host")
            if ary.size != 1 or not ary.flags.c_contiguous:
                raise ValueError(f"DeviceRecord.copy_to_host: destination shape {ary.shape} "
                                 "must hold exactly one record")
        if self.dtype.itemsize:
            drv = _runtime.driver()
            drv.memcpy_dtoh(host_ptr(out), self._data_ptr, self.dtype.itemsize, h)
            if h and ary is None:
                drv.stream_synchronize(h)
        return out[()] if ary is None else ary

    def copy_to_device(self, ary, stream=0):
        """Copy a structured scalar / 0-d array of the same dtype into the record."""
        h = _handle(stream, self.stream)
        src = np.asarray(ary)
        if src.dtype != self.dtype:
            raise TypeError(f"DeviceRecord.copy_to_device: incompatible dtype: record has "
                            f"{self.dtype}, source has {src.dtype}")
        if src.size != 1:
            raise ValueError(f"DeviceRecord.copy_to_device: source shape {src.shape} must hold "
                             "exactly one record")
        src = np.ascontiguousarray(src)
        if self.dtype.itemsize:
            _runtime.driver().memcpy_htod(self._data_ptr, host_ptr(src), self.dtype.itemsize, h)

    def __getitem__(self, field):
        try:
            ftype, offset = self.dtype.fields[field][:2]
        except (KeyError, TypeError):
            raise KeyError(f"record {self.dtype} has no field {field!r}; fields: "
                           f"{list(self.dtype.names)}") from None
        ptr = self._data_ptr + offset
        if ftype.subdtype is not None:
            base, shape = ftype.subdtype
            strides = L.contiguous_strides(shape, base.itemsize)
            return DeviceNDArray._make(shape, strides, base, ptr, self.gpu_data, self.stream)
        if ftype.fields is not None:
            rec = object.__new__(DeviceRecord)
            rec.dtype, rec.stream, rec.gpu_data, rec._data_ptr = (ftype, self.stream,
                                                                  self.gpu_data, ptr)
            return rec
        out = np.empty((), ftype)
        drv = _runtime.driver()
        h = _handle(0, self.stream)
        drv.memcpy_dtoh(host_ptr(out), ptr, ftype.itemsize, h)
        if h:
            drv.stream_synchronize(h)
        return out[()]

    def __setitem__(self, field, value):
        ftype, offset = self.dtype.fields[field][:2]
        src = np.ascontiguousarray(host_values(value, ftype))
        _runtime.driver().memcpy_htod(self._data_ptr + offset, host_ptr(src), ftype.itemsize,
                                      _handle(0, self.stream))

    def __repr__(self):
        return f"<cujit DeviceRecord dtype={self.dtype} ptr={self._data_ptr:#x}>"
