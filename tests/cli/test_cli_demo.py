"""``python -m cujit demo``: the runner, the report and (once every layer has landed) the
whole demo on the simulator at ``--quick --sim`` sizes."""
import json
import os
import types

import numpy as np
import pytest

from cujit.demo import TASKS
from cujit.demo._common import Result, sizes_for
from cujit.demo.report import memory_report, format_report
from cujit.demo.runner import run_demo, format_row
from cujit.demo.shared_alias import ALIAS_BITS

DEMO_NAMES = ("jit", "to_device", "device_array", "pinned_array", "stream", "event",
              "current_context", "defer_cleanup", "shared", "const", "syncthreads")


def test_alias_bits_is_float32_pi_as_int32():
    assert ALIAS_BITS == 1078523331


@pytest.mark.parametrize("sim", [True, False])
@pytest.mark.parametrize("quick", [True, False])
def test_size_presets(sim, quick):
    s = sizes_for(sim, quick)
    assert s.label == ("sim" if sim else "gpu") + ("-quick" if quick else "")
    assert s.pipeline_bytes % s.pipeline_chunk_bytes == 0
    if not sim and not quick:            # the sizes
        assert (s.matmul_n, s.filter_n, s.pipeline_bytes) == (4096, 1 << 26, 1 << 30)
    if sim:                              # small enough for two CPU cores in under a minute
        assert s.matmul_n <= 64 and s.filter_n <= 1 << 12 and s.pipeline_bytes <= 1 << 20


def test_format_row_and_result_dict():
    r = Result("tiled matmul", "32x32 float32", seconds=0.0125, rate=5.2, rate_unit="GFLOP/s",
               passed=True)
    row = format_row(2, r)
    assert row.startswith(" 2  tiled matmul") and "12.500 ms" in row and row.endswith("PASS")
    assert "5.2 GFLOP/s" in row
    assert r.as_dict()["rate_unit"] == "GFLOP/s"
    assert format_row(1, Result("x", "-")).endswith("FAIL")


class _BrokenCuda:
    """A CUDA module whose every use fails: the runner must report, not crash."""

    def __getattr__(self, name):
        raise AttributeError(f"broken has no {name}")


def test_runner_reports_a_failing_task_and_goes_on():
    lines = []
    out = run_demo(_BrokenCuda(), sizes_for(True, True), tasks=("shared_alias", "matmul"),
                   out=lines.append)
    assert out["passed"] is False
    assert [t["passed"] for t in out["tasks"]] == [False, False]
    assert "AttributeError" in out["tasks"][0]["detail"]
    assert out["memory"] is None
    assert lines[-1].startswith("0/2 checks passed")
    assert any(line.startswith("memory report unavailable") for line in lines)


class _Stats:
    def get_stats(self):
        return types.SimpleNamespace(bytes_in_use=3 << 20, peak_bytes_in_use=5 << 20,
                                     reserved_bytes=4 << 20, alloc_count=7, pending_frees=2,
                                     flushes=1, live_allocations=3, pending_bytes=1 << 20,
                                     host_bytes_in_use=0)


def _fake_cuda(manager):
    ctx = types.SimpleNamespace(memory_manager=manager,
                                get_memory_info=lambda: (6 << 30, 8 << 30))
    return types.SimpleNamespace(current_context=lambda: ctx)


def test_memory_report_from_manager_statistics():
    rep = memory_report(_fake_cuda(_Stats()))
    assert rep["stats_source"] == "manager"
    assert (rep["in_use"], rep["peak"], rep["allocations"], rep["flushes"]) == \
        (3 << 20, 5 << 20, 7, 1)
    text = format_report(rep)
    assert text.startswith("memory report (_Stats): in use 3.0 MiB, peak 5.0 MiB, "
                           "allocations 7, flushes 1, pending frees 2")


def test_memory_report_falls_back_for_plugins_without_statistics():
    mgr = types.SimpleNamespace(deallocations=[1, 2, 3])
    rep = memory_report(_fake_cuda(mgr))
    assert rep["stats_source"] == "fallback"
    assert rep["in_use"] == 2 << 30 and rep["pending"] == 3 and rep["peak"] is None
    assert "device-wide" in format_report(rep)


def test_task_modules_exist():
    import importlib
    for name in TASKS:
        assert callable(importlib.import_module(f"cujit.demo.{name}").run)


# -- the real thing on the active backend ----------------------------------------------------
@pytest.fixture
def cuda():
    import cujit
    for name in DEMO_NAMES:              # a missing public name fails here, it never skips
        getattr(cujit, name)
    return cujit


