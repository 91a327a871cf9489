"""Tiled fp16 GEMM on the tensor cores with ``cujit.wgmma`` / ``cujit.wmma`` and
``cujit.pipeline`` (cujit extensions beyond numba.cuda), checked against NumPy.

``C = A @ B`` with float16 ``A`` (M x K) and ``B`` (K x N) and a float32 ``C``.

``wgmma_gemm`` (Hopper, compute capability 9.0: ``wgmma.mma_async``): a block of two
warpgroups computes a 128 x 256 tile of C, each warpgroup 64 x 256 of it in one accumulator
(128 float32 registers per thread).  The block walks K 64 at a time through ``WG_STAGES`` = 4
shared-memory stages (192 KiB of dynamic shared memory), filled by 16-byte
``cuda.pipeline.memcpy_async`` copies in the layouts the tensor cores read with a 128-byte
swizzle (``cujit.wgmma``'s table): A K-major, each 128-byte row of 64 halves with its 16-byte
chunk ``c`` stored at ``c ^ (row % 8)``; B N-major in atoms of 64 columns x 64 rows, the
same XOR by K row, so neither operand is transposed on the way.  Step ``kb`` waits for its
slice (``wait_prior``), makes it visible to the tensor cores (``fence_proxy_async``), waits
for the products of step ``kb - 2`` (``wait_group(1)``: one group stays in flight across the
barrier), meets the block at the barrier, starts the copies of slice ``kb + 2`` into the
stage step ``kb - 2`` used, and starts its four 16-deep ``mma_async`` (descriptors of the
stage, 32 bytes further along K each for A, 16 rows further for B) as one group.

``wmma_gemm`` (sm_80 and later: ``wmma.mma.sync``): a block of 8
warps computes a 256 x 128 tile of C; each warp owns 64 x 64 of it (4 x 4 accumulator
fragments of 16 x 16: 128 of its ~210 registers, so ``launch_bounds=(256, 1)``: one block
per SM).  The block walks K 64 at a time through a ring of ``STAGES`` = 3 shared-memory
stages (dynamic shared memory: 159 KiB per block, more than the 48 KiB static limit; the
launch passes ``SMEM_BYTES`` and cujit's launcher opts the function in).  Each stage holds
the 256 x 64 slice of A and the 64 x 128 slice of B, rows padded by 8 halves (16 bytes) so
that the 8 rows a fragment load reads at once fall in 8 different 16-byte bank groups.

The slices arrive by asynchronous 16-byte copies (``cuda.pipeline.memcpy_async``, PTX
``cp.async.cg``) straight from global to shared memory, with no registers in between: 8 of A
and 4 of B per thread and slice, one commit group per slice.  The prologue starts the first
``STAGES - 1`` slices.  Step ``kb`` waits for its own slice (``wait_prior(STAGES - 2)``: at
most the newer slices still in flight), meets the block at the one barrier of the step
(after which every thread's copies of slice ``kb`` are visible, and every warp is done with
the stage of step ``kb - 1``), starts the copies of slice ``kb + STAGES - 1`` into that
freed stage, and runs its 64 ``mma_sync`` (four 16-deep steps of 4 + 4 fragment loads and
16 mma each) while the next slice is on its way.  The fragment loads name their tiles by
``offset=`` into the shared buffer (one add per tile, where a view ``sm[o:]`` would cost a
clamped slice start each) and compile to ``ldmatrix`` (``wmma.load...shared``); the copy
indices never wrap, so their addresses are plain multiply-adds.  M a multiple of 256, N of
128, K of 64 (for ``wgmma_gemm``: M of 128, N of 256).  Chosen among 40 tilings measured on the H200 at 4096^3 (benchmarks/RESULTS.md:
K steps of 64 and 64 x 64 warp tiles matter most; 128 x 128 blocks of 4 warps, two per SM,
come within 3%).
``fma_gemm`` is the same product done with plain FMA on the FP32 cores, for comparison.

Run: ``python examples/tensor_core_gemm.py [--size N] [--kernel auto|wgmma|wmma|fma]``
(square N x N x N; default 256 on the simulator, 4096 on a GPU; N a multiple of 256; the
``auto`` kernel is ``wgmma_gemm`` on a compute capability 9.0 GPU and ``wmma_gemm``
elsewhere; ``--fma`` is ``--kernel fma``).  Prints the size, the kernel, the time (the mean
of 10 warm launches on a GPU), TFLOP/s and the largest error against NumPy's float32
product of the float16 inputs, relative to ``sum(|a*b|)``; exits 1 when it exceeds the
tolerance.
"""
import argparse
import sys

