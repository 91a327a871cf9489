"""Tiled matrix multiply: shared memory and ``syncthreads``.

Each 16×16 block computes one 16×16 tile of C.  It walks along the shared dimension one tile
at a time: every thread loads one element of A and one of B into shared memory, the block
waits at a barrier (so the whole tile is loaded), every thread accumulates 16 products from
shared memory, and the block waits again (so nobody overwrites the tile while others still
read it).  Each element of A and B is read from global memory n/16 times instead of n times.

Run: ``python examples/tiled_matmul.py [n]`` (default n = 1024 on a GPU, 48 on the
simulator).  Prints the time, GFLOP/s and the largest difference from NumPy's ``A @ B``.
"""
import math
import sys

import numpy as np

import cujit as cuda

TPB = 16        # tile edge = threads per block edge; a compile-time constant (global)


@cuda.jit
def matmul(A, B, C):
    sA = cuda.shared.array(shape=(TPB, TPB), dtype=np.float32)
    sB = cuda.shared.array(shape=(TPB, TPB), dtype=np.float32)
    x, y = cuda.grid(2)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    n = A.shape[1]
    acc = np.float32(0.0)
    for step in range((n + TPB - 1) // TPB):
        # Threads outside the matrix load zeros, so partial tiles add nothing.
        if x < A.shape[0] and step * TPB + ty < n:
            sA[tx, ty] = A[x, step * TPB + ty]
        else:
            sA[tx, ty] = np.float32(0.0)
        if y < B.shape[1] and step * TPB + tx < n:
            sB[tx, ty] = B[step * TPB + tx, y]
        else:
            sB[tx, ty] = np.float32(0.0)
        cuda.syncthreads()          # the tile is complete
        for k in range(TPB):
            acc += sA[tx, k] * sB[k, ty]
        cuda.syncthreads()          # everyone is done with the tile
    if x < C.shape[0] and y < C.shape[1]:
        C[x, y] = acc


def main():
    simulated = cuda.get_current_device().name.startswith("cujit simulated")
    n = int(sys.argv[1]) if len(sys.argv) > 1 else (48 if simulated else 1024)
    rng = np.random.default_rng(0)
    a = rng.random((n, n), dtype=np.float32)
    b = rng.random((n, n), dtype=np.float32)
    d_a, d_b = cuda.to_device(a), cuda.to_device(b)
    d_c = cuda.device_array((n, n), dtype=np.float32)
    grid = (math.ceil(n / TPB), math.ceil(n / TPB))

    matmul[grid, (TPB, TPB)](d_a, d_b, d_c)     # first launch compiles
    start, end = cuda.event(), cuda.event()
    start.record()
    matmul[grid, (TPB, TPB)](d_a, d_b, d_c)
    end.record()
    end.synchronize()
    ms = start.elapsed_time(end)
    c = d_c.copy_to_host()
    err = np.max(np.abs(c - a @ b))
    rate = f", {2 * n**3 / (ms * 1e-3) / 1e9:.1f} GFLOP/s" if ms > 0 else ""
    print(f"{n}x{n} float32: {ms:.3f} ms{rate}; max |C - A@B| = {err:.3g}")


if __name__ == "__main__":
    main()
