"""``DeviceRecord``: one record of a structured dtype in device memory (numba.cuda's
``DeviceRecord``); ``to_device(np_structured_scalar)`` makes one."""
import ctypes
from time import perf_counter_ns as _now

import numpy as np

from . import _runtime
from ..types.core import Record as _RecordType
from . import layout as L
from . import devicearray
from .devicearray import DeviceNDArray, _alloc, _handle, _check_host_dst
from .transfer import host_ptr, host_values, copied

__all__ = ["DeviceRecord", "is_device_array"]


def is_device_array(obj):
    """True for cujit device arrays and records (not for foreign CAI objects)."""
    return isinstance(obj, (DeviceNDArray, DeviceRecord))


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
    def _numba_type_(self):
        """The record's type as a kernel argument, ``cujit.types.Record(dtype)`` (numba's
        typing hook, numba-cuda's ``DeviceRecord._numba_type_``; equal to
        ``numpy_support.from_dtype(dtype)``)."""
        return _RecordType(self.dtype)

    @property
    def alloc_size(self):
        return 0 if self.gpu_data is None else self.gpu_data.size

    @property
    def device_ctypes_pointer(self):
        """``ctypes.c_size_t`` of the record's device address (numba-cuda's type)."""
        p = self._data_ptr
        return ctypes.c_size_t(p) if p else ctypes.c_void_p(None)

    def copy_to_host(self, ary=None, stream=0):
        """The record as a NumPy structured scalar, or copied into ``ary``: a 0-d/size-1
        array, or a structured scalar (``np.void``, ``np.record``: numba.cuda fills it in
        place) of the record's dtype, returned.  TypeError for another dtype or kind of
        destination, ValueError for an array that is not one contiguous writable record;
        the destination is untouched then."""
        h = _handle(stream, self.stream)
        if isinstance(ary, np.void):
            if ary.dtype != self.dtype:
                raise TypeError(f"DeviceRecord.copy_to_host: incompatible dtype: record has "
                                f"{self.dtype}, destination has {ary.dtype}")
            # a structured scalar's buffer is read-only to Python: fill it field by field
            # (a scalar taken from an array writes through to that array, as in NumPy)
            value = self.copy_to_host(stream=stream)      # synchronises its stream
            for name in self.dtype.names:
                ary[name] = value[name]
            return ary
        out = np.empty((), self.dtype) if ary is None else ary
        if ary is not None:
            _check_host_dst(ary, self.dtype, (), "DeviceRecord.copy_to_host")
            if ary.size != 1 or not ary.flags.c_contiguous:
                raise ValueError(f"DeviceRecord.copy_to_host: destination shape {ary.shape} "
                                 "must hold exactly one record")
        if self.dtype.itemsize:
            drv = _runtime.bound_driver()
            t0 = copied.listeners and _now()
            drv.memcpy_dtoh(host_ptr(out), self._data_ptr, self.dtype.itemsize, h)
            if h and ary is None:
                drv.stream_synchronize(h)
            if t0:
                copied.emit("DtoH", self.dtype.itemsize, h, t0)
        return out[()] if ary is None else ary

    def copy_to_device(self, ary, stream=0):
        """Copy a structured scalar / 0-d array of the same dtype, or another
        ``DeviceRecord`` (device to device), into the record.  TypeError for another dtype,
        ValueError for a source that is not one record; the record is untouched then."""
        h = _handle(stream, self.stream)
        if isinstance(ary, DeviceRecord):
            if ary.dtype != self.dtype:
                raise TypeError(f"DeviceRecord.copy_to_device: incompatible dtype: record has "
                                f"{self.dtype}, source has {ary.dtype}")
            if self.dtype.itemsize:
                _runtime.bound_driver().memcpy_dtod(self._data_ptr, ary._data_ptr,
                                              self.dtype.itemsize, h)
            return
        src = np.asarray(ary)
        if src.dtype != self.dtype:
            raise TypeError(f"DeviceRecord.copy_to_device: incompatible dtype: record has "
                            f"{self.dtype}, source has {src.dtype}")
        if src.size != 1:
            raise ValueError(f"DeviceRecord.copy_to_device: source shape {src.shape} must hold "
                             "exactly one record")
        src = np.ascontiguousarray(src)
        if self.dtype.itemsize:
            t0 = copied.listeners and _now()
            _runtime.bound_driver().memcpy_htod(self._data_ptr, host_ptr(src), self.dtype.itemsize, h)
            if t0:
                copied.emit("HtoD", self.dtype.itemsize, h, t0)

    @classmethod
    def _at(cls, dtype, ptr, gpu_data, stream):
        """A record view of device memory at ``ptr`` (kept alive by ``gpu_data``): what an
        element of a structured device array and a nested-record field return, so that field
        writes reach the device."""
        rec = object.__new__(cls)
        rec.dtype, rec.stream, rec.gpu_data, rec._data_ptr = dtype, stream, gpu_data, ptr
        return rec

    def _field(self, field):
        names = self.dtype.names
        if isinstance(field, (int, np.integer)) and not isinstance(field, bool):
            # as np.void: an integer picks the field by position
            i = int(field)
            if not -len(names) <= i < len(names):
                raise IndexError(f"invalid index {field} for a record with {len(names)} "
                                 "fields")
            field = names[i]
        try:
            ftype, offset = self.dtype.fields[field][:2]
        except (KeyError, TypeError):
            raise KeyError(f"record {self.dtype} has no field {field!r}; fields: "
                           f"{list(names)}") from None
        return ftype, self._data_ptr + offset

    def __array__(self, dtype=None, copy=None):
        """A 0-d host array holding a copy of the record (``np.asarray(rec)``)."""
        if copy is False:
            raise ValueError("`copy=False` is not supported: a DeviceRecord cannot be viewed "
                             "as a host array without a copy")
        out = np.empty((), self.dtype)
        self.copy_to_host(out)
        return out if dtype is None else out.astype(dtype)

    def __len__(self):
        return len(self.dtype.names)

    def __getitem__(self, field):
        return self.getitem(field)

    def getitem(self, field, stream=0):
        """``rec[name]`` (or a field position): a NumPy scalar read from the device for a
        scalar or string field (waits for ``stream``, default the bound one), a
        ``DeviceNDArray`` view for an array field, a ``DeviceRecord`` view for a nested
        record.  Views write through to device memory.  KeyError for an unknown name,
        IndexError for a position out of range."""
        ftype, ptr = self._field(field)
        bound = stream or self.stream
        if ftype.subdtype is not None:
            base, shape = ftype.subdtype
            strides = L.contiguous_strides(shape, base.itemsize)
            return DeviceNDArray._make(shape, strides, base, ptr, self.gpu_data, bound)
        if ftype.fields is not None:
            return DeviceRecord._at(ftype, ptr, self.gpu_data, bound)
        out = np.empty((), ftype)
        drv = _runtime.bound_driver()
        h = _handle(stream, self.stream)
        t0 = copied.listeners and _now()
        drv.memcpy_dtoh(host_ptr(out), ptr, ftype.itemsize, h)
        if h:
            drv.stream_synchronize(h)
        if t0:
            copied.emit("DtoH", ftype.itemsize, h, t0)
        return out[()]

    def __setitem__(self, field, value):
        self.setitem(field, value)

    def setitem(self, field, value, stream=0):
        """``rec[name] = value``: cast as NumPy's ``np.void.__setitem__`` (an array field
        broadcasts ``value``; a nested record takes a tuple or structured scalar) and copied
        to device memory: complete on return without a stream, else queued on ``stream``
        (default the bound one) as numba.cuda's.  KeyError/IndexError as ``getitem``;
        ValueError when the record is in read-only imported memory or ``value`` does not
        broadcast; the record is then untouched."""
        ftype, ptr = self._field(field)
        g = self.gpu_data
        if g is not None and getattr(g, "readonly", False):
            raise ValueError("DeviceRecord.__setitem__: assignment destination is read-only "
                             "(the record lies in a read-only __cuda_array_interface__ import)")
        if ftype.subdtype is not None:
            base, shape = ftype.subdtype
            src = np.empty(shape, base)
            src[...] = value
        else:
            # scalars and sequences checked per value as NumPy's element assignment
            src = host_values(value, ftype) if not isinstance(value, np.ndarray) \
                else np.array(value, dtype=ftype)
            if src.shape != ():
                raise ValueError(f"setting field {field!r} ({ftype}) needs a scalar, got "
                                 f"shape {src.shape}")
        src = np.ascontiguousarray(src)
        # ``src`` is a temporary pageable buffer: the driver has staged it by the time an
        # async copy from pageable memory returns, so no synchronisation (DeviceNDArray's
        # element assignment does the same)
        h = _handle(stream, self.stream)
        t0 = copied.listeners and _now()
        _runtime.bound_driver().memcpy_htod(ptr, host_ptr(src), ftype.itemsize, h)
        if t0:
            copied.emit("HtoD", ftype.itemsize, h, t0)

    def __repr__(self):
        return f"<cujit DeviceRecord dtype={self.dtype} ptr={self._data_ptr:#x}>"


devicearray.provide(DeviceRecord=DeviceRecord)
