"""Memory pointer objects with numba.cuda's ownership model (R-EMM-1).

- :class:`MemoryPointer`: device memory at ``device_pointer_value`` of ``size`` bytes.  When
  constructed with a ``finalizer`` (a no-argument callable) it *owns* the memory: the finalizer
  runs once, through ``weakref.finalize``, when the object dies or on :meth:`free`.
- :class:`AutoFreePointer`: what ``memalloc`` returns (a MemoryPointer that frees itself).
- Views (:meth:`MemoryPointer.view`) hold a strong reference to the owning pointer
  (``owner``), so the allocation outlives every view of it.
- :class:`PinnedMemory` (page-locked host), :class:`MappedMemory` (page-locked host with a
  device address), :class:`ManagedMemory` (unified; host and device addresses are equal).

Pointers remember the context *generation* they were made in (``generation``, public: the
kernel launcher compares it on every launch): after ``Context.reset()`` or ``cujit.close()``
using one raises :class:`DeadMemoryError` instead of touching the driver.
"""
import abc
import ctypes
import weakref
from collections import namedtuple

from ..driver import default_context, get_driver
from ..driver.errors import CudaAPIError, CUDA_ERROR_INVALID_CONTEXT

__all__ = ["MemoryPointer", "AutoFreePointer", "OwnedPointer", "MappedMemory", "PinnedMemory",
           "ManagedMemory", "MemoryInfo", "IpcHandle", "DeadMemoryError"]

MemoryInfo = namedtuple("MemoryInfo", "free total")
MemoryInfo.__doc__ = "Free and total device memory in bytes (cuMemGetInfo)."

_ref = weakref.ref
_live_finalizers = set()


class _Finalizer:
    """``weakref.finalize`` semantics for the allocation hot path, at half the cost.

    ``_Finalizer(obj, fn, *args)`` calls ``fn(*args)`` at most once: when ``obj`` dies (also
    when it dies in a garbage cycle: the module-level registry keeps this object, and so its
    weak reference, alive) or when called.  ``alive``, ``__call__`` and ``detach`` behave as
    ``weakref.finalize``'s.  Unlike ``weakref.finalize`` nothing runs at interpreter exit
    (the process's exit releases the memory, R-DEA-6).  ``weakref.finalize`` itself costs
    ~2.4 µs per object created and fired, this ~1.2 µs; see docs/design-runtime.md."""

    __slots__ = ("_wr", "_fn", "_args", "__weakref__")

    def __init__(self, obj, fn, *args):
        self._fn = fn
        self._args = args
        self._wr = _ref(obj, self._fire)
        _live_finalizers.add(self)

    def _fire(self, _wr=None, _live=_live_finalizers):
        # The registry is bound as a default: during interpreter teardown module globals
        # may already be None when a weak-reference callback runs.
        try:
            _live.remove(self)
        except KeyError:
            return None
        return self._fn(*self._args)

    def __call__(self):
        """Run the finalizer now if it has not run; return its result (None otherwise)."""
        return self._fire()

    @property
    def alive(self):
        return self in _live_finalizers

    def detach(self):
        """Stop it from running; return ``(obj, fn, args)`` or None when already dead."""
        obj = self._wr()
        if obj is not None and self in _live_finalizers:
            _live_finalizers.discard(self)
            return (obj, self._fn, self._args)
        return None


class DeadMemoryError(ValueError, RuntimeError):
    """Use of memory that was freed, or that belonged to a context since reset or closed.

    A ``ValueError`` (bad value passed) and a ``RuntimeError`` (numba.cuda raises
    ``RuntimeError('Freeing dead memory')``), so either ``except`` catches it."""


def _ptr_value(pointer):
    """Int address of ``pointer``: an int, a ctypes pointer/integer (``.value``), or any
    object with ``__int__`` (cuda-bindings ``CUdeviceptr``); None → 0."""
    if type(pointer) is int:
        return pointer
    if pointer is None:
        return 0
    value = getattr(pointer, "value", None)
    if value is not None or isinstance(pointer, ctypes._SimpleCData):
        return int(value or 0)
    try:
        return int(pointer)
    except (TypeError, ValueError):
        raise TypeError(f"pointer must be an int, a ctypes pointer or an object with "
                        f"__int__, got {pointer!r}") from None


