"""The pool memory manager: a stream-ordered, user-space caching allocator (R-EMM-3).

Device memory comes from ``cuMemAlloc`` in blocks rounded up to :data:`ROUND` bytes.  When a
pointer dies its block goes back to this manager's cache, not to the driver, with no driver
call, and the next request of the same rounded size takes it back, with no driver call either
(CuPy's ``MemoryPool`` works the same way).

**Stream order.**  Every block remembers the stream it was allocated on.  A dead block is
reused *at once* by a request on that same stream: the stream runs its work in order, so
whatever still uses the block finishes before the new owner's work starts.  A request on
*another* stream takes such a block only after an event recorded on the first stream says
the work issued there before the block died is done (``cuEventRecord`` once for all of that
stream's dead blocks, then ``cuEventQuery``; never a wait).  Work on one stream that uses
memory allocated on another stream must be synchronised (or wrapped in ``defer_cleanup``)
before the memory is dropped, as with every stream-ordered allocator.

Inside ``defer_cleanup`` dead blocks go to the pending-deallocations queue instead, and
reach the cache only when the queue is flushed: "suspends all freeing" keeps its meaning.
An allocation that fails for lack of memory returns the whole cache to the driver, flushes
the queue and retries once.  ``trim(keep_bytes)`` returns cached blocks to the driver;
``pool_stats()`` counts hits, misses and cached bytes.

Select it with ``cujit.set_memory_manager(cujit.PoolMemoryManager)`` or
``NUMBA_CUDA_MEMORY_MANAGER=cujit.memory.pool``.
"""
from collections import namedtuple

from ..driver.errors import CudaAPIError, CUDA_ERROR_OUT_OF_MEMORY
from .deallocations import _Exit, check_settings
from .events import allocated, freed
from .managers import (GetIpcHandleMixin, HostOnlyCUDAMemoryManager, MemoryStats,
                       _check_alloc_size, _SIZE_T_MAX, tracked_pointer)
from .pointers import AutoFreePointer

__all__ = ["PoolMemoryManager", "PoolStats", "ROUND"]

#: Block sizes are multiples of this many bytes (CuPy's allocation unit).
ROUND = 512
_MASK = ROUND - 1
_new = object.__new__

PoolStats = namedtuple("PoolStats", [
    "cached_bytes",       # bytes of dead blocks held for reuse (not in use, not freed)
    "cached_blocks",      # number of such blocks
    "hits",               # requests served from the cache on the same stream
    "cross_stream_hits",  # requests served by a block whose other stream's work was done
    "misses",             # requests that called cuMemAlloc
    "driver_frees",       # blocks returned to the driver (trim, out-of-memory)
])


def _stream_handle(ctx, stream):
    """The driver stream handle of ``stream`` for an allocation in ``ctx``.

    ``stream``: 0/None, an int handle in 0..2**64-1 (a CUstream is a pointer), a cujit Stream
    of ``ctx`` that is still alive, or an object with ``__cuda_stream__``.  TypeError for
    anything else; ValueError for an int outside that range or another context's Stream;
    CudaAPIError (CUDA_ERROR_INVALID_HANDLE) for a Stream destroyed by a reset or close of its
    context (its handle may since belong to a new stream: blocks must not be filed under
    it)."""
    if stream is None:
        return 0
    if type(stream) is int:
        if not 0 <= stream < 1 << 64:
            raise ValueError(f"stream handle {stream} is not a CUstream (a pointer value in "
                             "0..2**64-1)")
        return stream
    if isinstance(stream, bool):
        raise TypeError(f"stream must be 0, a Stream or a stream handle (int), got {stream!r}")
    owner = getattr(stream, "context", None)
    if owner is not None and type(getattr(stream, "handle", None)) is int:
        if ctx is not None and owner is not ctx:
            raise ValueError(f"{stream!r} belongs to {owner!r}, not to {ctx!r} whose pool "
                             "was asked for memory")
    elif getattr(stream, "__cuda_stream__", None) is None:
        raise TypeError(f"stream must be 0, a Stream or a stream handle (int), got {stream!r} "
                        f"of type {type(stream).__name__}")
    # the context's one converter: checks a Stream's generation and __cuda_stream__ handles
    return ctx.stream_handle(stream)


def _return_block(mgr, ptr, nbytes, size, stream, gen):
    """Finalizer target: the block goes back to the cache (or, inside ``defer_cleanup``, to
    the pending queue, which hands it to the cache when flushed).  Never raises.  What a
    :class:`_Block` does when it runs (``detach()`` hands this function out)."""
    fin = _new(_Block)
    fin.args = (mgr, ptr, nbytes, size, stream, gen)
    fin()


