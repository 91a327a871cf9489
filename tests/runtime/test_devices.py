"""Devices and contexts, R-DEV-1..3, and the import/exit guarantees."""
import os
import subprocess
import sys
import threading

import numpy as np
import pytest

import cujit
from cujit.driver import get_driver
from cujit.driver.errors import CudaAPIError, CudaDriverError, CudaSupportError


def _env_for_same_backend():
    env = dict(os.environ)
    env["PYTHONPATH"] = os.path.dirname(os.path.dirname(cujit.__file__)) + os.pathsep + \
        env.get("PYTHONPATH", "")
    return env


def test_select_and_current_device():
    dev = cujit.select_device(0)
    assert isinstance(dev, cujit.Device) and dev.id == 0
    assert cujit.get_current_device() is dev
    assert cujit.current_context().device is dev
    assert cujit.current_context() is cujit.current_context()


@pytest.mark.parametrize("bad,exc", [(1.5, TypeError), ("0", TypeError), (None, TypeError),
                                     (99, IndexError), (-1, IndexError)])
def test_select_device_bad_input(bad, exc):
    with pytest.raises(exc, match="device id"):
        cujit.select_device(bad)
    assert cujit.get_current_device().id == 0


def test_device_list_and_gpus():
    devs = cujit.list_devices()
    assert len(devs) >= 1 and len(cujit.gpus) == len(devs)
    ids = [g.id for g in cujit.gpus]
    assert ids == list(range(len(devs)))
    with cujit.gpus[0]:
        assert cujit.get_current_device().id == 0
        assert cujit.gpus.current.id == 0
    assert cujit.gpus[0].name == cujit.get_current_device().name
    with pytest.raises(IndexError):
        cujit.gpus[len(devs)]


def test_device_attributes():
    dev = cujit.get_current_device()
    assert isinstance(dev.name, str) and dev.name
    major, minor = dev.compute_capability
    assert isinstance(major, int) and major >= 3 and isinstance(minor, int)
    assert dev.MAX_THREADS_PER_BLOCK >= 512
    assert dev.MAX_SHARED_MEMORY_PER_BLOCK >= 16384
    assert dev.CAN_MAP_HOST_MEMORY in (0, 1) and dev.WARP_SIZE == 32
    assert dev.uuid.startswith("GPU-")
    with pytest.raises(AttributeError, match="NO_SUCH"):
        dev.NO_SUCH_ATTRIBUTE


def test_context_members_r_dev_2():
    ctx = cujit.current_context()
    for name in ("memory_manager", "deallocations", "get_memory_info", "memalloc",
                 "memhostalloc", "mempin", "memallocmanaged", "create_stream", "create_event",
                 "get_default_stream", "get_legacy_default_stream",
                 "get_per_thread_default_stream", "defer_cleanup", "synchronize", "reset",
                 "device", "load_module", "create_external_stream"):
        assert hasattr(ctx, name), name
    assert hasattr(ctx.memory_manager, "deallocations")
    assert ctx.deallocations is ctx.memory_manager.deallocations     # numba: one queue
    ctx.synchronize()
    cujit.synchronize()


def test_detect_and_is_available(capsys):
    assert cujit.is_available() is True
    assert cujit.detect() is True
    out = capsys.readouterr().out
    assert "Found" in out and "SUPPORTED" in out


def test_cuda_api_error_names_call_and_code():
    with pytest.raises(CudaAPIError) as err:
        get_driver().mem_free(0xDEAD0000)
    e = err.value
    assert isinstance(e, CudaDriverError) and e.code != 0
    assert e.name.startswith("CUDA_ERROR_") and e.call == "cuMemFree"
    assert "cuMemFree" in str(e) and e.name in str(e)
    assert issubclass(CudaSupportError, ImportError)


def test_contexts_across_threads(ctx):
    """Another thread gets the same context, allocates, and frees memory of this thread."""
    q = ctx.memory_manager.deallocations
    mine = [ctx.memalloc(64) for _ in range(10)]
    out, errors = {}, []

    def worker():
        try:
            c = cujit.current_context()
            p = c.memalloc(128)
            p.memset(4)
            host = np.zeros(128, np.uint8)
            get_driver().memcpy_dtoh(host.ctypes.data, p.device_pointer_value, 128)
            out["ctx"] = c
            out["sum"] = int(host.sum())
            failed = q.failed_count
            mine.clear()                # 10 frees queued here...
            del p                       # ...the 11th flushes them from this thread
            out["len"] = len(q)
            out["failed"] = q.failed_count - failed
        except Exception as exc:  # pragma: no cover - reported below
            errors.append(exc)

    t = threading.Thread(target=worker)
    t.start()
    t.join()
    assert errors == []
    assert out == {"ctx": ctx, "sum": 512, "len": 0, "failed": 0}


