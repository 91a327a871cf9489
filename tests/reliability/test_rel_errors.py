"""Reliability (issue 16): each input that once misbehaved gives a clear typed error, and
nothing leaks.  These run on whichever backend the process has (simulator or GPU)."""
import gc
import os
import subprocess
import sys
import textwrap
import weakref
from pathlib import Path

import numpy as np
import pytest

import cujit
from cujit.arrays import dlpack
from cujit.driver import errors as drv_errors

ROOT = str(Path(__file__).resolve().parents[2])


# ---- np.from_dlpack(device_array): NumPy's own error, nothing kept --------------------------

def test_numpy_from_dlpack_of_device_array_is_numpys_error_and_frees_the_export():
    d = cujit.device_array(1000)
    ref = weakref.ref(d)
    before = len(dlpack._live)
    for _ in range(3):
        # NumPy's own error: RuntimeError before NumPy 2.5, BufferError from 2.5 on
        err = BufferError if np.lib.NumpyVersion(np.__version__) >= "2.5.0" else RuntimeError
        with pytest.raises(err, match="Unsupported device"):
            np.from_dlpack(d)
    assert len(dlpack._live) == before      # every export's keep-alive entry was dropped
    del d
    gc.collect()
    assert ref() is None


def test_unconsumed_capsule_still_frees_its_export():
    d = cujit.device_array(4)
    before = len(dlpack._live)
    cap = d.__dlpack__()
    assert len(dlpack._live) == before + 1
    del cap
    assert len(dlpack._live) == before


# ---- from_dlpack checks the producer's device -------------------------------------------------

class _Producer:
    """A DLPack producer that wraps a cujit array but reports ``device``."""

    def __init__(self, ary, device):
        self.ary, self.device = ary, device

    def __dlpack_device__(self):
        return self.device

    def __dlpack__(self, **kw):
        return self.ary.__dlpack__(**kw)


@pytest.mark.parametrize("device, exc, match", [
    ((dlpack.kDLCUDA, 5), ValueError, "device 5"),
    ((dlpack.kDLCUDA, -1), ValueError, "device -1"),
    ((dlpack.kDLCUDA,), ValueError, r"\(device_type, device_id\)"),
    ("cuda:0", ValueError, r"\(device_type, device_id\)"),
    ((dlpack.kDLCUDA, 0.0), ValueError, r"\(device_type, device_id\)"),
    ((dlpack.kDLCPU, 0), TypeError, "not CUDA"),
])
def test_from_dlpack_refuses_unknown_devices(device, exc, match):
    d = cujit.to_device(np.arange(4.0))
    before = len(dlpack._live)
    with pytest.raises(exc, match=match):
        cujit.from_dlpack(_Producer(d, device))
    assert len(dlpack._live) == before


def test_from_dlpack_refuses_a_capsule_of_another_device():
    d = cujit.to_device(np.arange(4.0))
    cap = d.__dlpack__(max_version=(1, 0))
    st = dlpack.DLManagedTensorVersioned.from_address(
        dlpack._PyCapsule_GetPointer(cap, b"dltensor_versioned"))
    st.dl_tensor.device.device_id = 7          # a device that does not exist
    with pytest.raises(ValueError, match="device 7"):
        cujit.from_dlpack(cap)
    before = len(dlpack._live)
    del cap                                     # not consumed: its destructor frees it
    assert len(dlpack._live) == before - 1


def test_from_dlpack_of_the_current_device_still_works():
    d = cujit.to_device(np.arange(4.0))
    e = cujit.from_dlpack(_Producer(d, (dlpack.kDLCUDA, cujit.get_current_device().id)))
    np.testing.assert_array_equal(e.copy_to_host(), np.arange(4.0))


# ---- malformed NUMBA_CUDA_MAX_PENDING_DEALLOCS_* ----------------------------------------------

