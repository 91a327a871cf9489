"""``with cujit.trace("run.json"):`` — a memory and work timeline in Chrome trace-event JSON.

The file opens in Perfetto (ui.perfetto.dev) and chrome://tracing.  It records, with host
timestamps (µs since the trace began):

- allocations (device, pinned/mapped host, managed; a stream-ordered one names its
  stream), frees queued on the pending queue and frees done at once (a pool block back to
  its cache, an unpinned range), as instant events on a ``memory`` lane, plus counters of
  the manager's device bytes in use and pending free, and of the queue's entries;
- flushes of the pending queue, with the reason (``count limit``, ``byte limit``,
  ``out of memory``, ``end of defer_cleanup``, ``clear()``, ``reset or close``) and what
  they freed;
- transfers (``HtoD``/``DtoH``/``DtoD``/``PtoP``) with their bytes, kernel launches with
  their grid and block, and graph replays, as duration events on the lane of their stream
  (one lane per stream);
- synchronisations (stream, event, context) on the lane of what they wait for.

How it is recorded: entering ``trace`` subscribes to the hook points of the layers where
the events happen (:mod:`cujit.memory.events`, ``cujit.arrays.transfer.copied``,
``cujit.dispatch.launcher.launched``, :mod:`cujit.runtime.events`) and leaving it
unsubscribes; nothing is wrapped or replaced, so every launch path (fast, slow,
``extensions=``, cooperative, a graph's replay), every copy direction (device to device and
between peers too) and every manager's allocations (the pool's ``stream=`` ones too) are
recorded, and an untraced program pays one attribute test per event.  Only one trace records
at a time (RuntimeError otherwise).

A path that cannot be written (a missing or read-only folder) is warned about when the block
is entered (:class:`TraceWarning`), before the work runs.  The file is written whole or not
at all (a temporary file in the same folder, renamed over ``path``); values JSON has no
type for (a plugin's NumPy integers in its statistics) are written as numbers when they
are numbers, else as their ``repr``.  When the file cannot be written, the events go to
``cujit-trace-<pid>.json`` in the temporary folder; the block's own exception, when it
raised one, is the one that propagates (the write failure is then a TraceWarning).

Not in numba.cuda (R-LIB-5).
"""

import json
import numbers
import os
import tempfile
import threading
import time
import warnings

from .arrays.transfer import copied
from .dispatch.launcher import launched
from .memory import events as _mem
from .runtime import events as _rt
from .runtime.graphs import capturing

__all__ = ["trace", "TraceWarning"]

_lock = threading.Lock()
ACTIVE = None           # the recording Trace, or None

_MEMORY_LANE = 1 << 40          # far above the lanes given to streams
_STREAM_NAMES = {0: "default stream", 1: "legacy default stream",
                 2: "per-thread default stream"}


def _jsonable(value):
    """``json.dump``'s ``default``: a number JSON has no type for (NumPy's, Fraction, ...)
    as an int or float, anything else as its ``repr``, so an odd value in a plugin's
    statistics never stops the file from being written."""
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, numbers.Real):
        return float(value)
    item = getattr(value, "item", None)     # a NumPy scalar of another kind
    if callable(item):
        try:
            v = item()
        except Exception:
            v = value
        if isinstance(v, (int, float, str, bool)) or v is None:
            return v
    return repr(value)


def _number(value):
    """``value`` as an int or float for a counter, or None when it is not a number."""
    if isinstance(value, bool):
        return None
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, numbers.Real):
        return float(value)
    return None


class TraceWarning(UserWarning):
    """``cujit.trace`` cannot write its file where it was asked to (said when the block is
    entered, and when it exits with the block's own exception)."""


def _path_problem(path):
    """Why ``path`` cannot be written (a str), or None when it looks writable."""
    if os.path.isdir(path):
        return f"{path!r} is a folder, not a file path"
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        return f"the folder {folder!r} of {path!r} does not exist"
    if not os.access(folder, os.W_OK | os.X_OK):
        return f"the folder {folder!r} of {path!r} is not writable"
    return None


