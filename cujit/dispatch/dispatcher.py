"""``@jit``: kernels and device functions, their specialisations, and launches (R-KER-1).

- ``@jit`` / ``@jit(**options)``: a :class:`Dispatcher` that compiles lazily, once per tuple
  of argument types seen at launch (numba.cuda's behaviour).
- ``@jit("void(float32[:], int32)")`` (or a list of signatures): compiled eagerly; launches
  must then match one of the signatures (scalars convert, arrays must match dtype and ndim).
- ``@jit(device=True)``: a :class:`DeviceFunction` that kernels call; in a simulated kernel its
  ``py_func`` runs directly.
- ``kernel[griddim, blockdim]``, ``[griddim, blockdim, stream]``,
  ``[griddim, blockdim, stream, dynamic_shared_bytes]``: launches are asynchronous; host NumPy
  arrays are copied in before and back after the launch (synchronously).

The dispatcher picks the signature and keeps the specialisations; how they are made and
launched is its backend's (:mod:`.backends`, chosen from the driver): the NVVM backend compiles
one with :mod:`.build` (:func:`cujit.nvvm.lowering.compile_to_llvm` → :mod:`.nvvm` (PTX) →
:mod:`.linker` (cubin)), loaded per context by :mod:`.launcher`, which also makes the fast path
the dispatcher installs; the simulator backend validates the configuration against the fake
device's limits and calls :func:`cujit.simulator.kernel.run_kernel`.
"""
import collections
import functools
import importlib
import pickle
import threading
import warnings
import weakref
from time import perf_counter_ns as _now

import numpy as np

from .. import types as ct
from ..numba_types import from_numba_type, is_numba_object, numba_jit_function
from ..kernelstate import state as _state
from . import launcher as _ln
from .launcher import launched as _launched
from . import launch_args as _la
from . import backends as _backends
from .build import CompiledKernel, build_kernel
from .build import target as _target
from ..frontend.errors import CujitCompileError, TypingError
from ..frontend.errors import NumbaInvalidConfigWarning, NumbaPerformanceWarning
from ..frontend.source import DeviceFunctionLike, KernelLike, SourceOwner
from ..frontend.jitoptions import check_launch_bounds as _check_launch_bounds
from ..frontend.jitoptions import check_options as _check_options
from ..frontend.overloads import best_overloads as _best_overloads
from ..frontend.overloads import numba_repr as _numba_repr
from .serialize import as_function, reduce_function
from .serialize import find_by_name as _find_by_name
from .introspect import InspectMixin as _InspectMixin
from .introspect import check_extensions as _check_extensions
from ..runtime.streams import Stream as _Stream
from ..runtime.graphs import capturing as _capturing, keep_for_graph as _keep_for_graph
from ..config import config

__all__ = ["jit", "Dispatcher", "DeviceFunction", "CompiledKernel", "compile_ptx",
           "compile_ptx_for_current_device"]

_OPTIONS = {"device", "link", "debug", "opt", "lineinfo", "cache", "fastmath",
            "max_registers", "inline", "forceinline", "boundscheck", "lto", "extensions",
            "launch_bounds", "shared_memory_carveout"}
_MISSING_CONFIG = ("kernel launch configuration was not specified; launch a kernel with "
                   "kernel[griddim, blockdim](args...), kernel[griddim, blockdim, stream]"
                   "(args...) or kernel[griddim, blockdim, stream, dynamic_shared_bytes](args...)")
_MAX_CONFIGS = 256
_MAX_FAST = 8       # fast paths kept per kernel (argument kinds x threads)
_MIN_GRID_BLOCKS = 128  # fewer blocks get numba's low-occupancy NumbaPerformanceWarning


def jit(func_or_sig=None, device=False, **options):
    """Compile a Python function into a CUDA kernel or device function (numba.cuda.jit).

    ``func_or_sig``: the function, or a signature (string such as ``"void(float32[:])"``, a
    ``Signature``, a tuple of types) or a list of signatures for eager compilation, or None
    when used as ``@jit(...)``.  Options: ``device`` (bool), ``link`` (a list of paths of
    .cu/.ptx/.cubin/.fatbin/.o/.a/.ltoir files or linkable-code objects such as
    ``cujit.CUSource``, linked into the kernel; CUDA C/C++ is compiled with NVRTC), ``lto``
    (link-time optimisation through nvJitLink: the kernel is compiled to LTO-IR),
    ``debug`` (default: ``cujit.config.CUDA_DEBUGINFO_DEFAULT``), ``opt`` (bool or 0–3;
    default: on, off when ``cujit.config.OPT`` is 0, read here as numba-cuda's),
    ``lineinfo``, ``cache`` (on-disk
    cache), ``fastmath``, ``max_registers``, ``extensions`` (numba's argument handlers: objects
    with ``prepare_args(ty, val, **kwargs)``, see :mod:`.introspect`), ``launch_bounds`` (an
    int or 1–3 ints: max threads per block, min blocks per SM, max blocks per cluster),
    ``shared_memory_carveout`` (-1..100 or ``"MaxL1"``/``"MaxShared"``/``"default"``; see
    :mod:`.jitoptions`), ``inline`` (``"always"``: each call from device code is inlined
    into its caller; ``"never"``, the default, leaves it to NVVM; a bool is numba-cuda's
    deprecated spelling of those two; :func:`.jitoptions.check_inline`), ``forceinline``
    (the function gets LLVM's ``alwaysinline`` attribute); ``boundscheck`` is accepted for
    compatibility and ignored.  A kernel (``device=False``) may also be called from another
    kernel or device function: it is then compiled as a device function for the call's
    argument types and may return a value (numba-cuda's behaviour).

    Raises TypeError for an unknown option, a signature of the wrong kind or a ``link`` entry
    that is neither a path nor a linkable-code object, ValueError for a signature string that
    does not parse or a ``link`` path of an unknown extension.
    """
    unknown = set(options) - _OPTIONS
    if unknown:
        raise TypeError(f"jit() got unknown option(s) {sorted(unknown)}; known: "
                        f"{sorted(_OPTIONS)}")
    _check_options(device, options)
    _check_extensions(options.get("extensions"))
    options["device"] = bool(device)
    if "debug" not in options and config.CUDA_DEBUGINFO_DEFAULT:
        options["debug"] = True     # numba's NUMBA_CUDA_DEBUGINFO: the default of debug=
    if "opt" not in options and config.OPT == 0:
        options["opt"] = False      # numba's NUMBA_OPT=0: the default of opt=
    if options.get("debug") and options.get("opt", True):
        warnings.warn(NumbaInvalidConfigWarning(
            "debug=True with opt=True is not supported by CUDA. This may result in a crash - "
            "set debug=False or opt=False."), stacklevel=2)
    if callable(func_or_sig) and not isinstance(func_or_sig, (str, ct.Type, ct.Signature)) \
            and not is_numba_object(func_or_sig):
        return _make(func_or_sig, None, options)
    sigs = None
    if func_or_sig is not None:
        raw = func_or_sig if isinstance(func_or_sig, list) else [func_or_sig]
        sigs = [ct.parse_signature(s) for s in raw]
    # numba: one signature makes a specialised kernel (get_regs_per_thread() and the other
    # resource queries answer for it alone; specialize() refuses it), a list does not
    one = func_or_sig is not None and not isinstance(func_or_sig, list)
    return lambda pyfunc: _make(pyfunc, sigs, options, one)


