"""The runtime layer: devices and their primary contexts (:mod:`.devices`; loaded modules in
:mod:`.modules`), streams and events (:mod:`.streams`), numba.cuda's module-level stream/event
constructors (:mod:`.api`) and CUDA graphs (:mod:`.graphs`).

It sits above ``memory/`` (a Context owns its pending-deallocations queue and memory manager;
memory objects are given their context by the caller) and below ``arrays/`` and the compiler.
The contract the other layers read is public: ``Context.generation``, ``Context.closed``,
``Context.make_current()``, ``Context.stream_handle()`` (docs/interfaces.md).  Nothing is
imported here: ``import cujit`` stays light.

As ``cuda.runtime`` this package is also numba.cuda's ``runtime`` object:
``cuda.runtime.get_version()``, ``cuda.runtime.is_supported_version()`` and
``cuda.runtime.supported_versions`` (:mod:`.version`).
"""


def get_version():
    """The CUDA version the driver supports, ``(major, minor)`` (see :mod:`.version`)."""
    from .version import get_version as v
    return v()


def is_supported_version():
    """True when the CUDA version is one cujit supports (see :mod:`.version`)."""
    from .version import is_supported_version as v
    return v()


def __getattr__(name):
    if name == "supported_versions":    # numba's attribute, computed on use as its property
        from .version import SUPPORTED_VERSIONS
        return SUPPORTED_VERSIONS
    raise AttributeError(f"module 'cujit.runtime' has no attribute {name!r}")
