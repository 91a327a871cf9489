"""numba.cuda's ``numba.cuda.cudadrv`` import paths, for ported programs
(``from cujit.cudadrv.driver import CudaAPIError``): modules that only re-export objects
cujit already has, under the names numba.cuda gives them.  Nothing here has code of its own;
new code should import from ``cujit`` itself.
"""
