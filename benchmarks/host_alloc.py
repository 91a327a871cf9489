"""Host-side cost of ``device_array(1024, np.float32)`` + drop without a GPU, for the default
manager and the pool manager (issue #27's allocation rows).

    PYTHONPATH=. python benchmarks/host_alloc.py [--reps N] [--rounds R] [--profile] [--json]

Two drivers: the simulated driver as it is (its ``mem_alloc``/``mem_free`` do real
bookkeeping: a NumPy buffer, a block table, retiring), and a driver double whose
``mem_alloc`` hands out addresses and whose ``mem_free`` does nothing, so that what is timed
is cujit's own Python per allocate + drop.  The simulated driver's own alloc + free pair is
timed alone too.  Medians of ``--rounds`` rounds of ``--reps`` calls, microseconds per
allocate + drop, in CPU time of the process (deferred frees included: each round's mean covers
its flushes).  The driver
double lives here, never in the package.  ``--profile`` prints cProfile's call counts per
allocate + drop on the double.
"""
import argparse
import cProfile
import itertools
import json
import os
import pstats
import sys
import time
import timeit

os.environ.setdefault("CUJIT_ENABLE_CUDASIM", "1")

import numpy as np      # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_common import median     # noqa: E402

import cujit            # noqa: E402
from cujit.memory.pool import PoolMemoryManager     # noqa: E402


class NullMemDriver:
    """``mem_alloc`` returns fresh 4 KiB-aligned addresses, ``mem_free`` does nothing; every
    other call is the real (simulated) driver's.  No ``retire``: the pending queue's hook for
    the simulator is skipped, as on a GPU."""

    retire = None

    def __init__(self, real):
        self._real = real
        self._next = itertools.count(1 << 40, 4096).__next__

    def __getattr__(self, name):
        return getattr(self._real, name)

    def mem_alloc(self, nbytes):
        return self._next()

    def mem_free(self, ptr):
        pass


def _manager(ctx, cls, null):
    mm = cls(context=ctx)
    if null:
        mm._drv = NullMemDriver(mm._drv)
    ctx.memory_manager = mm
    return mm


def _time(stmt, reps, rounds):
    # CPU time of this process: the machine this runs on is shared, and wall-clock rounds
    # there include time the process spent descheduled
    t = timeit.Timer(stmt, timer=time.process_time)
    t.timeit(reps)          # warm: the pool's cache, the queue
    return median([t.timeit(reps) / reps * 1e6 for _ in range(rounds)])


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=20000)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--profile", action="store_true")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args(argv)
    ctx = cujit.current_context()
    drv = ctx.memory_manager._drv
    f32 = np.float32
    da = cujit.device_array
    stmt = lambda: da(1024, f32)        # noqa: E731 - the result is dropped at once
    rows = {}

    def pair():
        drv.mem_free(drv.mem_alloc(4096))
    rows["simulated driver mem_alloc + mem_free alone"] = _time(pair, a.reps, a.rounds)
    for label, cls in (("default", cujit.NumbaCUDAMemoryManager),
                       ("pool", PoolMemoryManager)):
        for null in (False, True):
            _manager(ctx, cls, null)
            what = "driver double" if null else "simulated driver"
            rows[f"{label} manager, {what}"] = _time(stmt, a.reps, a.rounds)
            if null and a.profile:
                n = 10000
                pr = cProfile.Profile()
                pr.enable()
                for _ in range(n):
                    stmt()
                pr.disable()
                st = pstats.Stats(pr)
                calls = sum(v[1] for v in st.stats.values())
                frames = sum(v[1] for k, v in st.stats.items() if k[0] != "~")
                print(f"# {label} manager: {calls / n:.1f} calls per allocate + drop, "
                      f"{frames / n:.1f} of them Python functions (cProfile, the timed "
                      "lambda and the double's mem_alloc/mem_free included)")
                st.sort_stats("tottime").print_stats(14)
    ctx.memory_manager = cujit.NumbaCUDAMemoryManager(context=ctx)
    if a.json:
        print(json.dumps(rows, indent=1))
    else:
        for k, v in rows.items():
            print(f"{k:50s} {v:7.3f} us")


if __name__ == "__main__":
    main()
