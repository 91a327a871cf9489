"""Kernel launches on the simulator: ``run_kernel`` runs a Python kernel over a grid of
simulated threads (docs/interfaces.md, "simulator/kernel.py").

A launch converts the arguments once (device arrays become NumPy views of simulated device
memory; with checks on every array is wrapped in a :class:`~.checked.CheckedArray` named by
its kernel parameter), then runs the blocks one after another, each as greenlets
(:mod:`.threads`), as one piece of stream work (``SimDriver.run_on_stream``), so it is
ordered with the stream's copies and callbacks.  Before the first launch of each argument-type
signature the compiler front end's ``type_launch`` (when present) rejects what the GPU
compiler would reject, with the same error.  What a kernel's launches reuse (the typing and
typed function per signature, frozen const arrays) lives on its :class:`SimKernel`, which the
dispatcher owns: nothing here outlives the kernel.
"""
import inspect
import threading

import numpy as np

from ..config import config
from ..kernelstate import state as _state
from ..runtime.graphs import capturing as _capturing
from . import access as _access
from .checked import CheckedArray, GlobalCheckedArray
from .globalrace import GlobalRaces
from .memory import cai_view, check_aligned, device_view, shared_limit
from .captured import rebind
from .pointers import SimPointer
from .records import as_kernel_record
from .thread import Dim3
from ..arrays.interop import owner_dtype
from ..memory.protocol import has_device_pointer, device_pointer, cuda_core_kind

__all__ = ["run_kernel", "simulate", "Launch", "SimKernel"]

# The simulated device runs one kernel at a time; ``kernelstate.state`` is process-wide, so
# launches from several host threads take turns.
_device_lock = threading.RLock()


class SimKernel:
    """What the simulator keeps for one kernel, owned by its dispatcher
    (``Dispatcher.sim_kernel``) so that all of it dies with the kernel: ``pyfunc``,
    ``source`` (its FunctionSource, the dispatcher's, or None: parsed when typed),
    ``params`` (parameter names, for messages), ``consts`` (signature key -> {call site:
    frozen const array}: a GPU freezes const arrays when it compiles a signature, so later
    changes to the global are not seen), ``prepared`` (signature key -> the
    :class:`~.typedexec.TypedKernel` its launches run) and ``last_access`` (the access
    recorder's table of its last recorded launch, :mod:`.access`, or None).

    ``SimKernel(pyfunc)`` for a plain Python function (what :func:`run_kernel` makes for one
    launch when given a function)."""
    __slots__ = ("pyfunc", "source", "params", "consts", "prepared", "last_access",
                 "__weakref__")

    def __init__(self, pyfunc, source=None):
        self.pyfunc = pyfunc
        self.source = source
        try:
            self.params = list(inspect.signature(pyfunc).parameters)
        except (TypeError, ValueError):
            self.params = []
        self.consts = {}
        self.prepared = {}
        self.last_access = None

    def __repr__(self):
        return f"<SimKernel {getattr(self.pyfunc, '__qualname__', self.pyfunc)!r}>"


def _sim_kernel(kernel):
    """``kernel`` (a SimKernel, a ``@jit`` kernel or a Python function) as a SimKernel: the
    dispatcher's own, or a new one (kept by nobody) for a plain function."""
    if isinstance(kernel, SimKernel):
        return kernel
    owned = getattr(kernel, "sim_kernel", None)
    if isinstance(owned, SimKernel):
        return owned
    return SimKernel(getattr(kernel, "py_func", kernel))