import numpy as np

import cujit as cuda

BM, BN, BK = 256, 128, 64       # block tile (compile-time constants: globals)
WM, WN = 64, 64                  # warp tile: 4 x 4 accumulator fragments of 16 x 16
STAGES = 3                       # shared-memory stages of the copy pipeline
BLOCKS_PER_SM = 1                # launch_bounds: 16 accumulators need > 128 registers
PAD = 8                          # halves of padding per shared row (16 bytes)
LDA, LDB = BK + PAD, BN + PAD    # 144 and 272 bytes: 8 fragment rows hit 8 bank groups
WARPS_N = BN // WN
THREADS = (BM // WM) * WARPS_N * 32
CHUNK = 8                        # halves per 16-byte copy
A_STEP = THREADS // (BK // CHUNK)   # rows of the A slice one pass of the block copies
B_STEP = THREADS // (BN // CHUNK)   # rows of the B slice one pass copies
A_COPIES = BM // A_STEP          # 16-byte copies of the A slice per thread and step
B_COPIES = BK // B_STEP          # ... and of the B slice
B_OFF = BM * LDA                 # halves from a stage's A slice to its B slice
STAGE = B_OFF + BK * LDB         # halves per stage (a multiple of 16: 32-byte aligned)
SMEM_BYTES = STAGES * STAGE * 2  # dynamic shared memory per block


@cuda.jit(launch_bounds=(THREADS, BLOCKS_PER_SM))
def wmma_gemm(A, B, C):
    K = A.shape[1]
    N = B.shape[1]
    sm = cuda.shared.array(0, np.float16)       # all stages: SMEM_BYTES at launch
    P = cuda.pipeline
    W = cuda.wmma
    t = cuda.threadIdx.x
    warp = t // 32
    row0 = cuda.blockIdx.y * BM
    col0 = cuda.blockIdx.x * BN
    ar = t // (BK // CHUNK)         # this thread's first row and column of the A slice and
    ac = (t % (BK // CHUNK)) * CHUNK    # of the B slice; pass i adds i * A_STEP (B_STEP) rows
    br = t // (BN // CHUNK)
    bc = (t % (BN // CHUNK)) * CHUNK
    sa = ar * LDA + ac              # their offsets (halves) in a stage
    sb = B_OFF + br * LDB + bc
    arow = row0 + ar
    bcol = col0 + bc
    wr = (warp // WARPS_N) * WM     # the warp's WM x WN part of the block tile
    wc = (warp % WARPS_N) * WN
    a0 = W.fragment("matrix_a", 16, 16, 16, np.float16, "row_major")
    a1 = W.fragment("matrix_a", 16, 16, 16, np.float16, "row_major")
    a2 = W.fragment("matrix_a", 16, 16, 16, np.float16, "row_major")
    a3 = W.fragment("matrix_a", 16, 16, 16, np.float16, "row_major")
    b0 = W.fragment("matrix_b", 16, 16, 16, np.float16, "row_major")
    b1 = W.fragment("matrix_b", 16, 16, 16, np.float16, "row_major")
    b2 = W.fragment("matrix_b", 16, 16, 16, np.float16, "row_major")
    b3 = W.fragment("matrix_b", 16, 16, 16, np.float16, "row_major")
    c00 = W.fragment("accumulator", 16, 16, 16, np.float32)
    c01 = W.fragment("accumulator", 16, 16, 16, np.float32)
    c02 = W.fragment("accumulator", 16, 16, 16, np.float32)
    c03 = W.fragment("accumulator", 16, 16, 16, np.float32)
    c10 = W.fragment("accumulator", 16, 16, 16, np.float32)
    c11 = W.fragment("accumulator", 16, 16, 16, np.float32)
    c12 = W.fragment("accumulator", 16, 16, 16, np.float32)
    c13 = W.fragment("accumulator", 16, 16, 16, np.float32)
    c20 = W.fragment("accumulator", 16, 16, 16, np.float32)
    c21 = W.fragment("accumulator", 16, 16, 16, np.float32)
    c22 = W.fragment("accumulator", 16, 16, 16, np.float32)
    c23 = W.fragment("accumulator", 16, 16, 16, np.float32)
    c30 = W.fragment("accumulator", 16, 16, 16, np.float32)
    c31 = W.fragment("accumulator", 16, 16, 16, np.float32)
    c32 = W.fragment("accumulator", 16, 16, 16, np.float32)
    c33 = W.fragment("accumulator", 16, 16, 16, np.float32)
    W.fill_fragment(c00, 0.0)
    W.fill_fragment(c01, 0.0)
    W.fill_fragment(c02, 0.0)
    W.fill_fragment(c03, 0.0)
    W.fill_fragment(c10, 0.0)
    W.fill_fragment(c11, 0.0)
    W.fill_fragment(c12, 0.0)
    W.fill_fragment(c13, 0.0)
    W.fill_fragment(c20, 0.0)
    W.fill_fragment(c21, 0.0)
    W.fill_fragment(c22, 0.0)
    W.fill_fragment(c23, 0.0)
    W.fill_fragment(c30, 0.0)
    W.fill_fragment(c31, 0.0)
    W.fill_fragment(c32, 0.0)
    W.fill_fragment(c33, 0.0)
    nk = K // BK
    # prologue: start the copies of the first STAGES - 1 slices, one group per slice
    for s in range(STAGES - 1):
        if s < nk:
            for i in range(A_COPIES):
                P.memcpy_async(sm, s * STAGE + sa + i * A_STEP * LDA, A,
                               (arow + i * A_STEP, s * BK + ac), 16)
            for i in range(B_COPIES):
                P.memcpy_async(sm, s * STAGE + sb + i * B_STEP * LDB, B,
                               (s * BK + br + i * B_STEP, bcol), 16)
        P.commit()
    rs = 0                          # the stage step kb computes on (halves into sm) ...
    ws = (STAGES - 1) * STAGE       # ... and the one it fills with slice kb + STAGES - 1
    for kb in range(nk):
        P.wait_prior(STAGES - 2)    # this thread's copies of slice kb have landed
        cuda.syncthreads()          # everyone's have, and every warp is done with step kb-1
        k1 = (kb + STAGES - 1) * BK
        if k1 < K:
            for i in range(A_COPIES):
                P.memcpy_async(sm, ws + sa + i * A_STEP * LDA, A,
                               (arow + i * A_STEP, k1 + ac), 16)
            for i in range(B_COPIES):
                P.memcpy_async(sm, ws + sb + i * B_STEP * LDB, B,
                               (k1 + br + i * B_STEP, bcol), 16)
        P.commit()                  # (empty at the end: the group count stays uniform)
        for kk in range(0, BK, 16):
            ao = rs + wr * LDA + kk         # the tiles by offset into sm: no view per tile
            bo = rs + B_OFF + kk * LDB + wc
            W.load_matrix_sync(a0, sm, LDA, offset=ao)
            W.load_matrix_sync(a1, sm, LDA, offset=ao + 16 * LDA)
            W.load_matrix_sync(a2, sm, LDA, offset=ao + 32 * LDA)
            W.load_matrix_sync(a3, sm, LDA, offset=ao + 48 * LDA)
            W.load_matrix_sync(b0, sm, LDB, offset=bo)
            W.load_matrix_sync(b1, sm, LDB, offset=bo + 16)
            W.load_matrix_sync(b2, sm, LDB, offset=bo + 32)
            W.load_matrix_sync(b3, sm, LDB, offset=bo + 48)
            W.mma_sync(c00, a0, b0, c00)
            W.mma_sync(c01, a0, b1, c01)
            W.mma_sync(c02, a0, b2, c02)
            W.mma_sync(c03, a0, b3, c03)
            W.mma_sync(c10, a1, b0, c10)
            W.mma_sync(c11, a1, b1, c11)
            W.mma_sync(c12, a1, b2, c12)
            W.mma_sync(c13, a1, b3, c13)
            W.mma_sync(c20, a2, b0, c20)
            W.mma_sync(c21, a2, b1, c21)
            W.mma_sync(c22, a2, b2, c22)
            W.mma_sync(c23, a2, b3, c23)
            W.mma_sync(c30, a3, b0, c30)
            W.mma_sync(c31, a3, b1, c31)
            W.mma_sync(c32, a3, b2, c32)
            W.mma_sync(c33, a3, b3, c33)
        rs += STAGE
        if rs == STAGES * STAGE:
            rs = 0
        ws += STAGE
        if ws == STAGES * STAGE:
            ws = 0
    r = row0 + wr
    c = col0 + wc
    W.store_matrix_sync(C[r:, c:], c00, N, "row_major")
    W.store_matrix_sync(C[r:, c + 16:], c01, N, "row_major")
    W.store_matrix_sync(C[r:, c + 32:], c02, N, "row_major")
    W.store_matrix_sync(C[r:, c + 48:], c03, N, "row_major")
    W.store_matrix_sync(C[r + 16:, c:], c10, N, "row_major")
    W.store_matrix_sync(C[r + 16:, c + 16:], c11, N, "row_major")
    W.store_matrix_sync(C[r + 16:, c + 32:], c12, N, "row_major")
    W.store_matrix_sync(C[r + 16:, c + 48:], c13, N, "row_major")
    W.store_matrix_sync(C[r + 32:, c:], c20, N, "row_major")
    W.store_matrix_sync(C[r + 32:, c + 16:], c21, N, "row_major")
    W.store_matrix_sync(C[r + 32:, c + 32:], c22, N, "row_major")
    W.store_matrix_sync(C[r + 32:, c + 48:], c23, N, "row_major")
    W.store_matrix_sync(C[r + 48:, c:], c30, N, "row_major")
    W.store_matrix_sync(C[r + 48:, c + 16:], c31, N, "row_major")
    W.store_matrix_sync(C[r + 48:, c + 32:], c32, N, "row_major")
    W.store_matrix_sync(C[r + 48:, c + 48:], c33, N, "row_major")


WG_BM, WG_BN, WG_BK = 128, 256, 64
WG_STAGES = 4
WG_THREADS = 256
WG_A = WG_BM * WG_BK                 # halves per stage of A (K-major, 128-byte swizzle)
WG_B = WG_BK * WG_BN                 # ... of B (N-major, 128-byte swizzle)
WG_STAGE = WG_A + WG_B
WG_SMEM = WG_STAGES * WG_STAGE * 2
WG_ATOM = WG_BK * 64                 # halves per 64-column atom of a B stage


@cuda.jit(launch_bounds=(WG_THREADS, 1))
def wgmma_gemm(A, B, C):
    """The product on Hopper's warpgroup MMA (sm_90a): 2 warpgroups, 64 x 256 of C each."""
    K = A.shape[1]
    sm = cuda.shared.array(0, np.float16)
    P = cuda.pipeline
    G = cuda.wgmma
    t = cuda.threadIdx.x
    g = t // 128
    row0 = cuda.blockIdx.y * WG_BM
    col0 = cuda.blockIdx.x * WG_BN
    # A copies: rows t//8 + 32 i, chunk t % 8; swizzled chunk (t%8) ^ (row & 7)
    ar = t // 8
    ac = t % 8
    sa = ar * 64 + ((ac ^ (ar & 7)) * 8)
    # B copies: k-rows t//32 + 8 i, 16-byte chunk j = t % 32 of the 256 columns
    br = t // 32
    bj = t % 32
    sb = WG_A + (bj // 8) * WG_ATOM + br * 64 + (((bj % 8) ^ (br & 7)) * 8)
    arow = row0 + ar
    bcol = col0 + bj * 8
    acc = G.accumulator(64, WG_BN)
    G.fill_accumulator(acc, 0.0)
    nk = K // WG_BK
    for s in range(WG_STAGES - 2):
        if s < nk:
            for i in range(4):
                P.memcpy_async(sm, s * WG_STAGE + sa + i * 32 * 64, A,
                               (arow + i * 32, s * WG_BK + ac * 8), 16)
            for i in range(8):
                P.memcpy_async(sm, s * WG_STAGE + sb + i * 8 * 64, B,
                               (s * WG_BK + br + i * 8, bcol), 16)
        P.commit()
    for kb in range(nk):
        P.wait_prior(WG_STAGES - 3)
        G.fence_proxy_async()
        G.wait_group(1)
        cuda.syncthreads()
        nxt = kb + WG_STAGES - 2
        if nxt < nk:
            ws = (nxt % WG_STAGES) * WG_STAGE
            k1 = nxt * WG_BK
            for i in range(4):
                P.memcpy_async(sm, ws + sa + i * 32 * 64, A,
                               (arow + i * 32, k1 + ac * 8), 16)
            for i in range(8):
                P.memcpy_async(sm, ws + sb + i * 8 * 64, B,
                               (k1 + br + i * 8, bcol), 16)
        P.commit()
        rs = (kb % WG_STAGES) * WG_STAGE
        G.fence()
        for kk in range(4):
            da = G.make_descriptor(sm, rs + g * 64 * 64 + kk * 16, 128, 16, 1024)
            db = G.make_descriptor(sm, rs + WG_A + kk * 16 * 64, 128, WG_ATOM * 2, 1024)
            G.mma_async(acc, da, db, np.float16, "row_major", "row_major")
        G.commit_group()
    G.wait_group(0)
    G.store_accumulator(C[row0 + g * 64:, col0:], acc)


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
    """Launch ``kernel`` (wgmma_gemm, wmma_gemm or fma_gemm) on device arrays a, b -> c."""
    n_rows, n_cols = c.shape
    if kernel is wgmma_gemm:
        wgmma_gemm[(n_cols // WG_BN, n_rows // WG_BM), WG_THREADS, 0, WG_SMEM](a, b, c)
    elif kernel is wmma_gemm:
        wmma_gemm[(n_cols // BN, n_rows // BM), THREADS, 0, SMEM_BYTES](a, b, c)
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
    p.add_argument("--kernel", choices=("auto", "wgmma", "wmma", "fma"), default="auto",
                   help="auto (the default): wgmma on a compute capability 9.0 GPU, else wmma")
    args = p.parse_args(argv)
    dev = cuda.get_current_device()
    simulated = dev.name.startswith("cujit simulated")
    name = "fma" if args.fma else args.kernel
    if name == "auto":
        hopper = not simulated and tuple(dev.compute_capability) == (9, 0)
        name = "wgmma" if hopper else "wmma"
    step = max(BM, BN, BK)
    n = args.size or (step if simulated else 4096)
    if n % step:
        p.error(f"--size must be a multiple of {step}, got {n}")
    rng = np.random.default_rng(0)
    a = rng.standard_normal((n, n)).astype(np.float16)
    b = rng.standard_normal((n, n)).astype(np.float16)
    d_a, d_b = cuda.to_device(a), cuda.to_device(b)
    d_c = cuda.device_array((n, n), dtype=np.float32)
    kernel = {"wgmma": wgmma_gemm, "wmma": wmma_gemm, "fma": fma_gemm}[name]
    launch(kernel, d_a, d_b, d_c)                 # the first launch compiles
    start, end = cuda.event(), cuda.event()
    reps = 1 if simulated else 10      # the mean of 10 warm launches on a GPU
    start.record()
    for _ in range(reps):
        launch(kernel, d_a, d_b, d_c)
    end.record()
    end.synchronize()
    ms = start.elapsed_time(end) / reps
    c = d_c.copy_to_host()
    a32, b32 = a.astype(np.float32), b.astype(np.float32)
    mag = np.abs(a32) @ np.abs(b32)
    err = float(np.max(np.abs(c - a32 @ b32) / mag))
    rate = f", {2 * n ** 3 / (ms * 1e-3) / 1e12:.1f} TFLOP/s" if ms > 0 else ""
    ok = err <= tolerance(a, b)
    print(f"{n}x{n}x{n} fp16 {name}: {ms:.3f} ms{rate}; max relative error {err:.3g} "
          f"({'ok' if ok else 'TOO LARGE'})")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
