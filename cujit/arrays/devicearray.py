"""``DeviceNDArray``: strided arrays in device memory (numba.cuda's ``cudadrv/devicearray.py``
names and semantics).

The launch hot path reads plain attributes (docs/interfaces.md): ``shape``, ``strides``
(bytes), ``dtype``, ``ndim``, ``size``, ``_data_ptr`` (device address of element 0...0, 0 for
size 0), ``_layout`` ('C'/'F'/'A'), ``stream`` (0 or a Stream) and ``gpu_data`` (the object
keeping the allocation alive, None for size 0).  Views share ``gpu_data`` with their parent
and keep its stream.  Pointer arithmetic is in Python ints.
"""
import ctypes
from time import perf_counter_ns as _now

import numpy as np

from . import _runtime
from . import staging
from . import layout as L
from .cai import cai_dict
from .transfer import copy_htod, copy_dtoh, copy_device, host_ptr, host_values, copied
from ..runtime.graphs import capturing as _capturing, keep_for_graph as _keep_for_graph
from ..memory.protocol import has_device_pointer
from ..types.core import Array as _ArrayType, from_dtype as _type_of_dtype

__all__ = ["DeviceNDArray", "provide"]

# What DeviceNDArray's methods return or call from the array modules above this one: those
# modules build DeviceNDArray objects, so they import this module, and importing them here
# would close a circle.  They hand their pieces in when imported (``provide``).
_above = {}


def provide(*, DeviceRecord=None, to_device=None, IpcArrayHandle=None, as_cuda_array=None,
            to_dlpack_capsule=None, dlpack_device=None):
    """Hands ``DeviceNDArray`` what its methods need from the array modules above this one:
    ``DeviceRecord`` (record.py: an element of a structured array), ``to_device`` (api.py:
    unpickling), ``IpcArrayHandle`` (ipc.py: ``get_ipc_handle``), ``as_cuda_array``
    (interop.py: a CUDA-array-interface object as a copy source), ``to_dlpack_capsule`` and
    ``dlpack_device`` (dlpack.py: ``__dlpack__``, ``__dlpack_device__``).  Each of those
    modules calls it once, when imported; ``cujit/arrays/__init__.py`` imports them all.
    Arguments left None keep what was given before; any other keyword is a TypeError."""
    given = dict(DeviceRecord=DeviceRecord, to_device=to_device,
                 IpcArrayHandle=IpcArrayHandle, as_cuda_array=as_cuda_array,
                 to_dlpack_capsule=to_dlpack_capsule, dlpack_device=dlpack_device)
    _above.update((k, v) for k, v in given.items() if v is not None)


def _alloc(nbytes, stream=0):
    """``(allocation, pointer)`` of ``nbytes``; with a stream, a stream-ordered manager (the
    pool's ``stream_ordered``) allocates for that stream."""
    if nbytes == 0:
        return None, 0
    ctx = _runtime.current_context()
    if stream:
        mm = ctx.memory_manager
        if getattr(mm, "stream_ordered", False):
            mem = mm.memalloc(nbytes, stream=stream)
            return mem, mem.device_pointer_value
    mem = ctx.memalloc(nbytes)
    return mem, mem.device_pointer_value


def _handle(stream, bound):
    """Driver handle for a method's ``stream=`` argument, defaulting to the bound stream."""
    if stream is None or (type(stream) is int and stream == 0):
        stream = bound
        if not stream:
            return 0
    return _runtime.stream_handle(stream)


def _check_host_dst(ary, dtype, shape, what):
    if not isinstance(ary, np.ndarray):
        raise TypeError(f"{what}: destination must be a numpy.ndarray, got {type(ary).__name__}")
    if ary.dtype != dtype:
        raise TypeError(f"{what}: incompatible dtype: device array has {dtype}, host array has "
                        f"{ary.dtype}")
    if not ary.flags.writeable:
        raise ValueError(f"{what}: the host array is read-only")


def _match_shapes(a_shape, b_shape, what):
    """Shapes must be equal, or equal once length-1 axes are dropped (numba's rule)."""
    if a_shape == b_shape:
        return False
    if tuple(n for n in a_shape if n != 1) == tuple(n for n in b_shape if n != 1):
        return True
    raise ValueError(f"{what}: incompatible shape: device array has {a_shape}, "
                     f"the other array has {b_shape}")


