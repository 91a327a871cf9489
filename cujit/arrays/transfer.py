"""Strided copies between host and device memory that copy exactly the viewed elements.

A side of a copy is ``(ptr, strides)`` over a common ``shape`` and item size; pointers are
Python ints (host or device: the driver's unified-addressing calls take both).  The planner
reduces a pair of layouts to the fewest driver calls:

1. drop length-1 axes; flip axes whose destination stride is negative (in both sides, which
   keeps element correspondence); order axes by destination stride; merge axes that are
   contiguous in both sides;
2. the innermost axis becomes the rows of one ``cuMemcpy2D`` (a contiguous run of bytes per
   row, or one element per row when the inner axis is strided); all remaining axes are a Python
   loop of such calls.

A layout no 2-D copy can express (a negative or too small source pitch, a zero-stride source)
goes through a packed host staging buffer that NumPy fills or drains, so the device side is
always a plain 1-D or 2-D copy.  Host-side staging of a copy *to* the host needs the data, so
an asynchronous copy into a strided host destination synchronises its stream first
(documented in the design note).  Nothing is written to the destination before every check
has passed.

Device views on two different devices (:func:`copy_peer`) first enable peer access between
the two contexts (once per pair), then copy with ``cuMemcpyPeer[Async]`` when both sides are
one contiguous run, else with the same unified-addressing 2-D copies as :func:`copy_dtod`,
which go over the devices' link once peer access is on.
"""
import ctypes
from time import perf_counter_ns as _now

import numpy as np

from . import _runtime
from ..hooks import HookPoint
from ..memory.pointers import AutoFreePointer as _AutoFreePointer

__all__ = ["plan", "copy_htod", "copy_dtoh", "copy_dtod", "copy_peer", "host_ptr",
           "host_values", "copied"]

#: Hook point of every copy the array layer makes (this module's functions, the device
#: arrays' and records' element reads and writes, their contiguous transfers and broadcast
#: fills): ``(direction, nbytes, stream, started_ns)`` once the copy is issued, ``direction``
#: one of ``"HtoD"``, ``"DtoH"``, ``"DtoD"`` and ``"PtoP"`` (cuMemcpyPeer between two
#: devices; a strided peer copy is announced as the ``"DtoD"`` copies it is made of),
#: ``nbytes`` the bytes copied, ``stream`` the driver handle (int, 0: default stream),
#: ``started_ns`` ``time.perf_counter_ns()`` when it began.  A copy staged through the
#: host or a device temporary is announced as the copies it is made of.
copied = HookPoint("arrays.copied", ("direction", "nbytes", "stream", "started_ns"))

_SCALARS = (np.generic, int, float, complex, bool, str, bytes)


def host_values(value, dtype):
    """``value`` (not a device array) as a host array of ``dtype``, cast exactly as NumPy's
    ``a[...] = value`` casts it.

    NumPy has two rules: an array source is cast unsafely (``int8 <- [300]`` wraps to 44,
    NaN -> int warns), but a scalar - Python *or NumPy* - is packed one value at a time
    (``int8 <- np.int64(300)`` raises OverflowError, ``int32 <- np.float64('nan')``
    ValueError), and so is every element of a list or tuple.  ``np.asarray(scalar, dtype)``
    follows the array rule, so scalars are packed into a 0-d array by NumPy itself.  Raises
    whatever NumPy raises (OverflowError, ValueError, TypeError) before anything is
    written to the device."""
    if isinstance(value, np.ndarray):
        if value.dtype == dtype:
            return value
        tmp = np.empty(value.shape, dtype)
        tmp[...] = value
        return tmp
    if isinstance(value, _SCALARS):
        tmp = np.empty((), dtype)
        tmp[()] = value
        return tmp
    return np.asarray(value, dtype=dtype)

# Past this many driver calls in one copy, stage through the host instead of looping.
_MAX_LOOP = 64


_C0 = ctypes.c_char * 0
_addressof = ctypes.addressof


