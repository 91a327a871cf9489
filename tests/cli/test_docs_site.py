"""The Sphinx site (docs/conf.py): it builds with warnings as errors, and its API reference
has a page for every public name."""
import os
import shutil
import subprocess
import sys

import pytest

import cujit

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DOCS = os.path.join(ROOT, "docs")


@pytest.mark.docs
def test_site_builds_without_warnings(tmp_path):
    """``python -m sphinx -W`` on a copy of docs/ (autosummary writes its pages into the
    source folder; the checkout stays clean)."""
    pytest.importorskip("sphinx")
    pytest.importorskip("myst_parser")
    src = tmp_path / "docs"
    shutil.copytree(DOCS, src, ignore=shutil.ignore_patterns("_build", "generated"))
    env = dict(os.environ)
    env["PYTHONPATH"] = ROOT + os.pathsep + env.get("PYTHONPATH", "")
    r = subprocess.run([sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b", "html",
                        str(src), str(tmp_path / "html")],
                       capture_output=True, text=True, env=env, timeout=600)
    assert r.returncode == 0, r.stderr[-4000:]
    pages = tmp_path / "html" / "generated"
    assert sorted(n for n in cujit.__all__ if not (pages / f"cujit.{n}.html").exists()) == []
    assert "Copy host data to the device" in (pages / "cujit.to_device.html").read_text()
    assert "cujit.to_device" in (tmp_path / "html" / "api.html").read_text()
    assert (tmp_path / "html" / "migration.html").exists()
