"""Differential corpus: every kernel of tests/kernels_common.py, benchmarks/kernels.py and
the examples that take plain arrays, on hypothesis-generated inputs plus edge values (NaN,
±inf, ±0, subnormals, integer minimum and maximum), run by the vector executor and per
thread: every output bit-for-bit equal.  The default run is short; ``slow`` runs many more
examples."""
import sys

import numpy as np
import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

sys.path.insert(0, __file__.rsplit("/", 2)[0])
sys.path.insert(0, __file__.rsplit("/", 1)[0])
import kernels_common as kc  # noqa: E402
from vector_helpers import compare  # noqa: E402

pytestmark = pytest.mark.sim     # compares the simulator's two executors

F32_EDGE = [0.0, -0.0, np.nan, np.inf, -np.inf, 1e-45, -1e-45, 1.1754942e-38, 3.4028235e38,
            -3.4028235e38, 1.0, -1.0]


def f32_arrays(shape):
    elems = st.one_of(st.sampled_from(F32_EDGE),
                      st.floats(width=32, allow_nan=True, allow_infinity=True,
                                allow_subnormal=True))
    return hnp.arrays(np.float32, shape, elements=elems)


def _kernels():
    mod, ks = kc.benchmark_kernels()
    ex = kc.example("tiled_matmul")
    return mod, ks, ex


# kernel name -> executor its vector launch must run on
VECTOR = {"example_scale_shift", "empty1", "empty5", "axpy", "matmul", "reduce", "stencil", "matmul_conflict_free",
          "stencil_coalesced", "matmul_tiled", "example_tiled_matmul"}


def _check(monkeypatch, name, kernel, grid, block, *args):
    expect = "vector" if name in VECTOR else "thread"
    compare(monkeypatch, kernel, grid, block, *args, expect=expect)


# no shrinking: a failing example is printed as drawn (shrinking these inputs takes minutes)
SETTINGS = dict(deadline=None, derandomize=True, phases=[Phase.explicit, Phase.generate],
                suppress_health_check=[HealthCheck.function_scoped_fixture,
                                       HealthCheck.too_slow, HealthCheck.data_too_large])


I64_EDGE = [0, 1, -1, 2 ** 63 - 1, -2 ** 63, 2 ** 31 - 1, -2 ** 31, 2 ** 32, 63, 64]


def _typed_ops(monkeypatch, data):
    """The arithmetic kernels of test_vector_exec.py on generated inputs."""
    import test_vector_exec as tv
    ints = hnp.arrays(np.int64, 16, elements=st.one_of(
        st.sampled_from(I64_EDGE), st.integers(-2 ** 63, 2 ** 63 - 1)))
    a, b = data.draw(ints, "ia"), data.draw(ints, "ib")
    compare(monkeypatch, tv.int_ops, 1, 16, a, b, np.zeros((16, 14), np.int64))
    fa, fb = data.draw(f32_arrays(16), "fa"), data.draw(f32_arrays(16), "fb")
    for x, y in ((fa, fb), (fa.astype(np.float64), fb.astype(np.float64))):
        compare(monkeypatch, tv.float_ops, 1, 16, x, y, np.zeros((16, 6), x.dtype),
                np.zeros((16, 9), np.int64))
        compare(monkeypatch, tv.maths, 1, 16, x, np.zeros((16, 8), x.dtype))
        compare(monkeypatch, tv.extremes, 1, 16, x.astype(np.float32),
                y.astype(np.float32), np.zeros((16, 3), np.float32))


