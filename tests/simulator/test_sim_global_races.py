"""Data races on global memory (config.SIM_GLOBAL_RACES): unsynchronised conflicting accesses
of two threads, within a block per barrier interval and across blocks per launch, with the
same verdict on the per-thread and the vector executor."""
import inspect

import numpy as np
import pytest

import cujit as cuda
from cujit.config import config
from cujit.simulator.errors import DataRaceError
from cujit.simulator.kernel import simulate

from vector_helpers import compare, raised

pytestmark = pytest.mark.sim


def _line(fn, text):
    src, first = inspect.getsourcelines(fn)
    return first + next(i for i, s in enumerate(src) if text in s)


def racy_counter(counter):
    counter[0] += 1


def first_thread_counts(counter):
    if cuda.threadIdx.x == 0:
        counter[0] += 1          # one thread per block: the blocks race


def write_then_read_neighbour(a, out):
    i = cuda.grid(1)
    a[i] = i
    out[i] = a[i ^ 1]


def set_flag(x, found):
    i = cuda.grid(1)
    if x[i] > 0:
        found[0] = 1


def set_flag_to_index(x, found):
    i = cuda.grid(1)
    if x[i] > 0:
        found[0] = i             # the threads store different values: the order decides


def same_value_then_read(out, first):
    i = cuda.grid(1)
    out[0] = first[0]            # every thread stores the same value (STUMPY's p_norm_out)
    out[i + 1] = out[0] + i


def atomic_counter(counter):
    cuda.atomic.add(counter, 0, 1)


def neighbour_after_barrier(a, out):
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    a[i] = t
    cuda.syncthreads()
    out[i] = a[cuda.blockIdx.x * cuda.blockDim.x + (t + 1) % cuda.blockDim.x]


def own_element(a):
    i = cuda.grid(1)
    if i < a.size:
        a[i] = a[i] * 2 + 1
        a[i] += 1


def read_shared_input(x, out):
    i = cuda.grid(1)
    out[i] = x[0] + x[i % 4]


def one_writer(out, x):
    if cuda.grid(1) == 0:
        out[0] = x[0] + 1


def block_partials(x, partial):
    # thread 0 of each block writes its block's slot: no two blocks share an element
    s = cuda.shared.array(32, np.float64)
    t = cuda.threadIdx.x
    s[t] = x[cuda.grid(1)]
    cuda.syncthreads()
    if t == 0:
        acc = 0.0
        for k in range(32):
            acc += s[k]
        partial[cuda.blockIdx.x] = acc


def test_racy_counter_raises_naming_both_threads_and_lines(monkeypatch):
    line = _line(racy_counter, "counter[0] += 1")
    vec, ref = raised(monkeypatch, DataRaceError, racy_counter, 4, 32, np.zeros(1, np.int64))
    assert vec[0] == ref[0]
    msg = ref[0]
    assert "data race on global memory" in msg
    assert f"threadIdx=(1, 0, 0) blockIdx=(0, 0, 0) reads counter[0] at " \
           f"test_sim_global_races.py:{line}" in msg
    assert f"which threadIdx=(0, 0, 0) of the same block wrote at " \
           f"test_sim_global_races.py:{line}" in msg


def test_threads_of_different_blocks_race(monkeypatch):
    line = _line(first_thread_counts, "counter[0] += 1")
    vec, ref = raised(monkeypatch, DataRaceError, first_thread_counts, 3, 32,
                      np.zeros(1, np.int64))
    assert vec[0] == ref[0]
    assert f"threadIdx=(0, 0, 0) blockIdx=(1, 0, 0) writes counter[0] at " \
           f"test_sim_global_races.py:{line}, which threadIdx=(0, 0, 0) blockIdx=(0, 0, 0) " \
           f"wrote at test_sim_global_races.py:{line}" in ref[0]
    assert "different blocks are not ordered" in ref[0]


def test_report_names_the_two_different_lines(monkeypatch):
    wline = _line(write_then_read_neighbour, "a[i] = i")
    rline = _line(write_then_read_neighbour, "out[i] = a[i ^ 1]")
    vec, ref = raised(monkeypatch, DataRaceError, write_then_read_neighbour, 1, 8,
                      np.zeros(8), np.zeros(8))
    assert vec[0] == ref[0]
    # thread 0 read a[1] before thread 1 wrote it
    assert f"threadIdx=(1, 0, 0) blockIdx=(0, 0, 0) writes a[1] at " \
           f"test_sim_global_races.py:{wline}, which threadIdx=(0, 0, 0) of the same block " \
           f"read at test_sim_global_races.py:{rline}" in ref[0]


def test_flag_set_to_different_values_is_a_race_and_the_switch_turns_it_off(monkeypatch):
    x = np.zeros(128)
    x[[5, 70]] = 1
    vec, ref = raised(monkeypatch, DataRaceError, set_flag_to_index, 4, 32, x, np.zeros(1))
    assert "writes found[0]" in ref[0] and "blockIdx=(2, 0, 0)" in ref[0]
    monkeypatch.setenv("CUJIT_SIM_GLOBAL_RACES", "0")
    found = compare(monkeypatch, set_flag_to_index, 4, 32, x, np.zeros(1), expect=None)[1]
    assert found[0] == 70


def test_silent_writes_of_the_same_value_are_not_races(monkeypatch):
    """Threads storing the value the element already holds change nothing another thread
    can observe, in any order: not reported (found flags, STUMPY's shared first value)."""
    x = np.zeros(128)
    x[[5, 70, 71]] = 1
    found = compare(monkeypatch, set_flag, 4, 32, x, np.zeros(1), expect=None)[1]
    assert found[0] == 1
    out = compare(monkeypatch, same_value_then_read, 2, 32, np.zeros(65), np.full(1, 7.0),
                  expect=None)[0]
    np.testing.assert_array_equal(out, np.r_[7.0, 7.0 + np.arange(64)])