@pytest.mark.parametrize("name, text", [
    ("NUMBA_CUDA_MAX_PENDING_DEALLOCS_COUNT", "ten"),
    ("NUMBA_CUDA_MAX_PENDING_DEALLOCS_COUNT", "-1"),
    ("NUMBA_CUDA_MAX_PENDING_DEALLOCS_COUNT", "2.5"),
    ("NUMBA_CUDA_MAX_PENDING_DEALLOCS_RATIO", "nan"),
    ("NUMBA_CUDA_MAX_PENDING_DEALLOCS_RATIO", "inf"),
    ("NUMBA_CUDA_MAX_PENDING_DEALLOCS_RATIO", "-0.5"),
    ("CUJIT_CUDA_MAX_PENDING_DEALLOCS_RATIO", "lots"),
])
def test_malformed_dealloc_setting_raises_at_allocation_and_queue_keeps_flushing(
        ctx, monkeypatch, name, text):
    q = ctx.memory_manager.deallocations
    failed0, freed0 = q.failed_count, q.freed_count
    keep = [cujit.device_array(100) for _ in range(30)]
    monkeypatch.setenv(name, text)
    for fn in (lambda: cujit.device_array(10), lambda: cujit.mapped_array(10),
               lambda: ctx.memalloc(10)):
        with pytest.raises(ValueError, match=name):
            fn()
    del keep                    # 30 frees inside finalisers: the default limit (10) flushes
    assert len(q) <= 10 and q.freed_count - freed0 >= 20
    assert q.failed_count == failed0
    with cujit.defer_cleanup():  # its exit reads the limits too: never raises
        pass
    monkeypatch.delenv(name)
    cujit.device_array(10)      # fixed: allocations work again


# ---- NumPy's casting rules for setitem and copy sources ---------------------------------------

def _numpy_outcome(dtype, shape, key, value):
    ref = np.zeros(shape, dtype)
    try:
        ref[key] = value
    except Exception as exc:        # noqa: BLE001 - compare whatever NumPy raises
        return type(exc), None
    return None, ref


_CAST_CASES = [
    (np.int8, np.int64(300)), (np.int8, 300), (np.int8, -129), (np.uint8, -1),
    (np.uint8, np.int64(-1)), (np.int32, np.float64("nan")), (np.int32, float("nan")),
    (np.int32, np.float32("inf")), (np.int32, np.float64(1e20)), (np.int16, np.uint64(2**63)),
    (np.bool_, np.int64(3)), (np.int8, np.array([300])), (np.int8, [300]),
    (np.int8, [np.int64(300)]), (np.int32, "abc"), (np.float32, np.float64(1.5)),
    (np.int64, np.uint64(2**64 - 1)), (np.uint32, True), (np.int8, (1, np.int64(200))),
]


@pytest.mark.parametrize("dtype, value", _CAST_CASES,
                         ids=[f"{np.dtype(d).name}<-{v!r}" for d, v in _CAST_CASES])
@pytest.mark.parametrize("key", [0, slice(0, 2)], ids=["elem", "slice"])
def test_setitem_casts_as_numpy(dtype, value, key):
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        exc, ref = _numpy_outcome(dtype, 2, key, value)
        d = cujit.to_device(np.zeros(2, dtype))
        if exc is not None:
            with pytest.raises(exc):
                d[key] = value
            np.testing.assert_array_equal(d.copy_to_host(), np.zeros(2, dtype))  # untouched
        else:
            d[key] = value
            np.testing.assert_array_equal(d.copy_to_host(), ref)


def test_copy_to_device_of_a_numpy_scalar_checks_range():
    d = cujit.device_array((), np.int8)
    with pytest.raises(OverflowError):
        d.copy_to_device(np.int64(300))
    d.copy_to_device(np.int64(100))
    assert d.copy_to_host()[()] == 100


@pytest.mark.parametrize("value", [np.array([300]), np.array([7], np.int8), np.array(300),
                                   [5], np.int16(-3)], ids=repr)
def test_setitem_of_one_element_follows_numpy(value):
    exc, ref = _numpy_outcome(np.int8, 3, 2, value)
    d = cujit.to_device(np.zeros(3, np.int8))
    if exc is not None:
        with pytest.raises(exc):
            d[2] = value
    else:
        d[2] = value
        np.testing.assert_array_equal(d.copy_to_host(), ref)


def test_record_field_setitem_casts_as_numpy():
    dt = np.dtype([("a", np.int8), ("b", np.float64)])
    rec = cujit.to_device(np.zeros((), dt)[()])
    with pytest.raises(OverflowError):
        rec["a"] = np.int64(300)
    rec["a"] = np.int64(5)
    assert rec.copy_to_host()["a"] == 5


# ---- sizes and handles that do not fit ---------------------------------------------------------

@pytest.mark.parametrize("make", [cujit.pinned_array, cujit.mapped_array, cujit.device_array],
                         ids=["pinned", "mapped", "device"])
@pytest.mark.parametrize("shape", [2**63, (2**62, 4), (2**40, 2**40)])
def test_allocation_sizes_past_the_address_space_are_value_errors(make, shape):
    with pytest.raises(ValueError, match="allocation size"):
        make(shape)


@pytest.mark.parametrize("handle", [2**64, 2**64 + 5, 2**100])
def test_external_stream_refuses_handles_past_64_bits(handle):
    with pytest.raises(ValueError, match="64-bit"):
        cujit.external_stream(handle)


