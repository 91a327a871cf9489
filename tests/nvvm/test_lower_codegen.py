"""Code quality of the PTX for the benchmark kernels (benchmarks/kernels.py itself, through
``kernels_common.benchmark_kernels``, so what is pinned here is what is benchmarked): libNVVM -opt=3 output compared with what
numba-cuda 0.30.4 produces for the same source (numbers in docs/design-compiler.md).

What is asserted, per kernel, is what made cujit slower or must stay as good as numba-cuda's:
shared memory reached with ``ld.shared``/``st.shared`` (no generic loads after an
``addrspacecast``), grid-stride ``range`` loops unrolled with no negative-index wrap (the trip
count is computed before the loop), constant-divisor ``//`` without a division instruction,
and instruction counts of the hot loops no larger than numba-cuda's."""
import re

import pytest

import cujit as cuda
from cujit import types as T
from cujit.nvvm.lowering import compile_to_llvm
from cujit.nvvm.libnvvm import nvvm_available

from kernels_common import benchmark_kernels

pytestmark = [pytest.mark.compile,
              pytest.mark.skipif(not nvvm_available(), reason="needs libNVVM (nvidia-nvvm)")]

F32_2D = T.float32[:, ::1]
F32_1D = T.float32[::1]

_BENCH, _KERNELS = benchmark_kernels()
TPB, RED_TPB = _BENCH.TPB, _BENCH.RED_TPB
matmul, reduce, axpy, stencil = (_KERNELS[k].py_func
                                 for k in ("matmul", "reduce", "axpy", "stencil"))


def ptx_of(fn, argtypes):
    from cujit.nvvm.libnvvm import compile_ptx
    return compile_ptx(compile_to_llvm(fn, argtypes).llvm_ir)


_INSN = re.compile(r"^\s+(@!?%p\d+\s+)?[a-z]")
_WRAP = re.compile(r"shr\.s64\s+%rd\d+,\s*%rd\d+,\s*63|setp\.lt\.s64\s+%p\d+,\s*%rd\d+,\s*0;")


def instructions(lines):
    return [s.strip() for s in lines if _INSN.match(s) and not s.strip().startswith(".")]


def loops(ptx):
    """[(label, instructions)] of every loop: a label and the backward branch to it."""
    lines = ptx.splitlines()
    seen, out = {}, []
    for n, line in enumerate(lines):
        m = re.match(r"^(\$L__BB\d+_\d+):", line)
        if m:
            seen[m.group(1)] = n
        m = re.search(r"bra(?:\.uni)?\s+(\$L__BB\d+_\d+);", line)
        if m and seen.get(m.group(1), n) < n:
            out.append((m.group(1), instructions(lines[seen[m.group(1)] + 1:n + 1])))
    return out


def count(ins, pattern):
    return sum(1 for s in ins if re.search(pattern, s))


def no_generic_memory(ptx):
    """No load/store without a state space (a generic access, e.g. after addrspacecast)."""
    return not re.search(r"^\s+(ld|st)(\.volatile)?\.(f32|f64|[su](8|16|32|64)|b\d+)\s",
                         ptx, re.M)


# numba-cuda 0.30.4, same source, -opt=3, libNVVM 13.0 (cc 9.0): matmul's tile loop has 78
# instructions, reduce's unrolled grid-stride loop 49 for 4 loads (each with a wrap check),
# axpy 30 instructions in all, stencil 54.

def test_matmul_tile_loop_uses_shared_loads_and_no_more_instructions_than_numba():
    ptx = ptx_of(matmul, (F32_2D, F32_2D, F32_2D))
    assert no_generic_memory(ptx)
    assert "div." not in ptx and "rem." not in ptx     # A.shape[1] // 16 is a shift
    (label, body), = loops(ptx)        # the k loop is fully unrolled: one loop is left
    assert count(body, r"^ld\.shared\.f32") == 2 * TPB
    assert count(body, r"^st\.shared\.f32") == 2
    assert count(body, r"^fma\.rn\.f32") == TPB
    assert count(body, r"^ld\.global\.f32") == 2
    assert count(body, r"^bar\.sync") == 2
    assert len(body) <= 78, "\n".join(body)


def test_reduce_grid_stride_loop_is_unrolled_without_wrap_checks():
    ptx = ptx_of(reduce, (F32_1D, F32_1D))
    assert no_generic_memory(ptx)
    hot = [(lab, b) for lab, b in loops(ptx) if count(b, r"^ld\.global\.f32") >= 4]
    assert hot, [len(b) for _, b in loops(ptx)]
    for _, body in loops(ptx):
        assert not any(_WRAP.search(s) for s in body), "\n".join(body)
    _, body = hot[0]
    loads = count(body, r"^ld\.global\.f32")
    assert len(body) <= 6 * loads, "\n".join(body)
    # the while loop over s is unrolled: one barrier before it and one per halving
    assert count(ptx.splitlines(), r"bar\.sync") == 1 + 8
    assert "atom.global.add.f32" in ptx


def test_axpy_and_stencil_stay_minimal():
    assert len(instructions(ptx_of(axpy, (F32_1D, T.float32, F32_1D)).splitlines())) <= 25
    ptx = ptx_of(stencil, (F32_2D, F32_2D))
    assert len(instructions(ptx.splitlines())) <= 54
    assert not any(_WRAP.search(s) for s in ptx.splitlines())


def grid_stride(a, n):
    for i in range(cuda.grid(1), n, cuda.gridsize(1)):
        a[i] = a[i] * 2.0


def any_start(a, n):
    for i in range(-n, n):
        a[i] = a[i] * 2.0


def test_range_index_wraps_only_when_it_can_be_negative():
    ptx = ptx_of(grid_stride, (T.float64[::1], T.int64))
    assert not any(_WRAP.search(s) for s in ptx.splitlines())
    # a start that may be negative keeps Python's wrap of negative indices
    ptx = ptx_of(any_start, (T.float64[::1], T.int64))
    assert any(_WRAP.search(s) for _, b in loops(ptx) for s in b)


def descending(a, n):
    for i in range(n - 1, -1, -1):
        a[i] = a[i] * 2.0


def descending_any(a, n):
    for i in range(n, -n, -1):
        a[i] = a[i] * 2.0


def test_descending_range_to_zero_has_no_wrap():
    ptx = ptx_of(descending, (T.float64[::1], T.int64))
    assert loops(ptx)
    assert not any(_WRAP.search(s) for _, b in loops(ptx) for s in b), ptx
    ptx = ptx_of(descending_any, (T.float64[::1], T.int64))
    assert any(_WRAP.search(s) for _, b in loops(ptx) for s in b)
