"""Tiled fp16 GEMM on the tensor cores with ``cujit.wmma`` (a cujit extension beyond
numba.cuda), checked against NumPy.

``C = A @ B`` with float16 ``A`` (M x K) and ``B`` (K x N) and a float32 ``C``.  A block of 8
warps computes a 128 x 128 tile of C; each warp owns 64 x 32 of it (4 x 2 accumulator
fragments of 16 x 16).  The block walks K 64 at a time: its 256 threads copy a 128 x 64
slice of A and a 64 x 128 slice of B into shared memory (rows padded by 8 halves, 16 bytes,
so that the 8 rows a fragment load reads at once fall in 8 different 16-byte bank groups),
wait at a barrier, then each warp loads its fragments from shared memory and issues 32
``mma_sync``s (float32 accumulation), 8 per 16-deep step for 6 fragment loads.

The copies move 8 bytes (4 halves) per instruction: the kernel views the float16 matrices
and the shared slices as uint64 (``ndarray.view``), and each thread copies 8 uint64 of each
slice at fixed offsets from its own row and column (computed once, outside the K loop).
They are register double-buffered: after the barrier that opens a step, each thread reads
its part of the next slice from global memory into registers (``pa``, ``pb``: local arrays
indexed by constants, which the compiler keeps in registers) and stores it to shared memory
only after the barrier that closes the step, so no copy waits on its own load inside the
step.  ``launch_bounds=(256, BLOCKS_PER_SM)`` with 2 holds the kernel to 128 registers so
that two blocks share an SM (36 KiB of shared memory each): ptxas then issues those loads
after the mma, and while one block waits for them the other keeps the tensor cores busy
(with 1 it takes ~180 registers and issues the loads among the mma instead).  The fragment
loads from shared memory compile to ``ldmatrix`` (``wmma.load...shared``).  M and N are
multiples of 128, K of 64.
``fma_gemm`` is the same product done with plain FMA on the FP32 cores, for comparison.

Run: ``python examples/tensor_core_gemm.py [--size N] [--fma]`` (square N x N x N; default
128 on the simulator, 4096 on a GPU; N a multiple of 128).  Prints the size, time, TFLOP/s
and the largest error against NumPy's float32 product of the float16 inputs, relative to
``sum(|a*b|)``; exits 1 when it exceeds the tolerance.
"""
import argparse
import sys

import numpy as np

import cujit as cuda

BM, BN, BK = 128, 128, 64       # block tile (compile-time constants: globals)
PAD = 8                          # halves of padding per shared row (16 bytes)
LDA, LDB = BK + PAD, BN + PAD
VEC = 4                          # halves per uint64: one copy instruction
THREADS = 256
BLOCKS_PER_SM = 2                # launch_bounds: registers for 2 blocks per SM (128 each)
A_ROWS = THREADS // (BK // VEC)  # rows of the A slice one pass of the block copies (16)
B_ROWS = THREADS // (BN // VEC)  # rows of the B slice one pass copies (8)
A_PASSES = BM // A_ROWS          # uint64 of the A slice per thread (8)
B_PASSES = BK // B_ROWS          # uint64 of the B slice per thread (8)