def test_external_stream_accepts_the_largest_pointer():
    s = cujit.external_stream(2**64 - 1)
    assert s.handle == 2**64 - 1


# ---- sticky errors (CUDA_ERROR_ILLEGAL_ADDRESS): the messages, without faulting a GPU ------

def test_sticky_error_names_the_kernel_then_every_failure_says_restart(monkeypatch):
    monkeypatch.setattr(drv_errors, "_sticky", None)
    monkeypatch.setattr(drv_errors, "last_launch", ["scale(array(float64, 1d, C))"])
    first = drv_errors.api_error(700, call="cuCtxSynchronize")
    assert isinstance(first, cujit.CudaAPIError) and first.code == 700
    assert "CUDA_ERROR_ILLEGAL_ADDRESS" in str(first)
    assert "scale(array(float64, 1d, C))" in str(first) and "restart the process" in str(first)
    for code, call in ((700, "cuMemAlloc"), (201, "cuStreamCreate")):
        later = drv_errors.api_error(code, call=call)
        assert later.code == code and call in str(later)
        assert "unusable since CUDA_ERROR_ILLEGAL_ADDRESS" in str(later)
        assert "restart the process" in str(later)


def test_non_sticky_errors_are_unchanged(monkeypatch):
    monkeypatch.setattr(drv_errors, "_sticky", None)
    e = drv_errors.api_error(2, "42 bytes", "cuMemAlloc")
    assert str(e) == "[2] cuMemAlloc failed with CUDA_ERROR_OUT_OF_MEMORY: 42 bytes"
    assert drv_errors._sticky is None


# ---- fork after initialisation -----------------------------------------------------------------

_FORK_CHILD = textwrap.dedent("""
    import os, sys
    import numpy as np
    import cujit as cuda

    @cuda.jit
    def k(x):
        x[0] = 1

    a = cuda.to_device(np.arange(4.0))
    k[1, 1](a)
    pid = os.fork()
    if pid == 0:
        failures = 0
        for what, fn in (("device_array", lambda: cuda.device_array(3)),
                         ("copy_to_host", lambda: a.copy_to_host()),
                         ("launch", lambda: k[1, 1](a)),
                         ("memory info", lambda: cuda.current_context().get_memory_info()),
                         ("stream", lambda: cuda.stream())):
            try:
                fn()
                print("NO ERROR", what)
                failures += 1
            except cuda.CudaDriverError as e:
                if not str(e).startswith("CUDA initialized before forking: process "):
                    print("WRONG", what, e)
                    failures += 1
        del a
        os._exit(failures)
    _, status = os.waitpid(pid, 0)
    print("child", os.waitstatus_to_exitcode(status))
    print("parent", a.copy_to_host().tolist())
""")


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_cuda_use_in_a_forked_child_raises(tmp_path):
    script = tmp_path / "fork_child.py"
    script.write_text(_FORK_CHILD)
    r = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                       timeout=300, env=dict(os.environ, PYTHONPATH=ROOT))
    assert r.returncode == 0, r.stderr
    assert "child 0" in r.stdout, r.stdout + r.stderr
    assert "parent [1.0, 1.0, 2.0, 3.0]" in r.stdout


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_fork_before_initialisation_is_fine(tmp_path):
    script = tmp_path / "fork_early.py"
    script.write_text(textwrap.dedent("""
        import os
        import numpy as np
        import cujit as cuda
        pid = os.fork()
        if pid == 0:
            ok = cuda.to_device(np.arange(3.0)).copy_to_host().tolist() == [0.0, 1.0, 2.0]
            os._exit(0 if ok else 1)
        _, status = os.waitpid(pid, 0)
        print("child", os.waitstatus_to_exitcode(status))
    """))
    r = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                       timeout=300, env=dict(os.environ, PYTHONPATH=ROOT))
    assert "child 0" in r.stdout, r.stdout + r.stderr


# ---- the shared primary context: reset/close free only what cujit made -----------------------

