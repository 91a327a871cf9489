"""The benchmark runner's merging, ratios, targets and table on canned side outputs."""
import json
import types

import functools

import pytest
from hypothesis import given, strategies as st

CUJIT = {"side": "cujit", "versions": {"cujit": "0.1.0"}, "device": "NVIDIA H200",
         "errors": {}, "skipped": None,
         "figures": {"launch_1arg_us": 3.0, "alloc_free_us": 4.0, "to_device_4k_us": 20.0,
                     "htod_pinned_256m_gbps": 50.0, "kernel_axpy_us": 105.0,
                     "first_launch_s": 0.4}}
BARE = {"side": "bare", "versions": {}, "device": "NVIDIA H200", "errors": {}, "skipped": None,
        "figures": {"launch_1arg_us": 2.0, "alloc_free_us": 4.0, "htod_pinned_256m_gbps": 55.0,
                    "pool_alloc_free_us": 0.5}}
NUMBA = {"side": "numba", "versions": {"numba": "0.61"}, "device": "NVIDIA H200", "errors": {},
         "skipped": None, "figures": {"launch_1arg_us": 6.0, "kernel_axpy_us": 100.0}}
CUPY = {"side": "cupy", "versions": {}, "device": None, "errors": {}, "figures": {},
        "skipped": "CuPy not usable: ModuleNotFoundError"}


@functools.lru_cache(maxsize=None)
def _runner():
    from cujit.cli import load_bench_runner
    return load_bench_runner()


def _table(bench_runner):
    merged = bench_runner.merge([CUJIT, BARE, NUMBA, CUPY])
    return merged, {r["key"]: r for r in bench_runner.build_table(merged)}


def test_merge_collects_figures_per_key_and_side(bench_runner):
    merged, _ = _table(bench_runner)
    assert merged["figures"]["launch_1arg_us"] == {"cujit": 3.0, "bare": 2.0, "numba": 6.0}
    assert merged["sides"]["cupy"]["skipped"].startswith("CuPy not usable")
    assert "figures" not in merged["sides"]["cujit"]


def test_ratios_are_costs_for_times_and_bandwidths(bench_runner):
    _, rows = _table(bench_runner)
    assert rows["launch_1arg_us"]["ratios"]["bare"] == pytest.approx(1.5)
    assert rows["launch_1arg_us"]["ratios"]["numba"] == pytest.approx(0.5)
    assert rows["launch_1arg_us"]["ratios"]["cupy"] is None
    # 55 GB/s bare vs 50 GB/s cujit: cujit costs 1.1x
    assert rows["htod_pinned_256m_gbps"]["ratios"]["bare"] == pytest.approx(1.1)


def test_targets_judged(bench_runner):
    _, rows = _table(bench_runner)
    assert rows["launch_1arg_us"]["meets"] is False          # 1.5x > 1.2x bare
    assert rows["alloc_free_us"]["meets"] is True            # 1.0x <= 1.2x
    assert rows["to_device_4k_us"]["meets"] is None          # no bare floor to judge by
    bare = dict(BARE, figures=dict(BARE["figures"], to_device_4k_us=10.0))
    rows2 = {r["key"]: r for r in bench_runner.build_table(bench_runner.merge([CUJIT, bare]))}
    assert rows2["to_device_4k_us"]["meets"] is False        # 2.0x > 1.3x bare
    assert rows["htod_pinned_256m_gbps"]["meets"] is True    # 50 >= 50 GB/s
    assert rows["kernel_axpy_us"]["meets"] is True           # 1.05x numba
    assert rows["first_launch_s"]["meets"] is True
    assert rows["pool_alloc_free_us"]["meets"] is None       # floor only: no cujit figure
    assert rows["pool_alloc_free_us"]["cujit"] is None


