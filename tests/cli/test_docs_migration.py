"""docs/migration.md: its examples and commands do what the page says.

The numba alias's commands (``python -m cujit run``, ``-p cujit.numba_alias``) run where
``cujit.numba_alias`` exists, and are skipped, saying so, where it does not."""
import os
import re
import shlex
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
GUIDE = os.path.join(ROOT, "docs", "migration.md")
# looked for beside this checkout's cujit (an editable install elsewhere may answer find_spec)
ALIAS = os.path.exists(os.path.join(ROOT, "cujit", "numba_alias.py"))
needs_alias = pytest.mark.skipif(not ALIAS, reason="cujit.numba_alias is not in this checkout")

NUMBA_TEST = '''\
import numpy as np
from numba import cuda


@cuda.jit
def scale(x, factor):
    i = cuda.grid(1)
    if i < x.size:
        x[i] *= factor


def test_scale():
    d = cuda.to_device(np.arange(64, dtype=np.float32))
    scale[1, 64](d, 2.0)
    assert (d.copy_to_host() == 2 * np.arange(64)).all()
'''


def _blocks(lang):
    with open(GUIDE) as f:
        return re.findall(rf"```{lang}\n(.*?)```", f.read(), re.S)


def _run(line, cwd, **env):
    """Run one documented command line (``VAR=value ... python ...``) with this interpreter."""
    words = shlex.split(line)
    e = dict(os.environ)
    e["PYTHONPATH"] = ROOT + os.pathsep + e.get("PYTHONPATH", "")
    for var in ("CUJIT_ENABLE_CUDASIM", "NUMBA_ENABLE_CUDASIM"):
        e.pop(var, None)
    e.update(env)
    while re.fullmatch(r"[A-Z_]+=.*", words[0]):
        name, _, value = words.pop(0).partition("=")
        e[name] = value
    assert words[0] == "python", line
    return subprocess.run([sys.executable] + words[1:], capture_output=True, text=True,
                          cwd=str(cwd), env=e, timeout=300)


@pytest.fixture
def scripts(tmp_path):
    numba_version, cujit_version = _blocks("python")
    (tmp_path / "scale_numba.py").write_text(numba_version)
    (tmp_path / "scale.py").write_text(cujit_version)
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_scale.py").write_text(NUMBA_TEST)
    return tmp_path


def test_the_two_versions_differ_in_the_import_line_only():
    numba_version, cujit_version = _blocks("python")
    old, new = numba_version.splitlines(), cujit_version.splitlines()
    assert [(a, b) for a, b in zip(old, new) if a != b] == [("from numba import cuda",
                                                             "import cujit as cuda")]
    assert len(old) == len(new)


def test_run_commands_work_as_described(scripts, on_gpu):
    lines = [ln for ln in _blocks("bash")[0].splitlines() if ln.strip()]
    assert lines == ["python scale.py", "CUJIT_ENABLE_CUDASIM=1 python scale.py",
                     "NUMBA_ENABLE_CUDASIM=1 python scale.py", "python -m cujit info"]
    plain = _run(lines[0], scripts)
    if on_gpu:
        assert plain.returncode == 0 and "[0. 2. 4. 6.]" in plain.stdout
    else:       # "no silent fallback": the error says how to ask for the simulator
        assert plain.returncode == 1 and "CudaSupportError" in plain.stderr
        assert "CUJIT_ENABLE_CUDASIM=1" in plain.stderr
    for line in lines[1:3]:
        r = _run(line, scripts)
        assert r.returncode == 0, r.stderr
        assert r.stdout.strip() == "[0. 2. 4. 6.]"
    info = _run(lines[3], scripts)
    assert info.returncode == 0 and info.stdout.startswith("versions:")


@needs_alias
def test_alias_commands_run_numba_code_unmodified(scripts):
    lines = [ln for ln in _blocks("bash")[1].splitlines() if ln.strip()]
    assert lines[0] == "python -m cujit run --sim scale_numba.py"
    r = _run(lines[0], scripts)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "[0. 2. 4. 6.]"
    for line in lines[1:]:
        r = _run(line, scripts, NUMBA_ENABLE_CUDASIM="1")
        assert r.returncode == 0, r.stdout + r.stderr
        assert "1 passed" in r.stdout


def test_ci_example_is_a_job_whose_test_step_uses_the_plugin_on_the_simulator():
    yaml = pytest.importorskip("yaml")
    doc = yaml.safe_load(_blocks("yaml")[0])
    (job,) = doc["jobs"].values()
    runs = [s for s in job["steps"] if "run" in s]
    assert runs[0]["run"].startswith("python -m pip install cujit ")
    assert runs[1]["run"] == "python -m pytest -p cujit.numba_alias -q tests/"
    assert runs[1]["env"] == {"NUMBA_ENABLE_CUDASIM": "1"}


@needs_alias
def test_ci_example_test_step_passes(scripts):
    yaml = pytest.importorskip("yaml")
    step = [s for s in yaml.safe_load(_blocks("yaml")[0])["jobs"]["gpu-tests-on-the-simulator"]
            ["steps"] if "run" in s][1]
    r = _run(step["run"], scripts, **step["env"])
    assert r.returncode == 0, r.stdout + r.stderr
    assert "1 passed" in r.stdout