def test_reset_and_close_leave_other_libraries_memory_alone(count_calls):
    """Memory another library allocated in the primary context (a raw driver allocation here,
    CuPy/PyTorch on the GPU: test_rel_gpu.py) survives cujit's reset and close; cujit's own
    memory is freed; the context itself is never reset."""
    from cujit.driver import get_driver
    drv = get_driver()
    resets = count_calls("primary_ctx_reset")
    releases = count_calls("primary_ctx_release")
    ctx = cujit.current_context()
    dev = ctx.device.id
    theirs = drv.primary_ctx_retain(dev)     # the other library's own hold, as CuPy's runtime
    foreign = drv.mem_alloc(256)
    data = np.arange(32, dtype=np.float64)
    drv.memcpy_htod(foreign, data.ctypes.data, 256)
    mine = cujit.to_device(np.ones(1000))
    live0 = ctx.memory_manager.get_stats().live_allocations
    assert live0 >= 1
    ctx.reset()
    assert ctx.memory_manager.get_stats().live_allocations == 0
    cujit.close()
    assert resets == [] and len(releases) >= 1
    drv.ctx_set_current(theirs)
    out = np.zeros(32)
    drv.memcpy_dtoh(out.ctypes.data, foreign, 256)      # still valid after close
    np.testing.assert_array_equal(out, data)
    drv.mem_free(foreign)
    drv.primary_ctx_release(dev)
    del mine
    again = cujit.to_device(np.arange(3.0))             # cujit works after close
    assert again.copy_to_host().tolist() == [0.0, 1.0, 2.0]


def test_the_fast_launch_path_records_the_kernel_a_sticky_error_names(monkeypatch):
    """A fault shows at a later call; the launcher leaves the name of the kernel it
    launched last where api_error finds it (one list store, no driver call)."""
    import threading
    from cujit.runtime import devices
    from cujit.dispatch import launcher as ln

    class Drv:
        is_simulator = False

        def raw_launch(self, *args):
            return (700,)       # as if an earlier kernel's fault surfaced at this launch

    class Ctx:
        device = type("Dev", (), {"id": 0})()
        generation = 0
        closed = False

    ctx = Ctx()
    monkeypatch.setattr(devices._tls, "ctx", ctx, raising=False)
    monkeypatch.setattr(drv_errors, "_sticky", None)
    lk = ln.LoadedKernel()
    lk.context, lk.generation, lk.lock, lk.cu_func = ctx, 0, threading.Lock(), "FN"
    lk.info = ln.FunctionInfo(1, "_Z6kernelPd", 1024, 0, 49152, 232448)
    lk.packer = ln.ArgPacker(())
    fast = ln.make_fast(lk, (), Drv(), "saxpy(float32, array(float32, 1d, C))")
    cfg = ln.make_config(1, 32, 0, 0, 0)
    cfg.ok.add(lk.info)
    with pytest.raises(cujit.CudaAPIError) as ei:
        fast(cfg, ())
    assert ei.value.code == 700
    assert "saxpy(float32, array(float32, 1d, C))" in str(ei.value)
    assert "restart the process" in str(ei.value)


@pytest.mark.serial
def test_pool_manager_blocks_are_given_back_after_reset():
    """The caching pool's cache is trimmed by a reset, and a block still live at the reset
    (the context is not destroyed any more) is freed when its pointer dies."""
    from cujit.memory import PoolMemoryManager
    ctx = cujit.current_context()
    old_manager = ctx.memory_manager
    ctx.memory_manager = PoolMemoryManager(context=ctx)
    try:
        gc.collect()
        free0 = ctx.get_memory_info().free
        live = cujit.device_array(4 << 20)              # 32 MiB each
        cached = cujit.device_array(4 << 20)
        del cached                                      # back to the pool's cache
        assert free0 - ctx.get_memory_info().free >= 60 << 20
        ctx.reset()
        used = free0 - ctx.get_memory_info().free
        assert (31 << 20) <= used <= (33 << 20)          # only the live block is left
        del live
        gc.collect()
        assert abs(free0 - ctx.get_memory_info().free) <= 1 << 20
    finally:
        ctx.memory_manager = old_manager


@pytest.mark.parametrize("name", ["NUMBA_CUDA_MAX_PENDING_DEALLOCS_COUNT",
                                  "NUMBA_CUDA_MAX_PENDING_DEALLOCS_RATIO"])
def test_pool_manager_checks_dealloc_settings_at_allocation(monkeypatch, name):
    """Every built-in manager reports a malformed setting at allocation, the pool too: on a
    cache hit as well as on a miss."""
    from cujit.memory import PoolMemoryManager
    ctx = cujit.current_context()
    old_manager = ctx.memory_manager
    ctx.memory_manager = PoolMemoryManager(context=ctx)
    try:
        a = ctx.memalloc(4096)
        del a                                           # cached: the next 4096 is a hit
        monkeypatch.setenv(name, "ten")
        for size in (4096, 1 << 20):
            with pytest.raises(ValueError, match=name):
                ctx.memalloc(size)
        monkeypatch.delenv(name)
        assert ctx.memalloc(4096).size == 4096
    finally:
        ctx.memory_manager = old_manager
