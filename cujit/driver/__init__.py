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
                from ..simulator.driver import SimDriver
                _driver = SimDriver()
            else:
                from .cuda import CudaDriver
                _driver = CudaDriver()
        return _driver
