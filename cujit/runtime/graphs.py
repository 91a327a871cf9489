"""CUDA graphs: capture the work issued on a stream and replay it with one launch (R-LIB-4;
numba.cuda has none).

::

    s = cujit.stream()
    with cujit.graph(s) as g:          # cuStreamBeginCapture ... cuStreamEndCapture
        kernel_a[grid, block, s](d_x)
        kernel_b[grid, block, s](d_x, d_y)
        d_y.copy_to_host(h_y, stream=s)  # h_y pinned: pageable memory cannot be captured
    for _ in range(100):
        g.launch(s)                    # cuGraphLaunch: all three, one driver call

While a stream is captured its work is recorded, not run.  The graph keeps alive every array
a captured launch or copy used (and anything passed to :meth:`Graph.keep`), so dropping them
afterwards cannot free memory the graph still reads or writes.  No deferred free is flushed
during the capture (a flush may call ``cuMemFree``, which would end it).  What CUDA cannot
capture raises ``CudaAPIError`` with a ``CUDA_ERROR_STREAM_CAPTURE_*`` code: synchronising the
captured stream, work on the legacy default stream (synchronous copies and memsets included),
copies to or from pageable host memory, kernels given host arrays (their copies in and back
would be synchronous: pass device, mapped or managed arrays).  The simulator records and replays the same work
(``driver/sim_graph.py``).
"""
import threading
from time import perf_counter_ns as _now

from .events import graph_launched

from ..driver.errors import CudaAPIError, CUDA_ERROR_STREAM_CAPTURE_INVALIDATED

__all__ = ["Graph", "graph"]

# stream handle -> Graph being captured on it.  Read by the launch and copy paths (one dict
# truthiness test when nothing is captured), so they can hand the graph what it must keep.
capturing = {}


