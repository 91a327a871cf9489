"""Building one specialisation of a kernel: the target (the current device's compute
capability, or sm_90 without a driver), the pipeline (typing and lowering in
:mod:`.lowering`, PTX by :mod:`.nvvm`, cubin by :mod:`.linker`, the on-disk cache of
:mod:`.cache`) and :class:`CompiledKernel`, loaded once per context by :mod:`.launcher`.

The dispatcher picks the signature and keeps the specialisations; this module owns no
dispatcher state (it gets the function, the argument types, the options and the cache).
"""
import threading

from .. import types as ct
from ..driver.api import STATIC_SHARED_LIMIT
from ..config import config
from . import launcher as _ln
from ..frontend.errors import CompileError
from ..frontend.jitoptions import carveout_percent, check_launch_bounds
from ..frontend.linkable import LinkableCode, same_entry

__all__ = ["CompiledKernel", "target", "build_kernel", "link_entries", "link_key"]


class CompiledKernel:
    """One specialisation: ``argtypes`` (tuple of cujit types), ``name`` (kernel symbol),
    ``llvm_ir`` (str), ``ptx`` (str), ``cubin`` (bytes, or None without nvJitLink),
    ``ltoir`` (bytes with ``lto=True``, else None), ``link_files`` (the ``link=`` code linked
    in: the kernel's and that of the declared functions it calls), ``static_shared_bytes``,
    ``uses_dynamic_shared``, ``const_bytes``, ``cc`` (target compute
    capability), ``launch_bounds`` (tuple or None), ``shared_memory_carveout`` (percent or
    None: the driver's choice).  Loaded lazily once per context by :meth:`loaded`."""

    def __init__(self, argtypes, entry, cc, launch_bounds=None, carveout=None):
        # IntegerLiteral arguments (they size local/shared arrays) are passed as their base
        # type; the values are this specialisation's (literal_args: {index: value})
        self.literal_args = {i: t.value for i, t in enumerate(argtypes)
                             if isinstance(t, ct.IntegerLiteral)}
        self.argtypes = tuple(t.base if isinstance(t, ct.IntegerLiteral) else t
                              for t in argtypes)
        self.name = entry["name"]
        self.llvm_ir = entry["llvm_ir"]
        self.ptx = entry["ptx"]
        self.cubin = entry["cubin"]
        self.ltoir = entry.get("ltoir")     # bytes: the kernel's LTO-IR (jit(lto=True))
        self.link_files = ()        # the link= entries linked with it (set by build_kernel)
        self.from_cache = False     # read from the on-disk cache (set by build_kernel)
        self.static_shared_bytes = entry["static_shared_bytes"]
        self.uses_dynamic_shared = entry["uses_dynamic_shared"]
        self.const_bytes = entry["const_bytes"]
        # (class, args, SourceLocation, function name) per raise site of a debug kernel (lower_exceptions)
        self.exceptions = entry.get("exceptions") or []
        # calls cg grid.sync(): launched with cuLaunchCooperativeKernel (cooperative.py)
        self.cooperative = bool(entry.get("cooperative", False))
        # extra files given to ``link=`` exist only in the cubin
        self.needs_cubin = bool(entry.get("linked_files", False))
        self.cc = cc
        self.launch_bounds = launch_bounds
        self.shared_memory_carveout = carveout
        self._loaded = {}       # Context -> LoadedKernel
        self._lock = threading.Lock()

    def inspect_llvm(self):
        """The LLVM IR (str) of this specialisation (numba-cuda's ``_Kernel.inspect_llvm``)."""
        return self.llvm_ir

    def inspect_asm(self, cc=None):
        """The PTX (str) of this specialisation, compiled for ``cc`` (numba-cuda's
        ``_Kernel.inspect_asm(cc)``; None: the one it was compiled for).  ValueError for
        another compute capability: a specialisation is compiled for one target.  The
        device's ``(9, 0)`` names its arch-specific ``(9, 0, 'a')`` build too (numba-cuda
        would compile ``sm_90`` PTX afresh for it; this is the PTX that runs)."""
        if cc is not None and tuple(cc)[:2] != tuple(self.cc)[:2]:
            raise ValueError(f"kernel {self.name} was compiled for compute capability "
                             f"{tuple(self.cc)}, not {tuple(cc)}: compile it on (or for) that "
                             "device")
        return self.ptx

    def max_cooperative_grid_blocks(self, blockdim, dynsmemsize=0):
        """The most blocks of ``blockdim`` threads (int or tuple) a cooperative launch of this
        specialisation may have in the current context (numba.cuda's
        ``kernel.overloads[sig].max_cooperative_grid_blocks``, as in its cooperative-groups
        docs example); ValueError for a bad ``blockdim``."""
        from .introspect import cooperative_grid_blocks
        return cooperative_grid_blocks(self, blockdim, dynsmemsize)

    def set_shared_memory_carveout(self, carveout):
        """Prefer ``carveout`` percent of the unified L1/shared storage as shared memory for
        this specialisation (an int -1..100 or ``"MaxL1"``/``"MaxShared"``/``"default"``, as
        the ``shared_memory_carveout`` jit option), in every context it is loaded in now and
        later (cuFuncSetAttribute(CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT); a hint
        the driver may round).  ValueError/TypeError for a bad value (nothing changed)."""
        pct = carveout_percent(carveout)
        with self._lock:
            self.shared_memory_carveout = pct
            loaded = list(self._loaded.values())
        for lk in loaded:
            _ln.apply_carveout(lk, pct)

    def loaded(self, ctx, drv):
        """The :class:`~cujit.dispatch.launcher.LoadedKernel` for ``ctx`` (loading it the
        first time, and again after the context was reset)."""
        lk = self._loaded.get(ctx)
        if lk is None or lk.generation != ctx.generation:
            with self._lock:
                lk = self._loaded.get(ctx)
                if lk is None or lk.generation != ctx.generation:
                    lk = _ln.load_kernel(self, ctx, drv)
                    self._loaded[ctx] = lk
        return lk

    def __repr__(self):
        return f"<compiled kernel {self.name}({', '.join(map(str, self.argtypes))})>"


