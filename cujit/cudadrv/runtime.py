"""``numba.cuda.cudadrv.runtime``: ``runtime`` (the object with ``get_version()``,
``is_supported_version()`` and ``supported_versions``: the ``cujit.runtime`` package) and
``get_version`` (re-exports, for ported imports)."""
from .. import runtime
from ..runtime.version import get_version

__all__ = ["runtime", "get_version"]
