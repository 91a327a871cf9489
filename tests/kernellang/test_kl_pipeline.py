"""Asynchronous global -> shared copies from kernels (``cujit.pipeline``, a cujit extension
beyond numba.cuda): the values of multi-stage copies of 4, 8 and 16 bytes, the group
accounting of ``commit``/``wait_prior``, the simulator's model (the destination is written at
the covering wait, so a missing wait shows stale data and a missing barrier a race), the
typing errors, the simulator's argument checks, the PTX, and on a GPU the same values."""
import numpy as np
import pytest

import cujit as cuda
from cujit import pipeline as P
from cujit import types as T
from cujit.simulator.errors import DataRaceError

SIMULATED = not cuda.is_available() or cuda.config.ENABLE_CUDASIM
sim_only = pytest.mark.skipif(not SIMULATED, reason="the simulator's model and checks")

STAGES = 3
CHUNK = 4                   # float32 per 16-byte copy


@cuda.jit
def staged_sum(src, out, nsteps):
    """Each of 16 threads sums its 4-float chunk of ``nsteps`` 64-float slices of ``src``,
    read through a 3-stage ring of shared slices filled by 16-byte copies."""
    t = cuda.threadIdx.x
    ring = cuda.shared.array((STAGES, 64), np.float32)
    for s in range(STAGES - 1):
        if s < nsteps:
            P.memcpy_async(ring, (s, CHUNK * t), src, s * 64 + CHUNK * t, 16)
        P.commit()
    acc = np.float32(0.0)
    for k in range(nsteps):
        P.wait_prior(STAGES - 2)
        cuda.syncthreads()
        nxt = k + STAGES - 1
        if nxt < nsteps:
            P.memcpy_async(ring, (nxt % STAGES, CHUNK * t), src, nxt * 64 + CHUNK * t, 16)
        P.commit()
        # another thread's chunk: visible through the wait and the barrier
        u = (t + 1) % 16
        for j in range(CHUNK):
            acc += ring[k % STAGES, CHUNK * u + j]
    out[t] = acc


def _staged_expected(src, nsteps):
    s = src[:nsteps * 64].reshape(nsteps, 16, CHUNK).sum(axis=(0, 2), dtype=np.float64)
    return np.roll(s, -1).astype(np.float32)


def test_a_three_stage_ring_of_16_byte_copies_gives_every_slice():
    src = np.arange(64 * 7, dtype=np.float32)
    out = np.zeros(16, np.float32)
    staged_sum[1, 16](src, out, 7)
    np.testing.assert_array_equal(out, _staged_expected(src, 7))


@sim_only
def test_copies_run_under_the_access_recorder_and_stay_out_of_its_rows():
    src = np.arange(64 * 7, dtype=np.float32)
    out = np.zeros(16, np.float32)
    with cuda.access_report() as rep:
        staged_sum[1, 16](src, out, 7)
    np.testing.assert_array_equal(out, _staged_expected(src, 7))
    # the kernel's own reads of the ring are rows; the copies' element accesses are not
    assert {(r.array, r.op) for r in rep.rows} == {("ring", "load"), ("out", "store")}
    assert all(r.filename.endswith("test_kl_pipeline.py") for r in rep.rows)


def test_fewer_steps_than_stages_still_completes():
    src = np.arange(64 * 7, dtype=np.float32) * 0.5
    out = np.zeros(16, np.float32)
    staged_sum[1, 16](src, out, 1)
    np.testing.assert_array_equal(out, _staged_expected(src, 1))


@cuda.jit
def copy_sizes(src8, src16, src32, out8, out16, out32):
    """One thread: 4 bytes of int8 (4 elements), 8 bytes of float16 (4) and 8 bytes of
    int32 (2), each from a 2-d source row, into 1-d shared arrays, then copied out."""
    s8 = cuda.shared.array(8, np.int8)
    s16 = cuda.shared.array(8, np.float16)
    s32 = cuda.shared.array(4, np.int32)
    P.memcpy_async(s8, 4, src8, (1, 4), 4)
    P.memcpy_async(s16, 4, src16, (1, 4), 8)
    P.memcpy_async(s32, 2, src32, (1, 2), 8)
    P.commit()
    P.wait_prior(0)
    for i in range(4):
        out8[i] = s8[4 + i]
        out16[i] = s16[4 + i]
    for i in range(2):
        out32[i] = s32[2 + i]


