"""``python -m cujit access-report script.py --json PATH`` with a PATH that cannot
be written ran the whole script, printed the report, then died with a FileNotFoundError
traceback (exit status 1, as if the script had failed)."""
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

SCRIPT = """\
import numpy as np
import cujit as cuda

@cuda.jit
def k(a):
    i = cuda.grid(1)
    if i < a.size:
        a[i] = i

print("script ran")
k[2, 32](cuda.device_array(64, np.float32))
"""


def _run(*args):
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.run([sys.executable, "-m", "cujit", "access-report", *args], env=env,
                          capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("where", ["missing-folder", "a-folder"])
def test_access_report_unwritable_json_path_exits_2_before_running(tmp_path, where):
    script = tmp_path / "k.py"
    script.write_text(SCRIPT)
    target = tmp_path / "no" / "such" / "out.json" if where == "missing-folder" else tmp_path
    p = _run(str(script), "--json", str(target))
    assert p.returncode == 2, p.stderr
    assert f"--json {str(target)!r}" in p.stderr and "Traceback" not in p.stderr
    assert "script ran" not in p.stdout


def test_access_report_json_written_to_a_good_path(tmp_path):
    script = tmp_path / "k.py"
    script.write_text(SCRIPT)
    out = tmp_path / "rows.json"
    p = _run(str(script), "--json", str(out))
    assert p.returncode == 0, p.stderr
    assert "script ran" in p.stdout and out.read_text().lstrip().startswith("[")