class Launch:
    """One launch: ``fn`` (the function its threads run: ``typed.fn``, or a rebound or debug
    copy of it), ``typed`` (the :class:`~.typedexec.TypedKernel` of its signature), ``args``
    (converted), ``griddim`` and
    ``blockdim`` (3-tuples), ``dynamic_shared_bytes``, ``checks`` (bool), ``consts`` (call
    site -> frozen const array, shared by all launches of a signature) and ``const_views``
    (this launch's, checked when checks are on).  ``recorder``: the access recorder
    (:mod:`.access`) when this launch records its memory accesses, else None.  ``races``:
    the launch's :class:`~.globalrace.GlobalRaces` when global-memory races are checked
    (``config.SIM_CHECKS`` and ``config.SIM_GLOBAL_RACES``), else None."""
    recorder = None
    races = None

    def __init__(self, fn, typed, args, griddim, blockdim, dynamic_shared_bytes, checks,
                 consts):
        self.fn = fn
        self.args = args
        self.griddim = griddim
        self.blockdim = blockdim
        self.gridDim = Dim3(*griddim)
        self.blockDim = Dim3(*blockdim)
        self.dynamic_shared_bytes = dynamic_shared_bytes
        self.checks = checks
        self.consts = consts
        self.const_views = {}
        self.const_bytes = sum(c.nbytes for c in consts.values())
        self.shared_limit = shared_limit()
        self.waits = typed.waits
        # the whole-block vector function (vectorgen.py); it reads no captured device
        # array through a simulated view and runs no debug checks: only for ``typed.fn``
        self.vfn = typed.vector if fn is typed.fn else None
        self.cooperative = typed.cooperative
        gx, gy, gz = griddim
        if self.cooperative and gx * gy * gz > 1:
            # refused at launch, as cuLaunchCooperativeKernel does
            from .grid import check_cooperative_size
            check_cooperative_size(gx * gy * gz, blockdim, dynamic_shared_bytes)
        self._rebound = {}

    def rebound(self, pyfunc):
        """``pyfunc`` (a device function called in this launch) with its captured device
        arrays as simulated views (:func:`.captured.rebind`), made once per launch."""
        fn = self._rebound.get(pyfunc)
        if fn is None:
            checks = self.checks

            rec = self.recorder
            races = self.races

            def wrap(view, name):
                v = checked(view, name, races) if checks and isinstance(view, np.ndarray) \
                    else view
                return v if rec is None else rec.wrap(v, "global", name)
            fn = self._rebound[pyfunc] = rebind(pyfunc, _convert, wrap)
        return fn

    def add_const(self, arr):
        """Account for a new constant array (64 KiB per kernel, as the device holds)."""
        from .memory import _device_attr, _CONST_LIMIT_DEFAULT
        from .errors import compile_error
        limit = _device_attr("TOTAL_CONSTANT_MEMORY", _CONST_LIMIT_DEFAULT)
        if self.const_bytes + arr.nbytes > limit:
            raise compile_error(
                f"constant memory: the kernel places {self.const_bytes + arr.nbytes} bytes in "
                f"constant memory; constant memory holds {limit} bytes ({limit // 1024} KiB)",
                3, "const.array_like")
        self.const_bytes += arr.nbytes

    def run(self):
        from .progress import BlockProgress
        from .threads import Block
        gx, gy, gz = self.griddim
        nblocks = gx * gy * gz
        progress = BlockProgress(nblocks, getattr(self.fn, "__name__", "kernel"))
        step = progress.step
        rec = self.recorder
        block = Block
        bids = ((x, y, z) for z in range(gz) for y in range(gy) for x in range(gx))
        if rec is not None:
            # the recorder's blocks wrap shared arrays; it folds each block's log
            block, bids = rec.block_class, rec.blocks(self, bids)
        with _device_lock:
            outer = _state.current
            try:
                if self.cooperative and nblocks > 1:
                    # grid.sync(): every block runs together (the access recorder does not
                    # follow cooperative launches)
                    from .grid import run_grid
                    run_grid(self, step)
                    return
                from . import vecblock
                bx, by, bz = self.blockdim
                # a vector of one lane is NumPy's call overhead for every operation of one
                # thread: always slower than running that thread (user trial: 40x)
                one_lane = bx * by * bz == 1 and (
                    nblocks == 1 or self.vfn is None or self.vfn.multi is None)
                # the setting first: a malformed CUJIT_SIM_VECTOR is an error in every launch
                if vecblock.vector_enabled() and self.vfn is not None and rec is None and \
                        not one_lane and not _aliased(self.args):
                    vecblock.launches["vector"] += 1
                    vecblock.run_vector(self, bids, step)
                    return
                vecblock.launches["thread"] += 1
                for bid in bids:
                    block(self, bid).run()
                    step()
                if rec is not None:
                    rec.finish()
            finally:
                progress.close()
                _state.current = outer


def checked(a, name, races):
    """NumPy array ``a`` as a kernel's checked global array named ``name``: race-tracked
    through ``races`` (a :class:`~.globalrace.GlobalRaces`) unless that is None."""
    return CheckedArray(a, name) if races is None else GlobalCheckedArray(a, name, races)


def global_races(griddim, blockdim, checks):
    """The race records of a launch of ``griddim`` blocks of ``blockdim`` threads
    (3-tuples), or None when checks or ``config.SIM_GLOBAL_RACES`` are off."""
    if checks and config.SIM_GLOBAL_RACES:
        return GlobalRaces(griddim, blockdim)
    return None


