"""Kernel backends: how a kernel's specialisations are made and launched (issue #25).

One interface, two implementations, chosen from the driver in one place (:func:`backend_of`):

- :class:`NvvmBackend` (a real driver, or a stand-in with ``is_simulator = False``): a
  specialisation is compiled (:mod:`.build`: typed IR → LLVM IR → PTX → cubin) and loaded per
  context; a launch converts and packs the arguments and calls the driver
  (:func:`.launcher.launch_converted`), and hands back the fast path the dispatcher installs.
- :class:`SimulatorBackend` (the simulated driver): a specialisation is the typed function the
  simulator runs (``Dispatcher.sim_kernel``); a launch checks the configuration against the
  fake device and calls :func:`cujit.simulator.kernel.run_kernel`.

The dispatcher keeps no backend branches: it asks ``Dispatcher.backend_for(drv)`` (this
module's choice, kept on the dispatcher with the driver it was made for; ``backend`` for the
process's driver) and delegates.  The warm launch never reaches
this module: it is the generated fast path the NVVM backend returns.
"""
from .. import types as ct
from . import launcher as _ln
from . import launch_args as _la
from ..frontend.errors import CujitCompileError

__all__ = ["KernelBackend", "NvvmBackend", "SimulatorBackend", "NVVM", "SIMULATOR",
           "backend_of", "simulator_selected"]


class KernelBackend:
    """What a backend does for a :class:`~.dispatcher.Dispatcher` (``disp``).  Stateless:
    everything made for a kernel stays on its dispatcher (``_specs``, ``sim_kernel``,
    ``_sim_sigs``, the fast paths)."""

    #: True for the simulator's backend (kernels run on the host, every access seen).
    is_simulator = False
    #: True when a specialisation is compiled, loaded code (function attributes and
    #: occupancy come from it); False: the simulator runs the typed Python function.
    compiled = True

    def declare(self, disp, argtypes):
        """Handle eager signature ``argtypes`` (a tuple of cujit types) at decoration: the
        TypingError/CompileError for code that does not compile is raised now."""
        raise NotImplementedError

    def launch(self, disp, cfg, args, ctx, drv):
        """Launch ``disp`` with validated configuration ``cfg`` (a LaunchConfig) and
        ``args`` (positional, already bound and checked alive) in context ``ctx`` on driver
        ``drv``.  Returns a fast launch function for arguments shaped like these, or None.
        Raises what the typer, compiler, argument conversion or driver raise."""
        raise NotImplementedError

    def unwrap_hints(self, args):
        """``args`` with each ``In``/``Out``/``InOut`` replaced as this backend launches
        them (:func:`.launch_args.unwrap_hints`)."""
        return _la.unwrap_hints(args, self.is_simulator)

    def forall_block_size(self, disp, args, ctx, drv):
        """Threads per block ``forall`` uses for ``args`` when none was given."""
        raise NotImplementedError

    def func_attribute(self, disp, spec, name, ctx, drv):
        """Function attribute ``name`` (cuFuncGetAttribute: ``"NUM_REGS"``…) of compiled
        specialisation ``spec`` loaded in ``ctx``, as an int.  RuntimeError where the backend
        has no compiled code (``compiled`` False; ``spec`` and ``ctx`` are then None)."""
        raise NotImplementedError

    def cooperative_grid_blocks(self, spec, nthreads, dynsmemsize, ctx, drv):
        """The most blocks of ``nthreads`` threads (and ``dynsmemsize`` bytes of dynamic
        shared memory) a cooperative launch of ``spec`` loaded in ``ctx`` may have (int):
        occupancy times multiprocessors, or the simulated device's residency by threads
        (``spec`` and ``ctx`` None then)."""
        raise NotImplementedError