def test_4_and_8_byte_copies_of_narrow_elements():
    src8 = np.arange(16, dtype=np.int8).reshape(2, 8)
    src16 = (np.arange(16, dtype=np.float16) / 4).reshape(2, 8)
    src32 = np.arange(-8, 0, dtype=np.int32).reshape(2, 4)
    out8, out16, out32 = np.zeros(4, np.int8), np.zeros(4, np.float16), np.zeros(2, np.int32)
    copy_sizes[1, 1](src8, src16, src32, out8, out16, out32)
    np.testing.assert_array_equal(out8, src8[1, 4:8])
    np.testing.assert_array_equal(out16, src16[1, 4:8])
    np.testing.assert_array_equal(out32, src32[1, 2:4])


@cuda.jit
def before_and_after_wait(src, out):
    s = cuda.shared.array(4, np.float32)
    for i in range(4):
        s[i] = -1.0
    P.memcpy_async(s, 0, src, 0, 16)
    P.commit()
    out[0] = s[0]               # before the wait: undefined on the GPU
    P.wait_prior(0)
    out[1] = s[0]


@sim_only
def test_the_simulator_writes_the_destination_at_the_covering_wait():
    src = np.array([5, 6, 7, 8], np.float32)
    out = np.zeros(2, np.float32)
    before_and_after_wait[1, 1](src, out)
    assert out.tolist() == [-1.0, 5.0]


@cuda.jit
def groups_land_oldest_first(src, out):
    s = cuda.shared.array(12, np.float32)
    for g in range(3):
        P.memcpy_async(s, 4 * g, src, 4 * g, 16)
        P.commit()
    P.wait_prior(2)
    out[0] = s[0]
    out[1] = s[4]
    P.wait_prior(1)
    out[2] = s[4]
    out[3] = s[8]
    P.memcpy_async(s, 0, src, 12, 16)      # not committed: wait_prior(0) leaves it
    P.wait_prior(0)
    out[4] = s[8]
    out[5] = s[0]


@sim_only
def test_wait_prior_lands_all_but_the_newest_n_committed_groups():
    src = np.arange(1, 17, dtype=np.float32)
    out = np.zeros(6, np.float32)
    groups_land_oldest_first[1, 1](src, out)
    assert out.tolist() == [1.0, 0.0, 5.0, 0.0, 9.0, 1.0]


@cuda.jit
def no_barrier_after_wait(src, out):
    t = cuda.threadIdx.x
    s = cuda.shared.array(64, np.float32)
    P.memcpy_async(s, 4 * t, src, 4 * t, 16)
    P.commit()
    P.wait_prior(0)
    out[t] = s[(4 * t + 4) % 64]      # another thread's copy, without syncthreads()


@sim_only
def test_reading_another_threads_copy_without_a_barrier_is_a_race():
    src = np.arange(64, dtype=np.float32)
    with pytest.raises(DataRaceError, match="data race on shared memory"):
        no_barrier_after_wait[1, 16](src, np.zeros(16, np.float32))


# ---- simulator argument checks ----------------------------------------------------------------
@cuda.jit
def copy_at(dst_kind, src, out, di, si):
    s = cuda.shared.array(16, np.float32)
    if dst_kind == 0:
        P.memcpy_async(s, di, src, si, 16)
    elif dst_kind == 1:
        P.memcpy_async(out, di, src, si, 16)        # dst in global memory
    else:
        P.memcpy_async(s, di, s, si, 16)            # src in shared memory
    P.commit()
    P.wait_prior(0)


