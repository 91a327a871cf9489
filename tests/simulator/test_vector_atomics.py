"""Vector executor: atomics whose value type differs from the array's, and
float atomic max/min with NaN.

- ``cuda.atomic.add(f32_array, i, 0.1 * t)`` (a float64 value): the compiled kernel converts
  the value to float32 and adds in float32 (lower_atomics.py, as numba.cuda).  The per-thread
  simulator added the float64 value (its rewrite looked for the key ``atomic.add`` where the
  typer records ``atomic``), so its sums were float64 sums rounded once: 3.2 where the GPU
  and the vector executor give 3.1999998.
- ``cuda.atomic.max/min`` on floats: the compiled CAS loop stores ``v`` only when the
  ordered ``v > old`` (``v < old``) holds, so a NaN on either side keeps the old value (as
  numba-cuda 0.30.4's helpers, which return early on a NaN); both simulator executors used
  Python's ``max``/``min``, which keep their first argument.

The unmarked tests run on whichever backend the process has (the GPU run checks the
expected values there: one thread makes the updates, so their order is defined); the ``sim``
tests compare the two simulator executors bit for bit with many threads.
"""
import numpy as np
import pytest

import cujit as cuda
from cujit.simulator import vecblock
from cujit.simulator.kernel import simulate


@cuda.jit
def _add_f64_values(old, acc):
    t = cuda.threadIdx.x
    old[t] = cuda.atomic.add(acc, t % 4, 0.1 * t)


@cuda.jit
def _add_f64_values_shared(old, acc):
    sh = cuda.shared.array(4, cuda.float32)
    t = cuda.threadIdx.x
    if t < 4:
        sh[t] = 0
    cuda.syncthreads()
    old[t] = cuda.atomic.add(sh, t % 4, 0.1 * t)
    cuda.syncthreads()
    if t < 4:
        acc[t] = sh[t]


def _float32_sums(n):
    """Per element t % 4 the float32 running sums of float32(0.1 * t), in thread order."""
    acc = np.zeros(4, np.float32)
    old = np.zeros(n, np.float32)
    for t in range(n):
        old[t] = acc[t % 4]
        acc[t % 4] = acc[t % 4] + np.float32(0.1 * t)
    return old, acc


@cuda.jit
def _add_serial(old, acc):
    # one thread: the update order is the program order on a GPU too
    if cuda.grid(1) == 0:
        for t in range(old.size):
            old[t] = cuda.atomic.add(acc, t % 4, 0.1 * t)


@cuda.jit
def _add_serial_shared(acc):
    sh = cuda.shared.array(4, cuda.float32)
    t = cuda.threadIdx.x
    if t < 4:
        sh[t] = 0
    cuda.syncthreads()
    if t == 0:
        for k in range(16):
            cuda.atomic.add(sh, k % 4, 0.1 * k)
    cuda.syncthreads()
    if t < 4:
        acc[t] = sh[t]


def test_float32_atomic_add_of_float64_values_rounds_at_every_update():
    old = np.zeros(16, np.float32)
    acc = np.zeros(4, np.float32)
    _add_serial[1, 32](old, acc)
    want_old, want_acc = _float32_sums(16)
    assert acc.view(np.uint32).tolist() == want_acc.view(np.uint32).tolist()
    assert old.view(np.uint32).tolist() == want_old.view(np.uint32).tolist()
    assert acc[2] == np.float32(3.1999998)   # a float64 sum rounded once is 3.2


def test_float32_shared_atomic_add_of_float64_values():
    acc = np.zeros(4, np.float32)
    _add_serial_shared[1, 32](acc)
    assert acc.view(np.uint32).tolist() == _float32_sums(16)[1].view(np.uint32).tolist()


@cuda.jit
def _nan_max_min(f, v):
    cuda.atomic.max(f, 0, v[0])
    cuda.atomic.min(f, 1, v[0])
    cuda.atomic.max(f, 2, v[1])
    cuda.atomic.min(f, 3, v[1])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_float_atomic_max_min_keep_the_old_value_when_either_side_is_nan(dtype):
    f = np.array([1.0, 1.0, np.nan, np.nan], dtype)
    _nan_max_min[1, 1](f, np.array([np.nan, 2.0], dtype))
    assert f[0] == 1.0 and f[1] == 1.0
    assert np.isnan(f[2]) and np.isnan(f[3])


@cuda.jit
def _max_min_old(f, o):
    i = cuda.grid(1)
    o[i, 0] = cuda.atomic.max(f, 0, f[2 + i % 3])
    o[i, 1] = cuda.atomic.min(f, 1, f[2 + i % 3])


def _run(kernel, vector, monkeypatch, griddim, blockdim, *args):
    monkeypatch.setenv("CUJIT_SIM_VECTOR", "1" if vector else "0")
    args = [a.copy() for a in args]
    before = dict(vecblock.launches)
    simulate(kernel, griddim, blockdim, *args)
    ran = [k for k in ("rerun", "vector", "thread") if vecblock.launches[k] > before[k]]
    return args, ran[0]


@pytest.mark.sim
@pytest.mark.parametrize("checks", [True, False])
@pytest.mark.parametrize("case", ["add", "add_shared", "maxmin"])
def test_vector_and_per_thread_atomics_agree_bit_for_bit(monkeypatch, case, checks):
    monkeypatch.setattr(cuda.config, "SIM_CHECKS", checks)
    if case == "maxmin":
        f = np.array([0.0, 0.0, np.nan, -0.0, 1.0], np.float32)
        kernel, grid, block, args = _max_min_old, 2, 32, (f, np.zeros((64, 2), np.float32))
    else:
        kernel = _add_f64_values if case == "add" else _add_f64_values_shared
        grid, block, args = 1, 64, (np.zeros(64, np.float32), np.zeros(4, np.float32))
    vec, ran = _run(kernel, True, monkeypatch, grid, block, *args)
    ref, _ = _run(kernel, False, monkeypatch, grid, block, *args)
    assert ran in ("vector", "rerun")
    for v, r in zip(vec, ref):
        assert v.view(np.uint8).tolist() == r.view(np.uint8).tolist()
    if case != "maxmin":
        want_old, want_acc = _float32_sums(64)
        assert ref[1].view(np.uint32).tolist() == want_acc.view(np.uint32).tolist()
        if case == "add":
            assert ref[0].view(np.uint32).tolist() == want_old.view(np.uint32).tolist()
    else:
        # thread 0: max(0, nan) keeps 0; thread 1: max(0, -0.0) keeps +0 (not >); thread
        # 2: max(0, 1) stores 1; thread 3: max(1, nan) keeps 1
        assert ref[1][:4, 0].tolist() == [0.0, 0.0, 0.0, 1.0]
        assert not np.signbit(ref[1][2, 0]) and ref[0][0] == 1.0