def _corpus(monkeypatch, data):
    _typed_ops(monkeypatch, data)
    mod, ks, ex = _kernels()
    n = data.draw(st.integers(1, 300), "n")
    x = data.draw(f32_arrays(n), "x")
    y = data.draw(f32_arrays(n), "y")
    alpha = data.draw(st.sampled_from([np.float32(2.5), np.float32(np.nan),
                                       np.float32(-0.0), np.float32(3e38)]), "alpha")
    blocks = (n + 63) // 64
    _check(monkeypatch, "axpy", ks["axpy"], blocks, 64, y, alpha, x)
    _check(monkeypatch, "empty1", ks["empty1"], blocks, 64, x)
    _check(monkeypatch, "empty5", ks["empty5"], blocks, 64, x, y, x, alpha,
           data.draw(st.sampled_from([0, -1, 2 ** 63 - 1, -2 ** 63]), "int"))
    _check(monkeypatch, "reduce", ks["reduce"], 2, mod.RED_TPB,
           data.draw(f32_arrays(600), "rx"), np.zeros(1, np.float32))
    m = data.draw(st.sampled_from([16, 32]), "m")
    A, B = data.draw(f32_arrays((m, m)), "A"), data.draw(f32_arrays((m, m)), "B")
    for name in ("matmul", "matmul_conflict_free"):
        _check(monkeypatch, name, ks[name], (m // 16, m // 16), (16, 16), A, B,
               np.zeros((m, m), np.float32))
    h, w = data.draw(st.integers(3, 40), "h"), data.draw(st.integers(3, 40), "w")
    a = data.draw(f32_arrays((h, w)), "a")
    _check(monkeypatch, "stencil", ks["stencil"], ((h + 15) // 16, (w + 15) // 16),
           (16, 16), a, np.zeros_like(a))
    _check(monkeypatch, "stencil_coalesced", ks["stencil_coalesced"],
           ((w + 15) // 16, (h + 15) // 16), (16, 16), a, np.zeros_like(a))
    r, k, c = (data.draw(st.integers(1, 20), s) for s in "rkc")
    A2, B2 = data.draw(f32_arrays((r, k)), "A2"), data.draw(f32_arrays((k, c)), "B2")
    tpb = kc.TPB
    _check(monkeypatch, "matmul_tiled", kc.matmul_tiled,
           ((c + tpb - 1) // tpb, (r + tpb - 1) // tpb), (tpb, tpb), A2, B2,
           np.zeros((r, c), np.float32))
    etpb = ex.TPB
    A3, B3 = data.draw(f32_arrays((r, k)), "A3"), data.draw(f32_arrays((k, c)), "B3")
    _check(monkeypatch, "example_tiled_matmul", ex.matmul,
           ((c + etpb - 1) // etpb, (r + etpb - 1) // etpb), (etpb, etpb), A3, B3,
           np.zeros((r, c), np.float32))
    sp = kc.example("streams_pipeline")
    _check(monkeypatch, "example_scale_shift", sp.scale_shift, data.draw(st.integers(1, 3)),
           32, x, alpha, np.float32(-1.5))
    cm = kc.example("constant_memory")
    _check(monkeypatch, "example_smooth", cm.smooth, blocks, 64, x, np.zeros_like(x))
    _check(monkeypatch, "loops", kc.loops, 1, 1, np.zeros(6, np.int64),
           data.draw(st.integers(0, 30), "ln"), data.draw(st.integers(1, 5), "step"))


@settings(max_examples=4, **SETTINGS)
@given(data=st.data())
def test_corpus_vector_equals_per_thread(monkeypatch, data):
    _corpus(monkeypatch, data)


@pytest.mark.slow
@settings(max_examples=60, **SETTINGS)
@given(data=st.data())
def test_corpus_vector_equals_per_thread_long(monkeypatch, data):
    _corpus(monkeypatch, data)


def test_records_in_shared_runs_per_thread(monkeypatch):
    out = compare(monkeypatch, kc.records_in_shared, 1, 1, np.zeros(3), expect="thread")[0]
    assert out.tolist() == [45.0, 45.0, 5.0]


sys.path.insert(0, __file__.rsplit("/", 2)[0] + "/differential")
from corpus import CASES  # noqa: E402


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_typing_corpus_vector_equals_per_thread(monkeypatch, case):
    """tests/differential/corpus.py (the one-typing cases): same bits on both executors."""
    ins, outs, griddim, blockdim, args = case.make(np.random.default_rng(11))
    compare(monkeypatch, case.kernel, griddim, blockdim, *args, expect=None)
