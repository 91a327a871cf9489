"""``numba.cuda.cudadrv.driver``'s names that cujit has: re-exports of cujit's classes (for
ported imports), the driver-level memory functions numba.cuda's users and tests call
(``host_to_device``, ``device_to_host``, ``device_to_device``, ``device_memset``,
``is_device_memory``, ``host_memory_extents``, ``device_memory_size`` ...), the ``driver``
object (numba's ``Driver`` singleton: ``driver.get_device_count()``, ``driver.get_device(n)``,
and the raw ``driver.cu*`` functions on a GPU), and the module's private helpers that
libraries and numba-cuda's ``testing.py`` call (``_raise_driver_not_found``, which STUMPY calls
when there is no GPU; ``_have_nvjitlink``).

The memory functions take numba's arguments: device memory is anything cujit allocates on or
maps to the device (a ``MemoryPointer`` and its views, ``MappedMemory``, ``ManagedMemory``, a
``DeviceNDArray``, ``DeviceRecord``, mapped or managed array), host memory a NumPy array or
any object with the buffer protocol (``ctypes`` objects, ``bytearray``), sizes are bytes.
Unlike numba, a size larger than either side is a ValueError before anything is copied.
"""
import ctypes
from time import perf_counter_ns as _now

import numpy as np

from .. import driver as _driver_layer
from ..nvvm.linker import nvjitlink_available
from ..driver.errors import CudaAPIError, CudaDriverError, CudaSupportError
from ..memory import (AutoFreePointer, BaseCUDAMemoryManager, GetIpcHandleMixin,
                      HostOnlyCUDAMemoryManager, IpcHandle, ManagedMemory, MappedMemory,
                      MemoryInfo, MemoryPointer, NumbaCUDAMemoryManager, OwnedPointer,
                      PinnedMemory, set_memory_manager)
from ..memory.pointers import DeadMemoryError
from ..profiler import profile_start, profile_stop, profiling
from ..arrays import layout as _layout
from ..memory.protocol import device_pointer as _protocol_pointer
from ..arrays.transfer import copied as _copied
from ..runtime.device_list import cuda_error, is_available
from ..runtime.devices import Context, Device, close, contexts, device_of, forget_binding
from ..runtime.streams import stream_handle as _stream_handle
from ..runtime.streams import Event, Stream, event_elapsed_time
from ..runtime.version import get_version

__all__ = ["CudaAPIError", "CudaDriverError", "CudaSupportError", "DeadMemoryError",
           "AutoFreePointer", "BaseCUDAMemoryManager", "GetIpcHandleMixin",
           "HostOnlyCUDAMemoryManager", "IpcHandle", "ManagedMemory", "MappedMemory",
           "MemoryInfo", "MemoryPointer", "NumbaCUDAMemoryManager", "OwnedPointer",
           "PinnedMemory", "set_memory_manager", "profile_start", "profile_stop", "profiling",
           "Context", "Device", "Event", "Stream", "event_elapsed_time", "get_version",
           "DRIVER_NOT_FOUND_MSG", "DRIVER_LOAD_ERROR_MSG", "Driver", "driver",
           "is_device_memory", "require_device_memory", "device_pointer",
           "device_ctypes_pointer", "device_extents", "device_memory_size", "host_pointer",
           "host_memory_extents", "host_memory_size", "host_to_device", "device_to_host",
           "device_to_device", "device_memset"]

# numba.cuda's wording, since callers may match on it.
DRIVER_NOT_FOUND_MSG = """
CUDA driver library cannot be found.
Ensure that a compatible NVIDIA driver is installed and available on your system path.
"""

DRIVER_LOAD_ERROR_MSG = """
Possible CUDA driver libraries are found but error occurred during load:
%s
"""


def _raise_driver_not_found():
    """Raise :class:`CudaSupportError` with :data:`DRIVER_NOT_FOUND_MSG`, as numba.cuda's
    ``cudadrv.driver._raise_driver_not_found`` does (libraries raise it for a GPU entry
    point called where there is no GPU)."""
    raise CudaSupportError(DRIVER_NOT_FOUND_MSG)


