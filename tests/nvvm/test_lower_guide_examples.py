"""The original guide's kernels (dynamic shared memory aliasing and views, the shared-memory
neighbour example, constant coefficients) compile through libNVVM to PTX with the memory
spaces they use; plus the public numba bug-report cases on the compile side."""
import re

import numpy as np
import pytest

import cujit as cuda
from cujit import types as T
from cujit.frontend.errors import CompileError, TypingError
from cujit.nvvm.lowering import compile_to_llvm

from kernels_common import REC_OUTER, example, records_in_shared

pytestmark = pytest.mark.compile


def ptx_of(fn, argtypes):
    from cujit.nvvm.libnvvm import compile_ptx
    lf = compile_to_llvm(fn, argtypes)
    return lf, compile_ptx(lf.llvm_ir)


# ---- seed examples -------------------------------------------------------------------------
def seed_neighbour(x):
    sdata = cuda.shared.array(32, dtype=cuda.float32)
    tid = cuda.threadIdx.x
    sdata[tid] = x[tid]
    cuda.syncthreads()
    x[tid] = sdata[(tid + 1) % 32]


# The seed guide's two dynamic shared memory programs, as examples/ has them
_SEED = example("shared_memory_aliasing")
seed_dyn_alias, seed_dyn_view = _SEED.f.py_func, _SEED.f_with_view.py_func


coefficients = np.array([1.0, 2.0, 3.0], dtype=np.float32)


def seed_const(x):
    i = cuda.grid(1)
    if i < x.size:
        x[i] = x[i] * cuda.const.array_like(coefficients)[i % 3]


def test_seed_neighbour_uses_shared_and_barrier():
    lf, ptx = ptx_of(seed_neighbour, (T.float32[::1],))
    assert lf.static_shared_bytes == 32 * 4 and not lf.uses_dynamic_shared
    assert ".shared .align 4 .b8" in ptx and "[128]" in ptx
    assert "st.shared.f32" in ptx and "ld.shared.f32" in ptx
    assert "bar.sync" in ptx
    assert ".entry " + lf.name in ptx


@pytest.mark.parametrize("fn", [seed_dyn_alias, seed_dyn_view])
def test_seed_dynamic_shared(fn):
    lf, ptx = ptx_of(fn, ())
    assert lf.uses_dynamic_shared and lf.static_shared_bytes == 0
    # one extern array: every size-0 shared array aliases it
    assert ptx.count(".extern .shared") == 1
    assert "vprintf" in ptx
    assert "st.shared" in ptx


def test_seed_dyn_view_offsets_by_one_int32():
    lf, ptx = ptx_of(seed_dyn_view, ())
    # 3.14 stored as float32 (its bits, 1078523331, are what the int32 alias reads)
    assert "1078523331" in ptx
    # the [1:] view starts min(1, launch length) int32s in: 4 bytes when there is room
    assert "mul.wide.u32" in ptx and ", 4;" in ptx
    assert ptx.count("%dynamic_smem_size") == 1     # read once, shared by both arrays


def test_seed_const_coefficients():
    lf, ptx = ptx_of(seed_const, (T.float32[::1],))
    assert lf.const_bytes == 12
    assert ".const .align 4 .b8" in ptx
    assert "ld.const.f32" in ptx
    # the bytes of [1.0, 2.0, 3.0] as float32 are in the module
    assert "{0, 0, 128, 63, 0, 0, 0, 64, 0, 0, 64, 64}" in ptx


# ---- numba bug-report cases (compile side) -------------------------------------------------
def case1_dyn_slices(out):
    arr = cuda.shared.array(0, dtype=np.int32)
    a = arr[0:1]
    b = arr[1:2]
    a[0] = 1
    b[0] = 2
    out[0] = a[0]
    out[1] = b[0]


def test_case1_dynamic_slices_use_launch_length():
    lf, ptx = ptx_of(case1_dyn_slices, (T.int32[::1],))
    assert lf.uses_dynamic_shared
    ir = lf.llvm_ir
    # the slice length is clamped against the launch-time length, never a constant 0
    assert "%dynamic_smem_size" in ir


def case2_reshape(out):
    a = cuda.shared.array((32, 32), dtype=np.int32)
    b = a.reshape((64, 16))
    b[63, 15] = 7
    cuda.syncthreads()
    out[0] = a[31, 31]


