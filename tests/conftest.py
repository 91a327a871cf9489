"""Test-suite set-up: pick the backend once per process.

- A real GPU is used when one works and the simulator is not asked for; otherwise the
  simulator (``CUJIT_ENABLE_CUDASIM=1`` is set here before cujit touches a driver).
- ``gpu`` tests are skipped on the simulator; ``sim`` tests are skipped on a GPU.
- Tests with neither marker run on whichever backend is active.  On a GPU they also get the
  ``gpu`` marker, so ``pytest -m gpu`` runs them on the device too.
- ``compile`` tests need libNVVM / nvJitLink wheels but no GPU; they are skipped where the GPU
  toolchain (the ``[cu13]`` extra: llvmlite, cuda-bindings) is not installed.
- ``slow`` tests (long fuzz, soak and 100,000-cycle runs) are skipped unless ``--runslow``
  is given or ``CUJIT_RUN_SLOW=1`` is set.
"""
import importlib.util
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


def _toolchain_missing():
    """The GPU-toolchain modules that cannot be found here (looked up, not imported)."""
    missing = []
    for mod in ("llvmlite", "cuda.bindings"):
        try:
            found = importlib.util.find_spec(mod) is not None
        except ImportError:         # the ``cuda`` namespace itself is absent
            found = False
        if not found:
            missing.append(mod)
    return missing


TOOLCHAIN_MISSING = _toolchain_missing()


class _ModuleNeedingToolchain(pytest.Module):
    """A test module that may import the NVVM backend at its top (``cujit.nvvm.lowering``):
    without the toolchain that import fails, and the module is skipped instead of erroring."""

    def collect(self):
        try:
            return super().collect()
        except self.CollectError as exc:
            if "needs cujit's GPU toolchain" not in str(exc):
                raise
            pytest.skip(f"needs the GPU toolchain ({', '.join(TOOLCHAIN_MISSING)} not "
                        "installed): pip install 'cujit[cu13]'", allow_module_level=True)


def pytest_pycollect_makemodule(module_path, parent):
    if TOOLCHAIN_MISSING:
        return _ModuleNeedingToolchain.from_parent(parent, path=module_path)
    return None
if not ON_GPU:
    os.environ["CUJIT_ENABLE_CUDASIM"] = "1"


def pytest_addoption(parser):
    parser.addoption("--runslow", action="store_true", default=False,
                     help="run tests marked slow (also: CUJIT_RUN_SLOW=1)")


def run_slow(config):
    """True when ``slow`` tests run (``--runslow`` or ``CUJIT_RUN_SLOW=1``)."""
    return bool(config.getoption("--runslow", default=False)) or \
        os.environ.get("CUJIT_RUN_SLOW", "0") not in ("", "0")


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
    skip_slow = None if run_slow(config) else pytest.mark.skip(
        reason="slow: run with --runslow or CUJIT_RUN_SLOW=1")
    skip_compile = pytest.mark.skip(
        reason=f"needs the GPU toolchain ({', '.join(TOOLCHAIN_MISSING)} not installed): "
               "pip install 'cujit[cu13]'") if TOOLCHAIN_MISSING else None
    for item in items:
        marks = {m.name for m in item.iter_markers()}
        if skip_slow is not None and "slow" in marks:
            item.add_marker(skip_slow)
        if skip_compile is not None and "compile" in marks:
            item.add_marker(skip_compile)
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


# ---- fixtures shared by the runtime-layer tests (memory, runtime, streams) ----
@pytest.fixture
def ctx():
    """The current context, with both pending queues flushed so counts start at 0 (after a
    garbage collection, so objects of earlier tests caught in cycles cannot land in the
    queues during this test)."""
    import gc
    import cujit
    gc.collect()
    c = cujit.current_context()
    c.memory_manager.deallocations.clear()
    c.deallocations.clear()
    return c


@pytest.fixture(autouse=True)
def _restore_config():
    """Drop any ``cujit.config`` attribute override a test set."""
    yield
    from cujit.config import config
    config.reset()


@pytest.fixture
def count_calls(monkeypatch):
    """``count_calls(name)`` wraps driver method ``name``; returns a list that records the
    arguments of each call (the wrapper is an instance attribute, so code that looks the
    method up after this sees it)."""
    from cujit.driver import get_driver
    drv = get_driver()

    def wrap(name):
        calls = []
        real = getattr(drv, name)

        def wrapper(*args, **kwargs):
            calls.append(args)
            return real(*args, **kwargs)
        monkeypatch.setattr(drv, name, wrapper)
        return calls
    return wrap


@pytest.fixture
def pool(ctx):
    """The stream-ordered pool manager installed on ``ctx`` for the test, the context's own
    manager put back afterwards (its cache flushed and trimmed)."""
    from cujit.memory import PoolMemoryManager
    mm = PoolMemoryManager(context=ctx)
    mm.initialize()
    saved = ctx.memory_manager
    ctx.memory_manager = mm
    yield mm
    ctx.memory_manager = saved
    mm.deallocations.clear()
    mm.trim()


# ---- several devices: two simulated ones (CUJIT_SIM_DEVICES=2) or two GPUs ----
def gpu_count():
    """Devices cujit sees (0 when it sees no driver)."""
    import cujit
    try:
        return len(cujit.gpus)
    except Exception:
        return 0


@pytest.fixture
def two_sim_devices():
    """Two simulated devices for the test, peer tables emptied so that counts start at 0."""
    import cujit
    cujit.config.SIM_DEVICES = 2
    try:
        ctxs = [cujit.gpus[i].get_primary_context() for i in range(2)]
        for c in ctxs:
            c.peer_access.clear()
        yield ctxs
    finally:
        del cujit.config.SIM_DEVICES
        cujit.current_context()         # the main thread stays on device 0


@pytest.fixture
def two_gpus():
    """The primary contexts of two GPUs (skips with fewer)."""
    import cujit
    if gpu_count() < 2:
        pytest.skip("needs two GPUs (the nvidia-h200-x2 machine)")
    return [cujit.gpus[i].get_primary_context() for i in range(2)]


@pytest.fixture
def two_devices(request):
    """Two simulated devices on the simulator, two GPUs on a GPU machine (else skip)."""
    from cujit.driver import get_driver
    if get_driver().is_simulator:
        return request.getfixturevalue("two_sim_devices")
    return request.getfixturevalue("two_gpus")


@pytest.fixture
def checks():
    """``checks(on)`` sets ``cujit.config.SIM_CHECKS`` for one test; restored after."""
    from cujit.config import config

    def _set(on):
        config.SIM_CHECKS = bool(on)
    yield _set
    del config.SIM_CHECKS
