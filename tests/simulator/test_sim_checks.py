"""Planted bugs and the simulator's exact reports (R-SIM-2): out-of-bounds, shared-memory
races, barrier divergence, exceptions in threads; checks switchable off."""
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import cujit as cuda
from cujit.simulator.errors import (BarrierDivergenceError, DataRaceError, OutOfBoundsError,
                                    WarpDivergenceError)

pytestmark = pytest.mark.sim
HERE = os.path.basename(__file__)
CONST_TABLE = np.arange(4, dtype=np.int32)


def line_of(fn, text):
    """Line number of the first line of ``fn``'s source containing ``text``."""
    import inspect
    lines, start = inspect.getsourcelines(fn)
    for k, line in enumerate(lines):
        if text in line:
            return start + k
    raise AssertionError(text)


# -- out of bounds -------------------------------------------------------------------------
def off_by_one(a, out):
    i = cuda.grid(1)
    out[i] = a[i + 1]


def test_off_by_one_read_global(launch):
    a, out = np.arange(8.0), np.zeros(8)
    with pytest.raises(OutOfBoundsError) as ei:
        launch(off_by_one, 1, 8, a, out)
    ln = line_of(off_by_one, "a[i + 1]")
    assert str(ei.value) == (
        "index 8 is out of bounds for axis 0 with size 8 of array 'a' of shape (8,): "
        f"threadIdx=(7, 0, 0) blockIdx=(0, 0, 0) at {HERE}:{ln}: out[i] = a[i + 1]")
    assert isinstance(ei.value, IndexError)
    # the threads before the faulty one ran; nothing was written past the end
    np.testing.assert_array_equal(out[:7], a[1:])


def oob_2d(m):
    i, j = cuda.grid(2)
    m[i, j + 1] = 1


def test_oob_2d_names_axis_and_block(launch):
    m = np.zeros((4, 4))
    with pytest.raises(OutOfBoundsError) as ei:
        launch(oob_2d, (2, 1), (2, 4), m)
    msg = str(ei.value)
    assert msg.startswith("index (0, 4) is out of bounds for axis 1 with size 4 of array 'm' "
                          "of shape (4, 4): threadIdx=(0, 3, 0) blockIdx=(0, 0, 0)")


def oob_shared():
    sdata = cuda.shared.array(4, np.float32)
    sdata[cuda.threadIdx.x] = 1.0


def oob_local():
    scratch = cuda.local.array((2, 3), np.int32)
    scratch[1, -4] = 1


def oob_const(out):
    tbl = cuda.const.array_like(CONST_TABLE)
    out[0] = tbl[4]


def oob_slice():
    dyn = cuda.shared.array(0, np.int32)[1:]
    dyn[dyn.shape[0]] = 5


def test_oob_shared_local_const_and_slices(launch):
    with pytest.raises(OutOfBoundsError, match=r"^index 4 is out of bounds for axis 0 with size "
                       r"4 of array 'sdata' of shape \(4,\): threadIdx=\(4, 0, 0\)"):
        launch(oob_shared, 1, 5)
    with pytest.raises(OutOfBoundsError, match=r"^index \(1, -4\) is out of bounds for axis 1 "
                       r"with size 3 of array 'scratch' of shape \(2, 3\): threadIdx=\(0, 0, 0\)"):
        launch(oob_local, 1, 1)
    with pytest.raises(OutOfBoundsError, match=r"^index 4 is out of bounds for axis 0 with size "
                       r"4 of array 'tbl' of shape \(4,\)"):
        launch(oob_const, 1, 1, np.zeros(1, np.int32))
    with pytest.raises(OutOfBoundsError, match=r"^index 3 is out of bounds for axis 0 with size "
                       r"3 of array 'dyn' of shape \(3,\)"):
        launch(oob_slice, 1, 1, shmem=16)


def negative_wrap(a, out):
    out[0] = a[-1]
    out[1] = a[-3]


def test_negative_indices_wrap_once(launch):
    out = np.zeros(2)
    launch(negative_wrap, 1, 1, np.array([1.0, 2.0, 3.0]), out)
    assert out.tolist() == [3.0, 1.0]


def shared_negative(out):
    s = cuda.shared.array(3, np.float64)
    s[-3] = 1.0
    s[-1] = 3.0
    out[0] = s[-3] + s[-1]


def too_negative_read(a, out):
    out[0] = a[-4]


