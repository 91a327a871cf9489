"""The launch fast path: launch configurations, device limits, and argument packing.

A launch ``kernel[griddim, blockdim, stream, dynamic_shared_bytes](*args)`` costs, once it has
been seen before: one dict lookup for the configuration (cached per tuple, validated against
the device's limits when first built), then the specialisation's generated ``fast`` function:
identity checks of each argument's type/dtype/ndim/layout, one ``struct.pack_into`` of every
kernel parameter into a preallocated buffer whose slots a preallocated ``void*[]`` already
points at, and the bound ``cuLaunchKernel`` of cuda-bindings.  Foreign arrays (objects with
``__cuda_array_interface__``) and DLPack exporters take it too, their interface read (or
their ``__dlpack__`` called) on every launch (:func:`make_fast`).  Anything unusual (a new
signature, a host array, a different context) falls back to the slow path in
:mod:`cujit.dispatch.dispatcher`, which converts, compiles and validates, then packs through
the same generated code.

Kernel ABI (docs/interfaces.md): an array is its data pointer (u64), ``shape[ndim]`` and
``strides[ndim]`` (i64, bytes); scalars as themselves (bool 1 byte, complex as two floats);
records as a data pointer; tuples as their elements in order.  Each parameter gets its own
slot, aligned to its size, because the driver reads each ``void*`` entry separately.
"""
import ctypes
import struct
import sys
import threading
import warnings
import weakref

import numpy as np

from .. import bf16_scalar
from .. import types as ct
from ..driver.errors import CudaAPIError, CUDA_ERROR_INVALID_VALUE, last_launch
from ..hooks import HookPoint
from ..config import config
from ..frontend.errors import NumbaPerformanceWarning
from ..memory.protocol import has_device_pointer, device_pointer, cuda_core_kind

__all__ = ["LaunchConfig", "normalize_dims", "make_config", "device_limits",
           "check_function_limits", "ArgPacker", "param_layout", "FunctionInfo",
           "LoadedKernel", "load_kernel", "convert_arg", "launch_converted", "make_fast",
           "launched"]

#: Hook point of every kernel launch ``kernel[griddim, blockdim, stream, shared](*args)``,
#: whichever path runs it (the fast path, the slow path that compiles and converts, a kernel
#: with ``extensions=``, a cooperative launch, a simulated one; and a launch made while its
#: stream is captured into a graph, which the graph then replays: see
#: :data:`cujit.runtime.events.graph_launched`): ``(config, started_ns)`` once the launch
#: returned, ``config`` the :class:`LaunchConfig` bound to its kernel (``config.dispatcher``,
#: ``griddim``, ``blockdim``, ``sharedmem``, ``stream_handle``), ``started_ns``
#: ``time.perf_counter_ns()`` when the call began.  A launch that raises is not announced.
launched = HookPoint("launch.launched", ("config", "started_ns"))

_LIMIT_NAMES = ("MAX_THREADS_PER_BLOCK", "MAX_BLOCK_DIM_X", "MAX_BLOCK_DIM_Y",
                "MAX_BLOCK_DIM_Z", "MAX_GRID_DIM_X", "MAX_GRID_DIM_Y", "MAX_GRID_DIM_Z",
                "MAX_SHARED_MEMORY_PER_BLOCK", "MAX_SHARED_MEMORY_PER_BLOCK_OPTIN")
_limits_cache = {}


def device_limits(ordinal):
    """``{attribute name: int}`` of the launch limits of device ``ordinal`` (read once, via
    cuDeviceGetAttribute of the active driver; the simulator's fake device has H200 values)."""
    lim = _limits_cache.get(ordinal)
    if lim is None:
        from ..driver import get_driver
        drv = get_driver()
        lim = {n: int(drv.device_attribute(ordinal, n)) for n in _LIMIT_NAMES}
        _limits_cache[ordinal] = lim
    return lim


def _config_text(griddim, blockdim, stream, sharedmem):
    return f"[{griddim!r}, {blockdim!r}, stream={stream!r}, dynamic_shared_bytes={sharedmem!r}]"


def normalize_dims(value, what, text):
    """``value`` (an int or a tuple/list of 1–3 ints, NumPy ints allowed) → ``(x, y, z)``.

    TypeError for a non-int, ValueError for a wrong length or a value < 1; the message names
    ``what`` (griddim/blockdim) and the whole launch configuration ``text``."""
    if isinstance(value, (tuple, list)):
        dims = tuple(value)
        if not 1 <= len(dims) <= 3:
            # numba's words first (code matches on them), then where it comes from
            raise ValueError(f"{what} must be a sequence of 1, 2 or 3 integers, got "
                             f"{list(dims)!r}: {len(dims)} dimensions in the launch "
                             f"configuration {text}")
    else:
        dims = (value,)
    out = []
    for d in dims:
        if isinstance(d, bool) or not isinstance(d, (int, np.integer)):
            raise TypeError(f"{what} must be a sequence of integers, got {list(dims)!r}: "
                            f"an int or a tuple of 1 to 3 ints is expected, {d!r} is of type "
                            f"{type(d).__name__} (in the launch configuration {text})")
        d = int(d)
        if d < 1:
            raise ValueError(f"{what} values must be >= 1, got {value!r} in the launch "
                             f"configuration {text}")
        out.append(d)
    while len(out) < 3:
        out.append(1)
    return tuple(out)


class LaunchConfig:
    """A validated launch configuration.

    ``griddim``/``blockdim``: 3-tuples of int; ``stream``: the user's stream object (None
    once a configuration that holds it weakly, :meth:`hold_stream_weakly`, outlived it);
    ``stream_handle``: int; ``sharedmem``: dynamic shared bytes; ``nthreads``: threads per
    block; ``largs``: the first eight ``cuLaunchKernel`` arguments after the function
    (grid xyz, block xyz, shared bytes, stream) so the hot path passes them with one ``*``;
    ``cai_stream``: the stream as the CUDA Array Interface and DLPack write it (the handle,
    or 1/2 for the legacy/per-thread default stream), which a foreign array's ``stream`` is
    compared with."""
    __slots__ = ("griddim", "blockdim", "_stream", "stream_handle", "sharedmem", "nthreads",
                 "largs", "text", "ordinal", "ok", "cai_stream")

    def __repr__(self):
        return f"<LaunchConfig {self.text}>"

    @property
    def stream(self):
        s = self._stream
        return s() if s.__class__ is weakref.ref else s

    @stream.setter
    def stream(self, value):
        self._stream = value

    def hold_stream_weakly(self):
        """Refer to the stream weakly from now on (a configuration cached by its kernel must
        not keep a stream the program dropped alive); False when the stream object cannot
        be referred to weakly (then the configuration must not be cached)."""
        s = self._stream
        if s is None or s.__class__ is int or s.__class__ is weakref.ref:
            return True
        try:
            self._stream = weakref.ref(s)
        except TypeError:
            return False
        return True

    def stream_dropped(self):
        """True when the stream this configuration refers to weakly no longer exists."""
        s = self._stream
        return s.__class__ is weakref.ref and s() is None


