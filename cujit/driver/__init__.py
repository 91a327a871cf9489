"""The driver layer: the only code that talks to a CUDA driver.

:func:`get_driver` returns the process's backend, chosen at first use: the simulator's fake
driver when ``CUJIT_ENABLE_CUDASIM=1`` / ``NUMBA_ENABLE_CUDASIM=1``, otherwise the real driver
through cuda-bindings (``CudaSupportError`` when there is none).  Nothing is loaded at import.
"""
import threading

from .errors import (CudaSupportError, CudaDriverError, CudaAPIError, error_name)  # noqa: F401

__all__ = ["get_driver", "simulator_enabled", "CudaSupportError", "CudaDriverError",
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


def simulator_enabled():
    """True when the simulator is selected (config ``ENABLE_CUDASIM``), read now."""
    from ..config import config
    return bool(config.ENABLE_CUDASIM)


def get_driver():
    """The backend (a :class:`cujit.driver.api.Driver`), created on first call.

    Raises ``CudaSupportError`` when the simulator is off and no CUDA driver can be used;
    the failure is not cached, so a later call tries again."""
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
                from .cuda import CudaDriver
                _driver = CudaDriver()
        return _driver