def too_negative_shared_write():
    s = cuda.shared.array(3, np.float64)
    s[-4] = 1.0


def test_negative_1d_indices_wrap_once_in_shared_and_name_the_given_index(launch):
    out = np.zeros(1)
    launch(shared_negative, 1, 1, out)
    assert out.tolist() == [4.0]
    with pytest.raises(OutOfBoundsError, match=r"^index -4 is out of bounds for axis 0 with "
                       r"size 3 of array 'a' of shape \(3,\)"):
        launch(too_negative_read, 1, 1, np.arange(3.0), out)
    with pytest.raises(OutOfBoundsError, match=r"^index -4 is out of bounds for axis 0 with "
                       r"size 3 of array 's' of shape \(3,\)"):
        launch(too_negative_shared_write, 1, 1)


def test_checks_off_gives_plain_numpy_behaviour(launch, checks):
    checks(False)
    a, out = np.arange(8.0), np.zeros(8)
    with pytest.raises(IndexError) as ei:
        launch(off_by_one, 1, 8, a, out)
    assert not isinstance(ei.value, OutOfBoundsError)
    assert "threadIdx=(7, 0, 0) blockIdx=(0, 0, 0)" in str(ei.value)


def test_checks_off_by_environment(launch, monkeypatch):
    monkeypatch.setenv("CUJIT_SIM_CHECKS", "0")
    out = np.zeros(8, np.int32)
    launch(missing_sync, 1, 8, out)          # the racy kernel runs unchecked
    # threads ran in order, so each read its neighbour's slot before it was written
    assert out.tolist() == [0] * 8


# -- races -----------------------------------------------------------------------------------
def missing_sync(out):
    s = cuda.shared.array(8, np.int32)
    t = cuda.threadIdx.x
    s[t] = t
    out[t] = s[(t + 1) % 8]


def test_missing_syncthreads_is_reported_with_both_threads(launch):
    with pytest.raises(DataRaceError) as ei:
        launch(missing_sync, 1, 8, np.zeros(8, np.int32))
    w = line_of(missing_sync, "s[t] = t")
    r = line_of(missing_sync, "out[t] = s[")
    assert str(ei.value) == (
        f"data race on shared memory: threadIdx=(1, 0, 0) blockIdx=(0, 0, 0) writes s[1] at "
        f"{HERE}:{w}, which threadIdx=(0, 0, 0) read at {HERE}:{r} since the last "
        "syncthreads()")


def reduction_missing_sync(a, out):
    s = cuda.shared.array(16, np.float64)
    t = cuda.threadIdx.x
    s[t] = a[t]
    stride = 8
    while stride > 0:
        if t < stride:
            s[t] += s[t + stride]
        cuda.syncthreads()
        stride //= 2
    if t == 0:
        out[0] = s[0]


def test_reduction_without_first_barrier_races(launch):
    with pytest.raises(DataRaceError) as ei:
        launch(reduction_missing_sync, 1, 16, np.ones(16), np.zeros(1))
    assert str(ei.value).startswith(
        "data race on shared memory: threadIdx=(8, 0, 0) blockIdx=(0, 0, 0) writes s[8]")
    assert "which threadIdx=(0, 0, 0) read at" in str(ei.value)


def write_write(out):
    s = cuda.shared.array(1, np.int32)
    s[0] = cuda.threadIdx.x
    cuda.syncthreads()
    out[0] = s[0]


def test_write_write_race(launch):
    with pytest.raises(DataRaceError, match=r"threadIdx=\(1, 0, 0\) blockIdx=\(0, 0, 0\) "
                       r"writes s\[0\] .* which threadIdx=\(0, 0, 0\) written at"):
        launch(write_write, 1, 2, np.zeros(1, np.int32))


def same_value_writes(out, first):
    s = cuda.shared.array(2, np.int32)
    t = cuda.threadIdx.x
    if first == 1 and t == 0:
        s[0] = 7                              # written once first ...
        s[1] = 0
    cuda.syncthreads()
    s[0] = 7                                  # ... then every thread stores the same value
    cuda.syncthreads()
    out[t] = s[0]


@pytest.mark.parametrize("first", [1, 0])
def test_writes_of_the_value_an_element_holds_are_not_races(launch, first):
    # first=0: no thread wrote s[0] before; the first store changes it, the others are silent
    out = np.zeros(32, np.int32)
    launch(same_value_writes, 1, 32, out, first)
    assert (out == 7).all()