def make_config(griddim, blockdim, stream, sharedmem, ordinal, cu_stream=None, cls=None):
    """Validate a launch configuration against device ``ordinal``'s limits → LaunchConfig.

    ``stream``: 0, None, a Stream or an object with ``__cuda_stream__`` (TypeError otherwise);
    ``sharedmem``: int >= 0 (TypeError/ValueError).  Block and grid sizes beyond
    MAX_THREADS_PER_BLOCK / MAX_BLOCK_DIM_* / MAX_GRID_DIM_*, and dynamic shared memory beyond
    MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, raise ValueError naming the limit and the value.
    ``cu_stream``: a function mapping the stream handle to what the driver call takes;
    ``cls``: the LaunchConfig subclass to build."""
    from ..runtime.streams import stream_handle
    text = _config_text(griddim, blockdim, stream, sharedmem)
    g = normalize_dims(griddim, "griddim", text)
    b = normalize_dims(blockdim, "blockdim", text)
    if isinstance(sharedmem, bool) or not isinstance(sharedmem, (int, np.integer)):
        raise TypeError(f"dynamic_shared_bytes must be an int, got {sharedmem!r} of type "
                        f"{type(sharedmem).__name__} in the launch configuration {text}")
    sharedmem = int(sharedmem)
    if sharedmem < 0:
        raise ValueError(f"dynamic_shared_bytes must be >= 0, got {sharedmem} in the launch "
                         f"configuration {text}")
    try:
        handle = stream_handle(stream)
    except TypeError as exc:
        raise TypeError(f"{exc} (in the launch configuration {text})") from None
    lim = device_limits(ordinal)
    nthreads = b[0] * b[1] * b[2]
    if nthreads > lim["MAX_THREADS_PER_BLOCK"]:
        raise ValueError(f"blockdim {b} has {nthreads} threads per block, more than the "
                         f"device's MAX_THREADS_PER_BLOCK = {lim['MAX_THREADS_PER_BLOCK']} "
                         f"(launch configuration {text})")
    for axis, v in zip("XYZ", b):
        top = lim["MAX_BLOCK_DIM_" + axis]
        if v > top:
            raise ValueError(f"blockdim.{axis.lower()} = {v} exceeds the device's "
                             f"MAX_BLOCK_DIM_{axis} = {top} (launch configuration {text})")
    for axis, v in zip("XYZ", g):
        top = lim["MAX_GRID_DIM_" + axis]
        if v > top:
            raise ValueError(f"griddim.{axis.lower()} = {v} exceeds the device's "
                             f"MAX_GRID_DIM_{axis} = {top} (launch configuration {text})")
    optin = lim["MAX_SHARED_MEMORY_PER_BLOCK_OPTIN"]
    if sharedmem > optin:
        raise ValueError(f"dynamic shared memory of {sharedmem} bytes exceeds the device's "
                         f"MAX_SHARED_MEMORY_PER_BLOCK_OPTIN = {optin} bytes per block "
                         f"(launch configuration {text})")
    cfg = (cls or LaunchConfig)()
    cfg.griddim, cfg.blockdim, cfg.stream, cfg.stream_handle = g, b, stream, handle
    cfg.sharedmem, cfg.nthreads, cfg.text, cfg.ordinal = sharedmem, nthreads, text, ordinal
    cfg.largs = g + b + (sharedmem, handle if cu_stream is None else cu_stream(handle))
    cfg.ok = set()
    from ..arrays.cai import export_stream_handle
    cfg.cai_stream = export_stream_handle(handle)
    return cfg


class FunctionInfo:
    """A loaded kernel: ``handle`` (int CUfunction), ``max_threads`` (its
    MAX_THREADS_PER_BLOCK, which registers may lower below the device's), ``static_shared``
    (bytes), ``dyn_limit`` (dynamic shared bytes the function may use now without raising
    MAX_DYNAMIC_SHARED_SIZE_BYTES), ``optin`` (the device's opt-in maximum per block)."""
    __slots__ = ("handle", "max_threads", "static_shared", "dyn_limit", "optin", "default_shared",
                 "name", "launch_bound")

    def __init__(self, handle, name, max_threads, static_shared, default_shared, optin,
                 launch_bound=None):
        self.handle, self.name = handle, name
        self.launch_bound = launch_bound
        self.max_threads = max_threads
        self.static_shared = static_shared
        self.default_shared = default_shared
        self.optin = optin
        self.dyn_limit = max(default_shared - static_shared, 0)


def check_launch_bound(cfg, name, max_threads):
    """CudaAPIError(CUDA_ERROR_INVALID_VALUE), what cuLaunchKernel returns for a kernel
    compiled with ``.maxntid``, when configuration ``cfg`` asks more threads per block than
    ``max_threads`` (the kernel's first launch bound; None: unbounded).  The simulator calls
    this too, so both refuse the same launches."""
    if max_threads is not None and cfg.nthreads > max_threads:
        raise CudaAPIError(CUDA_ERROR_INVALID_VALUE,
                           f"kernel {name!r} was compiled with launch_bounds "
                           f"max_threads_per_block={max_threads}; the launch asks "
                           f"{cfg.nthreads} threads per block (launch configuration "
                           f"{cfg.text})", call="cuLaunchKernel")


