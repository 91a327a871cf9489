"""The memory layer's hook points (:class:`cujit.hooks.HookPoint`): what ``cujit.trace`` and
other observers subscribe to, announced where the event happens.

- :data:`allocated` ``(kind, memory, nbytes, stream)``: a new allocation of ``nbytes`` bytes
  (int); ``kind`` is ``"device"``, ``"managed"``, ``"host (cuMemHostAlloc)"`` or
  ``"host (pinned)"`` (mempin); ``memory`` the pointer object returned to the caller
  (``device_pointer_value`` or ``host_pointer``, ``context``); ``stream`` the driver handle
  (int) a stream-ordered allocation (the pool's ``memalloc(n, stream=s)``) is for, else 0.
  Every built-in manager announces its allocations, device ones for every stream, and the
  context announces those of a third-party EMM plugin (``runtime/devices.py``).
- :data:`freed` ``(kind, pointer, nbytes)``: memory released at once, not through the
  pending queue: a pool block back to the pool's cache (``"device (pool cache)"``), a
  mempin range unregistered (``"host (pinned)"``).
- :data:`free_queued` ``(queue, handle, nbytes)``: a free was queued on a
  :class:`~.deallocations.PendingDeallocs` (announced before the flush it may trigger).
- :data:`flushed` ``(queue, reason, started_ns, entries_before, bytes_before)``: a flush of
  ``queue`` ended; ``reason`` is ``"count limit"``, ``"byte limit"``, ``"out of memory"``,
  ``"end of defer_cleanup"``, ``"reset or close"`` or ``"clear()"``; ``started_ns`` its
  start (``time.perf_counter_ns()``), the others the queue's length and bytes before it.

Each site tests ``point.listeners`` before doing anything else for the event, so an
unobserved program pays one attribute test per event.
"""
from ..hooks import HookPoint

__all__ = ["allocated", "freed", "free_queued", "flushed"]

allocated = HookPoint("memory.allocated", ("kind", "memory", "nbytes", "stream"))
freed = HookPoint("memory.freed", ("kind", "pointer", "nbytes"))
free_queued = HookPoint("memory.free_queued", ("queue", "handle", "nbytes"))
flushed = HookPoint("memory.flushed",
                    ("queue", "reason", "started_ns", "entries_before", "bytes_before"))
