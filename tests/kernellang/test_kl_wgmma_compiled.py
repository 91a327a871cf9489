"""Hopper warpgroup MMA compiled (``cujit.wgmma``, a cujit extension beyond numba.cuda): the
PTX it lowers to, the sm_90a target, the typing errors; on an H100/H200 the tensor cores
read every layout of ``cujit.wgmma``'s table (K-major and MN-major, each swizzle) as the
simulator does, and the example's wgmma GEMM agrees with NumPy."""
import os
import sys

import numpy as np
import pytest

import cujit as cuda
from cujit import TypingError
from cujit.frontend.errors import CompileError

G = cuda.wgmma


def offsets(rows, k, major, swizzle, lbo, sbo, itemsize=2):
    """Byte offset of each element (r, c) of a rows x k operand (r along M or N, c along K)
    in ``cujit.wgmma``'s layout table, swizzled: an int64 array (rows, k)."""
    r = np.arange(rows)[:, None]
    c = np.arange(k)[None, :]
    t = 16 // itemsize
    if major == "k":
        if swizzle:
            x = (r % 8) * swizzle + (r // 8) * sbo + c * itemsize
        else:
            x = (r % 8) * 16 + (r // 8) * sbo + (c % t) * itemsize + (c // t) * lbo
    else:
        if swizzle:
            w = swizzle // itemsize
            x = (r % w) * itemsize + (r // w) * lbo + (c % 8) * swizzle + (c // 8) * sbo
        else:
            x = (r % t) * itemsize + (r // t) * sbo + (c % 8) * 16 + (c // 8) * lbo
    if swizzle:
        x = x ^ (((x >> 7) & (swizzle // 16 - 1)) << 4)
    return x.astype(np.int64)


def image(x, major, swizzle, lbo, sbo, nbytes):
    """The shared-memory bytes (a float16 array of ``nbytes // 2``) holding operand ``x``
    (rows x k float16) in that layout; unused bytes NaN, so that a wrong layout shows."""
    out = np.full(nbytes // 2, np.nan, np.float16)
    off = offsets(*x.shape, major, swizzle, lbo, sbo)
    assert len(np.unique(off)) == off.size and off.max() < nbytes
    out[off // 2] = x
    return out


# (swizzle, LBO, SBO) of dense layouts: A (64 x 16) K-major / M-major, B (16 x 128) as its
# N x K transpose, K-major (col_major B) or N-major (row_major B).
K_MAJOR = {0: (128, 256), 32: (16, 256), 64: (16, 512), 128: (16, 1024)}
MN_MAJOR_A = {0: (1024, 128), 32: (256, 1024), 64: (512, 1024), 128: (1024, 1024)}
MN_MAJOR_B = {0: (2048, 128), 32: (256, 2048), 64: (512, 2048), 128: (1024, 2048)}
SPAN = 16384        # bytes of shared memory per operand image


def _kernel(swa, a_layout, swb, b_layout):
    """A kernel of one mma_async of a 64 x 16 A and 16 x 128 B read from ``img`` through
    descriptors of swizzles ``swa``/``swb`` (constants: a kernel per combination)."""
    @cuda.jit
    def k(img, C, la, ta, lb, tb):
        sm = cuda.shared.array(SPAN, np.float16)
        t = cuda.threadIdx.x
        for i in range(t, SPAN, 128):
            sm[i] = img[i]
        acc = G.accumulator(64, 128)
        G.fill_accumulator(acc, 1.0)
        G.fence_proxy_async()
        cuda.syncthreads()
        G.fence()
        da = G.make_descriptor(sm, 0, swa, la, ta)
        db = G.make_descriptor(sm, SPAN // 2, swb, lb, tb)
        G.mma_async(acc, da, db, np.float16, a_layout, b_layout)
        G.commit_group()
        G.wait_group(0)
        G.store_accumulator(C, acc)
    return k


def _case(a_layout, swa, b_layout, swb, seed=0):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((64, 16)).astype(np.float16)
    b = rng.standard_normal((16, 128)).astype(np.float16)
    la, ta = (K_MAJOR if a_layout == "row_major" else MN_MAJOR_A)[swa]
    lb, tb = (MN_MAJOR_B if b_layout == "row_major" else K_MAJOR)[swb]
    img = np.concatenate([
        image(a, "k" if a_layout == "row_major" else "mn", swa, la, ta, SPAN),
        image(b.T, "mn" if b_layout == "row_major" else "k", swb, lb, tb, SPAN)])
    C = np.zeros((64, 128), np.float32)
    _kernel(swa, a_layout, swb, b_layout)[1, 128](img, C, la, ta, lb, tb)
    want = a.astype(np.float64) @ b.astype(np.float64) + 1.0
    mag = np.abs(a.astype(np.float64)) @ np.abs(b.astype(np.float64)) + 1.0
    return C, want, mag


def _on_hopper():
    return cuda.is_available() and not cuda.config.ENABLE_CUDASIM and \
        tuple(cuda.get_current_device().compute_capability) == (9, 0)


hopper = pytest.mark.skipif("not _on_hopper()", reason="needs an sm_90 GPU (H100/H200)")


@pytest.mark.gpu
@hopper
@pytest.mark.parametrize("swizzle", [0, 32, 64, 128])
@pytest.mark.parametrize("a_layout, b_layout", [("row_major", "row_major"),
                                                ("row_major", "col_major"),
                                                ("col_major", "row_major"),
                                                ("col_major", "col_major")])
def test_gpu_reads_every_layout_of_the_table(a_layout, b_layout, swizzle):
    C, want, mag = _case(a_layout, swizzle, b_layout, swizzle)
    assert np.all(np.abs(C - want) <= 2 * 2.0 ** -20 * mag), np.max(np.abs(C - want))


@pytest.mark.gpu
@hopper
def test_gpu_example_wgmma_gemm_agrees_with_numpy():
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "examples"))
    try:
        import tensor_core_gemm as TG
    finally:
        sys.path.pop(0)
    rng = np.random.default_rng(1)
    n = 512
    a = rng.standard_normal((n, n)).astype(np.float16)
    b = rng.standard_normal((n, n)).astype(np.float16)
    c = cuda.device_array((n, n), np.float32)
    TG.launch(TG.wgmma_gemm, cuda.to_device(a), cuda.to_device(b), c)
    a32, b32 = a.astype(np.float64), b.astype(np.float64)
    err = np.max(np.abs(c.copy_to_host() - a32 @ b32) / (np.abs(a32) @ np.abs(b32)))
    assert err <= TG.tolerance(a, b), err


SIG = "void(float16[::1], float32[:, :], int32, int32, int32, int32)"


@pytest.mark.compile
def test_ptx_has_the_warpgroup_instructions_and_the_sm_90a_target():
    ptx, _ = cuda.compile_ptx(_kernel(128, "row_major", 128, "row_major"), SIG, cc=(9, 0))
    assert ".target sm_90a" in ptx
    for ins in ("wgmma.fence.sync.aligned;", "fence.proxy.async.shared::cta;",
                "wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16",
                "wgmma.commit_group.sync.aligned;", "wgmma.wait_group.sync.aligned 0;"):
        assert ins in ptx, ins
    assert ".shared .align 1024" in ptx        # the swizzle atoms are 1024-byte aligned
    # row_major B is transposed (MN-major): the last immediate is 1, A's is 0
    line = next(x for x in ptx.splitlines() if "wgmma.mma_async" in x)
    assert line.rstrip().rstrip("}").rstrip().rstrip(";").endswith("1, 1, 0, 1")


@pytest.mark.compile
def test_col_major_a_and_b_set_the_transpose_immediates():
    ptx, _ = cuda.compile_ptx(_kernel(64, "col_major", 32, "col_major"), SIG, cc=(9, 0))
    line = next(x for x in ptx.splitlines() if "wgmma.mma_async" in x)
    assert line.rstrip().rstrip("}").rstrip().rstrip(";").endswith("1, 1, 1, 0")


@pytest.mark.compile
def test_descriptor_swizzle_mode_bits():
    # 128-byte swizzle is mode 1 in bits 62-63: the constant 1 << 62 is or-ed in
    ptx, _ = cuda.compile_ptx(_kernel(128, "row_major", 0, "row_major"), SIG, cc=(9, 0))
    assert str(1 << 62) in ptx


@pytest.mark.compile
@pytest.mark.parametrize("cc", [(8, 0), (10, 0)])
def test_wgmma_for_another_architecture_is_a_compile_error(cc):
    with pytest.raises(CompileError, match="compute capability 9.0 only"):
        cuda.compile_ptx(_kernel(128, "row_major", 128, "row_major"), SIG, cc=cc)


def _typing_error(body, match):
    src = ("def k(A, C):\n"
           "    sm = cuda.shared.array(4096, np.float16)\n"
           "    acc = G.accumulator(64, 64)\n"
           "    d = G.make_descriptor(sm, 0, 128, 16, 1024)\n" + body)
    ns = {"cuda": cuda, "np": np, "G": G}
    exec(compile(src, f"<wgmma-{abs(hash(body))}>", "exec"), ns)
    with pytest.raises(TypingError, match=match):
        cuda.compile_ptx(cuda.jit(ns["k"]), "void(float16[:], float32[:, :])", cc=(9, 0))


@pytest.mark.parametrize("body, match", [
    ("    G.accumulator(64, 12)\n", "multiple of 8 from 8 to 256"),
    ("    G.accumulator(128, 64)\n", "m=128"),
    ("    G.make_descriptor(sm, 0, 96, 16, 1024)\n", "swizzle"),
    ("    G.make_descriptor(A[0], 0, 128, 16, 1024)\n", "must be an array in shared"),
    ("    G.make_descriptor(sm, 1.5, 128, 16, 1024)\n", "offset must be an integer"),
    ("    G.mma_async(acc, d, d, np.float32, 'row_major', 'row_major')\n", "dtype must be"),
    ("    G.mma_async(acc, d, d, np.float16, 'row', 'row_major')\n", "a_layout must be"),
    ("    G.mma_async(acc, d, 3, np.float16, 'row_major', 'row_major')\n",
     "b_desc '3' must be a matrix descriptor"),
    ("    G.mma_async(d, d, d, np.float16, 'row_major', 'row_major')\n",
     "must be a wgmma accumulator"),
    ("    G.mma_async(acc, d, d, 'tf32', 'row_major', 'row_major')\n",
     "tf32 inputs must be K-major"),
    ("    G.mma_async(acc, d, d, np.float16, 'row_major', 'row_major', 1.5)\n",
     "accumulate must be a bool"),
    ("    G.wait_group(-1)\n", "n must be an integer constant >= 0"),
    ("    G.wait_group(A.shape[0])\n", "compile-time constant"),
    ("    G.store_accumulator(C[0], acc)\n", "2-d float32 or float16"),
    ("    G.fill_accumulator(acc, 1j)\n", "real number"),
    ("    G.fence(1)\n", "at most 0 arguments"),
    ("    G.store_accumulator(C, acc, 1)\n", "at most 2 arguments"),
])
def test_typing_errors_name_the_call(body, match):
    _typing_error(body, match)


def test_accumulator_type_registers_and_refusals():
    t = cuda.types.WarpgroupAccumulator(64, 256)
    assert t.registers == 128 and t is cuda.types.WarpgroupAccumulator(64, 256)
    for m, n in ((64, 0), (64, 264), (32, 64), (64, 7)):
        with pytest.raises(ValueError, match="multiple of 8"):
            cuda.types.WarpgroupAccumulator(m, n)
    with pytest.raises(ValueError, match="must be an int"):
        cuda.types.WarpgroupAccumulator(64, 64.0)


def test_offsets_of_the_layout_table_are_a_permutation():
    # the dense layouts above place every element at its own byte inside the image
    for sw, (lbo, sbo) in K_MAJOR.items():
        off = offsets(64, 16, "k", sw, lbo, sbo)
        assert len(np.unique(off)) == off.size and off.max() < SPAN
    for sw, (lbo, sbo) in MN_MAJOR_B.items():
        off = offsets(128, 16, "mn", sw, lbo, sbo)
        assert len(np.unique(off)) == off.size and off.max() < SPAN