def check_function_limits(cfg, info, set_attribute):
    """Check ``cfg`` against the kernel's own limits; raise the function's
    MAX_DYNAMIC_SHARED_SIZE_BYTES (``set_attribute(handle, name, value)``, cuFuncSetAttribute)
    when it needs more dynamic shared memory than the default 48 KiB budget allows.

    ValueError naming the limit and the value when threads per block exceed the function's
    MAX_THREADS_PER_BLOCK, or static + dynamic shared bytes exceed the opt-in maximum;
    CudaAPIError(CUDA_ERROR_INVALID_VALUE) beyond its ``launch_bounds``
    (:func:`check_launch_bound`)."""
    check_launch_bound(cfg, info.name, info.launch_bound)
    if cfg.nthreads > info.max_threads:
        raise ValueError(f"kernel {info.name!r} can run at most {info.max_threads} threads per "
                         f"block (its MAX_THREADS_PER_BLOCK, limited by its registers); the "
                         f"launch asks {cfg.nthreads} (launch configuration {cfg.text})")
    if cfg.sharedmem > info.dyn_limit:
        total = info.static_shared + cfg.sharedmem
        if total > info.optin:
            raise ValueError(f"kernel {info.name!r} needs {total} bytes of shared memory per "
                             f"block ({info.static_shared} static + {cfg.sharedmem} dynamic), "
                             f"more than the device's MAX_SHARED_MEMORY_PER_BLOCK_OPTIN = "
                             f"{info.optin} bytes (launch configuration {cfg.text})")
        set_attribute(info.handle, "MAX_DYNAMIC_SHARED_SIZE_BYTES", cfg.sharedmem)
        info.dyn_limit = cfg.sharedmem
    cfg.ok.add(info)


# -- argument packing -----------------------------------------------------------------------
_SCALAR_FMT = {"b": "?", "i1": "b", "u1": "B", "i2": "h", "u2": "H", "i4": "i", "u4": "I",
               "i8": "q", "u8": "Q", "f2": "e", "f4": "f", "f8": "d"}


