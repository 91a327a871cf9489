"""Helpers shared by the benchmark sides: medians, timing loops, the JSON line each side prints.

Every side script prints exactly one JSON object on its last stdout line:
``{"side": str, "versions": {...}, "device": str, "figures": {key: number}, "errors":
{key: message}, "sizes": {key: text}, "skipped": reason-or-null}``; ``sizes`` holds the
problem size each sized figure ran at (``2^10 f32``, ``1 MiB``), which the table's label shows.  Figures are medians: microseconds for
latencies and kernel times, GB/s (10^9 bytes per second) for bandwidths, seconds for
``first_launch_s``.  A figure that fails is left out and its error recorded, so one broken
measurement never loses the others.
"""
import json
import os
import sys
import time
import traceback

__all__ = ["median", "host_us", "Side", "MiB", "count_text", "bytes_text"]

MiB = 1 << 20


def count_text(n):
    """``n`` (int) as the table writes a size: ``2^26`` for a power of two, ``10^6`` for a
    power of ten from 1000, else the digits."""
    n = int(n)
    if n > 0 and n & (n - 1) == 0:
        return f"2^{n.bit_length() - 1}"
    k = len(str(n)) - 1
    if n >= 1000 and n == 10 ** k:
        return f"10^{k}"
    return str(n)


def bytes_text(n):
    """``n`` bytes (int) as ``256 MiB``, ``64 KiB`` or ``100 B``."""
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= size and n % size == 0:
            return f"{n // size} {unit}"
    return f"{n} B"


def median(values):
    """Median of a non-empty sequence of numbers."""
    v = sorted(values)
    n = len(v)
    return v[n // 2] if n % 2 else 0.5 * (v[n // 2 - 1] + v[n // 2])


def host_us(fn, reps, warmup=20, every=None, between=None):
    """Median host-side microseconds of ``fn()`` (``time.perf_counter_ns`` around each call).

    ``between()`` runs untimed after every ``every`` calls (e.g. a synchronize so that queued
    launches never back up and stall a launch)."""
    for _ in range(warmup):
        fn()
    if between is not None:
        between()
    clock = time.perf_counter_ns
    samples = []
    append = samples.append
    for i in range(reps):
        t0 = clock()
        fn()
        append(clock() - t0)
        if every and between is not None and (i + 1) % every == 0:
            between()
    if between is not None:
        between()
    return median(samples) / 1e3


class Side:
    """Collects one side's figures; ``measure(key, fn)`` stores ``fn()`` or its error."""

    def __init__(self, name, quick=False):
        # On cujit's simulator the figures mean nothing: a smoke run with tiny sizes only
        # checks that every measurement works end to end.
        self.smoke = os.environ.get("CUJIT_ENABLE_CUDASIM", "0") not in ("", "0")
        self.doc = {"side": name, "versions": {}, "device": None, "figures": {},
                    "errors": {}, "sizes": {}, "skipped": None, "quick": quick,
                    "smoke": self.smoke}
        self.quick = quick

    def reps(self, full, quick, smoke=None):
        """Repetitions or a size: ``smoke`` on the simulator (default: min(quick, 5)),
        ``quick`` in ``--quick`` runs, else ``full``."""
        if self.smoke:
            return min(quick, 5) if smoke is None else smoke
        return quick if self.quick else full

    def measure(self, key, fn, size=None):
        """Store ``fn()`` as figure ``key`` (or its error); ``size`` (str): the problem size it
        runs at, as the table's label should show it (smoke and quick runs are smaller)."""
        if size is not None:
            self.doc["sizes"][key] = size
        try:
            value = fn()
        except Exception as exc:
            self.doc["errors"][key] = f"{type(exc).__name__}: {exc}"
            if "--debug" in sys.argv:
                traceback.print_exc()
            return None
        if value is not None:
            self.doc["figures"][key] = float(value)
        return value

    def skip(self, reason):
        """Mark the whole side as not run (e.g. its library is not importable) and emit."""
        self.doc["skipped"] = reason
        self.emit()

    def emit(self):
        print(json.dumps(self.doc), flush=True)
