"""Kernels whose ``link=`` code has setup/teardown callbacks (numba-cuda's linkable code with
``setup_callback=``/``teardown_callback=``): ``launcher.load_kernel`` loads them as CUDA
libraries and runs the setups once per load, the teardowns when the library unloads; other
kernels stay modules.  Driven with a stand-in for the real driver's library calls over the
real context's deferred queue (the GPU run is test_link_callbacks_gpu.py)."""
import gc
from types import SimpleNamespace

import pytest

import cujit
from cujit.dispatch import launcher
from cujit.runtime.modules import Library

CUBIN = b"\x7fELF fake cubin"


class FakeObjectCode:
    handle = 0xABC0

    def __init__(self, image):
        self.image = image

    def get_kernel(self, name):
        return ("kernel", name)


class FakeDriver:
    """The calls ``load_kernel`` makes, for a library-loaded kernel."""
    function_ref = None

    def driver_version(self):
        return 13000

    def library_get_kernel(self, library, name):
        return library.get_kernel(name)

    def kernel_get_function(self, kernel):
        return 0xF00D

    def func_get_attribute(self, func, name):
        return {"SHARED_SIZE_BYTES": 0, "MAX_THREADS_PER_BLOCK": 1024}[name]


class Loads:
    """A context whose loads are recorded: libraries are real :class:`Library` objects over
    the real context (its queue and reset), modules are nothing."""

    def __init__(self, real, drv):
        self.real, self.drv, self.device, self.generation = real, drv, real.device, 0
        self.libraries, self.modules = [], []

    def load_library(self, image, name, setups, teardowns):
        lib = Library(self.real, self.drv, FakeObjectCode(image), setups, teardowns)
        self.libraries.append((image, name))
        return lib

    def load_module(self, image):
        self.modules.append(image)
        return SimpleNamespace(get_function=lambda name: 0xBEEF)


def compiled(*files):
    return SimpleNamespace(cubin=CUBIN, needs_cubin=True, ptx="", name="k", argtypes=(),
                           static_shared_bytes=0, link_files=files, launch_bounds=None,
                           shared_memory_carveout=None)


@pytest.fixture
def loads():
    real = cujit.current_context()
    yield Loads(real, FakeDriver())
    gc.collect()
    real.deallocations.clear()


def test_linked_callbacks_load_a_library_and_set_it_up_once(loads):
    events = []
    lib = cujit.CUSource("", setup_callback=lambda oc: events.append(("setup", oc.image)),
                         teardown_callback=lambda oc: events.append(("teardown", oc.image)))
    lk = launcher.load_kernel(compiled(lib, "other.ptx"), loads, loads.drv)
    assert loads.libraries == [(CUBIN, "k")] and loads.modules == []
    assert isinstance(lk.module, Library) and lk.module.initialized
    assert lk.info.handle == 0xF00D
    assert events == [("setup", CUBIN)]
    loads.real.reset()
    assert events == [("setup", CUBIN), ("teardown", CUBIN)]


def test_teardown_waits_for_the_unload_of_a_dropped_kernel(loads):
    events = []
    lib = cujit.PTXSource("", teardown_callback=lambda oc: events.append("teardown"))
    lk = launcher.load_kernel(compiled(lib), loads, loads.drv)
    assert not lk.module.initialized and events == []    # no setup callback: nothing run
    with loads.real.defer_cleanup():
        del lk
        gc.collect()
        assert events == []
    loads.real.deallocations.clear()
    assert events == ["teardown"]


def test_callbacks_of_every_linked_object_run_in_link_order(loads):
    events = []
    a = cujit.CUSource("a", setup_callback=lambda oc: events.append("a"))
    b = cujit.CUSource("b", setup_callback=lambda oc: events.append("b"))
    launcher.load_kernel(compiled(a, b), loads, loads.drv)
    assert events == ["a", "b"]


def test_a_failing_setup_fails_the_load(loads):
    def boom(oc):
        raise ValueError("setup refused")
    lib = cujit.CUSource("", setup_callback=boom)
    with pytest.raises(ValueError, match="setup refused"):
        launcher.load_kernel(compiled(lib), loads, loads.drv)


def test_kernels_without_callbacks_stay_modules(loads):
    lk = launcher.load_kernel(compiled(cujit.CUSource(""), "x.cu"), loads, loads.drv)
    assert loads.modules == [CUBIN] and loads.libraries == []
    assert lk.info.handle == 0xBEEF


def test_link_callbacks_reads_linkable_code_only():
    s, t = (lambda oc: 1), (lambda oc: 2)
    files = ("path.cu", cujit.CUSource("", setup_callback=s), cujit.PTXSource("",
             teardown_callback=t), cujit.LTOIR(b""))
    assert launcher.link_callbacks(files) == ((s,), (t,))