def test_load_module_type_check():
    ctx = cujit.current_context()
    with pytest.raises(TypeError, match="bytes"):
        ctx.load_module("not bytes")


@pytest.mark.gpu
def test_load_module_unloads_through_context_queue(count_calls):
    ctx = cujit.current_context()
    ctx.deallocations.clear()
    unloads = count_calls("module_unload")
    ptx = (b".version 8.0\n.target sm_90\n.address_size 64\n"
           b".visible .entry k() { ret; }\n\0")
    mod = ctx.load_module(ptx)
    assert mod.handle != 0 and mod.get_function("k") != 0
    h = mod.handle
    del mod
    assert len(ctx.deallocations) == 1 and unloads == []
    ctx.deallocations.clear()
    assert unloads == [(h,)]


def test_import_is_lazy_and_never_needs_a_gpu():
    code = ("import sys, time; t = time.perf_counter(); import cujit; "
            "dt = time.perf_counter() - t; "
            "assert 'cujit.runtime.devices' not in sys.modules and 'numpy' not in sys.modules; "
            "print(dt)")
    env = _env_for_same_backend()
    env.pop("CUJIT_ENABLE_CUDASIM", None)
    env.pop("NUMBA_ENABLE_CUDASIM", None)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert r.returncode == 0, r.stderr
    assert float(r.stdout) < 1.0


def test_no_driver_is_cuda_support_error_at_first_use(on_gpu):
    if on_gpu:
        pytest.skip("a driver is present")
    code = ("import cujit\n"
            "try:\n    cujit.current_context()\n"
            "except cujit.CudaSupportError as e:\n"
            "    print('support-error', isinstance(e, ImportError))\n"
            "print(cujit.is_available())\n")
    env = _env_for_same_backend()
    env.pop("CUJIT_ENABLE_CUDASIM", None)
    env.pop("NUMBA_ENABLE_CUDASIM", None)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["support-error", "True", "False"]


def test_exit_with_live_memory_is_clean():
    """R-DEA-6: live allocations, queued frees, streams and events at exit: no output."""
    code = ("import numpy as np, cujit\n"
            "ctx = cujit.current_context()\n"
            "keep = [ctx.memalloc(1024) for _ in range(50)]\n"
            "drop = [ctx.memalloc(64) for _ in range(5)]; del drop\n"
            "pin = ctx.memhostalloc(4096); mapped = ctx.memhostalloc(4096, mapped=True)\n"
            "h = np.zeros(8192, np.uint8); p = ctx.mempin(h, h.ctypes.data, h.nbytes)\n"
            "s = cujit.stream(); e = cujit.event(); e.record(s)\n"
            "m = ctx.memallocmanaged(256)\n"
            "cyc = ctx.memalloc(8); cyc.me = cyc; del cyc\n"     # freed only by the GC
            "class Holder: pass\n"
            "Holder.p = ctx.memalloc(16)\n")                     # dies at module teardown
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       env=_env_for_same_backend())
    assert (r.returncode, r.stdout, r.stderr) == (0, "", "")


def test_device_identity_and_unload_module_type_check():
    dev = cujit.get_current_device()
    ident = dev.get_device_identity()
    assert set(ident) == {"pci_domain_id", "pci_bus_id", "pci_device_id"}
    assert all(isinstance(v, int) for v in ident.values())
    with pytest.raises(TypeError, match="Module"):
        cujit.current_context().unload_module(12345)


# ---- the runtime layer's public contract (docs/interfaces.md): generation, closed, make_current
def test_context_contract_generation_closed_make_current():
    ctx = cujit.current_context()
    gen = ctx.generation
    assert ctx.closed is False
    ctx.make_current()
    ctx.reset()
    assert ctx.generation == gen + 1
    assert ctx.closed is False


def test_default_context_is_the_current_context():
    from cujit.driver import default_context
    assert default_context() is cujit.current_context()


def test_default_context_without_provider_raises(monkeypatch):
    import cujit.driver as drv
    monkeypatch.setattr(drv, "_context_provider", None)
    with pytest.raises(drv.CudaSupportError, match="no context provider"):
        drv.default_context()


def test_pointer_memset_takes_stream_through_context():
    mem = cujit.current_context().memalloc(16)
    mem.memset(7, stream=cujit.stream())
    with pytest.raises(TypeError, match="3.5"):
        mem.memset(7, stream=3.5)