def host_ptr(ary):
    """Address (int) of element 0...0 of a NumPy array.

    ``ctypes`` over the buffer protocol is ~4x faster than ``ary.ctypes.data`` but needs a
    writable C-contiguous array; others take the slow path."""
    try:
        return _addressof(_C0.from_buffer(ary))
    except (TypeError, ValueError, BufferError):
        return ary.ctypes.data


def plan(shape, dst_strides, src_strides, itemsize):
    """Reduce a copy to ``(dst_off, src_off, width, height, dst_pitch, src_pitch, outer)``.

    ``outer`` is a list of ``(n, dst_stride, src_stride)`` loops around one 2-D copy of
    ``height`` rows of ``width`` bytes.  Returns None when no 2-D copy can express the inner
    axis (negative/overlapping pitches, zero-stride source rows), or when the copy is empty
    (caller checks size first)."""
    dims = []
    doff = soff = 0
    for n, ds, ss in zip(shape, dst_strides, src_strides):
        if n == 1:
            continue
        if ds < 0:
            doff += (n - 1) * ds
            soff += (n - 1) * ss
            ds, ss = -ds, -ss
        dims.append((n, ds, ss))
    if len(dims) > 1:
        dims.sort(key=lambda d: d[1], reverse=True)
        merged = [dims[-1]]
        for n, ds, ss in reversed(dims[:-1]):
            n0, ds0, ss0 = merged[-1]
            if ds == n0 * ds0 and ss == n0 * ss0:
                merged[-1] = (n * n0, ds0, ss0)
            else:
                merged.append((n, ds, ss))
        merged.reverse()
        dims = merged
    if not dims:
        return doff, soff, itemsize, 1, itemsize, itemsize, []
    n0, ds0, ss0 = dims[-1]
    if ds0 == itemsize and ss0 == itemsize:
        width = n0 * itemsize
        dims = dims[:-1]
        if not dims:
            return doff, soff, width, 1, width, width, []
        height, dp, sp = dims[-1]
        dims = dims[:-1]
    else:
        width = itemsize
        height, dp, sp = n0, ds0, ss0
        dims = dims[:-1]
    if dp < width or sp < width:
        return None
    return doff, soff, width, height, dp, sp, dims


def _loop_count(outer):
    c = 1
    for n, _, _ in outer:
        c *= n
    return c


def _run(p, dst, src, stream, drv):
    """Issue the driver calls of plan ``p`` from base pointers ``dst``/``src``."""
    doff, soff, width, height, dp, sp, outer = p
    dst += doff
    src += soff
    if not outer:
        if height == 1:
            drv.memcpy(dst, src, width, stream)
        elif dp == width and sp == width:
            drv.memcpy(dst, src, width * height, stream)
        else:
            drv.memcpy_2d(dst, dp, src, sp, width, height, stream)
        return
    # Odometer over the outer axes.
    idx = [0] * len(outer)
    total = _loop_count(outer)
    d, s = dst, src
    for _ in range(total):
        if height == 1:
            drv.memcpy(d, s, width, stream)
        else:
            drv.memcpy_2d(d, dp, s, sp, width, height, stream)
        for k in range(len(outer) - 1, -1, -1):
            n, ds, ss = outer[k]
            idx[k] += 1
            d += ds
            s += ss
            if idx[k] < n:
                break
            idx[k] = 0
            d -= n * ds
            s -= n * ss


def _packed_like(shape, strides, dtype):
    """A new host array of ``shape`` whose axis order follows ``strides`` (same as the device
    side, stride signs included), so that device <-> staging copies merge into as few rows
    as possible."""
    from .layout import packed_strides_like
    ps = packed_strides_like(shape, strides, dtype.itemsize)
    nbytes = dtype.itemsize
    for n in shape:
        nbytes *= n
    buf = np.empty(nbytes, np.uint8)
    out = np.ndarray(shape, dtype, buffer=buf, strides=ps)
    if any(s < 0 for s in strides):
        # same stride signs as the device side, so the planner's flips keep pitches positive
        out = out[tuple(slice(None, None, -1) if s < 0 else slice(None) for s in strides)]
    return out


