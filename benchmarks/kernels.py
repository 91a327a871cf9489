"""The benchmark kernels, written once for any numba.cuda-compatible module.

``build(cuda_module)`` binds the module as this file's global ``cuda`` (as user code names it)
and returns the compiled-on-first-launch kernels, so cujit and numba-cuda run the same source.
"""
import numpy as np

cuda = None  # bound by build()

TPB = 16          # matmul tile edge
RED_TPB = 256     # reduction block size


def build(cuda_module):
    """``{'empty1', 'empty5', 'axpy', 'matmul', 'reduce', 'stencil', 'matmul_conflict_free',
    'stencil_coalesced'}`` → kernels.

    ``matmul`` and ``stencil`` keep the access patterns the benchmark has always measured
    (threadIdx.x on the first axis: uncoalesced global accesses, and ``sA[tx, ty]``: 8-way
    shared-memory bank conflicts); ``matmul_conflict_free`` and ``stencil_coalesced`` are the
    same computations rewritten as cujit's access report suggests (docs/access-report.md):
    threadIdx.x indexes the last axis everywhere.  Same launch configurations and results."""
    global cuda
    cuda = cuda_module

    @cuda.jit
    def empty1(a):
        # Never true: keeps the argument live without doing any work.
        if cuda.grid(1) == -1:
            a[0] = 0.0

    @cuda.jit
    def empty5(a, b, c, alpha, n):
        if cuda.grid(1) == -1:
            a[0] = b[0] + c[0] + alpha + n

    @cuda.jit
    def axpy(y, a, x):
        i = cuda.grid(1)
        if i < y.size:
            y[i] = a * x[i] + y[i]

    @cuda.jit
    def matmul(A, B, C):
        sA = cuda.shared.array(shape=(TPB, TPB), dtype=np.float32)
        sB = cuda.shared.array(shape=(TPB, TPB), dtype=np.float32)
        x, y = cuda.grid(2)
        tx = cuda.threadIdx.x
        ty = cuda.threadIdx.y
        acc = np.float32(0.0)
        for step in range(A.shape[1] // TPB):      # n is a multiple of TPB here
            sA[tx, ty] = A[x, step * TPB + ty]
            sB[tx, ty] = B[step * TPB + tx, y]
            cuda.syncthreads()
            for k in range(TPB):
                acc += sA[tx, k] * sB[k, ty]
            cuda.syncthreads()
        C[x, y] = acc

    @cuda.jit
    def reduce(x, out):
        buf = cuda.shared.array(RED_TPB, dtype=np.float32)
        tid = cuda.threadIdx.x
        acc = np.float32(0.0)
        for i in range(cuda.grid(1), x.size, cuda.gridsize(1)):
            acc += x[i]
        buf[tid] = acc
        cuda.syncthreads()
        s = RED_TPB // 2
        while s > 0:
            if tid < s:
                buf[tid] += buf[tid + s]
            cuda.syncthreads()
            s //= 2
        if tid == 0:
            cuda.atomic.add(out, 0, buf[0])

    @cuda.jit
    def stencil(a, b):
        i, j = cuda.grid(2)
        if 0 < i < a.shape[0] - 1 and 0 < j < a.shape[1] - 1:
            b[i, j] = np.float32(0.25) * (a[i - 1, j] + a[i + 1, j] + a[i, j - 1] + a[i, j + 1])

    @cuda.jit
    def matmul_conflict_free(A, B, C):
        # the access report's fix for matmul: threadIdx.x indexes the last axis of the global
        # arrays (coalesced) and of the tiles ([ty, tx]: consecutive banks)
        sA = cuda.shared.array(shape=(TPB, TPB), dtype=np.float32)
        sB = cuda.shared.array(shape=(TPB, TPB), dtype=np.float32)
        col, row = cuda.grid(2)
        tx = cuda.threadIdx.x
        ty = cuda.threadIdx.y
        acc = np.float32(0.0)
        for step in range(A.shape[1] // TPB):
            sA[ty, tx] = A[row, step * TPB + tx]
            sB[ty, tx] = B[step * TPB + ty, col]
            cuda.syncthreads()
            for k in range(TPB):
                acc += sA[ty, k] * sB[k, tx]
            cuda.syncthreads()
        C[row, col] = acc

    @cuda.jit
    def stencil_coalesced(a, b):
        # the access report's fix for stencil: the indices swapped, threadIdx.x on the last axis
        j, i = cuda.grid(2)
        if 0 < i < a.shape[0] - 1 and 0 < j < a.shape[1] - 1:
            b[i, j] = np.float32(0.25) * (a[i - 1, j] + a[i + 1, j] + a[i, j - 1] + a[i, j + 1])

    return {"empty1": empty1, "empty5": empty5, "axpy": axpy, "matmul": matmul,
            "reduce": reduce, "stencil": stencil, "matmul_conflict_free": matmul_conflict_free,
            "stencil_coalesced": stencil_coalesced}