def _raise_driver_error(e):
    """Raise :class:`CudaSupportError` saying the driver library was found but failed to
    load with error ``e`` (any object, shown with ``%s``), as numba.cuda's
    ``cudadrv.driver._raise_driver_error``."""
    raise CudaSupportError(DRIVER_LOAD_ERROR_MSG % (e,))


def _to_core_stream(stream):
    """The cuda.core ``Stream`` for ``stream`` (numba-cuda's ``driver._to_core_stream``, for
    ``cuda.core.launch``): 0 or None → the default stream (handle 0), a cujit
    :class:`Stream` → a cuda.core Stream over its handle (not owned: cujit destroys it), a
    cuda.core Stream → itself, a cuda.core ``GraphBuilder`` → its ``stream``.  TypeError for
    anything else; CudaSupportError (an ImportError) when cuda.core is not installed."""
    if isinstance(stream, Stream):
        handle = stream.handle or 0
    elif stream is None or (isinstance(stream, int) and not isinstance(stream, bool)
                            and stream == 0):
        handle = 0
    elif type(stream).__module__.startswith("cuda.core"):
        handle = None
    else:
        raise TypeError(f"_to_core_stream: expected a Stream, a cuda.core Stream or "
                        f"GraphBuilder, or 0, got {type(stream).__name__} {stream!r:.60}")
    try:
        from cuda.core import Stream as CoreStream
    except ImportError as exc:
        raise CudaSupportError(f"_to_core_stream needs cuda.core, which cannot be imported "
                               f"here ({exc}); pip install cuda-core") from exc
    if handle is not None:
        return CoreStream.from_handle(handle)
    if isinstance(stream, CoreStream):
        return stream
    inner = getattr(stream, "stream", None)     # a GraphBuilder: the stream it captures
    if isinstance(inner, CoreStream):
        return inner
    raise TypeError(f"_to_core_stream: expected a Stream, a cuda.core Stream or "
                    f"GraphBuilder, or 0, got {type(stream).__name__}")


def _have_nvjitlink():
    """True when nvJitLink loads here (:func:`cujit.nvvm.linker.nvjitlink_available`), as
    numba.cuda's ``cudadrv.driver._have_nvjitlink``; numba-cuda's ``testing.py`` calls it at
    import to decide ``skip_if_nvjitlink_missing``."""
    return nvjitlink_available()


# ---- device and host memory, as numba's driver-level functions ---------------------------

def is_device_memory(obj):
    """True when ``obj`` is device memory in numba's sense: it says so with a true
    ``__cuda_memory__`` attribute (cujit's pointers, device arrays and records, mapped and
    managed memory and arrays).  Never raises."""
    return bool(getattr(obj, "__cuda_memory__", False))


def require_device_memory(obj):
    """Raise TypeError naming ``obj`` unless :func:`is_device_memory` says it is device
    memory (numba raises a bare Exception here)."""
    if not is_device_memory(obj):
        raise TypeError(f"expected device memory (a MemoryPointer, device array or record, "
                        f"mapped or managed memory), got {type(obj).__name__} {obj!r:.80}")


def device_pointer(obj):
    """The device address (int) of device memory ``obj``: its first element for arrays and
    records, its start for pointers (0 for an empty array).  TypeError when ``obj`` is not
    device memory."""
    ptr = _protocol_pointer(obj)
    if ptr is None:
        ptr = getattr(obj, "device_pointer_value", None)
    if ptr is None or isinstance(ptr, bool) or not isinstance(ptr, int):
        require_device_memory(obj)
        raise TypeError(f"{type(obj).__name__} {obj!r:.80} has no device address")
    return ptr


def device_ctypes_pointer(obj):
    """:func:`device_pointer` as a ``ctypes.c_size_t``, the type of numba-cuda's memory
    pointers (a ``ctypes.c_void_p`` NULL for address 0)."""
    ptr = device_pointer(obj)
    return ctypes.c_size_t(ptr) if ptr else ctypes.c_void_p(None)


