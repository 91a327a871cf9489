"""The access report (docs/access-report.md): global-memory sectors per warp request and
shared-memory bank-conflict ways, per kernel and source line, from simulated launches.

Tests that launch through ``cujit.simulator.kernel.simulate`` inside ``cujit.access_report()``
run on either backend (``simulate`` always uses the simulator); ``kernel.access_report()``
and ``CUJIT_ACCESS_REPORT`` need the simulator as the process's backend (``sim``), and the
GPU message is checked on the device (``gpu``)."""
import json
import os
import sys

import numpy as np
import pytest

import cujit as cuda
from cujit.simulator.kernel import simulate

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
KERNELS = os.path.join(ROOT, "benchmarks", "kernels.py")


def _line(path, text):
    """The line number of the first line of ``path`` containing ``text``."""
    with open(path) as f:
        for n, line in enumerate(f, 1):
            if text in line:
                return n
    raise AssertionError(f"{text!r} not in {path}")


def _only(rows):
    assert len(rows) == 1, rows
    return rows[0]


@pytest.fixture(scope="module")
def bench():
    sys.path.insert(0, os.path.join(ROOT, "benchmarks"))
    try:
        import kernels
    finally:
        sys.path.pop(0)
    return kernels.build(cuda)


# -- simple kernels with known answers --------------------------------------------------------
@cuda.jit
def copy_unit(a, b):
    i = cuda.grid(1)
    b[i] = a[i]


@cuda.jit
def store_stride32(a):
    i = cuda.grid(1)
    a[i * 32] = np.float32(1.0)


@cuda.jit
def shared_stride(out, stride):
    s = cuda.shared.array(4096, np.int32)
    t = cuda.threadIdx.x
    s[t * stride] = t
    cuda.syncthreads()
    out[t] = s[t * stride]


@cuda.jit
def shared_broadcast(out):
    s = cuda.shared.array(32, np.int32)
    t = cuda.threadIdx.x
    if t == 0:
        s[0] = 7
    cuda.syncthreads()
    out[t] = s[0]


@cuda.jit
def shared_f64(out):
    s = cuda.shared.array(64, np.float64)
    t = cuda.threadIdx.x
    s[t] = t
    cuda.syncthreads()
    out[t] = s[t]


@cuda.jit
def loop_sum(a, out, n):
    t = cuda.grid(1)
    acc = np.float32(0.0)
    for k in range(4):
        acc += a[k * n + t]
    out[t] = acc


@cuda.jit(device=True)
def load_at(a, i):
    return a[i]


@cuda.jit
def via_device(a, out):
    i = cuda.grid(1)
    out[i] = load_at(a, i * 8)


@cuda.jit
def atomic_count(a, out):
    i = cuda.grid(1)
    cuda.atomic.add(out, 0, a[i])


@cuda.jit
def dyn_shared(out):
    s = cuda.shared.array(0, np.float32)
    t = cuda.threadIdx.x
    s[t * 4] = t
    cuda.syncthreads()
    out[t] = s[t * 4]


def test_contiguous_float32_is_one_sector_per_8_lanes():
    a = np.arange(64, dtype=np.float32)
    b = np.zeros(64, np.float32)
    with cuda.access_report() as rep:
        simulate(copy_unit, 2, 32, a, b)
    assert np.array_equal(a, b)
    line = _line(__file__, "    b[i] = a[i]")
    load = _only(rep.row(line, "a", "load"))
    store = _only(rep.row(line, "b", "store"))
    for r in (load, store):
        assert (r.space, r.requests) == ("global", 2)
        assert r.sectors_per_request == 4.0 and r.ideal_sectors_per_request == 4.0
        assert r.efficiency == 1.0 and r.hint is None
    assert rep.warnings == []
    assert rep.kernels == ["copy_unit"]


def test_stride_of_32_float32_touches_32_sectors_and_warns():
    a = np.zeros(64 * 32, np.float32)
    with cuda.access_report() as rep:
        simulate(store_stride32, 2, 32, a)
    r = _only(rep.row(_line(__file__, "a[i * 32] = np.float32(1.0)")))
    assert (r.requests, r.sectors_per_request, r.ideal_sectors_per_request) == (2, 32.0, 4.0)
    assert r.efficiency == 0.125
    assert rep.warnings == [r]
    assert "128 bytes apart" in r.hint and "consecutive elements" in r.hint