def test_gemm_rows_judge_throughput_against_cublas_and_fma(bench_runner):
    def rows(cujit_tflops, cublas_tflops, over_fma):
        cj = dict(CUJIT, figures={"gemm_wmma_tflops": cujit_tflops, "gemm_fma_tflops": 40.0,
                                  "gemm_wmma_over_fma_x": over_fma})
        cp = dict(CUPY, skipped=None, figures={"gemm_wmma_tflops": cublas_tflops})
        return {r["key"]: r for r in bench_runner.build_table(bench_runner.merge([cj, cp]))}
    good = rows(400.0, 700.0, 10.0)
    # TFLOP/s is a throughput: the cost ratio is cuBLAS's figure over cujit's
    assert good["gemm_wmma_tflops"]["ratios"]["cupy"] == pytest.approx(1.75)
    assert good["gemm_wmma_tflops"]["meets"] is True          # 57% of cuBLAS >= 50%
    assert good["gemm_wmma_over_fma_x"]["meets"] is True
    bad = rows(300.0, 700.0, 3.0)
    assert bad["gemm_wmma_tflops"]["meets"] is False          # 43% of cuBLAS
    assert bad["gemm_wmma_over_fma_x"]["meets"] is False      # < 4x the FMA kernel


def test_row_order_follows_rows_then_unknown_keys(bench_runner):
    extra = dict(CUJIT, figures=dict(CUJIT["figures"], zz_custom_us=1.0))
    rows = bench_runner.build_table(bench_runner.merge([extra]))
    keys = [r["key"] for r in rows]
    assert keys[-1] == "zz_custom_us"
    known = [k for k in bench_runner.ROWS if k in extra["figures"]]
    assert keys[:-1] == known


def test_format_table_is_markdown_with_every_row(bench_runner):
    merged, rows = _table(bench_runner)
    text = bench_runner.format_table(bench_runner.build_table(merged))
    lines = text.splitlines()
    assert lines[0].startswith("| benchmark |")
    assert len(lines) == 2 + len(rows)
    launch = next(l for l in lines if l.startswith("| launch, 1 array arg"))
    assert "1.50x" in launch and "NO" in launch and "<= 1.1x bare" in launch


def test_headline_and_results_markdown(bench_runner):
    merged = bench_runner.merge([CUJIT, BARE, NUMBA, CUPY])
    rows = bench_runner.build_table(merged)
    head = bench_runner.headline(rows)
    assert "- launch, 1 array arg: 1.50x bare driver (target <= 1.1x bare, MISSED); " \
        "0.50x numba-cuda" in head
    assert "- H->D 256 MiB pinned: 50.00 GB/s (target >= 50); 1.10x bare driver" in head
    block = bench_runner.readme_block(merged, rows, when="2026-11-29")
    assert block.startswith("Measured on NVIDIA H200, 2026-11-29")
    md = bench_runner.results_markdown(merged, rows, when="2026-11-29 10:00 UTC")
    assert "Latest run: 2026-11-29 10:00 UTC on NVIDIA H200" in md
    assert "cupy: CuPy not usable" in md


def test_parse_side_output_takes_last_json_line(bench_runner):
    doc = bench_runner.parse_side_output("bare", 0, "noise\n" + json.dumps(BARE) + "\n", "")
    assert doc["figures"]["launch_1arg_us"] == 2.0


def test_crashed_side_becomes_skipped(bench_runner):
    doc = bench_runner.parse_side_output("cujit", 1, "", "Traceback\nKeyError: 'x'\n")
    assert doc["figures"] == {}
    assert doc["skipped"].startswith("crashed (exit 1)")
    assert "KeyError" in doc["skipped"]


def test_peer_sides_use_the_peers_interpreter(bench_runner, monkeypatch, tmp_path):
    exe = tmp_path / "python"
    exe.write_text("#!/bin/sh\n")
    exe.chmod(0o755)
    monkeypatch.setenv("CUJIT_BENCH_PEERS_PYTHON", str(exe))
    for side in ("numba", "cupy"):
        argv, env = bench_runner.side_command(side, quick=True)
        assert argv[0] == str(exe)
        assert argv[-1] == "--quick" and argv[-2].endswith(f"side_{side}.py")
        assert env.get("PYTHONPATH") == __import__("os").environ.get("PYTHONPATH")
    argv, env = bench_runner.side_command("cujit", quick=False)
    assert argv[0] == __import__("sys").executable
    assert env["PYTHONPATH"].split(":")[0] == bench_runner.ROOT
    # The option wins over the environment variable.
    assert bench_runner.peers_python(__import__("sys").executable) == \
        __import__("sys").executable