def copy_htod(dst_ptr, dst_shape, dst_strides, src, stream=0):
    """Copy host array ``src`` (same shape and dtype, any strides, checked by the caller) into
    the device view ``(dst_ptr, dst_shape, dst_strides)``.  ``stream``: driver handle (int)."""
    drv = _runtime.bound_driver()
    t0 = copied.listeners and _now()
    itemsize = src.dtype.itemsize
    p = plan(dst_shape, dst_strides, src.strides, itemsize)
    if p is not None and _loop_count(p[6]) == 1:
        _run(p, dst_ptr, host_ptr(src), stream, drv)
        if t0:
            copied.emit("HtoD", src.nbytes, stream, t0)
        return
    stage = _packed_like(dst_shape, dst_strides, src.dtype)
    p = plan(dst_shape, dst_strides, stage.strides, itemsize)
    if p is None:
        # The stage is packed, so only a destination whose elements overlap (a stride of 0,
        # or smaller than the item: device_array(4, strides=(0,))) has no plan; which write
        # would win is unspecified, so refuse before writing anything.
        raise ValueError(f"cannot copy into a device array whose elements overlap: shape "
                         f"{tuple(dst_shape)}, strides {tuple(dst_strides)} for items of "
                         f"{itemsize} bytes (every non-trivial axis needs |stride| >= the "
                         f"extent of the axes inside it)")
    np.copyto(stage, src, casting="no")
    _run(p, dst_ptr, host_ptr(stage), stream, drv)
    if t0:
        copied.emit("HtoD", src.nbytes, stream, t0)
    if stream:
        # The staging buffer is pageable, so the driver has consumed it on return; keep it
        # referenced anyway until the stream reaches this point.
        _runtime.keep_alive_until(stream, stage)


def copy_dtoh(dst, src_ptr, src_shape, src_strides, stream=0):
    """Copy the device view ``(src_ptr, src_shape, src_strides)`` into host array ``dst``
    (same shape and dtype, any strides, checked by the caller)."""
    drv = _runtime.bound_driver()
    t0 = copied.listeners and _now()
    itemsize = dst.dtype.itemsize
    p = plan(dst.shape, dst.strides, src_strides, itemsize)
    if p is not None and _loop_count(p[6]) == 1:
        _run(p, host_ptr(dst), src_ptr, stream, drv)
        if t0:
            copied.emit("DtoH", dst.nbytes, stream, t0)
        return
    from .layout import extent
    lo, hi = extent(src_shape, src_strides, itemsize)
    nbytes = itemsize
    for n in src_shape:
        nbytes *= n
    sp = plan(src_shape, src_strides, src_strides, itemsize)
    if sp is None or _loop_count(sp[6]) > _MAX_LOOP or hi - lo <= 2 * nbytes + 4096:
        # One copy of the whole span, then NumPy picks the viewed elements.
        raw = np.empty(hi - lo, np.uint8)
        drv.memcpy(host_ptr(raw), src_ptr + lo, hi - lo, stream)
        view = np.ndarray(src_shape, dst.dtype, buffer=raw, offset=-lo, strides=src_strides)
    else:
        view = _packed_like(src_shape, src_strides, dst.dtype)
        p = plan(src_shape, view.strides, src_strides, itemsize)
        _run(p, host_ptr(view), src_ptr, stream, drv)
    if stream:
        drv.stream_synchronize(stream)
    np.copyto(dst, view, casting="no")
    if t0:
        copied.emit("DtoH", dst.nbytes, stream, t0)


def _overlap(a_ptr, a_strides, b_ptr, b_strides, shape, itemsize):
    from .layout import extent
    alo, ahi = extent(shape, a_strides, itemsize)
    blo, bhi = extent(shape, b_strides, itemsize)
    return a_ptr + alo < b_ptr + bhi and b_ptr + blo < a_ptr + ahi


