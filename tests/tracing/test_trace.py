"""``cujit.trace`` (R-LIB-5): a Chrome trace-event timeline of memory and work, one lane per
stream; nothing of it stays installed after the block."""
import gc
import json
import os
import sys

import numpy as np
import pytest

import cujit

sys.path.insert(0, os.path.dirname(__file__))
from trace_format import check_trace  # noqa: E402


@cujit.jit
def add_one(a):
    i = cujit.grid(1)
    if i < a.size:
        a[i] += 1


def _load(path):
    with open(path) as f:
        return check_trace(json.load(f))


def _by_name(events, prefix):
    return [e for e in events if e["name"].startswith(prefix)]


def test_trace_records_memory_transfers_launches_and_syncs(tmp_path, ctx):
    path = tmp_path / "run.json"
    with cujit.trace(path) as t:
        s1, s2 = cujit.stream(), cujit.stream()
        d = cujit.to_device(np.arange(100.0), stream=s1)
        add_one[4, 32, s1](d)
        h = d.copy_to_host(stream=s1)
        e = cujit.to_device(np.zeros(50, np.float32), stream=s2)
        s1.synchronize()
        s2.synchronize()
        cujit.synchronize()
    assert (h == np.arange(100.0) + 1).all()
    ev = _load(path)
    assert ev == t.events
    htod = _by_name(ev, "HtoD")
    assert sorted(x["args"]["bytes"] for x in htod) == [200, 800]
    (dtoh,) = _by_name(ev, "DtoH")
    assert dtoh["args"] == {"bytes": 800, "direction": "DtoH", "stream": hex(s1.handle)}
    (launch,) = _by_name(ev, "launch add_one")
    assert launch["args"]["griddim"] == [4, 1, 1] and launch["args"]["blockdim"] == [32, 1, 1]
    # one lane per stream: everything on s1 shares a lane, s2 has its own
    lane1 = {x["tid"] for x in htod + [dtoh, launch] if x["args"]["stream"] == hex(s1.handle)}
    lane2 = {x["tid"] for x in htod if x["args"]["stream"] == hex(s2.handle)}
    assert len(lane1) == 1 and len(lane2) == 1 and lane1 != lane2
    names = {x["tid"]: x["args"]["name"] for x in ev if x["name"] == "thread_name"}
    assert names[lane1.pop()] == f"stream {s1.handle:#x}"
    syncs = _by_name(ev, "synchronize")
    assert [x["name"] for x in syncs] == ["synchronize stream"] * 2 + ["synchronize context"]
    allocs = _by_name(ev, "alloc device")
    assert sorted(x["args"]["bytes"] for x in allocs) == [200, 800]
    del d, e


def test_trace_flushes_carry_their_reason(tmp_path, ctx, monkeypatch):
    monkeypatch.setenv("CUJIT_CUDA_MAX_PENDING_DEALLOCS_COUNT", "3")
    path = tmp_path / "frees.json"
    with cujit.trace(path):
        for _ in range(4):                      # the 4th queued free is over the count limit
            x = cujit.device_array(64, np.uint8)
            del x
        gc.collect()
        with cujit.defer_cleanup():
            for _ in range(5):
                x = cujit.device_array(64, np.uint8)
                del x
            gc.collect()
        x = cujit.device_array(64, np.uint8)
        del x
        gc.collect()
        ctx.memory_manager.deallocations.clear()
    ev = _load(path)
    queued = _by_name(ev, "free queued")
    assert len(queued) == 10 and all(q["args"]["bytes"] == 64 for q in queued)
    flushes = [(f["args"]["reason"], f["args"]["freed"], f["args"]["bytes"])
               for f in _by_name(ev, "flush pending frees")]
    assert flushes == [("count limit", 4, 256), ("end of defer_cleanup", 5, 320),
                       ("clear()", 1, 64)]
    counters = _by_name(ev, "pending frees")
    assert counters[-1]["args"] == {"entries": 0, "bytes": 0}


def test_trace_flush_for_out_of_memory(tmp_path, ctx, monkeypatch):
    monkeypatch.setenv("CUJIT_CUDA_MAX_PENDING_DEALLOCS_COUNT", "1000")
    monkeypatch.setenv("CUJIT_CUDA_MAX_PENDING_DEALLOCS_RATIO", "1.0")
    free, total = ctx.get_memory_info()
    path = tmp_path / "oom.json"
    with cujit.trace(path):
        big = cujit.device_array(int(free * 0.6), np.uint8)
        del big
        gc.collect()
        again = cujit.device_array(int(free * 0.6), np.uint8)   # only fits after a flush
    del again
    reasons = [f["args"]["reason"] for f in _by_name(_load(path), "flush pending frees")]
    assert reasons == ["out of memory"]


def test_trace_leaves_nothing_installed(tmp_path):
    from cujit.devices import Context
    from cujit.memory.deallocations import PendingDeallocs
    from cujit.arrays import devicearray
    from cujit.compiler.dispatcher import _Configured
    from cujit.streams import Stream
    before = (Context.__dict__["memalloc"], PendingDeallocs.__dict__["add_item"],
              devicearray.copy_htod, _Configured.__dict__["__call__"],
              Stream.__dict__["synchronize"], cujit.current_context().memalloc)
    with pytest.raises(ZeroDivisionError):
        with cujit.trace(tmp_path / "t.json"):
            cujit.to_device(np.ones(3))
            1 / 0
    after = (Context.__dict__["memalloc"], PendingDeallocs.__dict__["add_item"],
             devicearray.copy_htod, _Configured.__dict__["__call__"],
             Stream.__dict__["synchronize"], cujit.current_context().memalloc)
    assert after == before                     # tracing off runs exactly the untraced code
    assert len(_by_name(_load(tmp_path / "t.json"), "HtoD")) == 1   # written on exception too
    from cujit import tracing
    assert tracing.ACTIVE is None


def test_trace_errors(tmp_path):
    with pytest.raises(TypeError, match="str or path-like"):
        cujit.trace(3)
    with cujit.trace(tmp_path / "a.json"):
        with pytest.raises(RuntimeError, match="already recording"):
            with cujit.trace(tmp_path / "b.json"):
                pass
    assert not (tmp_path / "b.json").exists()


def test_check_trace_rejects_bad_events():
    ok = {"name": "x", "ph": "X", "ts": 0, "dur": 1, "pid": 1, "tid": 1}
    meta = {"name": "thread_name", "ph": "M", "pid": 1, "tid": 1, "args": {"name": "l"}}
    check_trace({"traceEvents": [meta, ok]})
    for bad in ({**ok, "dur": -1}, {**ok, "ph": "Q"}, {**ok, "tid": "a"}, {**ok, "ts": None}):
        with pytest.raises(AssertionError):
            check_trace({"traceEvents": [meta, bad]})
    with pytest.raises(AssertionError, match="no thread_name"):
        check_trace({"traceEvents": [ok]})
    with pytest.raises(AssertionError, match="overlaps"):
        check_trace({"traceEvents": [meta, ok, {**ok, "ts": 0.5, "dur": 1}]})