def test_case2_reshape_shared():
    lf, ptx = ptx_of(case2_reshape, (T.int32[::1],))
    assert lf.static_shared_bytes == 32 * 32 * 4
    # [63, 15] of the (64, 16) view is [31, 31] of the original: NVVM forwards the 7 stored
    # through the view to the load through the original
    assert re.search(r"mov\.u32\s+%r\d+, 7;", ptx)
    assert "bar.sync" in ptx


def case2_tuple_dynamic(out):
    a = cuda.shared.array((0,), dtype=np.int32)
    out[0] = a.size


def case2_bad_dynamic(out):
    a = cuda.shared.array((0, 4), dtype=np.int32)
    out[0] = a[0, 0]


def test_case2_dynamic_tuple_shape():
    lf, ptx = ptx_of(case2_tuple_dynamic, (T.int64[::1],))
    assert lf.uses_dynamic_shared
    with pytest.raises(TypingError, match="must be 1-D") as ei:
        compile_to_llvm(case2_bad_dynamic, (T.int32[::1],))
    assert "test_lower_guide_examples.py" in str(ei.value)
    assert "shared.array((0, 4)" in str(ei.value)


GLOBAL_DTYPE = np.float64


def case3_arg_dtype(out, d):
    a = cuda.shared.array(0, dtype=d)
    a[0] = 3.14
    out[0] = a[0]


def case3_global_dtype(out):
    a = cuda.shared.array(0, dtype=GLOBAL_DTYPE)
    a[0] = 3.14
    out[0] = a[0]


def test_case3_dtype_must_be_constant():
    with pytest.raises(TypingError) as ei:
        compile_to_llvm(case3_arg_dtype, (T.float64[::1], T.int64))
    msg = str(ei.value)
    assert "dtype" in msg and "compile-time constant" in msg and "kernel argument" in msg
    assert "a = cuda.shared.array(0, dtype=d)" in msg
    lf, ptx = ptx_of(case3_global_dtype, (T.float64[::1],))
    assert "st.shared.f64" in ptx or "st.shared.u64" in ptx


def case4_sizes(out):
    a = cuda.shared.array(2, dtype=np.float32)
    b = cuda.shared.array((2, 3), dtype=np.float32)
    out[0] = a.size
    out[1] = b.size
    out[2] = b.shape[0]
    out[3] = b.shape[1]


def test_case4_sizes_are_constants():
    lf, ptx = ptx_of(case4_sizes, (T.int64[::1],))
    # sizes fold to constants: 2, 6, 2, 3 stored directly
    for v in ("2;", "6;", "3;"):
        assert v in ptx


def case5_big(out):
    a = cuda.shared.array((2, 7000), dtype=np.float32)
    out[0] = a[0, 0]


def case5_ok(out):
    a = cuda.shared.array((2, 6000), dtype=np.float32)
    out[0] = a[0, 0]


def case5_big_1d(out):
    a = cuda.shared.array(14000, dtype=np.float32)
    out[0] = a[0]


def test_case5_static_shared_limit():
    for fn in (case5_big, case5_big_1d):
        with pytest.raises(CompileError) as ei:
            compile_to_llvm(fn, (T.float32[::1],))
        msg = str(ei.value)
        assert "shared memory" in msg and "56000" in msg and "49152" in msg
    lf, ptx = ptx_of(case5_ok, (T.float32[::1],))
    assert lf.static_shared_bytes == 48000


case6_records, rec_outer = records_in_shared, REC_OUTER


def test_case6_structured_shared():
    lf, ptx = ptx_of(case6_records, (T.float64[::1],))
    assert lf.static_shared_bytes == 2 * rec_outer.itemsize
    assert "st.shared" in ptx


N = 20
N32 = np.int32(20)


def case8_local(x, out):
    row = cuda.local.array(N, cuda.float32)
    for i in range(N):
        row[i] = x[i]
    for i in range(N):
        out[i] = row[i]


def case8_local_np(x, out):
    row = cuda.local.array(N32, cuda.float32)
    for i in range(N):
        row[i] = x[i]
    out[0] = row[3]


def test_case8_local_sizes():
    for fn in (case8_local, case8_local_np):                     # NumPy ints accepted
        lf, ptx = ptx_of(fn, (T.float32[::1], T.float32[::1]))
        assert "alloca [20 x float]" in lf.llvm_ir               # 20 float32 per thread
    x = np.arange(N, dtype=np.float32)
    out = np.zeros(N, np.float32)
    cuda.jit(case8_local)[1, 1](x, out)
    assert out.tolist() == x.tolist()
    out = np.zeros(N, np.float32)
    cuda.jit(case8_local_np)[1, 1](x, out)
    assert out[0] == 3.0