def _convert(value):
    """A launch value as the kernel sees it: NumPy arrays (and subclasses) as they are,
    device arrays and CUDA-array-interface objects as NumPy views of their memory, anything
    else (scalars) unchanged; tuples (and namedtuples) member by member; ``np.void`` records
    as a :class:`~.records.RecordView` over the same bytes."""
    if isinstance(value, np.ndarray):
        if value.dtype.names and not isinstance(value, np.recarray):
            # elements read as np.record (field attributes), on the same memory
            return value.view(np.recarray)
        return value
    if isinstance(value, tuple):
        items = [_convert(v) for v in value]
        return type(value)(*items) if hasattr(value, "_fields") else tuple(items)
    if isinstance(value, np.void):
        return as_kernel_record(value)
    ptr = device_pointer(value)
    if ptr is not None:
        view = device_view(ptr, tuple(value.shape), tuple(value.strides), value.dtype)
        if view.dtype.names:
            view = view.view(np.recarray)
            if view.ndim == 0:
                return view[()]
        return view
    cai = getattr(value, "__cuda_array_interface__", None)
    if cai is not None:
        view = cai_view(cai)
        own = owner_dtype(view.dtype, value)     # CuPy's bfloat16 arrays say <V2
        return view if own is view.dtype else view.view(own)
    return value


def _import_dlpack(value):
    """A DLPack-only launch value (no ``__cuda_array_interface__``) as an array: a cuda.core
    ``Buffer`` or ``StridedMemoryView`` through ``cujit.arrays.from_cuda_core`` (its
    attributes, as the GPU path reads them), a host (kDLCPU) tensor through
    ``numpy.from_dlpack``, a device one through ``cujit.from_dlpack``, all zero-copy
    (R-CAI-3); anything else unchanged."""
    if isinstance(value, np.ndarray) or has_device_pointer(value):
        return value
    if cuda_core_kind(value) is not None:
        from ..arrays import from_cuda_core
        return from_cuda_core(value)
    if not hasattr(value, "__dlpack__") or hasattr(value, "__cuda_array_interface__"):
        return value
    dev = getattr(value, "__dlpack_device__", None)
    if dev is not None and dev()[0] == 1:
        return np.from_dlpack(value)
    from ..arrays import from_dlpack
    return from_dlpack(value)


def _check_foreign(value):
    """Raise what the GPU launch raises for an object whose ``__cuda_array_interface__``
    it cannot take (its ``cujit.arrays.from_cuda_array_interface``): ValueError for a
    malformed interface (a missing key, a NULL pointer of a non-empty array, ``stream: 0``),
    NotImplementedError for a mask.  Without it the simulator read such an interface as it
    could: a NULL pointer as fresh zeros, so the kernel's writes were lost."""
    if isinstance(value, np.ndarray) or has_device_pointer(value) or \
            not hasattr(value, "__cuda_array_interface__"):
        return
    from ..arrays import from_cuda_array_interface
    from_cuda_array_interface(value.__cuda_array_interface__, owner=value, sync=False)


def _signature_key(args):
    key = []
    for a in args:
        if isinstance(a, np.ndarray):
            key.append((type(a), a.dtype, len(a.shape), a.flags.writeable))
        elif has_device_pointer(a):
            # a read-only import types readonly: a signature of its own for the typecheck
            key.append((type(a), a.dtype, len(a.shape), not getattr(a, "_readonly", False)))
        elif isinstance(a, tuple):
            # a tuple's type depends on its members: typecheck each new member signature
            key.append((type(a), _signature_key(a)))
        elif isinstance(a, SimPointer):
            key.append((SimPointer, a.pointer_type))
        else:
            key.append(type(a))
    return tuple(key)


def _prepare(kern, args, sig, debug=False):
    """The :class:`~.typedexec.TypedKernel` launches of ``kern`` (a SimKernel) with
    signature key ``sig`` run: the front end types the kernel once per signature and
    ``debug`` option (skipped while it does not exist), then it is rewritten to compute with
    the inferred types (:mod:`.typedexec`); both kept by ``kern``.  ``debug``: the kernel's
    ``jit(debug=True)``, which the GPU compiles with (assertions are typed then)."""
    try:
        from ..frontend.typecheck import type_launch
    except ImportError as exc:
        if getattr(exc, "name", "") and "cujit.frontend" in exc.name:
            type_launch = None
        else:
            raise
    if type_launch is not None and kern.source is None:
        from ..frontend.source import FunctionSource
        kern.source = FunctionSource.from_pyfunc(kern.pyfunc)
    # parameters that size local/shared arrays: one typing per value (as the GPU compiles)
    sizing = kern.source.sizing_params() if kern.source is not None else ()
    key = (sig, tuple(int(args[i]) if isinstance(args[i], (int, np.integer)) else args[i]
                      for i in sorted(sizing)), type_launch, bool(debug))
    tk = kern.prepared.get(key)
    if tk is not None:
        return tk
    from .typedexec import typed_kernel
    tf = None
    if type_launch is not None:
        tf = type_launch(kern.pyfunc, args, debug=bool(debug), source=kern.source)
    tk = kern.prepared[key] = typed_kernel(kern.pyfunc, tf)
    return tk


