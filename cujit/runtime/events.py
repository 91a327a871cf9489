"""The runtime layer's hook points (:class:`cujit.hooks.HookPoint`), announced where the
event happens; ``cujit.trace`` subscribes to them.

- :data:`synchronized` ``(what, handle, started_ns)``: the host waited: ``what`` is
  ``"stream"`` (``Stream.synchronize``, ``handle`` the stream's driver handle), ``"event"``
  (``Event.synchronize``) or ``"context"`` (``Context.synchronize``; ``handle`` 0 for
  both); ``started_ns`` is ``time.perf_counter_ns()`` when the wait began.  Announced when
  the wait returned.
- :data:`graph_launched` ``(graph, stream, started_ns)``: a captured graph was replayed
  (``Graph.launch``, one cuGraphLaunch) on driver stream handle ``stream`` (int).

Each site tests ``point.listeners`` first: one attribute test when nobody listens.
"""
from ..hooks import HookPoint

__all__ = ["synchronized", "graph_launched"]

synchronized = HookPoint("runtime.synchronized", ("what", "handle", "started_ns"))
graph_launched = HookPoint("runtime.graph_launched", ("graph", "stream", "started_ns"))
