"""Constant memory: ``cuda.const.array_like`` (the seed guide's example, extended).

``const.array_like(arr)`` places a copy of a global (or closure) NumPy array in the device's
constant memory when the kernel is compiled: 64 KiB, read-only, cached, and fastest when all
threads of a warp read the same element (a broadcast), as in ``smooth`` below, where all
threads read tap ``k`` at the same time.  The values are fixed at compile time: changing the
NumPy array afterwards does not change the kernel.

Run: ``python examples/constant_memory.py``.
"""
import numpy as np

import cujit as cuda

coefficients = np.array([1.0, 2.0, 3.0], dtype=np.float32)
taps = np.array([0.25, 0.5, 0.25], dtype=np.float32)


@cuda.jit
def kernel(x):
    i = cuda.grid(1)
    if i < x.size:
        x[i] = x[i] * cuda.const.array_like(coefficients)[i % 3]


@cuda.jit
def smooth(x, y):
    c = cuda.const.array_like(taps)
    i = cuda.grid(1)
    if 0 < i < x.size - 1:
        y[i] = c[0] * x[i - 1] + c[1] * x[i] + c[2] * x[i + 1]


if __name__ == "__main__":
    x = cuda.to_device(np.ones(9, dtype=np.float32))
    kernel[1, 32](x)
    print("x * coefficients[i % 3]:", x.copy_to_host())        # [1. 2. 3. 1. 2. 3. 1. 2. 3.]

    signal = np.zeros(9, dtype=np.float32)
    signal[4] = 1.0
    d_sig, d_out = cuda.to_device(signal), cuda.to_device(np.zeros(9, np.float32))
    smooth[1, 32](d_sig, d_out)
    print("impulse response:", d_out.copy_to_host())           # 0.25 0.5 0.25 around 4