def target(arch_specific=False):
    """``(compute capability, device ordinal or None)`` to compile for: the current device's,
    or sm_90 when no driver can be used (compile-only); ``cujit.config.FORCE_CUDA_CC``
    instead when it is set (numba-cuda's ``NUMBA_FORCE_CUDA_CC``).  ``arch_specific``: a
    device of compute capability 9.0 or higher gets its architecture-specific target
    (``(9, 0, 'a')``: ``sm_90a``, whose instructions such as ``tensormap.replace`` linked
    CUDA C may use), as numba-cuda compiles the kernels it loads."""
    from ..runtime.devices import current_context
    from ..driver.errors import CudaSupportError
    forced = config.FORCE_CUDA_CC
    try:
        dev = current_context().device
    except CudaSupportError:        # no driver or no device: compile-only use
        return forced or (9, 0), None
    if forced:
        return forced, dev.id
    cc = tuple(dev.compute_capability)
    if arch_specific and cc >= (9, 0):
        cc = cc[:2] + ("a",)
    return cc, dev.id


def build_kernel(py_func, argtypes, options, disk=None, source=None, reload=True):
    """Compile kernel ``py_func`` for ``argtypes`` (tuple of cujit types) with the jit
    ``options`` (dict) for the current device (:func:`target`) → CompiledKernel: lowering to
    NVVM IR, libNVVM (PTX), nvJitLink (cubin, when available); ``disk``: the kernel's
    DiskCache (``cache=True``), read first (unless ``reload`` is False: ``recompile()``) and
    filled after; the result's ``from_cache`` says whether it was read from there;
    ``source``: the kernel's FunctionSource, kept by the dispatcher.  PicklingError when
    ``disk`` is given and the kernel refers to a device array.  Raises TypingError/CompileError
    for code that does not compile, CompileError for static shared memory beyond the
    device's MAX_SHARED_MEMORY_PER_BLOCK."""
    from ..nvvm.libnvvm import compile_ptx
    from ..nvvm.linker import link_cubin, nvjitlink_available
    cc, ordinal = target(arch_specific=True)
    o = options
    bounds = check_launch_bounds(o.get("launch_bounds"))
    opts = {k: o.get(k) for k in ("debug", "opt", "lineinfo", "fastmath", "max_registers",
                                  "inline")}
    opts["launch_bounds"] = bounds
    links = link_entries(o.get("link"))
    opts["link"] = tuple(link_key(p) for p in links)
    lto = bool(o.get("lto"))
    if lto:
        opts["lto"] = True
    entry = key = None
    if disk is not None:
        from .cache import cache_key
        key = cache_key(py_func, argtypes, opts, cc, links)
        entry = disk.load(key) if reload else None
    from_cache = entry is not None
    files = links
    if entry is None:
        from ..nvvm.lowering import arch_target, compile_to_llvm
        lowered = compile_to_llvm(py_func, tuple(argtypes), kernel=True,
                                  debug=bool(o.get("debug")), lineinfo=bool(o.get("lineinfo")),
                                  launch_bounds=bounds, source=source)
        cc = arch_target(lowered, cc)
        limit = (STATIC_SHARED_LIMIT if ordinal is None
                 else _ln.device_limits(ordinal)["MAX_SHARED_MEMORY_PER_BLOCK"])
        static = int(getattr(lowered, "static_shared_bytes", 0) or 0)
        if static > limit:
            raise CompileError(f"kernel {py_func.__qualname__} asks for {static} bytes of "
                               f"static shared memory per block, more than the device's limit "
                               f"of {limit} bytes (MAX_SHARED_MEMORY_PER_BLOCK); use dynamic "
                               f"shared memory (shared.array(0, dtype) and the 4th launch "
                               f"parameter) for more")
        # the code of the declared functions it calls joins the kernel's own link= list
        files = links + tuple(x for x in getattr(lowered, "linked", ())
                              if not any(same_entry(x, y) for y in links))
        opt = o.get("opt")
        nv = dict(opt=3 if opt is None else opt, fastmath=bool(o.get("fastmath")),
                  debug=bool(o.get("debug")), lineinfo=bool(o.get("lineinfo")),
                  name=lowered.name)
        if config.DUMP_LLVM:
            _dump("LLVM DUMP", py_func, lowered.llvm_ir)
        ptx = compile_ptx(lowered.llvm_ir, cc, **nv)
        if config.DUMP_ASSEMBLY:
            _dump("ASSEMBLY", py_func, ptx)
        ltoir = compile_ptx(lowered.llvm_ir, cc, lto=True, **nv) if lto else None
        cubin = None
        if lto or nvjitlink_available():
            # lto needs nvJitLink: link_cubin raises LinkerError saying so when it is absent
            cubin = link_cubin(ltoir if lto else ptx, cc, files=files, ltoir=lto,
                               max_registers=o.get("max_registers"),
                               debug=bool(o.get("debug")), lineinfo=bool(o.get("lineinfo")),
                               name=lowered.name + (".ltoir" if lto else ".ptx"))
        entry = {"name": lowered.name, "llvm_ir": lowered.llvm_ir, "ptx": ptx, "cubin": cubin,
                 "ltoir": ltoir,
                 "static_shared_bytes": static,
                 "uses_dynamic_shared": bool(getattr(lowered, "uses_dynamic_shared", False)),
                 "const_bytes": int(getattr(lowered, "const_bytes", 0) or 0),
                 "linked_files": bool(files),
                 "exceptions": lowered.exceptions,
                 "cooperative": bool(getattr(lowered, "uses_grid_sync", False))}
        if disk is not None:
            disk.save(key, entry)
    kernel = CompiledKernel(argtypes, entry, cc, launch_bounds=bounds,
                            carveout=carveout_percent(o.get("shared_memory_carveout")))
    kernel.link_files = files
    kernel.from_cache = from_cache
    return kernel


def _dump(what, py_func, text):
    """numba's ``NUMBA_DUMP_*`` output: a titled rule, the text, a closing rule (stdout)."""
    print(f"{what} {py_func.__name__}".center(80, "-"))
    print(text)
    print("=" * 80)


def link_entries(link):
    """The jit ``link=`` option as a tuple of entries (None: none; one path or linkable-code
    object: that one)."""
    if link is None:
        return ()
    if isinstance(link, (list, tuple)):
        return tuple(link)
    return (link,)


def link_key(entry):
    """What stands for ``link=`` entry ``entry`` in a cache key: a path's text, a
    linkable-code object's class, name and data digest."""
    return entry.key() if isinstance(entry, LinkableCode) else str(entry)
