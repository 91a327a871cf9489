"""Devices and contexts (numba.cuda ``cudadrv.devices`` / ``Device`` / ``Context``;
docs/requirements.md §1).

Each device has one :class:`Context`, wrapping the device's *primary* context
(cuDevicePrimaryCtxRetain), made current in a thread lazily on first use (cuCtxSetCurrent).
:func:`current_context` is the hot entry point: one thread-local lookup when it is bound.

A context owns a memory manager (EMM, :mod:`cujit.memory`) whose pending-deallocations queue
is also the context's ``deallocations`` (as numba.cuda's users see it): memory, streams,
events and modules are released through that one queue.  Only a plugin without a queue of its
own (a bare ``BaseCUDAMemoryManager``) leaves the context a queue of its own for them.
``reset()`` and :func:`close` end a *generation*: everything allocated before is gone on
the device, so frees of old pointers are dropped, never sent.
"""
import contextlib
import threading
from time import perf_counter_ns as _now

from ..driver import get_driver
from ..driver.errors import CudaSupportError, CudaAPIError
from ..memory.deallocations import is_exiting as _exiting
from ..memory.events import allocated
from .events import synchronized
from .modules import Function, Library, Module

__all__ = ["select_device", "get_current_device", "close", "current_context", "synchronize",
           "defer_cleanup", "Device", "Context", "Module", "Library", "Function", "device_of", "forget_binding",
           "bind_thread"]

# .own: this thread's Context; .bound/.bound_gen: made current; .ctx: .own while bound, else
# None (a flush of another device's queue rebound it; current_context() binds .own again)
_tls = threading.local()
#: The calling thread's binding, public for the launcher's fast path (``thread_binding.ctx
#: is ctx``: the kernel's context is this thread's current one).
thread_binding = _tls
_lock = threading.RLock()
_devices = {}                   # ordinal -> Device
_contexts = {}                  # ordinal -> Context
_main_thread = threading.main_thread()


class Device:
    """A CUDA device (numba.cuda ``Device``).

    Attributes: ``id`` (ordinal, int), ``name`` (str), ``compute_capability`` ((major, minor)),
    ``uuid`` (``'GPU-…'``), and every ``CU_DEVICE_ATTRIBUTE_*`` name in
    :data:`cujit.driver.api.DEVICE_ATTRIBUTES` as an int attribute (``MAX_THREADS_PER_BLOCK``,
    ``CAN_MAP_HOST_MEMORY``, … ; cuDeviceGetAttribute, cached)."""

    def __init__(self, ordinal):
        drv = get_driver()
        n = drv.get_device_count()
        if type(ordinal) is not int and not hasattr(ordinal, "__index__"):
            raise TypeError(f"device id must be an int, got {ordinal!r}")
        ordinal = int(ordinal)
        if not 0 <= ordinal < n:
            raise IndexError(f"device id {ordinal} out of range: {n} device(s) present")
        self.id = ordinal
        self.name = drv.device_name(ordinal)
        self.compute_capability = (drv.device_attribute(ordinal, "COMPUTE_CAPABILITY_MAJOR"),
                                   drv.device_attribute(ordinal, "COMPUTE_CAPABILITY_MINOR"))
        self.uuid = drv.device_uuid(ordinal)
        self.total_memory = drv.device_total_memory(ordinal)

    def __getattr__(self, name):
        from ..driver.api import DEVICE_ATTRIBUTES
        if name not in DEVICE_ATTRIBUTES:
            raise AttributeError(f"Device has no attribute {name!r}")
        value = get_driver().device_attribute(self.id, name)
        setattr(self, name, value)      # cache: attributes never change
        return value

    def get_primary_context(self):
        """The device's :class:`Context` (created and retained on first call)."""
        return _context_for(self.id)

    def reset(self):
        """Reset the primary context (:meth:`Context.reset`)."""
        _context_for(self.id).reset()

    def get_device_identity(self):
        """``{'pci_domain_id', 'pci_bus_id', 'pci_device_id'}`` (numba.cuda; EMM plugins' IPC)."""
        return {"pci_domain_id": self.PCI_DOMAIN_ID, "pci_bus_id": self.PCI_BUS_ID,
                "pci_device_id": self.PCI_DEVICE_ID}

    @property
    def supports_float16(self):
        return self.compute_capability >= (5, 3)

    def __repr__(self):
        return f"<CUDA device {self.id} '{self.name}'>"

    __str__ = __repr__


