"""Loaded CUDA modules (numba.cuda's ``Module``): what ``Context.load_module`` returns
(cujit.runtime.devices re-exports it)."""
import weakref

from ..driver import get_driver

__all__ = ["Module"]


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
