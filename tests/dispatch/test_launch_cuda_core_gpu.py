"""cuda.core's own objects at a launch on a GPU (numba-cuda 0.21+ takes them): a ``Stream``
and a ``GraphBuilder`` as the launch stream, a ``Buffer`` and a ``StridedMemoryView`` as
kernel arguments.  The simulator's tests of the same launches, with stand-ins of these
classes, are in test_launch_cuda_core.py."""
import numpy as np
import pytest

import cujit

pytestmark = pytest.mark.gpu
core = pytest.importorskip("cuda.core")
StridedMemoryView = pytest.importorskip("cuda.core.utils").StridedMemoryView


@cujit.jit
def iota(a):
    i = cujit.grid(1)
    if i < len(a):
        a[i] = i


@cujit.jit
def length(buf, n):
    n[0] = len(buf)


@pytest.fixture
def device():
    dev = core.Device()
    dev.set_current()
    return dev


def test_cuda_core_stream_is_a_launch_stream(device):
    s = device.create_stream()
    ary = cujit.to_device(np.zeros(100, np.int64), stream=s)
    s.sync()
    for _ in range(2):
        iota[1, 100, s](ary)
    s.sync()
    np.testing.assert_equal(ary.copy_to_host(), np.arange(100))


def test_graph_builder_captures_the_launch(device):
    s = device.create_stream()
    ary = cujit.to_device(np.zeros(100, np.int64), stream=s)
    s.sync()
    gb = device.create_graph_builder()
    gb.begin_building()
    iota[1, 100, gb](ary)
    graph = gb.end_building().complete()
    np.testing.assert_equal(ary.copy_to_host(), 0)      # captured, not run
    graph.launch(s)
    s.sync()
    np.testing.assert_equal(ary.copy_to_host(), np.arange(100))


def test_buffer_argument_is_uint8_bytes(device):
    dev = cujit.to_device(np.zeros(10, np.uint8))
    out = cujit.to_device(np.zeros(1, np.uint64))
    buf = core.Buffer.from_handle(dev.device_ctypes_pointer.value, size=10, owner=dev)
    length[1, 1](buf, out)
    assert out.copy_to_host()[0] == 10

    @cujit.jit
    def fill(b):
        i = cujit.grid(1)
        if i < b.size:
            b[i] = 200 + i
    fill[1, 10](buf)
    fill[1, 10](buf)        # the fast path reads the Buffer again
    np.testing.assert_equal(dev.copy_to_host(), (200 + np.arange(10)).astype(np.uint8))


def test_buffer_from_a_memory_resource(device):
    s = device.create_stream()
    buf = device.allocate(64, stream=s)
    s.sync()
    out = cujit.to_device(np.zeros(1, np.uint64))
    length[1, 1](buf, out)
    assert out.copy_to_host()[0] == 64
    buf.close()


def test_strided_memory_view_argument(device):
    dev = cujit.to_device(np.zeros((4, 6), np.int64))
    full = StridedMemoryView.from_cuda_array_interface(dev, stream_ptr=-1)
    out = cujit.to_device(np.zeros(1, np.uint64))
    length[1, 1](full, out)
    assert out.copy_to_host()[0] == 4

    @cujit.jit
    def mark(a):
        i, j = cujit.grid(2)
        if i < a.shape[0] and j < a.shape[1]:
            a[i, j] = 10 * i + j
    half = StridedMemoryView.from_cuda_array_interface(dev[:, ::2], stream_ptr=-1)
    mark[(1, 1), (4, 3)](half)
    expect = np.zeros((4, 6), np.int64)
    expect[:, ::2] = 10 * np.arange(4)[:, None] + np.arange(3)
    np.testing.assert_equal(dev.copy_to_host(), expect)