def _device(ordinal):
    dev = _devices.get(ordinal)
    if dev is None:
        with _lock:
            dev = _devices.get(ordinal)
            if dev is None:
                dev = _devices[ordinal] = Device(ordinal)
    return dev


def device_of(ordinal):
    """The :class:`Device` of ordinal ``ordinal`` (one object per device for the process:
    the one contexts name as ``ctx.device``).  TypeError for an ordinal that is not an int,
    IndexError for one out of range; CudaSupportError when there is no driver."""
    if isinstance(ordinal, bool) or not hasattr(ordinal, "__index__"):
        raise TypeError(f"device id must be an int, got {ordinal!r}")
    ordinal = int(ordinal)
    # against the driver's count now, not the objects made so far: a device made while more
    # were present (a simulator reconfigured) stays in the table
    n = get_driver().get_device_count()
    if not 0 <= ordinal < n:
        raise IndexError(f"device id {ordinal} out of range: {n} device(s) present")
    return _device(ordinal)


class _AsCurrent:
    """:meth:`Context.as_current`'s context manager (a class: deferred-free flushes use it).
    The block's context is also the thread's cujit device (what allocations, launches and
    ``get_current_device()`` use), as in ``with gpus[i]:``; both are put back on exit."""
    __slots__ = ("ctx", "prev", "prev_own", "prev_ctx")

    def __init__(self, ctx):
        self.ctx = ctx

    def __enter__(self):
        self.prev = getattr(_tls, "bound", None)
        self.prev_own = getattr(_tls, "own", None)
        self.prev_ctx = getattr(_tls, "ctx", None)
        self.ctx.make_current()
        _tls.own = _tls.ctx = self.ctx
        return self.ctx

    def __exit__(self, *exc):
        prev = self.prev
        if prev is not None and prev is not self.ctx and not prev.closed:
            prev.make_current()
        _tls.own, _tls.ctx = self.prev_own, self.prev_ctx


