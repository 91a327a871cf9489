"""Kernels that several test files use, written once (plain functions: a test jits them,
launches them through the simulator fixture, or compiles them to PTX).

``matmul_tiled(A, B, C)``: C = A @ B for float32 2-D arrays of any shape, through two
``TPB``×``TPB`` static shared tiles and two barriers per step (numba.cuda's documented "fast
matrix multiplication"); launch it with blocks of (TPB, TPB) threads covering C, x along
columns and y along rows.
"""
import numpy as np

import cujit as cuda

#: Tile edge: small, so simulated launches stay quick.
TPB = 8


def matmul_tiled(A, B, C):
    sA = cuda.shared.array((TPB, TPB), dtype=np.float32)
    sB = cuda.shared.array((TPB, TPB), dtype=np.float32)
    x, y = cuda.grid(2)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    acc = np.float32(0.0)
    for i in range((A.shape[1] + TPB - 1) // TPB):
        sA[ty, tx] = 0
        sB[ty, tx] = 0
        if y < A.shape[0] and tx + i * TPB < A.shape[1]:
            sA[ty, tx] = A[y, tx + i * TPB]
        if x < B.shape[1] and ty + i * TPB < B.shape[0]:
            sB[ty, tx] = B[ty + i * TPB, x]
        cuda.syncthreads()
        for j in range(TPB):
            acc += sA[ty, j] * sB[j, tx]
        cuda.syncthreads()
    if y < C.shape[0] and x < C.shape[1]:
        C[y, x] = acc
