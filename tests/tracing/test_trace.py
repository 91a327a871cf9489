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


def _hook_points():
    from cujit.memory import events as mem
    from cujit.runtime import events as rt
    from cujit.arrays.transfer import copied
    from cujit.dispatch.launcher import launched
    return [mem.allocated, mem.freed, mem.free_queued, mem.flushed, copied, launched,
            rt.synchronized, rt.graph_launched]


def test_trace_subscribes_while_recording_and_leaves_no_listener(tmp_path):
    from cujit.runtime.devices import Context
    from cujit.memory.deallocations import PendingDeallocs
    from cujit.arrays import devicearray
    from cujit.runtime.streams import Stream
    before = (Context.__dict__["memalloc"], PendingDeallocs.__dict__["add_item"],
              devicearray.copy_htod, Stream.__dict__["synchronize"],
              cujit.current_context().memalloc)
    assert all(p.listeners == () for p in _hook_points())
    with pytest.raises(ZeroDivisionError):
        with cujit.trace(tmp_path / "t.json"):
            assert all(len(p.listeners) == 1 for p in _hook_points())
            # nothing is replaced while recording either
            assert (Context.__dict__["memalloc"], PendingDeallocs.__dict__["add_item"],
                    devicearray.copy_htod, Stream.__dict__["synchronize"],
                    cujit.current_context().memalloc) == before
            cujit.to_device(np.ones(3))
            1 / 0
    assert all(p.listeners == () for p in _hook_points())
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


# -- completeness: every allocation, copy and launch path ------------------------------------
def test_trace_records_pool_allocations_made_with_a_stream(tmp_path, pool):
    s = cujit.stream()
    with cujit.trace(tmp_path / "pool.json"):
        a = cujit.device_array(1000, stream=s)
        b = cujit.to_device(np.ones(1000), stream=s)
        c = cujit.device_array(10)                      # and one without a stream
        s.synchronize()
    allocs = _by_name(_load(tmp_path / "pool.json"), "alloc device")
    assert sorted(x["args"]["bytes"] for x in allocs) == [80, 8000, 8000]
    streams = [x["args"].get("stream") for x in allocs]
    assert streams.count(hex(s.handle)) == 2
    del a, b, c


def test_trace_records_launches_with_extensions_and_graph_replays(tmp_path):
    class Doubler:
        """An ``extensions=`` handler: passes arrays as they are, after a callback."""
        def prepare_args(self, ty, val, **kwargs):
            return ty, val

    ext = cujit.jit(extensions=[Doubler()])(add_one.py_func)
    d = cujit.to_device(np.zeros(64))
    s = cujit.stream()
    with cujit.trace(tmp_path / "launch.json"):
        ext[2, 32](d)                       # extensions=
        add_one.forall(64)(d)               # forall
        add_one[2, 32](d)                   # slow path the first time ...
        add_one[2, 32](d)                   # ... then the fast path
        grid_sync_add[2, 32](d)             # cooperative (grid.sync)
        with cujit.graph(s) as g:
            add_one[2, 32, s](d)
        g.launch()
        s.synchronize()
    ev = _load(tmp_path / "launch.json")
    launches = [x["name"] for x in _by_name(ev, "launch")]
    assert launches == ["launch add_one"] * 4 + ["launch grid_sync_add",
                                                 "launch add_one (captured)"]
    (replay,) = _by_name(ev, "graph launch")
    assert replay["args"]["stream"] == hex(s.handle) and replay["args"]["nodes"] >= 1
    assert (d.copy_to_host() == 6).all()


@cujit.jit
def grid_sync_add(a):
    i = cujit.grid(1)
    g = cujit.cg.this_grid()
    g.sync()
    if i < a.size:
        a[i] += 1


def test_trace_records_device_to_device_copies(tmp_path):
    a = cujit.to_device(np.arange(100.0))
    b = cujit.device_array(100)
    with cujit.trace(tmp_path / "dtod.json"):
        b.copy_to_device(a)                 # contiguous device -> device
        b[::2] = a[1::2]                    # strided device -> device
        b[:10] = 7.0                        # a broadcast: HtoD (memset pattern or staging)
    ev = _load(tmp_path / "dtod.json")
    dtod = _by_name(ev, "DtoD")
    assert [x["args"]["bytes"] for x in dtod][:2] == [800, 400]
    assert _by_name(ev, "HtoD")