class Graph:
    """A captured CUDA graph.  Make one with :func:`graph`; use it as a context manager.

    Attributes: ``stream`` (the captured Stream), ``node_count`` (captured operations; None
    until the capture ends).  Methods: :meth:`launch`, :meth:`keep`, :meth:`close`."""

    def __init__(self, stream):
        from .streams import Stream
        from .devices import current_context
        if not isinstance(stream, Stream):
            raise TypeError(f"graph(stream): stream must be a cujit Stream (from "
                            f"cujit.stream()), got {stream!r} of type {type(stream).__name__}")
        h = stream.handle
        if h in (0, 1, 2):
            raise ValueError(f"graph(stream): the default streams cannot be captured (handle "
                             f"{h}); use a stream from cujit.stream()")
        self.stream = stream
        self.node_count = None
        self._ctx = current_context()
        self._gen = self._ctx.generation
        self._handle = h
        self._keep = []
        self._graph = None
        self._exec = None
        self._deferred = None
        self._abandoned = None      # what ended the capture early (reset/close), if anything
        self._lock = threading.Lock()

    # -- capture -------------------------------------------------------------------------
    def __enter__(self):
        if self._graph is not None or self._deferred is not None:
            raise RuntimeError("a Graph captures once; make a new one with cujit.graph(stream)")
        h = self._handle
        if h in capturing:
            raise RuntimeError(f"stream {self.stream!r} is already being captured")
        ctx = self._ctx
        ctx.make_current()
        mm = ctx.memory_manager
        deferred = [ctx.deallocations.disable()]
        q = getattr(mm, "deallocations", None)
        if q is not None and q is not ctx.deallocations:
            deferred.append(q.disable())
        for d in deferred:
            d.__enter__()
        self._deferred = deferred
        try:
            _driver().stream_begin_capture(h)
        except BaseException:
            self._undefer()
            raise
        capturing[h] = self
        ctx.captures[h] = self
        return self

    def abandon(self, why):
        """End the capture now and discard what it recorded (cuStreamEndCapture +
        cuGraphDestroy), because ``why`` (a context reset or close) is about to destroy the
        captured stream.  The ``with`` block then raises CudaAPIError
        (CUDA_ERROR_STREAM_CAPTURE_INVALIDATED) instead of instantiating a graph.  Driver
        errors are ignored: an invalidated capture has no graph to destroy."""
        h = self._handle
        if capturing.get(h) is self:
            del capturing[h]
        self._ctx.captures.pop(h, None)
        if self._abandoned is not None or self._deferred is None:
            return
        self._abandoned = why
        drv = _driver()
        try:
            drv.graph_destroy(drv.stream_end_capture(h))
        except CudaAPIError:
            pass
        finally:
            self._undefer()

    def _undefer(self):
        deferred, self._deferred = self._deferred or [], []
        for d in reversed(deferred):
            d.__exit__(None, None, None)

    def __exit__(self, exc_type, exc, tb):
        drv = _driver()
        if self._abandoned is not None:
            if exc_type is None:
                raise CudaAPIError(CUDA_ERROR_STREAM_CAPTURE_INVALIDATED,
                                   f"{self._abandoned} inside the `with graph(...)` block ended "
                                   f"the capture of stream {self._handle:#x} and destroyed the "
                                   "stream; nothing was captured", "cuStreamEndCapture")
            return False
        capturing.pop(self._handle, None)
        self._ctx.captures.pop(self._handle, None)
        try:
            try:
                graph = drv.stream_end_capture(self._handle)
            except Exception:
                if exc_type is None:
                    raise
                return False            # the first error is the one to see
            if exc_type is not None:
                drv.graph_destroy(graph)
                return False
            self._graph = graph
            self.node_count = drv.graph_node_count(graph)
            self._exec = drv.graph_instantiate(graph)
        finally:
            self._undefer()
        return False

    def keep(self, *objs):
        """Keep ``objs`` alive as long as this graph (for memory it uses that cujit cannot
        see, e.g. a raw pointer passed to a kernel)."""
        self._keep.extend(objs)

    # -- replay --------------------------------------------------------------------------
    def launch(self, stream=None):
        """Run the whole captured work on ``stream`` (default: the captured stream; 0 or a
        Stream): one cuGraphLaunch.  RuntimeError before the capture ended or after
        :meth:`close`; TypeError for a bad ``stream``."""
        exe = self._exec
        if exe is None:
            raise RuntimeError("Graph.launch: nothing to launch (the capture has not ended, "
                               "failed, or the graph was closed)")
        if stream is None:
            h = self._handle
        else:
            from .streams import stream_handle
            h = stream_handle(stream)
        if self._ctx.generation != self._gen:
            raise RuntimeError("Graph.launch: the graph's context was reset or closed")
        t0 = graph_launched.listeners and _now()
        _driver().graph_launch(exe, h)
        if t0:
            graph_launched.emit(self, h, t0)

    def close(self):
        """Destroy the graph and release what it kept alive (also when garbage-collected).
        Safe to call twice."""
        exe, graph, self._exec, self._graph = self._exec, self._graph, None, None
        self._keep = []
        if self._ctx.generation != self._gen or getattr(self._ctx, "closed", False):
            return
        self._ctx.make_current()
        _destroy_graph((exe, graph))

    def __del__(self):
        # Like streams and events: the destroy goes through the context's resource queue,
        # so it runs in a thread with the context current, never inside a finaliser.
        try:
            if self._exec is not None or self._graph is not None:
                self._ctx._queue_resource(_destroy_graph, (self._exec, self._graph), self._gen)
                self._exec = self._graph = None
        except Exception:
            pass

    def __repr__(self):
        state = ("capturing" if self._handle in capturing and capturing[self._handle] is self
                 else f"{self.node_count} nodes" if self._exec is not None else "empty")
        return f"<cujit Graph on stream {self._handle:#x}: {state}>"


def graph(stream):
    """A :class:`Graph` capturing ``stream`` (a Stream from ``cujit.stream()``) inside a
    ``with`` block; ``g.launch()`` replays it.  TypeError when ``stream`` is not a Stream,
    ValueError for a default stream."""
    return Graph(stream)


def keep_for_graph(handle, *objs):
    """Called by the launch and copy paths while ``handle`` is captured."""
    g = capturing.get(handle)
    if g is not None:
        g._keep.extend(o for o in objs if o is not None)


def _destroy_graph(pair):
    exe, graph = pair
    drv = _driver()
    if exe is not None:
        drv.graph_exec_destroy(exe)
    if graph is not None:
        drv.graph_destroy(graph)


def _driver():
    from ..driver import get_driver
    return get_driver()
