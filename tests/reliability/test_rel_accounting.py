"""Long runs (issue 16): allocate/free cycles and launches give every byte back, host
memory does not grow, and threads hammering the same context stay correct.

CI runs short versions (2,000 cycles; 8 threads x 100 iterations); ``slow`` runs the
100,000-cycle and 8 x 1,000 versions the issue asks for.  Runs on whichever backend the
process has: on the H200 these are the device-memory figures of docs/reliability.md."""
import gc
import os
import threading
from pathlib import Path

import numpy as np
import pytest

import cujit
from cujit.arrays.hostmem import clear_pinned_cache

# device-wide free memory is compared: no other process may use the GPU meanwhile
pytestmark = pytest.mark.serial

MiB = 1 << 20


def _rss():
    """Resident set size of this process in bytes (Linux), or None."""
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError):
        return None


def _settle(ctx):
    gc.collect()
    ctx.memory_manager.deallocations.clear()
    ctx.deallocations.clear()
    ctx.synchronize()


def _write_kernel(tmp_path):
    # kernels need a source file; tmp_path keeps the suite's tree clean
    path = Path(tmp_path) / "rel_accounting_kernel.py"
    path.write_text("import cujit as cuda\n\n@cuda.jit\ndef bump(x):\n"
                    "    i = cuda.grid(1)\n    if i < x.size:\n        x[i] += 1\n")
    import importlib.util
    spec = importlib.util.spec_from_file_location("rel_accounting_kernel", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.bump


def _alloc_cycles(ctx, n):
    _settle(ctx)
    free0 = ctx.get_memory_info().free
    stats0 = ctx.memory_manager.get_stats()
    host = np.arange(256, dtype=np.float32)
    rss0 = None
    for i in range(n):
        d = cujit.to_device(host)
        e = cujit.device_array((16, 16), np.float64)
        e[0, 0] = i
        p = cujit.pinned_array(64)
        m = cujit.mapped_array(32, np.int32)
        m[:] = i
        del d, e, p, m
        if i == min(n - 1, 200):
            gc.collect()
            rss0 = _rss()       # after warm-up: caches, interned objects, first pools
    _settle(ctx)
    clear_pinned_cache()
    _settle(ctx)
    stats = ctx.memory_manager.get_stats()
    assert stats.live_allocations == stats0.live_allocations
    assert stats.bytes_in_use == stats0.bytes_in_use
    assert stats.pending_frees == 0
    assert stats.host_bytes_in_use <= stats0.host_bytes_in_use      # pinned memory given back
    free = ctx.get_memory_info().free
    assert abs(free - free0) <= MiB, (free0, free)
    rss = _rss()
    if rss0 is not None and rss is not None:
        assert rss - rss0 < 64 * MiB, f"host RSS grew by {(rss - rss0) / MiB:.1f} MiB"


def _launch_cycles(ctx, kernel, n):
    a = cujit.to_device(np.zeros(64, np.float32))
    _settle(ctx)
    free0 = ctx.get_memory_info().free
    stats0 = ctx.memory_manager.get_stats()
    for _ in range(n):
        kernel[1, 64](a)
    ctx.synchronize()
    _settle(ctx)
    np.testing.assert_array_equal(a.copy_to_host(), np.full(64, n, np.float32))
    assert ctx.memory_manager.get_stats().live_allocations == stats0.live_allocations
    assert abs(ctx.get_memory_info().free - free0) <= MiB


def _threads(ctx, n_threads, iters):
    errors = []
    start = threading.Barrier(n_threads)

    def work(tid):
        try:
            start.wait()
            s = cujit.stream()
            for i in range(iters):
                host = np.full(128, tid * 100000 + i, np.int64)
                d = cujit.to_device(host, stream=s)
                d[1:3] = -1
                out = d.copy_to_host(stream=s)
                s.synchronize()
                want = host.copy()
                want[1:3] = -1
                if not np.array_equal(out, want):
                    errors.append((tid, i, "wrong values"))
                    return
        except Exception as exc:    # noqa: BLE001 - report any failure of any thread
            errors.append((tid, repr(exc)))

    _settle(ctx)
    live0 = ctx.memory_manager.get_stats().live_allocations
    threads = [threading.Thread(target=work, args=(t,)) for t in range(n_threads)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=600)
    assert not any(t.is_alive() for t in threads), "a thread hung"
    assert errors == []
    _settle(ctx)
    assert ctx.memory_manager.get_stats().live_allocations == live0


def test_alloc_free_cycles_give_everything_back(ctx):
    _alloc_cycles(ctx, 2000)


def test_launch_cycles_leak_nothing(ctx, tmp_path):
    _launch_cycles(ctx, _write_kernel(tmp_path), 200)


def test_threads_share_the_context(ctx):
    _threads(ctx, 8, 100)


@pytest.mark.slow
def test_alloc_free_cycles_100k(ctx):
    _alloc_cycles(ctx, 100_000)


@pytest.mark.slow
def test_launch_cycles_100k(ctx, tmp_path, on_gpu):
    # the simulator runs every thread in Python (~10 ms a launch): 5,000 there
    _launch_cycles(ctx, _write_kernel(tmp_path), 100_000 if on_gpu else 5_000)


@pytest.mark.slow
def test_threads_8_by_1000(ctx):
    _threads(ctx, 8, 1000)
