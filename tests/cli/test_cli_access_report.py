"""``python -m cujit access-report script.py``: the script's kernels on the simulator (forced,
even on a GPU machine) with the access recorder on, then the report."""
import json
import os
import textwrap

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

SCRIPT = textwrap.dedent("""\
    import sys
    import numpy as np
    import cujit as cuda

    @cuda.jit
    def strided(a):
        i = cuda.grid(1)
        a[i * 32] = np.float32(1.0)

    n = int(sys.argv[1])
    a = cuda.to_device(np.zeros(n * 32, np.float32))
    strided[n // 32, 32](a)
    print("launched", n // 32, "blocks")
    if len(sys.argv) > 2:
        assert a.copy_to_host()[-32] == 1.0, "last block not run"
    """)


def _script(tmp_path):
    p = tmp_path / "strided.py"
    p.write_text(SCRIPT)
    return str(p)


def test_access_report_runs_the_script_and_prints_the_report(run_cli, tmp_path):
    out = tmp_path / "rows.json"
    p = run_cli("access-report", _script(tmp_path), "--grid-limit", "2", "--json", str(out),
                "--", "4096")
    assert p.returncode == 0, p.stderr
    assert "launched 128 blocks" in p.stdout
    assert "first 2 blocks of each launch" in p.stderr
    lines = p.stdout.splitlines()
    row = next(ln for ln in lines if ln.startswith("strided"))
    assert row.split()[1:7] == ["strided.py:8", "a", "global", "store", "2", "32.00"]
    assert "1 warning:" in p.stdout and "128 bytes apart" in p.stdout
    rows = json.loads(out.read_text())
    assert [(r["kernel"], r["lineno"], r["requests"]) for r in rows] == [("strided", 8, 2)]


def test_access_report_whole_grids_with_grid_limit_0(run_cli, tmp_path):
    p = run_cli("access-report", _script(tmp_path), "--grid-limit", "0", "--", "128", "check")
    assert p.returncode == 0, p.stderr
    assert "whole grids" in p.stderr
    assert "strided.py:8" in p.stdout


def test_access_report_of_a_failing_script_still_prints_and_exits_1(run_cli, tmp_path):
    # the grid limit leaves the last block unrun, so the script's own check fails
    p = run_cli("access-report", _script(tmp_path), "--grid-limit", "1", "--", "128", "check")
    assert p.returncode == 1
    assert "AssertionError" in p.stderr and "--grid-limit 0 runs whole grids" in p.stderr
    assert "strided.py:8" in p.stdout


def test_access_report_unknown_script(run_cli, tmp_path):
    missing = str(tmp_path / "nope.py")
    p = run_cli("access-report", missing)
    assert p.returncode == 2
    assert f"no such script: {missing!r}" in p.stderr
    assert p.stdout == ""


def test_access_report_negative_grid_limit(run_cli, tmp_path):
    p = run_cli("access-report", _script(tmp_path), "--grid-limit", "-3")
    assert p.returncode == 2
    assert "--grid-limit must be >= 0" in p.stderr


def test_access_report_of_a_numba_cuda_script(run_cli, tmp_path):
    # unmodified numba.cuda code: numba.cuda is cujit while the script runs
    p = tmp_path / "numba_strided.py"
    p.write_text(SCRIPT.replace("import cujit as cuda", "from numba import cuda\nimport cujit\n"
                                "assert cuda is cujit"))
    r = run_cli("access-report", str(p), "--grid-limit", "2", "--", "4096")
    assert r.returncode == 0, r.stderr
    assert "launched 128 blocks" in r.stdout
    assert "numba_strided.py:10" in r.stdout and "128 bytes apart" in r.stdout


@pytest.mark.sim       # in this process: on a GPU machine its driver is already in use
def test_access_report_leaves_the_numba_alias_as_it_found_it(tmp_path):
    import argparse
    import sys
    from cujit import numba_alias
    from cujit.access_cli import cmd_access_report
    p = tmp_path / "noop.py"
    p.write_text("from numba import cuda\nimport cujit\nassert cuda is cujit\n")
    was = numba_alias.installed()
    args = argparse.Namespace(script=str(p), script_args=[], grid_limit=1, json=None)
    assert cmd_access_report(args) == 0
    assert numba_alias.installed() == was
    if not was:
        assert sys.modules.get("numba.cuda") is not sys.modules["cujit"]