class trace:
    """``with cujit.trace(path):`` records the timeline described in this module's docstring
    and writes it to ``path`` (str or path-like) as Chrome trace-event JSON when the block
    exits, also on an exception.

    ``path``: where to write; TypeError when it is not a str or path-like.  Entering raises
    RuntimeError when another trace is recording, and warns (:class:`TraceWarning`) at once
    when ``path`` cannot be written (a missing or read-only folder, a folder as the path).
    Leaving writes the file; when that fails the events go to ``cujit-trace-<pid>.json`` in
    the temporary folder, and the OSError (naming that file) is raised, unless the block
    raised: then its exception propagates and the failure is a TraceWarning.  After the
    block, ``events`` holds the recorded event dicts (the file's ``traceEvents``)."""

    def __init__(self, path):
        if not isinstance(path, (str, os.PathLike)):
            raise TypeError(f"trace path must be a str or path-like, got {path!r}")
        self.path = os.fspath(path)
        self.events = []
        self._lanes = {}
        self._t0 = 0
        self._pid = os.getpid()
        self._subscribed = []

    # -- recording -------------------------------------------------------------------------
    def _now(self):
        return (time.perf_counter_ns() - self._t0) / 1000.0

    def _us(self, ns):
        return max((ns - self._t0) / 1000.0, 0.0)

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

    def _span(self, name, cat, handle, started_ns, args):
        ts = self._us(started_ns)
        self.events.append({"name": name, "cat": cat, "ph": "X", "ts": ts,
                            "dur": max(self._now() - ts, 0.0), "pid": self._pid,
                            "tid": self._lane(handle), "args": args})

    def _memory_counter(self, ctx):
        """Counter of the manager's device bytes in use and bytes waiting in the queue."""
        stats = getattr(getattr(ctx, "memory_manager", None), "get_stats", None)
        if stats is None:
            return
        try:
            st = stats()
            args = {"in use": _number(st.bytes_in_use),
                    "pending free": _number(st.pending_bytes)}
        except Exception:       # a plugin's own statistics: not ours to interpret
            return
        if None not in args.values():
            self._counter("device memory (bytes)", args)

    # -- listeners of the hook points --------------------------------------------------------
    def _on_allocated(self, kind, mem, nbytes, stream):
        ptr = getattr(mem, "device_pointer_value", None)
        if ptr is None:
            ptr = getattr(mem, "host_pointer", 0)
        args = {"kind": kind, "bytes": int(nbytes), "pointer": hex(ptr or 0)}
        if stream:
            args["stream"] = hex(stream)
        self._instant(f"alloc {kind}", "memory", args)
        self._memory_counter(getattr(mem, "context", None))

    def _on_freed(self, kind, ptr, nbytes):
        self._instant(f"free {kind}", "memory", {"bytes": int(nbytes), "pointer": hex(ptr)})

    def _on_free_queued(self, queue, handle, size):
        self._instant("free queued", "memory", {"bytes": int(size), "handle": repr(handle)})
        self._counter("pending frees", {"entries": len(queue), "bytes": queue.nbytes})
        self._memory_counter(queue.context)

    def _on_flushed(self, queue, reason, started_ns, before, before_bytes):
        self._span("flush pending frees", "memory", None, started_ns,
                   {"reason": reason, "freed": before - len(queue),
                    "bytes": before_bytes - queue.nbytes, "left": len(queue)})
        self._counter("pending frees", {"entries": len(queue), "bytes": queue.nbytes})
        self._memory_counter(queue.context)

    def _on_copied(self, direction, nbytes, stream, started_ns):
        self._span(direction, "transfer", stream, started_ns,
                   {"bytes": int(nbytes), "direction": direction, "stream": hex(stream)})

    def _on_launched(self, cfg, started_ns):
        h = cfg.stream_handle
        name = f"launch {cfg.dispatcher.py_func.__name__}"
        if h in capturing:
            name += " (captured)"
        self._span(name, "launch", h, started_ns,
                   {"griddim": list(cfg.griddim), "blockdim": list(cfg.blockdim),
                    "dynamic_shared_bytes": cfg.sharedmem, "stream": hex(h)})

    def _on_graph_launched(self, graph, stream, started_ns):
        self._span("graph launch", "launch", stream, started_ns,
                   {"nodes": graph.node_count, "stream": hex(stream)})

    def _on_synchronized(self, what, handle, started_ns):
        self._span(f"synchronize {what}", "sync", handle, started_ns, {})

    def _points(self):
        return ((_mem.allocated, self._on_allocated), (_mem.freed, self._on_freed),
                (_mem.free_queued, self._on_free_queued), (_mem.flushed, self._on_flushed),
                (copied, self._on_copied), (launched, self._on_launched),
                (_rt.graph_launched, self._on_graph_launched),
                (_rt.synchronized, self._on_synchronized))

    def _unsubscribe(self):
        while self._subscribed:
            point, fn = self._subscribed.pop()
            point.unsubscribe(fn)

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
            for point, fn in self._points():
                point.subscribe(fn)
                self._subscribed.append((point, fn))
            ACTIVE = self
        problem = _path_problem(self.path)
        if problem is not None:
            # said now, before the block runs; the recording is still kept (see __exit__)
            warnings.warn(f"cujit.trace: {problem}: the trace cannot be written there",
                          TraceWarning, stacklevel=2)
        return self

    def __exit__(self, exc_type, exc, tb):
        global ACTIVE
        with _lock:
            self._unsubscribe()
            ACTIVE = None
        try:
            self._write(self.path)
        except Exception as err:
            where = ""
            if isinstance(err, OSError):
                # the recording is not lost: it goes to the temporary folder instead
                spare = os.path.join(tempfile.gettempdir(), f"cujit-trace-{os.getpid()}.json")
                try:
                    self._write(spare)
                    where = f"; the trace was written to {spare!r} instead"
                except Exception:
                    pass
            if exc_type is None:
                if isinstance(err, OSError) and where:
                    raise type(err)(err.errno, f"{err.strerror}{where}", err.filename) from err
                raise
            # the block's own exception is the one that propagates
            warnings.warn(f"cujit.trace: could not write {self.path!r}: {err}{where}",
                          TraceWarning, stacklevel=2)
        return False

    def _write(self, path):
        """Write the events to ``path`` whole or not at all: a temporary file in the same
        folder, renamed over ``path`` once complete."""
        path = os.path.abspath(path)
        # open(..., "x") rather than mkstemp: the file gets the umask's mode, as a plain
        # open(path, "w") would give it
        tmp = os.path.join(os.path.dirname(path), f".{os.path.basename(path)}."
                           f"{os.getpid()}.{threading.get_ident()}.tmp")
        try:
            with open(tmp, "x") as f:
                json.dump({"traceEvents": self.events, "displayTimeUnit": "ms",
                           "otherData": {"producer": "cujit.trace", "clock": "host "
                                         "perf_counter, µs since the trace began"}},
                          f, default=_jsonable)
            os.replace(tmp, path)
        except BaseException:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            raise