def zero_into_uninitialised(out):
    s = cuda.shared.array(1, np.int32)
    t = cuda.threadIdx.x
    if t == 0:
        s[0] = 0                              # the simulator's zeros are no value: it changes s[0]
    else:
        out[0] = s[0]


def test_a_first_write_of_the_simulators_zero_is_not_silent(launch):
    with pytest.raises(DataRaceError, match=r"threadIdx=\(1, 0, 0\) .* reads s\[0\] .* which "
                       r"threadIdx=\(0, 0, 0\) written at"):
        launch(zero_into_uninitialised, 1, 2, np.zeros(1, np.int32))


def silent_then_changing(out):
    s = cuda.shared.array(1, np.int32)
    t = cuda.threadIdx.x
    if t == 0:
        s[0] = 5
    cuda.syncthreads()
    if t == 0:
        s[0] = 5                              # silent ...
    else:
        s[0] = 6                              # ... but this one changes it: the order decides
    cuda.syncthreads()
    out[0] = s[0]


def test_a_changing_write_after_another_threads_silent_one_is_a_race(launch):
    with pytest.raises(DataRaceError, match=r"threadIdx=\(1, 0, 0\) .* writes s\[0\] .* which "
                       r"threadIdx=\(0, 0, 0\) written at"):
        launch(silent_then_changing, 1, 2, np.zeros(1, np.int32))


def read_only_and_atomics(out):
    s = cuda.shared.array(2, np.int32)
    t = cuda.threadIdx.x
    if t == 0:
        s[0] = 7
    cuda.syncthreads()
    v = s[0]                                  # many readers: no race
    cuda.atomic.add(s, 1, 1)                  # atomics: no race
    cuda.syncthreads()
    out[t] = v + s[1]


def test_concurrent_reads_and_atomics_are_not_races(launch):
    out = np.zeros(32, np.int32)
    launch(read_only_and_atomics, 1, 32, out)
    assert (out == 7 + 32).all()


def aliased_dynamic(out):
    f = cuda.shared.array(0, np.float32)
    i = cuda.shared.array(0, np.int32)
    t = cuda.threadIdx.x
    if t == 0:
        f[0] = 1.0
    else:
        out[0] = i[0]


def test_race_seen_through_aliasing_views(launch):
    with pytest.raises(DataRaceError, match=r"threadIdx=\(1, 0, 0\) .* reads i\[0\] .* which "
                       r"threadIdx=\(0, 0, 0\) written at"):
        launch(aliased_dynamic, 1, 2, np.zeros(1, np.int32), shmem=4)


def same_thread_across_barrier(out):
    s = cuda.shared.array(4, np.int32)
    t = cuda.threadIdx.x
    s[t] = t
    cuda.syncthreads()
    out[cuda.blockIdx.x * 4 + t] = s[3 - t]
    cuda.syncthreads()
    s[t] = 0


def test_barrier_separated_accesses_are_fine(launch):
    out = np.zeros(8, np.int32)
    launch(same_thread_across_barrier, 2, 4, out)
    assert out.tolist() == [3, 2, 1, 0] * 2


# -- barrier divergence ----------------------------------------------------------------------
def half_branch_sync(out):
    t = cuda.threadIdx.x
    if t < 4:
        cuda.syncthreads()
    out[t] = t


def test_syncthreads_in_half_taken_branch_is_reported(launch):
    with pytest.raises(BarrierDivergenceError) as ei:
        launch(half_branch_sync, 1, 8, np.zeros(8))
    ln = line_of(half_branch_sync, "cuda.syncthreads()")
    assert str(ei.value) == (
        "barrier divergence in block blockIdx=(0, 0, 0): 4 threads (threadIdx (0, 0, 0) ... "
        f"(3, 0, 0)) wait at syncthreads() at {HERE}:{ln}; 4 threads (threadIdx (4, 0, 0) ... "
        "(7, 0, 0)) have finished without reaching it (CUDA leaves that undefined, though "
        "current GPUs release a barrier for exited threads: keep every thread to the barrier, "
        "or run with CUJIT_SIM_CHECKS=0)")


def two_barriers(out):
    t = cuda.threadIdx.x
    if t % 2:
        cuda.syncthreads()
    else:
        cuda.syncthreads()
    out[t] = 1


