"""A checker for the Chrome trace-event format (the JSON Perfetto and chrome://tracing load):
the subset cujit writes (phases M, X, i, C), checked field by field."""
import math

_META = {"process_name", "thread_name", "thread_sort_index", "process_sort_index"}


def _num(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def check_trace(doc):
    """Raise AssertionError naming the first event that breaks the format; return the events."""
    assert isinstance(doc, dict) and isinstance(doc.get("traceEvents"), list), \
        "top level must be an object with a traceEvents list"
    assert doc.get("displayTimeUnit", "ms") in ("ms", "ns")
    lanes_named = set()
    spans = {}
    for k, e in enumerate(doc["traceEvents"]):
        where = f"event {k} {e!r}"
        assert isinstance(e, dict), where
        assert isinstance(e.get("name"), str) and e["name"], where
        assert isinstance(e.get("pid"), int) and isinstance(e.get("tid"), int), where
        ph = e.get("ph")
        assert ph in ("M", "X", "i", "C"), where
        if "args" in e:
            assert isinstance(e["args"], dict), where
        if ph == "M":
            assert e["name"] in _META, where
            if e["name"] == "thread_name":
                assert isinstance(e["args"]["name"], str), where
                lanes_named.add((e["pid"], e["tid"]))
            continue
        assert _num(e.get("ts")) and e["ts"] >= 0, where
        if ph == "X":
            assert _num(e.get("dur")) and e["dur"] >= 0, where
            spans.setdefault((e["pid"], e["tid"]), []).append((e["ts"], e["ts"] + e["dur"], k))
        elif ph == "i":
            assert e.get("s", "t") in ("g", "p", "t"), where
        elif ph == "C":
            assert e["args"] and all(_num(v) for v in e["args"].values()), where
    for lane, items in spans.items():
        assert lane in lanes_named, f"lane {lane} has spans but no thread_name"
        # complete events on one lane must nest (a stack), as the viewers draw them
        stack = []
        for start, end, k in sorted(items, key=lambda t: (t[0], -t[1])):
            while stack and stack[-1] <= start:
                stack.pop()
            assert not stack or end <= stack[-1] + 1e-3, \
                f"span {k} on lane {lane} overlaps its enclosing span without nesting"
            stack.append(end)
    return doc["traceEvents"]