def test_peers_interpreter_defaults_to_this_one(bench_runner, monkeypatch):
    import sys
    monkeypatch.delenv("CUJIT_BENCH_PEERS_PYTHON", raising=False)
    assert bench_runner.peers_python() == sys.executable
    assert bench_runner.side_command("numba", quick=False)[0][0] == sys.executable


@pytest.mark.parametrize("origin", ["option", "env"])
def test_bad_peers_interpreter_is_a_valueerror_naming_it(bench_runner, monkeypatch, tmp_path,
                                                         origin):
    bad = str(tmp_path / "no-such-python")
    if origin == "env":
        monkeypatch.setenv("CUJIT_BENCH_PEERS_PYTHON", bad)
        with pytest.raises(ValueError, match="CUJIT_BENCH_PEERS_PYTHON=.*no-such-python"):
            bench_runner.peers_python()
    else:
        with pytest.raises(ValueError, match="--peers-python=.*no-such-python"):
            bench_runner.peers_python(bad)


def test_main_with_bad_peers_interpreter_exits_2(bench_runner, monkeypatch, tmp_path, capsys):
    monkeypatch.setattr(bench_runner, "run_side", lambda *a, **k: pytest.fail("ran a side"))
    args = types.SimpleNamespace(sides=None, quick=True, timeout=5, json=None, plot=None,
                                 sim=False, results=False, peers_python=str(tmp_path / "nope"))
    assert bench_runner.main(args) == 2
    assert "--peers-python=" in capsys.readouterr().err


def test_runner_names_no_machine_directories(bench_runner):
    import inspect
    src = inspect.getsource(bench_runner)
    assert "/tmp" not in src and ".whl" not in src


def test_results_link_the_plot(bench_runner):
    merged, _ = _table(bench_runner)
    rows = bench_runner.build_table(merged)
    md = bench_runner.results_markdown(merged, rows, when="now", picture="ratios.png")
    assert "[ratios.png](ratios.png)" in md
    assert "ratios.png" not in bench_runner.results_markdown(merged, rows, when="now")


def test_results_link_a_copy_of_a_plot_drawn_outside_benchmarks(bench_runner, monkeypatch,
                                                                 tmp_path):
    import matplotlib  # noqa: F401  (in the [test] extra)
    bench = tmp_path / "benchmarks"
    bench.mkdir()
    out = tmp_path / "out"
    out.mkdir()
    monkeypatch.setattr(bench_runner, "HERE", str(bench))
    canned = {"cujit": CUJIT, "bare": BARE, "numba": NUMBA, "cupy": CUPY}
    monkeypatch.setattr(bench_runner, "run_side",
                        lambda side, quick, timeout, python=None: canned[side])
    args = types.SimpleNamespace(sides=None, quick=True, timeout=5, json=None,
                                 plot=str(out / "ratios.png"), sim=False, results=True)
    assert bench_runner.main(args) == 0
    md = (bench / "RESULTS.md").read_text()
    assert "[ratios.png](ratios.png)" in md and ".." not in md.split("picture:")[1][:40]
    assert (bench / "ratios.png").read_bytes() == (out / "ratios.png").read_bytes()


def test_plot_without_matplotlib_says_so(bench_runner, monkeypatch, tmp_path, capsys):
    import builtins
    real_import = builtins.__import__

    def no_matplotlib(name, *a, **k):
        if name.startswith("matplotlib"):
            raise ImportError("No module named 'matplotlib'")
        return real_import(name, *a, **k)
    canned = {"cujit": CUJIT, "bare": BARE, "numba": NUMBA, "cupy": CUPY}
    monkeypatch.setattr(bench_runner, "run_side",
                        lambda side, quick, timeout, python=None: canned[side])
    monkeypatch.setattr(builtins, "__import__", no_matplotlib)
    args = types.SimpleNamespace(sides=None, quick=True, timeout=5, json=None,
                                 plot=str(tmp_path / "r.png"), sim=False, results=False)
    assert bench_runner.main(args) == 2
    assert "needs matplotlib" in capsys.readouterr().err
    assert not (tmp_path / "r.png").exists()


