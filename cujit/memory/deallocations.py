"""The pending-deallocations queue (numba.cuda ``_PendingDeallocs``; docs/requirements.md §6,
R-DEA-1..5).

Frees are queued, not done at once, because a free can synchronise the device.  The queue is
flushed (all entries run oldest first) when, after an entry is added, it holds more than
``config.CUDA_DEALLOCS_COUNT`` entries (``NUMBA_CUDA_MAX_PENDING_DEALLOCS_COUNT``, default
10) or more than ``config.CUDA_DEALLOCS_RATIO`` × total device memory bytes
(``NUMBA_CUDA_MAX_PENDING_DEALLOCS_RATIO``, default 0.2); by the memory manager on
out-of-memory; and by hand (``clear()``).  Both settings are read at every check, through one
``config.readers`` call that costs a few dict lookups when nothing is set.

``disable()`` (``defer_cleanup``) suspends flushing; nestable; on exit of the outermost block
the limits are checked again.  A free that raises ends that flush (the rest stay queued for
the next one) and is reported as a :class:`DeallocationWarning`.
"""
import atexit
import contextlib
import os
import threading
import time
import warnings
import weakref
from collections import deque

from ..config import config
from .events import free_queued, flushed

__all__ = ["PendingDeallocs", "DeallocationWarning", "is_exiting", "check_settings"]


class DeallocationWarning(RuntimeWarning):
    """A queued free failed (names the driver call and the CUDA error)."""


class _Exit:
    exiting = False


def is_exiting():
    """True once the interpreter has started exiting (finalizers then do nothing: the
    process's exit releases all device memory, and the driver may be half torn down)."""
    return _Exit.exiting


def _mark_exiting():
    _Exit.exiting = True


def _noop():
    pass


# weakref.finalize registers its own atexit hook when the first finalizer is made; make one
# now so that hook exists before ours.  atexit runs hooks last-in first-out, so ours runs
# first and every allocation finalizer that weakref runs at exit sees ``exiting`` (R-DEA-6).
weakref.finalize(_Exit, _noop).detach()
atexit.register(_mark_exiting)


def _after_fork_in_child():
    # The parent's allocations are not the child's to free, and its driver refuses every
    # call (cujit.driver._after_fork_in_child): finalisers behave as at exit.
    from ..driver import driver_created
    if driver_created():
        _mark_exiting()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)

_LIMITS = ("CUDA_DEALLOCS_COUNT", "CUDA_DEALLOCS_RATIO")

# Inside finalisers (add_item, the end of defer_cleanup): never raise, use the defaults (an
# exception there is swallowed and would leave every later free queued forever).  Both limits
# come from one call (config.readers): two settings per free, read where they are used, so a
# setting changed at run time applies at the next free.
_limits = config.readers(_LIMITS, strict=False)
_max_count = config.reader("CUDA_DEALLOCS_COUNT", strict=False)
_max_ratio = config.reader("CUDA_DEALLOCS_RATIO", strict=False)

#: ``check_settings()``: raise ``ValueError`` naming the variable when
#: ``NUMBA_CUDA_MAX_PENDING_DEALLOCS_COUNT`` / ``_RATIO`` (or their ``CUJIT_`` spellings, or
#: an override) is malformed or out of range; returns the two limits.  Called by every
#: allocation of the built-in memory managers, so a bad value is reported to the caller at
#: the first allocation after it is set, while the queue itself (which reads the limits inside
#: finalisers) keeps flushing with the defaults.  The strict reader itself, not a function
#: calling it: this is on every allocation.
check_settings = config.readers(_LIMITS, strict=True)
check_settings.__name__ = check_settings.__qualname__ = "check_settings"
check_settings.__doc__ = (
    "Raise ValueError naming the variable when NUMBA_CUDA_MAX_PENDING_DEALLOCS_COUNT / _RATIO "
    "(or their CUJIT_ spellings, or an override) is malformed or out of range; otherwise "
    "return (count limit, ratio limit).  Called by every allocation of the built-in memory "
    "managers.")


