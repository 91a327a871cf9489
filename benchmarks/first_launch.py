"""Fresh-process cost of the first kernel: import, compile, launch, synchronize.

``python first_launch.py cujit|numba [--cache]`` prints ``{"seconds": float}``; timing starts
after NumPy is imported and before the CUDA module is.  Without ``--cache`` the kernel is not
disk-cached, so the compile is real; with it the kernel is ``@jit(cache=True)`` and the
caller points ``CUJIT_CACHE_DIR``/``NUMBA_CACHE_DIR`` at a folder an earlier run filled, so
the figure is a cache hit: import, load, first launch.
"""
import json
import sys
import time

import numpy as np

which = sys.argv[1] if len(sys.argv) > 1 else "cujit"
t0 = time.perf_counter()
if which == "numba":
    from numba import cuda
else:
    import cujit as cuda


@cuda.jit(cache="--cache" in sys.argv)
def scale(x, factor):
    i = cuda.grid(1)
    if i < x.size:
        x[i] = x[i] * factor


d = cuda.to_device(np.arange(1024, dtype=np.float32))
scale[4, 256](d, np.float32(2.0))
cuda.synchronize()
seconds = time.perf_counter() - t0
assert d.copy_to_host()[3] == 6.0
print(json.dumps({"seconds": seconds}))
