"""Code loaded as a CUDA library (``runtime/modules.py``'s Library and Function; what kernels
whose linked code has setup/teardown callbacks and numba's ``Context.create_module_ptx`` are
loaded as): the callbacks' order, count and argument, teardown at reset and at the deferred
unload, and the errors.  The library is loaded by a stand-in for the real driver's
cuda.core calls; the context, its deferred queue and its reset are the real ones."""
import gc
import warnings

import pytest

import cujit
from cujit.driver import get_driver
from cujit.driver.errors import CudaAPIError, CudaSupportError
from cujit.memory import DeallocationWarning
from cujit.runtime.modules import Function, Library


class FakeObjectCode:
    """cuda.core ``ObjectCode``: ``handle`` (its CUlibrary) and ``get_kernel``."""
    _next = [0x1000]

    def __init__(self, image=b""):
        self.image = image
        self._next[0] += 0x10
        self.handle = self._next[0]

    def get_kernel(self, name):
        return ("kernel", self.handle, name)


class LibraryDriver:
    """The library calls of CudaDriver, recorded."""

    def __init__(self):
        self.calls = []

    def library_load(self, image, name=""):
        self.calls.append(("load", name))
        return FakeObjectCode(image)

    def library_get_kernel(self, library, name):
        self.calls.append(("get_kernel", library.handle, name))
        return library.get_kernel(name)

    def kernel_get_function(self, kernel):
        self.calls.append(("get_function", kernel))
        return kernel[1] + 1

    def library_get_global(self, library, name):
        self.calls.append(("get_global", library.handle, name))
        return library.handle + 0x100, 4


@pytest.fixture
def ctx():
    c = cujit.current_context()
    yield c
    c.deallocations.clear()


def _drain(ctx):
    gc.collect()
    ctx.deallocations.clear()


def test_setup_calls_each_callback_once_with_the_object_code(ctx):
    seen = []
    code = FakeObjectCode()
    lib = Library(ctx, LibraryDriver(), code,
                  setup_callbacks=[lambda oc: seen.append(("a", oc)),
                                   lambda oc: seen.append(("b", oc))])
    assert lib.handle == code.handle and not lib.initialized
    lib.setup()
    assert seen == [("a", code), ("b", code)] and lib.initialized
    with pytest.raises(RuntimeError, match="already been set up"):
        lib.setup()
    assert len(seen) == 2


def test_a_failing_setup_leaves_the_library_not_set_up(ctx):
    def boom(oc):
        raise ValueError("no")
    lib = Library(ctx, LibraryDriver(), FakeObjectCode(), setup_callbacks=[boom])
    with pytest.raises(ValueError, match="no"):
        lib.setup()
    assert not lib.initialized


def test_teardown_runs_at_reset_with_the_object_code(ctx):
    torn = []
    code = FakeObjectCode()
    lib = Library(ctx, LibraryDriver(), code, teardown_callbacks=[torn.append])
    assert torn == []
    ctx.reset()
    assert torn == [code]
    lib.unload()            # already released by the reset: nothing more
    _drain(ctx)
    assert torn == [code]


def test_teardown_runs_when_the_queued_unload_of_a_dropped_library_runs(ctx):
    torn = []
    code = FakeObjectCode()
    lib = Library(ctx, LibraryDriver(), code, teardown_callbacks=[torn.append, torn.append])
    with ctx.defer_cleanup():
        del lib
        gc.collect()
        assert torn == []           # queued with the context's other releases
    _drain(ctx)
    assert torn == [code, code]


def test_unload_queues_the_teardown_once(ctx):
    torn = []
    lib = Library(ctx, LibraryDriver(), FakeObjectCode(), teardown_callbacks=[torn.append])
    lib.unload()
    lib.unload()
    _drain(ctx)
    assert len(torn) == 1
    ctx.unload_module(lib)
    _drain(ctx)
    assert len(torn) == 1


def test_the_release_drops_the_object_code(ctx):
    import weakref
    code = FakeObjectCode()
    ref = weakref.ref(code)
    lib = Library(ctx, LibraryDriver(), code, teardown_callbacks=[lambda oc: None])
    assert lib.object_code is code
    del code
    lib.unload()
    _drain(ctx)
    gc.collect()
    assert ref() is None and lib.object_code is None    # released though lib lives on
    with pytest.raises(CudaAPIError, match="unloaded"):
        lib.get_function("k")
    with pytest.raises(CudaAPIError, match="unloaded"):
        lib.get_global("g")
    with pytest.raises(CudaAPIError, match="unloaded"):
        lib.setup()


def test_a_failing_teardown_is_a_deallocation_warning_and_still_releases(ctx):
    import weakref

    def boom(oc):
        raise RuntimeError("teardown failed")
    code = FakeObjectCode()
    ref = weakref.ref(code)
    torn = []
    lib = Library(ctx, LibraryDriver(), code,
                  teardown_callbacks=[boom, lambda oc: torn.append(oc.handle)])
    del code
    lib.unload()
    with pytest.warns(DeallocationWarning, match="boom.*raised RuntimeError: teardown failed"):
        ctx.deallocations.clear()
    assert len(torn) == 1           # the next teardown still ran
    del lib
    gc.collect()
    assert ref() is None


def test_get_function_and_get_global_go_through_the_library(ctx):
    drv = LibraryDriver()
    lib = Library(ctx, drv, FakeObjectCode())
    fn = lib.get_function("k")
    assert isinstance(fn, Function)
    assert fn.kernel == ("kernel", lib.handle, "k") and fn.name == "k" and fn.module is lib
    assert int(fn) == fn.handle == lib.handle + 1
    assert lib.get_global("num") == (lib.handle + 0x100, 4)
    assert drv.calls == [("get_kernel", lib.handle, "k"),
                         ("get_function", ("kernel", lib.handle, "k")),
                         ("get_global", lib.handle, "num")]


@pytest.mark.parametrize("call", ["load_library", "create_module_image",
                                  "create_module_ptx"])
def test_a_module_image_must_be_bytes(ctx, call):
    with pytest.raises(TypeError, match="must be"):
        getattr(ctx, call)(1234)


def test_unload_module_refuses_other_objects(ctx):
    with pytest.raises(TypeError, match="Module or Library"):
        ctx.unload_module("module")


@pytest.mark.sim
def test_the_simulator_loads_no_library():
    ctx = cujit.current_context()
    with pytest.raises(CudaAPIError, match="cuLibraryLoadData"):
        ctx.create_module_ptx(".version 8.0\n.target sm_90\n")
    for name, args in (("library_get_kernel", (None, "k")), ("kernel_get_function", (None,)),
                       ("library_get_global", (None, "g"))):
        with pytest.raises(CudaAPIError):
            getattr(get_driver(), name)(*args)


def test_without_cuda_core_loading_a_library_says_what_to_install():
    pytest.importorskip("cuda.bindings")
    try:
        import cuda.core  # noqa: F401
        pytest.skip("cuda.core is installed here")
    except ImportError:
        pass
    from cujit.driver.cuda import CudaDriver
    with pytest.raises(CudaSupportError, match="pip install cuda-core"):
        CudaDriver.library_load(object(), b"\x7fELF", "k")


def test_every_warning_is_from_the_failing_teardown_only(ctx):
    # a teardown that succeeds leaves the flush silent
    lib = Library(ctx, LibraryDriver(), FakeObjectCode(), teardown_callbacks=[lambda oc: 0])
    lib.unload()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ctx.deallocations.clear()
