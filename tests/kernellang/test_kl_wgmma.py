"""Warpgroup MMA from kernels on the simulator (``cujit.wgmma``, a cujit extension beyond
numba.cuda): GEMMs whose tiles a kernel writes to shared memory in each of the descriptor
layouts (K-major and MN-major, swizzle 0, 32, 64 and 128 bytes) in float16, bfloat16 and
tf32, against NumPy; chained mma_async, accumulate=False, the groups that a wait lands and
those it leaves in flight; the race checks of the asynchronous reads; the argument checks.
The compiled (PTX) and GPU tests are in test_kl_wgmma_compiled.py."""
import numpy as np
import pytest

import cujit as cuda
from cujit import wgmma as G
from cujit import wmma as W
from cujit import types as T
from cujit.simulator.errors import DataRaceError, WarpDivergenceError

# the simulator's checks and model of the ordering rules: on a GPU these kernels are undefined
# behaviour (a bad descriptor faults with CUDA_ERROR_ILLEGAL_INSTRUCTION, a sticky error)
sim_only = pytest.mark.skipif(cuda.is_available() and not cuda.config.ENABLE_CUDASIM,
                              reason="the simulator's checks")

_RAW = {"float16": np.float16, "bfloat16": np.uint16, "tf32": np.float32}
_PREC = {"float16": np.float16, "bfloat16": "bfloat16", "tf32": "tf32"}


# -- the model ---------------------------------------------------------------------------------
def rounded(raw, prec):
    """float64 values the tensor cores read from raw elements ``raw`` of precision
    ``prec``."""
    if prec == "bfloat16":
        return W.from_bfloat16(raw).astype(np.float64)
    if prec == "tf32":
        return W.round_to_tf32(raw).astype(np.float64)
    return raw.astype(np.float64)


def model(a, b, ki, c=None):
    """``a @ b`` (+ ``c``) as a chain of ``mma_async`` of depth ``ki``: each step's sum exact,
    rounded to float32 once (the simulator's model, module docstring of cujit.wgmma)."""
    acc = np.zeros((a.shape[0], b.shape[1]), np.float32) if c is None else c
    for k in range(0, a.shape[1], ki):
        acc = (a[:, k:k + ki] @ b[k:k + ki] + acc.astype(np.float64)).astype(np.float32)
    return acc


def agrees(C, want, a, b, ki):
    """``C`` is the model's value: bit for bit on the simulator, within a few float32 ulps of
    ``sum(|a*b|)`` per step on a GPU (docs/kernel-language.md, "Tensor cores")."""
    if cuda.get_current_device().name.startswith("cujit simulated"):
        np.testing.assert_array_equal(C, want)
    else:
        mag = np.abs(a) @ np.abs(b)
        steps = a.shape[1] // ki + 1
        assert np.all(np.abs(C.astype(np.float64) - want) <= steps * 2.0 ** -20 * mag)


def inputs(m, n, k, prec, seed=0):
    """Raw A (m x k) and B (k x n) of precision ``prec`` (bfloat16: the bits)."""
    rng = np.random.default_rng(seed)
    a, b = rng.standard_normal((m, k)), rng.standard_normal((k, n))
    if prec == "bfloat16":
        return W.to_bfloat16(a), W.to_bfloat16(b)
    return a.astype(_RAW[prec]), b.astype(_RAW[prec])


