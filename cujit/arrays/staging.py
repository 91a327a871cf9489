"""Large copies between pageable host memory and the device, pipelined through pinned buffers.

A copy from ordinary (pageable) NumPy memory makes the driver stage it through its own small
pinned buffers, serially (about 8 GB/s).  Here a copy of at least ``LARGE`` bytes is cut into
``CHUNK``-byte pieces shared out round-robin among ``THREADS`` copy workers.  Each worker
owns ``DEPTH`` cached pinned buffers and runs its own pipeline: host→device, it waits for the
buffer's previous DMA (an event), copies its next chunk into it with ``memmove`` (which
releases the GIL, so the workers copy in parallel) and queues the DMA from it; device→host,
it queues the DMA of its next chunk into a free buffer, then waits for its oldest DMA and
copies that chunk out.  No worker waits for another, so host copies and DMAs overlap across
the whole transfer; the DMA engine is the only shared step.  Copies from memory cujit knows
to be page-locked (pinned/mapped arrays, ``with pinned(...)``) skip the staging: the DMA
reads them directly.

Without a stream the chunks are queued on the legacy default stream (handle 1), which keeps
the copy ordered after earlier default-stream work, and the call returns when the copy is
complete.  With a stream they are queued on it; the call still returns only once the last
chunk has left the pinned buffers (so the buffers can be reused), i.e. when the copy is done.
Workers make the caller's context current in their own thread before any driver call.
"""
import ctypes
import os
import threading
from collections import deque
from concurrent.futures import ThreadPoolExecutor

from . import _runtime

__all__ = ["htod_large", "dtoh_large", "LARGE", "CHUNK", "THREADS", "DEPTH"]

LARGE = 32 << 20
CHUNK = 8 << 20
#: copy workers: half the cores (the other half feed them memory), at most 8
THREADS = max(1, min(8, (os.cpu_count() or 2) // 2))
#: pinned buffers per worker (2: one being filled or drained while the other's DMA runs)
DEPTH = 2

_pool = None
_pool_lock = threading.Lock()


def _executor():
    global _pool
    if _pool is None:
        with _pool_lock:
            if _pool is None:
                _pool = ThreadPoolExecutor(max(THREADS, 1), thread_name_prefix="cujit-staging")
    return _pool


def _run_workers(work, nworkers):
    """Run ``work(w)`` for w in range(nworkers): on the pool, the last one in this thread;
    re-raise the first error after all have finished."""
    futs = [_executor().submit(work, w) for w in range(nworkers - 1)]
    err = None
    try:
        work(nworkers - 1)
    except BaseException as exc:
        err = exc
    for f in futs:
        try:
            f.result()
        except BaseException as exc:
            err = err or exc
    if err is not None:
        raise err


def _plan(nbytes):
    chunk = min(CHUNK, nbytes)
    offs = list(range(0, nbytes, chunk))
    return chunk, offs, max(1, min(THREADS, len(offs)))


def _host_side(host, nbytes):
    """``(driver, host address of host array, whether those bytes are pinned already)``."""
    from .hostmem import is_pinned
    from .transfer import host_ptr
    hptr = host_ptr(host)
    return _runtime.bound_driver(), hptr, is_pinned(hptr, nbytes)


def _worker_slots(ctx, drv, mine, chunk):
    """A worker's set-up, in its own thread: ``ctx`` current, then ``(mine, depth, bufs,
    addrs, events)``: its chunk offsets, how many pinned staging buffers of ``chunk`` bytes it
    cycles through, the buffers and their addresses, and one event per buffer."""
    from .hostmem import pinned_buffer
    from .transfer import host_ptr
    ctx.make_current()
    depth = min(DEPTH, len(mine))
    bufs = [pinned_buffer(chunk) for _ in range(depth)]
    return (mine, depth, bufs, [host_ptr(b) for b in bufs],
            [drv.event_create(timing=False) for _ in range(depth)])


def htod_large(dptr, src, nbytes, stream=0):
    """Copy ``nbytes`` from the C-contiguous host array ``src`` to device address ``dptr``
    (pipelined as the module docstring says).  ``stream``: driver handle (int)."""
    drv, sptr, pinned = _host_side(src, nbytes)
    if pinned:
        drv.memcpy_htod(dptr, sptr, nbytes, stream)
        return
    h = stream or 1
    ctx = _runtime.current_context()
    chunk, offs, nworkers = _plan(nbytes)

    def work(w):
        mine, depth, bufs, addrs, events = _worker_slots(ctx, drv, offs[w::nworkers], chunk)
        used = [False] * depth
        try:
            for i, off in enumerate(mine):
                slot = i % depth
                if used[slot]:
                    drv.event_synchronize(events[slot])
                n = min(chunk, nbytes - off)
                ctypes.memmove(addrs[slot], sptr + off, n)
                drv.memcpy_htod(dptr + off, addrs[slot], n, h)
                drv.event_record(events[slot], h)
                used[slot] = True
        finally:
            # Also after an error: no buffer goes back to the cache while a DMA may read it.
            for slot in range(depth):
                if used[slot]:
                    try:
                        drv.event_synchronize(events[slot])
                    except Exception:
                        pass
            for ev in events:
                drv.event_destroy(ev)
            del bufs

    _run_workers(work, nworkers)


def dtoh_large(dst, sptr, nbytes, stream=0):
    """Copy ``nbytes`` from device address ``sptr`` into the C-contiguous host array ``dst``:
    each worker's DMA of its next chunk into one pinned buffer overlaps its host copy of the
    previous chunk out of another.  Returns when the data is in ``dst`` (the host needs it)."""
    drv, dptr, pinned = _host_side(dst, nbytes)
    if pinned:
        drv.memcpy_dtoh(dptr, sptr, nbytes, stream)
        return
    h = stream or 1
    ctx = _runtime.current_context()
    chunk, offs, nworkers = _plan(nbytes)

    def work(w):
        mine, depth, bufs, addrs, events = _worker_slots(ctx, drv, offs[w::nworkers], chunk)
        inflight = deque()          # (slot, off) whose DMA is queued
        try:
            def drain():
                slot, off = inflight.popleft()
                drv.event_synchronize(events[slot])
                ctypes.memmove(dptr + off, addrs[slot], min(chunk, nbytes - off))

            for i, off in enumerate(mine):
                if len(inflight) == depth:
                    drain()
                slot = i % depth
                drv.memcpy_dtoh(addrs[slot], sptr + off, min(chunk, nbytes - off), h)
                drv.event_record(events[slot], h)
                inflight.append((slot, off))
            while inflight:
                drain()
        finally:
            for ev in events:
                try:
                    drv.event_synchronize(ev)
                except Exception:
                    pass
                drv.event_destroy(ev)
            del bufs

    _run_workers(work, nworkers)
