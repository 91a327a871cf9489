"""The tensor-core GEMM rows (issue #29): an fp16 GEMM with float32 accumulation.

- ``gemm_wmma_tflops``: ``examples/tensor_core_gemm.py``'s ``wmma_gemm`` (``cujit.wmma``) on
  the cujit side; ``cupy.matmul`` of the same float16 matrices (cuBLAS) on the CuPy side;
- ``gemm_wgmma_tflops``: the example's ``wgmma_gemm`` (``cujit.wgmma``, Hopper's warpgroup
  MMA; compute capability 9.0 only) against the same ``cupy.matmul``;
- ``gemm_fma_tflops``: the same product with plain FMA in a cujit kernel (the example's
  ``fma_gemm``), and ``gemm_wmma_over_fma_x`` / ``gemm_wgmma_over_fma_x`` the tensor-core
  kernels' throughput over this one's.

TFLOP/s = ``2 n^3`` / kernel time (CUDA events, warm).  n = 4096 (``--quick``: 2048; on the
simulator a smoke run at 256 / 32 that only checks the measurements work).  The cujit side
checks 64 entries of C against float64 dot products of the inputs before timing.
"""
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "examples"))

__all__ = ["cujit_figures", "cupy_figures"]


def _tflops(n, us):
    return 2.0 * n ** 3 / (us * 1e-6) / 1e12


def _inputs(n):
    rng = np.random.default_rng(0)
    return (rng.standard_normal((n, n)).astype(np.float16),
            rng.standard_normal((n, n)).astype(np.float16))


def _check(a, b, c, kernel):
    rng = np.random.default_rng(1)
    n = a.shape[0]
    for i, j in rng.integers(0, n, (64, 2)):
        ref = float(np.dot(a[i].astype(np.float64), b[:, j].astype(np.float64)))
        mag = float(np.dot(np.abs(a[i].astype(np.float64)), np.abs(b[:, j].astype(np.float64))))
        if abs(c[i, j] - ref) > 2.0 ** -10 * mag:
            raise RuntimeError(f"{kernel}: C[{i}, {j}] = {c[i, j]}, expected {ref}")


def cujit_figures(side, cuda, event_us):
    """Fill the cujit side's GEMM figures; ``event_us(cuda, fn, per_round)`` times ``fn``."""
    import tensor_core_gemm as TG
    results = {}
    rows = [("gemm_wmma_tflops", TG.wmma_gemm, side.reps(4096, 2048, 256)),
            ("gemm_fma_tflops", TG.fma_gemm, side.reps(4096, 2048, 32))]
    dev = cuda.get_current_device()
    if dev.name.startswith("cujit simulated") or tuple(dev.compute_capability) == (9, 0):
        rows.insert(1, ("gemm_wgmma_tflops", TG.wgmma_gemm, side.reps(4096, 2048, 256)))
    for key, kernel, n in rows:
        a, b = _inputs(n)
        d_a, d_b = cuda.to_device(a), cuda.to_device(b)
        d_c = cuda.device_array((n, n), np.float32)

        def once(kernel=kernel, d_a=d_a, d_b=d_b, d_c=d_c):
            TG.launch(kernel, d_a, d_b, d_c)

        def figure(kernel=kernel, n=n, once=once, a=a, b=b, d_c=d_c):
            once()
            _check(a, b, d_c.copy_to_host(), kernel.__name__)
            return _tflops(n, event_us(cuda, once, side.reps(10, 3, 1)))

        results[key] = side.measure(key, figure, size=f"{n}^3")
    for key in ("wmma", "wgmma"):
        if results.get(f"gemm_{key}_tflops") and results["gemm_fma_tflops"]:
            side.measure(f"gemm_{key}_over_fma_x",
                         lambda key=key: results[f"gemm_{key}_tflops"] /
                         results["gemm_fma_tflops"])


def cupy_figures(side, cp, event_us):
    """The CuPy side's ``gemm_wmma_tflops`` and ``gemm_wgmma_tflops``: ``cupy.matmul`` of the
    float16 inputs (cuBLAS; float16 result, float32 accumulation), measured once for both
    rows."""
    n = side.reps(4096, 2048, 128)
    a, b = (cp.asarray(x) for x in _inputs(n))
    out = cp.empty((n, n), cp.float16)
    got = side.measure("gemm_wmma_tflops",
                       lambda: _tflops(n, event_us(lambda: cp.matmul(a, b, out=out),
                                                   side.reps(10, 3, 1))), size=f"{n}^3")
    if got:
        side.measure("gemm_wgmma_tflops", lambda: got, size=f"{n}^3")