def _check_nbytes(size, what="size"):
    """``size`` as a non-negative int; TypeError/ValueError naming it otherwise."""
    if type(size) is not int:
        if isinstance(size, bool) or not hasattr(size, "__index__"):
            raise TypeError(f"{what} must be an int number of bytes, got {size!r} "
                            f"of type {type(size).__name__}")
        size = size.__index__()
    if size < 0:
        raise ValueError(f"{what} must be >= 0 bytes, got {size}")
    return size


class DevicePointerValue(ctypes.c_void_p):
    """A device address as a ``ctypes.c_void_p`` that ``int()`` also reads: numba-cuda's
    ``device_pointer`` is a cuda-bindings ``CUdeviceptr``, and its users write
    ``int(arr.gpu_data.device_pointer)`` to pass the address to a ``CPointer`` kernel
    parameter.  A null pointer is 0."""
    __slots__ = ()

    def __int__(self):
        return self.value or 0

    __index__ = __int__


class MemoryPointer:
    """Device memory (numba.cuda ``MemoryPointer``).

    Arguments: ``context`` (the owning :class:`~cujit.runtime.devices.Context`), ``pointer`` (device
    address: int, ctypes value or ``CUdeviceptr``), ``size`` (bytes), ``owner`` (the object
    that keeps the memory alive; default: this pointer), ``finalizer`` (no-argument callable
    that frees the memory; called once through ``weakref.finalize``).

    Attributes: ``device_pointer_value`` (int), ``device_pointer`` (a ``ctypes.c_void_p``
    that ``int()`` reads), ``device_ctypes_pointer`` (``ctypes.c_size_t``, numba-cuda's type;
    ``c_void_p`` NULL for a NULL pointer), ``handle`` (``device_pointer``: numba-cuda's is a
    ``CUdeviceptr``, which ``int()`` reads the same), ``size`` (bytes), ``owner``,
    ``context``, ``refct`` (1 + the number of live views and ``own()`` references, as numba
    counts them)."""

    # No fixed slots here: the host-memory subclasses also derive from a ctypes array (their
    # buffer protocol), and a C base admits no second base with slots.  AutoFreePointer, the
    # hot allocation path's type, has the slots.
    __cuda_memory__ = True
    #: True for memory a producer exported read-only (a ``__cuda_array_interface__`` with
    #: ``data: (ptr, True)``; arrays/interop.py sets it on the instance): arrays over it are
    #: read-only.  A plain attribute because the launch fast path reads it per array.
    readonly = False

    def __init__(self, context, pointer, size, owner=None, finalizer=None):
        self.context = context
        self.device_pointer_value = _ptr_value(pointer)
        self.size = _check_nbytes(size)
        self._owner = owner
        self.generation = getattr(context, "generation", 0)
        self.refct = 1
        self.is_managed = finalizer is not None
        self._finalizer = weakref.finalize(self, finalizer) if finalizer is not None else None

    # numba.cuda spellings
    @property
    def owner(self):
        return self if self._owner is None else self._owner

    @property
    def device_pointer(self):
        return DevicePointerValue(self.device_pointer_value or None)

    @property
    def device_ctypes_pointer(self):
        p = self.device_pointer_value
        return ctypes.c_size_t(p) if p else ctypes.c_void_p(None)

    @property
    def handle(self):
        return self.device_pointer

    @property
    def _cuda_memsize_(self):
        return self.size

    @property
    def alive(self):
        """False once freed or once its context was reset/closed."""
        ctx = self.context
        if getattr(ctx, "generation", 0) != self.generation or getattr(ctx, "closed", False):
            return False
        root = self.owner
        fin = getattr(root, "_finalizer", None)
        return fin is None or fin.alive

    def _check_alive(self, what):
        if not self.alive:
            raise DeadMemoryError(
                f"cannot {what} device memory at {self.device_pointer_value:#x} "
                f"({self.size} bytes): it was freed, or its context was reset or closed")

    def own(self):
        """Numba compatibility: a reference that keeps this memory alive."""
        return OwnedPointer(self)

    def free(self):
        """Release the memory now (its free is queued on the pending-deallocations queue).

        DeadMemoryError on a second call or when the context was reset; views and non-owning
        pointers have nothing to free (no-op, as numba.cuda)."""
        if self._finalizer is None:
            return
        if not self._finalizer.alive:
            raise DeadMemoryError(f"freeing dead memory at {self.device_pointer_value:#x} "
                                  f"({self.size} bytes): already freed")
        self._check_alive("free")
        self._finalizer()

    def memset(self, byte, count=None, stream=0):
        """Set ``count`` bytes (default: all) to ``byte`` (cuMemsetD8[Async]).  ``stream``: 0
        or a Stream.  ValueError when ``count`` exceeds the size; DeadMemoryError when dead."""
        h = self.context.stream_handle(stream)
        count = self.size if count is None else _check_nbytes(count, "count")
        if count > self.size:
            raise ValueError(f"memset of {count} bytes exceeds the {self.size}-byte allocation")
        if not isinstance(byte, int) or not 0 <= byte <= 255:
            raise ValueError(f"memset byte must be an int in 0..255, got {byte!r}")
        self._check_alive("memset")
        if count:
            try:
                get_driver().memset_d8(self.device_pointer_value, byte, count, h)
            except CudaAPIError as exc:
                # a thread that never made the context current (a pool cache hit calls no
                # driver function): make it current and retry once, as allocations do
                if exc.code != CUDA_ERROR_INVALID_CONTEXT or self.context is None:
                    raise
                self.context.make_current()
                get_driver().memset_d8(self.device_pointer_value, byte, count, h)

    def view(self, start, stop=None):
        """Bytes ``[start, stop)`` as a non-owning pointer that keeps this allocation alive:
        a MemoryPointer, within an :class:`OwnedPointer` that counts in the allocation's
        ``refct`` while it lives when the allocation is a MemoryPointer (numba.cuda's).

        IndexError when the range is outside ``[0, size]``; DeadMemoryError when dead."""
        start = _check_nbytes(start, "view start")
        stop = self.size if stop is None else _check_nbytes(stop, "view stop")
        if start > stop or stop > self.size:
            raise IndexError(f"view [{start}:{stop}] outside the {self.size}-byte allocation")
        self._check_alive("view")
        base = self.device_pointer_value
        if not base:
            return self
        v = MemoryPointer.__new__(MemoryPointer)
        v.context = self.context
        v.device_pointer_value = base + start
        v.size = stop - start
        v._owner = self.owner
        v.generation = self.generation
        v.refct = 1
        v.is_managed = False
        v._finalizer = None
        owner = v._owner
        if isinstance(owner, (MemoryPointer, OwnedPointer)):
            return OwnedPointer(owner, v)
        return v

    def __int__(self):
        return self.device_pointer_value

    def __repr__(self):
        return (f"<{type(self).__name__} {self.device_pointer_value:#x} of {self.size} bytes"
                f"{'' if self.alive else ' (dead)'}>")


