"""Interop proven both ways on a GPU (R-CAI-1..4): CuPy and PyTorch arrays into cujit and
cujit arrays into them, through the CUDA Array Interface v3 and DLPack 1.x, with zero copy
shown by equal device pointers, for every dtype both sides support, strided and zero-size
views, and the stream rules (the consumer waits for the producer's stream)."""
import numpy as np
import pytest

import cujit

pytestmark = pytest.mark.gpu

# dtypes cujit shares with each library (bfloat16 has no NumPy dtype: not exchanged)
CUPY_DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
               "uint64", "float16", "float32", "float64", "complex64", "complex128"]
TORCH_DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "float16", "float32",
                "float64", "complex64", "complex128"]


def _ptr(d):
    return d.device_ctypes_pointer.value or 0


def _host(dtype, shape=(6, 8)):
    n = int(np.prod(shape))
    return (np.arange(n) % 7).astype(dtype).reshape(shape)


@pytest.fixture(scope="module")
def cp():
    return pytest.importorskip("cupy")


@pytest.fixture(scope="module")
def torch():
    t = pytest.importorskip("torch")
    if not t.cuda.is_available():
        pytest.skip("PyTorch without CUDA")
    return t


# -- CuPy ------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", CUPY_DTYPES)
def test_cupy_to_cujit_both_protocols(cp, dtype):
    h = _host(dtype)
    x = cp.asarray(h)
    for d in (cujit.as_cuda_array(x), cujit.from_dlpack(x)):
        assert _ptr(d) == x.data.ptr
        assert d.dtype == np.dtype(dtype) and d.shape == h.shape
        assert np.array_equal(d.copy_to_host(), h)


@pytest.mark.parametrize("dtype", CUPY_DTYPES)
def test_cujit_to_cupy_both_protocols(cp, dtype):
    h = _host(dtype)
    d = cujit.to_device(h)
    for y in (cp.asarray(d), cp.from_dlpack(d)):
        assert y.data.ptr == _ptr(d)
        assert y.dtype == np.dtype(dtype)
        assert np.array_equal(cp.asnumpy(y), h)


@pytest.mark.parametrize("view", ["strided", "transposed", "negative", "empty", "empty2d"])
def test_cupy_views_both_ways(cp, view):
    h = _host("float32", (6, 8))
    take = {"strided": lambda a: a[:, ::2], "transposed": lambda a: a.T,
            "negative": lambda a: a[::-1, 1:], "empty": lambda a: a[3:3],
            "empty2d": lambda a: a[:, 5:5]}[view]
    x = cp.asarray(h)
    d = cujit.as_cuda_array(take(x))
    assert d.shape == take(h).shape
    if d.size:
        assert _ptr(d) == take(x).data.ptr
        assert d.strides == take(x).strides
    assert np.array_equal(d.copy_to_host(), take(h))
    back = cp.asarray(take(cujit.to_device(h)))
    assert np.array_equal(cp.asnumpy(back), take(h))


def test_cupy_stream_is_waited_for_unless_sync_is_off(cp, count_calls):
    s = cp.cuda.Stream(non_blocking=True)
    with s:
        x = cp.arange(1 << 22, dtype=cp.float32) * 2
        assert x.__cuda_array_interface__["stream"] == s.ptr
        syncs = count_calls("stream_synchronize")
        d = cujit.as_cuda_array(x)                     # waits for CuPy's stream
        assert [c[0] for c in syncs] == [s.ptr]
        cujit.as_cuda_array(x, sync=False)             # the consumer opted out
        assert len(syncs) == 1
    assert d.copy_to_host()[-1] == 2 * ((1 << 22) - 1)


# -- PyTorch ---------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", TORCH_DTYPES)
def test_torch_to_cujit_both_protocols(torch, dtype):
    h = _host(dtype)
    t = torch.from_numpy(h).cuda()
    for d in (cujit.as_cuda_array(t), cujit.from_dlpack(t)):
        assert _ptr(d) == t.data_ptr()
        assert d.dtype == np.dtype(dtype)
        assert np.array_equal(d.copy_to_host(), h)


@pytest.mark.parametrize("dtype", TORCH_DTYPES)
def test_cujit_to_torch_both_protocols(torch, dtype):
    h = _host(dtype)
    d = cujit.to_device(h)
    for t in (torch.as_tensor(d, device="cuda"), torch.from_dlpack(d)):
        assert t.data_ptr() == _ptr(d)
        assert np.array_equal(t.cpu().numpy(), h)


def test_torch_views_both_ways(torch):
    h = _host("float64", (6, 8))
    t = torch.from_numpy(h).cuda()
    for tv, hv in ((t[:, ::2], h[:, ::2]), (t.t(), h.T), (t[2:2], h[2:2])):
        d = cujit.from_dlpack(tv)
        assert d.shape == hv.shape
        if d.size:
            assert _ptr(d) == tv.data_ptr()
        assert np.array_equal(d.copy_to_host(), hv)
    d = cujit.to_device(h)
    for dv, hv in ((d[:, ::2], h[:, ::2]), (d.T, h.T), (d[2:2], h[2:2])):
        tv = torch.from_dlpack(dv)
        assert tuple(tv.shape) == hv.shape
        assert np.array_equal(tv.cpu().numpy(), hv)


def test_dlpack_device_and_versioned_capsule():
    d = cujit.to_device(np.arange(4.0))
    assert d.__dlpack_device__() == (2, cujit.get_current_device().id)      # kDLCUDA
    cap = d.__dlpack__(max_version=(1, 0))
    assert type(cap).__name__ == "PyCapsule"


def test_kernel_reads_a_torch_tensor_made_on_another_stream(torch):
    """A tensor written on a non-default PyTorch stream and handed straight to a cujit kernel:
    the launch waits for that stream (CAI v3), so the kernel never reads stale data."""
    @cujit.jit
    def copy(src, dst):
        i = cujit.grid(1)
        if i < src.size:
            dst[i] = src[i]

    n = 1 << 24
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):
        t = torch.zeros(n, device="cuda")
        for _ in range(20):              # long enough work on s that a race would show
            t.add_(1.0)
        out = cujit.device_array(n, np.float32)
        copy[(n + 255) // 256, 256](t, out)
    got = out.copy_to_host()
    assert (got == 20.0).all()


def test_cujit_stream_is_honoured_by_torch_dlpack(torch):
    """``torch.from_dlpack`` passes its current stream to ``__dlpack__``; cujit makes that
    stream wait for the array's own stream, so torch sees the finished kernel's values."""
    @cujit.jit
    def fill(a, v):
        i = cujit.grid(1)
        if i < a.size:
            for _ in range(64):
                a[i] = v
    n = 1 << 22
    s = cujit.stream()
    d = cujit.device_array(n, np.float32, stream=s)
    fill[(n + 255) // 256, 256, s](d, np.float32(7))
    t = torch.from_dlpack(d)
    assert t.data_ptr() == _ptr(d)
    assert bool((t == 7).all())