def test_different_barriers_are_reported(launch):
    with pytest.raises(BarrierDivergenceError) as ei:
        launch(two_barriers, (1, 2), 4, np.zeros(4))
    a = line_of(two_barriers, "if t % 2") + 1
    assert str(ei.value) == (
        "barrier divergence in block blockIdx=(0, 0, 0): 2 threads (threadIdx (0, 0, 0) ... "
        f"(2, 0, 0)) wait at syncthreads() at {HERE}:{a + 2}; 2 threads (threadIdx (1, 0, 0) "
        f"... (3, 0, 0)) wait at syncthreads() at {HERE}:{a}")


def test_divergence_without_checks_releases_instead_of_hanging(launch, checks):
    checks(False)
    out = np.zeros(8)
    launch(half_branch_sync, 1, 8, out)
    assert out.tolist() == list(range(8))
    launch(two_barriers, 1, 4, out)
    assert out[:4].tolist() == [1, 1, 1, 1]


def warp_half(out):
    t = cuda.threadIdx.x
    if t < 16:
        out[t] = cuda.shfl_sync(0xFFFFFFFF, t, 0)
    cuda.syncthreads()


def test_warp_intrinsic_missing_lanes_is_reported(launch):
    with pytest.raises(WarpDivergenceError) as ei:
        launch(warp_half, 1, 32, np.zeros(32))
    ln = line_of(warp_half, "shfl_sync")
    assert str(ei.value) == (
        "warp divergence in block blockIdx=(0, 0, 0): 16 threads (threadIdx (0, 0, 0) ... "
        f"(15, 0, 0)) wait in shfl_sync at {HERE}:{ln} with mask 0xffffffff, but 16 threads "
        "(threadIdx (16, 0, 0) ... (31, 0, 0)) wait at syncthreads() or another warp call")


# -- exceptions in threads -------------------------------------------------------------------
class Boom(Exception):
    pass


def raise_in_5(out):
    t = cuda.threadIdx.x
    if t == 5:
        raise Boom("thread five failed")
    cuda.syncthreads()
    out[t] = 1


def test_exception_in_thread_5_ends_launch_with_ids(launch, no_typecheck):
    out = np.zeros(8)
    with pytest.raises(Boom) as ei:
        launch(raise_in_5, (1, 1, 2), 8, out)
    ln = line_of(raise_in_5, "raise Boom")
    assert str(ei.value) == (f"threadIdx=(5, 0, 0) blockIdx=(0, 0, 0) at {HERE}:{ln}: "
                             "thread five failed")
    assert not out.any()                      # nobody passed the barrier
    assert cuda.kernelapi._state.current is None


def index_error_in_5(a):
    t = cuda.threadIdx.x
    a[t * (1 + 9 * (t == 5))] = 1


def test_plain_index_error_in_thread_5_with_checks_off(launch, checks):
    checks(False)
    a = np.zeros(8)
    with pytest.raises(IndexError) as ei:
        launch(index_error_in_5, 1, 8, a)
    ln = line_of(index_error_in_5, "a[t *")
    assert str(ei.value) == (f"threadIdx=(5, 0, 0) blockIdx=(0, 0, 0) at {HERE}:{ln}: index "
                             "50 is out of bounds for axis 0 with size 8")


def test_half_block_raising_before_barrier_exits_cleanly(tmp_path):
    """Numba bug-report case 7: the IndexError reaches the caller with the thread ids, the
    other threads are released and the interpreter exits."""
    script = tmp_path / "case7.py"
    script.write_text(textwrap.dedent("""
        import os
        os.environ["CUJIT_ENABLE_CUDASIM"] = "1"
        import numpy as np
        import cujit as cuda
        from cujit.simulator.kernel import run_kernel

        def k(out):
            t = cuda.threadIdx.x
            if t >= 16:
                out[t + 16] = 1
            cuda.syncthreads()
            out[t] = 1

        out = np.zeros(32)
        try:
            run_kernel(k, (1, 1, 1), (32, 1, 1), 0, 0, (out,))
        except IndexError as e:
            print("caught:", e)
        print("sum", out.sum())
    """))
    env = dict(os.environ, PYTHONPATH=os.path.dirname(os.path.dirname(cuda.__file__)))
    r = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                       timeout=60, env=env)
    assert r.returncode == 0, r.stderr
    assert r.stdout == ("caught: index 32 is out of bounds for axis 0 with size 32 of array "
                        "'out' of shape (32,): threadIdx=(16, 0, 0) blockIdx=(0, 0, 0) at "
                        "case7.py:11: out[t + 16] = 1\nsum 0.0\n")
    assert r.stderr == ""