#: ``kernel.stats`` (numba.cuda's ``_CompileStats``).
CompileStats = collections.namedtuple("CompileStats", ("cache_path", "cache_hits",
                                                       "cache_misses"))


def _plain_key(key):
    """True when every value of launch-configuration tuple ``key`` is an exact int, a tuple
    of exact ints, None or a live stream object: such keys are equal only when the
    configurations are the same, so the configuration cache may use them."""
    for v in key:
        c = v.__class__
        if c is int or v is None:
            continue
        if c is tuple:
            for w in v:
                if w.__class__ is not int:
                    return False
            continue
        if c is _Stream:
            g = v.generation
            if g is not None and g != v.context.generation:
                return False        # destroyed by a reset: validation raises for it
            continue
        if hasattr(v, "__cuda_stream__"):
            continue
        return False
    return True


class _StreamKey:
    """A stream object in a cached launch-configuration key, referred to weakly: it hashes
    and compares as the stream (so the user's ``(grid, block, stream)`` tuple finds the entry
    with one dict lookup) and never keeps it alive; when the stream dies ``forget`` (the
    weakref callback) drops the entry."""
    __slots__ = ("ref", "hash")

    def __init__(self, stream, forget):
        self.ref = weakref.ref(stream, forget)
        self.hash = hash(stream)

    def __hash__(self):
        return self.hash

    def __eq__(self, other):
        s = self.ref()
        return s is other or (s is not None and s == other)


class _HandleKey:
    """A foreign stream object that cannot be referred to weakly (a cuda.core ``Stream`` or
    ``GraphBuilder``: Cython classes without ``__weakref__``) in a cached launch-configuration
    key, by what it is to CUDA: it hashes as the object and compares equal to any object of
    its class whose ``__cuda_stream__`` reports the same handle.  It refers to no object, so
    the cache never keeps a stream alive (the configuration it maps to launches on the
    handle, through a cujit Stream standing for it: :func:`_handle_stream`)."""
    __slots__ = ("cls", "handle", "hash")

    def __init__(self, stream, handle):
        self.cls, self.handle, self.hash = stream.__class__, handle, hash(stream)

    def __hash__(self):
        return self.hash

    def __eq__(self, other):
        if other.__class__ is not self.cls:
            return other is self
        try:
            return other.__cuda_stream__()[1] == self.handle
        except Exception:       # a closed stream: the lookup misses, validation says why
            return False


def _handle_stream(handle):
    """The cujit Stream a configuration cached under a :class:`_HandleKey` holds for its
    stream handle ``handle``: 0, the context's legacy or per-thread default stream, or an
    external stream (never destroyed by cujit)."""
    from ..runtime.devices import current_context
    if not handle:
        return 0
    ctx = current_context()
    if handle == 1:
        return ctx.get_legacy_default_stream()
    if handle == 2:
        return ctx.get_per_thread_default_stream()
    return ctx.create_external_stream(handle)


def _cache_key(key, configs, handle=None):
    """``key`` (a plain launch-configuration tuple) as stored in ``configs``: each stream
    object in it as a :class:`_StreamKey` whose death removes the entry, or, for a foreign
    stream object that cannot be referred to weakly, as a :class:`_HandleKey` of ``handle``
    (the handle the configuration was validated with); None when neither applies (an
    unhashable stream object: such a configuration is not cached)."""
    if all(v is None or v.__class__ is int or v.__class__ is tuple for v in key):
        return key
    stored = []

    def forget(_ref):
        configs.pop(stored[0], None)
    items = []
    for v in key:
        if v is None or v.__class__ is int or v.__class__ is tuple:
            items.append(v)
            continue
        try:
            items.append(_StreamKey(v, forget))
        except TypeError:       # a foreign stream object: no weak reference, or unhashable
            if handle is None or not hasattr(v, "__cuda_stream__"):
                return None
            try:
                items.append(_HandleKey(v, handle))
            except TypeError:   # unhashable
                return None
    stored.append(tuple(items))
    return stored[0]


