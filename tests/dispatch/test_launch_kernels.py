"""Kernels end to end (R-KER-1, R-KER-3..7): run on the simulator here and on the GPU with
``pytest -m gpu`` (tests without a marker get it on a GPU)."""
import numpy as np
import pytest

import cujit as cuda
from cujit import float32, float64, int32
from cujit.frontend.errors import CompileError

from kernels_common import example


@cuda.jit
def dyn_alias(out):
    f32 = cuda.shared.array(0, dtype=float32)
    i32 = cuda.shared.array(0, dtype=int32)
    f32[0] = 3.14
    print(f32[0], i32[0])
    out[0] = f32[0]
    out[1] = i32[0]


@cuda.jit
def dyn_disjoint(out):
    f32 = cuda.shared.array(0, dtype=float32)
    i32 = cuda.shared.array(0, dtype=int32)[1:]
    f32[0] = 3.14
    i32[0] = 1
    print(f32[0], i32[0])
    out[0] = f32[0]
    out[1] = i32[0]


def test_seed_dynamic_shared_aliasing(capfd):
    out = np.zeros(2, np.float64)
    dyn_alias[1, 1, 0, 4](out)
    cuda.synchronize()
    assert np.float32(out[0]) == np.float32(3.14)
    assert out[1] == 1078523331
    text = capfd.readouterr().out
    assert "3.14" in text and "1078523331" in text


def test_seed_dynamic_shared_disjoint(capfd):
    out = np.zeros(2, np.float64)
    dyn_disjoint[1, 1, 0, 8](out)
    cuda.synchronize()
    assert np.float32(out[0]) == np.float32(3.14) and out[1] == 1
    text = capfd.readouterr().out.split()
    assert text[0].startswith("3.14") and text[1] == "1"


@cuda.jit
def dyn_lengths(out):
    f32 = cuda.shared.array(0, dtype=float32)
    f64 = cuda.shared.array(0, dtype=float64)
    i8 = cuda.shared.array(0, dtype=np.int8)
    out[0] = len(f32)
    out[1] = f64.size
    out[2] = i8.shape[0]


@pytest.mark.parametrize("nbytes,want", [(10, [2, 1, 10]), (7, [1, 0, 7]), (3, [0, 0, 3]),
                                         (16, [4, 2, 16]), (0, [0, 0, 0])])
def test_dynamic_shared_length_rounds_down(nbytes, want):
    """A byte count that is not a multiple of the item size gives the whole items that fit
    (%dynamic_smem_size // itemsize): 10 bytes hold 2 float32, never 3."""
    out = np.full(3, -1, np.int64)
    dyn_lengths[1, 1, 0, nbytes](out)
    cuda.synchronize()
    assert out.tolist() == want


# The seed guide's two programs, as examples/shared_memory_aliasing.py has them
seed_f = example("shared_memory_aliasing").f
seed_f_with_view = example("shared_memory_aliasing").f_with_view


@pytest.mark.parametrize("kernel, nbytes, second", [(seed_f, 4, "1078523331"),
                                                     (seed_f_with_view, 8, "1")])
def test_seed_examples_verbatim(capfd, kernel, nbytes, second):
    """The seed's two programs as written (no arguments, two prints): 3.140000 then
    1078523331 (aliasing), or 3.140000 then 1 (disjoint views)."""
    kernel[1, 1, 0, nbytes]()
    cuda.synchronize()
    lines = capfd.readouterr().out.split()
    assert len(lines) == 2
    assert float(lines[0]) == pytest.approx(3.14, abs=1e-6) and lines[0].startswith("3.14")
    assert lines[1] == second


from kernels_common import TPB, matmul_tiled as _matmul_tiled  # noqa: E402


matmul_tiled = cuda.jit(_matmul_tiled)


def test_tiled_matmul_matches_numpy():
    rng = np.random.default_rng(1)
    n = 40
    a = rng.random((n, n), dtype=np.float32)
    b = rng.random((n, n), dtype=np.float32)
    c = cuda.device_array((n, n), np.float32)
    blocks = (n + TPB - 1) // TPB
    matmul_tiled[(blocks, blocks), (TPB, TPB)](cuda.to_device(a), cuda.to_device(b), c)
    np.testing.assert_allclose(c.copy_to_host(), a @ b, rtol=1e-5)


@cuda.jit
def block_sum(x, out):
    buf = cuda.shared.array(128, dtype=float64)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    buf[t] = x[i] if i < x.size else 0.0
    cuda.syncthreads()
    step = 64
    while step > 0:
        if t < step:
            buf[t] += buf[t + step]
        cuda.syncthreads()
        step //= 2
    if t == 0:
        out[cuda.blockIdx.x] = buf[0]


