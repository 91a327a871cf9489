"""The Sphinx site (docs/conf.py): it builds with warnings as errors, and its API reference
lists the whole public surface."""
import os
import re
import shutil
import subprocess
import sys

import pytest

import cujit

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DOCS = os.path.join(ROOT, "docs")


def _api_names():
    with open(os.path.join(DOCS, "api.md")) as f:
        text = f.read()
    blocks = re.findall(r"\.\. autosummary::\n(?:   :\w+:.*\n)*\n((?:   \S+\n)+)", text)
    return [n.strip() for b in blocks for n in b.splitlines()]


def test_api_reference_lists_every_public_name_once():
    names = _api_names()
    assert sorted(names) == sorted(set(names))
    assert set(names) == set(cujit.__all__)


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
    api = (tmp_path / "html" / "generated" / "cujit.to_device.html").read_text()
    assert "Copy host data to the device" in api      # autodoc read the docstring
    assert (tmp_path / "html" / "migration.html").exists()
