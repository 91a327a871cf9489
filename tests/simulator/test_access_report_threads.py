"""``with cujit.access_report(grid_limit=1):`` in one thread made every other
thread's launches run only their first block too (a kernel outside any report block
computed 32 of 320 elements, silently).  Under the recorder, a shared-memory data race named
the earlier access's line as cujit's own ``access.py:154`` instead of the kernel's."""
import threading

import numpy as np
import pytest

import cujit


@cujit.jit
def _inc(a):
    i = cujit.grid(1)
    if i < a.size:
        a[i] += 1


@pytest.mark.sim
def test_grid_limit_of_another_threads_report_does_not_truncate_my_launch():
    entered, done = threading.Event(), threading.Event()
    seen = {}

    def limited():
        y = cujit.to_device(np.zeros(320, np.float32))
        with cujit.access_report(grid_limit=1) as rep:
            entered.set()
            done.wait(30)
            _inc[10, 32](y)                 # this thread's launch: first block only
        seen["limited"] = y.copy_to_host()
        seen["rows"] = rep.as_dicts()

    t = threading.Thread(target=limited)
    t.start()
    try:
        assert entered.wait(30)
        mine = cujit.to_device(np.zeros(320, np.float32))
        _inc[10, 32](mine)                  # no report block in this thread
        np.testing.assert_array_equal(mine.copy_to_host(), np.ones(320, np.float32))
    finally:
        done.set()
        t.join()
    expect = np.zeros(320, np.float32)
    expect[:32] = 1
    np.testing.assert_array_equal(seen["limited"], expect)
    assert {r["op"] for r in seen["rows"]} == {"load", "store"}


@pytest.mark.sim
def test_grid_limit_applies_to_the_threads_own_nested_blocks():
    y = cujit.to_device(np.zeros(320, np.float32))
    with cujit.access_report():
        with cujit.access_report(grid_limit=2):
            _inc[10, 32](y)
        _inc[10, 32](y)
    assert y.copy_to_host().sum() == 64 + 320


@cujit.jit
def _ww_race(a):
    s = cujit.shared.array(64, np.float32)
    t = cujit.threadIdx.x
    s[t * 2 % 64] = t                      # threads t and t + 32 write one element
    cujit.syncthreads()
    a[cujit.grid(1)] = s[t]


@cujit.jit
def _rw_race(a):
    s = cujit.shared.array(64, np.float32)
    t = cujit.threadIdx.x
    s[t] = t
    cujit.syncthreads()
    v = s[(t + 1) % 64]                    # read of the neighbour's element ...
    s[t] = v                               # ... which the neighbour overwrites: no barrier
    a[cujit.grid(1)] = v


@pytest.mark.sim
@pytest.mark.parametrize("kernel, other", [(_ww_race, "written"), (_rw_race, "read")])
def test_data_race_under_access_report_names_the_kernels_lines(kernel, other):
    from cujit.simulator.errors import DataRaceError
    if not cujit.config.SIM_CHECKS:
        pytest.skip("the race checker is on with simulator checks")
    with cujit.access_report(sample_blocks=None):
        with pytest.raises(DataRaceError) as ei:
            kernel[1, 64](cujit.device_array(64, np.float32))
    msg = str(ei.value)
    assert "access.py" not in msg
    assert f"{other} at test_access_report_threads.py:" in msg, msg