class Context:
    """A device's primary context (numba.cuda ``Context``; CUDA Driver API "Primary Context
    Management").  Do not construct directly: use :func:`current_context`,
    ``Device.get_primary_context()`` or :func:`select_device`.

    The contract other layers read (public, never the underscore attributes):
    ``generation`` (int, bumped by ``reset()`` and :func:`close`: an object that recorded an
    older one is dead), ``closed`` (True after :func:`close`) and ``make_current()`` (bind
    the context to the calling thread; cheap when it already is).

    ``Context(device, handle)``, numba's constructor for a context some other library made
    current, gives cujit's one Context of that device (``device``: a :class:`Device`, an
    ordinal or a cuda-bindings ``CUdevice``) when ``handle`` (int or ``CUcontext``) is the
    device's primary context; RuntimeError for any other context (cujit, as numba, operates
    on primary contexts only); TypeError/IndexError for a bad device."""

    def __new__(cls, device=None, handle=None):
        if handle is None:
            return super().__new__(cls)
        ordinal = device.id if isinstance(device, Device) else device
        if isinstance(ordinal, bool) or not (hasattr(ordinal, "__index__")
                                             or hasattr(ordinal, "__int__")):
            raise TypeError(f"Context(device, handle): device must be a Device, an ordinal "
                            f"or a CUdevice, got {device!r}")
        ctx = _context_for(device_of(int(ordinal)).id)
        if int(handle) != ctx.handle:
            raise RuntimeError(f"cujit cannot operate on non-primary CUDA context "
                               f"{int(handle):x} (the primary context of device "
                               f"{ctx.device.id} is {ctx.handle:x})")
        return ctx

    def __init__(self, device, handle=None):
        if handle is not None:
            return          # __new__ gave the device's existing Context
        from ..memory.deallocations import PendingDeallocs
        from ..memory.managers import memory_manager_class
        drv = get_driver()
        self.device = device
        self._drv = drv
        self.handle = drv.primary_ctx_retain(device.id)
        self._retains = 1
        self._outliving = 0         # managed allocations freed after a reset/close (release.py)
        self.generation = 0
        self.closed = False
        self._streams = {}
        self.peer_access = {}       # peer Context -> bool (runtime/peer.py)
        # stream handle -> Graph capturing it (runtime/graphs.py): reset()/close() end them
        self.captures = {}
        try:
            drv.ctx_set_current(self.handle)
            _tls.bound, _tls.bound_gen, _tls.ctx = self, 0, None   # current_context() rebinds
            # used only while the manager has no queue of its own (see ``deallocations``)
            self._own_deallocations = PendingDeallocs(self, device.total_memory)
            # the setter calls initialize() before anything can allocate
            self.memory_manager = memory_manager_class()(context=self)
        except BaseException:
            # e.g. a bad NUMBA_CUDA_MEMORY_MANAGER: undo the retain, let a later call retry
            self.closed = True
            drv.primary_ctx_release(device.id)
            raise

    # -- thread binding ------------------------------------------------------------------
    def make_current(self):
        """Make this context current in the calling thread, if it is not already."""
        if getattr(_tls, "bound", None) is not self or _tls.bound_gen != self.generation:
            if self.closed:
                raise CudaAPIError(201, f"{self!r} was closed by cujit.close(); use "
                                   "cujit.current_context() for a fresh one", "cuCtxSetCurrent")
            self._drv.ctx_set_current(self.handle)
            _tls.bound = self
            _tls.bound_gen = self.generation
            _tls.ctx = self if getattr(_tls, "own", None) is self else None

    def as_current(self):
        """``with ctx.as_current():`` this context is current in the block, and the thread's
        previous binding is put back after it, so work done for this context from any thread
        (a finalizer flushing its deferred frees, unpinning) does not move the thread's later
        driver calls (copies, allocations) to this context's device."""
        return _AsCurrent(self)

    def push(self):
        """Make the context current in this thread (numba compatibility)."""
        self.make_current()
        _tls.own = _tls.ctx = self

    def pop(self):
        """Numba compatibility: the primary context stays current; nothing to undo."""

    def enable_peer_access(self, peer):
        """Let this context reach ``peer``'s memory (:func:`.peer.enable_peer_access`)."""
        from .peer import enable_peer_access
        return enable_peer_access(self, peer, _tls)

    @property
    def deallocations(self):
        """The context's pending-deallocations queue (a
        :class:`~cujit.memory.PendingDeallocs`): the memory manager's
        ``deallocations`` (numba.cuda: ``del d; ctx.deallocations.clear()`` frees ``d``), which
        also takes the releases of this context's streams, events, modules and graphs.  For a
        plugin without a ``deallocations`` queue (a bare ``BaseCUDAMemoryManager``, whose
        memory is its own to free) the context's own queue, used for those releases only."""
        q = getattr(self.__dict__.get("_memory_manager"), "deallocations", None)
        return q if hasattr(q, "add_item") else self._own_deallocations

    def _queues(self):
        """Every queue this context's frees may wait in (the manager's, and the context's
        own when it was used: before a plugin with a queue was installed, or for a plugin
        without one)."""
        q = self.deallocations
        own = self._own_deallocations
        return [q] if q is own or not len(own) else [q, own]

    def _queue_resource(self, dtor, handle, generation):
        """weakref.finalize target for streams, events and modules: queue ``dtor(handle)`` on
        ``self.deallocations`` unless the context was reset/closed since (resource gone)."""
        try:
            if generation == self.generation and not self.closed and not _exiting():
                self.deallocations.add_item(dtor, handle)
        except Exception:      # finalizers must never raise (interpreter exit)
            pass

    # -- memory --------------------------------------------------------------------------
    @property
    def memory_manager(self):
        """The context's EMM memory manager (replaceable: assigning a manager instance
        routes this context's allocations through it from then on)."""
        return self._memory_manager

    @memory_manager.setter
    def memory_manager(self, manager):
        # numba.cuda initialises the manager whenever it prepares the context for use, so a
        # plugin assigned here (as numba's tests and RMM users do) must see initialize()
        # before its first memalloc.  When initialize() raises, the old manager stays.
        manager.initialize()
        old = self.__dict__.get("_memory_manager")
        old_q = getattr(old, "deallocations", None)
        self._memory_manager = manager
        if hasattr(old_q, "add_item") and old_q is not self.deallocations:
            # the old manager's queue is nobody's to flush from now on: its frees are due
            old_q.clear()
        # The allocation hot path skips one Python call: ctx.memalloc is the built-in
        # manager's own; a third-party plugin's result is checked before arrays use it.
        self.__dict__["memalloc"] = _checked_memalloc(manager)

    def memalloc(self, bytesize):
        """Device memory of ``bytesize`` bytes → :class:`~cujit.memory.MemoryPointer`
        (through the memory manager; see its errors)."""
        return self.memory_manager.memalloc(bytesize)

    def memhostalloc(self, bytesize, mapped=False, portable=False, wc=False):
        """Page-locked host memory → ``PinnedMemory`` (or ``MappedMemory`` when mapped)."""
        return self.memory_manager.memhostalloc(bytesize, mapped=mapped, portable=portable,
                                                wc=wc)

    def mempin(self, owner, pointer, size, mapped=False):
        """Page-lock ``size`` bytes of existing host memory at ``pointer`` (kept alive by
        ``owner``) → ``PinnedMemory``/``MappedMemory``; unpinned at once when it dies."""
        return self.memory_manager.mempin(owner, pointer, size, mapped=mapped)

    def memallocmanaged(self, bytesize, attach_global=True):
        """Managed (unified) memory → ``ManagedMemory``.  Managers without
        ``memallocmanaged`` (third-party plugins) fall back to the built-in host path."""
        mm = self.memory_manager
        fn = getattr(mm, "memallocmanaged", None)
        if fn is not None:
            return fn(bytesize, attach_global=attach_global)
        from ..memory.managers import memallocmanaged_fallback
        return memallocmanaged_fallback(self, self.deallocations, bytesize, attach_global)

    def get_memory_info(self):
        """``MemoryInfo(free, total)`` in bytes, from the memory manager (cuMemGetInfo)."""
        return self.memory_manager.get_memory_info()

    def get_ipc_handle(self, memory):
        return self.memory_manager.get_ipc_handle(memory)

    @contextlib.contextmanager
    def defer_cleanup(self):
        """Suspend flushing of the context's pending queue (the manager's, through its
        ``defer_cleanup``, as numba.cuda) for the block (nestable, exception-safe)."""
        with self.memory_manager.defer_cleanup():
            with self.deallocations.disable():
                yield

    # -- streams, events, modules --------------------------------------------------------
    def create_stream(self):
        """A new stream (cuStreamCreateWithPriority), destroyed through ``deallocations``."""
        from .streams import _new_stream
        self.make_current()
        return _new_stream(self, self._drv.stream_create())

    def stream_handle(self, stream):
        """Driver handle (int) of a ``stream=`` argument (:func:`.streams.stream_handle`), so
        that ``memory/``, below the runtime layer, takes stream arguments without importing it."""
        from .streams import stream_handle
        return stream_handle(stream)

    def create_external_stream(self, ptr):
        """Wrap an existing stream handle (int, or an object with ``__cuda_stream__``); never
        destroyed by cujit.  TypeError for anything else (floats, strings, None, bools)."""
        from .streams import Stream, _EXTERNAL, _cuda_stream_protocol_handle
        proto = None if isinstance(ptr, (bool, float)) else getattr(ptr, "__cuda_stream__", None)
        if proto is not None:
            handle = _cuda_stream_protocol_handle(ptr, proto)
        elif not isinstance(ptr, (bool, float)) and hasattr(ptr, "__index__"):
            handle = ptr.__index__()
        else:
            raise TypeError(f"external_stream expects an int stream handle or an object with "
                            f"__cuda_stream__, got {ptr!r} of type {type(ptr).__name__}")
        if handle < 0:
            raise ValueError(f"stream handle {handle} is negative")
        if handle >> 64:
            raise ValueError(f"stream handle {handle} does not fit in a 64-bit CUstream pointer")
        return Stream(self, handle, _EXTERNAL)

    def _builtin_stream(self, kind, handle):
        s = self._streams.get(kind)
        if s is None:
            from .streams import Stream
            s = self._streams.setdefault(kind, Stream(self, handle, kind))
        return s

    def get_default_stream(self):
        """Default stream: handle 0, or the per-thread default stream (handle 2) when
        ``config.CUDA_PER_THREAD_DEFAULT_STREAM`` is set (read at each call)."""
        from ..config import config
        if config.CUDA_PER_THREAD_DEFAULT_STREAM:
            return self._builtin_stream("per-thread", 2)
        return self._builtin_stream("default", 0)

    def get_legacy_default_stream(self):
        """``CU_STREAM_LEGACY`` (handle 1)."""
        return self._builtin_stream("legacy", 1)

    def get_per_thread_default_stream(self):
        """``CU_STREAM_PER_THREAD`` (handle 2)."""
        return self._builtin_stream("per-thread", 2)

    def create_event(self, timing=True):
        """A new event (cuEventCreate), destroyed through ``deallocations``."""
        from .streams import _new_event
        self.make_current()
        return _new_event(self, self._drv.event_create(timing=bool(timing)), timing)

    def load_module(self, image):
        """Load a cubin/fatbin/PTX image (bytes; PTX NUL-terminated) → :class:`Module`
        (cuModuleLoadData).  Unloaded through ``deallocations`` when the Module dies."""
        if not isinstance(image, (bytes, bytearray, memoryview)):
            raise TypeError(f"module image must be bytes, got {type(image).__name__}")
        self.make_current()
        return Module(self, self._drv.module_load_data(bytes(image)))

    def load_library(self, image, name="", setup_callbacks=(), teardown_callbacks=()):
        """Load a cubin/fatbin/PTX image (bytes) as a CUDA library → :class:`Library`
        (cuLibraryLoadData through cuda.core's ``ObjectCode``; ``name`` (str) names it in
        cuda.core's messages), with the setup and teardown callbacks (sequences of callables
        taking the ObjectCode) that :meth:`Library.setup` and its unload call.  TypeError for
        an image that is not bytes; CudaSupportError without cuda.core; CudaAPIError when
        the image does not load."""
        if not isinstance(image, (bytes, bytearray, memoryview)):
            raise TypeError(f"library image must be bytes, got {type(image).__name__}")
        self.make_current()
        code = self._drv.library_load(bytes(image), name)
        return Library(self, self._drv, code, setup_callbacks, teardown_callbacks)

    def create_module_image(self, image, setup_callbacks=None, teardown_callbacks=None):
        """numba-cuda's ``Context.create_module_image``: :meth:`load_library` of ``image``
        (cubin/fatbin/PTX bytes) with the callbacks (None: none); the setup callbacks run
        when the caller calls ``setup()`` on the result, as numba's."""
        return self.load_library(image, "", setup_callbacks or (), teardown_callbacks or ())

    def create_module_ptx(self, ptx):
        """numba-cuda's ``Context.create_module_ptx``: load PTX text (str, or bytes) →
        :class:`Library`, whose ``get_function(name)`` gives a :class:`Function` with the
        cuda.core ``Kernel`` (``.kernel``) that ``cuda.core.launch`` takes.  TypeError for
        anything but str/bytes; CudaSupportError without cuda.core; CudaAPIError for PTX the
        driver does not accept (here, or under CUDA's lazy loading at ``get_function``)."""
        if isinstance(ptx, str):
            ptx = ptx.encode()
        if not isinstance(ptx, (bytes, bytearray, memoryview)):
            raise TypeError(f"create_module_ptx: ptx must be str or bytes, got "
                            f"{type(ptx).__name__}")
        return self.load_library(ptx)

    def unload_module(self, module):
        """Queue the unload of a :class:`Module` or :class:`Library` now (numba.cuda
        ``Context.unload_module``).  TypeError for anything else."""
        if not isinstance(module, (Module, Library)):
            raise TypeError(f"expected a cujit Module or Library, got {module!r}")
        module.unload()

    # -- whole-context operations --------------------------------------------------------
    def synchronize(self):
        """Wait for all work of the context (cuCtxSynchronize)."""
        self.make_current()
        t0 = synchronized.listeners and _now()
        self._drv.ctx_synchronize()
        if t0:
            synchronized.emit("context", 0, t0)

    def _end_generation(self):
        """Start a new generation, forgetting without driver calls whatever
        :meth:`_release_owned` could not free (a failed free, an EMM plugin's allocations:
        its ``reset()`` is called)."""
        self.generation += 1
        try:
            self.memory_manager.reset()
        finally:
            self.deallocations.drop_all()
            self._own_deallocations.drop_all()
            # Default-stream objects stay valid (fixed handles); created streams are gone.

    def _release_owned(self, why="Context.reset()"):
        """Free every allocation, stream, event and module cujit made in this context, then
        start a new generation.  Never cuDevicePrimaryCtxReset: the primary context is
        shared with CuPy, PyTorch, ... and their resources must survive
        (:mod:`cujit.memory.release`)."""
        from ..memory.release import release_owned
        self.make_current()
        # A capture in progress on one of our streams ends first: the stream is about to be
        # destroyed, and a capture left open refuses every later synchronous call
        # (CUDA_ERROR_STREAM_CAPTURE_IMPLICIT) for good; the synchronise below would
        # invalidate it anyway.  Its `with graph(...)` block then raises.
        for g in list(self.captures.values()):
            g.abandon(why)
        try:
            self._drv.ctx_synchronize()     # kernels in flight may still use the memory
        except CudaAPIError:
            pass                            # a sticky error: the frees will warn
        _, outliving = release_owned(self, self._queues(), self._queue_resource)
        with _lock:
            self._outliving += outliving
        trim = getattr(self.memory_manager, "trim", None)
        if trim is not None:        # a caching manager (the pool) gives its cache back
            try:
                trim()
            except CudaAPIError:
                pass
        self._end_generation()

    def reset(self):
        """Free every allocation, stream, event and module cujit made in this context and
        start a new generation: old pointers are dead (using them raises an error, dropping
        them frees nothing), new allocations work.  Other libraries' resources in the shared
        primary context are untouched (the context is not reset in the driver)."""
        self._release_owned()
        _tls.bound = self
        _tls.bound_gen = self.generation

    def _close(self):
        """Free what cujit made (as :meth:`reset`), then release cujit's retains of the
        primary context (cujit.close); the context itself lives on while another library
        holds it."""
        if self.closed:
            return
        drv = self._drv
        try:
            self._release_owned("cujit.close()")
        finally:
            with _lock:
                self.closed = True
                # managed memory still read through NumPy must stay mapped: one retain stays
                # until the last of it is freed (free_outlived), or the driver would destroy
                # the primary context, and the memory with it, under the live arrays
                keep = 1 if self._outliving else 0
                for _ in range(self._retains - keep):
                    try:
                        drv.primary_ctx_release(self.device.id)
                    except CudaAPIError:
                        break
                self._retains = keep

    def free_outlived(self, dtor, handle):
        """Run ``dtor(handle)`` (cuMemFree) for managed memory that outlived a reset or close
        of this context, once nothing references it (:mod:`cujit.memory.release`): with this
        primary context current in the driver (even after :func:`close`, which kept it
        retained), the calling thread's binding put back afterwards.  After ``close()`` the
        last such free releases the retain kept for them.  The driver's CudaAPIError
        propagates (the finaliser calling this warns)."""
        drv = self._drv
        prev = getattr(_tls, "bound", None)
        try:
            drv.ctx_set_current(self.handle)
            dtor(handle)
        finally:
            if prev is not None and prev is not self and not prev.closed:
                drv.ctx_set_current(prev.handle)
            elif prev is not self:
                _tls.bound = None       # the next make_current() binds again
            with _lock:
                self._outliving -= 1
                release = self.closed and not self._outliving and self._retains
                if release:
                    self._retains = 0
            if release:
                drv.primary_ctx_release(self.device.id)

    def __repr__(self):
        return f"<CUDA context {self.handle:#x} of device {self.device.id}>"


