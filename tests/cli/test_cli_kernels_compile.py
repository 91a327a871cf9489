"""Every demo and benchmark kernel compiles to PTX and an sm_90 cubin (no GPU needed), so a
kernel the compiler cannot take is caught here rather than in the lead's GPU run."""
import os
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

SIGS = {
    "aliased": "void(float32[:], int32[:])",
    "disjoint": "void(float32[:], int32[:])",
    "matmul_tiled": "void(float32[:,:], float32[:,:], float32[:,:])",
    "fir": "void(float32[:], float32[:])",
    "axpb": "void(float32[:], float32, float32)",
    "empty1": "void(float32[:])",
    "empty5": "void(float32[:], float32[:], float32[:], float32, int64)",
    "axpy": "void(float32[:], float32, float32[:])",
    "matmul": "void(float32[:,:], float32[:,:], float32[:,:])",
    "reduce": "void(float32[:], float32[:])",
    "stencil": "void(float32[:,:], float32[:,:])",
    "matmul_conflict_free": "void(float32[:,:], float32[:,:], float32[:,:])",
    "stencil_coalesced": "void(float32[:,:], float32[:,:])",
}


def _kernels(cuda):
    from cujit.demo import shared_alias, matmul, const_filter, pipeline
    ks = list(shared_alias.make_kernels(cuda)) + [matmul.make_kernel(cuda),
                                               const_filter.make_kernel(cuda),
                                               pipeline.make_kernel(cuda)]
    sys.path.insert(0, os.path.join(ROOT, "benchmarks"))
    try:
        import kernels
    finally:
        sys.path.pop(0)
    return ks + list(kernels.build(cuda).values())


@pytest.fixture(scope="module")
def compiled():
    import cujit as cuda
    from cujit.nvvm import libnvvm as nvvm
    assert nvvm.nvvm_available()          # a base dependency: its absence is a failure
    return {k.py_func.__name__: k.compile(SIGS[k.py_func.__name__]) for k in _kernels(cuda)}


@pytest.mark.compile
@pytest.mark.parametrize("name", sorted(SIGS))
def test_kernel_compiles_to_ptx_and_cubin(compiled, name):
    spec = compiled[name]
    assert f".entry {spec.name}" in spec.ptx
    assert spec.cubin is None or spec.cubin[:4] == b"\x7fELF"


@pytest.mark.compile
def test_memory_spaces_reach_the_ptx(compiled):
    assert compiled["matmul_tiled"].static_shared_bytes == 2 * 16 * 16 * 4
    assert "bar.sync" in compiled["matmul_tiled"].ptx
    assert compiled["aliased"].uses_dynamic_shared and compiled["disjoint"].uses_dynamic_shared
    # The taps are in addrspace(4) in the IR; NVVM may then fold the 9 loads into immediates.
    assert compiled["fir"].const_bytes == 36 and "addrspace(4)" in compiled["fir"].llvm_ir
    assert "atom" in compiled["reduce"].ptx or "red." in compiled["reduce"].ptx
