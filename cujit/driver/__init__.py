"""The driver layer: the only code that talks to a CUDA driver.

:func:`get_driver` returns the process's backend, chosen at first use: the simulator's fake
driver when ``CUJIT_ENABLE_CUDASIM=1`` / ``NUMBA_ENABLE_CUDASIM=1``, otherwise the real driver
through cuda-bindings (``CudaSupportError`` when there is none).  Nothing is loaded at import.
"""
import os
import threading

from .errors import (CudaSupportError, CudaDriverError, CudaAPIError, error_name)  # noqa: F401

__all__ = ["get_driver", "simulator_enabled", "refuse_init", "CudaSupportError", "CudaDriverError",
           "CudaAPIError"]

_driver = None
_lock = threading.Lock()
_context_provider = None


def set_default_context_provider(provider):
    """Register ``provider() -> Context``: the runtime layer's ``current_context``.

    The layers below contexts (``memory/``) take their context from the caller; where a public
    API lets the context default (``IpcHandle.open()``), they ask :func:`default_context`, so
    they never import the runtime layer above them.  ``cujit/__init__.py`` registers it."""
    global _context_provider
    _context_provider = provider


def default_context():
    """The calling thread's current context (created on first use), from the registered
    provider.  ``CudaSupportError`` when none is registered (``cujit`` was not imported)."""
    if _context_provider is None:
        raise CudaSupportError("no context provider registered: import cujit first")
    return _context_provider()


def driver_created():
    """True once :func:`get_driver` has made this process's backend (no driver call)."""
    return _driver is not None


_refusal = None        # the CudaSupportError text the CUDA driver's initialisation failed with


def refuse_init(message):
    """Make the CUDA driver's initialisation fail with ``CudaSupportError(message)`` from now
    on, as a failed ``cuInit`` does (numba's ``driver.cuInit`` replaced by the program before
    the first CUDA call: ``cujit.cudadrv.driver.driver``).  The simulator is not affected.
    Returns False, changing nothing, when the driver is already initialised."""
    global _refusal
    with _lock:
        if _driver is not None:
            return False
        _refusal = str(message)
        return True


def simulator_enabled():
    """True when the simulator is selected (config ``ENABLE_CUDASIM``), read now."""
    from ..config import config
    return bool(config.ENABLE_CUDASIM)


def get_driver():
    """The backend (a :class:`cujit.driver.api.Driver`), created on first call.

    Raises ``CudaSupportError`` when the simulator is off and no CUDA driver can be used, or
    when ``NUMBA_DISABLE_CUDA``/``CUJIT_DISABLE_CUDA`` refuses it (numba's message); the
    failure is not cached, so a later call tries again."""
    global _driver
    drv = _driver
    if drv is not None:
        return drv
    with _lock:
        if _driver is None:
            if simulator_enabled():
                from .sim import SimDriver
                _driver = SimDriver()
            else:
                from ..config import config
                if config.DISABLE_CUDA:
                    raise CudaSupportError("CUDA is disabled due to setting "
                                           "NUMBA_DISABLE_CUDA=1")
                if _refusal is not None:
                    raise CudaSupportError(_refusal)
                from .cuda import CudaDriver
                _driver = CudaDriver()
        return _driver


def _after_fork_in_child():
    """Poison an initialised driver in a forked child (``os.register_at_fork``), so that no
    hot path pays for a pid check: every driver method looked up from now on raises
    :func:`~cujit.driver.errors.fork_error`, direct cuda-bindings handles kept for the launch
    fast path are replaced too (their failures are also translated).  (The memory layer
    registers its own hook so that finalisers stop queueing frees of the parent's memory.)"""
    drv = _driver
    if drv is None:
        return
    from . import errors
    errors.mark_forked(os.getppid(), os.getpid())

    def refuse(*args, **kwargs):
        raise errors.fork_error()

    for name in dir(type(drv)):
        if not name.startswith("_") and callable(getattr(type(drv), name, None)):
            setattr(drv, name, refuse)
    for name in list(vars(drv)):
        if name.startswith("_cu"):
            setattr(drv, name, refuse)


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)