@pytest.mark.parametrize("stride, ways", [(1, 1), (2, 2), (4, 4), (32, 32), (33, 1)])
def test_shared_strides_give_their_conflict_ways(stride, ways):
    out = np.zeros(64, np.int32)
    with cuda.access_report() as rep:
        simulate(shared_stride, 1, 64, out, stride)
    assert np.array_equal(out, np.arange(64))
    store = _only(rep.row(_line(__file__, "s[t * stride] = t"), "s"))
    load = _only(rep.row(_line(__file__, "out[t] = s[t * stride]"), "s"))
    for r in (store, load):
        assert (r.space, r.requests) == ("shared", 2)
        assert r.ways == ways and r.max_ways == ways and r.ideal_ways == 1.0
        assert r.flagged == (ways >= 2)
    if ways >= 2:
        assert f"bank conflict of {ways} ways" in store.hint


def test_shared_broadcast_is_not_a_conflict():
    out = np.zeros(32, np.int32)
    with cuda.access_report() as rep:
        simulate(shared_broadcast, 1, 32, out)
    assert np.all(out == 7)
    r = _only(rep.row(_line(__file__, "out[t] = s[0]"), "s"))
    assert (r.ways, r.max_ways, r.ideal_ways, r.hint) == (1.0, 1, 1.0, None)
    st = _only(rep.row(_line(__file__, "s[0] = 7"), "s"))
    assert st.requests == 1 and st.ways == 1.0     # one active lane


def test_shared_float64_consecutive_needs_two_wavefronts_not_a_conflict():
    out = np.zeros(64, np.float64)
    with cuda.access_report() as rep:
        simulate(shared_f64, 1, 64, out)
    r = _only(rep.row(_line(__file__, "    s[t] = t"), "s"))
    assert (r.ways, r.ideal_ways, r.flagged) == (2.0, 2.0, False)


def test_each_loop_iteration_is_its_own_request():
    n = 64
    a = np.arange(4 * n, dtype=np.float32)
    out = np.zeros(n, np.float32)
    with cuda.access_report() as rep:
        simulate(loop_sum, 2, 32, a, out, n)
    assert np.array_equal(out, a.reshape(4, n).sum(axis=0))
    r = _only(rep.row(_line(__file__, "acc += a[k * n + t]")))
    assert (r.requests, r.sectors_per_request, r.efficiency) == (8, 4.0, 1.0)


def test_device_function_accesses_are_reported_at_its_line():
    a = np.arange(64 * 8, dtype=np.float32)
    out = np.zeros(64, np.float32)
    with cuda.access_report() as rep:
        simulate(via_device, 2, 32, a, out)
    assert np.array_equal(out, a[::8])
    r = _only(rep.row(_line(__file__, "    return a[i]")))
    assert (r.array, r.requests, r.sectors_per_request, r.ideal_sectors_per_request) == \
        ("a", 2, 32.0, 4.0)
    assert r.kernel == "via_device" and r.flagged


def test_atomics_work_on_recorded_arrays_and_are_not_counted():
    a = np.ones(64, np.float32)
    out = np.zeros(1, np.float32)
    with cuda.access_report() as rep:
        simulate(atomic_count, 2, 32, a, out)
    assert out[0] == 64.0
    assert [r.array for r in rep.rows] == ["a"]


def test_dynamic_shared_memory_is_recorded():
    out = np.zeros(32, np.float32)
    with cuda.access_report() as rep:
        simulate(dyn_shared, 1, 32, out, dynamic_shared_bytes=32 * 16)
    assert np.array_equal(out, np.arange(32, dtype=np.float32))
    r = _only(rep.row(_line(__file__, "s[t * 4] = t"), "s"))
    assert (r.space, r.ways) == ("shared", 4.0)


@pytest.mark.parametrize("checks", [True, False])
def test_figures_do_not_depend_on_the_checkers(checks):
    from cujit.config import config
    config.SIM_CHECKS = checks
    try:
        out = np.zeros(64, np.int32)
        with cuda.access_report() as rep:
            simulate(shared_stride, 1, 64, out, 2)
    finally:
        del config.SIM_CHECKS
    r = _only(rep.row(_line(__file__, "s[t * stride] = t"), "s"))
    assert r.ways == 2.0


