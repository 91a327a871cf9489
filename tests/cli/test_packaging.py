"""pyproject.toml: the [test] extra never asks for a different toolchain than the base install."""
import os
import re
import pytest

tomllib = pytest.importorskip("tomllib")     # Python 3.11+

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _project():
    with open(os.path.join(ROOT, "pyproject.toml"), "rb") as f:
        return tomllib.load(f)["project"]


def _specs(reqs):
    out = {}
    for r in reqs:
        name = re.match(r"[A-Za-z0-9_.-]+", r).group(0).lower()
        out[name] = r[len(name):].strip()
    return out


def test_extras_do_not_respecify_base_dependencies():
    base = _specs(_project()["dependencies"])
    for extra, reqs in _project()["optional-dependencies"].items():
        clash = {n: (base[n], s) for n, s in _specs(reqs).items() if n in base and s != base[n]}
        assert clash == {}, f"[{extra}] pins {clash} differently from the base install"


def test_nvvm_and_nvjitlink_share_one_spec():
    base = _specs(_project()["dependencies"])
    assert base["nvidia-nvvm"] == base["nvidia-nvjitlink"] != ""


def test_test_extra_carries_matplotlib_for_the_plot_test():
    assert "matplotlib" in _specs(_project()["optional-dependencies"]["test"])
