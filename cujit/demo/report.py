"""The closing memory report: statistics of the active memory manager.

The built-in managers keep statistics (bytes in use, peak, reserved, allocations, pending
frees, flushes); an external (EMM) plugin may keep none, in which case the report falls back
to what every manager has: ``get_memory_info()`` and the pending queue's length.
"""
__all__ = ["memory_report", "format_report"]

# Names a manager's statistics may use for each reported figure, first match wins: cujit's
# ``get_stats()`` (MemoryStats) first, then spellings other EMM plugins use.
_FIELDS = {
    "in_use": ("bytes_in_use", "in_use", "current"),
    "peak": ("peak_bytes_in_use", "peak", "peak_bytes"),
    "reserved": ("reserved_bytes", "reserved"),
    "allocations": ("alloc_count", "allocations", "num_allocations"),
    "live_allocations": ("live_allocations",),
    "pending": ("pending_frees", "pending"),
    "pending_bytes": ("pending_bytes",),
    "flushes": ("flushes", "flush_count"),
    "host_in_use": ("host_bytes_in_use",),
}


def _raw_stats(mm):
    for name in ("get_stats", "get_statistics", "statistics", "stats"):
        obj = getattr(mm, name, None)
        if obj is None:
            continue
        if callable(obj):
            obj = obj()
        if isinstance(obj, dict):
            return obj
        if hasattr(obj, "_asdict"):
            return obj._asdict()
        if hasattr(obj, "__dict__") or hasattr(obj, "__slots__"):
            keys = [k for k in dir(obj) if not k.startswith("_")]
            return {k: getattr(obj, k) for k in keys if not callable(getattr(obj, k))}
    return None


def memory_report(cuda):
    """``{'manager': class name, 'stats_source': 'manager'|'fallback', 'in_use': bytes,
    'peak': bytes|None, 'allocations': int|None, 'flushes': int|None, 'pending': int, ...}``
    for the current context of module ``cuda``."""
    ctx = cuda.current_context()
    mm = ctx.memory_manager
    out = {"manager": type(mm).__name__}
    raw = _raw_stats(mm)
    if raw:
        out["stats_source"] = "manager"
        for key, names in _FIELDS.items():
            out[key] = next((raw[n] for n in names if n in raw), None)
    else:
        out["stats_source"] = "fallback"
        out.update(dict.fromkeys(_FIELDS))
    free, total = ctx.get_memory_info()[:2]
    out["device_used"] = int(total) - int(free)
    out["device_total"] = int(total)
    if out.get("in_use") is None:
        out["in_use"] = out["device_used"]
    q = getattr(mm, "deallocations", None)
    if out.get("pending") is None and q is not None:
        out["pending"] = len(q)
    return out


def _b(n):
    if n is None:
        return "n/a"
    n = float(n)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(n) < 1024 or unit == "TiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024


def format_report(rep):
    """One-line summary of :func:`memory_report`'s dict."""
    def v(k):
        x = rep.get(k)
        return "n/a" if x is None else str(x)
    text = (f"memory report ({rep['manager']}): in use {_b(rep.get('in_use'))}, "
            f"peak {_b(rep.get('peak'))}, allocations {v('allocations')}, "
            f"flushes {v('flushes')}, pending frees {v('pending')}")
    if rep.get("reserved") is not None:
        text += f", reserved {_b(rep['reserved'])}"
    if rep.get("stats_source") == "fallback":
        text += " (manager keeps no statistics: device-wide figures)"
    return text