def _context_for(ordinal):
    ctx = _contexts.get(ordinal)
    if ctx is None:
        with _lock:
            ctx = _contexts.get(ordinal)
            if ctx is None:
                ctx = _contexts[ordinal] = Context(_device(ordinal))
    return ctx


def contexts():
    """The contexts made in this process and not closed since (a list, at most one per device
    ordinal); what ``cujit.trace`` wraps allocators of."""
    with _lock:
        return list(_contexts.values())


def current_context():
    """The :class:`Context` of the calling thread's device (device 0 unless
    :func:`select_device` chose another), made current in this thread if needed.
    Raises ``CudaSupportError`` when there is no usable driver or device."""
    ctx = getattr(_tls, "ctx", None)
    if ctx is not None and not ctx.closed:
        return ctx
    ctx = getattr(_tls, "own", None)
    return _attach(0 if ctx is None else ctx.device.id)


def _attach(ordinal):
    drv = get_driver()
    if drv.get_device_count() < 1:
        raise CudaSupportError("no CUDA device found")
    ctx = _context_for(ordinal)
    ctx.make_current()
    _tls.own = _tls.ctx = ctx
    return ctx


def bind_thread():
    """Make the calling thread's context current when no cujit context is bound in it (a
    thread that never used cujit, or after :func:`forget_binding`), as numba's
    ``require_context`` does before a device-array operation; a thread bound already (to
    any context, ``Context.as_current`` included) is left as it is.  Raises
    ``CudaSupportError`` as :func:`current_context`."""
    if getattr(_tls, "bound", None) is None:
        current_context()


