"""Tensor cores from kernels (``cujit.wmma``, a cujit extension beyond numba.cuda): tiles
loaded from global and shared memory, multiplied and accumulated, stored, in float16,
bfloat16 and tf32 with float32 accumulation; the typing errors; the warp-wide checks of the
simulator; on a GPU the values agree with the simulator's model within the documented
tolerance."""
import numpy as np
import pytest

import cujit as cuda
from cujit import wmma as W
from cujit import types as T
from cujit.simulator.errors import WarpDivergenceError


def model(a, b, c=None):
    """The simulator's model: exact products of the rounded inputs, summed exactly (float64)
    and rounded to float32 once per mma."""
    r = a.astype(np.float64) @ b.astype(np.float64)
    if c is not None:
        r = r + c.astype(np.float64)
    return r.astype(np.float32)


def tolerance(a, b, c=None):
    """How far the hardware may be from :func:`model`: 2**-20 of ``sum(|a*b|) + |c|`` per
    16-deep (8 for tf32) mma step (docs/kernel-language.md, "Tensor cores")."""
    steps = a.shape[1] // 16 + 1
    mag = np.abs(a.astype(np.float64)) @ np.abs(b.astype(np.float64))
    if c is not None:
        mag = mag + np.abs(c)
    return steps * 2.0 ** -20 * mag


def agrees(C, want, a, b, c=None):
    """``C`` is the model's value: bit for bit on the simulator (it is the model), within
    :func:`tolerance` on a GPU, whose tensor cores add in their own order and precision."""
    if cuda.get_current_device().name.startswith("cujit simulated"):
        np.testing.assert_array_equal(C, want)
    else:
        assert np.all(np.abs(C.astype(np.float64) - want) <= tolerance(a, b, c)), \
            np.max(np.abs(C.astype(np.float64) - want))