class _Block:
    """The finalizer of one pool pointer: the pointer holds the only reference, so when the
    pointer dies ``__del__`` hands the block back (also for pointers in garbage cycles,
    PEP 442).  Cheaper than a weak-reference finalizer per allocation; ``alive``,
    ``__call__`` and ``detach`` behave as ``weakref.finalize``'s (what MemoryPointer uses)."""

    __slots__ = ("args",)

    def __del__(self):
        # The block's return itself, not a call to a function doing it: this runs once per
        # dropped pool array.  Runs at most once (``args`` is cleared first); never raises.
        args = self.args
        if args is None:
            return
        self.args = None
        try:
            if _Exit.exiting:
                return
            mgr, ptr, nbytes, size, stream, gen = args
            if gen != mgr.context.generation:
                # reset/close no longer destroy the (shared) primary context, so a block
                # still live at the reset is still allocated: free it now that its pointer
                # died
                mgr._drv.mem_free(ptr)
                return
            mgr._in_use -= size
            mgr._live -= 1
            q = mgr.deallocations
            if q._disable_count:
                q.add_item(mgr._cache_block, (ptr, nbytes, stream), nbytes)
                return
            # _cache_block inlined: this runs once per dropped array
            key = (nbytes, stream) if stream else nbytes
            lst = mgr._free.get(key)
            if lst is None:
                mgr._free[key] = [ptr]
            else:
                lst.append(ptr)
            mgr._cached += nbytes
            mgr._cached_blocks += 1
            if freed.listeners:
                freed.emit("device (pool cache)", ptr, nbytes)
        except Exception:
            pass

    #: run it now if it has not run (``pointer.free()``)
    __call__ = __del__

    @property
    def alive(self):
        return self.args is not None

    def detach(self):
        args, self.args = self.args, None
        return None if args is None else (None, _return_block, args)


def _items(d):
    """``list(d.items())``, retried if a finaliser returning a block (possibly run by a
    garbage collection in this very thread) changes the dict while it is being read."""
    while True:
        try:
            return list(d.items())
        except RuntimeError:
            continue


def _parts(key):
    """``(nbytes, stream)`` of a free-list key (stream 0's keys are the plain size)."""
    return (key, 0) if type(key) is int else key


