"""GPU launches with PyTorch tensors and CuPy arrays: pending work on the producer's stream is
waited for (CUDA Array Interface v3 stream rule, DLPack handshake for PyTorch's v2
interface), the fast path takes them, and a tensor freed after a launch is never touched by a
later one.  Skipped where the framework is not installed."""
import numpy as np
import pytest

import cujit as cuda

pytestmark = pytest.mark.gpu


@cuda.jit
def copy(a, b):
    i = cuda.grid(1)
    if i < a.size:
        b[i] = a[i]


@cuda.jit
def axpy(a, b, out, x, n):
    i = cuda.grid(1)
    if i < n:
        out[i] = a[i] * x + b[i]


N = 1 << 20


def test_torch_pending_work_on_its_stream_is_waited_for():
    torch = pytest.importorskip("torch")
    side = torch.cuda.Stream()
    out = torch.zeros(N, device="cuda")
    with torch.cuda.stream(side):
        src = torch.zeros(N, device="cuda")
        torch.cuda._sleep(50_000_000)       # keeps ``side`` busy well past the launch
        src.fill_(7.0)
        # launched on cujit's default stream while PyTorch's current stream is ``side``:
        # the handshake makes the launch wait for the fill
        copy[N // 256, 256](src, out)
    torch.cuda.synchronize()
    assert float(out.min()) == 7.0 and float(out.max()) == 7.0


def test_torch_pending_work_on_its_stream_is_waited_for_on_the_fast_path():
    torch = pytest.importorskip("torch")
    side = torch.cuda.Stream()
    out = torch.zeros(N, device="cuda")
    src = torch.zeros(N, device="cuda")
    copy[N // 256, 256](src, out)           # the slow path; later launches take the fast one
    copy[N // 256, 256](src, out)
    torch.cuda.synchronize()
    with torch.cuda.stream(side):
        torch.cuda._sleep(50_000_000)
        src.fill_(3.0)
        copy[N // 256, 256](src, out)       # the fast path reads torch's current stream
    torch.cuda.synchronize()
    assert float(out.min()) == 3.0 and float(out.max()) == 3.0
    s = cuda.stream()           # a launch on a cujit stream waits for torch's current one
    with torch.cuda.stream(side):
        torch.cuda._sleep(50_000_000)
        src.fill_(4.0)
        copy[N // 256, 256, s](src, out)
    s.synchronize()
    assert float(out.min()) == 4.0 and float(out.max()) == 4.0


def test_cupy_pending_work_on_its_stream_is_waited_for():
    cp = pytest.importorskip("cupy")
    s = cp.cuda.Stream(non_blocking=True)
    out = cp.zeros(N, dtype=cp.float32)
    with s:
        src = cp.zeros(N, dtype=cp.float32)
        big = cp.ones(1 << 26, dtype=cp.float32)
        for _ in range(20):                 # a long queue on ``s`` ahead of the fill
            big = big * 1.0000001
        src.fill(5.0)
        copy[N // 256, 256](src, out)       # exported with ``stream: s``; launched on 0
    cp.cuda.runtime.deviceSynchronize()
    assert float(out.min()) == 5.0 and float(out.max()) == 5.0


def test_torch_tensors_take_the_fast_path():
    torch = pytest.importorskip("torch")
    a = torch.ones(N, device="cuda")
    b = torch.full((N,), 2.0, device="cuda")
    out = torch.zeros(N, device="cuda")
    launch = axpy[N // 256, 256]
    launch(a, b, out, 3.0, N)
    launch(a, b, out, 3.0, N)
    assert axpy._fast is not None
    torch.cuda.synchronize()
    assert float(out.min()) == 5.0 and float(out.max()) == 5.0


def test_freed_tensor_is_not_touched_by_a_later_launch():
    torch = pytest.importorskip("torch")
    out = torch.zeros(N, device="cuda")
    src = torch.full((N,), 1.0, device="cuda")
    copy[N // 256, 256](src, out)
    copy[N // 256, 256](src, out)
    del src
    torch.cuda.synchronize()
    torch.cuda.empty_cache()                    # its memory is given back to the driver
    src2 = torch.full((2 * N,), 4.0, device="cuda")
    out2 = torch.zeros(2 * N, device="cuda")
    copy[2 * N // 256, 256](src2, out2)
    torch.cuda.synchronize()
    assert float(out2.min()) == 4.0 and float(out.max()) == 1.0


def test_cupy_arrays_take_the_fast_path_with_new_pointers():
    cp = pytest.importorskip("cupy")
    for value in (1.0, 2.0, 3.0):
        a = cp.full(N, value, dtype=cp.float32)
        out = cp.zeros(N, dtype=cp.float32)
        copy[N // 256, 256](a, out)
        cp.cuda.runtime.deviceSynchronize()
        assert float(out.min()) == value
    assert copy._fast is not None


def test_as_cuda_array_of_a_tensor_is_a_view():
    torch = pytest.importorskip("torch")
    t = torch.arange(16, dtype=torch.float32, device="cuda")
    v = cuda.as_cuda_array(t)
    assert v.shape == (16,) and v.device_ctypes_pointer.value == t.data_ptr()
    np.testing.assert_array_equal(v.copy_to_host(), np.arange(16, dtype=np.float32))


@cuda.jit
def scale2d(a, out):
    i, j = cuda.grid(2)
    if i < a.shape[0] and j < a.shape[1]:
        out[i, j] = 2 * a[i, j]


def test_torch_strided_views_and_refusals_on_the_fast_path():
    torch = pytest.importorskip("torch")
    base = torch.arange(64 * 48, dtype=torch.float32, device="cuda").reshape(64, 48)
    for view in (base, base[:, ::2], base.t(), base[::3, 5:]):
        out = torch.zeros(view.shape, dtype=torch.float32, device="cuda")
        for _ in range(2):                  # slow path, then the fast one
            scale2d[(8, 8), (8, 8)](view, out)
        torch.cuda.synchronize()
        assert torch.equal(out, 2 * view)
    out = torch.zeros(64, 48, device="cuda")
    g = base.clone().requires_grad_(True)
    with pytest.raises(RuntimeError, match="requires grad"):
        scale2d[(8, 8), (8, 8)](g, out)     # refused as the interface refuses it
    d = torch.ones(64, 48, dtype=torch.float64, device="cuda")
    scale2d[(8, 8), (8, 8)](d, out)         # another dtype: another specialisation
    torch.cuda.synchronize()
    assert float(out.min()) == 2.0 and float(out.max()) == 2.0
