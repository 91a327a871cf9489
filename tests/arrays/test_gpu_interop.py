"""On a real GPU: zero-copy interop with CuPy and PyTorch (same pointer, both ways, with their
streams), asynchronous copies on streams, and big strided/staged copies."""
import numpy as np
import pytest

import cujit

pytestmark = pytest.mark.gpu


def test_cupy_into_cujit_and_back():
    cp = pytest.importorskip("cupy")
    x = cp.arange(12, dtype=cp.float32).reshape(3, 4)
    d = cujit.as_cuda_array(x)
    assert d._data_ptr == x.data.ptr and d.shape == (3, 4)
    assert np.array_equal(d.copy_to_host(), cp.asnumpy(x))
    d[1, 2] = -5.0
    cp.cuda.runtime.deviceSynchronize()
    assert float(x[1, 2]) == -5.0
    v = cujit.as_cuda_array(x[:, ::2])
    assert v._data_ptr == x[:, ::2].data.ptr and v.strides == x[:, ::2].strides
    # cujit → CuPy through the interface and through DLPack
    c = cujit.to_device(np.arange(10, dtype=np.int64))
    y = cp.asarray(c)
    assert y.data.ptr == c._data_ptr
    assert cp.asnumpy(y).tolist() == list(range(10))
    z = cp.from_dlpack(c)
    assert z.data.ptr == c._data_ptr and cp.asnumpy(z).tolist() == list(range(10))
    w = cujit.from_dlpack(x)
    assert w._data_ptr == x.data.ptr
    assert np.array_equal(w.copy_to_host(), cp.asnumpy(x))


def test_cupy_streams():
    cp = pytest.importorskip("cupy")
    s = cp.cuda.Stream(non_blocking=True)
    with s:
        x = cp.arange(1 << 20, dtype=cp.float32)
        cai = x.__cuda_array_interface__
        d = cujit.as_cuda_array(x)       # synchronises CuPy's stream when it names one
    if cai.get("stream") not in (None, 1, 2):
        assert int(d.stream) == cai["stream"]
    assert np.array_equal(d.copy_to_host(), np.arange(1 << 20, dtype=np.float32))
    ext = cujit.external_stream(s.ptr)
    h = np.arange(4096, dtype=np.float64)
    d2 = cujit.to_device(h, stream=ext)
    out = d2.copy_to_host(stream=ext)
    s.synchronize()
    assert np.array_equal(out, h)
    if hasattr(s, "__cuda_stream__"):
        d3 = cujit.to_device(h, stream=s)
        s.synchronize()
        assert np.array_equal(d3.copy_to_host(), h)


def test_torch_into_cujit_and_back():
    torch = pytest.importorskip("torch")
    t = torch.arange(20, dtype=torch.float64, device="cuda").reshape(4, 5)
    d = cujit.as_cuda_array(t)
    assert d._data_ptr == t.data_ptr() and d.shape == (4, 5)
    assert np.array_equal(d.copy_to_host(), t.cpu().numpy())
    d[0, 0] = 99.0
    torch.cuda.synchronize()
    assert t[0, 0].item() == 99.0
    tt = t.t()
    v = cujit.as_cuda_array(tt)
    assert v.strides == (8, 40) and np.array_equal(v.copy_to_host(), tt.cpu().numpy())
    w = cujit.from_dlpack(t)
    assert w._data_ptr == t.data_ptr()
    c = cujit.to_device(np.arange(6, dtype=np.int32))
    u = torch.from_dlpack(c)
    assert u.data_ptr() == c._data_ptr and u.tolist() == list(range(6))
    a = torch.as_tensor(c, device="cuda")
    assert a.data_ptr() == c._data_ptr


def test_torch_streams():
    torch = pytest.importorskip("torch")
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):
        t = torch.ones(1 << 20, device="cuda") * 3
        c = cujit.to_device(np.arange(1 << 10, dtype=np.float32))
        u = torch.from_dlpack(c)          # torch passes its current stream to __dlpack__
        r = (u * 2).cpu().numpy()
    assert np.array_equal(r, np.arange(1 << 10, dtype=np.float32) * 2)
    ext = cujit.external_stream(s.cuda_stream)
    d = cujit.as_cuda_array(t).bind(ext)
    out = d.copy_to_host(stream=ext)
    ext.synchronize()
    assert (out == 3).all()


def test_async_copies_overlap_host_work_on_a_stream():
    """Copies queued on a stream return before they run: the stream is held shut by a host
    callback until the host has checked that neither copy happened yet (a synchronous copy
    would wait for the gate, the callback would time out and record False)."""
    import threading
    s = cujit.stream()
    n = 32 << 20
    src = cujit.pinned_array(n // 8, np.float64)
    src[:] = np.arange(n // 8)
    dst = cujit.pinned_array(n // 8, np.float64)
    dst[:] = -1.0
    gate, released = threading.Event(), []
    s.add_callback(lambda stream, status, arg: released.append(gate.wait(120)))
    d = cujit.to_device(src, stream=s)          # queued behind the gate
    d.copy_to_host(dst, stream=s)               # queued behind the first copy
    assert (dst == -1.0).all()                  # host work runs while the copies wait
    host = np.sin(np.arange(1 << 20)).sum()
    gate.set()
    s.synchronize()
    assert released == [True]
    assert np.isfinite(host)
    assert np.array_equal(dst, src)


def test_big_pageable_and_strided_transfers():
    h = np.arange(64 << 20, dtype=np.uint8).view(np.int64).copy()     # 64 MiB, pageable
    d = cujit.to_device(h)                                            # pipelined staging
    assert np.array_equal(d.copy_to_host(), h)
    m = h.reshape(1024, -1)
    dm = cujit.to_device(m)
    assert np.array_equal(dm[::3, 5:-7].copy_to_host(), m[::3, 5:-7])
    e = cujit.device_array_like(m)
    e.copy_to_device(dm)
    assert np.array_equal(e[::-1].copy_to_host(), m[::-1])
    cube = cujit.to_device(np.arange(4 * 50 * 60, dtype=np.int32).reshape(4, 50, 60))
    assert np.array_equal(cube[:, 1:, ::2].copy_to_host(),
                          np.arange(4 * 50 * 60, dtype=np.int32).reshape(4, 50, 60)[:, 1:, ::2])


def test_mapped_and_managed_usable_by_other_libraries():
    cp = pytest.importorskip("cupy")
    m = cujit.mapped_array(8, np.float32)
    m[:] = 2
    x = cp.asarray(m)            # CuPy reads it through its device pointer
    assert float(x.sum()) == 16.0
    g = cujit.managed_array(8, np.float32)
    g[:] = 3
    assert float(cp.asarray(g).sum()) == 24.0
