"""``cuda.runtime``'s version queries (numba.cuda's ``numba.cuda.cudadrv.runtime``):
``get_version()``, ``is_supported_version()`` and ``supported_versions``.

cujit links no CUDA runtime library.  numba-cuda 0.30 answers ``get_version()`` with the
toolkit version (through NVRTC); cujit answers with what it depends on instead, the CUDA
version the driver supports (``cuDriverGetVersion``, e.g. 13000 → ``(13, 0)``).  On the
simulator that is the simulated driver's fixed version, ``(13, 0)`` (numba's simulator gives
``(-1, -1)``, which no version check in a ported program accepts).
"""
from .. import driver

__all__ = ["get_version", "is_supported_version", "SUPPORTED_MAJOR_VERSIONS",
           "SUPPORTED_VERSIONS"]

#: CUDA major versions cujit runs on (cuda-bindings 12.8+ and 13.x), as numba-cuda's
#: ``SUPPORTED_TOOLKIT_MAJOR_VERSIONS``.
SUPPORTED_MAJOR_VERSIONS = (12, 13)
#: The (major, minor) CUDA versions cujit's requirements name and its tests run on.
SUPPORTED_VERSIONS = ((12, 8), (12, 9), (13, 0))


def get_version():
    """The CUDA version the driver supports as ``(major, minor)`` ints (``(13, 0)`` for a
    CUDA 13.0 driver; the simulator's is ``(13, 0)``).  Raises ``CudaSupportError`` when no
    driver can be used (no GPU and the simulator not asked for)."""
    v = driver.get_driver().driver_version()
    return v // 1000, (v % 1000) // 10


def is_supported_version():
    """True when :func:`get_version`'s major version is one cujit supports (12 or 13), as
    numba-cuda's ``runtime.is_supported_version()``."""
    return get_version()[0] in SUPPORTED_MAJOR_VERSIONS
