"""CUDA Array Interface v3, both ways (R-CAI-1, R-CAI-2).

Export (:func:`cai_dict`, in :mod:`.cai`, below :mod:`.devicearray`): ``shape``, ``typestr``, ``data: (ptr, read_only)``, ``strides`` (None
when C-contiguous), ``version: 3`` and ``stream``: the bound stream's handle, or None when the
array has none.  The interface forbids ``stream: 0``, so the default stream is exported as 1
(legacy) or 2 (per-thread, when ``NUMBA_CUDA_PER_THREAD_DEFAULT_STREAM=1``).

Import (:func:`from_cuda_array_interface`, :func:`as_cuda_array`): a zero-copy
``DeviceNDArray`` view that keeps the producer alive.  The producer's ``stream`` is
synchronised first unless ``sync=False`` or ``NUMBA_CUDA_ARRAY_INTERFACE_SYNC=0``, and kept as
the view's stream; None means no synchronisation; 0 is an error.  ``data: (ptr, True)``
(read-only) is kept: the view's ``flags['WRITEABLE']`` is False, copies into it and setitem
raise ValueError, kernels type it readonly, and it exports ``data: (ptr, True)`` again.  A size-0 array's NULL
pointer is never passed to the driver.

cuda.core objects (:func:`from_cuda_core`): a ``Buffer`` or ``StridedMemoryView`` as a
zero-copy ``DeviceNDArray`` view, read from their documented attributes
(:func:`~.protocol.cuda_core_parts`), without DLPack's capsule.
"""
import operator

import numpy as np

from . import _runtime
from . import devicearray
from . import layout as L
from .cai import cai_dict
from .devicearray import DeviceNDArray
from ..memory.protocol import cuda_core_parts
from ..memory.pointers import MemoryPointer

__all__ = ["cai_dict", "is_cuda_array", "as_cuda_array", "from_cuda_array_interface",
           "wait_for_exporter", "from_cuda_core", "owner_dtype"]


def is_cuda_array(obj):
    """True when ``obj`` has a ``__cuda_array_interface__`` attribute."""
    return hasattr(obj, "__cuda_array_interface__")


def as_cuda_array(obj, sync=True):
    """Zero-copy ``DeviceNDArray`` view of ``obj``'s ``__cuda_array_interface__`` that keeps
    ``obj`` alive.  TypeError when ``obj`` has no interface; NotImplementedError for masked
    arrays; ValueError for a malformed interface (see :func:`from_cuda_array_interface`)."""
    try:
        desc = obj.__cuda_array_interface__
    except AttributeError:
        raise TypeError(f"{type(obj).__name__} object does not implement the CUDA Array "
                        "Interface (__cuda_array_interface__)") from None
    return from_cuda_array_interface(desc, owner=obj, sync=sync)


def _bad(what, desc):
    raise ValueError(f"malformed __cuda_array_interface__: {what} (got {desc!r})")


def _parse_plain(desc):
    """:func:`_parse` of the common interface (a plain dict, C-contiguous, no mask, no
    record ``descr``, a tuple shape of ints, an int pointer), with the same results; None for
    anything else, which the full parse checks and reports."""
    if desc.__class__ is not dict or desc.get("strides") is not None \
            or desc.get("mask") is not None or desc.get("descr") is not None:
        return None
    shape, typestr, data, version = (desc.get("shape"), desc.get("typestr"), desc.get("data"),
                                     desc.get("version"))
    if version.__class__ is not int or version < 0 or shape.__class__ is not tuple \
            or data.__class__ is not tuple or len(data) != 2 or typestr.__class__ is not str:
        return None
    ptr = data[0]
    if ptr.__class__ is not int:
        return None
    size = 1
    for n in shape:
        if n.__class__ is not int or n < 0:
            return None
        size *= n
    if size and not ptr:
        return None
    try:
        dtype = L.normalize_dtype(typestr)
    except TypeError:
        return None
    if dtype.kind == "V":
        return None
    isz = dtype.itemsize
    if len(shape) == 1:
        strides = (isz,)
    else:
        strides = L.contiguous_strides(shape, isz)
    return shape, strides, dtype, ptr, size, "C"