class AutoFreePointer(MemoryPointer, metaclass=abc.ABCMeta):
    """A MemoryPointer that frees its memory when it dies (what ``memalloc`` returns).

    ``MappedMemory`` and ``ManagedMemory`` count as AutoFreePointers (``isinstance``), as in
    numba.cuda, through ``AutoFreePointer.register``."""

    __slots__ = ("context", "device_pointer_value", "size", "_owner", "_finalizer",
                 "generation", "is_managed", "refct")


def _unref(memptr):
    memptr.refct -= 1


class OwnedPointer:
    """A reference to ``memptr`` that keeps it alive; attributes are forwarded
    (numba.cuda ``OwnedPointer``).  ``view`` (optional) is the pointer presented instead."""

    def __init__(self, memptr, view=None):
        self._mem = memptr
        self._view = memptr if view is None else view
        # counted as numba counts, never freed at 0: the memory lives as long as a Python
        # reference to it does (its finalizer frees it)
        memptr.refct += 1
        weakref.finalize(self, _unref, memptr)

    def __getattr__(self, name):
        return getattr(self._view, name)

    def __int__(self):
        return self._view.device_pointer_value

    def __repr__(self):
        return f"<OwnedPointer of {self._view!r}>"


class _HostBytes(ctypes.Array):
    """The C base that gives host-memory objects the buffer protocol (Python 3.11 has no
    ``__buffer__``): a ctypes ``uint8`` array placed at the host address, never owning it.
    Each size gets its own subclass (ctypes fixes an array's length per type)."""
    _type_ = ctypes.c_uint8
    _length_ = 0


_sized_classes = weakref.WeakValueDictionary()


