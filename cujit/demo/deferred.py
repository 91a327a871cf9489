"""Demo 5: deferred deallocation made visible.

Dropping the last reference to a device array does not free it: the free is queued on the
context's pending-deallocations queue (a free can synchronise the device).  The queue is
flushed when it holds more than ``CUDA_DEALLOCS_COUNT`` entries or more than
``CUDA_DEALLOCS_RATIO`` × device memory bytes; inside ``defer_cleanup()`` nothing is flushed.
This task drops arrays in a loop and prints the queue as each threshold is crossed.
"""
import numpy as np

from ._common import Result, Timer

__all__ = ["run", "pending_queue"]


def pending_queue(cuda):
    """The current context's pending-deallocations queue (``memory_manager.deallocations``)."""
    ctx = cuda.current_context()
    mm = getattr(ctx, "memory_manager", None)
    q = getattr(mm, "deallocations", None)
    return q if q is not None else ctx.deallocations


class _Watcher:
    """Drops arrays one at a time and records when the queue was flushed."""

    def __init__(self, cuda, q, lines):
        self.cuda, self.q, self.lines = cuda, q, lines
        self.flushes = 0
        self.longest = 0

    def drop(self, label, nbytes, why):
        before = len(self.q)
        a = self.cuda.device_array(nbytes // 4, dtype=np.float32)
        del a                               # the last reference: the free is queued
        after = len(self.q)
        self.longest = max(self.longest, after)
        if after <= before:
            self.flushes += 1
            self.lines.append(f"  {label}: queue {before} + 1 -> {why}: flushed, "
                              f"now {after}  (flush #{self.flushes})")
            return True
        return False


def _config(cuda):
    # ``cujit.config`` can be shadowed by the ``cujit.config`` submodule once that is
    # imported; the settings object is then its ``config`` attribute.
    cfg = cuda.config
    return getattr(cfg, "config", cfg)


def run(cuda, sizes):
    """Show the count threshold, the bytes threshold and ``defer_cleanup``; PASS when the
    queue is flushed exactly when Numba's rules say (R-DEA-2, R-DEA-4).  ``sizes`` unused."""
    res = Result("deferred deallocation", "1 KiB and 1 MiB arrays")
    cfg = _config(cuda)
    ctx = cuda.current_context()
    q = pending_queue(cuda)
    limit = int(cfg.CUDA_DEALLOCS_COUNT)
    total = int(ctx.get_memory_info()[1])
    lines = res.lines
    checks = []
    with Timer() as t:
        q.clear()                            # start from an empty queue
        w = _Watcher(cuda, q, lines)
        # 1. Count threshold: the (limit+1)-th queued free flushes the queue.
        lines.append(f"count threshold: CUDA_DEALLOCS_COUNT = {limit}; dropping "
                     f"{2 * limit + 2} arrays of 1 KiB")
        for i in range(1, 2 * limit + 3):
            w.drop(f"drop {i:2d}", 1024, f"more than {limit} entries")
        checks.append(("two count flushes, queue never above the limit",
                       w.flushes == 2 and w.longest <= limit))

        # 2. Bytes threshold: lower the ratio so that 4 MiB of queued frees cross it.
        arr = 1 << 20
        cfg.CUDA_DEALLOCS_RATIO = 3.5 * arr / total
        try:
            q.clear()
            before = w.flushes
            lines.append(f"bytes threshold: CUDA_DEALLOCS_RATIO = {cfg.CUDA_DEALLOCS_RATIO:.3g}"
                         f" x {total / 2**30:.1f} GiB = {3.5 * arr / 2**20:g} MiB; "
                         f"dropping 8 arrays of 1 MiB")
            flushed_at = [i for i in range(1, 9)
                          if w.drop(f"drop {i}", arr, "more than 3.5 MiB queued")]
        finally:
            del cfg.CUDA_DEALLOCS_RATIO
        checks.append(("bytes flushes at drops 4 and 8",
                       flushed_at == [4, 8] and w.flushes - before == 2))
        lines.append(f"  (ratio restored to {cfg.CUDA_DEALLOCS_RATIO:g})")

        # 3. defer_cleanup: frees queue past both thresholds and are flushed after the block.
        q.clear()
        held = 3 * limit
        with cuda.defer_cleanup():
            for _ in range(held):
                w.drop("inside defer_cleanup", 1024, "should not flush")
            inside = len(q)
            lines.append(f"defer_cleanup: dropped {held} arrays inside the block, "
                         f"queue holds {inside} (limit {limit}: no flush)")
        after_exit = len(q)
        w.drop("first drop after the block", 1024, "flushing resumed")
        final = len(q)
        lines.append(f"  after the block: queue {after_exit}"
                     f"{' (flushed on exit)' if after_exit < inside else ''}; "
                     f"after one more drop: {final}")
        checks.append(("defer_cleanup holds the frees, flushing resumes after",
                       inside == held and final <= limit))
    res.seconds = t.seconds
    res.passed = all(ok for _, ok in checks)
    res.detail = f"{w.flushes} flushes seen"
    for name, ok in checks:
        lines.append(f"  check: {name}: {'ok' if ok else 'FAILED'}")
    res.extra = {"flushes": w.flushes, "checks": dict(checks)}
    return res
