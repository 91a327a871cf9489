"""``python -m cujit demo --trace run.json`` writes a timeline Perfetto opens (the JSON is
checked against the trace-event format), with the demo's transfers, launches and flushes."""
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(__file__)), "tracing"))
from trace_format import check_trace  # noqa: E402


def test_demo_trace_is_a_valid_trace_event_file(run_cli, tmp_path):
    path = tmp_path / "run.json"
    p = run_cli("demo", "--quick", "--sim", "--only", "pipeline", "deferred",
                "--trace", str(path))
    assert p.returncode == 0, p.stdout + p.stderr
    assert f"trace written to {path}" in p.stdout
    with open(path) as f:
        events = check_trace(json.load(f))
    names = {e["name"].split()[0] for e in events}
    assert {"alloc", "free", "flush", "HtoD", "DtoH", "launch", "synchronize"} <= names
    reasons = {e["args"]["reason"] for e in events if e["name"] == "flush pending frees"}
    assert {"count limit", "byte limit", "end of defer_cleanup"} <= reasons
    stream_lanes = {e["args"]["name"] for e in events if e["name"] == "thread_name"
                    and e["args"]["name"].startswith("stream 0x")}
    assert len(stream_lanes) >= 4                 # the pipeline's four streams, one lane each
