"""``with cujit.trace("run.json"):`` — a memory and work timeline in Chrome trace-event JSON.

The file opens in Perfetto (ui.perfetto.dev) and chrome://tracing.  It records, with host
timestamps (µs since the trace began):

- allocations (device, pinned/mapped host, managed) and frees queued on the pending queue,
  as instant events on a ``memory`` lane, plus counters of the manager's device bytes in
  use and pending free, and of the queue's entries;
- flushes of the pending queue, with the reason (``count limit``, ``byte limit``,
  ``out of memory``, ``end of defer_cleanup``, ``clear()``, ``close``) and what they freed;
- transfers (``HtoD``/``DtoH``/``DtoD``) with their bytes, and kernel launches with their
  grid and block, as duration events on the lane of their stream (one lane per stream);
- synchronisations (stream, event, context) on the lane of what they wait for.

How it costs nothing when off: there are no hook sites in the hot paths.  Entering
``trace`` wraps a handful of functions and methods (the context's allocators, the pending
queue, the array-transfer helpers, the launch call, the synchronize methods) and leaving it
puts the originals back, so an untraced program runs exactly the code it runs without this
module.  Only one trace records at a time (RuntimeError otherwise).  Code that took a direct
reference to a wrapped function before the trace began (``from cujit.arrays.devicearray
import ...``) is not traced.

Not in numba.cuda (R-LIB-5).
"""
import json
import os
import sys
import threading
import time

__all__ = ["trace"]

_lock = threading.Lock()
ACTIVE = None           # the recording Trace, or None

_MEMORY_LANE = 1 << 40          # far above the lanes given to streams
_STREAM_NAMES = {0: "default stream", 1: "legacy default stream",
                 2: "per-thread default stream"}
_FLUSH_CALLERS = {"add_item": None, "_retry": "out of memory", "disable": "end of defer_cleanup",
                  "_close": "close", "reset": "reset"}


def _nbytes_of(shape, itemsize):
    n = itemsize
    for s in shape:
        n *= s
    return n


def _handle(stream):
    """Driver handle (int) of a ``stream=`` value (0 for the default stream)."""
    if isinstance(stream, int):
        return stream
    h = getattr(stream, "handle", None)
    if isinstance(h, int):
        return h
    try:
        from .runtime.streams import stream_handle
        return stream_handle(stream)
    except Exception:
        return 0


