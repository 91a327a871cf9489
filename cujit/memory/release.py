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
"""
import weakref

from .pointers import _live_finalizers

__all__ = ["release_owned"]


def _memory_finalizer_owner(fin):
    """The context a cujit memory finaliser frees into, or None for other finalisers."""
    from .managers import _queue_free, _unpin, _queue_plain
    fn = fin._fn
    args = fin._args
    if fn is _queue_free or fn is _unpin:
        return getattr(args[0], "context", None)     # the memory manager
    if fn is _queue_plain:
        return args[0]
    return None


def release_owned(ctx, queues, queue_resource):
    """Free every live cujit allocation, stream, event and module of ``ctx``.

    ``queues``: the pending-deallocation queues to flush afterwards (the memory manager's
    and the context's); ``queue_resource``: the bound method the context's stream, event
    and module finalisers call (matched against ``weakref.finalize``'s registry).  Returns
    the number of objects released.  Frees that fail are warned (DeallocationWarning) as
    in any flush; nothing raises."""
    n = 0
    for fin in list(_live_finalizers):
        if _memory_finalizer_owner(fin) is ctx:
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
    return n