def test_main_merges_and_writes_json(bench_runner, monkeypatch, tmp_path, capsys):
    canned = {"cujit": CUJIT, "bare": BARE, "numba": NUMBA, "cupy": CUPY}
    monkeypatch.setattr(bench_runner, "run_side", lambda side, quick, timeout, python=None: canned[side])
    out = tmp_path / "bench.json"
    args = types.SimpleNamespace(sides=None, quick=True, timeout=5, json=str(out), plot=None,
                                 sim=False, results=False)
    assert bench_runner.main(args) == 0
    doc = json.loads(out.read_text())
    assert doc["merged"]["figures"]["kernel_axpy_us"] == {"cujit": 105.0, "numba": 100.0}
    printed = capsys.readouterr().out
    assert "| launch, 1 array arg |" in printed and "README block:" in printed


def test_main_with_nothing_measured_says_why(bench_runner, monkeypatch, capsys):
    monkeypatch.setattr(bench_runner, "run_side", lambda side, quick, timeout, python=None: CUPY)
    args = types.SimpleNamespace(sides=["cupy"], quick=True, timeout=5, json=None, plot=None,
                                 sim=False, results=False)
    assert bench_runner.main(args) == 1
    assert "nothing was measured" in capsys.readouterr().err


def test_main_rejects_unknown_side(bench_runner):
    args = types.SimpleNamespace(sides=["cujit", "torch"], quick=True, timeout=5, json=None,
                                 plot=None, sim=False, results=False)
    assert bench_runner.main(args) == 2


def test_plot_writes_png(bench_runner, tmp_path):
    import matplotlib  # noqa: F401  (in the [test] extra: this test must run in CI)
    rows = bench_runner.build_table(bench_runner.merge([CUJIT, BARE, NUMBA]))
    path = tmp_path / "ratios.png"
    bench_runner.plot(rows, str(path))
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@given(st.floats(1e-3, 1e6), st.floats(1e-3, 1e6),
       st.sampled_from(["launch_1arg_us", "dtod_256m_gbps", "first_launch_s"]))
def test_cost_ratio_is_antisymmetric(mine, theirs, key):
    r = _runner()
    assert r.cost_ratio(key, mine, theirs) * r.cost_ratio(key, theirs, mine) == pytest.approx(1.0)


def test_cost_ratio_none_for_missing_or_zero(bench_runner):
    assert bench_runner.cost_ratio("launch_1arg_us", None, 2.0) is None
    assert bench_runner.cost_ratio("launch_1arg_us", 1.0, 0.0) is None


def test_smoke_runs_are_flagged(bench_runner):
    smoke = dict(CUJIT, smoke=True)
    merged = bench_runner.merge([smoke, BARE])
    assert bench_runner.smoke_warning(merged).startswith("SMOKE RUN: side(s) cujit")
    rows = bench_runner.build_table(merged)
    assert "**SMOKE RUN" in bench_runner.results_markdown(merged, rows, when="now")
    assert bench_runner.smoke_warning(bench_runner.merge([CUJIT, BARE])) == ""


def test_smoke_warning_names_only_sides_that_ran(bench_runner):
    sides = [dict(CUJIT, smoke=True), dict(BARE, smoke=True, skipped="no GPU", figures={}),
             dict(NUMBA, smoke=True, skipped="numba-cuda not installed", figures={}),
             dict(CUPY, smoke=True)]
    warning = bench_runner.smoke_warning(bench_runner.merge(sides))
    assert warning.startswith("SMOKE RUN: side(s) cujit ran on the simulator")