def case9_tuple(out):
    a = cuda.local.array((5,), cuda.int32)
    for i in range(5):
        a[i] = i
    out[0] = len(a)
    out[1] = a[4]


def case9_zero_d(out, v):
    a = cuda.local.array((), cuda.int32)
    a[()] = v
    out[0] = a[()]


def test_case9_local_shapes():
    ptx_of(case9_tuple, (T.int64[::1],))
    lf, ptx = ptx_of(case9_zero_d, (T.int32[::1], T.int32))
    assert "st.global.u32" in ptx or "st.global.b32" in ptx


def case10_a(out):
    a = cuda.local.array(4, cuda.float32)
    s = cuda.shared.array(4, cuda.float32)
    a[0] = 1.5
    s[0] = a[0]
    out[0] = s[0]


def case10_b(out):
    a = cuda.local.array(4, np.float32)
    s = cuda.shared.array(4, np.float32)
    a[0] = 1.5
    s[0] = a[0]
    out[0] = s[0]


def case10_c(out):
    a = cuda.local.array(4, "float32")
    s = cuda.shared.array(4, "float32")
    a[0] = 1.5
    s[0] = a[0]
    out[0] = s[0]


def case10_bad(out):
    a = cuda.local.array(4, "int33")
    out[0] = a[0]


def test_case10_dtype_spellings():
    irs = []
    for fn in (case10_a, case10_b, case10_c):
        lf, ptx = ptx_of(fn, (T.float32[::1],))
        irs.append(ptx.split(".entry")[1].replace(lf.name, "K"))
    assert irs[0] == irs[1] == irs[2]
    with pytest.raises(TypingError, match="int33") as ei:
        compile_to_llvm(case10_bad, (T.float32[::1],))
    assert 'a = cuda.local.array(4, "int33")' in str(ei.value)


big_rec = np.zeros(1, dtype=np.dtype([("f", np.float32, (12456,))]))


def case11_big_record(out, i):
    c = cuda.const.array_like(big_rec)
    out[0] = c[0].f[i]


def test_case11_record_constant_alignment():
    lf, ptx = ptx_of(case11_big_record, (T.float32[::1], T.int64))
    assert lf.const_bytes == 49824
    assert ".const .align 4 .b8" in ptx and "[49824]" in ptx


huge = np.zeros(16 << 20, dtype=np.int8)
k32 = np.arange(32 * 1024, dtype=np.int64).astype(np.int8)


def case12_huge(out):
    c = cuda.const.array_like(huge)
    out[0] = c[0]


def case12_ok(out, i):
    c = cuda.const.array_like(k32)
    out[0] = c[i]


def test_case12_constant_limit():
    with pytest.raises(CompileError) as ei:
        compile_to_llvm(case12_huge, (T.int8[::1],))
    msg = str(ei.value)
    assert "constant memory" in msg and "65536" in msg and str(16 << 20) in msg
    lf, ptx = ptx_of(case12_ok, (T.int8[::1], T.int64))
    assert lf.const_bytes == 32 * 1024
    assert "[32768]" in ptx


@pytest.mark.compile
def test_packed_record_fields_use_guaranteed_alignment():
    """A float64 at offset 20 of a packed 28-byte record (case 6) must not be loaded or stored
    as 8-byte aligned: on the GPU that is CUDA_ERROR_MISALIGNED_ADDRESS."""
    import numpy as np
    from cujit import types as T
    from cujit.nvvm.lowering import compile_to_llvm

    inner = np.dtype([("x", np.float32), ("y", np.float32)])
    outer = np.dtype([("a", np.float32, (3,)), ("n", inner), ("v", np.float64)])
    assert outer.fields["v"][1] == 20 and outer.itemsize == 28

    def k(out):
        s = cuda.shared.array(2, dtype=outer)
        s[1]["v"] = 45.0
        out[0] = s[1].v

    ir = compile_to_llvm(k, (T.float64[:],)).llvm_ir
    lines = [ln.strip() for ln in ir.splitlines()]
    # the field store and the field load; only the store to ``out`` may claim 8 bytes
    assert any(ln.startswith("store double") and ln.endswith("align 4") for ln in lines), ir
    assert any("load double" in ln and ln.endswith("align 4") for ln in lines), ir
    assert sum(ln.startswith(("store double", "%")) and "double" in ln and ln.endswith("align 8")
               and ("load" in ln or "store" in ln) for ln in lines) == 1, ir
