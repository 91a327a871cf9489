"""cuda.core objects at a launch, on the simulator, with stand-ins of cuda.core's classes
(tests/cuda_core_standins.py): a ``Stream`` and a ``GraphBuilder`` as the launch stream, a
``Buffer`` and a ``StridedMemoryView`` as kernel arguments (numba-cuda 0.21+; its
``test_cuda_driver.py`` and ``test_cuda_ndarray.py``).  The same launches with cuda.core's
real objects on a GPU are in test_launch_cuda_core_gpu.py."""
import numpy as np
import pytest

import cujit
from cujit import types as ct
from cujit.arrays import cuda_core_kind, from_cuda_core

from cuda_core_standins import Buffer, GraphBuilder, Stream, StridedMemoryView

pytestmark = pytest.mark.sim


@cujit.jit
def iota(a):
    i = cujit.grid(1)
    if i < len(a):
        a[i] = i


@cujit.jit
def length(buf, n):
    n[0] = len(buf)


@cujit.jit
def fill_bytes(buf):
    i = cujit.grid(1)
    if i < buf.size:
        buf[i] = 200 + i        # above 127: a uint8 element, not an int8


def test_cuda_core_stream_orders_a_launch_and_copies():
    s = Stream(cujit.stream())
    ary = cujit.to_device(np.zeros(100, np.int64), stream=s)
    s.sync()
    iota[1, 100, s](ary)
    iota[1, 100, s](ary)        # a stream object that cannot be referred to weakly, twice
    s.sync()
    np.testing.assert_equal(ary.copy_to_host(), np.arange(100))


def test_cuda_core_stream_records_events():
    s = Stream(cujit.stream())
    start, end = cujit.event(), cujit.event()
    start.record(stream=s)
    d = cujit.to_device(np.arange(32, dtype=np.float64), stream=s)
    end.record(stream=s)
    end.synchronize()
    assert start.elapsed_time(end) >= 0
    np.testing.assert_equal(d.copy_to_host(), np.arange(32))


def test_graph_builder_captures_the_launch_into_its_graph():
    s = Stream(cujit.stream())
    ary = cujit.to_device(np.zeros(100, np.int64), stream=s)
    s.sync()
    gb = GraphBuilder(s)
    gb.begin_building()
    iota[1, 100, gb](ary)
    graph = gb.end_building().complete()
    s.sync()
    np.testing.assert_equal(ary.copy_to_host(), 0)      # captured, not run
    graph.launch(s)
    s.sync()
    np.testing.assert_equal(ary.copy_to_host(), np.arange(100))


def test_graph_builder_refuses_host_arrays_as_the_driver_does():
    s = Stream(cujit.stream())
    gb = GraphBuilder(s)
    gb.begin_building()
    try:
        with pytest.raises(cujit.CudaAPIError):
            iota[1, 10, gb](np.zeros(10, np.int64))
    finally:
        try:
            gb.end_building()
        except cujit.CudaAPIError:
            pass            # the refused copy invalidated the capture


def test_buffer_argument_is_its_bytes_as_uint8():
    dev = cujit.device_array(10, np.uint8)
    out = cujit.to_device(np.zeros(1, np.uint64))
    buf = Buffer.over(dev)
    length[1, 1](buf, out)
    assert out.copy_to_host()[0] == 10
    assert (ct.uint8[::1], ct.uint64[::1]) in length.signatures


def test_buffer_argument_writes_reach_its_memory():
    dev = cujit.to_device(np.zeros(16, np.uint8))
    fill_bytes[1, 16](Buffer.over(dev))
    np.testing.assert_equal(dev.copy_to_host(), (200 + np.arange(16)).astype(np.uint8))


def test_buffer_over_float_memory_is_still_bytes():
    dev = cujit.to_device(np.zeros(3, np.float32))
    out = cujit.to_device(np.zeros(1, np.uint64))
    length[1, 1](Buffer.over(dev), out)
    assert out.copy_to_host()[0] == 12


def test_strided_memory_view_argument_has_its_dtype_and_shape():
    dev = cujit.to_device(np.ones(10, np.int64))
    out = cujit.to_device(np.zeros(1, np.uint64))
    smv = StridedMemoryView.from_cuda_array_interface(dev, stream_ptr=-1)
    length[1, 1](smv, out)
    assert out.copy_to_host()[0] == 10
    assert (ct.int64[::1], ct.uint64[::1]) in length.signatures


