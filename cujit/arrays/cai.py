"""The CUDA Array Interface v3 dict of cujit's device, mapped and managed arrays (export).

Its own module, below :mod:`.devicearray` and :mod:`.hostmem`, whose arrays'
``__cuda_array_interface__`` properties call :func:`cai_dict`; the import side (views of
foreign arrays) is :mod:`.interop`, which builds ``DeviceNDArray`` objects.  The rules are
the interface's (numba.cuda's "CUDA Array Interface (Version 3)" page): ``strides`` None
when C-contiguous, ``data: (ptr, read_only)``, and ``stream`` the bound stream's handle or
None; the interface forbids ``stream: 0``, so the default stream is exported as 1 (legacy)
or 2 (per-thread).
"""
from . import _runtime
from . import layout as L

__all__ = ["cai_dict", "export_stream_handle"]


def export_stream_handle(handle):
    """The interface's ``stream`` value (int) of driver stream ``handle`` (int): the handle
    itself, or for the default stream (0, which the interface forbids) 1 (legacy) or 2
    (per-thread, when ``NUMBA_CUDA_PER_THREAD_DEFAULT_STREAM=1``).  DLPack's ``__dlpack__``
    takes the same values for its consumer stream."""
    if handle:
        return handle
    from ..config import config
    return 2 if config.CUDA_PER_THREAD_DEFAULT_STREAM else 1


def _export_stream(stream):
    if not stream:
        return None
    return export_stream_handle(_runtime.stream_handle(stream))


def cai_dict(ary):
    """``__cuda_array_interface__`` (v3 dict) of a cujit device, mapped or managed array."""
    shape = tuple(ary.shape)
    strides = tuple(ary.strides)
    dtype = ary.dtype
    readonly = getattr(ary, "_readonly", None)
    if readonly is None:        # mapped/managed ndarrays
        readonly = not ary.flags.writeable
    desc = {
        "shape": shape,
        "strides": None if L.is_c_contiguous(shape, strides, dtype.itemsize) else strides,
        "data": (ary._data_ptr if ary.size else 0, bool(readonly)),
        "typestr": dtype.str,
        "stream": _export_stream(ary.stream),
        "version": 3,
    }
    if dtype.fields is not None:
        desc["descr"] = dtype.descr
    return desc