class NvvmBackend(KernelBackend):
    """Compiled kernels on a driver with modules and cuLaunchKernel."""

    def declare(self, disp, argtypes):
        disp._compiled(argtypes)

    def launch(self, disp, cfg, args, ctx, drv):
        for f in disp._fasts:
            if f.info not in cfg.ok:        # a new configuration: check it for this kernel
                try:
                    _ln.check_function_limits(cfg, f.info, drv.func_set_attribute)
                except ValueError:
                    continue                # the full path below reports it if it matters
            if f(cfg, args):
                return f
        return _ln.launch_converted(disp._pick_signature, disp.py_func.__qualname__,
                                    bool(disp.targetoptions.get("debug")), ctx, drv, cfg, args)

    def forall_block_size(self, disp, args, ctx, drv):
        spec = disp._pick_signature(disp._argtypes_of_values(args))
        lk = spec.loaded(ctx, drv)
        return max(1, min(1024, int(lk.info.max_threads)))

    def func_attribute(self, disp, spec, name, ctx, drv):
        return int(drv.func_get_attribute(spec.loaded(ctx, drv).info.handle, name))

    def cooperative_grid_blocks(self, spec, nthreads, dynsmemsize, ctx, drv):
        lk = spec.loaded(ctx, drv)
        per_sm = drv.occupancy_max_active_blocks(lk.info.handle, nthreads, int(dynsmemsize))
        return per_sm * int(drv.device_attribute(ctx.device.id, "MULTIPROCESSOR_COUNT"))


class SimulatorBackend(KernelBackend):
    """Kernels run by the simulator on the simulated driver's memory."""

    is_simulator = True
    compiled = False

    def declare(self, disp, argtypes):
        # the simulator runs py_func, but the kernel is typed now as the GPU would type it
        from ..frontend.typecheck import typecheck
        typecheck(disp.py_func, argtypes, kernel=True, source=disp.source())

    def launch(self, disp, cfg, args, ctx, drv):
        from ..simulator.kernel import run_kernel
        name = disp.py_func.__qualname__
        argtypes = tuple(_la.classify_arg(name, i, a) for i, a in enumerate(args))
        if disp._declared is not None and None not in argtypes:
            argtypes = disp._match_declared(argtypes)
            # each scalar as its declared type (a Python float for float32 is rounded, an
            # int for a narrower integer wraps): the value the GPU gets
            args = _la.convert_declared_scalars(argtypes, args) or args
            if any(isinstance(t, (ct.CPointer, ct.RawPointer)) for t in argtypes):
                # a pointer parameter's device address, as the memory it reaches
                from ..simulator.pointers import as_pointer
                params = disp.sim_kernel.params
                args = tuple(as_pointer(a, t, params[i] if i < len(params) else f"arg{i}")
                             if isinstance(t, (ct.CPointer, ct.RawPointer)) else a
                             for i, (t, a) in enumerate(zip(argtypes, args)))
        _ln.check_launch_bound(cfg, disp.py_func.__qualname__, disp._max_threads)
        new = None
        if None not in argtypes:
            argtypes = disp.source().literal_argtypes(argtypes, args)
            if argtypes not in disp._sim_sigs:
                new = argtypes
                disp._sim_sigs.append(argtypes)
        try:
            run_kernel(disp.sim_kernel, cfg.griddim, cfg.blockdim, cfg.stream_handle,
                       cfg.sharedmem, args, debug=bool(disp.targetoptions.get("debug")))
        except CujitCompileError:
            if new is not None:         # not a signature that compiles: not listed
                disp._sim_sigs.remove(new)
            raise
        return None

    def forall_block_size(self, disp, args, ctx, drv):
        return 128

    def func_attribute(self, disp, spec, name, ctx, drv):
        raise RuntimeError(f"{name} of kernel {disp.py_func.__qualname__} is a property of "
                           "compiled GPU code; the simulator has none")

    def cooperative_grid_blocks(self, spec, nthreads, dynsmemsize, ctx, drv):
        from ..simulator.grid import max_cooperative_blocks
        return max_cooperative_blocks(nthreads)


NVVM = NvvmBackend()
SIMULATOR = SimulatorBackend()


def backend_of(drv):
    """The backend for driver ``drv`` (a :class:`cujit.driver.api.Driver`): the one place
    the dispatch layer reads ``drv.is_simulator``."""
    return SIMULATOR if drv.is_simulator else NVVM


def simulator_selected():
    """True when the configuration selects the simulator (``CUJIT_ENABLE_CUDASIM``), read
    without creating the driver (decoration time, error messages)."""
    from ..driver import simulator_enabled
    return simulator_enabled()