def test_strided_memory_view_of_a_strided_array_reaches_the_right_elements():
    dev = cujit.to_device(np.zeros((4, 6), np.int64))
    view = StridedMemoryView.from_cuda_array_interface(dev[:, ::2], stream_ptr=-1)
    assert view.strides == (6, 2)

    @cujit.jit
    def mark(a):
        i, j = cujit.grid(2)
        if i < a.shape[0] and j < a.shape[1]:
            a[i, j] = 10 * i + j
    mark[(1, 1), (4, 3)](view)
    expect = np.zeros((4, 6), np.int64)
    expect[:, ::2] = 10 * np.arange(4)[:, None] + np.arange(3)
    np.testing.assert_equal(dev.copy_to_host(), expect)


def test_readonly_strided_memory_view_is_typed_readonly():
    dev = cujit.to_device(np.ones(4, np.float32))
    smv = StridedMemoryView.from_cuda_array_interface(dev, stream_ptr=-1)
    smv.readonly = True

    @cujit.jit
    def write(a):
        a[0] = 2.0
    with pytest.raises(cujit.TypingError):
        write[1, 1](smv)
    np.testing.assert_equal(dev.copy_to_host(), 1)


def test_host_strided_memory_view_is_refused_by_name():
    smv = StridedMemoryView.from_host(np.zeros(4, np.int64))
    with pytest.raises(ValueError, match="is_device_accessible"):
        iota[1, 4](smv)


def test_closed_buffer_is_refused_by_name():
    buf = Buffer.over(cujit.device_array(8, np.uint8))
    buf.close()
    with pytest.raises(ValueError, match="closed"):
        fill_bytes[1, 8](buf)


def test_host_only_buffer_is_refused_by_name():
    host = np.zeros(8, np.uint8)
    buf = Buffer(host.ctypes.data, 8, device_accessible=False)
    with pytest.raises(ValueError, match="is_device_accessible"):
        fill_bytes[1, 8](buf)
    np.testing.assert_equal(host, 0)


def test_view_without_dtype_is_a_type_error():
    smv = StridedMemoryView.from_cuda_array_interface(cujit.device_array(4, np.int8))
    smv.dtype = None
    with pytest.raises(TypeError, match="no NumPy dtype"):
        iota[1, 4](smv)


def test_view_with_strides_of_another_rank_is_a_value_error():
    smv = StridedMemoryView.from_cuda_array_interface(cujit.device_array(4, np.int8))
    smv.strides = (1, 1)
    with pytest.raises(ValueError, match="2 strides for 1 dimensions"):
        iota[1, 4](smv)


def test_cuda_core_objects_are_recognised_by_class_not_by_attributes():
    class Lookalike:        # the same attributes, not cuda.core's class
        handle, size, is_device_accessible = 0x1000, 4, True
    assert cuda_core_kind(Buffer.over(cujit.device_array(4, np.uint8))) == "Buffer"
    assert cuda_core_kind(StridedMemoryView.from_cuda_array_interface(
        cujit.device_array(4, np.uint8))) == "StridedMemoryView"
    assert cuda_core_kind(Lookalike()) is None
    assert cuda_core_kind(np.zeros(3)) is None


def test_from_cuda_core_view_keeps_the_object_alive_and_shares_memory():
    dev = cujit.to_device(np.arange(6, dtype=np.float32))
    smv = StridedMemoryView.from_cuda_array_interface(dev)
    view = from_cuda_core(smv)
    assert view.gpu_data.owner is smv
    assert view.shape == (6,) and view.dtype == np.float32
    np.testing.assert_equal(view.copy_to_host(), np.arange(6))


def test_empty_buffer_is_an_empty_array():
    view = from_cuda_core(Buffer(0, 0))
    assert view.shape == (0,) and view.dtype == np.uint8


def test_typeof_follows_numba_cuda():
    dev = cujit.device_array((3, 4), np.float32, order="F")
    assert ct.typeof(Buffer.over(dev)) == ct.uint8[::1]
    smv = StridedMemoryView.from_cuda_array_interface(dev)
    assert ct.typeof(smv) == ct.float32[::1, :]