class PoolMemoryManager(GetIpcHandleMixin, HostOnlyCUDAMemoryManager):
    """EMM plugin: a stream-ordered caching allocator over ``cuMemAlloc`` (see module doc).

    ``memalloc(size, stream=0)`` errors as the default manager's, plus ``TypeError`` for a
    ``stream`` that is not a stream.  Statistics: ``get_stats()`` (``reserved_bytes``
    includes the cache) and :meth:`pool_stats`."""

    #: ``device_array``/``to_device`` with ``stream=`` pass it to :meth:`memalloc`
    stream_ordered = True

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        # dead blocks by allocation stream: key nbytes (stream 0) or (nbytes, stream)
        self._free = {}
        self._done = {}             # nbytes -> [ptr, ...] dead blocks whose stream work is done
        self._waiting = []          # [event, [(ptr, nbytes), ...]] recorded, not yet done
        self._spare_events = []
        self._cached = 0
        self._cached_blocks = 0
        self._hits = 0
        self._cross = 0
        self._misses = 0
        self._driver_frees = 0

    def initialize(self):
        """Nothing to set up: blocks are made on demand."""

    # -- the cache ---------------------------------------------------------------------
    def _cache_block(self, item):
        ptr, nbytes, stream = item
        key = (nbytes, stream) if stream else nbytes
        lst = self._free.get(key)
        if lst is None:
            self._free[key] = [ptr]
        else:
            lst.append(ptr)
        self._cached += nbytes
        self._cached_blocks += 1

    def _take_other_stream(self, nbytes, stream):
        """A dead block of ``nbytes`` whose last stream's work is done, or 0."""
        done = self._done.get(nbytes)
        if not done:
            self._poll_waiting()
            done = self._done.get(nbytes)
        if not done:
            # Record one event per other stream holding blocks of this size; every dead
            # block of that stream (all sizes) is covered by it.
            drv = self._drv
            for s in [_parts(k)[1] for k, v in _items(self._free)
                      if v and _parts(k)[1] != stream and _parts(k)[0] == nbytes]:
                ev = self._spare_events.pop() if self._spare_events else \
                    drv.event_create(timing=False)
                try:
                    drv.event_record(ev, s)
                except CudaAPIError:
                    # The stream is gone (destroyed): nothing to order after but the device.
                    self.context.make_current()
                    drv.ctx_synchronize()
                    drv.event_record(ev, 0)
                blocks = []
                for k, _ in _items(self._free):
                    if _parts(k)[1] == s:
                        blocks.extend((p, _parts(k)[0]) for p in self._free.pop(k, ()))
                self._waiting.append([ev, blocks])
            self._poll_waiting()
            done = self._done.get(nbytes)
        if done:
            self._cached -= nbytes
            self._cached_blocks -= 1
            self._cross += 1
            return done.pop()
        return 0

    def _poll_waiting(self):
        drv = self._drv
        still = []
        for entry in self._waiting:
            ev, blocks = entry
            if drv.event_query(ev):
                for p, n in blocks:
                    self._done.setdefault(n, []).append(p)
                self._spare_events.append(ev)
            else:
                still.append(entry)
        self._waiting = still

    def _alloc_block(self, nbytes):
        drv = self._drv
        try:
            return drv.mem_alloc(nbytes)
        except CudaAPIError as exc:
            if exc.code == CUDA_ERROR_OUT_OF_MEMORY:
                self.trim()
            return self._retry(exc, lambda: drv.mem_alloc(nbytes))

    def memalloc(self, size, stream=0):
        """Device memory of ``size`` bytes for work on ``stream`` → AutoFreePointer.

        ``stream``: 0 (default), a Stream or a stream handle.  Size 0 gives a NULL pointer.
        TypeError for a non-integer size or a non-stream, ValueError for a negative size or
        one beyond size_t, for a stream handle outside 0..2**64-1 or another context's
        Stream, CudaAPIError (CUDA_ERROR_INVALID_HANDLE) for a Stream destroyed by a reset
        or close of its context, CudaAPIError (CUDA_ERROR_OUT_OF_MEMORY, cuMemAlloc) when the device
        is full even after the cache was released and the queue flushed."""
        if type(size) is not int or size <= 0 or size > _SIZE_T_MAX:
            size = _check_alloc_size(size)
            if size == 0:
                return AutoFreePointer(self.context, 0, 0)
        # as the default manager: a malformed NUMBA_CUDA_MAX_PENDING_DEALLOCS_* is reported
        # at the first allocation (a cached parse, cheap on the hot path)
        check_settings()
        if type(stream) is not int or stream >> 64 or stream < 0:
            stream = _stream_handle(self.context, stream)
        nbytes = (size + _MASK) & ~_MASK
        lst = self._free.get((nbytes, stream) if stream else nbytes)
        if lst:
            ptr = lst.pop()
            self._cached -= nbytes
            self._cached_blocks -= 1
            self._hits += 1
        else:
            ptr = self._take_other_stream(nbytes, stream) if self._cached_blocks else 0
            if not ptr:
                ptr = self._alloc_block(nbytes)
                self._misses += 1
        mem = tracked_pointer(self, ptr, size)
        fin = _new(_Block)
        fin.args = (self, ptr, nbytes, size, stream, mem.generation)
        mem._finalizer = fin
        if allocated.listeners:
            allocated.emit("device", mem, size, stream)
        return mem

    def trim(self, keep_bytes=0):
        """Return cached blocks to the driver (cuMemFree, which waits for the device to be
        done with them) until at most ``keep_bytes`` stay cached.  Blocks whose stream work
        is known done go first, then same-stream ones, then those still waiting on an event.
        ``keep_bytes``: int ≥ 0, else TypeError/ValueError.  Returns the bytes released."""
        keep = _check_alloc_size(keep_bytes, "trim(keep_bytes) (the cache size to keep)")
        if self.context is None or self._cached <= keep:
            return 0
        self.context.make_current()
        free = self._drv.mem_free
        start = self._cached

        def release(ptrs, n):
            while ptrs and self._cached > keep:
                free(ptrs.pop())
                self._cached -= n
                self._cached_blocks -= 1
                self._driver_frees += 1

        for n, ptrs in self._done.items():
            release(ptrs, n)
        for k, ptrs in _items(self._free):
            release(ptrs, _parts(k)[0])
        for entry in self._waiting:
            blocks = entry[1]
            while blocks and self._cached > keep:
                p, n = blocks.pop()
                release([p], n)
        drv = self._drv
        for ev in self._spare_events + [e for e, bl in self._waiting if not bl]:
            drv.event_destroy(ev)
        self._spare_events = []
        self._waiting = [e for e in self._waiting if e[1]]
        # empty free lists stay: a finaliser may be appending to one right now
        self._done = {k: v for k, v in self._done.items() if v}
        return start - self._cached

    def pool_stats(self):
        """:class:`PoolStats` of the cache (bytes, block and request counts)."""
        return PoolStats(self._cached, self._cached_blocks, self._hits, self._cross,
                         self._misses, self._driver_frees)

    def get_stats(self):
        """:class:`MemoryStats`; ``reserved_bytes`` also counts the cached blocks."""
        st = super().get_stats()
        return st._replace(reserved_bytes=st.reserved_bytes + self._cached)

    def reset(self):
        """Forget the cache without freeing (``Context.reset``/``close`` trim it first, and
        blocks still live then are freed when their pointers die: ``_return_block``)."""
        super().reset()
        self._free, self._done, self._waiting, self._spare_events = {}, {}, [], []
        self._cached = self._cached_blocks = 0


_numba_memory_manager = PoolMemoryManager
