"""Fixtures for the command-line tests: the benchmark runner module and a CLI runner."""
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.fixture(scope="session")
def bench_runner():
    """``benchmarks/runner.py`` loaded as a module."""
    from cujit.cli import load_bench_runner
    return load_bench_runner()


def _run_cli(*args, env=None, timeout=300):
    """Run ``python -m cujit *args`` in a fresh process from the repository root."""
    e = dict(os.environ)
    e["PYTHONPATH"] = ROOT + os.pathsep + e.get("PYTHONPATH", "")
    e.update(env or {})
    return subprocess.run([sys.executable, "-m", "cujit", *args], capture_output=True,
                          text=True, cwd=ROOT, env=e, timeout=timeout)


@pytest.fixture
def run_cli():
    """``run_cli(*args, env=None)`` → ``subprocess.CompletedProcess`` of ``python -m cujit``."""
    return _run_cli