@sim_only
@pytest.mark.parametrize("kind, di, si, err, what", [
    (1, 0, 0, TypeError, "dst must be an array in shared memory"),
    (2, 0, 4, TypeError, "src must be an array in global memory"),
    (0, 2, 0, ValueError, "dst address is 8 bytes into its allocation"),
    (0, 0, 1, ValueError, "src address is 4 bytes into its allocation"),
    (0, 14, 0, IndexError, "the 4 elements from index 14"),
    (0, 0, 30, IndexError, "leave src of shape"),
    (0, -4, 0, IndexError, "the 4 elements from index -4"),
])
def test_the_simulator_checks_spaces_alignment_and_bounds(kind, di, si, err, what):
    src = np.zeros(32, np.float32)
    out = np.zeros(16, np.float32)
    with pytest.raises(err, match=what):
        copy_at[1, 1](kind, src, out, di, si)


@sim_only
def test_a_failed_copy_leaves_the_destination_as_it_was():
    src = np.arange(32, dtype=np.float32)
    out = np.full(16, 7.0, np.float32)
    with pytest.raises(TypeError):
        copy_at[1, 1](1, src, out, 0, 0)
    assert np.all(out == 7.0)


@sim_only
def test_wait_prior_outside_the_compiler_checks_n():
    from cujit.simulator.pipeline_sim import pipeline_call

    class _T:
        copies = None
    with pytest.raises(ValueError, match="n must be >= 0"):
        pipeline_call(_T(), "wait", (-1,))
    with pytest.raises(TypeError, match="n must be an integer"):
        pipeline_call(_T(), "wait", (1.5,))


def test_the_api_outside_a_kernel_is_a_clear_error():
    with pytest.raises(RuntimeError, match="cujit.pipeline.commit can only be used inside"):
        P.commit()


# ---- typing errors -----------------------------------------------------------------------------
def _typing_error(body, sig):
    with pytest.raises(cuda.TypingError) as ei:
        cuda.jit(sig)(body)
    return str(ei.value)


def test_nbytes_must_be_a_constant_4_8_or_16_and_fit_the_itemsize():
    def k1(src, n):
        s = cuda.shared.array(16, np.float32)
        P.memcpy_async(s, 0, src, 0, n)
    assert "nbytes of pipeline.memcpy_async() must be a compile-time constant" in \
        _typing_error(k1, "void(float32[:], int64)")

    def k2(src):
        s = cuda.shared.array(16, np.float32)
        P.memcpy_async(s, 0, src, 0, 12)
    assert "nbytes must be 4, 8 or 16" in _typing_error(k2, "void(float32[:])")

    def k3(src):
        s = cuda.shared.array(16, np.float64)
        P.memcpy_async(s, 0, src, 0, 4)
    assert "multiple of the 8-byte itemsize" in _typing_error(k3, "void(float64[:])")


def test_dst_and_src_must_be_arrays_of_one_numeric_dtype():
    def k1(src):
        s = cuda.shared.array(16, np.float32)
        P.memcpy_async(s, 0, src, 0, 16)
    assert "dst and src must have one dtype" in _typing_error(k1, "void(int32[:])")

    def k2(x):
        s = cuda.shared.array(16, np.float32)
        P.memcpy_async(s, 0, x, 0, 16)
    assert "src 'x' must be an array" in _typing_error(k2, "void(float32)")

    def k3(src):
        P.memcpy_async(3, 0, src, 0, 16)
    assert "dst '3' must be an array" in _typing_error(k3, "void(float32[:])")

    def k4(src):
        s = cuda.shared.array(4, np.complex64)
        P.memcpy_async(s, 0, src, 0, 16)
    assert "array of integers or floats" in _typing_error(k4, "void(complex64[:])")


def test_indices_must_match_the_dimensions():
    def k1(src):
        s = cuda.shared.array((4, 16), np.float32)
        P.memcpy_async(s, 0, src, 0, 16)
    assert "dst_index of a 2-d array needs 2 indices, got a scalar" in \
        _typing_error(k1, "void(float32[:])")

    def k2(src):
        s = cuda.shared.array(16, np.float32)
        P.memcpy_async(s, 0, src, (0, 0, 0), 16)
    assert "src_index of a 2-d array needs 2 indices, got 3" in \
        _typing_error(k2, "void(float32[:, :])")

    def k3(src):
        s = cuda.shared.array(16, np.float32)
        P.memcpy_async(s, 0.5, src, 0, 16)
    assert "dst_index must be an integer or a tuple of integers" in \
        _typing_error(k3, "void(float32[:])")