def _make(pyfunc, sigs, options, specialized=False):
    if isinstance(pyfunc, (Dispatcher, DeviceFunction)):
        pyfunc = pyfunc.py_func
    elif numba_jit_function(pyfunc) is not None:     # cuda.jit(a numba.njit function)
        pyfunc = numba_jit_function(pyfunc)
    if not callable(pyfunc) or not hasattr(pyfunc, "__code__"):
        raise TypeError(f"jit needs a Python function, got {pyfunc!r}")
    if options.get("device"):
        _prefetch_toolchain()
        return DeviceFunction(pyfunc, sigs, options)
    disp = Dispatcher(pyfunc, sigs, options)
    disp._specialized = specialized
    if disp._disk is None or not disp._disk.has_entries():
        _prefetch_toolchain()       # a likely cache hit needs no compiler: leave it unloaded
    return disp


_prefetched = False


def _warm_toolchain():
    try:
        from ..nvvm import lowering  # noqa: F401  (imports llvmlite.ir and the typer)
        from ..nvvm.libnvvm import nvvm_available
        from ..nvvm.linker import nvjitlink_available
        nvvm_available()            # dlopen libNVVM (cuda-pathfinder search)
        nvjitlink_available()
    except Exception:               # reported, if it matters, by the real compile
        pass


def _prefetch_toolchain():
    """Start loading the front end, libNVVM and nvJitLink on a daemon thread the first time a
    kernel is decorated, so that the first launch (typically after the program has created
    its context and copied its data, which release the GIL) finds them loaded: the ≤ 0.5 s
    first compile-and-launch goal.  Off on the simulator and with CUJIT_PREFETCH=0."""
    global _prefetched
    if _prefetched:
        return
    _prefetched = True
    if not config.PREFETCH or _backends.simulator_selected():
        return
    threading.Thread(target=_warm_toolchain, name="cujit-toolchain-prefetch",
                     daemon=True).start()


class DeviceFunction(DeviceFunctionLike, SourceOwner):
    """A ``@jit(device=True)`` function: callable from kernels (the compiler finds it by
    ``_cujit_device_function``, :class:`~.frontend.DeviceFunctionLike`, and compiles
    ``py_func``), or directly inside a simulated kernel.  ``sigs``: the eager signatures
    given, or None.  It keeps its parsed source (:class:`~.frontend.SourceOwner`); the
    typings and code made for it belong to the kernels that call it (a kernel keeps the
    device functions it calls alive, never the other way round)."""

    def __init__(self, py_func, sigs, options):
        self.py_func = py_func
        self.sigs = sigs
        self.targetoptions = dict(options)
        functools.update_wrapper(self, py_func)

    def __call__(self, *args, **kwargs):
        if _state.current is not None:
            return _call_simulated(self.py_func, args, kwargs)
        raise TypeError(f"device function {self.py_func.__name__!r} can only be called from "
                        "a kernel (or from another device function)")

    def __repr__(self):
        return f"<cujit device function {self.py_func.__qualname__}>"

    def __reduce__(self):
        """Pickled by name when its module binds it there, else with its ``py_func`` by
        value (:mod:`.serialize`), its signatures and options; nothing compiled goes
        along."""
        return _reduce_jitted(self, (DeviceFunction, self.sigs, False))

    def __getitem__(self, key):
        raise RuntimeError(f"Cannot compile a device function as a kernel: "
                           f"{self.py_func.__qualname__} is jit(device=True); launch a "
                           f"kernel that calls it")

    def inspect_sass(self, signature=None):
        """RuntimeError: a device function has no SASS of its own (it is compiled into the
        kernels that call it; inspect theirs), as numba.cuda says."""
        raise RuntimeError(f"Cannot inspect SASS of a device function "
                           f"({self.py_func.__qualname__}): inspect the SASS of a kernel "
                           f"that calls it")


def _reduce_jitted(obj, how):
    """``__reduce__`` of a kernel or device function ``obj``; ``how``: ``(class, signatures,
    specialised)`` to rebuild it with when it goes by value."""
    if _find_by_name(obj.__module__, obj.__qualname__) is obj:
        return (_jitted_by_name, (obj.__module__, obj.__qualname__))
    return (_jitted_again, (reduce_function(obj.py_func), obj.targetoptions) + how)


def _jitted_by_name(module, qualname):
    importlib.import_module(module)
    obj = _find_by_name(module, qualname)
    if obj is None:
        raise pickle.UnpicklingError(f"cannot unpickle kernel {module}.{qualname}: the "
                                     f"module no longer defines it")
    return obj


def _jitted_again(reduced, options, cls, sigs, specialized):
    obj = cls(as_function(reduced), sigs, dict(options))
    if cls is Dispatcher:
        obj._specialized = specialized
    return obj


def _configured_again(dispatcher, griddim, blockdim, sharedmem):
    return dispatcher[griddim, blockdim, 0, sharedmem]


def _raise_short(exc):
    """Raise compile error ``exc`` from here, without the compiler's frames under it (numba's
    rule: the message names the user's source line; the frames are the compiler's), unless
    ``config.FULL_TRACEBACKS`` (``NUMBA_FULL_TRACEBACKS``) asks for them."""
    if config.FULL_TRACEBACKS:
        raise exc
    raise exc.with_traceback(None)


def _call_simulated(py_func, args, kwargs):
    """``py_func`` called as a device function by the running simulated thread: it sees
    captured device arrays as the launch's simulated views."""
    block = getattr(_state.current, "block", None)
    if block is not None:
        return block.launch.rebound(py_func)(*args, **kwargs)
    return py_func(*args, **kwargs)


