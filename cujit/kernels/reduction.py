"""``numba.cuda.kernels.reduction``: ``Reduce`` (:class:`cujit.Reduce`, the same class)."""
from ..reduction import Reduce

__all__ = ["Reduce"]
