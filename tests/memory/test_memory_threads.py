"""Allocation and deferred frees from several threads at once."""
import threading
import time

import numpy as np

import cujit
from cujit.driver import get_driver


def test_concurrent_alloc_free_returns_all_memory(ctx):
    drv = get_driver()
    q = ctx.memory_manager.deallocations
    q.clear()
    failed0 = q.failed_count
    free0 = drv.mem_get_info()[0]
    errors = []
    barrier = threading.Barrier(4)

    def worker(k):
        try:
            c = cujit.current_context()
            barrier.wait()
            held = []
            buf = np.full(4096, k, np.uint8)
            out = np.empty(4096, np.uint8)
            for i in range(300):
                p = c.memalloc(4096)
                drv.memcpy_htod(p.device_pointer_value, buf.ctypes.data, 4096)
                drv.memcpy_dtoh(out.ctypes.data, p.device_pointer_value, 4096)
                assert out[0] == k and out[-1] == k
                held.append(p)
                if i % 3 == 0:
                    held.pop(0)
            held.clear()
        except Exception as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert q.failed_count == failed0
    q.clear()
    assert len(q) == 0
    if drv.is_simulator:       # on a GPU other processes may change the free figure
        assert drv.mem_get_info()[0] == free0


def test_copies_racing_with_frees_in_another_thread(ctx):
    """Regression: the simulator's address lookup raced with frees (KeyError in copies)."""
    import sys
    drv = get_driver()
    stable = ctx.memalloc(4096)
    stable.memset(6)
    buf = np.zeros(4096, np.uint8)
    stop = threading.Event()
    errors = []

    def churn():
        c = cujit.current_context()
        while not stop.is_set():
            ptrs = [c.memalloc(256) for _ in range(20)]
            del ptrs

    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)
    t = threading.Thread(target=churn)
    t.start()
    try:
        for _ in range(20000):
            drv.memcpy_dtoh(buf.ctypes.data, stable.device_pointer_value, 4096)
    except Exception as exc:
        errors.append(exc)
    finally:
        stop.set()
        t.join()
        sys.setswitchinterval(old)
    assert errors == [] and (buf == 6).all()


def test_queue_byte_count_exact_while_threads_append_and_flush():
    """``nbytes`` equals the bytes of the entries queued, while appends in three threads race
    with flushes in this one (a flush's recount raced with appends and drifted)."""
    import sys
    from cujit.config import config
    from cujit.memory.deallocations import PendingDeallocs
    config.CUDA_DEALLOCS_COUNT = 1 << 30        # only this thread flushes
    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        q = PendingDeallocs(None, 1 << 40)
        stop = threading.Event()

        def appender():
            while not stop.is_set():
                q.add_item(lambda h: None, 1, 8)

        threads = [threading.Thread(target=appender) for _ in range(3)]
        for t in threads:
            t.start()
        try:
            # bounded by time, not by count: how many interleavings a count gives depends
            # on the machine (nothing about the time is asserted)
            end = time.monotonic() + 1.5
            while time.monotonic() < end:
                q.clear()
        finally:
            stop.set()
            for t in threads:
                t.join()
        assert q.nbytes == 8 * len(q)
        q.clear()
        assert (len(q), q.nbytes) == (0, 0)
    finally:
        sys.setswitchinterval(old)


def test_failed_free_leaves_exact_byte_count():
    """A free that raises ends the flush; the bytes still queued are counted exactly."""
    import warnings
    from cujit.memory.deallocations import PendingDeallocs, DeallocationWarning
    q = PendingDeallocs(None, 1 << 40)

    def bad(h):
        raise RuntimeError("driver said no")

    with q.disable():
        q.add_item(lambda h: None, 1, 100)
        q.add_item(bad, 2, 30)
        q.add_item(lambda h: None, 3, 7)
    assert q.nbytes == 137
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeallocationWarning)
        q.clear()
    assert (len(q), q.nbytes) == (1, 7)