class trace:
    """``with cujit.trace(path):`` records the timeline described in this module's docstring
    and writes it to ``path`` (str or path-like) as Chrome trace-event JSON when the block
    exits, also on an exception.

    ``path``: where to write; TypeError when it is not a str or path-like.  Entering raises
    RuntimeError when another trace is recording.  After the block, ``events`` holds the
    recorded event dicts (the file's ``traceEvents``)."""

    def __init__(self, path):
        if not isinstance(path, (str, os.PathLike)):
            raise TypeError(f"trace path must be a str or path-like, got {path!r}")
        self.path = os.fspath(path)
        self.events = []
        self._lanes = {}
        self._t0 = 0
        self._pid = os.getpid()
        self._undo = []

    # -- recording -------------------------------------------------------------------------
    def _now(self):
        return (time.perf_counter_ns() - self._t0) / 1000.0

    def _lane(self, handle):
        tid = self._lanes.get(handle)
        if tid is None:
            tid = self._lanes[handle] = len(self._lanes) + 1
            name = _STREAM_NAMES.get(handle, f"stream {handle:#x}")
            self.events.append({"name": "thread_name", "ph": "M", "pid": self._pid,
                                "tid": tid, "args": {"name": name}})
            self.events.append({"name": "thread_sort_index", "ph": "M", "pid": self._pid,
                                "tid": tid, "args": {"sort_index": tid}})
        return tid

    def _instant(self, name, cat, args):
        self.events.append({"name": name, "cat": cat, "ph": "i", "s": "t", "ts": self._now(),
                            "pid": self._pid, "tid": _MEMORY_LANE, "args": args})

    def _counter(self, name, args):
        self.events.append({"name": name, "ph": "C", "ts": self._now(), "pid": self._pid,
                            "tid": _MEMORY_LANE, "args": args})

    def _span(self, name, cat, handle, t0, args):
        self.events.append({"name": name, "cat": cat, "ph": "X", "ts": t0,
                            "dur": max(self._now() - t0, 0.0), "pid": self._pid,
                            "tid": self._lane(handle), "args": args})

    def alloc(self, kind, mem, nbytes):
        ptr = getattr(mem, "device_pointer_value", None)
        if ptr is None:
            ptr = getattr(mem, "host_pointer", 0)
        self._instant(f"alloc {kind}", "memory",
                      {"kind": kind, "bytes": int(nbytes), "pointer": hex(ptr or 0)})
        self._memory_counter(getattr(mem, "context", None))

    def _memory_counter(self, ctx):
        """Counter of the manager's device bytes in use and bytes waiting in the queue."""
        stats = getattr(getattr(ctx, "memory_manager", None), "get_stats", None)
        if stats is None:
            return
        try:
            st = stats()
            args = {"in use": st.bytes_in_use, "pending free": st.pending_bytes}
        except Exception:       # a plugin's own statistics: not ours to interpret
            return
        self._counter("device memory (bytes)", args)

    def free_queued(self, queue, handle, size):
        self._instant("free queued", "memory", {"bytes": int(size), "handle": repr(handle)})

    def flush(self, queue, reason, t0, before, before_bytes):
        freed = before - len(queue)
        self._span("flush pending frees", "memory", None, t0,
                   {"reason": reason, "freed": freed, "bytes": before_bytes - queue.nbytes,
                    "left": len(queue)})
        self._counter("pending frees", {"entries": len(queue), "bytes": queue.nbytes})
        self._memory_counter(queue.context)

    # -- wrapping ---------------------------------------------------------------------------
    def _patch(self, owner, name, make):
        orig = owner.__dict__[name] if isinstance(owner, type) else getattr(owner, name)
        setattr(owner, name, make(orig))
        self._undo.append((owner, name, orig))

    def _install(self):
        from .runtime.devices import Context
        from .memory.deallocations import PendingDeallocs
        from .arrays import devicearray, api
        from .compiler.dispatcher import _Configured
        from .runtime.streams import Stream, Event
        tr = self

        def allocator(kind, size_of):
            def make(orig):
                def wrapped(ctx, *a, **k):
                    mem = orig(ctx, *a, **k)
                    tr.alloc(kind, mem, size_of(a))
                    return mem
                return wrapped
            return make

        self._patch(Context, "memalloc", allocator("device", lambda a: a[0]))
        # A context keeps its manager's memalloc as an instance attribute (the hot path):
        # wrap it in the contexts that exist, and in those made (or re-managed) meanwhile.
        from .runtime import devices

        def traced(fn):
            def memalloc(n):
                mem = fn(n)
                tr.alloc("device", mem, n)
                return mem
            memalloc._cujit_untraced = fn
            return memalloc

        for ctx in devices.contexts():
            fn = ctx.__dict__.get("memalloc")
            if fn is not None:
                ctx.__dict__["memalloc"] = traced(fn)
        self._patch(devices, "_checked_memalloc", lambda orig: lambda m: traced(orig(m)))
        self._patch(Context, "memhostalloc", allocator("host (cuMemHostAlloc)", lambda a: a[0]))
        self._patch(Context, "mempin", allocator("host (pinned)", lambda a: a[2]))
        self._patch(Context, "memallocmanaged", allocator("managed", lambda a: a[0]))

        def add_item(orig):
            def wrapped(q, dtor, handle, size=0):
                tr.free_queued(q, handle, size)
                try:
                    return orig(q, dtor, handle, size)
                finally:        # after any flush the add triggered
                    tr._counter("pending frees", {"entries": len(q), "bytes": q.nbytes})
                    tr._memory_counter(q.context)
            return wrapped
        self._patch(PendingDeallocs, "add_item", add_item)

        def flush(orig):
            def wrapped(q):
                # clear() -> _flush(): the function that called clear() says why
                caller = sys._getframe(2).f_code.co_name
                reason = _FLUSH_CALLERS.get(caller, "clear()")
                if caller == "add_item":
                    reason = "count limit" if len(q) > q.max_pending_count else "byte limit"
                t0, before, nb = tr._now(), len(q), q.nbytes
                try:
                    return orig(q)
                finally:
                    tr.flush(q, reason, t0, before, nb)
            return wrapped
        self._patch(PendingDeallocs, "_flush", flush)

        def copier(direction, nbytes_of, stream_of):
            def make(orig):
                def wrapped(*a):
                    t0 = tr._now()
                    try:
                        return orig(*a)
                    finally:
                        h = _handle(stream_of(a))
                        tr._span(direction, "transfer", h, t0,
                                 {"bytes": int(nbytes_of(a)), "direction": direction,
                                  "stream": hex(h)})
                return wrapped
            return make

        def arg(i, default=0):
            return lambda a: a[i] if len(a) > i else default

        htod = copier("HtoD", lambda a: a[3].nbytes, arg(4))
        dtoh = copier("DtoH", lambda a: a[0].nbytes, arg(4))
        dtod = copier("DtoD", lambda a: _nbytes_of(a[4], a[5].itemsize), arg(6))
        htod_c = copier("HtoD", lambda a: a[2], arg(3))
        dtoh_c = copier("DtoH", lambda a: a[2], arg(3))
        for mod in (devicearray, api):
            for name, make in (("copy_htod", htod), ("copy_dtoh", dtoh), ("copy_dtod", dtod),
                               ("_copy_htod_contig", htod_c),
                               ("_copy_dtoh_contig", dtoh_c)):
                if name in vars(mod):
                    self._patch(mod, name, make)

        def launch(orig):
            def wrapped(cfg, *args):
                t0 = tr._now()
                try:
                    return orig(cfg, *args)
                finally:
                    tr._span(f"launch {cfg.dispatcher.py_func.__name__}", "launch",
                             cfg.stream_handle, t0,
                             {"griddim": list(cfg.griddim), "blockdim": list(cfg.blockdim),
                              "dynamic_shared_bytes": cfg.sharedmem,
                              "stream": hex(cfg.stream_handle)})
            return wrapped
        self._patch(_Configured, "__call__", launch)

        def syncer(what, handle_of):
            def make(orig):
                def wrapped(obj):
                    t0 = tr._now()
                    try:
                        return orig(obj)
                    finally:
                        tr._span(f"synchronize {what}", "sync", handle_of(obj), t0, {})
                return wrapped
            return make
        self._patch(Stream, "synchronize", syncer("stream", lambda s: s.handle))
        self._patch(Event, "synchronize", syncer("event", lambda e: 0))
        self._patch(Context, "synchronize", syncer("context", lambda c: 0))

    def _uninstall(self):
        while self._undo:
            owner, name, orig = self._undo.pop()
            setattr(owner, name, orig)
        from .runtime import devices
        for ctx in devices.contexts():
            fn = ctx.__dict__.get("memalloc")
            orig = getattr(fn, "_cujit_untraced", None)
            if orig is not None:
                ctx.__dict__["memalloc"] = orig

    # -- context manager ---------------------------------------------------------------------
    def __enter__(self):
        global ACTIVE
        with _lock:
            if ACTIVE is not None:
                raise RuntimeError(f"a trace is already recording to {ACTIVE.path!r}; "
                                   "traces do not nest")
            self._t0 = time.perf_counter_ns()
            self.events = [{"name": "process_name", "ph": "M", "pid": self._pid, "tid": 0,
                            "args": {"name": "cujit"}},
                           {"name": "thread_name", "ph": "M", "pid": self._pid,
                            "tid": _MEMORY_LANE, "args": {"name": "memory"}}]
            self._lanes = {None: _MEMORY_LANE}
            try:
                self._install()
            except BaseException:
                self._uninstall()
                raise
            ACTIVE = self
        return self

    def __exit__(self, *exc):
        global ACTIVE
        with _lock:
            self._uninstall()
            ACTIVE = None
        with open(self.path, "w") as f:
            json.dump({"traceEvents": self.events, "displayTimeUnit": "ms",
                       "otherData": {"producer": "cujit.trace", "clock": "host perf_counter, "
                                     "µs since the trace began"}}, f)
        return False