def _gpu_data_pointer(gpu_data, shape, strides, dtype, size):
    """Device address of element 0...0 in ``gpu_data`` (0 for size 0).  TypeError when
    ``gpu_data`` is not MemoryPointer-like (no int ``device_pointer_value``), ValueError when
    its ``size`` is smaller than the bytes the shape and strides reach."""
    ptr = getattr(gpu_data, "device_pointer_value", None)
    if isinstance(ptr, bool) or not isinstance(ptr, (int, type(None))) or (
            ptr is None and not hasattr(gpu_data, "device_pointer_value")):
        raise TypeError(f"DeviceNDArray: gpu_data must be a MemoryPointer-like object (with an "
                        f"int device_pointer_value), got {gpu_data!r} of type "
                        f"{type(gpu_data).__name__}")
    if not size:
        return 0
    nbytes = getattr(gpu_data, "size", None)
    if isinstance(nbytes, int):
        lo, hi = L.extent(shape, strides, dtype.itemsize)
        if hi > nbytes:
            raise ValueError(f"DeviceNDArray: shape {shape} with strides {strides} reaches "
                             f"{hi} bytes but gpu_data holds {nbytes} bytes")
    return ptr or 0


def _squeezed(shape, strides):
    keep = [i for i, n in enumerate(shape) if n != 1]
    return tuple(shape[i] for i in keep), tuple(strides[i] for i in keep)