# -- the benchmark kernels and their rewrites ---------------------------------------------------
def _run_bench(bench, n=64):
    rng = np.random.default_rng(0)
    A = rng.random((n, n), dtype=np.float32)
    B = rng.random((n, n), dtype=np.float32)
    C1, C2 = np.zeros((n, n), np.float32), np.zeros((n, n), np.float32)
    b1, b2 = np.zeros((n, n), np.float32), np.zeros((n, n), np.float32)
    grid, block = (n // 16, n // 16), (16, 16)
    with cuda.access_report(sample_blocks=None) as orig:
        simulate(bench["matmul"], grid, block, A, B, C1)
        simulate(bench["stencil"], grid, block, A, b1)
    with cuda.access_report(sample_blocks=None) as fixed:
        simulate(bench["matmul_conflict_free"], grid, block, A, B, C2)
        simulate(bench["stencil_coalesced"], grid, block, A, b2)
    assert np.allclose(C1, A @ B, rtol=1e-4) and np.array_equal(C1, C2)
    assert np.array_equal(b1, b2) and b1[1, 1] != 0
    return orig, fixed


@pytest.fixture(scope="module")
def bench_reports(bench):
    return _run_bench(bench)


def test_report_flags_the_benchmark_stencil_at_its_line(bench_reports):
    rep = bench_reports[0]
    line = _line(KERNELS, "b[i, j] = np.float32(0.25)")
    flagged = {(r.kernel, r.lineno, r.array, r.op) for r in rep.warnings if r.kernel == "stencil"}
    assert flagged == {("stencil", line, "a", "load"), ("stencil", line, "b", "store")}
    r = _only(rep.row(line, "a", "load", "stencil"))
    assert r.efficiency < 0.3 and r.ideal_sectors_per_request <= 4.0
    assert "swap the indices so threadIdx.x indexes the last axis" in r.hint
    assert "slow (first) axis" in r.hint


def test_report_flags_the_benchmark_matmul_bank_conflict(bench_reports):
    rep = bench_reports[0]
    store = _line(KERNELS, "sA[tx, ty] = A[x, step * TPB + ty]")
    loop = _line(KERNELS, "acc += sA[tx, k] * sB[k, ty]")
    r = _only(rep.row(store, "sA", "store", "matmul"))
    assert (r.ways, r.max_ways, r.ideal_ways) == (8.0, 8, 1.0)
    assert "indexed [tx, ty] by threads of consecutive tx" in r.hint
    assert "bank conflict of 8 ways" in r.hint and "pad the row to 17 elements" in r.hint
    assert _only(rep.row(loop, "sA", "load", "matmul")).ways == 8.0
    assert _only(rep.row(loop, "sB", "load", "matmul")).flagged is False
    assert _only(rep.row(store, "A", "load", "matmul")).efficiency == 0.25


def test_the_suggested_rewrites_are_clean(bench_reports):
    fixed = bench_reports[1]
    assert fixed.kernels == ["matmul_conflict_free", "stencil_coalesced"]
    assert fixed.warnings == []
    for r in fixed.rows:
        if r.space == "shared":
            assert r.ways == 1.0
        else:
            assert r.efficiency >= 0.75


# -- sampling, grid limit, data and text ------------------------------------------------------
def test_sampled_blocks_run_every_block_but_record_only_the_sample():
    a = np.arange(64 * 32, dtype=np.float32)
    b = np.zeros_like(a)
    with cuda.access_report(sample_blocks=4) as rep:
        simulate(copy_unit, 64, 32, a, b)
    assert np.array_equal(a, b)
    assert _only(rep.row(_line(__file__, "    b[i] = a[i]"), "b")).requests == 4


def test_grid_limit_runs_only_the_first_blocks():
    a = np.arange(8 * 32, dtype=np.float32) + 1
    b = np.zeros_like(a)
    with cuda.access_report(grid_limit=2) as rep:
        simulate(copy_unit, 8, 32, a, b)
    assert np.array_equal(b[:64], a[:64]) and not b[64:].any()
    assert _only(rep.row(_line(__file__, "    b[i] = a[i]"), "b")).requests == 2


@pytest.mark.parametrize("kw", [{"grid_limit": 0}, {"grid_limit": -1}, {"grid_limit": 1.5},
                                {"sample_blocks": 0}, {"sample_blocks": "4"},
                                {"sample_blocks": True}])
def test_bad_options_raise_value_error(kw):
    name = next(iter(kw))
    with pytest.raises(ValueError, match=f"{name} must be a positive int or None"):
        cuda.access_report(**kw)


def test_report_as_text_and_data():
    a = np.zeros(64 * 32, np.float32)
    with cuda.access_report() as rep:
        text_empty = str(rep)
        simulate(store_stride32, 2, 32, a)
    assert text_empty == "access report: no recorded global or shared memory accesses"
    text = str(rep)
    assert text.splitlines()[0].split()[:6] == ["kernel", "line", "array", "space", "op",
                                                "requests"]
    assert "1 warning:" in text and "a[i * 32] = np.float32(1.0)" in text
    rows = json.loads(json.dumps(rep.as_dicts()))
    assert rows[0]["sectors_per_request"] == 32.0 and rows[0]["array"] == "a"
    assert repr(rep) == "<AccessReport 1 rows, 1 warnings>"


def test_nothing_is_recorded_outside_the_context():
    from cujit.simulator import access
    a = np.zeros(64 * 32, np.float32)
    with cuda.access_report() as rep:
        pass
    simulate(store_stride32, 2, 32, a)
    assert rep.rows == [] and not access.enabled()


# -- kernel.access_report() ---------------------------------------------------------------------
@cuda.jit
def fresh_kernel(a):
    a[cuda.grid(1)] = 1


@pytest.mark.sim
def test_kernel_access_report_is_the_last_recorded_launch(monkeypatch):
    monkeypatch.setenv("CUJIT_ACCESS_REPORT", "1")
    a = np.zeros(64 * 32, np.float32)
    store_stride32[2, 32](a)
    rep = store_stride32.access_report()
    assert _only(rep.rows).requests == 2 and rep.warnings
    store_stride32[1, 32](a)
    assert _only(store_stride32.access_report().rows).requests == 1
    # the configured kernel gives the kernel's report
    assert _only(store_stride32[2, 32].access_report().rows).requests == 1


@pytest.mark.sim
def test_kernel_access_report_without_a_recorded_launch_raises(monkeypatch):
    monkeypatch.delenv("CUJIT_ACCESS_REPORT", raising=False)
    with pytest.raises(RuntimeError, match="no recorded launch of kernel fresh_kernel"):
        fresh_kernel.access_report()
    fresh_kernel[1, 32](np.zeros(32, np.float32))          # recording off
    with pytest.raises(RuntimeError, match="CUJIT_ACCESS_REPORT=1"):
        fresh_kernel.access_report()


@pytest.mark.sim
def test_kernel_access_report_says_the_gpu_cannot_report(monkeypatch):
    import cujit.driver
    monkeypatch.setattr(cujit.driver, "simulator_enabled", lambda: False)

    @cuda.jit
    def never_launched(a):
        a[0] = 1
    with pytest.raises(RuntimeError, match="runs on the GPU in this process; the access "
                                           "report is made by the simulator"):
        never_launched.access_report()


@pytest.mark.gpu
def test_on_the_gpu_kernel_access_report_points_to_the_simulator():
    a = cuda.to_device(np.zeros(32, np.float32))
    fresh_kernel[1, 32](a)
    cuda.synchronize()
    with pytest.raises(RuntimeError, match="made by the simulator"):
        fresh_kernel.access_report()


@pytest.mark.sim
def test_context_records_dispatcher_launches(bench):
    n = 32
    a = np.ones((n, n), np.float32)
    b = np.zeros((n, n), np.float32)
    with cuda.access_report() as rep:
        bench["stencil"][(n // 16, n // 16), (16, 16)](a, b)
    assert {r.array for r in rep.warnings} == {"a", "b"}
    assert bench["stencil"].access_report().rows == rep.rows


# -- graphs: the recorder is the one in force when the graph replays ----------------------------
@cuda.jit
def _graph_inc(x):
    i = cuda.grid(1)
    if i < x.size:
        x[i] += 1


@pytest.mark.sim
def test_graph_captured_under_a_grid_limit_replays_the_whole_grid_outside_the_report():
    s = cuda.stream()
    d = cuda.to_device(np.zeros(64), stream=s)
    with cuda.access_report(grid_limit=1) as rep:
        with cuda.graph(s) as g:
            _graph_inc[4, 16, s](d)
    assert rep.rows == []                   # captured, not run
    g.launch()
    s.synchronize()
    assert (d.copy_to_host() == 1).all()    # all 4 blocks, not the report's first one
    with cuda.access_report(grid_limit=1) as rep:
        g.launch()
        s.synchronize()
    assert (d.copy_to_host()[:16] == 2).all() and (d.copy_to_host()[16:] == 1).all()
    assert [r.array for r in rep.rows] == ["x", "x"]   # the replay inside it is recorded


@pytest.mark.sim
def test_access_reports_collect_through_the_recorded_hook_point():
    from cujit.simulator import access
    a = np.zeros(64 * 32, np.float32)
    seen = []
    with access.recorded.listening(lambda pyfunc, table: seen.append(pyfunc)):
        with cuda.access_report() as outer:
            with cuda.access_report() as inner:
                store_stride32[2, 32](a)
                assert len(access.recorded.listeners) == 3
            store_stride32[1, 32](a)
    assert access.recorded.listeners == ()
    assert seen == [store_stride32.py_func] * 2
    assert _only(inner.rows).requests == 2
    assert _only(outer.rows).requests == 3         # both launches, merged per site