def warp_sync_reduce(a, out):
    s = cuda.shared.array(64, np.int64)
    t = cuda.threadIdx.x
    s[t] = a[t]
    cuda.syncthreads()
    if t < 32:
        s[t] += s[t + 32]
        cuda.syncwarp()
        off = 16
        while off > 0:
            v = 0
            if t < off:
                v = s[t] + s[t + off]
            cuda.syncwarp()
            if t < off:
                s[t] = v
            cuda.syncwarp()
            off //= 2
    cuda.syncthreads()
    out[t] = s[0]


def test_syncwarp_orders_accesses_within_a_warp(launch):
    a = np.arange(64, dtype=np.int64)
    out = np.zeros(64, np.int64)
    launch(warp_sync_reduce, 1, 64, a, out)
    assert (out == a.sum()).all()


def warp_racy(a, out):
    s = cuda.shared.array(64, np.int64)
    t = cuda.threadIdx.x
    s[t] = a[t]
    cuda.syncthreads()
    if t < 16:
        s[t] += s[t + 16]            # lane t+16 reads and writes s[t+16]: fine; but ...
        s[t] += s[t + 1]             # ... lane t+1 wrote s[t+1] with no syncwarp between
    cuda.syncthreads()
    out[t] = s[0]


def test_missing_syncwarp_is_a_race(launch):
    with pytest.raises(DataRaceError, match=r"threadIdx=\(1, 0, 0\) blockIdx=\(0, 0, 0\) writes "
                       r"s\[1\] .* which threadIdx=\(0, 0, 0\) read at"):
        launch(warp_racy, 1, 64, np.arange(64, dtype=np.int64), np.zeros(64, np.int64))


def cross_warp_after_syncwarp(out):
    s = cuda.shared.array(64, np.int64)
    t = cuda.threadIdx.x
    if t == 0:
        s[40] = 1
    cuda.syncwarp()
    if t == 40:
        out[0] = s[40]               # a syncwarp does not order different warps


def test_syncwarp_does_not_order_other_warps(launch):
    with pytest.raises(DataRaceError, match=r"threadIdx=\(40, 0, 0\) .* reads s\[40\]"):
        launch(cross_warp_after_syncwarp, 1, 64, np.zeros(1, np.int64))


def raise_after_barriers(out):
    t = cuda.threadIdx.x
    for k in range(3):
        cuda.syncthreads()
        if k == 2 and t == 5:
            out[t * 100] = 1          # out of bounds in the third round only
        out[t] = k


def test_error_in_a_later_round_names_the_right_thread(launch):
    out = np.zeros(8)
    with pytest.raises(OutOfBoundsError, match=r"^index 500 is out of bounds .* "
                       r"threadIdx=\(5, 0, 0\) blockIdx=\(0, 0, 0\)"):
        launch(raise_after_barriers, 2, 8, out)
    assert cuda.kernelapi._state.current is None
    # the next launch runs normally
    launch(same_thread_across_barrier, 1, 4, out)
    assert out[:4].tolist() == [3, 2, 1, 0]


# -- checked arrays' attributes (no __getattr__ on the hot classes) -------------------------
def test_checked_array_forwards_numpy_attributes_and_record_fields():
    from cujit.simulator.checked import CheckedArray, RaceTracker, SharedCheckedArray
    a = CheckedArray(np.arange(6.0).reshape(2, 3), "a")
    assert a.sum() == 15.0 and a.flags.c_contiguous and a.base is not None
    assert a.__array_interface__["shape"] == (2, 3)
    with pytest.raises(AttributeError):
        a.no_such_attribute
    rec = np.zeros(3, dtype=[("x", np.int32), ("y", np.float64)]).view(np.recarray)
    rec.x[:] = [1, 2, 3]
    r = CheckedArray(rec, "r")
    assert list(r.x) == [1, 2, 3] and isinstance(r, CheckedArray)
    assert isinstance(r.x, CheckedArray)        # a field's view is checked as its array

    class _Blk:
        epoch_base = 2048
        warp_gen = [0]
    tr = RaceTracker(rec.__array_interface__["data"][0], rec.nbytes, _Blk())
    s = SharedCheckedArray(rec, "s", tr, 0)
    # the field's view is checked as the shared array (its accesses need a running block)
    assert isinstance(s.y, SharedCheckedArray) and list(np.asarray(s.y)) == [0.0, 0.0, 0.0]
    with pytest.raises(AttributeError):
        s.no_such_field


