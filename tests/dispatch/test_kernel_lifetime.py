"""A kernel's artefacts live on its dispatcher: dropping the dispatcher frees its source, its
typings, its generated or compiled code (on the GPU its module is unloaded through the
context's deferred queue) and the globals it captured (issues 24 and 25)."""
import gc
import tracemalloc
from collections import Counter
import weakref

import numpy as np
import pytest

import cujit as cuda

_N = 1 << 17        # float64 elements: 1 MiB


def _flush():
    gc.collect()
    ctx = cuda.current_context()
    ctx.deallocations.clear()
    ctx.memory_manager.deallocations.clear()


def _make_kernel(i):
    """A kernel made by a factory: a closure over a 1 MiB device array and a small host array
    (frozen into the kernel as a constant, as numba does)."""
    data = cuda.to_device(np.full(_N, float(i)))
    scale = np.array([2.0, 3.0])

    @cuda.jit
    def k(out):
        j = cuda.grid(1)
        if j < out.size:
            out[j] = data[j] * scale[0]
    return k, data


def _sim_artefacts(k):
    sim = k.sim_kernel
    tk, = sim.prepared.values()
    return {"kernel": k, "py_func": k.py_func, "source": k.source(), "sim kernel": sim,
            "typed function": tk.fn, "typing": tk.typing,
            "frozen global": tk.fn.__globals__["scale"]}


def _launch_and_drop(count, out, artefacts):
    refs = []
    for i in range(count):
        k, data = _make_kernel(i)
        k[1, 32](out)
        assert out.copy_to_host()[:2].tolist() == [2.0 * i, 2.0 * i]
        owned = artefacts(k)
        owned["captured global"] = data
        refs.append({name: weakref.ref(v) for name, v in owned.items()})
        del k, data, owned
    return refs


@pytest.mark.sim
@pytest.mark.parametrize("count", [40, pytest.param(1000, marks=pytest.mark.slow)])
def test_dropped_kernels_free_all_they_own(count):
    out = cuda.device_array(32)
    mm = cuda.current_context().memory_manager
    _launch_and_drop(2, out, _sim_artefacts)        # imports and one-time tables
    _flush()
    in_use = mm.get_stats().bytes_in_use
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        refs = _launch_and_drop(count, out, _sim_artefacts)
        _flush()
        grown = tracemalloc.get_traced_memory()[0] - base
    finally:
        tracemalloc.stop()
    alive = {name: sum(r[name]() is not None for r in refs) for name in refs[0]}
    assert alive == dict.fromkeys(refs[0], 0)
    assert mm.get_stats().bytes_in_use == in_use
    # count MiB of captured device memory went through the process: what remains is the
    # weak references themselves (about 1 KiB a kernel) and interpreter caches, far below
    # one kernel's MiB each
    assert grown < (4 << 20) + count * 2048, grown


@pytest.mark.sim
def test_a_kernel_keeps_its_device_functions_alive_not_the_reverse():
    def make():
        @cuda.jit(device=True)
        def twice(x):
            return 2 * x

        @cuda.jit
        def k(out):
            out[0] = twice(out[0])
        return k, twice

    k, dev = make()
    out = cuda.to_device(np.array([3.0]))
    k[1, 1](out)
    assert out.copy_to_host()[0] == 6.0
    kref, dref = weakref.ref(k), weakref.ref(dev)
    del dev
    gc.collect()
    assert dref() is not None           # the kernel calls it
    k2 = kref()
    k2[1, 1](out)
    assert out.copy_to_host()[0] == 12.0
    dev = dref()
    del k, k2
    gc.collect()
    assert kref() is None and dref() is dev      # the device function outlives the kernel
    del dev
    gc.collect()
    assert dref() is None


@pytest.mark.sim
def test_launches_reuse_the_kernels_typing():
    k, _ = _make_kernel(1)
    out = cuda.device_array(32)
    k[1, 32](out)
    tk = k.sim_kernel.prepared.copy()
    k[1, 32](out)
    assert k.sim_kernel.prepared == tk          # typed once per signature, kept by the kernel
    assert out.copy_to_host()[0] == 2.0


def _gpu_artefacts(k):
    spec, = k.overloads.values()
    lk, = spec._loaded.values()
    return {"kernel": k, "py_func": k.py_func, "source": k.source(), "compiled": spec,
            "module": lk.module}


@pytest.mark.gpu
@pytest.mark.parametrize("count", [10, pytest.param(1000, marks=pytest.mark.slow)])
def test_dropped_kernels_unload_their_modules(monkeypatch, count):
    from cujit.driver import get_driver
    drv = get_driver()
    unloaded = []
    real = drv.module_unload

    def counting(handle):
        unloaded.append(handle)
        return real(handle)
    monkeypatch.setattr(drv, "module_unload", counting)
    out = cuda.device_array(32)
    handles = []

    def artefacts(k):
        owned = _gpu_artefacts(k)
        handles.append(owned["module"].handle)
        return owned
    in_use = cuda.current_context().memory_manager.get_stats().bytes_in_use
    refs = _launch_and_drop(count, out, artefacts)
    _flush()
    alive = {name: sum(r[name]() is not None for r in refs) for name in refs[0]}
    assert alive == dict.fromkeys(refs[0], 0)
    # each module unloaded, through the context's deferred queue (a handle the driver gave
    # again after an unload counts once per load)
    made, gone = Counter(handles), Counter(unloaded)
    assert len(handles) == count and all(gone[h] >= n for h, n in made.items())
    assert cuda.current_context().memory_manager.get_stats().bytes_in_use == in_use
