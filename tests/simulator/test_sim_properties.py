"""Property tests of the checkers: checked indexing agrees with NumPy (values, and an error
exactly when NumPy's index is out of range), and the race checker reports a race exactly when
two threads touch an element between barriers with at least one plain write."""
import contextlib
import sys
import threading
import types

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import cujit as cuda
from cujit.simulator.errors import DataRaceError, OutOfBoundsError
from cujit.simulator.kernel import run_kernel

pytestmark = pytest.mark.sim


def read_at(a, idx, out):
    out[0] = a[idx]


def write_at(a, idx, v):
    a[idx] = v


shapes = st.lists(st.integers(1, 5), min_size=1, max_size=3).map(tuple)


@settings(max_examples=80, deadline=None)
@given(shapes, st.data())
def test_checked_indexing_agrees_with_numpy(shape, data):
    idx = tuple(data.draw(st.integers(-n - 2, n + 1)) for n in shape)
    if len(idx) == 1 and data.draw(st.booleans()):
        idx = idx[0]
    a = np.arange(np.prod(shape), dtype=np.float64).reshape(shape)
    try:
        expect = a[idx]
    except IndexError:
        expect = None
    out = np.zeros(1)
    if expect is None:
        with pytest.raises(OutOfBoundsError, match=r"is out of bounds for axis \d with size \d "
                           r"of array 'a' of shape"):
            run_kernel(read_at, (1, 1, 1), (1, 1, 1), 0, 0, (a, idx, out))
        b = a.copy()
        with pytest.raises(OutOfBoundsError):
            run_kernel(write_at, (1, 1, 1), (1, 1, 1), 0, 0, (a, idx, -1.0))
        np.testing.assert_array_equal(a, b)       # nothing written on error
    else:
        run_kernel(read_at, (1, 1, 1), (1, 1, 1), 0, 0, (a, idx, out))
        assert out[0] == expect
        run_kernel(write_at, (1, 1, 1), (1, 1, 1), 0, 0, (a, idx, -1.0))
        assert a[idx] == -1.0


def plan_kernel(plan, out):
    """Thread t performs ``plan[phase][t]`` = list of (op, index) on a shared array, with a
    syncthreads between phases; op 0 reads, 1 writes, 2 adds atomically."""
    s = cuda.shared.array(4, np.int64)
    t = cuda.threadIdx.x
    for phase in plan:
        for op, i in phase[t]:
            if op == 0:
                out[t] += s[i]
            elif op == 1:
                s[i] = t
            else:
                cuda.atomic.add(s, i, 1)
        cuda.syncthreads()


@contextlib.contextmanager
def no_typecheck():
    """The plan is a nested list, which the compiler rejects as an argument: run the kernel
    on the simulator alone (typecheck replaced by a no-op)."""
    fake = types.ModuleType("cujit.frontend.typecheck")
    fake.type_launch = lambda pyfunc, args, debug=False, source=None: None
    old = sys.modules.get("cujit.frontend.typecheck")
    sys.modules["cujit.frontend.typecheck"] = fake
    try:
        yield
    finally:
        if old is None:
            del sys.modules["cujit.frontend.typecheck"]
        else:
            sys.modules["cujit.frontend.typecheck"] = old


def has_race(plan):
    """The oracle: in a phase, a changing write of an element and another thread's read or
    changing write of it, or another thread's earlier silent write (storing the value a
    written element holds; the simulator runs each phase's threads in order), race.  Atomics
    are not tracked, and an element only atomics wrote counts as never written."""
    value, written = {}, set()
    for phase in plan:
        touched = {}
        for t, ops in enumerate(phase):
            for op, i in ops:
                if op == 2:
                    value[i] = value.get(i, 0) + 1
                    continue
                if op == 1:
                    kind = "silent" if i in written and value.get(i, 0) == t else "write"
                    value[i] = t
                    written.add(i)
                else:
                    kind = "read"
                touched.setdefault(i, []).append((t, kind))
        for acc in touched.values():
            for k, (a, kind) in enumerate(acc):
                if kind != "write":
                    continue
                for j, (b, other) in enumerate(acc):
                    if b != a and (other != "silent" or j < k):
                        return True
    return False


@settings(max_examples=150, deadline=None)
@given(st.integers(2, 5).flatmap(lambda n: st.lists(
    st.lists(st.lists(st.tuples(st.integers(0, 2), st.integers(0, 3)), max_size=3),
             min_size=n, max_size=n), min_size=1, max_size=3)))
def test_race_checker_matches_oracle(plan):
    n = len(plan[0])
    out = np.zeros(n, np.int64)
    with no_typecheck():
        _run_plan(plan, n, out)


def _run_plan(plan, n, out):
    if has_race(plan):
        with pytest.raises(DataRaceError, match=r"^data race on shared memory: threadIdx=\(\d, "
                           r"0, 0\) blockIdx=\(0, 0, 0\) (reads|writes) s\[\d\] at "
                           r"test_sim_properties.py:\d+, which threadIdx=\(\d, 0, 0\) "
                           r"(read|written) at test_sim_properties.py:\d+ since the last "
                           r"syncthreads\(\)$"):
            run_kernel(plan_kernel, (1, 1, 1), (n, 1, 1), 0, 0, (plan, out))
    else:
        run_kernel(plan_kernel, (1, 1, 1), (n, 1, 1), 0, 0, (plan, out))


def slow_kernel(out, k):
    s = cuda.shared.array(64, np.int64)
    t = cuda.threadIdx.x
    for r in range(20):
        s[t] = t + k
        cuda.syncthreads()
        out[t] = s[63 - t]
        cuda.syncthreads()


def test_launches_from_several_host_threads_take_turns():
    outs = [np.zeros(64, np.int64) for _ in range(4)]
    errors = []

    def go(i):
        try:
            run_kernel(slow_kernel, (1, 1, 1), (64, 1, 1), 0, 0, (outs[i], 100 * i))
        except BaseException as e:       # pragma: no cover - reported below
            errors.append(e)

    ts = [threading.Thread(target=go, args=(i,)) for i in range(4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert errors == []
    for i, o in enumerate(outs):
        assert o.tolist() == [63 - t + 100 * i for t in range(64)]