@pytest.mark.sim
def test_trace_records_peer_copies(tmp_path, two_sim_devices):
    with cujit.gpus[0]:
        src = cujit.to_device(np.arange(100.0))
    with cujit.gpus[1]:
        dst = cujit.device_array(100)
    with cujit.trace(tmp_path / "peer.json"):
        dst.copy_to_device(src)
    (peer,) = _by_name(_load(tmp_path / "peer.json"), "PtoP")
    assert peer["args"]["bytes"] == 800
    assert (dst.copy_to_host() == np.arange(100.0)).all()


def test_trace_records_element_and_record_copies(tmp_path):
    a = cujit.to_device(np.arange(4.0))
    rec_t = np.dtype([("x", np.int32), ("y", np.float64)])
    r = cujit.to_device(np.zeros(2, rec_t))
    with cujit.trace(tmp_path / "elem.json"):
        v = a[2]
        a[1] = 5.0
        r[0]["y"] = 2.5
        w = r[0]["y"]
    ev = _load(tmp_path / "elem.json")
    assert (v, w) == (2.0, 2.5)
    assert [x["args"]["bytes"] for x in _by_name(ev, "DtoH")] == [8, 8]
    assert [x["args"]["bytes"] for x in _by_name(ev, "HtoD")] == [8, 8]


# -- the file ----------------------------------------------------------------------------------
def test_trace_file_is_valid_json_when_plugin_stats_hold_numpy_values(tmp_path, ctx):
    from cujit.memory.managers import NumbaCUDAMemoryManager

    class NumpyStats(NumbaCUDAMemoryManager):
        def get_stats(self):
            st = super().get_stats()
            return st._replace(bytes_in_use=np.int64(st.bytes_in_use),
                               pending_bytes=np.float32(st.pending_bytes))

    mm = NumpyStats(context=ctx)
    saved = ctx.memory_manager
    ctx.memory_manager = mm
    try:
        with cujit.trace(tmp_path / "np.json") as t:
            x = cujit.to_device(np.ones(3))
            t.events.append({"name": "odd", "ph": "i", "ts": 0, "pid": 1, "tid": 1 << 40,
                             "args": {"n": np.uint8(3), "what": object()}})
    finally:
        ctx.memory_manager = saved
    ev = _load(tmp_path / "np.json")
    (counter,) = [e for e in ev if e["name"] == "device memory (bytes)"]
    assert counter["args"]["in use"] == 24
    (odd,) = [e for e in ev if e["name"] == "odd"]
    assert odd["args"]["n"] == 3 and odd["args"]["what"].startswith("<object object")
    del x


def test_trace_write_failure_leaves_the_old_file_whole(tmp_path):
    path = tmp_path / "old.json"
    path.write_text('{"traceEvents": []}')
    loop = []
    loop.append(loop)                       # json cannot write a circular list
    with pytest.raises(ValueError, match="Circular"):
        with cujit.trace(path) as t:
            t.events.append({"name": "x", "args": {"loop": loop}})
    assert path.read_text() == '{"traceEvents": []}'
    assert sorted(p.name for p in tmp_path.iterdir()) == ["old.json"]   # no temporary left


def test_trace_bad_path_warns_at_entry_and_keeps_the_body_exception(tmp_path):
    from cujit.tracing import TraceWarning
    bad = tmp_path / "missing" / "run.json"
    with pytest.warns(TraceWarning) as caught:
        with pytest.raises(KeyError, match="the body's"):
            with cujit.trace(bad):
                assert len(caught) == 1 and "does not exist" in str(caught[0].message)
                cujit.to_device(np.ones(3))
                raise KeyError("the body's")
    assert "written to" in str(caught[-1].message)
    spare = str(caught[-1].message).rsplit("written to ", 1)[1].split("'")[1]
    with open(spare) as f:
        assert len(_by_name(check_trace(json.load(f)), "HtoD")) == 1
    os.unlink(spare)
    assert not bad.parent.exists()


def test_trace_bad_path_without_a_body_error_raises_naming_the_spare_file(tmp_path):
    from cujit.tracing import TraceWarning
    with pytest.warns(TraceWarning, match="is a folder"):
        with pytest.raises(IsADirectoryError, match="written to") as exc:
            with cujit.trace(tmp_path):
                pass
    spare = str(exc.value).rsplit("written to ", 1)[1].split("'")[1]
    assert os.path.exists(spare)
    os.unlink(spare)