def _parse(desc):
    plain = _parse_plain(desc)
    if plain is not None:
        return plain
    if not isinstance(desc, dict):
        raise TypeError(f"__cuda_array_interface__ must be a dict, got {type(desc).__name__}")
    if desc.get("mask") is not None:
        raise NotImplementedError("Masked arrays are not supported (this "
                                  "__cuda_array_interface__ has a 'mask')")
    for key in ("shape", "typestr", "data", "version"):
        if key not in desc:
            _bad(f"missing key {key!r}", desc)
    version = desc["version"]
    if type(version) is not int or version < 0:
        _bad(f"version {version!r} is not a non-negative int", desc)
    try:
        shape = L.normalize_shape(tuple(desc["shape"]))
    except (TypeError, ValueError) as exc:
        _bad(f"shape: {exc}", desc)
    data = desc["data"]
    if not (isinstance(data, tuple) and len(data) == 2):
        _bad("data must be a (pointer, read_only) tuple", desc)
    try:
        ptr = operator.index(data[0]) if data[0] is not None else 0
    except TypeError:
        _bad(f"data pointer {data[0]!r} is not an int", desc)
    typestr = desc["typestr"]
    try:
        if desc.get("descr") is not None and np.dtype(typestr).kind == "V":
            dtype = np.lib.format.descr_to_dtype(list(desc["descr"]))
        else:
            # the same few typestrs again and again: normalize_dtype keeps them
            dtype = L.normalize_dtype(typestr) if type(typestr) is str else np.dtype(typestr)
    except (TypeError, ValueError) as exc:
        if "Python objects" in str(exc):
            _bad(f"typestr {typestr!r} describes Python objects, which device memory cannot "
                 "hold", desc)
        _bad(f"typestr {typestr!r}: {exc}", desc)
    if dtype.hasobject:
        _bad(f"typestr {typestr!r} describes Python objects, which device memory cannot hold",
             desc)
    strides = desc.get("strides")
    if strides is None:
        strides = L.contiguous_strides(shape, dtype.itemsize)
        layout = "C"
    else:
        layout = None
        try:
            strides = L.normalize_strides(strides, len(shape))
        except (TypeError, ValueError) as exc:
            _bad(f"strides: {exc}", desc)
    size = 1
    for n in shape:
        size *= n
    if size and ptr == 0:
        _bad(f"NULL data pointer for a non-empty array of shape {shape}", desc)
    return shape, strides, dtype, ptr, size, layout


def owner_dtype(dtype, owner):
    """The dtype of an exported array: ``dtype`` (the interface's), or ``owner.dtype`` when
    the interface's is an opaque void (``<V2``, no named fields) and the owner's own dtype
    is another of that item size.  NumPy extension dtypes such as ``ml_dtypes.bfloat16``
    have no typestr of their own, so CuPy and cujit export them as ``<V2``; numba-cuda
    learns the dtype through DLPack, cujit from the exporter's ``dtype``."""
    if dtype.kind != "V" or dtype.names is not None or owner is None:
        return dtype
    own = getattr(owner, "dtype", None)
    if own is None:
        return dtype
    try:
        own = np.dtype(own)
    except TypeError:
        return dtype
    if own.itemsize == dtype.itemsize and own.names is None and own != dtype \
            and not own.hasobject and own.subdtype is None:
        return own
    return dtype


