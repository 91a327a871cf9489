"""Loaded CUDA code: :class:`Module` (cuModuleLoadData; what ``Context.load_module`` returns
and what kernels are loaded as) and :class:`Library` (cuLibraryLoadData through cuda.core's
``ObjectCode``; what kernels whose linked code has setup/teardown callbacks are loaded as, and
what numba's ``Context.create_module_ptx``/``create_module_image`` return), with the
:class:`Function` a library gives (cujit.runtime.devices re-exports them)."""
import weakref

from ..driver import get_driver
from ..driver.errors import CUDA_ERROR_INVALID_HANDLE, CudaAPIError

__all__ = ["Module", "Library", "Function"]


class Module:
    """A loaded CUDA module (cuModuleLoadData).  ``handle`` is the driver handle (int).

    Unloaded (cuModuleUnload, through ``context.deallocations``) when this object dies; keep
    it alive as long as functions from it are used."""

    __slots__ = ("handle", "context", "_finalizer", "__weakref__")

    def __init__(self, context, handle):
        self.handle = handle
        self.context = context
        self._finalizer = weakref.finalize(self, context._queue_resource, _unload_module,
                                           handle, context.generation)

    def __int__(self):
        return self.handle

    def get_function(self, name):
        """Handle (int) of kernel ``name`` (cuModuleGetFunction)."""
        self.context.make_current()
        return get_driver().module_get_function(self.handle, name)

    def get_global(self, name):
        """``(device_ptr, nbytes)`` of global ``name`` (cuModuleGetGlobal)."""
        self.context.make_current()
        return get_driver().module_get_global(self.handle, name)

    def unload(self):
        """Queue the unload now (idempotent)."""
        self._finalizer()

    def __repr__(self):
        return f"<CUDA module {self.handle:#x} on {self.context!r}>"


def _unload_module(handle):
    get_driver().module_unload(handle)


class Library:
    """Code loaded as a CUDA library (cuLibraryLoadData, through cuda.core's ``ObjectCode``,
    as numba-cuda loads every module).  ``object_code``: the cuda.core ObjectCode;
    ``handle``: its ``CUlibrary`` (int); ``context``: the context it was loaded for (a
    library is context-independent; its functions and globals are looked up in this one);
    ``initialized``: True once :meth:`setup` ran.

    ``setup_callbacks`` and ``teardown_callbacks`` (sequences of callables taking the
    ObjectCode; numba-cuda's linkable code's ``setup_callback``/``teardown_callback``):
    :meth:`setup` calls the first (RuntimeError when called twice, CudaAPIError once
    unloaded); the second are called when the library unloads, which is
    when this object dies (through ``context.deallocations``, like a module's unload) or
    :meth:`unload` is called, and at once by ``Context.reset()`` and ``cujit.close()``.  After
    the teardowns cujit drops its reference to the ObjectCode, and cuda.core unloads the
    library once nobody else holds it.  A teardown that raises does not stop the others;
    the release reports it as a DeallocationWarning (a RuntimeError naming the callback)."""

    __slots__ = ("handle", "context", "initialized", "_setups", "_drv", "_loaded",
                 "_finalizer", "__weakref__")

    def __init__(self, context, drv, object_code, setup_callbacks=(),
                 teardown_callbacks=()):
        self.context = context
        self.handle = int(object_code.handle)
        self.initialized = False
        self._setups = tuple(setup_callbacks)
        self._drv = drv
        # the one strong reference cujit keeps to the ObjectCode, dropped by the release (so
        # that a Library a kernel still names after a reset does not keep the code loaded)
        self._loaded = _LoadedLibrary(object_code, self.handle, tuple(teardown_callbacks))
        self._finalizer = weakref.finalize(self, context._queue_resource, _unload_library,
                                           self._loaded, context.generation)

    @property
    def object_code(self):
        """The cuda.core ``ObjectCode``; None once the library was released."""
        return self._loaded.object_code

    def _code(self):
        code = self._loaded.object_code
        if code is None:
            raise CudaAPIError(CUDA_ERROR_INVALID_HANDLE, f"{self!r} was unloaded",
                               "cuLibraryGetKernel")
        return code

    def __int__(self):
        return self.handle

    def setup(self):
        """Call each setup callback with the ObjectCode, in order (numba-cuda's
        ``CudaPythonModule.setup``, which its dispatcher calls once per loaded module before
        the first launch).  RuntimeError when already set up; an exception of a callback
        propagates (the library is not marked set up)."""
        if self.initialized:
            raise RuntimeError(f"{self!r} has already been set up")
        code = self._code()
        for f in self._setups:
            f(code)
        self.initialized = True

    def get_function(self, name):
        """The :class:`Function` of kernel ``name`` (str) in this library's context
        (cuLibraryGetKernel, cuKernelGetFunction); CudaAPIError when there is none or
        the library was unloaded."""
        code = self._code()
        self.context.make_current()
        kernel = self._drv.library_get_kernel(code, name)
        return Function(self, kernel, self._drv.kernel_get_function(kernel), name)

    def get_global(self, name):
        """``(device_ptr, nbytes)`` of global ``name`` (str) (cuLibraryGetGlobal);
        CudaAPIError when there is none or the library was unloaded."""
        code = self._code()
        self.context.make_current()
        return self._drv.library_get_global(code, name)

    def unload(self):
        """Queue the teardown callbacks and the release of the library now (idempotent)."""
        self._finalizer()

    def __repr__(self):
        return f"<CUDA library {self.handle:#x} on {self.context!r}>"


class Function:
    """A kernel of a :class:`Library` (numba-cuda's ``Function``): ``handle`` (the
    ``CUfunction`` in the library's context, int; also ``int(f)``), ``kernel`` (the cuda.core
    ``Kernel``, which ``cuda.core.launch`` takes), ``name`` (str), ``module`` (the Library,
    kept loaded while the Function lives)."""

    __slots__ = ("module", "kernel", "handle", "name")

    def __init__(self, module, kernel, handle, name):
        self.module, self.kernel, self.handle, self.name = module, kernel, handle, name

    def __int__(self):
        return self.handle

    def __repr__(self):
        return f"<CUDA function {self.name} of {self.module!r}>"


class _LoadedLibrary:
    """What a :class:`Library`'s queued release needs once the Library is gone: the
    ObjectCode (whose reference keeps the library loaded) and the teardown callbacks."""

    __slots__ = ("object_code", "handle", "teardowns")

    def __init__(self, object_code, handle, teardowns):
        self.object_code, self.handle, self.teardowns = object_code, handle, teardowns

    def __repr__(self):
        return f"<CUDA library {self.handle:#x}>"


def _unload_library(loaded):
    code, loaded.object_code = loaded.object_code, None
    failed = []
    for f in loaded.teardowns:
        try:
            f(code)
        except Exception as exc:
            failed.append(f"{f!r} raised {type(exc).__name__}: {exc}")
    # cujit's last reference: cuda.core unloads the library once it holds the last one (the
    # error raised below carries no frame that still holds it)
    del code
    if failed:
        raise RuntimeError(f"teardown callback of {loaded!r}: {'; '.join(failed)}")
