"""Large copies between pageable host memory and the device, pipelined through pinned buffers.

A copy from ordinary (pageable) NumPy memory makes the driver stage it through its own small
pinned buffers, serially (about 8 GB/s).  Here a copy of at least ``LARGE`` bytes is cut into
``CHUNK``-byte pieces that cycle through ``NBUF`` cached pinned buffers: while the DMA engine
reads chunk k from one buffer, host threads copy chunk k+1 into the next one (``memmove``
releases the GIL, so ``THREADS`` threads copy in parallel).  An event per buffer tells when
its previous DMA is done.  Copies from memory cujit knows to be page-locked (pinned/mapped
arrays, ``with pinned(...)``) skip the staging: the DMA reads them directly.

Without a stream the chunks are queued on the legacy default stream (handle 1), which keeps
the copy ordered after earlier default-stream work, and the call returns when the copy is
complete.  With a stream they are queued on it; the call still returns only once the last
chunk has left the pinned buffers (so the buffers can be reused), i.e. when the copy is done.
"""
import ctypes
import os
import threading
from concurrent.futures import ThreadPoolExecutor

from . import _runtime

__all__ = ["htod_large", "dtoh_large", "LARGE", "CHUNK", "NBUF", "THREADS"]

LARGE = 32 << 20
CHUNK = 16 << 20
NBUF = 3
THREADS = max(1, min(6, (os.cpu_count() or 2) // 2))

_pool = None
_pool_lock = threading.Lock()


def _executor():
    global _pool
    if _pool is None:
        with _pool_lock:
            if _pool is None:
                _pool = ThreadPoolExecutor(THREADS, thread_name_prefix="cujit-staging")
    return _pool


def _parallel_memmove(dst, src, n):
    if n < (4 << 20) or THREADS <= 1:
        ctypes.memmove(dst, src, n)
        return
    part = (n + THREADS - 1) // THREADS
    part = (part + 4095) & ~4095
    futs = [_executor().submit(ctypes.memmove, dst + o, src + o, min(part, n - o))
            for o in range(0, n, part)]
    for f in futs:
        f.result()


def htod_large(dptr, src, nbytes, stream=0):
    """Copy ``nbytes`` from the C-contiguous host array ``src`` to device address ``dptr``
    (pipelined as the module docstring says).  ``stream``: driver handle (int)."""
    from .hostmem import is_pinned, pinned_buffer
    from .transfer import host_ptr
    drv = _runtime.driver()
    sptr = host_ptr(src)
    if is_pinned(sptr, nbytes):
        drv.memcpy_htod(dptr, sptr, nbytes, stream)
        return
    h = stream or 1
    chunk = min(CHUNK, nbytes)
    nbuf = min(NBUF, (nbytes + chunk - 1) // chunk)
    bufs = [pinned_buffer(chunk) for _ in range(nbuf)]
    addrs = [host_ptr(b) for b in bufs]
    events = [drv.event_create(timing=False) for _ in range(nbuf)]
    used = [False] * nbuf
    try:
        k = 0
        for off in range(0, nbytes, chunk):
            n = min(chunk, nbytes - off)
            slot = k % nbuf
            if used[slot]:
                drv.event_synchronize(events[slot])
            _parallel_memmove(addrs[slot], sptr + off, n)
            drv.memcpy_htod(dptr + off, addrs[slot], n, h)
            drv.event_record(events[slot], h)
            used[slot] = True
            k += 1
    finally:
        # Also after an error: no buffer goes back to the cache while a DMA may read it.
        for slot in range(nbuf):
            if used[slot]:
                try:
                    drv.event_synchronize(events[slot])
                except Exception:
                    pass
        for ev in events:
            drv.event_destroy(ev)
    del bufs


def dtoh_large(dst, sptr, nbytes, stream=0):
    """Copy ``nbytes`` from device address ``sptr`` into the C-contiguous host array ``dst``:
    the DMA of chunk k+1 into one pinned buffer overlaps the host copy of chunk k out of
    another.  Returns when the data is in ``dst`` (the host needs it)."""
    from .hostmem import is_pinned, pinned_buffer
    from .transfer import host_ptr
    drv = _runtime.driver()
    dptr = host_ptr(dst)
    if is_pinned(dptr, nbytes):
        drv.memcpy_dtoh(dptr, sptr, nbytes, stream)
        return
    h = stream or 1
    chunk = min(CHUNK, nbytes)
    offs = list(range(0, nbytes, chunk))
    nbuf = min(NBUF, len(offs))
    bufs = [pinned_buffer(chunk) for _ in range(nbuf)]
    addrs = [host_ptr(b) for b in bufs]
    events = [drv.event_create(timing=False) for _ in range(nbuf)]
    try:
        def issue(k):
            slot = k % nbuf
            n = min(chunk, nbytes - offs[k])
            drv.memcpy_dtoh(addrs[slot], sptr + offs[k], n, h)
            drv.event_record(events[slot], h)

        for k in range(nbuf):
            issue(k)
        for k, off in enumerate(offs):
            slot = k % nbuf
            drv.event_synchronize(events[slot])
            _parallel_memmove(dptr + off, addrs[slot], min(chunk, nbytes - off))
            if k + nbuf < len(offs):
                issue(k + nbuf)
    finally:
        for ev in events:
            try:
                drv.event_synchronize(ev)
            except Exception:
                pass
            drv.event_destroy(ev)
    del bufs
