"""Stream capture and CUDA graphs for the simulated driver.

While a stream is captured, the simulated driver's stream work on it (copies, memsets, kernel
launches, host functions, graph launches) is recorded here instead of run; a graph is the list
of recorded operations, and launching an executable graph runs them in order, as stream work
of the launching stream.  What CUDA refuses during a capture is refused here with the same
codes: synchronising the captured stream or querying it (CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED,
and the capture is invalidated), work on the legacy default stream, which would implicitly
synchronise with the captured stream (CUDA_ERROR_STREAM_CAPTURE_IMPLICIT), and copies to or
from pageable host memory (CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED: a graph replays later, when
the pageable buffer may be gone; pinned, mapped and managed memory are fine).

:class:`SimCapture` holds the state for one :class:`~cujit.driver.sim.SimDriver`; the
driver calls :meth:`SimCapture.intercept` at the top of each stream operation.
"""
import itertools
import threading

from .errors import (CudaAPIError, CUDA_ERROR_INVALID_HANDLE,
                             CUDA_ERROR_STREAM_CAPTURE_IMPLICIT,
                             CUDA_ERROR_STREAM_CAPTURE_INVALIDATED,
                             CUDA_ERROR_STREAM_CAPTURE_UNMATCHED,
                             CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED)

__all__ = ["SimCapture"]

_LEGACY = (0, 1)


class _Recording:
    __slots__ = ("ops", "invalid", "thread")

    def __init__(self):
        self.ops = []
        self.invalid = None
        self.thread = threading.get_ident()


class SimCapture:
    """Captures in progress (stream → recording), graphs and executable graphs."""

    def __init__(self):
        self.active = {}            # stream handle -> _Recording
        self._graphs = {}           # graph handle -> tuple of ops
        self._execs = {}            # exec handle -> tuple of ops
        self._handles = itertools.count(0x6_0000_0000)
        self._lock = threading.Lock()

    # -- capture -------------------------------------------------------------------------
    def begin(self, stream):
        if stream in _LEGACY:
            raise CudaAPIError(CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED,
                               "the legacy default stream cannot be captured",
                               "cuStreamBeginCapture")
        if stream in self.active:
            raise CudaAPIError(CUDA_ERROR_INVALID_HANDLE, f"stream {stream:#x} is already "
                               "being captured", "cuStreamBeginCapture")
        self.active[stream] = _Recording()

    def end(self, stream):
        rec = self.active.pop(stream, None)
        if rec is None:
            raise CudaAPIError(CUDA_ERROR_STREAM_CAPTURE_UNMATCHED,
                               f"stream {stream:#x} is not being captured", "cuStreamEndCapture")
        if rec.invalid is not None:
            raise CudaAPIError(CUDA_ERROR_STREAM_CAPTURE_INVALIDATED,
                               f"the capture was invalidated by {rec.invalid}",
                               "cuStreamEndCapture")
        with self._lock:
            h = next(self._handles)
        self._graphs[h] = tuple(rec.ops)
        return h

    def forget(self, stream):
        """The stream was destroyed: drop its capture, if one was in progress."""
        self.active.pop(stream, None)

    def is_capturing(self, stream):
        return stream in self.active

    def intercept(self, stream, call, fn, host_ptrs=()):
        """Called by the driver before stream work ``fn`` (no arguments) on ``stream``.
        Returns True when the work was recorded (the caller must not run it); raises for
        work CUDA refuses during a capture; returns False when the work should run now.
        ``host_ptrs``: (pointer, is_pageable) of host memory the work reads or writes."""
        rec = self.active.get(stream)
        if rec is None:
            if stream in _LEGACY and self.active:
                self._invalidate_all(call)
                raise CudaAPIError(CUDA_ERROR_STREAM_CAPTURE_IMPLICIT,
                                   "work on the legacy default stream (a synchronous copy "
                                   "or memset, or stream 0) while a stream is being captured",
                                   call)
            return False
        for ptr, pageable in host_ptrs:
            if pageable:
                rec.invalid = rec.invalid or call
                raise CudaAPIError(CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED,
                                   f"a copy to or from pageable host memory at {ptr:#x} "
                                   "cannot be captured (use pinned memory: pinned_array or "
                                   "`with pinned(...)`)", call)
        rec.ops.append(fn)
        return True

    def refuse(self, stream, call):
        """Synchronising or querying work: refused when ``stream`` (or, for a
        context-wide call, ``None``, any stream) is being captured."""
        if not self.active:
            return
        if stream is None or stream in self.active or stream in _LEGACY:
            self._invalidate_all(call)
            raise CudaAPIError(CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED,
                               "cannot synchronise or query while a stream is being captured "
                               "(end the capture first)", call)

    def _invalidate_all(self, call):
        for rec in self.active.values():
            rec.invalid = rec.invalid or call

    # -- graphs --------------------------------------------------------------------------
    def _lookup(self, table, handle, call):
        try:
            return table[handle]
        except (KeyError, TypeError):
            raise CudaAPIError(CUDA_ERROR_INVALID_HANDLE, f"handle {handle!r}", call) from None

    def instantiate(self, graph):
        ops = self._lookup(self._graphs, graph, "cuGraphInstantiate")
        with self._lock:
            h = next(self._handles)
        self._execs[h] = ops
        return h

    def ops_of_exec(self, graph_exec):
        return self._lookup(self._execs, graph_exec, "cuGraphLaunch")

    def node_count(self, graph):
        return len(self._lookup(self._graphs, graph, "cuGraphGetNodes"))

    def destroy(self, graph):
        self._lookup(self._graphs, graph, "cuGraphDestroy")
        del self._graphs[graph]

    def destroy_exec(self, graph_exec):
        self._lookup(self._execs, graph_exec, "cuGraphExecDestroy")
        del self._execs[graph_exec]

    def reset(self):
        """Context reset: every capture, graph and executable graph is gone."""
        self.active.clear()
        self._graphs.clear()
        self._execs.clear()