def _scalar_fmt(t):
    dt = t.dtype
    if dt.kind == "b":
        return "?"
    if dt.kind == "c":
        f = _SCALAR_FMT["f%d" % (dt.itemsize // 2)]
        return f + f
    return _SCALAR_FMT["%s%d" % (dt.kind, dt.itemsize)]


def param_layout(t, expr):
    """``[(struct char, Python expression)]``: the kernel parameters of one argument of cujit
    type ``t`` whose (converted) value is the expression ``expr``.

    Raises TypeError for a type that cannot be a kernel argument."""
    if isinstance(t, ct.Array):
        if t.ndim == 0:
            return [("Q", f"{expr}._data_ptr")]
        return ([("Q", f"{expr}._data_ptr")]
                + [("q", f"{expr}.shape[{i}]") for i in range(t.ndim)]
                + [("q", f"{expr}.strides[{i}]") for i in range(t.ndim)])
    if isinstance(t, ct.Complex):
        f = _scalar_fmt(t)[0]
        return [(f, f"{expr}.real"), (f, f"{expr}.imag")]
    if isinstance(t, (ct.Boolean, ct.Integer, ct.Float)):
        return [(_scalar_fmt(t), expr)]
    if isinstance(t, ct.BFloat16):     # a BF16 or an ml_dtypes.bfloat16: its 16 bits
        return [("H", f"_bf16({expr}).bits")]
    if isinstance(t, ct.Record):
        return [("Q", f"_ptr({expr})")]
    if isinstance(t, (ct.CPointer, ct.RawPointer)):
        return [("Q", expr)]        # a device address (an int), numba's pointer arguments
    if isinstance(t, ct.EnumMember):
        return param_layout(t.dtype, f"{expr}.value")
    if t is ct.none:
        return []       # None: the kernel was compiled for it, nothing is passed
    if isinstance(t, (ct.UniTuple, ct.Tuple)):
        out = []
        for i, et in enumerate(t.types):
            out += param_layout(et, f"{expr}[{i}]")
        return out
    raise TypeError(f"a {t} cannot be passed to a kernel")


def _record_ptr(rec):
    p = device_pointer(rec)
    if p is None:
        p = rec.device_ctypes_pointer.value or 0
    return p


class ArgPacker:
    """Preallocated parameter buffer and ``void*[]`` for one kernel signature.

    ``argtypes``: tuple of cujit types.  ``params`` is the address (int) of the ``void*[]``;
    ``pack(args)`` writes the converted argument values (a tuple) into the buffer, raising
    ``struct.error`` when a value does not fit its parameter type.  ``exprs`` (Python source
    of the packed values, in terms of ``a0, a1, ...``) and ``namespace`` let the dispatcher
    generate a fused fast path."""

    def __init__(self, argtypes):
        self.argtypes = tuple(argtypes)
        items = []
        for i, t in enumerate(self.argtypes):
            items += param_layout(t, f"a{i}")
        fmt, offsets, off = "<", [], 0
        for ch, _ in items:
            size = struct.calcsize("<" + ch)
            pad = -off % size
            fmt += "x" * pad
            off += pad
            offsets.append(off)
            fmt += ch
            off += size
        self.nparams = len(items)
        self.struct = struct.Struct(fmt)
        self.buffer = (ctypes.c_uint64 * max(1, (off + 7) // 8))()    # 8-byte aligned
        base = ctypes.addressof(self.buffer)
        self.param_array = (ctypes.c_void_p * max(1, len(items)))(*[base + o for o in offsets])
        self.params = ctypes.addressof(self.param_array)
        self.exprs = ", ".join(e for _, e in items)
        self.namespace = {"_pack_into": self.struct.pack_into, "_buf": self.buffer,
                          "_ptr": _record_ptr, "_bf16": bf16_scalar.from_storage}
        names = ", ".join(f"a{i}" for i in range(len(self.argtypes)))
        unpack = f"    {names}, = args\n" if self.argtypes else ""
        src = (f"def pack(args):\n{unpack}"
               f"    _pack_into(_buf, 0{', ' if self.exprs else ''}{self.exprs})\n")
        ns = dict(self.namespace)
        exec(compile(src, f"<cujit pack {self.struct.format}>", "exec"), ns)
        self.pack = ns["pack"]

    def values(self):
        """The packed parameter values (tuple), read back from the buffer (for tests)."""
        return self.struct.unpack_from(self.buffer, 0)



# -- loaded kernels and launches -------------------------------------------------------------
class LoadedKernel:
    """A compiled specialisation loaded in one context: ``module`` (keeps it loaded), ``info``
    (FunctionInfo), ``packer`` (ArgPacker), ``lock`` (guards the packer's buffer between
    packing and the launch call), ``context``, ``generation`` (the context's reset count when
    loaded), ``cu_func`` (what cuda-bindings' cuLaunchKernel takes)."""
    __slots__ = ("module", "info", "packer", "lock", "context", "generation", "cu_func", "fasts",
                 "drv")


def _module_image(compiled, drv):
    """``(image, fallback)`` to load: the PTX through the driver's JIT when the driver reads its
    ISA, else the nvJitLink cubin.

    Why PTX first: on the H200 (driver 580) the driver's JIT made the tiled matmul run in
    8.47 ms where nvJitLink 13.0's cubin of the same PTX took 12.55 ms, whatever the linker
    options.  The cubin stays the fallback (a driver too old for the PTX) and is the only
    choice when ``link=`` files were added."""
    from ..nvvm.linker import PTX_VERSION, driver_ptx_isa, fit_ptx_version
    cubin = compiled.cubin
    if cubin is not None and getattr(compiled, "needs_cubin", False):
        return cubin, None
    ptx = compiled.ptx.encode() if isinstance(compiled.ptx, str) else bytes(compiled.ptx)
    version = drv.driver_version()
    m = PTX_VERSION.search(ptx)
    if cubin is not None and m is not None and \
            (int(m.group(1)), int(m.group(2))) > driver_ptx_isa(version):
        return cubin, None
    return fit_ptx_version(ptx, version) + b"\0", cubin


def link_callbacks(files):
    """``(setups, teardowns)``: the ``setup_callback`` and ``teardown_callback`` of the
    linkable-code objects among ``files`` (a kernel's ``link_files``), in link order."""
    setups = tuple(f.setup_callback for f in files if getattr(f, "setup_callback", None))
    teardowns = tuple(f.teardown_callback for f in files
                      if getattr(f, "teardown_callback", None))
    return setups, teardowns


def load_kernel(compiled, ctx, drv):
    """Load ``compiled`` (``.cubin`` and/or ``.ptx``, ``.name``, ``.argtypes``,
    ``.static_shared_bytes``, ``.link_files``) into context ``ctx`` → LoadedKernel (see
    :func:`_module_image` for which image).

    A kernel whose linked code has setup or teardown callbacks is loaded as a CUDA library
    (``ctx.load_library``: cuLibraryLoadData through cuda.core, whose ObjectCode the
    callbacks get, as numba-cuda's) and its setup callbacks run here, once per load, before
    the first launch; every other kernel is a module (cuModuleLoadData)."""
    setups, teardowns = link_callbacks(getattr(compiled, "link_files", ()))
    if setups or teardowns:
        def load(img):
            return ctx.load_library(img, compiled.name, setups, teardowns)
    else:
        load = ctx.load_module
    image, fallback = _module_image(compiled, drv)
    try:
        module = load(image)
    except CudaAPIError:
        if fallback is None:
            raise
        module = load(fallback)
    handle = int(module.get_function(compiled.name))
    lim = device_limits(ctx.device.id)
    try:
        static = int(drv.func_get_attribute(handle, "SHARED_SIZE_BYTES"))
        max_threads = int(drv.func_get_attribute(handle, "MAX_THREADS_PER_BLOCK"))
    except Exception:
        static, max_threads = compiled.static_shared_bytes, lim["MAX_THREADS_PER_BLOCK"]
    lk = LoadedKernel()
    lk.module, lk.context, lk.generation = module, ctx, ctx.generation
    lk.info = FunctionInfo(handle, compiled.name, max_threads, static,
                           lim["MAX_SHARED_MEMORY_PER_BLOCK"],
                           lim["MAX_SHARED_MEMORY_PER_BLOCK_OPTIN"],
                           launch_bound=(getattr(compiled, "launch_bounds", None) or (None,))[0])
    lk.packer = ArgPacker(compiled.argtypes)
    lk.drv = drv
    carveout = getattr(compiled, "shared_memory_carveout", None)
    if carveout is not None:
        apply_carveout(lk, carveout)
    lk.lock = threading.Lock()
    lk.fasts = {}
    ref = drv.function_ref
    lk.cu_func = ref(handle) if ref is not None else handle
    if setups:
        module.setup()
    return lk


def apply_carveout(lk, percent):
    """Set loaded kernel ``lk``'s preferred shared-memory carveout (``percent``: -1..100)
    through cuFuncSetAttribute(CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT)."""
    lk.drv.func_set_attribute(lk.info.handle, "PREFERRED_SHARED_MEMORY_CARVEOUT", int(percent))


_PLAIN_SCALARS = (int, float, bool, complex, bf16_scalar.BF16)


def convert_arg(index, value, stream):
    """A launch value → ``(value to pack, host array to copy back or None, fast_ok)``.

    Device arrays (anything with ``_data_ptr``, including mapped/managed host arrays) and
    scalars pass as they are; host NumPy arrays are copied to the device
    (``cujit.arrays.auto_device``); CUDA-array-interface objects become views; a cuda.core
    ``Buffer`` or ``StridedMemoryView`` becomes the view of its attributes
    (``cujit.arrays.from_cuda_core``: a Buffer as ``uint8[::1]``, as numba-cuda); other
    ``__dlpack__`` objects go through ``from_dlpack``.  ``fast_ok`` says whether later launches may skip
    this conversion (identity checks suffice; None's is its type's)."""
    if value is None:
        return None, None, True
    if has_device_pointer(value):
        return value, None, hasattr(value, "_layout") and not isinstance(value, np.ndarray)
    if hasattr(value, "copy_out") and hasattr(value, "copy_in"):
        from .launch_args import _ArgHint, convert_hint
        if isinstance(value, _ArgHint):
            return convert_hint(index, value, stream, convert_arg)
    if type(value) in _PLAIN_SCALARS or (isinstance(value, np.generic)
                                         and value.dtype.fields is None):
        return value, None, True
    if isinstance(value, np.ndarray):
        from ..arrays import auto_device
        dev, copied = auto_device(value, stream=stream)
        if copied and config.CUDA_WARN_ON_IMPLICIT_COPY \
                and not config.DISABLE_PERFORMANCE_WARNINGS:
            warnings.warn(NumbaPerformanceWarning(
                f"Host array used in CUDA kernel will incur copy overhead to/from device "
                f"(argument {index}, a {value.dtype} array of shape {value.shape}): copy it "
                f"once with cujit.to_device, or pass cujit.In/Out/InOut of it"), stacklevel=6)
        back = value if copied and value.flags.writeable and value.size else None
        return dev, back, False
    if hasattr(value, "__cuda_array_interface__"):
        return _convert_foreign(value, stream)
    if cuda_core_kind(value) is not None:
        from ..arrays import from_cuda_core
        try:
            dev = from_cuda_core(value)
        except (TypeError, ValueError) as exc:      # closed, host memory, no dtype
            raise type(exc)(f"argument {index}: {exc}") from None
        return dev, None, dev.size > 0
    if hasattr(value, "__dlpack__") and hasattr(value, "__dlpack_device__"):
        from ..arrays import from_dlpack
        dev = from_dlpack(value, stream=_consumer_stream(stream))
        return dev, None, dev.size > 0
    if isinstance(value, tuple):
        from .launch_args import convert_tuple
        return convert_tuple(index, value, stream, convert_arg)
    if isinstance(value, np.void) and value.dtype.names:
        from .launch_args import convert_host_record
        return convert_host_record(value, stream)
    return value, None, False


def _consumer_stream(stream):
    """The launch stream as the interface and ``__dlpack__`` write it (1/2 for the default)."""
    from ..runtime.streams import stream_handle
    from ..arrays.cai import export_stream_handle
    return export_stream_handle(stream_handle(stream))


def _handshakes(value, desc):
    """True when a launch orders ``value``'s pending work through DLPack's handshake: its
    interface says nothing of its stream (v2: PyTorch) and it has ``__dlpack__``."""
    return ("stream" not in desc and hasattr(value, "__dlpack__")
            and hasattr(value, "__dlpack_device__"))


def _convert_foreign(value, stream):
    """``convert_arg`` of an object with ``__cuda_array_interface__``: a view of its memory,
    after the launch stream was ordered after the exporter's (the v3 rule: only when its
    ``stream`` is another stream than the launch's, and ``NUMBA_CUDA_ARRAY_INTERFACE_SYNC``
    is on; a v2 object with ``__dlpack__`` orders it itself through DLPack's handshake).
    ``fast_ok`` is True when later launches may read the interface in the fast path."""
    from ..arrays import from_cuda_array_interface, from_dlpack, wait_for_exporter
    from ..config import config
    desc = value.__cuda_array_interface__
    consumer = _consumer_stream(stream)
    sync = config.CUDA_ARRAY_INTERFACE_SYNC
    if isinstance(desc, dict) and _handshakes(value, desc):
        # CAI v2 (PyTorch) says nothing of the producer's stream, so nothing orders its
        # pending work before this launch; DLPack's handshake makes the producer do it.
        dev = from_dlpack(value, stream=consumer if sync else -1)
        return dev, None, _fast_foreign_key(value, desc) is not None
    dev = from_cuda_array_interface(desc, owner=value, sync=False)
    producer = desc.get("stream")
    if producer is not None and sync and int(producer) != consumer:
        wait_for_exporter(int(producer), consumer)
    return dev, None, _fast_foreign_key(value, desc) is not None


def _fast_foreign_key(value, desc):
    """What the fast path's guard of a foreign array checks, as a tuple: ``(type, typestr,
    ndim, strides given, read-only, has a stream entry, handshakes)``; None when the fast
    path cannot take it (records, masks, size 0 or a NULL pointer: the slow path's rules)."""
    try:
        typestr, shape, ptr = desc["typestr"], tuple(desc["shape"]), desc["data"][0]
    except (KeyError, TypeError, IndexError):
        return None
    if desc.get("mask") is not None or not isinstance(typestr, str) or typestr[1:2] == "V" \
            or not ptr:
        return None
    return (type(value), typestr, len(shape), desc.get("strides") is not None,
            bool(desc["data"][1]), "stream" in desc, _handshakes(value, desc))


def _pack_error(kernel_name, argtypes, values, exc):
    for i, (t, v) in enumerate(zip(argtypes, values)):
        items = param_layout(t, "v")
        try:
            struct.pack("<" + "".join(c for c, _ in items),
                        *[eval(e, {"v": v, "_ptr": _record_ptr,
                                   "_bf16": bf16_scalar.from_storage}) for _, e in items])
        except (struct.error, TypeError, AttributeError) as e:
            return TypeError(f"argument {i} of kernel {kernel_name!r} ({v!r:.60}) cannot be "
                             f"passed as {t}: {e}")
    return TypeError(f"the arguments of kernel {kernel_name!r} do not fit its parameter types "
                     f"({', '.join(map(str, argtypes))}): {exc}")


def launch_converted(pick_signature, name, debug, ctx, drv, cfg, args):
    """The slow path of a launch on a real driver: convert the values, pick (or compile) the
    specialisation (``pick_signature(argtypes, values) -> spec``, the dispatcher's), load it in
    ``ctx``, check the kernel's own limits, pack, launch and copy host arrays back.

    Returns the fast launch function for arguments shaped like these (made once per
    specialisation, thread and argument kinds), or None when they cannot take the fast path;
    the dispatcher installs it (this module never touches the dispatcher's state)."""
    from .. import types as ct
    from .launch_args import _ArgHint
    conv, back, fast_ok = [], [], True
    for i, a in enumerate(args):
        v, host, ok = convert_arg(i, a, cfg.stream)
        conv.append(v)
        fast_ok &= ok
        if isinstance(host, list):      # tuples and host records (launch_args)
            back.extend(host)
        elif host is not None:
            back.append((host, v))
    argtypes = []
    for i, v in enumerate(conv):
        try:
            t = ct.typeof(v)
        except (TypeError, ValueError) as exc:
            raise TypeError(f"argument {i} of kernel {name}: {exc}") from None
        a = args[i]
        if isinstance(a, _ArgHint):
            a = a.value         # cuda.In/Out/InOut: typed as the array it wraps
        if isinstance(a, np.ndarray) and not a.flags.writeable and isinstance(t, ct.Array):
            # the device copy of a read-only host array is writable, but the kernel must be
            # typed read-only (as on the simulator and in Numba) so writes are TypingErrors
            t = t.copy(readonly=True)
        argtypes.append(t)
    spec = pick_signature(tuple(argtypes), conv)
    lk = spec.loaded(ctx, drv)
    check_function_limits(cfg, lk.info, drv.func_set_attribute)
    conv = tuple(conv)
    with lk.lock:
        try:
            lk.packer.pack(conv)
        except (struct.error, TypeError, AttributeError) as exc:
            from .launch_args import wrap_declared_ints
            wrapped = wrap_declared_ints(spec.argtypes, conv)
            if wrapped is None:
                raise _pack_error(name, spec.argtypes, conv, exc) from None
            try:
                lk.packer.pack(wrapped)     # a Python int for a narrower declared integer
            except (struct.error, TypeError, AttributeError) as exc2:
                raise _pack_error(name, spec.argtypes, wrapped, exc2) from None
        last_launch[0] = label = f"{name}({', '.join(map(str, spec.argtypes))})"
        coop = bool(getattr(spec, "cooperative", False))
        launch = drv.launch_cooperative_kernel if coop else drv.launch_kernel
        launch(lk.info.handle, *cfg.griddim, *cfg.blockdim, cfg.sharedmem, cfg.stream_handle,
               lk.packer.params)
    if debug:       # numba.cuda: a device exception is raised on the host after the launch
        from ..nvvm.lower_exceptions import check_after_launch
        check_after_launch(spec, lk, drv, name, cfg.stream_handle)
    for host, dev in back:
        if hasattr(host, "copy_back"):
            host.copy_back(dev, cfg.stream)
        else:
            dev.copy_to_host(host, stream=cfg.stream)
    if back and cfg.stream_handle:
        drv.stream_synchronize(cfg.stream_handle)
    if fast_ok and not debug and not coop and drv.raw_launch is not None:
        literals = spec.literal_args
        key = (threading.get_ident(),) + tuple(
            _fast_arg_key(a, c) for a, c in zip(args, conv)) + tuple(sorted(literals.items()))
        f = lk.fasts.get(key)
        if f is None:
            f = lk.fasts[key] = make_fast(lk, args, drv, label, literals, conv)
        return f
    return None


def _fast_arg_key(a, c):
    """What makes launch value ``a`` (converted to ``c``) need a fast function of its own:
    a device array's type, dtype, ndim and layout; a foreign array's interface key; an
    imported one's (DLPack, cuda.core objects) dtype, ndim, layout and read-only flag; a
    scalar's type."""
    if _imported_each_launch(a):
        return (type(a), c.dtype, c.ndim, c._layout, bool(c._readonly))
    if hasattr(a, "_layout"):
        return (type(a), a.dtype, a.ndim, a._layout)
    if hasattr(a, "__cuda_array_interface__"):
        return _fast_foreign_key(a, a.__cuda_array_interface__)
    return type(a)


def _imported_each_launch(a):
    """True for a launch value the fast path imports afresh on every launch: a cuda.core
    Buffer or StridedMemoryView (read from its attributes; a view has a ``_layout`` of
    cuda.core's own, no cujit layout) or another DLPack-only exporter."""
    return cuda_core_kind(a) is not None or _dlpack_only(a)


def _raise_launch(err, cfg):
    from ..driver.errors import api_error
    raise api_error(err, f"launch configuration {cfg.text}", "cuLaunchKernel")


def _foreign_exprs(i, a, t):
    """The packed values of foreign argument ``i`` (spec type ``t``), in terms of the names
    :func:`_foreign_guard` binds: ``p{i}`` (data), ``s{i}`` (shape), ``t{i}`` (strides)."""
    if t.ndim == 0:
        return [f"p{i}[0]"]
    out = [f"p{i}[0]"] + [f"s{i}[{k}]" for k in range(t.ndim)]
    if a.__cuda_array_interface__.get("strides") is not None:
        return out + [f"t{i}[{k}]" for k in range(t.ndim)]
    # no strides: C-contiguous, each stride the item size times the extents after it
    isz = np.dtype(a.__cuda_array_interface__["typestr"]).itemsize
    return out + ["*".join([f"s{i}[{j}]" for j in range(k + 1, t.ndim)] + [str(isz)])
                  for k in range(t.ndim)]


def _foreign_guard(i, a, t, ns):
    """Lines of the fast path that read foreign argument ``i``'s interface once and return
    False unless it matches what the specialisation was made for (:func:`make_fast`)."""
    desc = a.__cuda_array_interface__
    ns[f"TS{i}"] = desc["typestr"]
    ns[f"W{i}"] = not desc["data"][1]
    # a negative extent would pack (it fits an i64): the slow path refuses it by name
    conds = [f"d{i}['typestr'] != TS{i}", f"len(s{i}) != {t.ndim}",
             f"(not p{i}[1]) is not W{i}", f"not p{i}[0]", f"d{i}.get('mask') is not None"] + [
        f"s{i}[{k}] < 0" for k in range(t.ndim)]
    lines = [f"        d{i} = a{i}.__cuda_array_interface__",
             f"        s{i} = d{i}['shape']",
             f"        p{i} = d{i}['data']"]
    if desc.get("strides") is not None:
        lines.append(f"        t{i} = d{i}['strides']")
        conds.append(f"len(t{i}) != {t.ndim}")
        if t.layout != "A":
            isz = np.dtype(desc["typestr"]).itemsize
            conds.append(f"LAYOUT(s{i}, t{i}, {isz}) != {t.layout!r}")
    else:
        conds.append(f"d{i}.get('strides') is not None")
    if "stream" in desc:
        lines.append(f"        st{i} = d{i}['stream']")
        # 0 (forbidden) and other types: the slow path says what is wrong
        conds.append(f"st{i} is not None and (st{i}.__class__ is not int or st{i} == 0)")
    else:
        conds.append(f"'stream' in d{i}")
    lines += [f"        if {' or '.join(conds)}:", "            return False"]
    return lines


def _torch_tensor(value):
    """``(raw_stream, current_device)``, torch's C calls the fast path reads
    (``_cuda_getCurrentRawStream``, the one Triton's launcher uses, and ``_cuda_getDevice``),
    when ``value`` is exactly a ``torch.Tensor`` and this PyTorch has both; None otherwise.
    torch is never imported here: a tensor passed in means the user's code already did."""
    t = type(value)
    if t.__name__ != "Tensor" or t.__module__ != "torch":
        return None
    torch = sys.modules.get("torch")
    if torch is None or torch.Tensor is not t:
        return None
    c = getattr(torch, "_C", None)
    raw, cur = (getattr(c, "_cuda_getCurrentRawStream", None),
                getattr(c, "_cuda_getDevice", None))
    return None if raw is None or cur is None else (raw, cur)


def _torch_exprs(i, t, isz):
    """The packed values of tensor argument ``i``: its pointer, shape and strides in bytes
    (``stride()`` counts elements; a C-contiguous specialisation packs C's strides made from
    the shape), in the names :func:`_torch_guard` binds."""
    if t.ndim == 0:
        return [f"p{i}"]
    out = [f"p{i}"] + [f"s{i}[{k}]" for k in range(t.ndim)]
    if t.layout == "C":
        return out + ["*".join([f"s{i}[{j}]" for j in range(k + 1, t.ndim)] + [str(isz)])
                      for k in range(t.ndim)]
    return out + [f"t{i}[{k}] * {isz}" for k in range(t.ndim)]


def _torch_guard(i, a, t, ns):
    """Lines of the fast path that read tensor argument ``i`` through PyTorch's own
    attributes, not its ``__cuda_array_interface__`` (a dict built in Python on each read) nor
    a DLPack capsule per launch (``__dlpack__``'s handshake), and return False unless the
    slow path would take it the same way: same dtype, ndim and layout, no autograd
    and no conjugate bit (``__dlpack__`` refuses both), on torch's current device, a
    non-NULL pointer (``dv``: torch's current device, read once per launch by
    :func:`make_fast`, which also refuses the per-thread default stream while synchronising,
    as ``__dlpack__`` does, and makes the handshake after the guards)."""
    ns[f"TD{i}"] = a.dtype
    # no layout read: a sparse tensor's data_ptr() raises RuntimeError, which the fast path
    # takes as "not here" (make_fast), and the slow path refuses it by name
    conds = [f"a{i}.dtype is not TD{i}", f"a{i}.requires_grad",
             f"len(s{i}) != {t.ndim}", f"not p{i}", f"a{i}.get_device() != dv"]
    if getattr(a.dtype, "is_complex", True):
        conds.append(f"a{i}.is_conj()")         # only complex tensors carry the bit
    lines = [f"        p{i} = a{i}.data_ptr()",
             f"        s{i} = a{i}.shape"]
    if t.layout == "C":
        # is_contiguous() is a flag torch keeps: cheaper than reading stride() and checking
        # it here; the strides packed are then C's (_torch_exprs)
        conds.append(f"not a{i}.is_contiguous()")
    else:
        lines.append(f"        t{i} = a{i}.stride()")
        if t.layout != "A":
            conds.append(f"LAYOUT(s{i}, t{i}, 1) != {t.layout!r}")
    return lines + [f"        if {' or '.join(conds)}:", "            return False"]


def _dlpack_only(value):
    """True for a DLPack exporter without ``__cuda_array_interface__`` that is no cujit array
    and no cuda.core object (those are read from their attributes: :func:`_core_guard`)."""
    return (not hasattr(value, "_layout") and not hasattr(value, "__cuda_array_interface__")
            and hasattr(value, "__dlpack__") and hasattr(value, "__dlpack_device__")
            and cuda_core_kind(value) is None)


def _core_guard(i, c, t, ns):
    """Lines of the fast path that read cuda.core argument ``i`` (a ``Buffer`` or a
    ``StridedMemoryView``) through its documented attributes (``cuda_core_parts``: no view
    object, no DLPack capsule) into ``p{i}`` (pointer), ``s{i}`` (shape), ``t{i}`` (byte
    strides), and return False unless they match what the specialisation was made for
    (``c``: this launch's view of it): dtype, ndim, read-only flag, layout, non-NULL."""
    ns[f"D{i}"], ns[f"R{i}"] = c.dtype, bool(c._readonly)
    conds = [f"dt{i} != D{i}", f"len(s{i}) != {c.ndim}", f"ro{i} is not R{i}", f"not p{i}"]
    if t.layout != "A":
        conds.append(f"LAYOUT(s{i}, t{i}, {c.dtype.itemsize}) != {t.layout!r}")
    return [f"        p{i}, s{i}, t{i}, dt{i}, ro{i} = CORE(a{i})",
            f"        if {' or '.join(conds)}:", "            return False"]


def _core_exprs(i, t):
    """The packed values of cuda.core argument ``i``, in the names :func:`_core_guard` binds."""
    if t.ndim == 0:
        return [f"p{i}"]
    return ([f"p{i}"] + [f"s{i}[{k}]" for k in range(t.ndim)]
            + [f"t{i}[{k}]" for k in range(t.ndim)])


def make_fast(lk, args, drv, label=None, literals=None, conv=None):
    """Generate the fast launch function for ``lk`` and arguments shaped like ``args`` (device
    arrays with ``_layout``, scalars, and foreign arrays: objects with
    ``__cuda_array_interface__``): ``fast(cfg, args) -> bool``, False when any check fails
    (then nothing was launched and the caller takes the slow path).

    The function owns a fresh ArgPacker and works only in the thread that made it, so no lock
    is needed between writing the parameter buffer and cuLaunchKernel reading it; other
    threads take the slow path, which locks ``lk.lock``.  ``INFO in cfg.ok`` stands for "this
    configuration was checked against this kernel's limits in its context" (set by the slow
    path), and the context check is the identity of the thread's current context.  ``label``
    (default: the kernel symbol) is recorded as the most recently launched kernel, which a
    later sticky error names (:func:`cujit.driver.errors.api_error`).  ``literals``:
    ``{argument index: value}`` the specialisation was compiled for (arguments sizing a
    local/shared array): other values fail the guard.

    A foreign array's interface is read on every launch (its pointer is never kept: the
    exporter may have freed or moved it) and must match what this specialisation was made
    for: its type, ``typestr``, ndim, whether it gives ``strides`` (and then the layout they
    make), read-only flag, whether it has a ``stream`` entry.  The v3 stream rule is the slow
    path's (:func:`_convert_foreign`): a ``stream`` other than the launch's, with
    ``NUMBA_CUDA_ARRAY_INTERFACE_SYNC`` on, makes the launch stream wait for it
    (:func:`cujit.arrays.wait_for_exporter`); a v2 object with ``__dlpack__`` gets the DLPack
    handshake, ``__dlpack__(stream=launch stream)``, its capsule dropped unused.  A cuda.core
    ``Buffer`` or ``StridedMemoryView`` is read through its attributes on every launch
    (:func:`_core_guard`).  Another DLPack exporter without the interface is imported with
    :func:`cujit.arrays.from_dlpack` on the launch stream every launch, and the view it gives
    packed like a device array (guarded on dtype, ndim, layout, read-only; ``conv``: this
    launch's converted values, whose imports say what the specialisation was made for)."""
    from ..runtime.devices import thread_binding
    from ..arrays import wait_for_exporter, from_dlpack
    from ..arrays.layout import layout_code
    from ..memory.protocol import cuda_core_parts
    from ..config import config
    n = len(args)
    packer = ArgPacker(lk.packer.argtypes)
    ns = dict(packer.namespace)
    guards, foreign, exprs, dlpacks = [], [], [], []
    tensors, cores = [], []
    for i, (a, t) in enumerate(zip(args, packer.argtypes)):
        ns[f"T{i}"] = type(a)
        if cuda_core_kind(a) is not None:
            cores.append((i, conv[i], t))
            exprs += _core_exprs(i, t)
            continue
        if not hasattr(a, "_layout") and hasattr(a, "__cuda_array_interface__"):
            tt = _torch_tensor(a) if isinstance(t, ct.Array) else None
            if tt is not None:
                tensors.append((i, a, t, tt))
                exprs += _torch_exprs(i, t, a.element_size())
                continue
            foreign.append((i, a, t))
            exprs += _foreign_exprs(i, a, t)
            continue
        if _dlpack_only(a):
            # imported through DLPack each launch (the handshake on the launch stream),
            # then packed as the device array it gives; ``c`` is this launch's import
            c = conv[i]
            ns[f"D{i}"], ns[f"R{i}"] = c.dtype, bool(c._readonly)
            dlpacks.append((i, f"v{i}.dtype != D{i} or v{i}.ndim != {c.ndim} or "
                               f"v{i}._layout != {c._layout!r} or not v{i}.size or "
                               f"bool(v{i}._readonly) is not R{i}"))
            exprs += [e for _, e in param_layout(t, f"v{i}")]
            continue
        exprs += [e for _, e in param_layout(t, f"a{i}")]
        if hasattr(a, "_layout"):
            ns[f"D{i}"] = a.dtype
            guard = (f"a{i}.dtype is not D{i} or "
                     f"a{i}.ndim != {int(a.ndim)} or a{i}._layout != {a._layout!r}")
            if hasattr(a, "_readonly"):
                # a read-only import types as a readonly array: another specialisation.  The
                # flag is read off the allocation (a class attribute of MemoryPointer, an
                # instance one on imports) rather than through the ``_readonly`` property: a
                # Python call per array per launch.  Size-0 arrays (no allocation) and
                # allocations of other types fail the lookup and take the slow path.
                if hasattr(type(getattr(a, "gpu_data", None)), "readonly"):
                    guard += (f" or a{i}.gpu_data.readonly is not "
                              f"{bool(a._readonly)}")
                else:
                    guard += f" or bool(a{i}._readonly) is not {bool(a._readonly)}"
            if hasattr(getattr(a, "gpu_data", None), "generation"):
                # memory from before a reset: its address may be a newer allocation's now;
                # the slow path raises DeadMemoryError for it (launch_args.check_alive)
                guard += f" or a{i}.gpu_data.generation != GEN"
            guards.append(guard)
    ns.update(INFO=lk.info, TLS=thread_binding, CTX=lk.context, GEN=lk.generation,
              LAUNCH=drv.raw_launch, FN=lk.cu_func, PARAMS=packer.params,
              RAISE=_raise_launch, _StructError=struct.error, get_ident=threading.get_ident,
              OWNER=threading.get_ident(), _packer=packer, LAST=last_launch,
              NAME=label or lk.info.name, WAIT=wait_for_exporter, CONFIG=config,
              LAYOUT=layout_code, DLPACK=from_dlpack, CORE=cuda_core_parts)
    types = []
    for i, a in enumerate(args):
        # ``x.__class__`` is ``type(x)`` for the built-in scalar types (it cannot be assigned
        # on them) and a third cheaper: it matters with many arguments (256 scalars)
        if type(a) in _PLAIN_SCALARS or isinstance(a, np.generic):
            types.append(f"a{i}.__class__ is not T{i}")
        else:
            types.append(f"type(a{i}) is not T{i}")
    literal_checks = [f"a{i} != {int(v)}" for i, v in sorted((literals or {}).items())]
    checks = ["INFO not in cfg.ok", "get_ident() != OWNER"] + types + literal_checks + guards + [
        "TLS.ctx is not CTX", "CTX.generation != GEN"]
    if exprs == [f"a{i}" for i in range(n)] and n:
        packed = "*args"        # scalars only, each its own parameter, in order
    else:
        packed = ", ".join(exprs)
    lines = ["def fast(cfg, args):", "    try:",
             f"        {''.join(f'a{i}, ' for i in range(n)) or '()'} = args",
             f"        if {' or '.join(checks)}:",
             "            return False"]
    for i, a, t in foreign:
        lines += _foreign_guard(i, a, t, ns)
    if tensors:
        # torch's current device, read once: each tensor must be on it (__dlpack__'s rule),
        # and the per-thread default stream is refused while synchronising, as it refuses it
        lines += ["        dv = TCUR()",
                  "        if cfg.cai_stream == 2 and CONFIG.CUDA_ARRAY_INTERFACE_SYNC:",
                  "            return False"]
    if tensors:
        ns["TRAW"], ns["TCUR"] = tensors[0][3]
    for i, a, t, _ in tensors:
        lines += _torch_guard(i, a, t, ns)
    for i, guard in dlpacks:
        lines += [f"        v{i} = DLPACK(a{i}, stream=cfg.cai_stream)",
                  f"        if {guard}:", "            return False"]
    for i, c, t in cores:
        lines += _core_guard(i, c, t, ns)
    lines += [f"        _pack_into(_buf, 0{', ' if exprs else ''}{packed})",
              # a wrong argument count (unpacking), a thread without a current context
              # (TLS.ctx), a malformed interface and a value that does not fit its parameter
              # all mean "not here": the slow path raises the clear error
              # (RuntimeError: a torch tensor's data_ptr() or a closed cuda.core Buffer's)
              "    except (ValueError, AttributeError, TypeError, KeyError, IndexError, "
              f"_StructError{', RuntimeError' if tensors or cores else ''}):",
              "        return False"]
    for i, a, t in foreign:
        if "stream" in a.__cuda_array_interface__:
            lines += [f"    if st{i} is not None and st{i} != cfg.cai_stream and "
                      f"CONFIG.CUDA_ARRAY_INTERFACE_SYNC:",
                      f"        WAIT(st{i}, cfg.cai_stream)"]
        elif _handshakes(a, a.__cuda_array_interface__):
            lines += ["    if CONFIG.CUDA_ARRAY_INTERFACE_SYNC:",
                      f"        a{i}.__dlpack__(stream=cfg.cai_stream)"]
    if tensors:
        # what __dlpack__(stream=launch stream) does, without the capsule: the launch stream
        # waits for torch's current stream when they differ (raw 0, the legacy default, is 1
        # here); once for all tensors, which share that stream
        lines += ["    if CONFIG.CUDA_ARRAY_INTERFACE_SYNC:",
                  "        r = TRAW(dv) or 1",
                  "        if r != cfg.cai_stream:",
                  "            WAIT(r, cfg.cai_stream)"]
    lines += ["    LAST[0] = NAME",
              "    err, = LAUNCH(FN, *cfg.largs, PARAMS, 0)",
              "    if err:",
              "        RAISE(err, cfg)",
              "    return True"]
    exec(compile("\n".join(lines) + "\n", f"<cujit fast launch {lk.info.name}>", "exec"), ns)
    fast = ns["fast"]
    fast.packer = packer
    fast.info = lk.info
    return fast