class DeviceNDArray:
    """An array in device memory.

    ``DeviceNDArray(shape, strides, dtype, stream=0, gpu_data=None)`` as numba.cuda: ``shape``
    an int or tuple of ints, ``strides`` a tuple of byte strides (one per axis), ``dtype`` a
    NumPy dtype (or anything ``np.dtype`` accepts), ``stream`` 0 or a Stream the array is
    bound to, ``gpu_data`` an existing allocation (``MemoryPointer``; its pointer is element
    0...0) or None to allocate.  Users normally call :func:`cujit.device_array` /
    :func:`cujit.to_device` instead.  Raises TypeError/ValueError for malformed arguments.
    """

    __slots__ = ("shape", "strides", "dtype", "ndim", "size", "_data_ptr", "_layout",
                 "stream", "gpu_data", "__weakref__")

    __cuda_memory__ = True
    #: numba's marker of its device arrays (``cudadrv.devicearray.is_cuda_ndarray``)
    __cuda_ndarray__ = True

    def __init__(self, shape, strides, dtype, stream=0, gpu_data=None):
        shape = L.normalize_shape(shape)
        dtype = L.normalize_dtype(dtype)
        strides = L.normalize_strides(strides, len(shape))
        size = 1
        for n in shape:
            size *= n
        if stream:
            _runtime.stream_handle(stream)  # TypeError now rather than at first copy
        if gpu_data is None:
            lo, hi = L.extent(shape, strides, dtype.itemsize)
            if lo < 0:
                raise ValueError(f"strides {strides} are negative; allocate with positive "
                                 "strides and take a reversed view")
            gpu_data, ptr = _alloc(hi if size else 0)
        else:
            ptr = _gpu_data_pointer(gpu_data, shape, strides, dtype, size)
        self._init(shape, strides, dtype, size, ptr, gpu_data, stream)

    def _init(self, shape, strides, dtype, size, ptr, gpu_data, stream, layout=None):
        self.shape = shape
        self.strides = strides
        self.dtype = dtype
        self.ndim = len(shape)
        self.size = size
        self._data_ptr = ptr if size else 0
        self._layout = layout or L.layout_code(shape, strides, dtype.itemsize)
        self.stream = stream
        self.gpu_data = gpu_data

    @classmethod
    def _make(cls, shape, strides, dtype, ptr, gpu_data, stream=0, layout=None):
        """Construct without validation (all arguments already normalised)."""
        self = object.__new__(cls)
        size = 1
        for n in shape:
            size *= n
        self._init(shape, strides, dtype, size, ptr, gpu_data, stream, layout)
        return self

    def _view(self, offset, shape, strides, dtype=None, stream=None):
        return DeviceNDArray._make(shape, strides, dtype or self.dtype, self._data_ptr + offset,
                                   self.gpu_data, self.stream if stream is None else stream)

    # -- properties ------------------------------------------------------------------------
    @property
    def nbytes(self):
        """Bytes of the viewed elements (``size * itemsize``)."""
        return self.size * self.dtype.itemsize

    @property
    def itemsize(self):
        return self.dtype.itemsize

    @property
    def alloc_size(self):
        """Bytes of device memory this array spans, from its lowest to its highest byte (0
        for size 0): the requested size for an array made by an allocator, a view's own
        extent for a view (numba.cuda's ``gpu_data.size``, whose views are memory views of
        their extent; cujit's share the parent's allocation object)."""
        if self.gpu_data is None:
            return 0
        lo, hi = L.extent(self.shape, self.strides, self.dtype.itemsize)
        return hi - lo

    @property
    def device_ctypes_pointer(self):
        """``ctypes.c_size_t`` of the address of element 0...0 (numba-cuda's type, its
        memory pointer's); ``ctypes.c_void_p`` NULL for size 0."""
        p = self._data_ptr
        return ctypes.c_size_t(p) if p else ctypes.c_void_p(None)

    @property
    def _readonly(self):
        """True for views of memory a producer exported read-only (a CUDA-array-interface
        ``data: (ptr, True)``): the flag rides on the shared allocation object, so every view
        keeps it."""
        g = self.gpu_data
        return g is not None and getattr(g, "readonly", False)

    @property
    def _numba_type_(self):
        """The array's type as a kernel argument: a ``cujit.types.Array`` of its dtype, ndim,
        layout ('C', 'F' or 'A') and read-only flag, the type ``cujit.types.typeof(self)``
        gives.  Numba's typing hook (numba-cuda's ``DeviceNDArray._numba_type_``), which code
        written for numba.cuda reads, e.g. ``d._numba_type_.layout``."""
        return _ArrayType(_type_of_dtype(self.dtype), self.ndim, self._layout, self._readonly)

    def _check_writeable(self, what):
        if self._readonly:
            raise ValueError(f"{what}: assignment destination is read-only (the device array "
                             "was imported from a read-only __cuda_array_interface__)")

    @property
    def flags(self):
        """``{'C_CONTIGUOUS': bool, 'F_CONTIGUOUS': bool, 'WRITEABLE': bool}`` as NumPy's
        flags; WRITEABLE is False for read-only imports."""
        isz = self.dtype.itemsize
        return {"C_CONTIGUOUS": L.is_c_contiguous(self.shape, self.strides, isz),
                "F_CONTIGUOUS": L.is_f_contiguous(self.shape, self.strides, isz),
                "WRITEABLE": not self._readonly}

    @property
    def T(self):
        return self.transpose()

    def __len__(self):
        if not self.shape:
            raise TypeError("len() of unsized object (0-d device array)")
        return self.shape[0]

    def __repr__(self):
        return (f"<cujit DeviceNDArray shape={self.shape} dtype={self.dtype} "
                f"strides={self.strides} ptr={self._data_ptr:#x}>")

    def is_c_contiguous(self):
        return L.is_c_contiguous(self.shape, self.strides, self.dtype.itemsize)

    def is_f_contiguous(self):
        return L.is_f_contiguous(self.shape, self.strides, self.dtype.itemsize)

    def bind(self, stream=0):
        """A view of the same memory bound to ``stream`` (its copies default to it)."""
        if stream:
            _runtime.stream_handle(stream)
        return self._view(0, self.shape, self.strides, stream=stream)

    def as_cuda_arg(self):
        return self.device_ctypes_pointer

    # -- views -----------------------------------------------------------------------------
    def reshape(self, *newshape, order="C"):
        """View with a new shape (one -1 allowed); NotImplementedError when a copy is needed."""
        if len(newshape) == 1 and not isinstance(newshape[0], int):
            one = newshape[0]
            if isinstance(one, (tuple, list)) or (getattr(one, "ndim", 0) >= 1
                                                   and not isinstance(one, (str, bytes))):
                newshape = tuple(one)       # any sequence of ints, as NumPy's reshape
        if newshape == self.shape and all(type(n) is int for n in newshape):
            return self._view(0, self.shape, self.strides)
        shape, strides = L.reshape(self.shape, self.strides, self.dtype.itemsize, newshape, order)
        return self._view(0, shape, strides)

    def ravel(self, order="C", stream=0):
        """1-D view when contiguous in ``order``; otherwise a new packed device copy."""
        if order not in ("C", "F", "A", "K"):
            raise ValueError(f"order {order!r} must be 'C', 'F', 'A' or 'K'")
        isz = self.dtype.itemsize
        if order in ("A", "K"):
            order = "F" if (self._layout == "F") else "C"
        if (order == "C" and self._layout == "C") or (order == "F" and self.is_f_contiguous()):
            return self._view(0, (self.size,), (isz,))
        src = self if order == "C" else self.transpose()
        out = DeviceNDArray(src.shape, L.contiguous_strides(src.shape, isz), self.dtype,
                            stream=self.stream)
        out.copy_to_device(src, stream=stream)
        return out.reshape(self.size)

    def view(self, dtype):
        """The same bytes as ``dtype`` (NumPy's ``ndarray.view`` rules)."""
        dtype = L.normalize_dtype(dtype)
        shape, strides = L.view_dtype(self.shape, self.strides, self.dtype.itemsize,
                                      dtype.itemsize)
        return self._view(0, shape, strides, dtype)

    def transpose(self, axes=None):
        """View with permuted axes (reversed when ``axes`` is None)."""
        shape, strides = L.transpose(self.shape, self.strides, axes)
        return self._view(0, shape, strides)

    def squeeze(self, axis=None, stream=0):
        """View without length-1 axes (or only those in ``axis``)."""
        shape, strides = L.squeeze(self.shape, self.strides, axis)
        return self._view(0, shape, strides, stream=stream or None)

    def split(self, section, stream=0):
        """1-D unit-stride arrays only: views of ``section`` elements each (the last shorter)."""
        if self.ndim != 1:
            raise ValueError(f"split needs a 1-D array, this one has shape {self.shape}")
        isz = self.dtype.itemsize
        if self.size > 1 and self.strides[0] != isz:
            raise ValueError(f"split needs unit stride, got stride {self.strides[0]} bytes "
                             f"for itemsize {isz}")
        section = int(section)
        if section <= 0:
            raise ValueError(f"section {section} must be a positive int")
        st = stream or None
        return [self._view(b * isz, (min(b + section, self.size) - b,), (isz,), stream=st)
                for b in range(0, self.size, section)]

    # -- element access and views by key ---------------------------------------------------
    def __getitem__(self, key):
        return self.getitem(key)

    def getitem(self, key, stream=0):
        """``a[key]``: a NumPy scalar (one small device->host copy) for an all-integer key,
        a :class:`~cujit.arrays.record.DeviceRecord` view of the element when the dtype is
        structured (field writes go to device memory, as numba.cuda), a view of one field
        for a field-name key, otherwise a view.  IndexError/TypeError for bad keys
        (:func:`layout.index`), KeyError for an unknown field name."""
        if isinstance(key, str):
            return self._field_view(key, stream)
        off, shape, strides, elem = L.index(self.shape, self.strides, key)
        if elem:
            dtype = self.dtype
            if dtype.fields is not None:
                return _above["DeviceRecord"]._at(dtype, self._data_ptr + off,
                                                  self.gpu_data, stream or self.stream)
            out = np.empty((), dtype)
            h = _handle(stream, self.stream)
            drv = _runtime.bound_driver()
            t0 = copied.listeners and _now()
            drv.memcpy_dtoh(host_ptr(out), self._data_ptr + off, dtype.itemsize, h)
            if h:
                drv.stream_synchronize(h)
            if t0:
                copied.emit("DtoH", dtype.itemsize, h, t0)
            return out[()]
        return DeviceNDArray._make(shape, strides, self.dtype, self._data_ptr + off,
                                   self.gpu_data, stream or self.stream)

    def _field_view(self, name, stream=0):
        """``a['name']``: the field as a strided view (NumPy's field indexing)."""
        fields = self.dtype.fields
        if fields is None or name not in fields:
            if fields is None:
                raise IndexError("only integers, slices (`:`), ellipsis (`...`), "
                                 "numpy.newaxis (`None`) and integer or boolean arrays are "
                                 f"valid indices (got field name {name!r} for dtype "
                                 f"{self.dtype})")
            raise KeyError(f"no field of name {name}; fields: {list(self.dtype.names)}")
        ftype, offset = fields[name][:2]
        shape, strides = self.shape, self.strides
        if ftype.subdtype is not None:
            base, sub = ftype.subdtype
            shape = shape + sub
            strides = strides + L.contiguous_strides(sub, base.itemsize)
            ftype = base
        return DeviceNDArray._make(shape, strides, ftype,
                                   (self._data_ptr + offset) if self.size else 0,
                                   self.gpu_data, stream or self.stream)

    def __setitem__(self, key, value):
        self.setitem(key, value)

    def setitem(self, key, value, stream=0):
        """``a[key] = value`` with NumPy's broadcasting and casting (arrays unsafely, scalars
        and sequences checked: see :func:`~cujit.arrays.transfer.host_values`); ``value`` a
        scalar, anything ``np.asarray`` takes, a device array or a CUDA-array-interface object.
        Never launches a kernel.  ValueError when ``value`` does not broadcast or this array
        is read-only (the destination is untouched)."""
        self._check_writeable("setitem")
        if isinstance(key, str):
            self._field_view(key).setitem(Ellipsis, value, stream)
            return
        off, shape, strides, _ = L.index(self.shape, self.strides, key)
        h = _handle(stream, self.stream)
        if _capturing and h in _capturing:
            _keep_for_graph(h, self, value)
        ptr = self._data_ptr + off
        dtype = self.dtype
        if isinstance(value, np.ma.MaskedArray):
            L.reject_masked(value, "setitem")
        src_dev = _as_device_source(value)
        if src_dev is not None:
            vshape = src_dev.shape
            while len(vshape) > len(shape) and vshape[0] == 1:
                vshape = vshape[1:]
            if vshape == shape and src_dev.dtype == dtype:
                sstrides = src_dev.strides[len(src_dev.shape) - len(vshape):]
                if src_dev.size:
                    copy_device(ptr, strides, self.gpu_data, src_dev._data_ptr, sstrides,
                                getattr(src_dev, "gpu_data", None), shape, dtype, h)
                return
            value = src_dev.copy_to_host(stream=stream)
        if not shape and self.shape and not (isinstance(value, np.ndarray) and not value.ndim):
            # one element: NumPy packs the value itself (a sequence is an error there)
            one = np.empty(1, dtype)
            one[0] = value
            vals = one.reshape(())
        else:
            vals = host_values(value, dtype)
        while vals.ndim > len(shape) and vals.shape[0] == 1:
            vals = vals.reshape(vals.shape[1:])    # vals[0] would be a scalar at 1-D
        if shape and vals.shape != shape and self._fill(ptr, shape, strides, vals, h):
            return
        if vals.shape != shape:
            try:
                vals = np.broadcast_to(vals, shape)
            except ValueError:
                raise ValueError("could not broadcast input array from shape "
                                 f"{L.shape_str(vals.shape)} into shape "
                                 f"{L.shape_str(shape)}") from None
        if 0 in shape:
            return
        if not shape:
            t0 = copied.listeners and _now()
            _runtime.bound_driver().memcpy_htod(ptr, host_ptr(vals), dtype.itemsize, h)
            if t0:
                copied.emit("HtoD", dtype.itemsize, h, t0)
            return
        copy_htod(ptr, shape, strides, vals, h)

    def _fill(self, ptr, shape, strides, vals, h):
        """Broadcast assignment into a C-contiguous destination without a host buffer of the
        destination's size: ``memset`` when every byte is equal, else one copy of the value
        block and log2(n) doubling device->device copies.  False when not applicable (the
        caller then stages through the host)."""
        itemsize = self.dtype.itemsize
        if not L.is_c_contiguous(shape, strides, itemsize) or 0 in shape:
            return False
        k = vals.ndim
        if k > len(shape) or (k and vals.shape != shape[len(shape) - k:]):
            return False        # broadcasting inside the trailing axes: stage instead
        size = 1
        for n in shape:
            size *= n
        nbytes = size * itemsize
        block = np.ascontiguousarray(vals)
        raw = block.view(np.uint8).reshape(-1)
        drv = _runtime.bound_driver()
        if (raw == raw[0]).all():
            drv.memset_d8(ptr, int(raw[0]), nbytes, h)
            return True
        if nbytes < _FILL_MIN:
            return False
        filled = block.nbytes
        t0 = copied.listeners and _now()
        drv.memcpy_htod(ptr, host_ptr(block), filled, h)
        if t0:
            copied.emit("HtoD", filled, h, t0)
            t0 = _now()
        while filled < nbytes:
            n = min(filled, nbytes - filled)
            drv.memcpy_dtod(ptr + filled, ptr, n, h)
            filled += n
        if t0:
            copied.emit("DtoD", nbytes - block.nbytes, h, t0)
        return True

    # -- transfers -------------------------------------------------------------------------
    def copy_to_host(self, ary=None, stream=0):
        """Copy to a new host array (same shape, packed in this array's axis order) or into
        ``ary`` (np.ndarray of the same dtype and shape, any strides; TypeError/ValueError
        naming both otherwise, ``ary`` untouched).  With a stream the copy is queued on it,
        except that a strided destination needs the data and synchronises the stream."""
        h = _handle(stream, self.stream)
        if _capturing and h in _capturing:
            _keep_for_graph(h, self, ary)
        shape, dtype = self.shape, self.dtype
        if ary is None:
            layout = self._layout
            if layout == "C":
                hostary = np.empty(shape, dtype)
            elif layout == "F":
                hostary = np.empty(shape, dtype, order="F")
            else:
                ps = L.packed_strides_like(shape, self.strides, dtype.itemsize)
                hostary = np.ndarray(shape, dtype, buffer=np.empty(self.nbytes, np.uint8),
                                     strides=ps)
            if self.size:
                if layout == "A":
                    copy_dtoh(hostary, self._data_ptr, shape, self.strides, h)
                else:
                    _copy_dtoh_contig(hostary, self._data_ptr, self.size * dtype.itemsize, h)
            return hostary
        _check_host_dst(ary, dtype, shape, "copy_to_host")
        squeeze = _match_shapes(shape, ary.shape, "copy_to_host")
        if not self.size:
            return ary
        if squeeze:
            dst = ary.squeeze()
            sshape, sstrides = _squeezed(shape, self.strides)
        else:
            dst, sshape, sstrides = ary, shape, self.strides
        if self._layout == "C" and dst.flags.c_contiguous:
            _copy_dtoh_contig(dst, self._data_ptr, self.nbytes, h)
        else:
            copy_dtoh(dst, self._data_ptr, sshape, sstrides, h)
        return ary

    def copy_to_device(self, ary, stream=0):
        """Copy host or device array ``ary`` (same dtype and shape, any strides) into this
        array.  TypeError/ValueError naming both when they differ, ValueError when this array
        is read-only; this array is untouched."""
        self._check_writeable("copy_to_device")
        h = _handle(stream, self.stream)
        if _capturing and h in _capturing:
            _keep_for_graph(h, self, ary)
        dtype = self.dtype
        src_dev = _as_device_source(ary)
        if src_dev is not None:
            if src_dev.dtype != dtype:
                raise TypeError(f"copy_to_device: incompatible dtype: device array has {dtype}, "
                                f"source has {src_dev.dtype}")
            squeeze = _match_shapes(self.shape, src_dev.shape, "copy_to_device")
            if not self.size:
                return
            if squeeze:
                shape, dstr = _squeezed(self.shape, self.strides)
                _, sstr = _squeezed(src_dev.shape, src_dev.strides)
            else:
                shape, dstr, sstr = self.shape, self.strides, src_dev.strides
            copy_device(self._data_ptr, dstr, self.gpu_data, src_dev._data_ptr, sstr,
                        getattr(src_dev, "gpu_data", None), shape, dtype, h)
            return
        if type(ary) is not np.ndarray:
            L.reject_masked(ary, "copy_to_device")
        if not isinstance(ary, np.ndarray):
            try:
                ary = host_values(ary, dtype)
            except (TypeError, ValueError) as exc:
                raise TypeError(f"copy_to_device: cannot convert {type(ary).__name__} to a "
                                f"{dtype} array: {exc}") from None
        if ary.dtype != dtype:
            raise TypeError(f"copy_to_device: incompatible dtype: device array has {dtype}, "
                            f"host array has {ary.dtype}")
        squeeze = _match_shapes(self.shape, ary.shape, "copy_to_device")
        if not self.size:
            return
        if squeeze:
            src = ary.squeeze()
            shape, dstr = _squeezed(self.shape, self.strides)
        else:
            src, shape, dstr = ary, self.shape, self.strides
        if self._layout == "C" and src.flags.c_contiguous:
            _copy_htod_contig(self._data_ptr, src, self.nbytes, h)
        else:
            copy_htod(self._data_ptr, shape, dstr, src, h)

    def __array__(self, dtype=None, copy=None):
        if copy is False:
            # numba.cuda's wording first (its tests match on it)
            raise ValueError("`copy=False` is not supported: a device array cannot be viewed "
                             "as a host array without a copy")
        out = self.copy_to_host()
        if dtype is not None and np.dtype(dtype) != out.dtype:
            out = out.astype(dtype)
        return out

    def __reduce__(self):
        # numba.cuda pickles device arrays by value: host copy out, device copy back in.
        return (_above["to_device"], (self.copy_to_host(),))

    def get_ipc_handle(self):
        """An IPC handle for this array's allocation (through the context's memory manager);
        ``.open()`` in another process gives the array back."""
        ctx = _runtime.current_context()
        handle = ctx.memory_manager.get_ipc_handle(self.gpu_data)
        return _above["IpcArrayHandle"](handle, self.shape, self.strides, self.dtype,
                                        self._data_ptr - self.gpu_data.device_pointer_value)

    # -- interop ---------------------------------------------------------------------------
    @property
    def __cuda_array_interface__(self):
        """CUDA Array Interface v3 dict (:func:`cujit.arrays.cai.cai_dict`)."""
        return cai_dict(self)

    def __dlpack__(self, stream=None, max_version=None, dl_device=None, copy=None):
        """DLPack capsule of this array (:func:`cujit.arrays.dlpack.to_dlpack_capsule`)."""
        return _above["to_dlpack_capsule"](self, stream=stream, max_version=max_version,
                                           dl_device=dl_device, copy=copy)

    def __dlpack_device__(self):
        """``(kDLCUDA, device id)``."""
        return _above["dlpack_device"](self)


