"""``numba.cuda.cudadrv.error``'s names that cujit has (re-exports, for ported imports)."""
from ..nvvm.libnvvm import NvvmError
from ..driver.errors import CudaDriverError, CudaSupportError

__all__ = ["CudaDriverError", "CudaSupportError", "NvvmError"]