class _HostMemoryMixin:
    """Host memory objects are host buffers, as numba.cuda's: ``np.ndarray(shape, dtype,
    buffer=mem)``, ``memoryview(mem)`` and ``np.frombuffer(mem)`` view the ``size`` bytes
    at ``host_pointer`` without copying (and keep ``mem`` alive)."""

    def __new__(cls, context, pointer, size, owner=None, finalizer=None):
        size = _check_nbytes(size)
        key = (cls, size)
        sized = _sized_classes.get(key)
        if sized is None:
            sized = type(cls)(cls.__name__, (cls,), {
                "_length_": size, "__module__": cls.__module__,
                "__qualname__": cls.__qualname__, "__doc__": cls.__doc__})
            _sized_classes[key] = sized
        return sized.from_address(_ptr_value(pointer))

    # ctypes makes instances unhashable and sized-sequence-false when empty; a pointer is
    # neither
    __hash__ = object.__hash__

    def __bool__(self):
        return True

    def _init_host(self, pointer, size):
        self.host_pointer = _ptr_value(pointer)
        self._bufptr_ = self.host_pointer
        self._buflen_ = size

    def host_array(self):
        """A uint8 NumPy array over the host bytes (no copy)."""
        import numpy as np
        if not self.size:
            return np.empty(0, np.uint8)
        return np.frombuffer(self, dtype=np.uint8)


class PinnedMemory(_HostMemoryMixin, MemoryPointer, _HostBytes):
    """Page-locked host memory (numba.cuda ``PinnedMemory``): ``host_pointer`` (int),
    ``size`` (bytes), ``owner``; a host buffer (``np.ndarray(..., buffer=mem)``,
    ``memoryview(mem)``).  Not device-addressable (``device_pointer_value`` is the host
    address, as Numba).  Freed/unpinned by its finalizer."""

    def __init__(self, context, pointer, size, owner=None, finalizer=None):
        MemoryPointer.__init__(self, context, pointer, size, owner=owner, finalizer=finalizer)
        self._init_host(pointer, self.size)

    @property
    def handle(self):
        return self.host_pointer

    def view(self, start, stop=None):
        raise TypeError("PinnedMemory has no device views; use host_array() slices")


class MappedMemory(_HostMemoryMixin, MemoryPointer, _HostBytes):
    """Page-locked host memory mapped into the device address space (numba.cuda
    ``MappedMemory``): ``host_pointer`` and ``device_pointer_value``
    (cuMemHostGetDevicePointer); a host buffer over the host side."""

    def __init__(self, context, pointer, size, owner=None, finalizer=None):
        hostptr = _ptr_value(pointer)
        devptr = get_driver().mem_host_get_device_pointer(hostptr) if hostptr else 0
        MemoryPointer.__init__(self, context, devptr, size, owner=owner, finalizer=finalizer)
        self._init_host(hostptr, self.size)

    @property
    def handle(self):
        return self.host_pointer


class ManagedMemory(_HostMemoryMixin, MemoryPointer, _HostBytes):
    """Managed (unified) memory (cuMemAllocManaged): ``host_pointer == device_pointer_value``;
    a host buffer (the driver migrates pages on host access)."""

    def __init__(self, context, pointer, size, owner=None, finalizer=None):
        MemoryPointer.__init__(self, context, pointer, size, owner=owner, finalizer=finalizer)
        self._init_host(self.device_pointer_value, self.size)


AutoFreePointer.register(MappedMemory)
AutoFreePointer.register(ManagedMemory)


class IpcHandle:
    """A CUDA IPC handle of device memory (numba.cuda ``IpcHandle``).

    ``base``: the exported memory (kept alive) or None in the receiving process; ``handle``:
    64 bytes (cuIpcGetMemHandle); ``size`` (bytes); ``source_info``: the exporting device's
    UUID; ``offset``: bytes from the allocation start.  Picklable."""

    def __init__(self, base, handle, size, source_info=None, offset=0):
        self.base = base
        self.handle = bytes(handle)
        self.size = size
        self.source_info = source_info
        self.offset = offset
        self._opened = None

    def open(self, context=None):
        """Open the handle in this process → MemoryPointer (cuIpcOpenMemHandle), closed when
        :meth:`close` is called.  ValueError when already open."""
        if self._opened is not None:
            raise ValueError("IpcHandle is already opened")
        if context is None:
            context = default_context()
        drv = get_driver()
        base = drv.ipc_open_mem_handle(self.handle)
        self._opened = MemoryPointer(context, base, self.size + self.offset)
        return self._opened.view(self.offset)

    def close(self):
        """Close an opened handle (cuIpcCloseMemHandle).  ValueError when not open."""
        if self._opened is None:
            raise ValueError("IpcHandle is not opened")
        get_driver().ipc_close_mem_handle(self._opened.device_pointer_value)
        self._opened = None

    def __reduce__(self):
        return (IpcHandle, (None, self.handle, self.size, self.source_info, self.offset))
