"""benchmarks/sim_suite.py finds numba-cuda's interpreter only where it is told to."""
import importlib.util
import json
import os

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.fixture
def sim_suite(monkeypatch):
    monkeypatch.delenv("CUJIT_BENCH_PEERS_PYTHON", raising=False)
    spec = importlib.util.spec_from_file_location(
        "cujit_sim_suite_peers", os.path.join(ROOT, "benchmarks", "sim_suite.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _peers_given(sim_suite, monkeypatch, argv):
    seen = []
    monkeypatch.setattr(sim_suite, "drive", lambda kernels, peers, *rest: seen.append(peers))
    sim_suite.main(argv)
    return seen[0]


def test_peers_interpreter_comes_from_the_option_or_the_environment(sim_suite, monkeypatch):
    assert _peers_given(sim_suite, monkeypatch, []) is None
    monkeypatch.setenv("CUJIT_BENCH_PEERS_PYTHON", "/opt/peers/bin/python")
    assert _peers_given(sim_suite, monkeypatch, []) == "/opt/peers/bin/python"
    assert _peers_given(sim_suite, monkeypatch, ["--peers-python", "/x/python"]) == "/x/python"


def test_without_a_peers_interpreter_the_numba_side_says_how_to_name_one(sim_suite, monkeypatch,
                                                                        capsys):
    calls = []

    def child(exe, args):
        calls.append(exe)
        return {"side": "cujit", "seconds": 1.0, "cpu_seconds": 1.0}
    monkeypatch.setattr(sim_suite, "_child", child)
    sim_suite.drive(["matmul"], None, 1, 1)
    lines = [json.loads(ln) for ln in capsys.readouterr().out.splitlines()]
    numba = next(r for r in lines if r.get("side") == "numba")
    assert "--peers-python" in numba["error"] and "CUJIT_BENCH_PEERS_PYTHON" in numba["error"]
    assert len(calls) == 2                  # cujit with checks on and off; no numba child
    assert lines[-1]["speedup_checks"] is None


def test_a_missing_peers_interpreter_is_named(sim_suite, monkeypatch, capsys, tmp_path):
    monkeypatch.setattr(sim_suite, "_child", lambda exe, args: {"side": "cujit"})
    sim_suite.drive(["matmul"], str(tmp_path / "nope"), 1, 1)
    numba = [json.loads(ln) for ln in capsys.readouterr().out.splitlines()][2]
    assert numba["error"] == f"no numba-cuda interpreter at {tmp_path / 'nope'}"