def _array_span(obj):
    """``(lo, hi)`` byte offsets from element 0 of an object with ``shape``, ``strides``
    and ``dtype`` (an array or a record: shape ``()``), or None for other objects."""
    shape, strides, dtype = (getattr(obj, a, None) for a in ("shape", "strides", "dtype"))
    if shape is None or strides is None or dtype is None:
        return None
    return _layout.extent(tuple(shape), tuple(strides), np.dtype(dtype).itemsize)


def device_extents(obj):
    """``(start, end)`` device addresses of the bytes device memory ``obj`` spans: an
    array's elements (negative strides included), a pointer's ``size`` bytes.  TypeError
    when ``obj`` is not device memory."""
    ptr = device_pointer(obj)
    span = _array_span(obj)
    if span is not None:
        return ptr + span[0], ptr + span[1]
    size = getattr(obj, "size", None)
    if not isinstance(size, int) or isinstance(size, bool):
        raise TypeError(f"cannot tell the size of device memory {type(obj).__name__}")
    return ptr, ptr + size


def device_memory_size(obj):
    """Bytes of device memory ``obj`` (numba's ``device_memory_size``): what an array or
    record spans, a pointer's ``size``.  TypeError when ``obj`` is not device memory."""
    start, end = device_extents(obj)
    return end - start


def _host_array(obj):
    """``obj`` (a NumPy array, or any object with the buffer protocol: ctypes objects,
    bytearray, bytes, memoryview) as a NumPy array over the same memory.  TypeError for
    anything else."""
    if isinstance(obj, np.ndarray):
        return obj
    try:
        view = memoryview(obj)
    except TypeError:
        raise TypeError(f"expected host memory (a NumPy array or an object with the buffer "
                        f"protocol), got {type(obj).__name__}") from None
    if not view.contiguous:
        return np.asarray(view)
    return np.frombuffer(view.cast("B"), dtype=np.uint8)


def host_pointer(obj, readonly=False):
    """The address (int) of host memory ``obj`` (numba's ``host_pointer``): an int is taken
    as an address; a NumPy array gives its first element; any object with the buffer
    protocol its buffer.  ValueError for a read-only buffer unless ``readonly`` is true;
    TypeError for anything else."""
    if isinstance(obj, int) and not isinstance(obj, bool):
        return obj
    ary = _host_array(obj)
    if not readonly and not ary.flags.writeable:
        raise ValueError(f"host memory of {type(obj).__name__} is read-only (pass "
                         "readonly=True to read from it)")
    return ary.ctypes.data


def host_memory_extents(obj):
    """``(start, end)`` addresses of the bytes host memory ``obj`` spans (a NumPy array's
    elements, negative strides included; an object's buffer).  TypeError for an object
    that is not host memory."""
    ary = _host_array(obj)
    lo, hi = _layout.extent(ary.shape, ary.strides, ary.dtype.itemsize)
    base = ary.ctypes.data
    return base + lo, base + hi


def host_memory_size(obj):
    """Bytes of host memory ``obj`` spans (:func:`host_memory_extents`)."""
    start, end = host_memory_extents(obj)
    return end - start


def _check_size(size, what, **limits):
    if isinstance(size, bool) or not isinstance(size, (int, np.integer)):
        raise TypeError(f"{what}: size must be an int number of bytes, got {size!r}")
    size = int(size)
    if size < 0:
        raise ValueError(f"{what}: size must be >= 0 bytes, got {size}")
    for side, limit in limits.items():
        if size > limit:
            raise ValueError(f"{what}: {size} bytes exceed the {limit} bytes of the {side}")
    return size


def _device_side(obj):
    start, end = device_extents(obj)
    return start, end - start


def _announce(direction, size, handle, t0):
    if t0:
        _copied.emit(direction, size, handle, t0)