def test_smoke_rows_drop_gpu_sizes_and_verdicts(bench_runner):
    merged = bench_runner.merge([dict(CUJIT, smoke=True), BARE])
    rows = {r["key"]: r for r in bench_runner.smoke_rows(bench_runner.build_table(merged))}
    assert rows["kernel_axpy_us"]["label"] == "kernel axpy [smoke size]"
    assert rows["htod_pinned_256m_gbps"]["label"] == "H->D pinned [smoke size]"
    assert rows["launch_1arg_us"]["label"] == "launch, 1 array arg"
    assert all(r["meets"] is None and r["target"] == "-" for r in rows.values())
    table = bench_runner.format_table(list(rows.values()))
    assert "2^26" not in table and "256 MiB" not in table and "| NO |" not in table


SIM_SIZES = {"kernel_axpy_us": "2^10 f32", "htod_pinned_256m_gbps": "1 MiB",
             "lib_reduce_sum_us": "2^10 f32", "multi_gpu_axpy_1gpu_us": "2^10 f32"}


def test_rows_are_labelled_with_the_sizes_the_side_ran(bench_runner):
    cujit = dict(CUJIT, smoke=True, sizes=SIM_SIZES,
                 figures=dict(CUJIT["figures"], lib_reduce_sum_us=9.0, multi_gpu_axpy_1gpu_us=8.0))
    merged = bench_runner.merge([cujit, BARE])
    rows = {r["key"]: r for r in bench_runner.smoke_rows(bench_runner.build_table(merged))}
    assert rows["kernel_axpy_us"]["label"] == "kernel axpy (2^10 f32)"
    assert rows["htod_pinned_256m_gbps"]["label"] == "H->D 1 MiB pinned"
    assert rows["lib_reduce_sum_us"]["label"] == "Reduce sum 2^10 f32 (result on host)"
    assert rows["multi_gpu_axpy_1gpu_us"]["label"] == "axpy 2^10 f32 on one GPU, per launch"
    table = bench_runner.format_table(list(rows.values()))
    assert "2^26" not in table and "2^28" not in table and "256 MiB" not in table


def test_label_sizes_name_the_size_written_in_each_label(bench_runner):
    for key, size in bench_runner.LABEL_SIZES.items():
        assert size in bench_runner.ROWS[key][0], key
    assert bench_runner.sized_label("kernel_axpy_us", "kernel axpy (2^26 f32)", None) == \
        "kernel axpy (2^26 f32)"


def test_size_texts(monkeypatch):
    import os
    monkeypatch.syspath_prepend(os.path.join(os.path.dirname(os.path.dirname(
        os.path.dirname(os.path.abspath(__file__)))), "benchmarks"))
    from bench_common import count_text, bytes_text
    assert [count_text(n) for n in (1 << 26, 10 ** 6, 64, 1000, 1500, 1)] == \
        ["2^26", "10^6", "2^6", "10^3", "1500", "2^0"]
    assert [bytes_text(n) for n in (256 << 20, 1 << 20, 4096, 100, 1 << 30)] == \
        ["256 MiB", "1 MiB", "4 KiB", "100 B", "1 GiB"]


def test_smoke_run_prints_no_readme_block_and_no_missed(bench_runner, monkeypatch, capsys):
    docs = {"cujit": dict(CUJIT, smoke=True, figures=dict(CUJIT["figures"], launch_1arg_us=900.0)),
            "bare": dict(BARE, smoke=True, skipped="no GPU", figures={})}
    monkeypatch.setattr(bench_runner, "run_side", lambda side, quick, timeout, python=None: docs[side])
    # sim=False: the canned sides carry the smoke flag; main must not flip this process's backend
    args = types.SimpleNamespace(sides=["cujit", "bare"], quick=True, sim=False, timeout=1.0,
                                 json=None, plot=None, results=False)
    assert bench_runner.main(args) == 0
    out = capsys.readouterr().out
    assert out.startswith("SMOKE RUN: side(s) cujit ran")
    assert "README block" not in out and "MISSED" not in out and "2^26" not in out