@cuda.jit(launch_bounds=(THREADS, BLOCKS_PER_SM))
def wmma_gemm(A, B, C):
    K = A.shape[1]
    N = B.shape[1]
    sA = cuda.shared.array((BM, LDA), np.float16)
    sB = cuda.shared.array((BK, LDB), np.float16)
    gA = A.view(np.uint64)          # the same bytes, 4 halves per element
    gB = B.view(np.uint64)
    wA = sA.view(np.uint64)
    wB = sB.view(np.uint64)
    t = cuda.threadIdx.x
    warp = t // 32
    row0 = cuda.blockIdx.y * BM
    col0 = cuda.blockIdx.x * BN
    ar = t // (BK // VEC)           # this thread's first row and its column (in uint64) of
    ac = t % (BK // VEC)            # the A slice; passes i add i * A_ROWS rows
    br = t // (BN // VEC)
    bc = t % (BN // VEC)
    arow = row0 + ar
    bcol = col0 // VEC + bc
    wr = (warp // 4) * 64           # the warp's 64 x 32 part of the block tile
    wc = (warp % 4) * 32
    W = cuda.wmma
    a0 = W.fragment("matrix_a", 16, 16, 16, np.float16, "row_major")
    a1 = W.fragment("matrix_a", 16, 16, 16, np.float16, "row_major")
    a2 = W.fragment("matrix_a", 16, 16, 16, np.float16, "row_major")
    a3 = W.fragment("matrix_a", 16, 16, 16, np.float16, "row_major")
    b0 = W.fragment("matrix_b", 16, 16, 16, np.float16, "row_major")
    b1 = W.fragment("matrix_b", 16, 16, 16, np.float16, "row_major")
    c00 = W.fragment("accumulator", 16, 16, 16, np.float32)
    c01 = W.fragment("accumulator", 16, 16, 16, np.float32)
    c10 = W.fragment("accumulator", 16, 16, 16, np.float32)
    c11 = W.fragment("accumulator", 16, 16, 16, np.float32)
    c20 = W.fragment("accumulator", 16, 16, 16, np.float32)
    c21 = W.fragment("accumulator", 16, 16, 16, np.float32)
    c30 = W.fragment("accumulator", 16, 16, 16, np.float32)
    c31 = W.fragment("accumulator", 16, 16, 16, np.float32)
    W.fill_fragment(c00, 0.0)
    W.fill_fragment(c01, 0.0)
    W.fill_fragment(c10, 0.0)
    W.fill_fragment(c11, 0.0)
    W.fill_fragment(c20, 0.0)
    W.fill_fragment(c21, 0.0)
    W.fill_fragment(c30, 0.0)
    W.fill_fragment(c31, 0.0)
    pa = cuda.local.array(A_PASSES, np.uint64)      # the next slices, in registers
    pb = cuda.local.array(B_PASSES, np.uint64)
    for i in range(A_PASSES):
        pa[i] = gA[arow + i * A_ROWS, ac]
    for i in range(B_PASSES):
        pb[i] = gB[br + i * B_ROWS, bcol]
    for k0 in range(0, K, BK):
        for i in range(A_PASSES):
            wA[ar + i * A_ROWS, ac] = pa[i]
        for i in range(B_PASSES):
            wB[br + i * B_ROWS, bc] = pb[i]
        cuda.syncthreads()
        # start reading the next slices now (the last step re-reads its own: no branch, so
        # the loads can be scheduled among the mma); slicing first leaves indices that are
        # known not to be negative, so they need no wraparound code
        k1 = min(k0 + BK, K - BK)
        nA = gA[arow:, k1 // VEC + ac:]
        nB = gB[k1 + br:, bcol:]
        for i in range(A_PASSES):
            pa[i] = nA[i * A_ROWS, 0]
        for i in range(B_PASSES):
            pb[i] = nB[i * B_ROWS, 0]
        for kk in range(0, BK, 16):
            W.load_matrix_sync(a0, sA[wr:, kk:], LDA)
            W.load_matrix_sync(a1, sA[wr + 16:, kk:], LDA)
            W.load_matrix_sync(a2, sA[wr + 32:, kk:], LDA)
            W.load_matrix_sync(a3, sA[wr + 48:, kk:], LDA)
            W.load_matrix_sync(b0, sB[kk:, wc:], LDB)
            W.load_matrix_sync(b1, sB[kk:, wc + 16:], LDB)
            W.mma_sync(c00, a0, b0, c00)
            W.mma_sync(c01, a0, b1, c01)
            W.mma_sync(c10, a1, b0, c10)
            W.mma_sync(c11, a1, b1, c11)
            W.mma_sync(c20, a2, b0, c20)
            W.mma_sync(c21, a2, b1, c21)
            W.mma_sync(c30, a3, b0, c30)
            W.mma_sync(c31, a3, b1, c31)
        cuda.syncthreads()                        # the slices are free for the next step
    r = row0 + wr
    c = col0 + wc
    W.store_matrix_sync(C[r:, c:], c00, N, "row_major")
    W.store_matrix_sync(C[r:, c + 16:], c01, N, "row_major")
    W.store_matrix_sync(C[r + 16:, c:], c10, N, "row_major")
    W.store_matrix_sync(C[r + 16:, c + 16:], c11, N, "row_major")
    W.store_matrix_sync(C[r + 32:, c:], c20, N, "row_major")
    W.store_matrix_sync(C[r + 32:, c + 16:], c21, N, "row_major")
    W.store_matrix_sync(C[r + 48:, c:], c30, N, "row_major")
    W.store_matrix_sync(C[r + 48:, c + 16:], c31, N, "row_major")


TILE = 16


@cuda.jit
def fma_gemm(A, B, C):
    """The same product on the FP32 cores: 16 x 16 shared tiles, one C element per thread,
    float32 FMA accumulation of the float16 inputs."""
    sA = cuda.shared.array((TILE, TILE), np.float32)
    sB = cuda.shared.array((TILE, TILE), np.float32)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    row = cuda.blockIdx.y * TILE + ty
    col = cuda.blockIdx.x * TILE + tx
    acc = np.float32(0.0)
    for k0 in range(0, A.shape[1], TILE):
        sA[ty, tx] = np.float32(A[row, k0 + tx])
        sB[ty, tx] = np.float32(B[k0 + ty, col])
        cuda.syncthreads()
        for k in range(TILE):
            acc = cuda.fma(sA[ty, k], sB[k, tx], acc)
        cuda.syncthreads()
    C[row, col] = acc


def launch(kernel, a, b, c):
    """Launch ``kernel`` (wmma_gemm or fma_gemm) on device arrays a, b -> c."""
    n_rows, n_cols = c.shape
    if kernel is wmma_gemm:
        wmma_gemm[(n_cols // BN, n_rows // BM), THREADS](a, b, c)
    else:
        fma_gemm[(n_cols // TILE, n_rows // TILE), (TILE, TILE)](a, b, c)


def tolerance(a, b):
    """Largest error allowed against the float32 reference: 2**-20 of ``sum(|a*b|)`` per
    16-deep mma step (docs/kernel-language.md, "Tensor cores")."""
    return (a.shape[1] // 16 + 1) * 2.0 ** -20


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--size", type=int, default=None)
    p.add_argument("--fma", action="store_true", help="run fma_gemm instead")
    args = p.parse_args(argv)
    simulated = cuda.get_current_device().name.startswith("cujit simulated")
    n = args.size or (128 if simulated else 4096)
    if n % BM:
        p.error(f"--size must be a multiple of {BM}, got {n}")
    rng = np.random.default_rng(0)
    a = rng.standard_normal((n, n)).astype(np.float16)
    b = rng.standard_normal((n, n)).astype(np.float16)
    d_a, d_b = cuda.to_device(a), cuda.to_device(b)
    d_c = cuda.device_array((n, n), dtype=np.float32)
    kernel = fma_gemm if args.fma else wmma_gemm
    launch(kernel, d_a, d_b, d_c)                 # the first launch compiles
    start, end = cuda.event(), cuda.event()
    start.record()
    launch(kernel, d_a, d_b, d_c)
    end.record()
    end.synchronize()
    ms = start.elapsed_time(end)
    c = d_c.copy_to_host()
    a32, b32 = a.astype(np.float32), b.astype(np.float32)
    mag = np.abs(a32) @ np.abs(b32)
    err = float(np.max(np.abs(c - a32 @ b32) / mag))
    rate = f", {2 * n ** 3 / (ms * 1e-3) / 1e12:.1f} TFLOP/s" if ms > 0 else ""
    name = "fma" if args.fma else "wmma"
    ok = err <= tolerance(a, b)
    print(f"{n}x{n}x{n} fp16 {name}: {ms:.3f} ms{rate}; max relative error {err:.3g} "
          f"({'ok' if ok else 'TOO LARGE'})")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
