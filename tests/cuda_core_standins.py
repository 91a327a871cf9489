"""Stand-ins for cuda.core's ``Stream``, ``Buffer``, ``StridedMemoryView`` and
``GraphBuilder`` (cuda-core 1.x), for tests that run without a GPU, where cuda.core's own
objects cannot be made.

Each class is named and placed (``__module__``) as cuda.core's, and has the documented
attributes cujit reads, with cuda.core's semantics: a Buffer is ``size`` bytes at ``handle``
and exports a 1-D int8 DLPack tensor; a view's ``strides`` count elements (None when
C-contiguous) and it has a private ``_layout`` object, as cuda.core's has; a Stream and a
GraphBuilder give ``__cuda_stream__() -> (0, handle)`` and cannot be referred to weakly (Cython
classes without ``__weakref__``).  They work over cujit's driver (the simulator's here), as
cuda.core works over the CUDA driver.
"""
import numpy as np

from cujit.driver import get_driver


class Stream:
    """cuda.core ``Stream`` over a cujit stream (kept alive by it)."""
    __slots__ = ("_owner", "_handle")

    def __init__(self, cujit_stream):
        self._owner = cujit_stream
        self._handle = cujit_stream.handle

    @property
    def handle(self):
        return self._handle

    def __cuda_stream__(self):
        return (0, self._handle)

    # cuda.core's Stream hashes and compares by its handle
    def __hash__(self):
        return hash(self._handle)

    def __eq__(self, other):
        return isinstance(other, Stream) and other._handle == self._handle

    def sync(self):
        self._owner.synchronize()

    def create_graph_builder(self):
        return GraphBuilder(self)


Stream.__module__ = "cuda.core._stream"


class Buffer:
    """cuda.core ``Buffer``: ``size`` bytes of memory at ``handle``; ``owner`` (a cujit
    device array, when given) keeps the memory alive and makes the DLPack export."""
    __slots__ = ("_ptr", "_size", "_owner", "_closed", "_device")

    def __init__(self, ptr, size, owner=None, device_accessible=True):
        self._ptr, self._size, self._owner = ptr, size, owner
        self._closed, self._device = False, device_accessible

    @staticmethod
    def from_handle(ptr, size, mr=None, owner=None):
        return Buffer(ptr, size, owner)

    @classmethod
    def over(cls, dev):
        """The Buffer of cujit device array ``dev``'s bytes (as ``Buffer.from_handle`` of a
        CuPy array's pointer in numba-cuda's tests)."""
        return cls(dev.__cuda_array_interface__["data"][0], dev.nbytes, dev)

    @property
    def handle(self):
        return self._ptr

    @property
    def size(self):
        return self._size

    @property
    def is_closed(self):
        return self._closed

    @property
    def is_device_accessible(self):
        return self._device

    @property
    def is_host_accessible(self):
        return not self._device

    @property
    def device_id(self):
        return 0 if self._device else -1

    def close(self, stream=None):
        self._closed = True

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        # cuda.core exports a Buffer as a 1-D int8 tensor of its bytes
        return self._owner.view(np.int8).reshape(-1).__dlpack__(stream=-1,
                                                                 max_version=max_version)

    def __dlpack_device__(self):
        return (2, 0)


Buffer.__module__ = "cuda.core._memory._buffer"


class _StridedLayout:
    """cuda.core's private layout object of a view (numba-cuda reads its flags)."""
    __slots__ = ("is_contiguous_c", "is_contiguous_f")

    def __init__(self, c, f):
        self.is_contiguous_c, self.is_contiguous_f = c, f


class StridedMemoryView:
    """cuda.core ``StridedMemoryView``: ``ptr``, ``shape``, ``strides`` (elements, None when
    C-contiguous), ``dtype``, ``readonly``, ``device_id``, ``is_device_accessible``,
    ``exporting_obj``."""
    __slots__ = ("ptr", "shape", "strides", "dtype", "readonly", "device_id",
                 "is_device_accessible", "exporting_obj")

    @classmethod
    def from_cuda_array_interface(cls, obj, stream_ptr=None):
        d = obj.__cuda_array_interface__
        self = cls.__new__(cls)
        self.ptr, self.readonly = d["data"]
        self.shape = tuple(d["shape"])
        self.dtype = np.dtype(d["typestr"])
        st = d.get("strides")
        self.strides = None if st is None else tuple(s // self.dtype.itemsize for s in st)
        self.device_id, self.is_device_accessible, self.exporting_obj = 0, True, obj
        return self

    @classmethod
    def from_host(cls, arr):
        """A view of host NumPy memory (``device_id`` -1, not device-accessible), as
        cuda.core's ``from_array_interface`` of a NumPy array."""
        self = cls.__new__(cls)
        self.ptr, self.readonly = arr.ctypes.data, not arr.flags.writeable
        self.shape, self.dtype = arr.shape, arr.dtype
        self.strides = tuple(s // arr.itemsize for s in arr.strides)
        self.device_id, self.is_device_accessible, self.exporting_obj = -1, False, arr
        return self

    @property
    def size(self):
        return int(np.prod(self.shape))

    @property
    def _layout(self):
        c = self.strides is None
        return _StridedLayout(c, not c and len(self.shape) <= 1)

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        return self.exporting_obj.__dlpack__(stream=-1, max_version=max_version)

    def __dlpack_device__(self):
        return (2, self.device_id)


StridedMemoryView.__module__ = "cuda.core._memoryview"


class Graph:
    """cuda.core ``Graph`` (an instantiated graph)."""

    def __init__(self, graph_exec):
        self._exec = graph_exec

    def launch(self, stream):
        get_driver().graph_launch(self._exec, stream.__cuda_stream__()[1])


Graph.__module__ = "cuda.core.graph._graph_builder"


class GraphBuilder:
    """cuda.core ``GraphBuilder``: captures the work queued on its stream between
    ``begin_building()`` and ``end_building()`` (cuStreamBeginCapture/EndCapture)."""
    __slots__ = ("_stream", "_graph", "_building")

    def __init__(self, stream):
        self._stream, self._graph, self._building = stream, None, False

    @property
    def stream(self):
        return self._stream

    @property
    def is_building(self):
        return self._building

    def __cuda_stream__(self):
        return self._stream.__cuda_stream__()

    def begin_building(self, mode="relaxed"):
        get_driver().stream_begin_capture(self._stream.handle)
        self._building = True
        return self

    def end_building(self):
        self._graph = get_driver().stream_end_capture(self._stream.handle)
        self._building = False
        return self

    def complete(self, options=None):
        return Graph(get_driver().graph_instantiate(self._graph))


GraphBuilder.__module__ = "cuda.core.graph._graph_builder"