def test_keywords_counts_and_read_only_destinations_are_refused():
    def k1(src):
        s = cuda.shared.array(16, np.float32)
        P.memcpy_async(s, 0, src, 0, nbytes=16)
    assert "positional arguments only" in _typing_error(k1, "void(float32[:])")

    def k2(src):
        P.commit(1)
    assert "pipeline.commit() takes 0 arguments, got 1" in _typing_error(k2, "void(float32[:])")

    def k3(src, dst):
        P.memcpy_async(dst, 0, src, 0, 16)
    ro = T.Array(T.float32, 1, "A", readonly=True)
    assert "is read-only" in _typing_error(k3, T.void(T.float32[:], ro))


def test_wait_prior_needs_a_non_negative_integer_constant():
    def k1(n):
        P.wait_prior(n)
    assert "n (the groups left in flight) of pipeline.wait_prior() must be a compile-time" \
        in _typing_error(k1, "void(int64)")

    def k2(n):
        P.wait_prior(-1)
    assert "n must be >= 0" in _typing_error(k2, "void(int64)")

    def k3(n):
        P.wait_prior(1.0)
    assert "must be an integer constant" in _typing_error(k3, "void(int64)")


# ---- compiled code ----------------------------------------------------------------------------
@pytest.mark.compile
@pytest.mark.parametrize("cc", [(8, 0), (9, 0)])
def test_ptx_has_the_cp_async_instructions(cc):
    from cujit.dispatch.compile_api import compile_ptx
    from cujit.nvvm.linker import link_cubin, nvjitlink_available
    ptx, _ = compile_ptx(staged_sum.py_func, (T.float32[::1], T.float32[::1], T.int64), cc=cc)
    assert "cp.async.cg.shared.global [" in ptx and "], 16;" in ptx
    assert "cp.async.commit_group;" in ptx
    assert "cp.async.wait_group 1;" in ptx
    sig = (T.int8[:, ::1], T.float16[:, ::1], T.int32[:, ::1], T.int8[::1], T.float16[::1],
           T.int32[::1])
    small, _ = compile_ptx(copy_sizes.py_func, sig, cc=cc)
    lines = [l.strip() for l in small.splitlines() if "cp.async.ca.shared.global" in l]
    assert [l.rsplit(",", 1)[1] for l in lines] == [" 4;", " 8;", " 8;"]
    assert "cp.async.wait_group 0;" in small
    if nvjitlink_available():
        assert len(link_cubin(ptx, cc)) > 0
        assert len(link_cubin(small, cc)) > 0


@pytest.mark.compile
def test_copy_addresses_have_no_wraparound_code():
    from cujit.dispatch.compile_api import compile_ptx

    def k(src, i):
        s = cuda.shared.array(64, np.float32)
        P.memcpy_async(s, i, src, i, 16)
        P.commit()
        P.wait_prior(0)
    ptx, _ = compile_ptx(k, (T.float32[::1], T.int64), cc=(9, 0))
    body = ptx[ptx.index("{"):]
    assert "selp" not in body and "setp" not in body


# ---- GPU ---------------------------------------------------------------------------------------
@pytest.mark.gpu
def test_gpu_three_stage_ring_gives_every_slice():
    src = (np.arange(64 * 9, dtype=np.float32) % 97) * 0.25
    out = np.zeros(16, np.float32)
    staged_sum[1, 16](src, out, 9)
    np.testing.assert_array_equal(out, _staged_expected(src, 9))


@pytest.mark.gpu
def test_gpu_narrow_copies():
    src8 = np.arange(16, dtype=np.int8).reshape(2, 8)
    src16 = (np.arange(16, dtype=np.float16) / 4).reshape(2, 8)
    src32 = np.arange(-8, 0, dtype=np.int32).reshape(2, 4)
    out8, out16, out32 = np.zeros(4, np.int8), np.zeros(4, np.float16), np.zeros(2, np.int32)
    copy_sizes[1, 1](src8, src16, src32, out8, out16, out32)
    np.testing.assert_array_equal(out8, src8[1, 4:8])
    np.testing.assert_array_equal(out16, src16[1, 4:8])
    np.testing.assert_array_equal(out32, src32[1, 2:4])
