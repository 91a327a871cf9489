"""Free everything one context's cujit objects hold, without touching anyone else's.

The device's primary context is shared with CuPy, PyTorch and any other library in the
process, so ``Context.reset()`` and ``cujit.close()`` must not call
``cuDevicePrimaryCtxReset`` (it destroys every allocation, module and stream of every
library: CuPy's module finalisers then fail with CUDA_ERROR_INVALID_HANDLE at exit).  They
free what cujit made instead.

cujit does not keep a list of its live allocations (a dict insert and delete per allocation,
docs/design-runtime.md), but every one of them has a finaliser, and finalisers are already
registered: pointers in :data:`cujit.memory.pointers._live_finalizers`, streams, events and
modules in ``weakref.finalize``'s registry.  :func:`release_owned` runs, now, each live
finaliser that belongs to the context - which queues its free exactly as if the object had
died - and then flushes the queues, ignoring ``defer_cleanup`` (the caller is about to start
a new generation, after which queued entries would be dropped unsent).

Host-readable memory the driver allocated and still referenced is the exception: managed
memory (cuMemAllocManaged) and cuMemHostAlloc memory (``memhostalloc``; portable or
write-combined mapped arrays).  A ``ManagedNDArray`` is a NumPy array over it, and NumPy reads
it with no check, so freeing it (cuMemFree, cuMemFreeHost) under a live view kills the
process on the next read (SIGSEGV, on a GPU as on the simulator).  Its free is instead put off
until the last Python reference dies (:func:`_free_outlived`): the memory is dead to cujit
from the reset on (its generation is old: kernels and copies refuse it with DeadMemoryError)
but its bytes stay readable, as pinned and mapped arrays' do.
"""
import warnings
import weakref

from .deallocations import _Exit, DeallocationWarning
from .managers import _queue_free, _unpin, _queue_plain
from .pointers import _live_finalizers, _Finalizer, _HostMemoryMixin

__all__ = ["release_owned"]


def _memory_finalizer_owner(fin):
    """The context a cujit memory finaliser frees into, or None for other finalisers."""
    fn = fin._fn
    args = fin._args
    if fn is _queue_free or fn is _unpin:
        return getattr(args[0], "context", None)     # the memory manager
    if fn is _queue_plain:
        return args[0]
    return None


def _free_args(fin):
    """``(dtor, ptr)`` of a cujit memory finaliser (``_queue_free`` or ``_queue_plain``)."""
    args = fin._args
    return (args[2], args[3]) if fin._fn is _queue_plain else (args[1], args[2])


def _free_outlived(ctx, dtor, ptr, size):
    """Finalizer of host-readable memory (managed, cuMemHostAlloc) that outlived a reset or
    close of ``ctx``: free it now that nothing references it (``ctx.free_outlived``: with the
    context current even after ``close()``, which kept the primary context retained for
    it).  Never raises."""
    try:
        if _Exit.exiting:
            return
        ctx.free_outlived(dtor, ptr)
    except Exception as exc:
        try:
            warnings.warn(f"freeing {size} bytes of host-readable memory at {ptr:#x} that "
                          f"outlived its context's reset failed: {exc}", DeallocationWarning,
                          stacklevel=2)
        except Exception:
            pass


def release_owned(ctx, queues, queue_resource):
    """Free every live cujit allocation, stream, event and module of ``ctx``.

    ``queues``: the pending-deallocation queues to flush afterwards (the memory manager's
    and the context's); ``queue_resource``: the bound method the context's stream, event
    and module finalisers call (matched against ``weakref.finalize``'s registry).  Managed
    and cuMemHostAlloc memory still referenced is not freed now but when its last reference
    dies (module doc).  Returns ``(released, outliving)``: the number of objects released
    and of such allocations left to be freed later (the caller keeps the context retained for those).
    Frees that fail are warned (DeallocationWarning) as in any flush; nothing raises."""
    n = 0
    outliving = 0
    for fin in list(_live_finalizers):
        if _memory_finalizer_owner(fin) is ctx:
            mem = fin._wr()
            # (mempin's memory is Python's own: a reset only unpins it, so it is not here)
            if isinstance(mem, _HostMemoryMixin) and fin._fn is not _unpin \
                    and fin.detach() is not None:
                dtor, ptr = _free_args(fin)
                mem._finalizer = _Finalizer(mem, _free_outlived, ctx, dtor, ptr, mem.size)
                outliving += 1
                continue
            fin()
            n += 1
    # weakref.finalize keeps its live finalisers in a class-level registry (stable since
    # Python 3.4); each entry's func/args say whose resource it is.
    registry = getattr(weakref.finalize, "_registry", {})
    for fin, info in list(registry.items()):
        if info.func == queue_resource:
            fin()
            n += 1
    for q in queues:
        q.flush_now()
    return n, outliving