def run_kernel(kernel, griddim, blockdim, stream_handle, dynamic_shared_bytes, args,
               debug=False):
    """Run ``kernel`` (the :class:`SimKernel` its dispatcher keeps, or a Python function:
    then typed for this launch only) over ``griddim`` blocks of ``blockdim`` threads (both
    validated 3-tuples of ints) on the stream with handle ``stream_handle`` (int), with
    ``dynamic_shared_bytes`` (int, bytes) of dynamic shared memory per block.

    ``args``: the launch values (DeviceNDArray, MappedNDArray/ManagedNDArray, host NumPy
    arrays — used in place, which is what numba's copy-in/copy-out amounts to —, objects with
    ``__cuda_array_interface__``, scalars).  Returns None once the kernel has run (the
    simulator runs stream work at once).

    Raises: the compiler's ``TypingError``/``CompileError`` for kernels it rejects (bad
    shared/local shape or dtype, shared memory over 48 KiB, constant memory over 64 KiB);
    ``ValueError`` when ``dynamic_shared_bytes`` is negative or over the device's opt-in
    maximum, alone or with the kernel's static shared memory (raised when the block makes
    its static arrays), as the GPU launcher does; ``CudaAPIError`` 716
    (CUDA_ERROR_MISALIGNED_ADDRESS) for a device-array argument whose data pointer or
    strides are not multiples of its dtype's alignment (the GPU faults on it); with checks on (``config.SIM_CHECKS``), ``OutOfBoundsError``, ``DataRaceError``,
    ``BarrierDivergenceError``, ``WarpDivergenceError`` (:mod:`cujit.simulator.errors`);
    any exception raised by a thread, its message prefixed with the thread and block ids;
    ``CudaAPIError`` from the driver for an unknown stream or unallocated memory.
    ``debug``: the kernel's ``jit(debug=True)``: division by zero raises ZeroDivisionError
    (:mod:`.debugmode`).
    """
    from ..driver import get_driver
    drv = get_driver()
    dyn = int(dynamic_shared_bytes)
    if dyn < 0:
        raise ValueError(f"dynamic shared memory size must be >= 0 bytes, got {dyn}")
    optin = drv.device_attribute(0, "MAX_SHARED_MEMORY_PER_BLOCK_OPTIN")
    if dyn > optin:
        raise ValueError(f"dynamic shared memory of {dyn} bytes exceeds the device's maximum "
                         f"of {optin} bytes per block (MAX_SHARED_MEMORY_PER_BLOCK_OPTIN)")
    info = _sim_kernel(kernel)
    args = [_import_dlpack(a) for a in args]
    for a in args:
        _check_foreign(a)
    sig = _signature_key(args)
    typed = _prepare(info, args, sig, debug)
    checks = bool(config.SIM_CHECKS)
    for i, a in enumerate(args):
        name = info.params[i] if i < len(info.params) else f"arg{i}"
        ptr = device_pointer(a)
        if ptr is not None:
            drv.check_kernel_access(ptr, name)
            check_aligned(name, ptr, a.shape, a.strides, a.dtype)
        elif not isinstance(a, np.ndarray) and hasattr(a, "__cuda_array_interface__"):
            desc = a.__cuda_array_interface__
            dt = np.dtype(desc["typestr"])
            check_aligned(name, desc["data"][0] or 0, tuple(desc["shape"]),
                          tuple(desc.get("strides") or ()), dt)
    kargs = [_convert(a) for a in args]
    races = global_races(tuple(griddim), tuple(blockdim), checks)
    if checks:
        params = info.params
        for i, a in enumerate(kargs):
            if isinstance(a, np.ndarray):
                name = params[i] if i < len(params) else f"arg{i}"
                kargs[i] = checked(a, name, races)
            elif isinstance(a, SimPointer) and isinstance(a.data, np.ndarray):
                # a pointer parameter's memory, race-checked as an array argument's is
                kargs[i] = SimPointer(checked(a.data, a.name, races), a.start, a.pointer_type,
                                      a.address, a.name)
    consts = info.consts.setdefault(sig, {})

    def prepared(rec):
        """The Launch, recording its accesses with ``rec`` (an access Recorder or None)."""
        la = kargs
        if rec is not None:
            la = list(kargs)            # wrapped for this launch only: a replay starts over
            rec.record_args(la, info.params)

        def wrap(view, name):
            v = checked(view, name, races) if checks and isinstance(view, np.ndarray) else view
            return v if rec is None else rec.wrap(v, "global", name)
        f = rebind(typed.fn, _convert, wrap)
        if debug:
            from .debugmode import debug_kernel
            f = debug_kernel(f)
        launch = Launch(f, typed, la, tuple(griddim), tuple(blockdim), dyn, checks, consts)
        launch.recorder = rec
        launch.races = races
        return launch

    if _capturing and stream_handle in _capturing:
        prepared(None)      # the launch's own errors are the capturing call's, as on a GPU
    # Built when the work runs: a graph replays it later, maybe outside the access report
    # active at capture, so the recorder (and its grid limit) is the one of each replay.
    drv.run_on_stream(stream_handle, lambda: prepared(_access.start(info)).run())


