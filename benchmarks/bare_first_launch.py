"""The driver's floor under a ``cache=True`` hit, in a fresh process and without cujit.

``python bare_first_launch.py`` prints ``{"seconds": float}``: timing starts after NumPy is
imported (as ``first_launch.py``) and covers what any CUDA program pays before its first
kernel runs: importing cuda-bindings, ``cuInit``, retaining and setting the primary context,
loading a module (the empty kernel of ``side_bare.py``), a 4 KiB ``cuMemAlloc`` +
``cuMemcpyHtoD``, one ``cuLaunchKernel`` and ``cuCtxSynchronize``.
"""
import ctypes
import json
import time

import numpy as np

from side_bare import PTX, _Params, _ok

h = np.arange(1024, dtype=np.float32)
t0 = time.perf_counter()
from cuda.bindings import driver as d  # noqa: E402  (the import is part of the figure)

_ok(d.cuInit(0), "cuInit")
dev = _ok(d.cuDeviceGet(0), "cuDeviceGet")
ctx = _ok(d.cuDevicePrimaryCtxRetain(dev), "cuDevicePrimaryCtxRetain")
_ok(d.cuCtxSetCurrent(ctx), "cuCtxSetCurrent")
mod = _ok(d.cuModuleLoadData(PTX), "cuModuleLoadData")
f1 = _ok(d.cuModuleGetFunction(mod, b"empty1"), "cuModuleGetFunction")
buf = int(_ok(d.cuMemAlloc(h.nbytes), "cuMemAlloc"))
_ok(d.cuMemcpyHtoD(buf, h.ctypes.data, h.nbytes), "cuMemcpyHtoD")
p = _Params([ctypes.c_uint64(buf), ctypes.c_uint64(h.size), ctypes.c_uint64(4)])
_ok(d.cuLaunchKernel(f1, 1, 1, 1, 32, 1, 1, 0, 0, p.address, 0), "cuLaunchKernel")
_ok(d.cuCtxSynchronize(), "cuCtxSynchronize")
print(json.dumps({"seconds": time.perf_counter() - t0}))