class _Configured(_ln.LaunchConfig):
    """``kernel[griddim, blockdim, stream, sharedmem]``: a validated LaunchConfig bound to its
    kernel; call it with the kernel's arguments."""
    __slots__ = ("dispatcher", "_callbacks")

    def __call__(self, *args, **kwargs):
        d = self.dispatcher
        if kwargs or len(args) != d._nargs:
            args = d._bind(args, kwargs)
        if _capturing and self.stream_handle in _capturing:
            _la.refuse_host_copies_in_capture(args, d.py_func.__name__, self.stream_handle)
            _keep_for_graph(self.stream_handle, *args)     # a graph replays with these
        if self._callbacks:                 # the hot path's one test of the callbacks
            return d._launch_with_callbacks(self, args)
        if _launched.listeners:             # the hot path's one test of the hook point
            return d._launch_prepared(self, args)
        fast = d._fast
        if fast is None or not fast(self, args):
            d._launch_slow(self, args)

    def __repr__(self):
        return f"<{self.dispatcher.py_func.__qualname__}{self.text}>"

    @property
    def config(self):
        """The LaunchConfig (this object)."""
        return self

    @property
    def pre_launch_callbacks(self):
        """numba-cuda's list of host functions called as ``callback(kernel, config)`` right
        before each launch through this object, in order: ``kernel`` the compiled
        specialisation about to run (a ``CompiledKernel``; on the simulator, which compiles
        none, the kernel's dispatcher), ``config`` this object.  A callback must not call
        CUDA (numba-cuda: undefined behaviour); what it raises stops the launch.

        ``kernel[g, b]`` is a fresh object in numba-cuda; cujit reuses configurations, so the
        first read of this list takes this object out of the kernel's cache: later
        ``kernel[g, b]`` get their own, empty list."""
        cbs = self._callbacks
        if cbs is None:
            cbs = self._callbacks = []
            self.dispatcher._forget_config(self)
        return cbs

    def __reduce__(self):
        """``kernel[griddim, blockdim, 0, sharedmem]`` pickled as its kernel and those
        values (numba-cuda's); PicklingError for one on a stream other than the default one
        (a stream belongs to this process's context) and for one with pre-launch callbacks
        (numba-cuda's refusal and words)."""
        if self._callbacks:
            raise pickle.PicklingError(
                "Cannot pickle configured launches with pre-launch callbacks")
        if self.stream_handle != 0:
            raise pickle.PicklingError(
                f"cannot pickle launch configuration {self.text} of kernel "
                f"{self.dispatcher.py_func.__qualname__}: its stream belongs to this process; "
                f"pickle the kernel and configure it after unpickling")
        return (_configured_again, (self.dispatcher, self.griddim, self.blockdim,
                                    self.sharedmem))

    def access_report(self):
        """The kernel's :meth:`access_report` (its last recorded simulated launch, whatever
        the configuration), so ``kernel[grid, block].access_report()`` reads as written."""
        return self.dispatcher.access_report()


class _ConfiguredExt(_Configured):
    """A launch configuration of a kernel with ``extensions=``: the arguments go through the
    handlers first, and what they put in ``retr`` runs after the launch (numba's protocol)."""
    __slots__ = ()

    def __call__(self, *args, **kwargs):
        from .introspect import prepare_args
        if kwargs or len(args) != self.dispatcher._nargs:
            args = self.dispatcher._bind(args, kwargs)
        args, retr = prepare_args(self.dispatcher._extensions, args, self.stream)
        if self._callbacks:
            self.dispatcher._run_callbacks(self, args)
        self.dispatcher._launch_prepared(self, args)
        for r in retr:
            r()


class Overloads(dict):
    """``kernel.overloads``: ``{argtypes: compiled specialisation}``, a snapshot dict that
    also takes Numba's types in its keys (numba-cuda's tests look a specialisation up by
    ``(numba.types.float32[::1], ...)``): a tuple key holding Numba type objects is read as
    the cujit types they convert to (:func:`cujit.numba_types.from_numba_type`).  KeyError
    for a key of no compiled signature, TypeError for a Numba type kernels cannot take."""

    @staticmethod
    def _key(key):
        if isinstance(key, tuple) and any(is_numba_object(t) for t in key):
            return tuple(from_numba_type(t) if is_numba_object(t) else t for t in key)
        return key

    def __getitem__(self, key):
        return super().__getitem__(self._key(key))

    def __contains__(self, key):
        return super().__contains__(self._key(key))

    def get(self, key, default=None):
        return super().get(self._key(key), default)


class _Extensions(list):
    """``kernel.extensions``: the kernel's ``extensions=`` argument handlers as numba's
    dispatcher attribute, a list the program may change (numba-cuda's tests append a handler
    after ``cuda.jit``).  Each handler added is checked as ``jit(extensions=)`` checks it
    (TypeError without ``prepare_args``), and any change drops the kernel's cached launch
    configurations, so that the next ``kernel[...]`` runs the handlers; a configuration
    object the program took before keeps working as it was made."""
    __slots__ = ("_owner",)

    def __init__(self, items, owner):
        super().__init__(items)
        self._owner = weakref.ref(owner)    # the dispatcher owns the list, not the reverse

    def _changed(self, added=()):
        _check_extensions(list(added))
        d = self._owner()
        if d is not None:
            d._configs.clear()

    def append(self, item):
        self._changed((item,))
        super().append(item)

    def extend(self, items):
        items = list(items)
        self._changed(items)
        super().extend(items)

    def insert(self, index, item):
        self._changed((item,))
        super().insert(index, item)

    def __iadd__(self, items):
        self.extend(items)
        return self

    def __setitem__(self, index, value):
        self._changed(value if isinstance(index, slice) else (value,))
        super().__setitem__(index, value)

    def __delitem__(self, index):
        self._changed()
        super().__delitem__(index)

    def remove(self, item):
        self._changed()
        super().remove(item)

    def pop(self, index=-1):
        self._changed()
        return super().pop(index)

    def clear(self):
        self._changed()
        super().clear()


