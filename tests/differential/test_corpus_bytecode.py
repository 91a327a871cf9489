"""Every corpus kernel (the differential corpus, the benchmark, example and demo kernels among
them) rebuilt from its bytecode alone (``no_source.without_source``: no file behind it) types
to the same variable types and gives bit-for-bit the same outputs as the kernel compiled from
its source, on the simulator."""
import re

import numpy as np
import pytest

import cujit as cuda
from cujit.frontend.source import FunctionSource
from cujit.frontend.typeinfer import infer
from cujit.types import typeof

from corpus import CASES
from kernels_common import loops, matmul_tiled, records_in_shared
from no_source import NO_SOURCE, without_source

# one case per kernel and dtype signature is the corpus; every one of them runs here
_IDS = [c.name for c in CASES]


def _outputs(kernel, case, seed=99):
    ins, outs, griddim, blockdim, args = case.make(np.random.default_rng(seed))
    kernel[griddim, blockdim](*args)
    cuda.synchronize()
    return {k: np.array(v) for k, v in outs.items()}, args


def _vartypes(pyfunc, args):
    tf = infer(pyfunc, tuple(typeof(a) for a in args))
    return {k: v for k, v in tf.vartypes.items() if not k.startswith("_cj_tmp")}


@pytest.mark.parametrize("case", CASES, ids=_IDS)
def test_corpus_kernel_from_bytecode_matches_source(case):
    src = case.kernel
    rebuilt = without_source(src.py_func)
    assert FunctionSource.from_pyfunc(rebuilt).filename == NO_SOURCE
    want, args = _outputs(src, case)
    got, _ = _outputs(cuda.jit(rebuilt, **src.targetoptions), case)
    assert want.keys() == got.keys()
    for k in want:
        assert want[k].dtype == got[k].dtype, k
        np.testing.assert_array_equal(got[k], want[k], err_msg=f"{case.name}: {k}")
    assert _vartypes(rebuilt, args) == _vartypes(src.py_func, args)


def _same_launch(f, griddim, blockdim, make):
    results = []
    for fn in (f, without_source(f)):
        args = make()
        cuda.jit(fn)[griddim, blockdim](*args)
        cuda.synchronize()
        results.append(args)
    for a, b in zip(*results):
        np.testing.assert_array_equal(a, b)
    return results[0]


def test_loops_kernel_from_bytecode_matches_source():
    # for/while with else, break, continue, ranges up and down
    out = _same_launch(loops, 1, 1, lambda: [np.zeros(6, np.int64), 10, 3])[0]
    assert out.tolist() == [55, 4, 72, 23, 112, 7]


def test_tiled_matmul_from_bytecode_matches_source():
    rng = np.random.default_rng(5)
    A = rng.standard_normal((12, 9)).astype(np.float32)
    B = rng.standard_normal((9, 10)).astype(np.float32)
    C = _same_launch(matmul_tiled, (2, 2), (8, 8),
                     lambda: [A.copy(), B.copy(), np.zeros((12, 10), np.float32)])[2]
    np.testing.assert_allclose(C, A @ B, rtol=1e-4, atol=1e-4)


def test_records_in_shared_from_bytecode_matches_source():
    out = _same_launch(records_in_shared, 1, 1, lambda: [np.zeros(3)])[0]
    assert out.tolist() == [45.0, 45.0, 5.0]


def _one_case_per_kernel():
    seen, out = set(), []
    for c in CASES:
        if c.kernel not in seen:
            seen.add(c.kernel)
            out.append(c)
    return out


def _unnamed(ptx):
    # the entry's name carries a digest of the kernel's file name; the code must not differ
    return re.sub(r"_cujit_(\w+?)_[0-9a-f]{12}", r"_cujit_\1", ptx)


@pytest.mark.compile
@pytest.mark.parametrize("case", _one_case_per_kernel(), ids=lambda c: c.name)
def test_corpus_kernel_from_bytecode_compiles_to_the_same_ptx(case):
    from cujit import types as T
    from cujit.nvvm import libnvvm as nvvm
    from cujit.dispatch.dispatcher import compile_ptx
    if not nvvm.nvvm_available():
        pytest.skip("libNVVM is not available")
    _, _, _, _, args = case.make(np.random.default_rng(0))
    sig = T.void(*(typeof(a) for a in args))
    want, _ = compile_ptx(case.kernel.py_func, sig)
    got, _ = compile_ptx(without_source(case.kernel.py_func), sig)
    assert ".entry" in got
    assert _unnamed(got) == _unnamed(want)


@pytest.mark.compile
@pytest.mark.parametrize("f,sig", [
    (loops, "void(int64[:], int64, int64)"),
    (matmul_tiled, "void(float32[:, :], float32[:, :], float32[:, :])")],
    ids=["loops", "matmul_tiled"])
def test_common_kernel_from_bytecode_compiles_to_the_same_ptx(f, sig):
    from cujit.nvvm import libnvvm as nvvm
    from cujit.dispatch.dispatcher import compile_ptx
    if not nvvm.nvvm_available():
        pytest.skip("libNVVM is not available")
    want, _ = compile_ptx(f, sig)
    got, _ = compile_ptx(without_source(f), sig)
    assert _unnamed(got) == _unnamed(want)