def host_to_device(dst, src, size, stream=0):
    """Copy ``size`` bytes from host memory ``src`` to device memory ``dst`` (numba's
    ``host_to_device``; cuMemcpyHtoD, or cuMemcpyHtoDAsync on ``stream``: 0 or a Stream,
    then ``src`` must stay alive until the stream reaches the copy).  Bytes are taken from
    where each side starts (the lowest address an array spans).  TypeError for an object of
    the wrong kind, ValueError when ``size`` is negative or larger than either side."""
    what = "host_to_device"
    dptr, dsize = _device_side(dst)
    sptr, send = host_memory_extents(src)
    size = _check_size(size, what, destination=dsize, source=send - sptr)
    h = _stream_handle(stream)
    if size:
        t0 = _copied.listeners and _now()
        _driver_layer.get_driver().memcpy_htod(dptr, sptr, size, h)
        _announce("HtoD", size, h, t0)


def device_to_host(dst, src, size, stream=0):
    """Copy ``size`` bytes from device memory ``src`` to host memory ``dst`` (numba's
    ``device_to_host``; cuMemcpyDtoH[Async]).  TypeError for an object of the wrong kind,
    ValueError when ``size`` is negative or larger than either side, or ``dst`` is
    read-only."""
    what = "device_to_host"
    sptr, ssize = _device_side(src)
    dptr, dend = host_memory_extents(dst)
    if not _host_array(dst).flags.writeable:
        raise ValueError(f"{what}: the destination {type(dst).__name__} is read-only")
    size = _check_size(size, what, destination=dend - dptr, source=ssize)
    h = _stream_handle(stream)
    if size:
        t0 = _copied.listeners and _now()
        _driver_layer.get_driver().memcpy_dtoh(dptr, sptr, size, h)
        _announce("DtoH", size, h, t0)


def device_to_device(dst, src, size, stream=0):
    """Copy ``size`` bytes from device memory ``src`` to device memory ``dst`` (numba's
    ``device_to_device``; cuMemcpyDtoD[Async]).  TypeError for an object that is not device
    memory, ValueError when ``size`` is negative or larger than either side."""
    what = "device_to_device"
    dptr, dsize = _device_side(dst)
    sptr, ssize = _device_side(src)
    size = _check_size(size, what, destination=dsize, source=ssize)
    h = _stream_handle(stream)
    if size:
        t0 = _copied.listeners and _now()
        _driver_layer.get_driver().memcpy_dtod(dptr, sptr, size, h)
        _announce("DtoD", size, h, t0)


def device_memset(dst, val, size, stream=0):
    """Set ``size`` bytes of device memory ``dst`` to the byte ``val`` (numba's
    ``device_memset``; cuMemsetD8[Async]).  ValueError when ``val`` is not in 0..255 or
    ``size`` is negative or larger than ``dst``; TypeError when ``dst`` is not device
    memory."""
    what = "device_memset"
    dptr, dsize = _device_side(dst)
    if isinstance(val, bool) or not isinstance(val, (int, np.integer)) or not 0 <= val <= 255:
        raise ValueError(f"{what}: the value must be a byte (an int in 0..255), got {val!r}")
    size = _check_size(size, what, destination=dsize)
    h = _stream_handle(stream)
    if size:
        _driver_layer.get_driver().memset_d8(dptr, int(val), size, h)


# ---- the driver object ----------------------------------------------------------------