class Dispatcher(_InspectMixin, KernelLike, SourceOwner):
    """A kernel: ``py_func``, ``targetoptions``, specialisations per argument-type tuple.

    ``kernel[griddim, blockdim(, stream(, dynamic_shared_bytes))](*args)`` launches;
    ``compile(sig)`` compiles eagerly; ``inspect_llvm()``/``inspect_asm()`` return the LLVM IR
    and PTX of the compiled signatures; ``signatures`` lists them.  Calling the kernel without
    a launch configuration raises ValueError.

    The dispatcher is the one home of everything made for its kernel: the parsed source
    (:meth:`source`), one CompiledKernel per signature (``_specs``; each holds its modules
    loaded per context, unloaded through the context's deferred queue when it dies), the
    simulator's :attr:`sim_kernel` (typings and typed functions per signature), launch
    configurations and fast paths.  No module-level cache refers to any of it, so dropping
    the dispatcher frees all of it.

    Called from a kernel or device function (:class:`~.frontend.KernelLike`), it is compiled
    as a device function for the call's argument types, into the calling kernel; called by
    a simulated thread, its ``py_func`` runs as a device function does."""

    def __init__(self, py_func, sigs, options):
        self.py_func = py_func
        self.targetoptions = dict(options)
        functools.update_wrapper(self, py_func)
        self._nargs = py_func.__code__.co_argcount
        self._pysig = None          # inspect.Signature, made on the first keyword launch
        self._specs = {}            # argtypes -> CompiledKernel
        self._configs = {}          # launch-config key -> _Configured (streams held weakly)
        # the last configuration's key: ``k[g, b, cuda.stream()](...)`` drops its stream
        # between the lookup and the call, and the launch must find it alive
        self._last_key = None
        self._fast = None           # the last fast path that launched
        self._fasts = []            # other fast paths, tried by the slow path first
        self._lock = threading.RLock()
        self._declared = None       # argtypes tuples of eager signatures, in order
        self._sim_sigs = []         # argtypes launched on the simulator (compiled on demand)
        self._specializations = {}  # argtypes -> Dispatcher (specialize)
        self._specialized = False
        self._sim = None            # the simulator's SimKernel, made at the first launch there
        self._backend = None        # (driver, KernelBackend) of the last slow-path launch
        self._extensions = _Extensions(options.get("extensions") or (), self)
        bounds = _check_launch_bounds(options.get("launch_bounds"))
        self._max_threads = bounds[0] if bounds else None
        self._disk = None
        self._cache_hits = collections.Counter()    # argtypes -> loads from the disk cache
        self._cache_misses = collections.Counter()  # argtypes -> compiles it had no entry for
        if options.get("cache"):
            from .cache import DiskCache
            self._disk = DiskCache(py_func)
        if sigs is not None:
            self._declared = [self._check_sig(s) for s in sigs]
            # a kernel sized by an argument compiles per value, at launch
            eager = () if self.source().sizing_params() else self._declared
            if eager:
                backend = self.backend
                for argtypes in eager:
                    backend.declare(self, argtypes)

    def __repr__(self):
        return f"<cujit kernel {self.py_func.__qualname__}>"

    def __reduce__(self):
        """Pickled by name when its module binds it there (what multiprocessing sends), else
        with its ``py_func`` by value (:mod:`.serialize`), declared signatures and options
        (numba-cuda pickles its dispatchers too); the unpickled kernel compiles afresh, or
        loads from its on-disk cache."""
        sigs = None if self._declared is None else [ct.Signature(None, a) for a in self._declared]
        return _reduce_jitted(self, (Dispatcher, sigs, self._specialized))

    @property
    def extensions(self):
        """The kernel's argument handlers (numba's ``dispatcher.extensions``): the list given
        as ``jit(extensions=[...])``, which may be changed (see :class:`_Extensions`)."""
        return self._extensions

    # -- launch configuration ------------------------------------------------------------
    def __getitem__(self, key):
        try:
            conf = self._configs[key]
        except (KeyError, TypeError):       # TypeError: an unhashable stream object
            return self._configure_key(key)
        # 1.0 == True == 1 (same hash): only a key of plain values may reuse a cached
        # configuration; any other goes through validation (which rejects floats and bools)
        if _plain_key(key):
            self._last_key = key
            return conf
        return self._configure_key(key)

    def configure(self, griddim, blockdim, stream=0, sharedmem=0):
        """``kernel.configure(g, b, stream, sharedmem)`` is ``kernel[g, b, stream, sharedmem]``."""
        return self[griddim, blockdim, stream, sharedmem]

    def _configure_key(self, key):
        if not isinstance(key, tuple) or not 2 <= len(key) <= 4:
            raise ValueError(f"a launch configuration is [griddim, blockdim], [griddim, "
                             f"blockdim, stream] or [griddim, blockdim, stream, "
                             f"dynamic_shared_bytes]; got [{key!r}]")
        g, b, s, sh = (key + (0, 0))[:4]
        conf = self._make_config(g, b, s, sh)
        self._last_key = key
        if not _plain_key(key):
            return conf
        configs = self._configs
        stored = _cache_key(key, configs, conf.stream_handle)
        if stored is None:
            return conf
        if not conf.hold_stream_weakly():
            if not any(isinstance(v, _HandleKey) for v in stored):
                return conf
            # cached by its handle: the configuration holds a cujit Stream for the handle,
            # not the user's object (a cuda.core Stream), which it must not keep alive
            conf.stream = _handle_stream(conf.stream_handle)
        if len(configs) >= _MAX_CONFIGS:
            configs.clear()
        configs[stored] = conf
        return conf

    def _make_config(self, g, b, s, sh):
        from ..runtime.devices import current_context
        from ..driver import get_driver
        ordinal = current_context().device.id
        drv = get_driver()
        conf = _ln.make_config(g, b, s, sh, ordinal, drv.stream_ref,
                               cls=_ConfiguredExt if self._extensions else _Configured)
        conf.dispatcher = self
        conf._callbacks = None
        if config.CUDA_LOW_OCCUPANCY_WARNINGS and not config.DISABLE_PERFORMANCE_WARNINGS \
                and self.backend_for(drv).compiled:
            # numba-cuda's heuristic: a grid of fewer than 128 blocks leaves most of any
            # recent GPU's multiprocessors idle; warned when the configuration is made (it is
            # cached, so once per configuration of a kernel)
            blocks = conf.griddim[0] * conf.griddim[1] * conf.griddim[2]
            if blocks < _MIN_GRID_BLOCKS:
                warnings.warn(NumbaPerformanceWarning(
                    f"Grid size {blocks} will likely result in GPU under-utilization due to "
                    f"low occupancy (kernel {self.py_func.__qualname__}, launch "
                    f"configuration {conf.text})"), stacklevel=4)
        return conf

    def __call__(self, *args, **kwargs):
        if _state.current is not None:
            return _call_simulated(self.py_func, args, kwargs)
        raise ValueError(_MISSING_CONFIG)

    def _forget_config(self, cfg):
        """Drop launch configuration ``cfg`` from the cache (it now has pre-launch callbacks
        of its own, which a later ``kernel[...]`` must not share)."""
        configs = self._configs
        for key, conf in list(configs.items()):
            if conf is cfg:
                del configs[key]

    def _run_callbacks(self, cfg, args):
        """Call ``cfg``'s pre-launch callbacks with the specialisation that ``args`` launch
        (compiled first, as the launch would) and ``cfg``."""
        if self.backend.compiled:
            kernel = self._pick_signature(self._argtypes_of_values(args), args)
        else:
            kernel = self
        for callback in list(cfg._callbacks):
            callback(kernel, cfg)

    def _launch_with_callbacks(self, cfg, args):
        self._run_callbacks(cfg, args)
        self._launch_prepared(cfg, args)

    def _launch_prepared(self, cfg, args):
        """Launch with configuration ``cfg`` and arguments already through the
        ``extensions=`` handlers (what ``_Configured.__call__`` does without them); also
        ``forall``'s launch."""
        t0 = _launched.listeners and _now()
        fast = self._fast
        if fast is None or not fast(cfg, args):
            self._launch_slow(cfg, args)
        if t0:
            _launched.emit(cfg, t0)

    # -- compilation ---------------------------------------------------------------------
    @property
    def signatures(self):
        """The argument-type tuples compiled (on the simulator: launched or declared, each
        compiled when first inspected)."""
        out = list(self._specs)
        for sig in list(self._declared or ()) + self._sim_sigs:
            if sig not in out:
                out.append(sig)
        return out

    @property
    def overloads(self):
        """``{argtypes: compiled specialisation}`` (compiling, on the simulator, what was
        launched there)."""
        self._compile_pending()
        return Overloads(self._specs)

    @property
    def specialized(self):
        """True for a kernel made by :meth:`specialize` (numba.cuda)."""
        return self._specialized

    def _compile_pending(self):
        # a kernel sized by an argument compiles only for the values it was launched with
        declared = [] if self.source().sizing_params() else list(self._declared or ())
        for argtypes in declared + self._sim_sigs:
            self._compiled(argtypes)

    def _argtypes_of_values(self, args):
        self._check_nargs(args)
        name = self.py_func.__qualname__
        return self._match_declared(tuple(_la.classify_arg(name, i, a)
                                          for i, a in enumerate(args)))

    def forall(self, ntasks, tpb=0, stream=0, sharedmem=0):
        """numba.cuda's 1-D launch for ``ntasks`` items: ``kernel.forall(n)(*args)`` runs
        ``ceil(n / tpb)`` blocks of ``tpb`` threads (``tpb=0``: chosen for the kernel).
        TypeError/ValueError for a negative or non-integer ``ntasks`` or ``tpb``."""
        from .introspect import ForAll
        return ForAll(self, ntasks, tpb, stream, sharedmem)

    def compile(self, sig):
        """Compile for signature ``sig`` (string, Signature or tuple of types) now; returns the
        specialisation (``.llvm_ir``, ``.ptx``, ``.cubin``, ``.name``).  Raises TypeError /
        ValueError for a bad signature, TypingError/CompileError for a kernel that does not
        compile, and CompileError when it returns a value (kernels return None)."""
        try:
            return self._compiled(self._check_sig(sig))
        except CujitCompileError as exc:
            _raise_short(exc)

    def _check_sig(self, sig):
        sig = ct.parse_signature(sig)
        if sig.return_type is not None and sig.return_type is not ct.void:
            raise TypeError(f"kernel {self.py_func.__qualname__} must return void, the "
                            f"signature {sig} returns {sig.return_type}")
        if len(sig.args) != self._nargs:
            raise TypeError(f"signature {sig} has {len(sig.args)} argument(s) but kernel "
                            f"{self.py_func.__qualname__} takes {self._nargs}")
        return sig.args

    def _compiled(self, argtypes):
        spec = self._specs.get(argtypes)
        if spec is None:
            with self._lock:
                spec = self._specs.get(argtypes)
                if spec is None:
                    spec = self._build(argtypes, reload=True)
        return spec

    def _build(self, argtypes, reload):
        spec = build_kernel(self.py_func, argtypes, self.targetoptions, self._disk,
                            source=self.source(), reload=reload)
        if self._disk is not None:
            (self._cache_hits if spec.from_cache else self._cache_misses)[argtypes] += 1
        self._specs[argtypes] = spec
        return spec

    def recompile(self):
        """Compile every signature compiled so far again, from the current values of the
        globals it reads, without reading the on-disk cache (whose entries the new code
        replaces, ``cache=True``); later launches run the new code (numba.cuda's
        ``recompile``).  TypingError/CompileError as :meth:`compile`."""
        with self._lock:
            sigs = list(self._specs)
            self._fast = None               # the fast paths call the old code
            self._fasts.clear()
            self._configs.clear()
            try:
                for argtypes in sigs:
                    self._build(argtypes, reload=False)
            except CujitCompileError as exc:
                _raise_short(exc)

    @property
    def stats(self):
        """numba.cuda's ``stats``: ``cache_path`` (the on-disk cache's folder, None without
        ``cache=True``), ``cache_hits`` and ``cache_misses`` (``collections.Counter`` of
        argument-type tuples: specialisations read from the cache, and compiled because it
        had none, in this process)."""
        return CompileStats(self._disk.directory if self._disk is not None else None,
                            self._cache_hits, self._cache_misses)

    def _pick_signature(self, argtypes, values=None):
        """The specialisation for launch argument types ``argtypes`` (and, for parameters
        that size local/shared arrays, their ``values``: one specialisation per value)."""
        spec = self._specs.get(argtypes)
        if spec is not None:
            return spec
        argtypes = self._match_declared(argtypes)
        if values is not None:
            argtypes = self.source().literal_argtypes(argtypes, values)
        return self._compiled(argtypes)

    def _match_declared(self, argtypes):
        """``argtypes`` itself for a lazy kernel; for an eagerly declared one, the declared
        signature the argument types convert to best (numba's overload resolution,
        :mod:`.overloads`).  TypeError when none converts ("No matching definition", numba's
        words) or when the two best convert equally well ("Ambiguous overloading")."""
        declared = self._declared
        if declared is None or argtypes in declared:
            return argtypes
        best = _best_overloads(argtypes, declared)
        if len(best) == 1:
            return best[0]
        name = self.py_func.__qualname__
        if best:
            # numba's text: the function's repr and the types' reprs (Array(float64, 1, ...))
            def listed(types):
                return "(" + ", ".join(map(_numba_repr, types)) + ")"
            raise TypeError(f"Ambiguous overloading for {self.py_func!r} {listed(argtypes)}:\n"
                            + "\n".join(f"{listed(d)} -> none" for d in best[:2])
                            + f"\n(kernel {name}: the two best declared signatures convert "
                            "the arguments equally well; pass arguments of one signature's "
                            "exact types)")
        have = ', '.join(map(str, argtypes))
        raise TypeError(f"No matching definition for argument type(s) {have}: kernel {name} "
                        f"has no signature the arguments convert to; declared signatures: "
                        f"{'; '.join('(' + ', '.join(map(str, d)) + ')' for d in declared)}")

    def specialize(self, *args):
        """A new kernel compiled for the types of ``args`` only (numba.cuda ``specialize``;
        the same object for the same types, kept in :attr:`specializations`).  An argument
        that is a cujit type (``float32[::1]``) stands for a value of that type.
        RuntimeError ("Dispatcher already specialized") on a kernel that is already a
        specialisation or was declared with one signature."""
        if self._specialized:
            raise RuntimeError(f"kernel {self.py_func.__qualname__}: Dispatcher already "
                               f"specialized (by specialize() or a single signature)")
        self._check_nargs(args)
        argtypes = tuple(a if isinstance(a, ct.Type) else ct.typeof(a) for a in args)
        d = self._specializations.get(argtypes)
        if d is None:
            d = Dispatcher(self.py_func, [ct.Signature(None, argtypes)], self.targetoptions)
            d._specialized = True
            self._specializations[argtypes] = d
        return d

    @property
    def specializations(self):
        """``{argtypes: kernel}``: the kernels :meth:`specialize` made from this one."""
        return self._specializations

    # -- launching -----------------------------------------------------------------------
    def _bind(self, args, kwargs):
        """The launch's positional arguments from ``args`` and keyword arguments ``kwargs``,
        the kernel's default values filled in (a cujit extension: numba.cuda kernels take
        neither).  Python's binding rules and words: TypeError for a missing argument, an
        unexpected keyword, several values for one argument or too many positional ones."""
        if not kwargs and not self.py_func.__defaults__:
            self._check_nargs(args)
        sig = self._pysig
        if sig is None:
            import inspect
            sig = self._pysig = inspect.signature(self.py_func)
        try:
            bound = sig.bind(*args, **kwargs)
        except TypeError as exc:
            raise TypeError(f"kernel {self.py_func.__qualname__}(): {exc}") from None
        bound.apply_defaults()
        return bound.args

    def _check_nargs(self, args):
        if len(args) != self._nargs:
            raise TypeError(f"kernel {self.py_func.__qualname__} takes {self._nargs} "
                            f"argument(s) but {len(args)} were given")

    def _launch_slow(self, cfg, args):
        from ..runtime.devices import current_context
        from ..driver import get_driver
        self._check_nargs(args)
        if cfg.stream_dropped():
            raise ValueError(f"the stream of launch configuration {cfg.text} of kernel "
                             f"{self.py_func.__qualname__} no longer exists (the program "
                             f"dropped it): keep the stream alive while launching on it")
        ctx = current_context()
        if cfg.ordinal != ctx.device.id:
            # validated for another device: check this one's limits too, then keep using
            # ``cfg`` (its ``ok`` set may hold kernels of several contexts)
            self._make_config(cfg.griddim, cfg.blockdim, cfg.stream, cfg.sharedmem)
        drv = get_driver()
        backend = self.backend_for(drv)
        args = backend.unwrap_hints(args)
        for i, a in enumerate(args):
            _la.check_alive(i, a.value if isinstance(a, _la._ArgHint) else a,
                            self.py_func.__qualname__)
        h = cfg.stream_handle
        if h > 2 and h not in _capturing and _la.has_host_copies(args) \
                and drv.stream_is_capturing(h):
            # captured by another library (a cuda.core GraphBuilder): refused as in a
            # capture of cujit.graph's, before anything is recorded
            _la.refuse_host_copies_in_capture(args, self.py_func.__name__, h)
        try:
            fast = backend.launch(self, cfg, args, ctx, drv)
        except CujitCompileError as exc:
            _raise_short(exc)
        if fast is not None:
            self._install_fast(fast)

    def backend_for(self, drv):
        """The :class:`~.backends.KernelBackend` that runs this kernel on driver ``drv``
        (chosen by :func:`.backends.backend_of` once per driver and kept here)."""
        held = self._backend
        if held is None or held[0] is not drv:
            held = self._backend = (drv, _backends.backend_of(drv))
        return held[1]

    @property
    def backend(self):
        """The :class:`~.backends.KernelBackend` of this process's driver (the NVVM one when
        no driver can be used: compile-only use)."""
        from ..driver import get_driver
        try:
            drv = get_driver()
        except ImportError:         # CudaSupportError
            return _backends.NVVM
        return self.backend_for(drv)

    @property
    def sim_kernel(self):
        """The simulator's :class:`~cujit.simulator.kernel.SimKernel` of this kernel (its
        typings, typed functions and constant arrays per signature), made on first use."""
        sim = self._sim
        if sim is None:
            with self._lock:
                sim = self._sim
                if sim is None:
                    from ..simulator.kernel import SimKernel
                    try:
                        source = self.source()
                    except TypingError:     # raised again, as the compiler says it, when typed
                        source = None
                    sim = self._sim = SimKernel(self.py_func, source)
        return sim

    def _install_fast(self, fast):
        """Make ``fast`` the first one tried; keep the ``_MAX_FAST`` most recent."""
        self._fast = fast
        fasts = self._fasts
        if fast in fasts:
            fasts.remove(fast)
        fasts.insert(0, fast)
        del fasts[_MAX_FAST:]