# -- the layouts, as a kernel writes a whole operand ------------------------------------------
class Layout:
    """Where each element of an ``rows x depth`` operand (rows along M or N, depth along K)
    of ``e``-byte elements goes in its shared buffer, laid out K-major or MN-major with
    swizzle ``w`` as whole swizzle atoms (CUTLASS's canonical GMMA layouts written out for
    the whole operand), and the descriptor of each ``ki``-deep step: ``lbo``, ``sbo`` and
    ``starts`` (element offsets)."""

    def __init__(self, rows, depth, e, k_major, w, ki):
        self.rows, self.depth, self.e, self.k_major, self.w = rows, depth, e, k_major, w
        per = 16 // e                           # elements of a 16-byte chunk
        if k_major and w == 0:                  # 8 x 16-byte core matrices, K blocks adjacent
            self.lbo, self.sbo = 128, depth // per * 128
            step = [kk * ki // per * self.lbo for kk in range(depth // ki)]
        elif k_major:                           # rows of w bytes, 8-row atoms down the rows,
            row = w // e                        # then column blocks of the K beyond a row
            self.lbo, self.sbo = 0, 8 * w
            block = rows // 8 * self.sbo
            step = [(k0 // row) * block + (k0 % row) * e for k0 in range(0, depth, ki)]
        elif w == 0:                            # core matrices of 8 K x 16 bytes of MN
            self.lbo, self.sbo = 128, depth // 8 * 128
            step = [kk * ki // 8 * self.lbo for kk in range(depth // ki)]
        else:                                   # 8 K-rows of w bytes of MN per atom, K
            self.sbo = 8 * w                    # atoms stacked, MN blocks after all of K
            self.lbo = depth // 8 * self.sbo
            step = [k0 // 8 * self.sbo for k0 in range(0, depth, ki)]
        self.starts = [s // e for s in step]

    def byte(self, r, k):
        """Byte offset of element (r, k) from the operand's (1024-aligned) first byte."""
        e, w = self.e, self.w
        per = 16 // e
        if self.k_major and w == 0:
            x = (r % 8) * 16 + (r // 8) * self.sbo + (k % per) * e + (k // per) * self.lbo
        elif self.k_major:
            row = w // e
            x = (r % 8) * w + (r // 8) * self.sbo + (k // row) * (self.rows // 8 * self.sbo) \
                + (k % row) * e
        elif w == 0:
            x = (r % per) * e + (r // per) * self.sbo + (k % 8) * 16 + (k // 8) * self.lbo
        else:
            row = w // e
            x = (r % row) * e + (r // row) * self.lbo + (k % 8) * w + (k // 8) * self.sbo
        if w:
            x ^= ((x >> 7) & (w // 16 - 1)) << 4
        return x

    def index(self):
        """int32 (rows, depth): the element index (in the buffer) of each element."""
        r = np.arange(self.rows)[:, None]
        k = np.arange(self.depth)[None, :]
        return (self.byte(r, k) // self.e).astype(np.int32)

    def size(self):
        """Elements the buffer needs, a whole number of 1024-byte blocks."""
        n = int(self.index().max()) + 1
        per = 1024 // self.e
        return (n + per - 1) // per * per


def make_gemm(prec, a_layout, b_layout, wa, wb, sa_size, sb_size, ki, n):
    """A kernel computing ``C = A @ B`` for 64-row slices of A, one per warpgroup: A's
    slices and B written into shared memory at the element indices ``ia`` and ``ib``, then
    one ``mma_async`` per ``ki``-deep step from the descriptors ``aoff[g, step]`` /
    ``boff[step]`` (element offsets) with LBO/SBO ``lsa``."""
    raw, dt = _RAW[prec], _PREC[prec]

    @cuda.jit
    def gemm(A, B, C, ia, ib, aoff, boff, lsa):
        sa = cuda.shared.array(sa_size, raw)
        sb = cuda.shared.array(sb_size, raw)
        t = cuda.threadIdx.x
        nt = cuda.blockDim.x
        m, depth = A.shape
        for i in range(t, m * depth, nt):
            sa[ia[i // depth, i % depth]] = A[i // depth, i % depth]
        for i in range(t, depth * n, nt):
            sb[ib[i % n, i // n]] = B[i // n, i % n]
        cuda.wgmma.fence_proxy_async()
        cuda.syncthreads()
        g = t // 128
        acc = cuda.wgmma.accumulator(64, n)
        cuda.wgmma.fill_accumulator(acc, 0.0)
        cuda.wgmma.fence()
        for s in range(depth // ki):
            a = cuda.wgmma.make_descriptor(sa, aoff[g, s], wa, lsa[0], lsa[1])
            b = cuda.wgmma.make_descriptor(sb, boff[s], wb, lsa[2], lsa[3])
            cuda.wgmma.mma_async(acc, a, b, dt, a_layout, b_layout)
        cuda.wgmma.commit_group()
        cuda.wgmma.wait_group(0)
        cuda.wgmma.store_accumulator(C[64 * g:, :], acc)
    return gemm


def run_gemm(prec, a_layout, b_layout, wa, wb, m, n, k, seed=0):
    e = np.dtype(_RAW[prec]).itemsize
    ki = 8 if prec == "tf32" else 16
    groups = m // 64
    la = Layout(64, k, e, a_layout == "row_major", wa, ki)
    lb = Layout(n, k, e, b_layout == "col_major", wb, ki)
    per_group = la.size()
    ia = np.concatenate([la.index() + g * per_group for g in range(groups)])
    aoff = np.array([[s + g * per_group for s in la.starts] for g in range(groups)], np.int32)
    boff = np.array(lb.starts, np.int32)
    lsa = np.array([la.lbo, la.sbo, lb.lbo, lb.sbo], np.int64)
    A, B = inputs(m, n, k, prec, seed)
    C = np.zeros((m, n), np.float32)
    kern = make_gemm(prec, a_layout, b_layout, wa, wb, groups * per_group, lb.size(), ki, n)
    kern[1, 128 * groups](A, B, C, ia, lb.index(), aoff, boff, lsa)
    a, b = rounded(A, prec), rounded(B, prec)
    agrees(C, model(a, b, ki), a, b, ki)


@pytest.mark.parametrize("swizzle", [0, 32, 64, 128])
@pytest.mark.parametrize("a_layout, b_layout", [
    ("row_major", "col_major"), ("row_major", "row_major"), ("col_major", "col_major"),
    ("col_major", "row_major")])
def test_f16_gemm_of_every_layout_and_swizzle(a_layout, b_layout, swizzle):
    # row_major A and col_major B are K-major, the others MN-major
    run_gemm("float16", a_layout, b_layout, swizzle, swizzle, 64, 64, 64)


@pytest.mark.parametrize("swizzle", [0, 128])
def test_bf16_gemm_reads_the_bits(swizzle):
    run_gemm("bfloat16", "row_major", "row_major", swizzle, swizzle, 64, 64, 64, seed=1)


@pytest.mark.parametrize("swizzle", [0, 32, 64, 128])
def test_tf32_gemm_is_k_major_and_drops_the_low_mantissa_bits(swizzle):
    run_gemm("tf32", "row_major", "col_major", swizzle, swizzle, 64, 64, 32, seed=2)


def test_two_warpgroups_compute_a_128x256_tile_in_float16():
    run_gemm("float16", "row_major", "row_major", 128, 128, 128, 256, 64, seed=3)


def test_two_warpgroups_in_bf16_with_different_swizzles_per_operand():
    run_gemm("bfloat16", "col_major", "col_major", 64, 32, 128, 256, 64, seed=4)


# -- one 64 x 16 x 64 step: accumulation, chaining, groups, the store ----------------------
_LA = Layout(64, 16, 2, True, 0, 16)        # A K-major, no swizzle
_LB = Layout(64, 16, 2, False, 0, 16)       # B MN-major (row_major), no swizzle
IA, IB = _LA.index(), _LB.index()
LBO_A, SBO_A, LBO_B, SBO_B = _LA.lbo, _LA.sbo, _LB.lbo, _LB.sbo


@cuda.jit(device=True)
def load_tiles(A, B, sa, sb, ia, ib):
    t = cuda.threadIdx.x
    for i in range(t, 64 * 16, cuda.blockDim.x):
        sa[ia[i // 16, i % 16]] = A[i // 16, i % 16]
        sb[ib[i % 64, i // 64]] = B[i // 64, i % 64]
    cuda.wgmma.fence_proxy_async()
    cuda.syncthreads()


@cuda.jit(device=True)
def descriptors(sa, sb):
    return (cuda.wgmma.make_descriptor(sa, 0, 0, LBO_A, SBO_A),
            cuda.wgmma.make_descriptor(sb, 0, 0, LBO_B, SBO_B))


@cuda.jit
def chained(A, B, C, ia, ib, c0, accumulate):
    sa = cuda.shared.array(1024, np.float16)
    sb = cuda.shared.array(1024, np.float16)
    load_tiles(A, B, sa, sb, ia, ib)
    acc = cuda.wgmma.accumulator(64, 64)
    cuda.wgmma.fill_accumulator(acc, c0)
    cuda.wgmma.fence()
    a, b = descriptors(sa, sb)
    cuda.wgmma.mma_async(acc, a, b, np.float16, "row_major", "row_major", accumulate)
    cuda.wgmma.mma_async(acc, a, b, np.float16, "row_major", "row_major")
    cuda.wgmma.commit_group()
    cuda.wgmma.wait_group(0)
    cuda.wgmma.store_accumulator(C, acc)


def _one_step_inputs(seed=5):
    A, B = inputs(64, 64, 16, "float16", seed)
    return A, B, A.astype(np.float64), B.astype(np.float64)


def test_a_second_mma_before_the_wait_accumulates_onto_the_pending_result():
    A, B, a, b = _one_step_inputs()
    C = np.zeros((64, 64), np.float32)
    chained[1, 128](A, B, C, IA, IB, 1.5, True)
    first = (a @ b + 1.5).astype(np.float32)
    agrees(C, (a @ b + first).astype(np.float32), a, b, 16)


def test_accumulate_false_ignores_the_accumulator():
    A, B, a, b = _one_step_inputs(6)
    C = np.zeros((64, 64), np.float32)
    chained[1, 128](A, B, C, IA, IB, 7.0, False)
    first = (a @ b).astype(np.float32)
    agrees(C, (a @ b + first).astype(np.float32), a, b, 16)


@cuda.jit
def dynamic_tiles(A, B, C, ia, ib):
    dyn = cuda.shared.array(0, np.float16)
    t = cuda.threadIdx.x
    for i in range(t, 64 * 16, cuda.blockDim.x):
        dyn[ia[i // 16, i % 16]] = A[i // 16, i % 16]
        dyn[1024 + ib[i % 64, i // 64]] = B[i // 64, i % 64]
    cuda.wgmma.fence_proxy_async()
    cuda.syncthreads()
    acc = cuda.wgmma.accumulator(64, 64)
    cuda.wgmma.fill_accumulator(acc, 0.0)
    cuda.wgmma.fence()
    a = cuda.wgmma.make_descriptor(dyn, 0, 0, 128, 256)
    b = cuda.wgmma.make_descriptor(dyn, 1024, 0, 128, 256)
    cuda.wgmma.mma_async(acc, a, b, np.float16, "row_major", "row_major")
    cuda.wgmma.commit_group()
    cuda.wgmma.wait_group(0)
    cuda.wgmma.store_accumulator(C, acc)


@pytest.mark.parametrize("checks", [True, False])
def test_tiles_in_dynamic_shared_memory(checks, monkeypatch):
    monkeypatch.setenv("CUJIT_SIM_CHECKS", "1" if checks else "0")
    A, B, a, b = _one_step_inputs(9)
    C = np.zeros((64, 64), np.float32)
    dynamic_tiles[1, 128, 0, 4096](A, B, C, IA, IB)
    agrees(C, (a @ b).astype(np.float32), a, b, 16)


@sim_only
def test_a_launch_under_the_access_recorder_reads_the_tiles_it_wraps():
    A, B, a, b = _one_step_inputs(10)
    C = np.zeros((64, 64), np.float32)
    with cuda.access_report() as rep:
        chained[1, 128](A, B, C, IA, IB, 0.0, True)
    first = (a @ b).astype(np.float32)
    agrees(C, (a @ b + first).astype(np.float32), a, b, 16)
    # the tile reads and the accumulator's stores are the simulator's, not the kernel's own
    # element accesses: the report has the kernel's lines only
    assert rep.rows and all(row.filename.endswith("test_kl_wgmma.py") for row in rep.rows), \
        [row.filename for row in rep.rows]


@cuda.jit
def grouped(A, B, C1, C2, ia, ib, mode):
    sa = cuda.shared.array(1024, np.float16)
    sb = cuda.shared.array(1024, np.float16)
    load_tiles(A, B, sa, sb, ia, ib)
    acc1 = cuda.wgmma.accumulator(64, 64)
    acc2 = cuda.wgmma.accumulator(64, 64)
    cuda.wgmma.fill_accumulator(acc1, 3.0)
    cuda.wgmma.fill_accumulator(acc2, 3.0)
    cuda.wgmma.fence()
    a, b = descriptors(sa, sb)
    cuda.wgmma.mma_async(acc1, a, b, np.float16, "row_major", "row_major")
    if mode != 2:
        cuda.wgmma.commit_group()
    cuda.wgmma.mma_async(acc2, a, b, np.float16, "row_major", "row_major")
    cuda.wgmma.commit_group()
    if mode == 1:
        cuda.wgmma.wait_group(1)
    elif mode == 2:
        cuda.wgmma.wait_group(0)
    cuda.wgmma.store_accumulator(C1, acc1)
    cuda.wgmma.store_accumulator(C2, acc2)


def test_a_wait_lands_the_groups_it_covers():
    # one group of both products, wait_group(0)
    A, B, a, b = _one_step_inputs(7)
    C1, C2 = np.zeros((64, 64), np.float32), np.zeros((64, 64), np.float32)
    grouped[1, 128](A, B, C1, C2, IA, IB, 2)
    done = (a @ b + 3.0).astype(np.float32)
    agrees(C1, done, a, b, 16)
    agrees(C2, done, a, b, 16)


@sim_only
@pytest.mark.parametrize("mode", [0, 1])
def test_storing_an_accumulator_still_in_flight_is_a_race(mode):
    # 0: no wait (acc1's store races); 1: wait_group(1) with two groups: acc1 has landed,
    # acc2's store races.  C2 is never written.
    A, B, a, b = _one_step_inputs(7)
    C1, C2 = np.zeros((64, 64), np.float32), np.full((64, 64), 5.0, np.float32)
    with pytest.raises(DataRaceError, match="store_accumulator while an mma_async into it"):
        grouped[1, 128](A, B, C1, C2, IA, IB, mode)
    np.testing.assert_array_equal(C2, np.full((64, 64), 5.0, np.float32))


@cuda.jit
def uncommitted(A, B, C, ia, ib):
    sa = cuda.shared.array(1024, np.float16)
    sb = cuda.shared.array(1024, np.float16)
    load_tiles(A, B, sa, sb, ia, ib)
    acc = cuda.wgmma.accumulator(64, 64)
    cuda.wgmma.fill_accumulator(acc, -2.0)
    cuda.wgmma.fence()
    a, b = descriptors(sa, sb)
    cuda.wgmma.mma_async(acc, a, b, np.float16, "row_major", "row_major")
    cuda.wgmma.wait_group(0)
    cuda.wgmma.store_accumulator(C, acc)


@sim_only
def test_an_uncommitted_mma_stays_in_flight_at_a_wait():
    A, B, _, _ = _one_step_inputs()
    C = np.zeros((64, 64), np.float32)
    with pytest.raises(DataRaceError, match="commit_group it, then wait_group"):
        uncommitted[1, 128](A, B, C, IA, IB)
    np.testing.assert_array_equal(C, np.zeros((64, 64), np.float32))


@cuda.jit
def per_thread_c(C):
    sa = cuda.shared.array(1024, np.float16)        # zeros: A @ B adds nothing
    acc = cuda.wgmma.accumulator(64, 32)
    cuda.wgmma.fill_accumulator(acc, cuda.threadIdx.x)
    cuda.wgmma.fence()
    a = cuda.wgmma.make_descriptor(sa, 0, 0, 128, 256)
    cuda.wgmma.mma_async(acc, a, a, np.float16, "row_major", "col_major")
    cuda.wgmma.commit_group()
    cuda.wgmma.wait_group(0)
    cuda.wgmma.store_accumulator(C, acc)


def test_c_of_each_element_comes_from_the_thread_that_holds_it():
    C = np.zeros((64, 32), np.float32)
    per_thread_c[1, 128](C)
    r, c = np.arange(64)[:, None], np.arange(32)[None, :]
    np.testing.assert_array_equal(C, 32 * (r // 16) + 4 * (r % 8) + (c % 8) // 2)


@cuda.jit
def store_by(C, who, value):
    acc = cuda.wgmma.accumulator(64, 24)
    cuda.wgmma.fill_accumulator(acc, value)
    if cuda.threadIdx.x == who:
        cuda.wgmma.store_accumulator(C, acc)


@pytest.mark.parametrize("who", [0, 37, 127, 130])
def test_a_thread_stores_its_registers_elements(who):
    C = np.full((64, 24), -1.0, np.float32)
    store_by[1, 256](C, who, 0.25)
    # the docstring's register mapping: register i of thread t (warp w, lane l)
    w, lane = (who % 128) // 32, who % 32
    want = np.full((64, 24), -1.0, np.float32)
    for i in range(12):
        want[16 * w + lane // 4 + 8 * ((i // 2) % 2), 8 * (i // 4) + 2 * (lane % 4) + i % 2] \
            = 0.25
    np.testing.assert_array_equal(C, want)


@cuda.jit
def store_half(C, value):
    acc = cuda.wgmma.accumulator(64, 8)
    cuda.wgmma.fill_accumulator(acc, value)
    cuda.wgmma.store_accumulator(C[8:, 8:], acc)


def test_a_float16_store_rounds_to_nearest_even_into_a_view():
    C = np.zeros((72, 16), np.float16)
    v = np.float32(1.0) + np.float32(2.0 ** -11)       # halfway between two float16s
    store_half[1, 128](C, v)
    assert np.all(C[8:, 8:] == np.float16(1.0))
    assert not C[:8].any() and not C[:, :8].any()


@sim_only
def test_a_store_past_the_arrays_end_is_an_index_error():
    with pytest.raises(IndexError, match="out of bounds"):
        store_half[1, 128](np.zeros((40, 16), np.float32), 1.0)


# -- race checks of the asynchronous reads -------------------------------------------------
@cuda.jit
def unsynchronised(A, B, C, ia, ib, where):
    sa = cuda.shared.array(1024, np.float16)
    sb = cuda.shared.array(1024, np.float16)
    t = cuda.threadIdx.x
    for i in range(t, 64 * 16, cuda.blockDim.x):
        sa[ia[i // 16, i % 16]] = A[i // 16, i % 16]
        sb[ib[i % 64, i // 64]] = B[i // 64, i % 64]
    cuda.wgmma.fence_proxy_async()
    if where != 0:
        cuda.syncthreads()
    acc = cuda.wgmma.accumulator(64, 64)
    cuda.wgmma.fill_accumulator(acc, 0.0)
    cuda.wgmma.fence()
    a, b = descriptors(sa, sb)
    cuda.wgmma.mma_async(acc, a, b, np.float16, "row_major", "row_major")
    cuda.wgmma.commit_group()
    if where == 1:
        cuda.syncthreads()
        sb[ib[t % 64, t // 64]] = np.float16(t)         # before the wait: the tile is read
    cuda.wgmma.wait_group(0)
    if where == 2:
        sb[ib[t % 64, t // 64]] = np.float16(t)         # after the wait, without a barrier
    if where == 3:
        if t == 0:
            sa[0] = np.float16(1.0)                     # by the thread that waits next
        cuda.wgmma.wait_group(0)
    cuda.wgmma.store_accumulator(C, acc)


@sim_only
@pytest.mark.parametrize("where, what", [
    (0, "data race on shared memory"),      # the tiles written without a barrier
    (1, "data race on shared memory"),      # overwritten after a barrier, before the wait
    # overwritten after the wait, without a barrier: the read's site is the mma_async
    (2, r"data race on shared memory: .* writes sb\[2\] at test_kl_wgmma.py:\d+, which "
        r"threadIdx=\(0, 0, 0\) read at test_kl_wgmma.py:\d+"),
])
def test_unsynchronised_tile_accesses_are_races(where, what):
    A, B, _, _ = _one_step_inputs()
    C = np.zeros((64, 64), np.float32)
    with pytest.raises(DataRaceError, match=what):
        unsynchronised[1, 128](A, B, C, IA, IB, where)


@cuda.jit
def own_overwrite(A, B, C, ia, ib):
    sa = cuda.shared.array(1024, np.float16)
    sb = cuda.shared.array(1024, np.float16)
    load_tiles(A, B, sa, sb, ia, ib)
    acc = cuda.wgmma.accumulator(64, 64)
    cuda.wgmma.fill_accumulator(acc, 0.0)
    cuda.wgmma.fence()
    a, b = descriptors(sa, sb)
    cuda.wgmma.mma_async(acc, a, b, np.float16, "row_major", "row_major")
    cuda.wgmma.commit_group()
    if cuda.threadIdx.x == 0:
        sa[0] = sa[0] + np.float16(1.0)     # the element only this thread's lane records
    cuda.wgmma.wait_group(0)
    cuda.wgmma.store_accumulator(C, acc)


@sim_only
def test_a_tile_the_issuing_thread_overwrites_before_the_wait_is_reported():
    A, B, _, _ = _one_step_inputs()
    C = np.zeros((64, 64), np.float32)
    with pytest.raises(DataRaceError, match=r"A tile changed since it read it \(sa\[0\]\)"):
        own_overwrite[1, 128](A, B, C, IA, IB)


@cuda.jit
def double_buffered(A, B, C, ia, ib):
    sa = cuda.shared.array(2048, np.float16)
    sb = cuda.shared.array(1024, np.float16)
    t = cuda.threadIdx.x
    load_tiles(A, B, sa, sb, ia, ib)
    acc = cuda.wgmma.accumulator(64, 64)
    cuda.wgmma.fill_accumulator(acc, 0.0)
    cuda.wgmma.fence()
    a, b = descriptors(sa, sb)
    cuda.wgmma.mma_async(acc, a, b, np.float16, "row_major", "row_major")
    cuda.wgmma.commit_group()
    for i in range(t, 64 * 16, cuda.blockDim.x):       # the other stage, while it runs
        sa[1024 + ia[i // 16, i % 16]] = A[i // 16, i % 16] * np.float16(2.0)
    cuda.wgmma.fence_proxy_async()
    cuda.syncthreads()
    cuda.wgmma.fence()
    a2 = cuda.wgmma.make_descriptor(sa, 1024, 0, 128, 256)
    cuda.wgmma.mma_async(acc, a2, b, np.float16, "row_major", "row_major")
    cuda.wgmma.commit_group()
    cuda.wgmma.wait_group(1)
    cuda.wgmma.wait_group(0)
    cuda.wgmma.store_accumulator(C, acc)


def test_writing_another_stage_while_an_mma_runs_is_no_race():
    A, B, a, b = _one_step_inputs(8)
    C = np.zeros((64, 64), np.float32)
    double_buffered[1, 128](A, B, C, IA, IB)
    first = (a @ b).astype(np.float32)
    agrees(C, (2 * a @ b + first).astype(np.float32), a, b, 16)


# -- argument checks in kernels ------------------------------------------------------------
@cuda.jit
def one_mma(A, B, C, ia, ib, a_off, lbo, swz_off, lane_step):
    sa = cuda.shared.array(1024, np.float16)
    sb = cuda.shared.array(1024, np.float16)
    load_tiles(A, B, sa, sb, ia, ib)
    acc = cuda.wgmma.accumulator(64, 64)
    cuda.wgmma.fence()
    a = cuda.wgmma.make_descriptor(sa, a_off + lane_step * (cuda.threadIdx.x % 2), 0, lbo,
                                   256)
    b = cuda.wgmma.make_descriptor(sb, swz_off, 32, 128, 256)
    cuda.wgmma.mma_async(acc, a, b, np.float16, "row_major", "col_major")
    cuda.wgmma.commit_group()
    cuda.wgmma.wait_group(0)
    cuda.wgmma.store_accumulator(C, acc)


@sim_only
@pytest.mark.parametrize("a_off, lbo, swz_off, lane_step, threads, err, what", [
    (0, 120, 0, 0, 128, ValueError, "leading_bytes must be a multiple of 16"),
    (0, 2 ** 18, 0, 0, 128, ValueError, r"in \[0, 2\*\*18\)"),
    (3, 128, 0, 0, 128, ValueError, "16-byte aligned start"),
    (-8, 128, 0, 0, 128, ValueError, "offset must be >= 0"),
    # rows 32..47 of A (warp 2) are the first past the end
    (512, 128, 0, 0, 128, IndexError, "a_desc's descriptor .* reads bytes up to 2560 of its "
                                      "shared buffer, which holds 2048"),
    (0, 128, 16, 0, 128, ValueError, "b_desc's descriptor starts 32 bytes into its buffer"),
    (0, 128, 0, 8, 128, WarpDivergenceError, "different accumulator shapes, descriptors"),
    (0, 128, 0, 0, 96, WarpDivergenceError, "the block has 96 threads"),
    (0, 128, 0, 0, 192, WarpDivergenceError, "the block has 192 threads"),
])
def test_bad_descriptors_and_blocks_are_errors(a_off, lbo, swz_off, lane_step, threads, err,
                                               what):
    A, B, _, _ = _one_step_inputs()
    C = np.zeros((64, 64), np.float32)
    with pytest.raises(err, match=what):
        one_mma[1, threads](A, B, C, IA, IB, a_off, lbo, swz_off, lane_step)


def make_mn_major(n):
    """A kernel of one mma_async whose B (MN-major, 128-byte swizzle, ``n`` wide) starts
    ``b_off`` elements into its buffer."""
    @cuda.jit
    def mn_major(C, b_off):
        sa = cuda.shared.array(2048, np.float16)
        sb = cuda.shared.array(4096, np.float16)
        acc = cuda.wgmma.accumulator(64, n)
        cuda.wgmma.fill_accumulator(acc, 1.0)
        a = cuda.wgmma.make_descriptor(sa, 0, 0, 128, 256)
        b = cuda.wgmma.make_descriptor(sb, b_off, 128, 1024, 1024)
        cuda.wgmma.mma_async(acc, a, b, np.float16, "row_major", "row_major")
        cuda.wgmma.commit_group()
        cuda.wgmma.wait_group(0)
        cuda.wgmma.store_accumulator(C, acc)
    return mn_major


@sim_only
@pytest.mark.parametrize("n, b_off, ok", [
    (8, 0, True), (8, 56, True),        # 16 bytes of each 128-byte row: up to 112 after
    (8, 64, False),                     # the atom's second row
    (64, 0, True), (64, 8, False),      # whole rows: only at the atom's first byte
    (64, 512, True),                    # the next atom
])
def test_a_swizzled_mn_major_operand_stays_inside_its_rows(n, b_off, ok):
    C = np.zeros((64, n), np.float32)
    kern = make_mn_major(n)
    if ok:
        kern[1, 128](C, b_off)
        np.testing.assert_array_equal(C, 1.0)     # zero tiles: C stays as filled
    else:
        with pytest.raises(ValueError, match=f"starts {2 * b_off} bytes into its buffer"):
            kern[1, 128](C, b_off)


@cuda.jit
def exits_early(C):
    sa = cuda.shared.array(1024, np.float16)
    if cuda.threadIdx.x % 32 >= 16:
        return
    acc = cuda.wgmma.accumulator(64, 64)
    a = cuda.wgmma.make_descriptor(sa, 0, 0, 128, 256)
    cuda.wgmma.mma_async(acc, a, a, np.float16, "row_major", "col_major")


@sim_only
def test_exited_lanes_are_a_clear_error():
    with pytest.raises(WarpDivergenceError, match="only 16 threads .* of warp 0 do: the other "
                                                  "16 lane"):
        exits_early[1, 128](np.zeros((64, 64), np.float32))


# -- the simulator's own checks of what the compiler refuses when it types a kernel ---------
class _Block:
    nthreads = 128
    bid = (0, 0, 0)
    dyn_tracker = None

    def __init__(self, arrays):
        from cujit.simulator.memory import SharedMemory
        self.shared = SharedMemory(0, 48 * 1024)
        self.shared_arrays = dict(enumerate(arrays))


class _Lane:
    """Lane 0 of a block whose shared arrays (checks off: plain NumPy) are ``arrays``."""
    laneid = warp = 0
    tid = (0, 0, 0)

    def __init__(self, *arrays):
        self.block = _Block(arrays)
        self.mmas = None


_SMEM = np.zeros(1024, np.float16)
_ACC = G.AccumulatorValue(T.WarpgroupAccumulator(64, 64))


def _desc():
    return G.DescriptorValue(_SMEM, 0, 0, 128, 256)


@pytest.mark.parametrize("op, args, err, what", [
    ("descriptor", (_SMEM, 0, 48, 128, 256), ValueError, r"swizzle must be one of \(0, 32"),
    ("descriptor", (_SMEM, 0, True, 128, 256), ValueError, "swizzle must be one of"),
    ("descriptor", (_SMEM, 0, 0, 128.0, 256), TypeError, "leading_bytes must be an integer"),
    ("descriptor", (_SMEM, 0, 0, 128, 24), ValueError, "stride_bytes must be a multiple of 16"),
    ("descriptor", (_SMEM, 1.0, 0, 128, 256), TypeError, "offset must be an integer"),
    ("descriptor", (np.zeros(1024, np.float16), 0, 0, 128, 256), TypeError,
     "not in the block's shared memory"),
    ("descriptor", ([0.0] * 8, 0, 0, 128, 256), TypeError, "an array in shared memory"),
    ("mma", (_ACC, "d", "d", "tf32", "col_major", "col_major"), ValueError,
     "tf32 operands must be K-major"),
    ("mma", (_ACC, "d", "d", "tf32", "row_major", "row_major"), ValueError,
     "tf32 operands must be K-major"),
    ("mma", (_ACC, "d", "d", np.float32, "row_major", "col_major"), ValueError,
     "float32 inputs are read as 'tf32'"),
    ("mma", (_ACC, "d", "d", np.float64, "row_major", "col_major"), ValueError,
     "dtype must be float16"),
    ("mma", (_ACC, "d", "d", np.float16, "row", "col_major"), ValueError,
     "a_layout must be 'row_major' or 'col_major'"),
    ("mma", (_ACC, "d", "d", np.float16, "row_major", None), ValueError, "b_layout must be"),
    ("mma", (_ACC, "d", "d", np.float16, "row_major", "col_major", "yes"), TypeError,
     "accumulate must be a bool"),
    ("mma", (_ACC, _SMEM, "d", np.float16, "row_major", "col_major"), TypeError,
     "a_desc must be a descriptor made by wgmma.make_descriptor"),
    ("mma", (np.zeros((16, 64), np.float32), "d", "d", np.float16, "row_major", "col_major"),
     TypeError, "an accumulator made by wgmma.accumulator"),
    ("wait", (-1,), ValueError, "n must be an integer >= 0"),
    ("wait", (1.0,), ValueError, "n must be an integer >= 0"),
    ("fill", (_ACC, 1j), TypeError, "value must be a real number"),
    ("fill", ("acc", 1.0), TypeError, "an accumulator made by wgmma.accumulator"),
    ("store", (np.zeros((64, 64)), _ACC), TypeError, "2-d float32 or float16 array or view, "
                                                     "got a 2-d float64 array"),
    ("store", (np.zeros(4096, np.float32), _ACC), TypeError, "got a 1-d float32 array"),
    ("store", (np.zeros((8, 64), np.float32), _ACC), IndexError, "index 8"),
])
def test_simulator_refuses_bad_wgmma_arguments(op, args, err, what):
    from cujit.simulator.wgmma_sim import wgmma_call
    args = tuple(_desc() if isinstance(a, str) and a == "d" else a for a in args)
    with pytest.raises(err, match=what):
        wgmma_call(_Lane(_SMEM), op, args)


def test_a_descriptor_counts_its_start_from_the_shared_buffers_first_byte():
    from cujit.simulator.wgmma_sim import wgmma_call
    lane = _Lane(_SMEM)
    d = wgmma_call(lane, "descriptor", (_SMEM[64:], 8, 128, 16, 1024))
    assert (d.start, d.swizzle, d.leading_bytes, d.stride_bytes) == (144, 128, 16, 1024)
    with pytest.raises(ValueError, match="starts 136 bytes into its shared buffer"):
        wgmma_call(lane, "descriptor", (_SMEM[64:], 4, 0, 16, 1024))


def test_a_fill_gives_the_thread_a_new_tile():
    from cujit.simulator.wgmma_sim import wgmma_call
    acc = G.AccumulatorValue(T.WarpgroupAccumulator(64, 16))
    shared = acc.tile
    wgmma_call(_Lane(), "fill", (acc, 2.5))
    assert acc.tile is not shared and not shared.any()
    assert acc.tile.dtype == np.float32 and np.all(acc.tile == 2.5)


@cuda.jit
def refill_in_flight(A, B, C, ia, ib):
    sa = cuda.shared.array(1024, np.float16)
    sb = cuda.shared.array(1024, np.float16)
    load_tiles(A, B, sa, sb, ia, ib)
    acc = cuda.wgmma.accumulator(64, 64)
    cuda.wgmma.fill_accumulator(acc, 0.0)
    cuda.wgmma.fence()
    a, b = descriptors(sa, sb)
    cuda.wgmma.mma_async(acc, a, b, np.float16, "row_major", "row_major")
    cuda.wgmma.commit_group()
    cuda.wgmma.fill_accumulator(acc, 1.0)       # before the wait: the product owns acc
    cuda.wgmma.wait_group(0)
    cuda.wgmma.store_accumulator(C, acc)


@sim_only
def test_filling_an_accumulator_still_in_flight_is_a_race():
    A, B, _, _ = _one_step_inputs()
    C = np.zeros((64, 64), np.float32)
    with pytest.raises(DataRaceError, match="fill_accumulator while an mma_async into it"):
        refill_in_flight[1, 128](A, B, C, IA, IB)


@cuda.jit
def read_as(C, prec):
    sm = cuda.shared.array(2048, np.float16)
    acc = cuda.wgmma.accumulator(64, 64)
    cuda.wgmma.fill_accumulator(acc, 0.0)
    cuda.wgmma.fence()
    a = cuda.wgmma.make_descriptor(sm, 0, 0, 128, 256)
    if prec == 0:
        cuda.wgmma.mma_async(acc, a, a, "bfloat16", "row_major", "col_major")
    else:
        cuda.wgmma.mma_async(acc, a, a, "tf32", "row_major", "col_major")
    cuda.wgmma.commit_group()
    cuda.wgmma.wait_group(0)
    cuda.wgmma.store_accumulator(C, acc)


@pytest.mark.skipif(cuda.is_available() and not cuda.config.ENABLE_CUDASIM,
                    reason="the simulator's check")
@pytest.mark.parametrize("prec, want", [(0, "uint16 array of bfloat16 bits"),
                                        (1, "float32 array")])
def test_a_float_buffer_of_another_precision_is_refused(prec, want):
    C = np.zeros((64, 64), np.float32)
    with pytest.raises(TypeError, match=f"describes a float16 array.*{want}"):
        read_as[1, 128](C, prec)