@cuda.jit
def gemm_f16(A, B, C, K, N):
    warp = (cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x) // 32
    i = (warp // (N // 16)) * 16
    j = (warp % (N // 16)) * 16
    a = cuda.wmma.fragment("matrix_a", 16, 16, 16, np.float16, "row_major")
    b = cuda.wmma.fragment("matrix_b", 16, 16, 16, np.float16, "row_major")
    acc = cuda.wmma.fragment("accumulator", 16, 16, 16, np.float32)
    cuda.wmma.fill_fragment(acc, 0.0)
    for k in range(0, K, 16):
        cuda.wmma.load_matrix_sync(a, A[i:, k:], K)
        cuda.wmma.load_matrix_sync(b, B[k:, j:], N)
        cuda.wmma.mma_sync(acc, a, b, acc)
    cuda.wmma.store_matrix_sync(C[i:, j:], acc, N, "row_major")


def _inputs(m, n, k, seed=0):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal((m, k)).astype(np.float16),
            rng.standard_normal((k, n)).astype(np.float16))


def test_f16_gemm_of_global_tiles_is_the_exact_sum_rounded_per_step():
    A, B = _inputs(32, 48, 32)
    C = np.zeros((32, 48), np.float32)
    gemm_f16[2, 96](A, B, C, 32, 48)
    # two k-steps: the first mma rounds its sum to float32, the second adds to it
    step1 = model(A[:, :16], B[:16])
    agrees(C, model(A[:, 16:], B[16:], step1), A, B)
    assert np.all(np.abs(C - A.astype(np.float32) @ B.astype(np.float32))
                  <= tolerance(A, B))


@cuda.jit
def shared_tiles(A, B, C):
    sa = cuda.shared.array((16, 16), np.float16)
    sb = cuda.shared.array((16, 16), np.float16)
    t = cuda.threadIdx.x
    for e in range(t, 256, 32):
        sa[e // 16, e % 16] = A[e // 16, e % 16]
        sb[e // 16, e % 16] = B[e // 16, e % 16]
    cuda.syncthreads()
    a = cuda.wmma.fragment("matrix_a", 16, 16, 16, np.float16, "row_major")
    b = cuda.wmma.fragment("matrix_b", 16, 16, 16, np.float16, "col_major")
    acc = cuda.wmma.fragment("accumulator", 16, 16, 16, np.float32)
    cuda.wmma.fill_fragment(acc, 0.0)
    cuda.wmma.load_matrix_sync(a, sa, 16)
    cuda.wmma.load_matrix_sync(b, sb, 16)       # col-major: B's rows are b's columns
    cuda.wmma.mma_sync(acc, a, b, acc)
    cuda.wmma.store_matrix_sync(C, acc, 16, "col_major")


def test_shared_memory_tiles_and_col_major_layouts():
    A, B = _inputs(16, 16, 16, seed=1)
    C = np.zeros((16, 16), np.float32)
    shared_tiles[1, 32](A, B, C)
    # b read col-major is B transposed; the col-major store transposes the result
    agrees(C, model(A, B.T).T, A, B.T)


@cuda.jit
def accumulate_into_c(A, B, C):
    a = W.fragment("matrix_a", 16, 16, 16, np.float16, "row_major")
    b = W.fragment("matrix_b", 16, 16, 16, np.float16, "row_major")
    acc = W.fragment("accumulator", 16, 16, 16, np.float32)
    W.load_matrix_sync(acc, C, 16, "row_major")
    W.load_matrix_sync(a, A, 16)
    W.load_matrix_sync(b, B, 16)
    W.mma_sync(acc, a, b, acc)
    W.store_matrix_sync(C, acc, 16, "row_major")


def test_mma_accumulates_into_the_loaded_c_tile():
    A, B = _inputs(16, 16, 16, seed=2)
    C0 = np.random.default_rng(3).standard_normal((16, 16)).astype(np.float32)
    C = C0.copy()
    accumulate_into_c[1, 32](A, B, C)
    agrees(C, model(A, B, C0), A, B, C0)


@cuda.jit
def bf16_tile(A, B, C):
    a = W.fragment("matrix_a", 16, 16, 16, W.bfloat16, "row_major")
    b = W.fragment("matrix_b", 16, 16, 16, W.bfloat16, "row_major")
    acc = W.fragment("accumulator", 16, 16, 16, np.float32)
    W.fill_fragment(acc, 0.0)
    W.load_matrix_sync(a, A, 16)
    W.load_matrix_sync(b, B, 16)
    W.mma_sync(acc, a, b, acc)
    W.store_matrix_sync(C, acc, 16, "row_major")


def test_bf16_tiles_from_uint16_bits():
    rng = np.random.default_rng(4)
    A = W.to_bfloat16(rng.standard_normal((16, 16)))
    B = W.to_bfloat16(rng.standard_normal((16, 16)))
    C = np.zeros((16, 16), np.float32)
    bf16_tile[1, 32](A, B, C)
    a, b = W.from_bfloat16(A), W.from_bfloat16(B)
    agrees(C, model(a, b), a, b)


@cuda.jit
def tf32_tile(A, B, C):
    a = W.fragment("matrix_a", 16, 16, 8, W.tf32, "row_major")
    b = W.fragment("matrix_b", 16, 16, 8, W.tf32, "row_major")
    acc = W.fragment("accumulator", 16, 16, 8, np.float32)
    W.fill_fragment(acc, 0.0)
    W.load_matrix_sync(a, A, 8)
    W.load_matrix_sync(b, B, 16)
    W.mma_sync(acc, a, b, acc)
    W.store_matrix_sync(C, acc, 16, "row_major")


def test_tf32_tiles_drop_the_low_mantissa_bits():
    rng = np.random.default_rng(5)
    A = rng.standard_normal((16, 8)).astype(np.float32)
    B = rng.standard_normal((8, 16)).astype(np.float32)
    C = np.zeros((16, 16), np.float32)
    tf32_tile[1, 32](A, B, C)
    a, b = W.round_to_tf32(A), W.round_to_tf32(B)
    agrees(C, model(a, b), a, b)
    assert not np.array_equal(C, model(A, B))      # the rounding is visible


@cuda.jit
def filled(C, av, bv):
    a = W.fragment("matrix_a", 16, 16, 16, np.float16, "row_major")
    b = W.fragment("matrix_b", 16, 16, 16, np.float16, "col_major")
    acc = W.fragment("accumulator", 16, 16, 16, np.float32)
    W.fill_fragment(a, av)
    W.fill_fragment(b, bv)
    W.fill_fragment(acc, 1.0)
    W.mma_sync(acc, a, b, acc)
    W.store_matrix_sync(C, acc, 16, "row_major")


def test_fill_fragment_rounds_to_the_precision():
    C = np.zeros((16, 16), np.float32)
    filled[1, 32](C, 1.0 / 3.0, 2.0)
    third = float(np.float16(1.0 / 3.0))
    np.testing.assert_array_equal(C, np.full((16, 16), np.float32(16 * third * 2 + 1)))


# ---- host helpers ---------------------------------------------------------------------------
def test_bfloat16_conversion_rounds_to_nearest_even():
    x = np.array([1.0, 1 + 2.0 ** -8, 1 + 3 * 2.0 ** -8, -2.5, np.inf, np.nan], np.float32)
    bits = W.to_bfloat16(x)
    assert bits.dtype == np.uint16
    back = W.from_bfloat16(bits)
    np.testing.assert_array_equal(back[:5], [1.0, 1.0, 1 + 2 * 2.0 ** -7, -2.5, np.inf])
    assert np.isnan(back[5])


def test_round_to_tf32_keeps_ten_mantissa_bits():
    x = np.array([1 + 2.0 ** -10 + 2.0 ** -11, 3.0], np.float32)
    np.testing.assert_array_equal(W.round_to_tf32(x), [1 + 2.0 ** -10, 3.0])


def test_precision_of_names_and_refusals():
    assert W.precision_of(np.float16) == "float16"
    assert W.precision_of(cuda.float32) == "float32"
    assert W.precision_of("bfloat16") == "bfloat16"
    with pytest.raises(ValueError, match="float64"):
        W.precision_of(np.float64)


def test_fragment_type_shape_and_registers():
    f = T.Fragment("matrix_a", 16, 16, 16, "float16", "row_major")
    assert f is T.Fragment("matrix_a", 16, 16, 16, "float16", "row_major")
    assert (f.rows, f.cols, f.registers) == (16, 16, (8, "b32"))
    assert T.Fragment("matrix_b", 16, 16, 8, "tf32", "col_major").rows == 8
    assert T.Fragment("accumulator", 16, 16, 16, "float32").registers == (8, "f32")
    with pytest.raises(ValueError, match="m16n16k8 is not offered"):
        T.Fragment("matrix_a", 16, 16, 8, "float16", "row_major")
    with pytest.raises(ValueError, match="role"):
        T.Fragment("matrix_c", 16, 16, 16, "float16", "row_major")


# ---- typing errors ----------------------------------------------------------------------------
def _typing_error(body, sig):
    with pytest.raises(cuda.TypingError) as ei:
        cuda.jit(sig)(body)
    return str(ei.value)


def test_fragment_with_a_shape_the_hardware_lacks_is_a_typing_error():
    def k(A):
        W.fragment("matrix_a", 16, 16, 8, np.float16, "row_major")
    assert "wmma.fragment()" in _typing_error(k, "void(float16[:])")


def test_fragment_dtype_and_layout_errors():
    def k1(A):
        W.fragment("matrix_a", 16, 16, 16, np.float64, "row_major")
    assert "wmma.fragment()" in _typing_error(k1, "void(float16[:])")

    def k2(A):
        W.fragment("matrix_a", 16, 16, 16, np.float16, "diagonal")
    assert "layout" in _typing_error(k2, "void(float16[:])")

    def k3(A):
        W.fragment("accumulator", 16, 16, 16, np.float32, "row_major")
    assert "takes no layout" in _typing_error(k3, "void(float16[:])")


def test_load_of_the_wrong_array_dtype_names_the_call():
    def k(A):
        a = W.fragment("matrix_a", 16, 16, 16, np.float16, "row_major")
        W.load_matrix_sync(a, A, 16)
    msg = _typing_error(k, "void(float32[:])")
    assert "wmma.load_matrix_sync()" in msg and "float16" in msg


def test_accumulator_load_needs_a_layout():
    def k(C):
        acc = W.fragment("accumulator", 16, 16, 16, np.float32)
        W.load_matrix_sync(acc, C, 16)
    assert "needs the layout" in _typing_error(k, "void(float32[:])")


def test_mma_of_mixed_precisions_or_roles_is_refused():
    def k1(C):
        a = W.fragment("matrix_a", 16, 16, 16, np.float16, "row_major")
        b = W.fragment("matrix_b", 16, 16, 16, W.bfloat16, "row_major")
        acc = W.fragment("accumulator", 16, 16, 16, np.float32)
        W.mma_sync(acc, a, b, acc)
    assert "one precision" in _typing_error(k1, "void(float32[:])")

    def k2(C):
        a = W.fragment("matrix_a", 16, 16, 16, np.float16, "row_major")
        acc = W.fragment("accumulator", 16, 16, 16, np.float32)
        W.mma_sync(acc, a, a, acc)
    assert "matrix_b fragment" in _typing_error(k2, "void(float32[:])")


def test_store_of_an_input_fragment_or_to_a_non_array_is_refused():
    def k1(C):
        a = W.fragment("matrix_a", 16, 16, 16, np.float16, "row_major")
        W.store_matrix_sync(C, a, 16, "row_major")
    assert "wmma.store_matrix_sync()" in _typing_error(k1, "void(float32[:])")

    def k2(x):
        acc = W.fragment("accumulator", 16, 16, 16, np.float32)
        W.store_matrix_sync(x, acc, 16, "row_major")
    assert "array" in _typing_error(k2, "void(float32)")


def test_layout_must_be_a_constant():
    def k(C, lay):
        acc = W.fragment("accumulator", 16, 16, 16, np.float32)
        W.store_matrix_sync(C, acc, 16, lay)
    assert "constant" in _typing_error(k, "void(float32[:], int32)")


# ---- warp-wide checks (simulator) -------------------------------------------------------------
@cuda.jit
def one_tile(C):
    acc = W.fragment("accumulator", 16, 16, 16, np.float32)
    W.fill_fragment(acc, 2.0)
    W.store_matrix_sync(C, acc, 16, "row_major")


@pytest.mark.skipif(cuda.is_available() and not cuda.config.ENABLE_CUDASIM,
                    reason="simulator checks")
def test_a_partial_warp_is_a_clear_error():
    C = np.zeros((16, 16), np.float32)
    with pytest.raises(WarpDivergenceError, match="multiple of 32"):
        one_tile[1, 16](C)


@cuda.jit
def half_the_lanes(C):
    if cuda.threadIdx.x >= 16:
        return
    acc = W.fragment("accumulator", 16, 16, 16, np.float32)
    W.fill_fragment(acc, 2.0)
    W.store_matrix_sync(C, acc, 16, "row_major")


@pytest.mark.skipif(cuda.is_available() and not cuda.config.ENABLE_CUDASIM,
                    reason="simulator checks")
def test_exited_lanes_are_a_clear_error():
    C = np.zeros((16, 16), np.float32)
    with pytest.raises(WarpDivergenceError, match="warp-wide.*exited"):
        half_the_lanes[1, 32](C)


@cuda.jit
def lane_dependent_tile(C):
    acc = W.fragment("accumulator", 16, 16, 16, np.float32)
    W.fill_fragment(acc, 1.0)
    W.store_matrix_sync(C[cuda.threadIdx.x // 16 * 16:], acc, 16, "row_major")


@pytest.mark.skipif(cuda.is_available() and not cuda.config.ENABLE_CUDASIM,
                    reason="simulator checks")
def test_lanes_passing_different_tiles_are_refused():
    C = np.zeros(512, np.float32)
    with pytest.raises(WarpDivergenceError, match="different"):
        lane_dependent_tile[1, 32](C)


@cuda.jit
def load_at(A, C, off, ldm):
    a = W.fragment("matrix_a", 16, 16, 16, np.float16, "row_major")
    acc = W.fragment("accumulator", 16, 16, 16, np.float32)
    W.load_matrix_sync(a, A[off:], ldm)
    W.fill_fragment(acc, 0.0)
    W.store_matrix_sync(C, acc, 16, "row_major")


@pytest.mark.skipif(cuda.is_available() and not cuda.config.ENABLE_CUDASIM,
                    reason="simulator checks")
@pytest.mark.parametrize("off, ldm, err, what", [
    (0, 12, ValueError, "multiple of 8"),
    (1, 16, ValueError, "32-byte aligned"),
    (128, 16, IndexError, "out of bounds"),
])
def test_bad_ldm_alignment_and_bounds_are_errors(off, ldm, err, what):
    A = np.zeros(256, np.float16)
    C = np.zeros((16, 16), np.float32)
    with pytest.raises(err, match=what):
        load_at[1, 32](A, C, off, ldm)


# ---- compiled code ----------------------------------------------------------------------------
@pytest.mark.compile
@pytest.mark.parametrize("cc", [(8, 0), (9, 0)])
def test_ptx_has_the_tensor_core_instructions(cc):
    from cujit.dispatch.compile_api import compile_ptx
    from cujit.nvvm.linker import link_cubin, nvjitlink_available
    sigs = {gemm_f16: (T.float16[:, ::1], T.float16[:, ::1], T.float32[:, ::1], T.int64,
                       T.int64),
            bf16_tile: (T.uint16[:, ::1], T.uint16[:, ::1], T.float32[:, ::1]),
            tf32_tile: (T.float32[:, ::1], T.float32[:, ::1], T.float32[:, ::1])}
    want = {gemm_f16: "wmma.mma.sync.aligned.row.row.m16n16k16.f32.f32",
            bf16_tile: "wmma.mma.sync.aligned.row.row.m16n16k16.f32.bf16.bf16.f32",
            tf32_tile: "wmma.mma.sync.aligned.row.row.m16n16k8.f32.tf32.tf32.f32"}
    for k, sig in sigs.items():
        ptx, _ = compile_ptx(k.py_func, sig, cc=cc)
        assert want[k] in ptx
        assert "wmma.load.a.sync.aligned.row" in ptx
        assert "wmma.store.d.sync.aligned.row" in ptx
        if nvjitlink_available():
            assert len(link_cubin(ptx, cc)) > 0


# ---- GPU ---------------------------------------------------------------------------------------
@pytest.mark.gpu
def test_gpu_f16_gemm_agrees_with_the_model():
    A, B = _inputs(64, 64, 256, seed=6)
    C = np.zeros((64, 64), np.float32)
    gemm_f16[4, 128](A, B, C, 256, 64)
    ref = A.astype(np.float64) @ B.astype(np.float64)
    assert np.all(np.abs(C - ref) <= tolerance(A, B))


@pytest.mark.gpu
def test_gpu_bf16_and_tf32_tiles_agree_with_the_model():
    rng = np.random.default_rng(7)
    A = W.to_bfloat16(rng.standard_normal((16, 16)))
    B = W.to_bfloat16(rng.standard_normal((16, 16)))
    C = np.zeros((16, 16), np.float32)
    bf16_tile[1, 32](A, B, C)
    fa, fb = W.from_bfloat16(A), W.from_bfloat16(B)
    assert np.all(np.abs(C - model(fa, fb)) <= tolerance(fa, fb))
    A = rng.standard_normal((16, 8)).astype(np.float32)
    B = rng.standard_normal((8, 16)).astype(np.float32)
    C = np.zeros((16, 16), np.float32)
    tf32_tile[1, 32](A, B, C)
    ta, tb = W.round_to_tf32(A), W.round_to_tf32(B)
    # the hardware may round rather than truncate the tf32 inputs: one more tf32 ulp each
    assert np.all(np.abs(C - model(ta, tb)) <= tolerance(ta, tb) +
                  2.0 ** -9 * (np.abs(ta) @ np.abs(tb)))


@pytest.mark.compile
def test_shared_tiles_of_a_wmma_kernel_are_32_byte_aligned():
    from cujit.dispatch.compile_api import compile_ptx
    ptx, _ = compile_ptx(shared_tiles.py_func, (T.float16[:, ::1], T.float16[:, ::1],
                                                T.float32[:, ::1]), cc=(9, 0))
    shared = [l for l in ptx.splitlines() if l.strip().startswith(".shared")]
    assert len(shared) == 2 and all(".align 32" in l for l in shared)


@pytest.mark.compile
def test_loads_of_shared_tiles_use_the_shared_form_and_global_ones_the_generic():
    # the .shared form becomes ldmatrix in SASS; the generic one a load per register
    from cujit.dispatch.compile_api import compile_ptx
    f16 = T.float16[:, ::1]
    ptx, _ = compile_ptx(shared_tiles.py_func, (f16, f16, T.float32[:, ::1]), cc=(9, 0))
    loads = [l.split()[0] for l in ptx.splitlines() if l.strip().startswith("wmma.load")]
    assert loads == ["wmma.load.a.sync.aligned.row.m16n16k16.shared.f16",
                     "wmma.load.b.sync.aligned.col.m16n16k16.shared.f16"]
    assert "isspacep" not in ptx
    ptx, _ = compile_ptx(gemm_f16.py_func, (f16, f16, T.float32[:, ::1], T.int64, T.int64),
                         cc=(9, 0))
    loads = {l.split()[0] for l in ptx.splitlines() if l.strip().startswith("wmma.load")}
    assert loads == {"wmma.load.a.sync.aligned.row.m16n16k16.f16",
                     "wmma.load.b.sync.aligned.row.m16n16k16.f16"}
    assert "isspacep" not in ptx


@cuda.jit
def tile_from_either(A, B, C, from_shared):
    sa = cuda.shared.array((16, 16), np.float16)
    t = cuda.threadIdx.x
    for e in range(t, 256, 32):
        sa[e // 16, e % 16] = A[e // 16, e % 16] * np.float16(2)
    cuda.syncthreads()
    src = sa if from_shared else A
    a = W.fragment("matrix_a", 16, 16, 16, np.float16, "row_major")
    b = W.fragment("matrix_b", 16, 16, 16, np.float16, "row_major")
    acc = W.fragment("accumulator", 16, 16, 16, np.float32)
    W.fill_fragment(acc, 0.0)
    W.load_matrix_sync(a, src, 16)
    W.load_matrix_sync(b, B, 16)
    W.mma_sync(acc, a, b, acc)
    W.store_matrix_sync(C, acc, 16, "row_major")


@pytest.mark.compile
def test_a_tile_of_either_memory_tests_the_address_space_at_run_time():
    from cujit.dispatch.compile_api import compile_ptx
    f16 = T.float16[:, ::1]
    ptx, _ = compile_ptx(tile_from_either.py_func, (f16, f16, T.float32[:, ::1], T.boolean),
                         cc=(9, 0))
    loads = [l.split()[0] for l in ptx.splitlines() if l.strip().startswith("wmma.load.a")]
    assert sorted(loads) == ["wmma.load.a.sync.aligned.row.m16n16k16.f16",
                             "wmma.load.a.sync.aligned.row.m16n16k16.shared.f16"]
    assert "isspacep.shared" in ptx


@pytest.mark.parametrize("from_shared, scale", [(True, 2), (False, 1)])
def test_a_tile_of_either_memory_loads_from_the_one_chosen(from_shared, scale):
    A, B = _inputs(16, 16, 16, seed=8)
    C = np.zeros((16, 16), np.float32)
    tile_from_either[1, 32](A, B, C, from_shared)
    a = (A * np.float16(scale)).astype(np.float16)
    agrees(C, model(a, B), a, B)


def test_fragment_type_refuses_bad_precisions_and_layouts():
    with pytest.raises(ValueError, match="float16, bfloat16 or tf32"):
        T.Fragment("matrix_a", 16, 16, 16, "float32", "row_major")
    with pytest.raises(ValueError, match="needs a layout"):
        T.Fragment("matrix_b", 16, 16, 16, "float16")
    with pytest.raises(ValueError, match="float32 values"):
        T.Fragment("accumulator", 16, 16, 16, "float16")


def test_call_argument_errors_name_the_call():
    def many(C):
        acc = W.fragment("accumulator", 16, 16, 16, np.float32)
        W.fill_fragment(acc, 1.0, 2.0)
    assert "wmma.fill_fragment() takes at most 2" in _typing_error(many, "void(float32[:])")

    def unknown_kw(C):
        acc = W.fragment("accumulator", 16, 16, 16, np.float32)
        W.store_matrix_sync(C, acc, 16, order="row_major")
    assert "unexpected or repeated argument 'order'" in _typing_error(unknown_kw,
                                                                      "void(float32[:])")

    def missing(C):
        acc = W.fragment("accumulator", 16, 16, 16, np.float32)
        W.store_matrix_sync(C, acc, 16)
    assert "missing argument(s): layout" in _typing_error(missing, "void(float32[:])")

    def float_m(C):
        W.fragment("accumulator", 16.0, 16, 16, np.float32)
    assert "m must be an int" in _typing_error(float_m, "void(float32[:])")

    def complex_fill(C):
        acc = W.fragment("accumulator", 16, 16, 16, np.float32)
        W.fill_fragment(acc, 1j)
    assert "real number" in _typing_error(complex_fill, "void(float32[:])")

    def float_ldm(C):
        acc = W.fragment("accumulator", 16, 16, 16, np.float32)
        W.store_matrix_sync(C, acc, 16.0, "row_major")
    assert "ldm" in _typing_error(float_ldm, "void(float32[:])")


def test_input_layout_is_the_fragments_own():
    def k(A):
        a = W.fragment("matrix_a", 16, 16, 16, np.float16, "row_major")
        W.load_matrix_sync(a, A, 16, "col_major")
    assert "layout of a matrix_a fragment is its own" in _typing_error(k, "void(float16[:])")


def test_store_to_a_read_only_array_is_refused():
    def k(C):
        acc = W.fragment("accumulator", 16, 16, 16, np.float32)
        W.store_matrix_sync(C, acc, 16, "row_major")
    assert "read-only" in _typing_error(k, (T.Array(T.float32, 1, "C", True),))


def test_mma_of_fragments_of_different_shapes_is_refused():
    def k(C):
        a = W.fragment("matrix_a", 16, 16, 16, np.float16, "row_major")
        b = W.fragment("matrix_b", 16, 16, 16, np.float16, "row_major")
        acc = W.fragment("accumulator", 16, 16, 8, np.float32)
        W.mma_sync(acc, a, b, acc)
    assert "different shapes" in _typing_error(k, "void(float32[:])")


# the simulator's own checks, for kernels it runs untyped (CUJIT_SIM_TYPED=0)
class _Lane:
    laneid = 0


@pytest.mark.parametrize("op, args, err, what", [
    ("fill", (np.zeros(3), 1.0), TypeError, "fragment made by wmma.fragment"),
    ("load", (None, np.zeros(256, np.float16), 16, None), TypeError, "made by wmma.fragment"),
    ("load", ("a", [0.0] * 256, 16, None), TypeError, "1-d or 2-d array"),
    ("load", ("a", np.zeros(256, np.float32), 16, None), TypeError, "float16 array"),
    ("load", ("a", np.zeros(256, np.float16), 16.0, None), TypeError, "ldm must be an integer"),
    ("load", ("a", np.zeros(512, np.float16)[::2], 16, None), ValueError, "contiguous"),
    ("load", ("a", np.zeros(256, np.float16), 16, "col_major"), ValueError, "its own"),
    ("load", ("c", np.zeros(256, np.float32), 16, None), ValueError, "needs layout"),
    ("store", (np.zeros(256, np.float32), "c", 16, "diag"), ValueError, "layout must be"),
    ("mma", ("c", "a", "t", "c"), ValueError, "different shapes or input precisions"),
])
def test_simulator_refuses_bad_wmma_arguments(op, args, err, what):
    from cujit.simulator.wmma_sim import wmma_call
    frags = {"a": W.FragmentValue(T.Fragment("matrix_a", 16, 16, 16, "float16", "row_major")),
             "c": W.FragmentValue(T.Fragment("accumulator", 16, 16, 16, "float32")),
             "t": W.FragmentValue(T.Fragment("matrix_b", 16, 16, 8, "tf32", "row_major"))}
    args = tuple(frags[a] if isinstance(a, str) and a in frags else a for a in args)
    with pytest.raises(err, match=what):
        wmma_call(_Lane(), op, args)


@cuda.jit
def handoff(C, sync):
    s = cuda.shared.array((16, 16), np.float32)
    acc = W.fragment("accumulator", 16, 16, 16, np.float32)
    if cuda.threadIdx.x < 32:
        W.fill_fragment(acc, 3.0)
        W.store_matrix_sync(s, acc, 16, "row_major")
    if sync:
        cuda.syncthreads()
    if cuda.threadIdx.x >= 32:
        W.load_matrix_sync(acc, s, 16, "row_major")
        W.store_matrix_sync(C, acc, 16, "row_major")


@pytest.mark.skipif(cuda.is_available() and not cuda.config.ENABLE_CUDASIM,
                    reason="simulator checks")
def test_race_checks_see_each_lanes_tile_accesses():
    from cujit.simulator.errors import DataRaceError
    C = np.zeros((16, 16), np.float32)
    handoff[1, 64](C, True)                  # warp 0 stores, barrier, warp 1 loads
    np.testing.assert_array_equal(C, np.full((16, 16), 3.0, np.float32))
    with pytest.raises(DataRaceError):
        handoff[1, 64](C, False)


@cuda.jit(device=True)
def _mma_step(acc, a, b, A, B):
    W.load_matrix_sync(a, A, 16)
    W.load_matrix_sync(b, B, 16)
    W.mma_sync(acc, a, b, acc)


@cuda.jit
def through_device_function(A, B, C):
    a = W.fragment("matrix_a", 16, 16, 16, np.float16, "row_major")
    b = W.fragment("matrix_b", 16, 16, 16, np.float16, "row_major")
    acc = W.fragment("accumulator", 16, 16, 16, np.float32)
    W.fill_fragment(acc, 0.0)
    _mma_step(acc, a, b, A, B)         # updates the caller's fragments in place
    _mma_step(acc, a, b, A, B)
    W.store_matrix_sync(C, acc, 16, "row_major")


def test_device_functions_update_the_callers_fragments():
    A, B = _inputs(16, 16, 16, seed=8)
    C = np.zeros((16, 16), np.float32)
    through_device_function[1, 32](A, B, C)
    once = model(A, B)
    agrees(C, model(A, B, once), np.hstack([A, A]), np.vstack([B, B]))


@pytest.mark.compile
def test_fragments_passed_to_device_functions_stay_in_registers():
    from cujit.dispatch.compile_api import compile_ptx
    ptx, _ = compile_ptx(through_device_function.py_func,
                         (T.float16[:, ::1], T.float16[:, ::1], T.float32[:, ::1]), cc=(9, 0))
    assert ptx.count("wmma.mma.sync") == 2 and "st.local" not in ptx


# ---- tiles by offset (load_matrix_sync's offset=) -------------------------------------------
@cuda.jit
def tiles_by_offset(A, B, C, kofs):
    """C = A[:, 16:32] @ B[16:32, :] from a 1-d shared copy of A (rows of 32) and B (rows of
    16), the tiles named by offset= into the shared buffer rather than by views."""
    s = cuda.shared.array(1024, np.float16)
    lane = cuda.threadIdx.x
    for i in range(lane, 512, 32):
        s[i] = A[i // 32, i % 32]
        s[512 + i] = B[i // 16, i % 16]
    cuda.syncwarp()
    a = W.fragment("matrix_a", 16, 16, 16, np.float16, "row_major")
    b = W.fragment("matrix_b", 16, 16, 16, np.float16, "row_major")
    acc = W.fragment("accumulator", 16, 16, 16, np.float32)
    W.fill_fragment(acc, 0.0)
    W.load_matrix_sync(a, s, 32, offset=kofs)
    W.load_matrix_sync(b, s, 16, "row_major", 512 + kofs * 16)
    W.mma_sync(acc, a, b, acc)
    W.store_matrix_sync(C, acc, 16, "row_major")


def test_offset_names_the_tiles_top_left_element():
    rng = np.random.default_rng(9)
    A = rng.standard_normal((16, 32)).astype(np.float16)
    B = rng.standard_normal((32, 16)).astype(np.float16)
    C = np.zeros((16, 16), np.float32)
    tiles_by_offset[1, 32](A, B, C, 16)
    agrees(C, model(A[:, 16:], B[16:]), A[:, 16:], B[16:])


@pytest.mark.skipif(cuda.is_available() and not cuda.config.ENABLE_CUDASIM,
                    reason="simulator checks")
@pytest.mark.parametrize("kofs, err, what", [
    (-16, IndexError, "offset must be >= 0"),
    (8, ValueError, "32-byte aligned"),
    (32, IndexError, "out of bounds"),
])
def test_a_negative_misaligned_or_outside_offset_is_an_error(kofs, err, what):
    A = np.zeros((16, 32), np.float16)
    B = np.zeros((32, 16), np.float16)
    with pytest.raises(err, match=what):
        tiles_by_offset[1, 32](A, B, np.zeros((16, 16), np.float32), kofs)


def test_offset_must_be_an_integer():
    def k(A, C):
        a = W.fragment("matrix_a", 16, 16, 16, np.float16, "row_major")
        W.load_matrix_sync(a, A, 16, offset=1.5)
    assert "offset (elements from src's first to the tile's top-left) must be an integer" in \
        _typing_error(k, "void(float16[:], float32[:])")


@pytest.mark.compile
def test_tiles_by_offset_load_from_shared_without_clamping_code():
    from cujit.dispatch.compile_api import compile_ptx
    f16 = T.float16[:, ::1]
    ptx, _ = compile_ptx(tiles_by_offset.py_func, (f16, f16, T.float32[:, ::1], T.int64),
                         cc=(9, 0))
    loads = [l.split()[0] for l in ptx.splitlines() if l.strip().startswith("wmma.load")]
    assert loads == ["wmma.load.a.sync.aligned.row.m16n16k16.shared.f16",
                     "wmma.load.b.sync.aligned.row.m16n16k16.shared.f16"]
    assert "selp" not in ptx[ptx.index("wmma.load.a"):ptx.index("wmma.mma")]


@pytest.mark.gpu
def test_gpu_tiles_by_offset_agree_with_the_model():
    rng = np.random.default_rng(10)
    A = rng.standard_normal((16, 32)).astype(np.float16)
    B = rng.standard_normal((32, 16)).astype(np.float16)
    C = np.zeros((16, 16), np.float32)
    tiles_by_offset[1, 32](A, B, C, 16)
    assert np.all(np.abs(C - model(A[:, 16:], B[16:])) <= tolerance(A[:, 16:], B[16:]))


@cuda.jit
def transpose_in_place(A, B, C):
    a = cuda.wmma.fragment("matrix_a", 16, 16, 16, np.float16, "row_major")
    b = cuda.wmma.fragment("matrix_b", 16, 16, 16, np.float16, "row_major")
    acc = cuda.wmma.fragment("accumulator", 16, 16, 16, np.float32)
    cuda.wmma.load_matrix_sync(acc, C, 16, "row_major")
    cuda.wmma.load_matrix_sync(a, A, 16)
    cuda.wmma.load_matrix_sync(b, B, 16)
    cuda.wmma.mma_sync(acc, a, b, acc)
    cuda.wmma.store_matrix_sync(C, acc, 16, "col_major")


def test_a_tile_stored_over_the_one_it_was_loaded_from_is_no_race():
    # the loads of C's tile by some lanes and its stores by others are ordered: the warp
    # meets at each .sync.aligned call in between (the race checker counts them as syncwarp)
    A = np.ones((16, 16), np.float16)
    B = np.full((16, 16), 0.5, np.float16)
    C = np.arange(256, dtype=np.float32).reshape(16, 16)
    want = (C + 8).T.copy()
    transpose_in_place[1, 32](A, B, C)
    np.testing.assert_array_equal(C, want)