def test_block_reduction_with_syncthreads():
    x = np.arange(1000, dtype=np.float64)
    nblocks = (x.size + 127) // 128
    out = np.zeros(nblocks)
    block_sum[nblocks, 128](x, out)
    assert out.sum() == x.sum()
    np.testing.assert_array_equal(out, [x[i * 128:(i + 1) * 128].sum() for i in range(nblocks)])


COEFFS = np.array([0.25, 0.5, 0.25], dtype=np.float64)


@cuda.jit
def stencil(src, dst):
    c = cuda.const.array_like(COEFFS)
    i = cuda.grid(1)
    if 1 <= i < src.size - 1:
        dst[i] = c[0] * src[i - 1] + c[1] * src[i] + c[2] * src[i + 1]


def test_stencil_with_constant_coefficients():
    src = np.random.default_rng(2).random(300)
    dst = np.zeros_like(src)
    stencil[(src.size + 63) // 64, 64](src, dst)
    want = 0.25 * src[:-2] + 0.5 * src[1:-1] + 0.25 * src[2:]
    np.testing.assert_allclose(dst[1:-1], want, rtol=1e-12)
    assert dst[0] == 0 and dst[-1] == 0


@cuda.jit
def reverse_rows(a, out):
    row = cuda.grid(1)
    if row < a.shape[0]:
        tmp = cuda.local.array(8, dtype=int32)
        for j in range(8):
            tmp[j] = a[row, j]
        for j in range(8):
            out[row, j] = tmp[7 - j]


def test_local_array_kernel():
    a = np.arange(80, dtype=np.int32).reshape(10, 8)
    out = np.zeros_like(a)
    reverse_rows[1, 32](a, out)
    np.testing.assert_array_equal(out, a[:, ::-1])


@cuda.jit(device=True)
def square(x):
    return x * x


@cuda.jit
def apply_square(a, out):
    i = cuda.grid(1)
    if i < a.size:
        out[i] = square(a[i]) + 1


def test_device_function_call():
    a = np.arange(10, dtype=np.float32)
    out = np.zeros_like(a)
    apply_square[1, 32](a, out)
    np.testing.assert_array_equal(out, a * a + 1)


@cuda.jit
def total(a, out):
    if cuda.grid(1) == 0:
        s = 0.0
        for i in range(a.shape[0]):
            for j in range(a.shape[1]):
                s += a[i, j]
        out[0] = s


def test_case23_unit_axis_strides_are_contiguous():
    base = np.zeros(100, np.float64)
    a = np.lib.stride_tricks.as_strided(base, shape=(1, 10), strides=(800, 8))
    a[0, :] = np.arange(10.0)
    assert a.flags.c_contiguous
    out = np.zeros(1)
    total[1, 1](a, out)
    assert out[0] == 45.0


class _ZeroSizeForeign:
    __cuda_array_interface__ = {"shape": (0,), "typestr": "<f4", "data": (0, False),
                                "version": 3, "strides": None}


def test_case34_zero_size_foreign_array():
    out = np.zeros(1)
    total_1d[1, 32](_ZeroSizeForeign(), out)
    cuda.synchronize()
    assert out[0] == -1.0


@cuda.jit
def total_1d(a, out):
    if cuda.grid(1) == 0:
        s = 0.0
        for i in range(a.size):
            s += a[i]
        out[0] = s - 1


@cuda.jit
def incr(a):
    i = cuda.grid(1)
    if i < a.size:
        a[i] += 1


def test_case32_cuda_stream_protocol_launch_stream():
    s = cuda.stream()

    class Foreign:
        def __cuda_stream__(self):
            return (0, s.handle)

    d = cuda.to_device(np.zeros(64, np.int32))
    incr[2, 32, Foreign()](d)
    s.synchronize()
    assert d.copy_to_host().sum() == 64


def test_host_array_copied_back_with_stream():
    s = cuda.stream()
    a = np.zeros(100, np.int32)
    incr[4, 32, s](a)
    assert a.tolist() == [1] * 100          # copied back before the launch call returns


def test_device_arrays_launch_repeatedly():
    d = cuda.to_device(np.zeros(50, np.int32))
    for _ in range(5):
        incr[2, 32](d)
    e = cuda.to_device(np.zeros(7, np.int32))
    incr[1, 32](e)
    incr[2, 32](d)
    assert d.copy_to_host().tolist() == [6] * 50 and e.copy_to_host().tolist() == [1] * 7


@cuda.jit
def scaled(a, x, n):
    i = cuda.grid(1)
    if i < n:
        a[i] = a[i] * x + n


def test_scalar_arguments_change_between_launches():
    d = cuda.to_device(np.ones(10, np.float32))
    scaled[1, 32](d, 2.0, 10)
    scaled[1, 32](d, 3.0, 4)
    want = np.ones(10, np.float32) * 2 + 10
    want[:4] = want[:4] * 3 + 4
    np.testing.assert_array_equal(d.copy_to_host(), want)


@cuda.jit
def shared_2x7000(out):
    s = cuda.shared.array((2, 7000), float32)
    s[0, 0] = 2.0
    out[0] = s[0, 0]


@cuda.jit
def shared_2x6000(out):
    s = cuda.shared.array((2, 6000), float32)
    s[1, 5999] = 2.0
    out[0] = s[1, 5999]


@cuda.jit
def shared_14000(out):
    s = cuda.shared.array(14000, float32)
    s[0] = 2.0
    out[0] = s[0]


@cuda.jit
def shared_12000(out):
    s = cuda.shared.array(12000, float32)
    s[11999] = 2.0
    out[0] = s[11999]


@pytest.mark.parametrize("kernel", [shared_2x7000, shared_14000])
def test_case5_static_shared_over_limit(kernel):
    out = np.zeros(1, np.float32)
    with pytest.raises(CompileError) as ei:
        kernel[1, 1](out)
    msg = str(ei.value)
    assert "shared memory" in msg and "56000" in msg and "49152" in msg
    assert out[0] == 0


@pytest.mark.parametrize("kernel", [shared_2x6000, shared_12000])
def test_case5_static_shared_within_limit(kernel):
    out = np.zeros(1, np.float32)
    kernel[1, 1](out)
    assert out[0] == 2.0


@cuda.jit
def dyn_fill(out):
    buf = cuda.shared.array(0, dtype=float32)
    t = cuda.threadIdx.x
    n = len(buf)
    i = t
    while i < n:
        buf[i] = i
        i += cuda.blockDim.x
    cuda.syncthreads()
    if t == 0:
        out[0] = n
        out[1] = buf[n - 1]


def test_dynamic_shared_beyond_48k_uses_optin():
    out = np.zeros(2, np.float32)
    nbytes = 100_000
    dyn_fill[1, 128, 0, nbytes](out)
    assert out.tolist() == [nbytes // 4, nbytes // 4 - 1]


class _CaiV2WithDLPack:
    """A PyTorch-like producer: CUDA Array Interface v2 (no stream) plus DLPack."""

    def __init__(self, d):
        self.d, self.dlpack_streams = d, []

    @property
    def __cuda_array_interface__(self):
        cai = dict(self.d.__cuda_array_interface__, version=2)
        del cai["stream"]
        return cai

    def __dlpack__(self, stream=None, **kw):
        self.dlpack_streams.append(stream)
        return self.d.__dlpack__(stream=stream, **kw)

    def __dlpack_device__(self):
        return self.d.__dlpack_device__()


@cuda.jit
def add_ten(a):
    i = cuda.grid(1)
    if i < a.size:
        a[i] += 10


def test_stream_less_cai_producer_goes_through_dlpack():
    """A producer whose interface names no stream is taken through DLPack, whose stream
    handshake orders the producer's pending work before the launch (PyTorch's tensors; the
    end-to-end race test is tests/arrays/test_gpu_interop_both_ways.py)."""
    from cujit.dispatch import launcher as ln
    d = cuda.to_device(np.arange(4, dtype=np.int64))
    p = _CaiV2WithDLPack(d)
    view, back, fast_ok = ln.convert_arg(0, p, 0)
    assert p.dlpack_streams == [1]          # the legacy default stream, as the consumer
    assert view.device_ctypes_pointer.value == d.device_ctypes_pointer.value
    # later launches take the fast path, which repeats the handshake on every launch
    # (tests/dispatch/test_launch_foreign.py)
    assert back is None and fast_ok is True
    q = _CaiV2WithDLPack(d)
    cai_v3 = type("V3", (), {"__cuda_array_interface__": d.__cuda_array_interface__,
                             "__dlpack__": q.__dlpack__, "__dlpack_device__": q.__dlpack_device__})
    ln.convert_arg(0, cai_v3(), 0)          # a v3 interface with a stream: CAI as before
    assert q.dlpack_streams == []
    add_ten[1, 4](p)                        # and it launches on every backend
    cuda.synchronize()
    assert d.copy_to_host().tolist() == [10, 11, 12, 13]
