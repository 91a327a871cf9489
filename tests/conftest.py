"""Test-suite set-up: pick the backend once per process.

- A real GPU is used when one works and the simulator is not asked for; otherwise the
  simulator (``CUJIT_ENABLE_CUDASIM=1`` is set here before cujit touches a driver).
- ``gpu`` tests are skipped on the simulator; ``sim`` tests are skipped on a GPU.
- Tests with neither marker run on whichever backend is active.  On a GPU they also get the
  ``gpu`` marker, so ``pytest -m gpu`` runs them on the device too.
- ``compile`` tests need libNVVM / nvJitLink wheels but no GPU.
"""
import inspect
import os
import re

import pytest


def _gpu_works():
    if os.environ.get("CUJIT_ENABLE_CUDASIM", os.environ.get("NUMBA_ENABLE_CUDASIM", "0")) not in ("", "0"):
        return False
    try:
        from cuda.bindings import driver as d
        (err,) = d.cuInit(0)
        if err:
            return False
        err, n = d.cuDeviceGetCount()
        return not err and n > 0
    except Exception:
        return False


ON_GPU = _gpu_works()
if not ON_GPU:
    os.environ["CUJIT_ENABLE_CUDASIM"] = "1"


def pytest_report_header(config):
    return f"cujit backend: {'real GPU' if ON_GPU else 'simulator (no GPU)'}"


_RESETS = re.compile(r"\.reset\(\)|\bclose\(\)")


def _resets_context(item):
    try:
        return bool(_RESETS.search(inspect.getsource(item.function)))
    except (OSError, TypeError):
        return False


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    skip_gpu = pytest.mark.skip(reason="needs a real CUDA GPU (running on the simulator)")
    skip_sim = pytest.mark.skip(reason="simulator-only behaviour (running on a real GPU)")
    for item in items:
        marks = {m.name for m in item.iter_markers()}
        if "gpu" in marks and not ON_GPU:
            item.add_marker(skip_gpu)
        elif "sim" in marks and ON_GPU:
            item.add_marker(skip_sim)
        elif ON_GPU and not marks & {"gpu", "sim", "compile"}:
            item.add_marker(pytest.mark.gpu)
    if ON_GPU:
        # The primary context is shared with CuPy and PyTorch: after a reset their cached
        # allocations and modules are invalid, so tests that reset or close it run last.
        items.sort(key=_resets_context)


@pytest.fixture
def on_gpu():
    """True when the tests run on a real GPU."""
    return ON_GPU
