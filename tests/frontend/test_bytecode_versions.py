"""The bytecode front end on every CPython it supports (3.10–3.13): ``bytecode_check.py``
decompiles a set of plain-Python functions (every control-flow form and operator kernels use)
with cujit's decompiler, runs the rebuilt functions and compares them with the originals, and
checks that a set of them reads back as its source.  It runs under this interpreter always, and under each other CPython 3.10–3.13 found on the
machine (``python3.X`` on PATH or a pyenv install); those that are not there are skipped."""
import glob
import os
import pathlib
import shutil
import subprocess
import sys

import pytest

_CHECK = pathlib.Path(__file__).with_name("bytecode_check.py")


def _interpreter(minor):
    if sys.version_info[:2] == (3, minor):
        return sys.executable
    root = os.environ.get("PYENV_ROOT", os.path.expanduser("~/.pyenv"))
    hits = sorted(glob.glob(os.path.join(root, "versions", f"3.{minor}.*", "bin", "python")))
    found = shutil.which(f"python3.{minor}")
    # a pyenv shim answers for versions that are not selected: ask the install itself
    if found and "shims" not in pathlib.Path(found).parts:
        hits.append(found)
    for exe in reversed(hits):
        probe = subprocess.run([exe, "-c", "import sys; print(sys.version_info[:2])"],
                               capture_output=True, text=True, timeout=60)
        if probe.returncode == 0 and probe.stdout.strip() == f"(3, {minor})":
            return exe
    return None


@pytest.mark.parametrize("minor", [10, 11, 12, 13], ids=lambda m: f"3.{m}")
def test_decompiled_functions_behave_as_the_originals(minor):
    exe = _interpreter(minor)
    if exe is None:
        pytest.skip(f"no CPython 3.{minor} on this machine")
    r = subprocess.run([exe, str(_CHECK)], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    last = r.stdout.strip().splitlines()[-1]
    assert last.startswith("OK ") and int(last.split()[1]) >= 45, r.stdout
