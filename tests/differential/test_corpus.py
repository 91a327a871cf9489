"""The differential corpus on the active backend: every case's kernel runs on generated
inputs with edge values (NaN, ±inf, ±0, subnormals, integer minimum and maximum) and its
outputs are compared with the values computed with NumPy under Numba's typing
(``corpus.expected``).  Unmarked: the simulator in CI, the compiled kernel on the H200."""
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st
from hypothesis.extra import numpy as hnp

import cujit as cuda

from corpus import CASES, DTYPES, EDGES, compare, defined_divisors, expected, result_dtype, \
    arith, compare_ops, literals


def _run(case, seed):
    rng = np.random.default_rng(seed)
    ins, outs, griddim, blockdim, args = case.make(rng)
    want = expected(case.name.split("[")[0], ins)
    case.kernel[griddim, blockdim](*args)
    cuda.synchronize()
    return outs, want


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_case_matches_numba_typing(case):
    outs, want = _run(case, 1234)
    bad = {name: compare(outs[name], want[name], mode) for name, mode in case.modes.items()}
    bad = {k: v for k, v in bad.items() if v}
    assert not bad, f"{case.name}: {bad}"


def _array(dtype):
    dt = np.dtype(dtype)
    return hnp.arrays(dt, st.integers(1, 40),
                      elements=st.one_of(st.sampled_from(list(EDGES(dt))),
                                         hnp.from_dtype(dt)))


@st.composite
def _pair(draw):
    da = draw(st.sampled_from(DTYPES))
    db = draw(st.sampled_from(DTYPES))
    a = draw(_array(da))
    b = draw(hnp.arrays(np.dtype(db), a.size, elements=st.one_of(
        st.sampled_from(list(EDGES(db))), hnp.from_dtype(np.dtype(db)))))
    return a, b


_SETTINGS = settings(max_examples=25, deadline=None,
                     suppress_health_check=[HealthCheck.too_slow])


def _launch(kernel, args, n):
    kernel[(n + 31) // 32, 32](*args)
    cuda.synchronize()


@_SETTINGS
@given(_pair())
def test_arith_on_generated_inputs(pair):
    a, b = pair
    b = defined_divisors(a, b)
    want = expected("arith", {"a": a, "b": b})
    outs = {k: np.zeros(a.size, v.dtype) for k, v in want.items()}
    _launch(arith, [a, b] + [outs[k] for k in ("add", "sub", "mul", "div", "fdiv", "mod")],
            a.size)
    for k in outs:
        assert compare(outs[k], want[k], ("exact", 0)) is None, (k, a, b)


@_SETTINGS
@given(_pair())
def test_comparisons_on_generated_inputs(pair):
    a, b = pair
    want = expected("compare_ops", {"a": a, "b": b})
    outs = {k: np.zeros(a.size, np.bool_) for k in ("lt", "le", "eq", "ne")}
    _launch(compare_ops, [a, b] + list(outs.values()), a.size)
    for k in outs:
        assert outs[k].tolist() == want[k].tolist(), (k, a, b)


@_SETTINGS
@given(st.sampled_from(DTYPES).flatmap(_array))
def test_literals_on_generated_inputs(a):
    want = expected("literals", {"a": a})
    outs = {k: np.zeros(a.size, want[k].dtype) for k in ("times_tenth", "plus_one",
                                                          "floordiv_three", "neg")}
    _launch(literals, [a] + list(outs.values()), a.size)
    for k in outs:
        assert compare(outs[k], want[k], ("exact", 0)) is None, (k, a)


def test_result_dtypes_follow_numba_typing():
    assert result_dtype("+", np.int32, np.int32) == np.int64
    assert result_dtype("+", np.uint32, np.uint32) == np.uint64
    assert result_dtype("+", np.uint64, np.int8) == np.int64
    assert result_dtype("/", np.int8, np.int8) == np.float64
    assert result_dtype("*", np.float32, np.float64) == np.float64
    assert result_dtype("*", np.int8, np.float32) == np.float32


def test_undefined_divisions_are_left_out():
    a = np.array([np.iinfo(np.int64).min, 5], np.int64)
    assert defined_divisors(a, np.array([-1, -1], np.int8)).tolist() == [1, -1]
    assert defined_divisors(a.astype(np.float64), np.array([-1.0, -1.0])).tolist() == \
        [-1.0, -1.0]