class PendingDeallocs:
    """A queue of deferred frees for one context.

    ``context``: the owning :class:`~cujit.runtime.devices.Context` (made current in the flushing
    thread) or None; ``capacity``: total device memory in bytes (for the ratio rule).

    Attributes: ``flush_count`` (flushes that ran), ``freed_count`` (frees done),
    ``failed_count`` (frees that raised), ``last_error``."""

    def __init__(self, context=None, capacity=0):
        self._context = context
        self._capacity = int(capacity)
        self._cons = deque()
        self._size = 0
        self._disable_count = 0
        self._lock = threading.Lock()       # one flush at a time
        # Guards the entries and their byte count together, so ``nbytes`` is exactly the
        # bytes queued while other threads append and flush (a recount racing an append
        # drifted).  Reentrant, as CuPy's pool locks (memory.pyx, fastrlock): a garbage
        # collection inside the critical section may run a finalizer that queues a free
        # in this same thread.  Held only for a few bytecodes, never across a free.
        self._entries_lock = threading.RLock()
        self._flusher = None
        self.flush_count = 0
        self.freed_count = 0
        self.failed_count = 0
        self.last_error = None

    def add_item(self, dtor, handle, size=0):
        """Queue ``dtor(handle)``; ``size`` is the bytes it frees (0 for streams, events,
        modules).  Flushes when the count or byte limit is now exceeded (unless disabled)."""
        cons = self._cons
        with self._entries_lock:
            cons.append((dtor, handle, size))
            total = self._size = self._size + size
            count = len(cons)
        # the simulated driver refuses every use of memory from here on, as a GPU would once
        # the free ran (a real driver has no such hook: the free is only deferred)
        retire = getattr(getattr(dtor, "__self__", None), "retire", None)
        if retire is not None:
            retire(handle)
        if free_queued.listeners:
            free_queued.emit(self, handle, size)
        if not self._disable_count:
            max_count, ratio = _limits()
            if count > max_count:
                self._clear("count limit")
            elif total > ratio * self._capacity:
                self._clear("byte limit")

    def _over_limits(self):
        max_count, ratio = _limits()
        return len(self._cons) > max_count or self._size > ratio * self._capacity

    def clear(self):
        """Flush: run every queued free, oldest first (no-op while disabled).

        A free that raises stops this flush; the rest stay queued; the error is counted,
        kept in ``last_error`` and warned as :class:`DeallocationWarning`."""
        self._clear("clear()")

    def _clear(self, reason):
        """:meth:`clear`, announcing ``reason`` to :data:`.events.flushed`'s listeners."""
        if self._disable_count or not self._cons or _Exit.exiting:
            return
        me = threading.get_ident()
        if self._flusher == me:         # a finalizer ran during our own flush
            return
        with self._lock:
            self._flusher = me
            try:
                self._flush(reason)
            finally:
                self._flusher = None

    def flush_now(self):
        """Flush even inside ``defer_cleanup`` (for a context reset or close, which would
        otherwise drop the queued frees unsent); not while the interpreter is exiting."""
        if not self._cons or _Exit.exiting:
            return
        me = threading.get_ident()
        if self._flusher == me:
            return
        with self._lock:
            self._flusher = me
            try:
                self._flush("reset or close")
            finally:
                self._flusher = None

    def _flush(self, reason):
        if not flushed.listeners:
            return self._flush_queue()
        t0, n0, b0 = time.perf_counter_ns(), len(self._cons), self._size
        try:
            return self._flush_queue()
        finally:
            flushed.emit(self, reason, t0, n0, b0)

    def _flush_queue(self):
        ctx = self._context
        as_current = getattr(ctx, "as_current", None)
        if as_current is None:
            if ctx is not None:
                ctx.make_current()
            return self._run_queue()
        # a finalizer may flush another device's queue mid-way through the thread's work:
        # its binding is put back afterwards
        with as_current():
            return self._run_queue()

    def _run_queue(self):
        cons = self._cons
        pop = cons.popleft
        lock = self._entries_lock
        n = 0
        # Run what was queued when the flush began (and what this thread's own frees queue
        # meanwhile, up to as many again): threads that keep freeing while one flushes would
        # otherwise keep that flush running forever; their entries wait for the next one.
        budget = 2 * len(cons)
        try:
            while n < budget:
                with lock:
                    try:
                        dtor, handle, size = pop()
                    except IndexError:
                        break
                    self._size -= size
                try:
                    dtor(handle)
                except Exception as exc:
                    self.failed_count += 1
                    self.last_error = exc
                    warnings.warn(f"deferred free of {handle!r} ({size} bytes) failed and "
                                  f"ended this flush ({len(cons)} left queued): {exc}",
                                  DeallocationWarning, stacklevel=2)
                    break
                n += 1
        finally:
            self.freed_count += n
            self.flush_count += 1

    def drop_all(self):
        """Forget every queued free without running it (the context was reset: the memory
        is already gone)."""
        with self._entries_lock:
            self._cons.clear()
            self._size = 0

    @contextlib.contextmanager
    def disable(self):
        """Suspend flushing inside the block (nestable, exception-safe); after the outermost
        block the limits are checked and the queue flushed if exceeded."""
        self._disable_count += 1
        try:
            yield
        finally:
            self._disable_count -= 1
            if not self._disable_count and self._cons and self._over_limits():
                self._clear("end of defer_cleanup")

    # numba.cuda's queue attributes, with numba's meaning (docs/guide.md names them)
    @property
    def memory_capacity(self):
        """Total device memory in bytes that the byte limit is a fraction of (settable, as
        numba.cuda's ``memory_capacity``)."""
        return self._capacity

    @memory_capacity.setter
    def memory_capacity(self, nbytes):
        self._capacity = int(nbytes)

    _memory_capacity = memory_capacity

    @property
    def _max_pending_bytes(self):
        """Queued bytes above which ``add_item`` flushes: ``int(memory_capacity ×
        CUDA_DEALLOCS_RATIO)`` (read at each access, as the flush rule does)."""
        return int(self._capacity * _max_ratio())

    @property
    def max_pending_count(self):
        """Queued entries above which ``add_item`` flushes (``CUDA_DEALLOCS_COUNT``, read at
        each access, as the flush rule does)."""
        return _max_count()

    _max_pending_count = max_pending_count

    @property
    def context(self):
        """The owning :class:`~cujit.runtime.devices.Context`, or None (read-only)."""
        return self._context

    @property
    def is_disabled(self):
        return self._disable_count > 0

    @property
    def nbytes(self):
        """Bytes of memory waiting in the queue."""
        return self._size

    def __len__(self):
        return len(self._cons)

    def __repr__(self):
        return (f"<PendingDeallocs {len(self._cons)} entries, {self._size} bytes"
                f"{', disabled' if self._disable_count else ''}>")
