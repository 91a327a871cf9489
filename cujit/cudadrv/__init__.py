"""numba.cuda's ``numba.cuda.cudadrv`` import paths, for ported programs
(``from cujit.cudadrv.driver import CudaAPIError``): cujit's objects under the names
numba.cuda gives them, and numba's driver-level helpers that user code calls (the memory
functions and the driver object of ``driver``, the array helpers of ``devicearray``), made
from cujit's own layers.  New code should import from ``cujit`` itself.
"""
# numba.cuda's ``cuda.devicearray`` and ``cuda.devices`` attributes
from . import devicearray, devices  # noqa: E402,F401