def race_2d_after_reads(out):
    s = cuda.shared.array((4, 4), np.float32)
    tx = cuda.threadIdx.x
    s[tx, 0] = 1.0
    cuda.syncthreads()
    v = s[0, 0] + s[0, 0]       # every thread reads: both reader slots fill, then fast path
    if tx == 3:
        s[0, 0] = v             # a write after other threads' reads of the same interval
    out[tx] = v


def test_write_after_many_2d_reads_is_a_race(launch):
    with pytest.raises(DataRaceError, match=r"writes s\[0, 0\].*read"):
        launch(race_2d_after_reads, 1, 4, np.zeros(4, np.float32))


# -- the rank-specific fast paths (checked.py _Checked2D, _Shared1D, _Shared2D) -----------
def fast_paths(g, out):
    s1 = cuda.shared.array(4, np.float64)
    s2 = cuda.shared.array((3, 4), np.float64)
    t = cuda.threadIdx.x
    if t == 0:
        for k in range(4):
            s1[k] = k + 1.0
            for r in range(3):
                s2[r, k] = 10.0 * r + k
    cuda.syncthreads()
    if t == 1:
        out[0] = s1[-1]             # wraps once, as Numba
        out[1] = s2[-1, -4]
        out[2] = s2[1][2]           # a row view, still checked
        out[3] = s2[:, 3][2]        # a column slice
        out[4] = s1[1:3][1]
        out[5] = g[-1, 0] + g[0, -1] + g[1][1]


def test_fast_paths_wrap_negative_indices_and_keep_views(launch):
    out = np.zeros(6)
    g = np.arange(4.0).reshape(2, 2)
    launch(fast_paths, 1, 2, g, out)
    assert out.tolist() == [4.0, 20.0, 12.0, 23.0, 3.0, 2.0 + 1.0 + 3.0]


def fast_path_oob(g, which, out):
    s1 = cuda.shared.array(4, np.float64)
    s2 = cuda.shared.array((3, 4), np.float64)
    i = -5 + which * 0
    if which == 0:
        out[0] = s1[i]
    elif which == 1:
        out[0] = s2[3, 0]
    elif which == 2:
        out[0] = s2[0, i]
    elif which == 3:
        out[0] = g[0, 2]
    else:
        out[0] = g[i, 0]


@pytest.mark.parametrize("which, text", [
    (0, r"index -5 is out of bounds for axis 0 with size 4 of array 's1'"),
    (1, r"index \(3, 0\) is out of bounds for axis 0 with size 3 of array 's2'"),
    (2, r"index \(0, -5\) is out of bounds for axis 1 with size 4 of array 's2'"),
    (3, r"index \(0, 2\) is out of bounds for axis 1 with size 2 of array 'g'"),
    (4, r"index \(-5, 0\) is out of bounds for axis 0 with size 2 of array 'g'"),
])
def test_fast_paths_report_out_of_bounds(launch, which, text):
    with pytest.raises(OutOfBoundsError, match=text):
        launch(fast_path_oob, 1, 1, np.zeros((2, 2)), which, np.zeros(1))


def race_through_wrapped_index(out):
    s = cuda.shared.array(4, np.float64)
    t = cuda.threadIdx.x
    if t == 0:
        s[3] = 1.0
    out[t] = s[-1]          # the same element as s[3], written by thread 0 unsynchronised


def test_race_seen_through_a_wrapped_index(launch):
    with pytest.raises(DataRaceError, match=r"reads s\[-1\].*written"):
        launch(race_through_wrapped_index, 1, 2, np.zeros(2))


def fast_path_2d_writes(g, small, which):
    if which == 0:
        g[-1, -2] = 7.0             # wraps once: g[1, 0]
        small[1, 1] = 300           # truncated to the element's width, as compiled code
    else:
        g[2, 0] = 1.0


def test_fast_path_2d_writes_wrap_truncate_and_report(launch):
    g = np.zeros((2, 2))
    small = np.zeros((2, 2), np.int8)
    launch(fast_path_2d_writes, 1, 1, g, small, 0)
    assert g.tolist() == [[0.0, 0.0], [7.0, 0.0]] and small[1, 1] == 44
    with pytest.raises(OutOfBoundsError, match=r"index \(2, 0\) is out of bounds for axis 0 "
                       r"with size 2 of array 'g'"):
        launch(fast_path_2d_writes, 1, 1, g, small, 1)