def forget_binding():
    """Forget which context cujit made current in the calling thread, keeping its device
    selection: the next use binds it again with the driver (cuCtxSetCurrent).  For code that
    changed the thread's current context behind cujit's back (popped it, as numba's
    ``driver.pop_active_context()``), which cujit's cached binding would otherwise miss."""
    _tls.bound = None
    _tls.ctx = None


def select_device(device_id):
    """Make device ``device_id``'s primary context current in this thread; return its
    :class:`Device`.  TypeError for a non-int, IndexError when out of range."""
    if isinstance(device_id, bool) or not hasattr(device_id, "__index__"):
        raise TypeError(f"device id must be an int, got {device_id!r}")
    n = get_driver().get_device_count()
    if not 0 <= int(device_id) < n:
        raise IndexError(f"device id {device_id} out of range: {n} device(s) present")
    return _attach(int(device_id)).device


def get_current_device():
    """The :class:`Device` of :func:`current_context`."""
    return current_context().device


def _checked_memalloc(manager):
    """``manager.memalloc`` for the built-in managers; for a plugin, a wrapper raising TypeError
    when it returns no device pointer, ValueError when its ``size`` is smaller than asked (a
    copy would overrun other memory).  Numba does not check (docs/interfaces.md)."""
    from ..memory.managers import NumbaCUDAMemoryManager
    from ..memory.pool import PoolMemoryManager
    fn = manager.memalloc
    if type(manager).memalloc in (NumbaCUDAMemoryManager.memalloc, PoolMemoryManager.memalloc):
        return fn
    name = f"{type(manager).__qualname__}.memalloc"
    # a subclass of a built-in manager announces its allocations itself when it calls the
    # built-in memalloc; a plugin's own allocator is announced here
    announce = not isinstance(manager, (NumbaCUDAMemoryManager, PoolMemoryManager))

    def memalloc(bytesize):
        if announce and allocated.listeners:
            return _announced(bytesize)
        mem = fn(bytesize)
        return check(mem, bytesize)

    def _announced(bytesize):
        # a plugin that allocates through a built-in manager is announced by it: announce
        # here only what no manager announced in this thread during the call
        me, inner = threading.get_ident(), []

        def probe(kind, mem, nbytes, stream):
            if threading.get_ident() == me:
                inner.append(nbytes)
        with allocated.listening(probe):
            mem = check(fn(bytesize), bytesize)
        if not inner:
            allocated.emit("device", mem, bytesize, 0)
        return mem

    def check(mem, bytesize):
        ptr = getattr(mem, "device_pointer_value", None)
        if not isinstance(ptr, int) and not (ptr is None and bytesize == 0 and mem is not None):
            raise TypeError(f"EMM plugin {name}({bytesize}) returned {mem!r} of type "
                            f"{type(mem).__name__}; expected a MemoryPointer")
        size = getattr(mem, "size", None)
        if isinstance(size, int) and size < bytesize:
            raise ValueError(f"EMM plugin {name}({bytesize}) returned {size} bytes; "
                             f"{bytesize} bytes were asked for")
        return mem
    return memalloc


def close():
    """Flush pending frees and destroy every context made by cujit (main thread), or detach
    the calling thread (others), as numba.cuda ``close()``.  Old memory pointers are dead."""
    if threading.current_thread() is not _main_thread:
        _tls.__dict__.clear()
        return
    with _lock:
        ctxs = list(_contexts.values())
        _contexts.clear()
        for ctx in ctxs:
            ctx._close()
    _tls.__dict__.clear()


def synchronize():
    """Wait for all work on the current context (cuCtxSynchronize)."""
    current_context().synchronize()


def defer_cleanup():
    """``with cujit.defer_cleanup():`` — no pending frees are flushed inside the block (they
    still queue); nestable; flushing resumes after the outermost exit, also on exceptions."""
    return current_context().defer_cleanup()