# Below this many bytes a broadcast assignment stages through the host in one copy.
_FILL_MIN = 1 << 16


def _copy_dtoh_contig(dst, sptr, nbytes, h):
    t0 = copied.listeners and _now()
    if nbytes >= staging.LARGE:
        staging.dtoh_large(dst, sptr, nbytes, h)
    else:
        _runtime.bound_driver().memcpy_dtoh(host_ptr(dst), sptr, nbytes, h)
    if t0:
        copied.emit("DtoH", nbytes, h, t0)


def _copy_htod_contig(dptr, src, nbytes, h):
    t0 = copied.listeners and _now()
    if nbytes >= staging.LARGE:
        staging.htod_large(dptr, src, nbytes, h)
    else:
        _runtime.bound_driver().memcpy_htod(dptr, host_ptr(src), nbytes, h)
    if t0:
        copied.emit("HtoD", nbytes, h, t0)


def _as_device_source(obj):
    """``obj`` as something with ``_data_ptr``/shape/strides/dtype when it lives in device
    memory (cujit arrays, mapped/managed arrays, CAI objects), else None."""
    if isinstance(obj, DeviceNDArray):
        return obj
    if has_device_pointer(obj) and hasattr(obj, "strides"):
        return obj
    if isinstance(obj, np.ndarray):
        return None
    if hasattr(obj, "__cuda_array_interface__"):
        return _above["as_cuda_array"](obj)
    return None