def _aliased(args):
    """True when two different array arguments may overlap in memory (``a`` and ``a[:]``,
    two views of one device buffer): the vector executor's conflict records are per array,
    so a kernel writing through one and reading another thread's element through the other
    would see the vector order (user trial: an in-place stencil ``st(x, x[:])``).  Such
    launches run per thread.  The same array passed twice shares its records."""
    from .checked import unwrap
    arrays = [unwrap(a) for a in args]
    arrays = [a for a in arrays if isinstance(a, np.ndarray) and a.size]
    for i, a in enumerate(arrays):
        for b in arrays[i + 1:]:
            if a is not b and np.may_share_memory(a, b):
                return True
    return False


def simulate(kernel, griddim, blockdim, *args, dynamic_shared_bytes=0):
    """Run ``kernel`` (a ``@cujit.jit`` kernel, typed once per signature on its
    ``sim_kernel``, or a Python function, typed for this call) on the simulator with
    host NumPy arrays and scalars ``args``, whichever driver the process uses: on a GPU
    machine this runs the simulated and the compiled kernel side by side in one process
    (the differential tests).  ``griddim``/``blockdim``: int or tuple of up to 3 ints.
    Arrays are used in place.  Returns None.

    Raises TypeError for an argument that is not a NumPy array or a scalar (device memory
    belongs to the real driver here), ValueError for a bad launch configuration, and what
    :func:`run_kernel` raises for the kernel itself.
    """
    dims = []
    for what, d in (("griddim", griddim), ("blockdim", blockdim)):
        t = (d,) if isinstance(d, (int, np.integer)) else tuple(d)
        if not 1 <= len(t) <= 3 or not all(isinstance(v, (int, np.integer)) and v >= 1
                                           for v in t):
            raise ValueError(f"{what} must be a positive int or a tuple of 1 to 3 positive "
                             f"ints, got {d!r}")
        dims.append(tuple(int(v) for v in t) + (1,) * (3 - len(t)))
    for i, a in enumerate(args):
        if not isinstance(a, (np.ndarray, np.generic, int, float, complex, bool)):
            raise TypeError(f"simulate: argument {i} must be a host NumPy array or a scalar, "
                            f"got {type(a).__name__}")
    dyn = int(dynamic_shared_bytes)
    if dyn < 0:
        raise ValueError(f"dynamic shared memory size must be >= 0 bytes, got {dyn}")
    info = _sim_kernel(kernel)
    args = list(args)
    sig = _signature_key(args)
    typed = _prepare(info, args, sig)
    checks = bool(config.SIM_CHECKS)
    kargs = list(args)
    races = global_races(dims[0], dims[1], checks)
    if checks:
        params = info.params
        for i, a in enumerate(kargs):
            if isinstance(a, np.ndarray):
                kargs[i] = checked(a, params[i] if i < len(params) else f"arg{i}", races)
    consts = info.consts.setdefault(sig, {})
    launch = Launch(typed.fn, typed, kargs, dims[0], dims[1], dyn, checks, consts)
    launch.races = races
    launch.recorder = rec = _access.start(info)
    if rec is not None:
        rec.record_args(kargs, info.params)
    launch.run()