def test_changing_write_after_a_silent_one_is_still_a_race(monkeypatch):
    """A silent write followed by another thread's changing write: the order decides which
    value stays, so it is reported (the silent write is still a writer)."""
    x = np.zeros(128)
    x[[1, 40]] = 1
    found = np.ones(1)          # thread 1's store of 1 is silent, thread 40's of 40 is not
    vec, ref = raised(monkeypatch, DataRaceError, set_flag_to_index, 4, 32, x, found)
    assert "writes found[0]" in ref[0]


def test_config_attribute_turns_only_the_global_check_off():
    config.SIM_GLOBAL_RACES = False
    try:
        counter = np.zeros(1, np.int64)
        simulate(racy_counter, 2, 32, counter)
        assert counter[0] == 64        # the simulator's thread order, not a GPU's
    finally:
        del config.SIM_GLOBAL_RACES


def test_checks_off_turn_the_global_check_off_too(checks):
    checks(False)
    counter = np.zeros(1, np.int64)
    simulate(racy_counter, 2, 32, counter)
    assert counter[0] == 64


def test_malformed_switch_is_a_value_error(monkeypatch):
    monkeypatch.setenv("CUJIT_SIM_GLOBAL_RACES", "sometimes")
    with pytest.raises(ValueError, match="CUJIT_SIM_GLOBAL_RACES"):
        simulate(racy_counter, 1, 2, np.zeros(1, np.int64))


@pytest.mark.parametrize("kernel, griddim, blockdim, args, check", [
    (atomic_counter, 4, 32, (np.zeros(1, np.int64),), lambda r: r[0][0] == 128),
    (neighbour_after_barrier, 4, 32, (np.zeros(128), np.zeros(128)),
     lambda r: r[1][31] == 0 and r[1][0] == 1),
    (own_element, 3, 64, (np.arange(150.0),), lambda r: r[0][149] == 300),
    (read_shared_input, 4, 32, (np.arange(4.0), np.zeros(128)), lambda r: r[1][5] == 1),
    (one_writer, 4, 32, (np.zeros(1), np.arange(4.0)), lambda r: r[0][0] == 1),
    (block_partials, 4, 32, (np.ones(128), np.zeros(4)), lambda r: r[1].tolist() == [32] * 4),
], ids=["atomics", "barrier-ordered", "own-element", "read-only-sharing", "one-writer",
        "per-block-slots"])
def test_synchronised_patterns_raise_nothing(monkeypatch, kernel, griddim, blockdim, args,
                                             check):
    out = compare(monkeypatch, kernel, griddim, blockdim, *args, expect=None)
    assert check(out)


def warp_exchange(a, out):
    t = cuda.threadIdx.x
    a[t] = t
    cuda.syncwarp()
    out[t] = a[t ^ 1]


def test_syncwarp_orders_global_accesses_within_a_warp():
    out = np.zeros(32, np.int64)
    simulate(warp_exchange, 1, 32, np.zeros(32, np.int64), out)
    assert out[0] == 1 and out[1] == 0


def copy_right(src, dst):
    i = cuda.grid(1)
    if i + 1 < dst.size:
        dst[i + 1] = src[i]


@pytest.mark.parametrize("vector", ["1", "0"])
def test_race_seen_through_two_views_of_one_buffer(monkeypatch, vector):
    monkeypatch.setenv("CUJIT_SIM_VECTOR", vector)
    x = np.arange(64.0)
    with pytest.raises(DataRaceError, match=r"reads src\[1\] .* which threadIdx=\(0, 0, 0\) "
                       r"of the same block wrote"):
        simulate(copy_right, 2, 32, x, x[:])


def publish_then_read(flags, out):
    g = cuda.cg.this_grid()
    i = cuda.grid(1)
    flags[i] = i
    g.sync()
    out[i] = flags[(i + 32) % flags.size]


def read_without_grid_sync(flags, out):
    i = cuda.grid(1)
    flags[i] = i
    out[i] = flags[(i + 32) % flags.size]


def test_grid_sync_orders_blocks_of_a_cooperative_launch():
    out = np.zeros(64, np.int64)
    simulate(publish_then_read, 2, 32, np.zeros(64, np.int64), out)
    assert out[0] == 32 and out[32] == 0
    with pytest.raises(DataRaceError, match="blockIdx=\\(1, 0, 0\\) (reads|writes) flags"):
        simulate(read_without_grid_sync, 2, 32, np.zeros(64, np.int64), np.zeros(64, np.int64))


def long_loop_then_neighbour(a, out, reps):
    i = cuda.grid(1)
    acc = 0.0
    for _ in range(reps):
        acc += a[i]                  # many reads of one interval: folded as the loop runs
    out[i] = acc
    if cuda.blockIdx.x == 1:
        a[(i + 32) % a.size] = 2.0   # block 1 changes what block 0 read


def test_long_interval_of_a_vector_block_is_folded_as_it_runs(monkeypatch):
    from cujit.simulator import vecmem
    vec, ref = raised(monkeypatch, DataRaceError, long_loop_then_neighbour, 2, 32,
                      np.ones(64), np.zeros(64), 3 * vecmem.ACC_LIMIT)
    assert vec[0] == ref[0] and vec[2] == "rerun"
    assert "blockIdx=(1, 0, 0) writes a[0]" in ref[0] and "blockIdx=(0, 0, 0) read" in ref[0]
    out = compare(monkeypatch, long_loop_then_neighbour, 1, 32, np.ones(64), np.zeros(64),
                  3 * vecmem.ACC_LIMIT)[1]
    assert out[0] == 3 * vecmem.ACC_LIMIT