def from_cuda_array_interface(desc, owner=None, sync=True):
    """``DeviceNDArray`` view of the memory an interface dict ``desc`` describes; ``owner`` is
    kept alive by it, and gives the dtype when the interface's is an opaque void
    (:func:`owner_dtype`).  Raises TypeError (not a dict), NotImplementedError (masked),
    ValueError (missing keys, bad shape/typestr/strides/pointer, ``stream: 0``)."""
    shape, strides, dtype, ptr, size, layout = _parse(desc)
    dtype = owner_dtype(dtype, owner)
    stream_ptr = desc.get("stream")
    stream = 0
    if stream_ptr is not None:
        if type(stream_ptr) is not int and not isinstance(stream_ptr, np.integer):
            _bad(f"stream {stream_ptr!r} is not an int or None", desc)
        stream_ptr = int(stream_ptr)
        if stream_ptr == 0:
            raise ValueError("__cuda_array_interface__ 'stream' is 0, which the interface "
                             "forbids (it is ambiguous); use 1 (legacy default stream), "
                             "2 (per-thread default stream) or None")
        stream = _runtime.as_stream(stream_ptr)
        if sync:
            from ..config import config
            if config.CUDA_ARRAY_INTERFACE_SYNC:
                # through the Stream, as numba.cuda does (its synchronize is what a program
                # or a test sees, and it announces the synchronisation to its hook point)
                stream.synchronize()
    if size == 0:
        return DeviceNDArray._make(shape, strides, dtype, 0, None, stream)
    if layout == "C":
        lo, hi = 0, size * dtype.itemsize
    else:
        lo, hi = L.extent(shape, strides, dtype.itemsize)
    # no finalizer: the memory is the producer's; ``owner`` keeps the producer alive
    mem = MemoryPointer(_runtime.current_context(), ptr + lo, hi - lo, owner=owner)
    if desc["data"][1]:
        mem.readonly = True
    return DeviceNDArray._make(shape, strides, dtype, ptr, mem, stream, layout)


def from_cuda_core(obj):
    """Zero-copy ``DeviceNDArray`` view of a cuda.core ``Buffer`` (1-D ``uint8``, ``size``
    bytes) or ``StridedMemoryView`` (its dtype, shape and strides, read-only when it is), as
    numba-cuda passes them to kernels; the view keeps ``obj`` alive and has no stream (a
    cuda.core object carries none; the program orders its work, as with numba-cuda).
    Raises what :func:`~.protocol.cuda_core_parts` raises (TypeError, ValueError)."""
    ptr, shape, strides, dtype, readonly = cuda_core_parts(obj)
    size = 1
    for n in shape:
        size *= n
    if size == 0:
        return DeviceNDArray._make(shape, strides, dtype, 0, None, 0)
    if not ptr:
        raise ValueError(f"{type(obj).__name__} {obj!r:.80} has a NULL pointer for "
                         f"{size} elements")
    lo, hi = L.extent(shape, strides, dtype.itemsize)
    mem = MemoryPointer(_runtime.current_context(), ptr + lo, hi - lo, owner=obj)
    if readonly:
        mem.readonly = True
    return DeviceNDArray._make(shape, strides, dtype, ptr, mem, 0)


def wait_for_exporter(producer, consumer):
    """Order work queued next on stream ``consumer`` after the work queued so far on the
    exporter's stream ``producer`` (both ints as the interface writes them: 1 legacy default,
    2 per-thread default, else a handle), without blocking the host: cuEventRecord on
    ``producer``, cuStreamWaitEvent on ``consumer``.  This is the kernel-launch side of the
    interface's v3 rule (numba.cuda's "CUDA Array Interface (Version 3)": a consumer on
    another stream must synchronise with ``stream`` first); :func:`as_cuda_array` still
    synchronises the exporter's stream on the host, as numba.cuda does.  Raises CudaAPIError
    when the driver refuses a handle."""
    drv = _runtime.driver()
    ev = drv.event_create(timing=False)
    try:
        drv.event_record(ev, producer)
        drv.stream_wait_event(consumer, ev)
    finally:
        drv.event_destroy(ev)


devicearray.provide(as_cuda_array=as_cuda_array)