@pytest.mark.parametrize("task", TASKS)
def test_each_demo_task_passes(cuda, task, on_gpu):
    import importlib
    mod = importlib.import_module(f"cujit.demo.{task}")
    res = mod.run(cuda, sizes_for(not on_gpu, True))
    assert res.passed, "\n".join(res.lines + [res.detail])
    assert res.seconds > 0


def test_shared_alias_reads_back_the_seed_values(cuda):
    from cujit.demo import shared_alias
    res = shared_alias.run(cuda, None)
    assert "f32_arr[0] = 3.140000  i32_arr[0] = 1078523331" in res.lines[0]
    assert "f32_arr[0] = 3.140000  i32_arr[0] = 1 " in res.lines[1]


def test_const_filter_reference_matches_convolution():
    from cujit.demo.const_filter import reference, TAPS
    x = np.random.default_rng(0).standard_normal(100).astype(np.float32)
    want = np.convolve(x.astype(np.float64), TAPS.astype(np.float64)[::-1], mode="same")
    np.testing.assert_allclose(reference(x), want, rtol=1e-12, atol=1e-12)


@pytest.mark.sim
def test_demo_quick_sim_end_to_end(cuda, run_cli):
    p = run_cli("demo", "--quick", "--sim", "--json", timeout=120)
    assert p.returncode == 0, p.stderr + p.stdout
    doc = json.loads(p.stdout)
    assert doc["passed"] is True and doc["backend"] == "simulator"
    assert [t["passed"] for t in doc["tasks"]] == [True] * len(TASKS)
    assert doc["memory"]["allocations"] > 0
    assert p.stderr.splitlines()[0].startswith("cujit: running on the simulator (--sim)")


@pytest.mark.gpu
def test_demo_quick_on_the_gpu(cuda, run_cli):
    p = run_cli("demo", "--quick", "--json", env={"CUJIT_ENABLE_CUDASIM": "0"}, timeout=300)
    assert p.returncode == 0, p.stderr + p.stdout
    doc = json.loads(p.stdout)
    assert doc["backend"] == "gpu" and doc["passed"] is True


def test_demo_exit_status_is_nonzero_when_a_check_fails(monkeypatch, capsys):
    from cujit import cli
    import cujit.demo.runner as runner
    # --sim sets CUJIT_ENABLE_CUDASIM in this process: let monkeypatch restore it afterwards.
    monkeypatch.setenv("CUJIT_ENABLE_CUDASIM", os.environ.get("CUJIT_ENABLE_CUDASIM", "0"))

    def failing(cuda, sizes, tasks=TASKS, out=None):
        out("1/2 checks passed")
        return {"passed": False, "tasks": [], "memory": None, "sizes": sizes.label,
                "seconds": 0.0}
    monkeypatch.setattr(runner, "run_demo", failing)
    assert cli.main(["demo", "--sim", "--quick"]) == 1
    assert "1/2 checks passed" in capsys.readouterr().out


def test_demo_rejects_an_unknown_task():
    from cujit import cli
    with pytest.raises(SystemExit) as exc:
        cli.main(["demo", "--only", "no_such_task"])
    assert exc.value.code == 2


@pytest.mark.parametrize("nbytes", [16 << 10, 40 << 20])     # cached and uncached sizes
def test_pinned_arrays_the_pipeline_uses_keep_their_memory(cuda, nbytes):
    # Regression: pinned_array's buffer was handed back while the array lived, so a second
    # pinned_array got the same memory and the pipeline's input was overwritten.
    import gc
    n = nbytes // 4
    a = cuda.pinned_array(n, dtype=np.float32)
    a[:] = 1.0
    view = a[8:]
    del a
    gc.collect()
    b = cuda.pinned_array(n, dtype=np.float32)
    b[:] = 2.0
    assert view.ctypes.data - 32 != b.ctypes.data
    assert np.all(view == 1.0)


def test_a_kernel_keeps_the_module_it_was_made_for():
    # making the kernels for another module (here one that fails) must not change what a
    # kernel made earlier, and compiled at its first launch, sees as ``cuda``
    import numpy as np
    import cujit
    from cujit.demo import matmul
    k = matmul.make_kernel(cujit)
    with pytest.raises(AttributeError):
        matmul.make_kernel(_BrokenCuda())
    n = matmul.TPB
    a = np.arange(n * n, dtype=np.float32).reshape(n, n) % 5
    c = np.zeros_like(a)
    k[(1, 1), (n, n)](a, np.eye(n, dtype=np.float32), c)
    assert np.array_equal(c, a)
