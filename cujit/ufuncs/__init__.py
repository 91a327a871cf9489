"""numba's CUDA ufuncs and generalised ufuncs: ``vectorize`` and ``guvectorize`` with
``target='cuda'`` (R-LIB-2)."""
from .vectorize import CUDAUFunc, vectorize
from .gufunc import CUDAGUFunc, guvectorize

__all__ = ["vectorize", "guvectorize", "CUDAUFunc", "CUDAGUFunc"]