class Driver:
    """numba.cuda's ``Driver`` object, of which :data:`driver` is the one instance.

    ``get_device(devnum=0)`` (a :class:`Device`; TypeError / IndexError for a bad ordinal),
    ``get_device_count()``, ``list_devices()``, ``reset()`` (closes this thread's contexts:
    ``cujit.close()``), ``is_available`` and ``initialization_error`` (None, or the text of
    the error that stops the driver: ``cujit.cuda_error()``).

    Any ``cu*`` attribute is the CUDA driver function of that name through cuda-bindings
    (``driver.cuMemGetInfo()`` returns ``(free, total)``): called with cuda-bindings'
    arguments, it raises :class:`CudaAPIError` for an error result and returns the other
    results (None, the one value, or a tuple), as numba's.  The simulator has no CUDA
    driver, so there it is an ``AttributeError``.  Attributes may be assigned (numba-cuda's
    tests put stand-ins on it); cujit's own calls never go through this object.
    """

    def get_device(self, devnum=0):
        """Device ``devnum`` (:class:`Device`, the object ``cujit.gpus[devnum]`` stands
        for)."""
        return device_of(devnum)

    def get_device_count(self):
        """How many devices the driver (or the simulator) reports (cuDeviceGetCount);
        CudaSupportError when there is no driver."""
        return _driver_layer.get_driver().get_device_count()

    def list_devices(self):
        """All devices, as a list of :class:`Device`."""
        return [device_of(i) for i in range(self.get_device_count())]

    def reset(self):
        """Close the calling thread's contexts (``cujit.close()``); the next use creates a
        fresh one."""
        close()

    def get_active_context(self):
        """``with driver.get_active_context() as ac:`` the calling thread's current CUDA
        context as the driver reports it (cuCtxGetCurrent), numba's ``_ActiveContext``:
        ``ac.context_handle`` (its handle, an int, or None when the thread has none),
        ``ac.devnum`` (the ordinal of its device when it is a context cujit made, else None);
        ``bool(ac)`` is True when there is one."""
        return _ActiveContext()

    def pop_active_context(self):
        """Pop the calling thread's current CUDA context (cuCtxPopCurrent) and return its
        handle (an int), or None when the thread has none (numba's).  cujit binds its
        context again at its next use."""
        handle = _driver_layer.get_driver().ctx_pop_current()
        if not handle:
            return None
        forget_binding()
        return handle

    @property
    def is_available(self):
        """True when a driver (or the simulator) and at least one device can be used."""
        return is_available()

    @property
    def initialization_error(self):
        """None when the driver initialises, else the message of the error that stops it."""
        return cuda_error()

    def __setattr__(self, name, value):
        """Assign an attribute.  ``driver.cuInit = f`` before the first CUDA call is numba's
        way of making the initialisation fail (numba-cuda's test_init): ``f(0)`` is called
        now, and a :class:`CudaAPIError` it raises makes every CUDA call raise
        ``CudaSupportError("Error at driver init: <name> (<code>)")``, the text
        ``cuda_error()`` then returns, as numba's (the simulator, which has no ``cuInit``,
        is not affected).  After the driver initialised, it only sets the attribute."""
        object.__setattr__(self, name, value)
        if name == "cuInit" and not _driver_layer.driver_created():
            try:
                value(0)
            except CudaAPIError as exc:
                what = exc.msg or exc.name
                _driver_layer.refuse_init(f"Error at driver init: {what} ({exc.code})")

    def __getattr__(self, name):
        if not name.startswith("cu"):
            raise AttributeError(f"cujit's driver object has no attribute {name!r}")
        drv = _driver_layer.get_driver()
        fn = drv.raw_function(name)
        setattr(self, name, fn)
        return fn

    def __repr__(self):
        return "<cujit driver object (numba.cuda.cudadrv.driver.driver)>"


class _ActiveContext:
    """What :meth:`Driver.get_active_context` gives: ``context_handle`` and ``devnum`` of
    the thread's current context, read when the ``with`` block starts."""
    __slots__ = ("context_handle", "devnum")

    def __init__(self):
        self.context_handle = self.devnum = None

    def __enter__(self):
        h = _driver_layer.get_driver().ctx_get_current()
        self.context_handle = h or None
        self.devnum = next((c.device.id for c in contexts() if c.handle == h), None) \
            if h else None
        return self

    def __exit__(self, *exc):
        return False

    def __bool__(self):
        return self.context_handle is not None


#: The driver object (numba's ``numba.cuda.cudadrv.driver.driver``).
driver = Driver()


def __getattr__(name):
    # ``binding``: numba's name for the cuda.bindings.driver module (driver.binding.CUdevice,
    # driver.binding.CUresult...), read from the driver layer at first use so that importing
    # this module needs no driver
    if name == "binding":
        return _driver_layer.get_driver().bindings_module()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
