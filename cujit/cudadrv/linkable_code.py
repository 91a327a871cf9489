"""``numba.cuda.cudadrv.linkable_code``'s classes (re-exports, for ported imports)."""
from ..frontend.linkable import (LTOIR, Archive, Cubin, CUSource, Fatbin, LinkableCode, Object,
                                 PTXSource)

__all__ = ["LinkableCode", "CUSource", "PTXSource", "Cubin", "Fatbin", "LTOIR", "Archive",
           "Object"]