def copy_dtod(dst_ptr, dst_strides, src_ptr, src_strides, shape, dtype, stream=0):
    """Device view -> device view of the same shape and dtype (any strides).  Overlapping
    views (``d[1:] = d[:-1]``) go through a device temporary, as NumPy's assignment does:
    ``cuMemcpy`` on overlapping ranges is undefined."""
    drv = _runtime.bound_driver()
    itemsize = dtype.itemsize
    if src_ptr != dst_ptr or src_strides != dst_strides:
        if _overlap(dst_ptr, dst_strides, src_ptr, src_strides, shape, itemsize):
            from .layout import packed_strides_like
            tstrides = packed_strides_like(shape, src_strides, itemsize)
            nbytes = itemsize
            for n in shape:
                nbytes *= n
            tmp = _runtime.current_context().memalloc(nbytes)
            tptr = tmp.device_pointer_value
            copy_dtod(tptr, tstrides, src_ptr, src_strides, shape, dtype, stream)
            copy_dtod(dst_ptr, dst_strides, tptr, tstrides, shape, dtype, stream)
            # ``tmp``'s free is deferred and stream-ordered by the memory manager's rules;
            # keep it referenced until the stream has used it.
            _runtime.keep_alive_until(stream, tmp)
            return
    elif src_ptr == dst_ptr:
        return      # the same view: nothing to do
    p = plan(shape, dst_strides, src_strides, itemsize)
    if p is not None and _loop_count(p[6]) <= _MAX_LOOP:
        t0 = copied.listeners and _now()
        _run(p, dst_ptr, src_ptr, stream, drv)
        if t0:
            nbytes = itemsize
            for n in shape:
                nbytes *= n
            copied.emit("DtoD", nbytes, stream, t0)
        return
    # Odd layouts: through a packed host buffer (synchronous on the stream).
    stage = _packed_like(shape, src_strides, dtype)
    copy_dtoh(stage, src_ptr, shape, src_strides, stream)
    copy_htod(dst_ptr, shape, dst_strides, stage, stream)
    if stream:
        drv.stream_synchronize(stream)


def copy_peer(dst_ptr, dst_strides, dst_mem, src_ptr, src_strides, src_mem, shape, dtype,
              stream=0):
    """Device view -> device view (same shape and dtype, any strides) when ``dst_mem`` and
    ``src_mem`` (the views' allocations, ``gpu_data``) are cujit device allocations in the
    contexts of two different devices; returns False, having done nothing, otherwise (the
    caller then uses :func:`copy_dtod`).  Peer access is enabled both ways first (the copy
    engine of either device may run the copy); where the devices cannot access each other
    the driver stages the copy through the host.  Other allocations (foreign CUDA Array
    Interface memory, EMM plugins' pointers, mapped and managed memory) keep today's path:
    their ``context`` is not known to be the memory's device."""
    if type(dst_mem) is not _AutoFreePointer or type(src_mem) is not _AutoFreePointer:
        return False
    dctx, sctx = dst_mem.context, src_mem.context
    if dctx is None or sctx is None or dctx.device.id == sctx.device.id:
        return False
    dctx.enable_peer_access(sctx)
    sctx.enable_peer_access(dctx)
    p = plan(shape, dst_strides, src_strides, dtype.itemsize)
    if p is not None and not p[6]:
        doff, soff, width, height, dp, sp, _ = p
        if height == 1 or (dp == width and sp == width):
            t0 = copied.listeners and _now()
            _runtime.driver().memcpy_peer(dst_ptr + doff, dctx.handle, src_ptr + soff,
                                          sctx.handle, width * height, stream)
            if t0:
                copied.emit("PtoP", width * height, stream, t0)
            return True
    copy_dtod(dst_ptr, dst_strides, src_ptr, src_strides, shape, dtype, stream)
    return True


def copy_device(dst_ptr, dst_strides, dst_mem, src_ptr, src_strides, src_mem, shape, dtype,
                stream=0):
    """Device view -> device view: :func:`copy_dtod` when both allocations belong to the same
    context (one identity compare), else :func:`copy_peer` when it applies."""
    if getattr(dst_mem, "context", None) is getattr(src_mem, "context", None) or not copy_peer(
            dst_ptr, dst_strides, dst_mem, src_ptr, src_strides, src_mem, shape, dtype, stream):
        copy_dtod(dst_ptr, dst_strides, src_ptr, src_strides, shape, dtype, stream)