def compile_ptx(pyfunc, sig, debug=False, lineinfo=False, device=False, fastmath=False,
                cc=None, opt=True, launch_bounds=None, abi_name=None, lto=False,
                with_links=False, forceinline=False):
    """PTX (str) of ``pyfunc`` for signature ``sig`` and its return type, as
    ``numba.cuda.compile_ptx``: ``(ptx, return_type)``.  ``cc``: target compute capability
    (default ``cujit.config.FORCE_CUDA_CC`` when set, else (9, 0); ``(9, 0, 'a')`` for
    sm_90a); ``device``: compile a device function instead
    of a kernel; ``launch_bounds``: as the jit option (kernels only); ``abi_name``: the
    device function's symbol (a ``cujit.jit`` kernel given as ``pyfunc`` brings its own
    ``launch_bounds`` when none is given here); ``lto``: LTO-IR (bytes) instead of PTX; ``with_links``:
    return ``(code, return_type, linked)``, ``linked`` the ``link=`` code of the declared
    and device functions it calls; ``forceinline``: a device function gets LLVM's
    ``alwaysinline`` attribute (meaningful in LTO-IR).  Needs no GPU.  Raises
    TypingError/CompileError for code that does not compile, TypeError/ValueError for bad
    ``cc`` or ``launch_bounds``."""
    from ..nvvm.lowering import arch_target, compile_to_llvm
    from ..nvvm.libnvvm import compile_ptx as _ptx
    if isinstance(pyfunc, Dispatcher) and launch_bounds is None:
        # the kernel's own bounds, as its launches compile it
        launch_bounds = pyfunc.targetoptions.get("launch_bounds")
    if isinstance(pyfunc, (Dispatcher, DeviceFunction)):
        pyfunc = pyfunc.py_func
    sig = ct.parse_signature(sig)
    bounds = _check_launch_bounds(launch_bounds)
    if bounds is not None and device:
        raise ValueError("launch_bounds apply to kernels, not device functions (device=True)")
    lowered = compile_to_llvm(pyfunc, sig.args, kernel=not device, debug=bool(debug),
                              lineinfo=bool(lineinfo), launch_bounds=bounds,
                              abi_name=abi_name,
                              return_type=sig.return_type if device else None,
                              forceinline=bool(forceinline) and device)
    cc = arch_target(lowered, tuple(cc) if cc else (config.FORCE_CUDA_CC or (9, 0)))
    code = _ptx(lowered.llvm_ir, cc, opt=3 if opt is True else opt,
                fastmath=fastmath, debug=debug, lineinfo=lineinfo, name=lowered.name, lto=lto)
    restype = getattr(lowered, "return_type", ct.void)
    if with_links:
        return code, restype, tuple(getattr(lowered, "linked", ()))
    return code, restype


def compile_ptx_for_current_device(pyfunc, sig, debug=False, lineinfo=False, device=False,
                                   fastmath=False, opt=True, launch_bounds=None):
    """:func:`compile_ptx` for the current device's compute capability."""
    return compile_ptx(pyfunc, sig, debug=debug, lineinfo=lineinfo, device=device,
                       fastmath=fastmath, cc=_target()[0], opt=opt, launch_bounds=launch_bounds)
