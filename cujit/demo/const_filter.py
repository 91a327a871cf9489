"""Demo 3: a 1-D FIR filter whose taps live in constant memory (``const.array_like``).

Every thread of a warp reads the same tap at the same time, the broadcast pattern constant
memory's cache serves in one transaction.  The signal is zero-padded at both ends:
``y[i] = sum_k taps[k] * x[i + k - R]`` with ``R = len(taps) // 2``.
"""
import math

import numpy as np

from ._common import Result, kernel_ms, jit_with

cuda = None  # each kernel's own globals bind it (_common.jit_with)

__all__ = ["run", "TAPS"]

#: 9 binomial taps, normalised (a smoothing filter); float32, 36 bytes of constant memory.
TAPS = (np.array([1, 8, 28, 56, 70, 56, 28, 8, 1], dtype=np.float64) / 256.0).astype(np.float32)
_NT = TAPS.size
_R = _NT // 2


def make_kernel(cuda_module):
    """``fir(x, y)`` over float32 1-D arrays (grid-stride loop) for module ``cuda``."""
    # the kernels name ``cuda`` as a module global, as user code does (see jit_with)
    jit = jit_with(cuda_module)

    @jit
    def fir(x, y):
        taps = cuda.const.array_like(TAPS)
        n = x.size
        start = cuda.grid(1)
        stride = cuda.gridsize(1)
        for i in range(start, n, stride):
            acc = np.float32(0.0)
            for k in range(_NT):
                j = i + k - _R
                if j >= 0 and j < n:
                    acc += taps[k] * x[j]
            y[i] = acc

    return fir


def reference(x):
    """NumPy reference of the filter (float64 accumulation), float32 1-D ``x`` → float64."""
    xp = np.pad(x.astype(np.float64), _R)
    out = np.zeros(x.size, dtype=np.float64)
    for k in range(_NT):
        out += float(TAPS[k]) * xp[k:k + x.size]
    return out


def run(cuda, sizes):
    """Filter ``sizes.filter_n`` float32 samples; PASS when within 1e-5 of NumPy.  Time:
    median kernel time (CUDA events); rate: GB/s of signal read + written (8 bytes/sample)."""
    n = sizes.filter_n
    x = np.random.default_rng(2).standard_normal(n).astype(np.float32)
    kern = make_kernel(cuda)
    dx = cuda.to_device(x)
    dy = cuda.device_array(n, dtype=np.float32)
    tpb = 256
    blocks = math.ceil(n / tpb)
    if sizes.max_blocks:
        blocks = min(blocks, sizes.max_blocks)

    def launch():
        kern[blocks, tpb](dx, dy)

    if sizes.timing_reps > 1:
        launch()
    ms = kernel_ms(cuda, launch, sizes.timing_reps)
    y = dy.copy_to_host()
    err = float(np.max(np.abs(y - reference(x))))
    res = Result("FIR filter, taps in const memory", f"2^{int(math.log2(n))} float32"
                 if n & (n - 1) == 0 else f"{n} float32")
    res.seconds = ms / 1e3
    res.rate = 8.0 * n / res.seconds / 1e9 if res.seconds > 0 else None
    res.rate_unit = "GB/s"
    res.passed = err <= 1e-5
    res.detail = f"{_NT} taps ({TAPS.nbytes} B const), max error {err:.3g}"
    res.lines.append(res.detail)
    return res
