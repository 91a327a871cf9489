"""Deferred deallocation: watch the pending-deallocations queue.

Dropping the last reference to a device array queues its free instead of calling cuMemFree at
once (a free can synchronise the whole device and stall asynchronous work).  The queue is
flushed when it holds more than ``CUDA_DEALLOCS_COUNT`` entries (env
``NUMBA_CUDA_MAX_PENDING_DEALLOCS_COUNT``, default 10) or more than ``CUDA_DEALLOCS_RATIO`` of
the device memory in bytes (default 0.2), or when an allocation fails for lack of memory.
Inside ``with cuda.defer_cleanup():`` nothing is flushed.

Run: ``python examples/deferred_deallocation.py``.
"""
import numpy as np

import cujit as cuda


def main():
    ctx = cuda.current_context()
    queue = ctx.memory_manager.deallocations
    queue.clear()
    for i in range(1, 13):
        a = cuda.device_array(1024, dtype=np.float32)
        del a                                    # last reference gone: the free is queued
        print(f"dropped array {i:2d}: {len(queue)} frees pending")

    with cuda.defer_cleanup():                   # e.g. around a latency-critical section
        for i in range(25):
            a = cuda.device_array(1024, dtype=np.float32)
            del a
        print(f"inside defer_cleanup: {len(queue)} frees pending (no flush)")
    print(f"after defer_cleanup: {len(queue)} frees pending")
    print(ctx.memory_manager.get_stats())


if __name__ == "__main__":
    main()
