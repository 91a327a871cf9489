"""Kernel introspection and kernel-object helpers of numba.cuda's Dispatcher that are not
about compiling or launching: ``inspect_types`` text, ``inspect_sass`` (through ``nvdisasm``),
``forall`` and the ``extensions=`` argument handlers.

- :func:`types_listing`: the kernel's source, each line followed by the types of the
  variables it assigns (numba prints its typed IR; cujit has no IR, the variables and their
  one type each are what that listing tells a user).
- :func:`sass_of`: ``nvdisasm`` of a cubin; RuntimeError naming where it looked when the tool
  is not installed (it ships with the CUDA toolkit or the ``nvidia-cuda-nvdisasm`` wheel).
- :class:`ForAll`: ``kernel.forall(ntasks, tpb=0, stream=0, sharedmem=0)(*args)`` launches a
  1-D grid of ``ceil(ntasks / tpb)`` blocks; ``tpb=0`` picks the block size (the kernel's
  MAX_THREADS_PER_BLOCK on a GPU, capped at 1024; 128 on the simulator, whose block size does
  not change results).
- :func:`check_extensions` / :func:`prepare_args`: numba's argument-handler protocol, each
  handler's ``prepare_args(ty, val, stream=..., retr=...)`` returns ``(ty, val)`` and may
  append callables to ``retr``, called after the launch.
"""
import ast
import glob
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np

from .. import types as ct
from ..config import config

__all__ = ["InspectMixin", "types_listing", "sass_of", "find_nvdisasm", "ForAll", "check_extensions",
           "prepare_args", "cooperative_grid_blocks"]


def types_listing(pyfunc, argtypes, debug=False):
    """Text: ``qualname (argtypes)``, a rule, then each source line of ``pyfunc`` followed by
    ``#   name: type`` for the variables assigned on it (types as the compiler inferred them
    for ``argtypes``).  Raises TypingError/CompileError as compiling would."""
    from ..frontend.typeinfer import CompileEnv, infer
    tf = infer(pyfunc, tuple(argtypes), kernel=True, env=CompileEnv(debug=debug))
    fsrc = tf.fsrc
    by_line = {}
    for node in ast.walk(fsrc.node):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            by_line.setdefault(node.lineno, []).append(node.id)
        elif isinstance(node, ast.arg):
            by_line.setdefault(node.lineno, []).append(node.arg)
    lines = [f"{fsrc.qualname} ({', '.join(map(str, argtypes))})", "-" * 80]
    first = fsrc.node.lineno
    text = _file_text(fsrc) if fsrc.filename else ""
    # a kernel without a file (compiled from bytecode) is listed as its rebuilt tree
    source = ast.get_source_segment(text, fsrc.node) if text else None
    src_lines = (source or ast.unparse(fsrc.node)).splitlines()
    for k, text in enumerate(src_lines):
        lineno = first + k
        lines.append(f"{lineno:5d}  {text}")
        seen = set()
        for name in by_line.get(lineno, ()):
            if name in seen:
                continue
            seen.add(name)
            t = tf.vartypes.get(name)
            lines.append(f"       #   {name}: {'(unused)' if t is None else t}")
    return "\n".join(lines) + "\n"


def _file_text(fsrc):
    try:
        with open(fsrc.filename, encoding="utf-8") as f:
            return f.read()
    except OSError:
        return ""


def find_nvdisasm():
    """Path of ``nvdisasm`` (PATH, $CUDA_HOME/bin, $CUDA_PATH/bin, /usr/local/cuda/bin, the
    pip ``nvidia-cuda-nvdisasm`` wheel), or None."""
    hit = shutil.which("nvdisasm")
    if hit:
        return hit
    dirs = [os.path.join(d, "bin") for d in (config.CUDA_HOME, config.CUDA_PATH)
            if d] + ["/usr/local/cuda/bin"]
    try:
        import nvidia
        for root in nvidia.__path__:
            dirs += glob.glob(os.path.join(root, "*", "bin"))
    except ImportError:
        pass
    for d in dirs:
        p = os.path.join(d, "nvdisasm")
        if os.path.isfile(p) and os.access(p, os.X_OK):
            return p
    return None


def sass_of(cubin, qualname):
    """SASS text (str) of ``cubin`` (bytes).  RuntimeError when there is no cubin or no
    ``nvdisasm``, or when nvdisasm fails (its message included)."""
    if not cubin:
        raise RuntimeError(f"kernel {qualname} has no cubin to disassemble (nvJitLink is not "
                           "installed); inspect_asm() gives its PTX")
    tool = find_nvdisasm()
    if tool is None:
        raise RuntimeError("inspect_sass() needs nvdisasm, which was not found on PATH, in "
                           "$CUDA_HOME/bin, $CUDA_PATH/bin, /usr/local/cuda/bin or a pip "
                           "nvidia wheel; install the CUDA toolkit or `pip install "
                           "nvidia-cuda-nvdisasm`")
    with tempfile.TemporaryDirectory(prefix="cujit-sass-") as d:
        path = os.path.join(d, "kernel.cubin")
        with open(path, "wb") as f:
            f.write(cubin)
        r = subprocess.run([tool, "-c", path], capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"nvdisasm failed on kernel {qualname}: {r.stderr.strip()}")
    return r.stdout


class ForAll:
    """``kernel.forall(ntasks, tpb, stream, sharedmem)``: call it with the kernel's arguments
    to launch ``ceil(ntasks / tpb)`` blocks of ``tpb`` threads (nothing for ``ntasks == 0``)."""

    def __init__(self, dispatcher, ntasks, tpb=0, stream=0, sharedmem=0):
        if isinstance(ntasks, bool) or not isinstance(ntasks, (int, np.integer)):
            raise TypeError(f"forall() ntasks must be an int, got {ntasks!r}")
        if ntasks < 0:
            # numba's wording (its tests match it)
            raise ValueError(f"Can't create ForAll with negative task count: {ntasks} "
                             "(forall() ntasks must be >= 0)")
        if isinstance(tpb, bool) or not isinstance(tpb, (int, np.integer)) or tpb < 0:
            raise ValueError(f"forall() tpb must be an int >= 0 (0: chosen for the kernel), "
                             f"got {tpb!r}")
        self.dispatcher = dispatcher
        self.ntasks = int(ntasks)
        self.thread_per_block = int(tpb)
        self.stream = stream
        self.sharedmem = sharedmem

    def _block_size(self, args):
        if self.thread_per_block:
            return self.thread_per_block
        from ..driver import get_driver
        from ..runtime.devices import current_context
        drv = get_driver()
        d = self.dispatcher
        return d.backend_for(drv).forall_block_size(d, args, current_context(), drv)

    def __call__(self, *args):
        if self.ntasks == 0:
            return
        d = self.dispatcher
        retr = ()
        if d._extensions:       # handlers first: the block size needs the argument types
            args, retr = prepare_args(d._extensions, args, self.stream)
        tpb = self._block_size(args)
        blocks = (self.ntasks + tpb - 1) // tpb
        d._launch_prepared(d[blocks, tpb, self.stream, self.sharedmem], args)
        for r in retr:
            r()


def check_extensions(exts):
    """TypeError unless ``exts`` is None or a list/tuple of objects with ``prepare_args``."""
    if exts is None:
        return
    if not isinstance(exts, (list, tuple)):
        raise TypeError(f"jit() option extensions={exts!r} must be a list of argument "
                        "handlers (objects with a prepare_args(ty, val, **kwargs) method)")
    for e in exts:
        if not callable(getattr(e, "prepare_args", None)):
            raise TypeError(f"jit() extensions: {e!r} has no prepare_args(ty, val, **kwargs) "
                            "method")


def _typeof_or_none(val):
    try:
        return ct.typeof(val)
    except (TypeError, ValueError):
        return None


def _as_type(ty, val):
    """``val`` converted to scalar type ``ty`` when a handler returned a scalar type for a
    Python number (so the kernel is typed as the handler said)."""
    if isinstance(ty, (ct.Integer, ct.Float, ct.Boolean, ct.Complex)) and \
            isinstance(val, (int, float, bool, complex, np.generic)):
        return ty.dtype.type(val)
    return val


def prepare_args(exts, args, stream):
    """``(new args, retr)``: each argument passed through every handler in order (numba's
    protocol); ``retr`` collects the callables the handlers want run after the launch."""
    retr = []
    out = []
    for val in args:
        ty = _typeof_or_none(val)
        for e in exts:
            ty, val = e.prepare_args(ty, val, stream=stream, retr=retr)
        out.append(_as_type(ty, val))
    return tuple(out), retr


class InspectMixin:
    """The inspection and resource-query methods of :class:`.dispatcher.Dispatcher`
    (numba.cuda's names).  Needs ``py_func``, ``targetoptions``, ``_specs``, ``_declared``,
    ``_specialized``, ``signatures``,
    ``_compile_pending()`` on the instance."""

    def inspect_types(self, file=None, signature=None, pretty=False):
        """Print, for each compiled signature (or ``signature``), the kernel's source with the
        type of every variable assigned on each line, to ``file`` (default sys.stdout).
        ``pretty`` is accepted for numba compatibility.  KeyError for a signature not
        compiled."""
        sigs = self.signatures
        if signature is not None:
            sig = self._sig_key(signature)
            if sig not in sigs:
                raise KeyError(f"kernel {self.py_func.__qualname__} has no compiled signature "
                               f"{sig}; compiled: {sigs}")
            sigs = [sig]
        out = sys.stdout if file is None else file
        for sig in sigs:
            out.write(types_listing(self.py_func, sig, bool(self.targetoptions.get("debug"))))

    def access_report(self):
        """The access report of this kernel's last simulated launch made with recording on
        (``CUJIT_ACCESS_REPORT=1``; launches inside ``with cujit.access_report():`` count too):
        an :class:`~cujit.simulator.access_report.AccessReport` with rows per source line
        (global-memory sectors per warp request against the ideal, shared-memory bank
        conflict ways) and warnings with the fix in words (docs/access-report.md).  cujit's
        own addition; numba.cuda has no such report.

        Raises RuntimeError when the process runs kernels on a GPU (only the simulator sees
        every access: run with ``CUJIT_ENABLE_CUDASIM=1`` or ``python -m cujit
        access-report script.py``) and when no launch of this kernel was recorded."""
        from ..simulator.access import last_report
        rep = last_report(self._sim)
        if rep is not None:
            return rep
        from .backends import simulator_selected
        name = self.py_func.__qualname__
        if not simulator_selected():
            raise RuntimeError(
                f"access_report(): kernel {name} runs on the GPU in this process; the access "
                f"report is made by the simulator, which sees every memory access: run with "
                f"CUJIT_ENABLE_CUDASIM=1 CUJIT_ACCESS_REPORT=1, or `python -m cujit "
                f"access-report script.py`")
        raise RuntimeError(
            f"access_report(): no recorded launch of kernel {name}: launch it with recording "
            f"on (CUJIT_ACCESS_REPORT=1, or inside `with cujit.access_report():`) first")

    def inspect_sass(self, signature=None):
        """SASS (str, via ``nvdisasm``) of one compiled signature, or ``{argtypes: str}``.
        RuntimeError when nvdisasm (or nvJitLink, for the cubin) is not installed."""
        name = self.py_func.__qualname__
        if signature is None:
            self._compile_pending()
            return {k: sass_of(v.cubin, name) for k, v in self._specs.items()}
        return sass_of(self._inspect("cubin", signature), name)

    def _sig_key(self, signature):
        if not isinstance(signature, tuple) or not all(isinstance(t, ct.Type) for t in signature):
            signature = ct.parse_signature(signature).args
        return signature

    def inspect_llvm(self, signature=None):
        """LLVM IR (str) of the specialisation for ``signature`` (argument types), or
        ``{argtypes: str}`` for all when None.  KeyError when that signature is not compiled."""
        return self._inspect("llvm_ir", signature)

    def inspect_asm(self, signature=None):
        """PTX (str) of one specialisation, or ``{argtypes: str}`` for all when None."""
        return self._inspect("ptx", signature)

    def inspect_lto_ptx(self, signature=None):
        """The PTX nvJitLink makes when it links this kernel with link-time optimisation
        (str), for ``signature`` (argument types) or ``{argtypes: str}`` for all, as
        numba.cuda's ``inspect_lto_ptx``: the kernel and the LTO-IR of its ``link=`` code
        optimised together.  ValueError when the kernel was not compiled with
        ``lto=True``; KeyError for a signature not compiled; LinkerError from nvJitLink."""
        if not self.targetoptions.get("lto"):
            raise ValueError(f"inspect_lto_ptx(): kernel {self.py_func.__qualname__} was not "
                             f"compiled with link-time optimisation; use @jit(lto=True)")
        from ..nvvm.linker import link_cubin
        self._compile_pending()

        def linked(spec):
            return link_cubin(spec.ltoir, spec.cc, files=spec.link_files, ltoir=True,
                              output="ptx", name=spec.name + ".ltoir")
        if signature is None:
            return {k: linked(v) for k, v in self._specs.items()}
        signature = self._sig_key(signature)
        if signature not in self._specs:
            raise KeyError(f"kernel {self.py_func.__qualname__} has no compiled signature "
                           f"{signature}; compiled: {list(self._specs)}")
        return linked(self._specs[signature])

    def _inspect(self, attr, signature):
        self._compile_pending()
        if signature is None:
            return {k: getattr(v, attr) for k, v in self._specs.items()}
        signature = self._sig_key(signature)
        try:
            return getattr(self._specs[signature], attr)
        except KeyError:
            raise KeyError(f"kernel {self.py_func.__qualname__} has no compiled signature "
                           f"{signature}; compiled: {list(self._specs)}") from None

    # -- resource usage (numba.cuda's Dispatcher methods) ----------------------------------
    def _func_attribute(self, name, signature):
        from ..runtime.devices import current_context
        from ..driver import get_driver
        drv = get_driver()
        backend = self.backend_for(drv)
        if not backend.compiled:    # no compiled code to look up, whatever the signature
            return backend.func_attribute(self, None, name, None, drv)
        ctx = current_context()
        if signature is None and self._specialized and self._declared:
            self._compile_pending()
            signature = self._declared[0]       # numba: a specialised kernel's own value
        if signature is None:
            return {k: backend.func_attribute(self, v, name, ctx, drv)
                    for k, v in self._specs.items()}
        signature = self._sig_key(signature)
        spec = self._specs.get(signature)
        if spec is None:
            raise KeyError(f"kernel {self.py_func.__qualname__} has no compiled signature "
                           f"{signature}; compiled: {list(self._specs)}")
        return backend.func_attribute(self, spec, name, ctx, drv)

    def get_regs_per_thread(self, signature=None):
        """Registers per thread (cuFuncGetAttribute NUM_REGS) of one compiled signature, or
        ``{argtypes: int}`` for all (an int for a specialised kernel: ``jit(sig)`` with one
        signature or made by ``specialize``).  KeyError for a signature not compiled; RuntimeError on
        the simulator."""
        return self._func_attribute("NUM_REGS", signature)

    def get_shared_mem_per_block(self, signature=None):
        """Static shared memory per block in bytes (SHARED_SIZE_BYTES); as above."""
        return self._func_attribute("SHARED_SIZE_BYTES", signature)

    def get_local_mem_per_thread(self, signature=None):
        """Local memory per thread in bytes (LOCAL_SIZE_BYTES); as above."""
        return self._func_attribute("LOCAL_SIZE_BYTES", signature)

    def get_const_mem_size(self, signature=None):
        """Constant memory of the kernel in bytes (CONST_SIZE_BYTES); as above."""
        return self._func_attribute("CONST_SIZE_BYTES", signature)

    def get_max_threads_per_block(self, signature=None):
        """The most threads a block of this kernel may have (MAX_THREADS_PER_BLOCK, lowered
        by its register use); as above."""
        return self._func_attribute("MAX_THREADS_PER_BLOCK", signature)


    def max_cooperative_grid_blocks(self, blockdim, dynsmemsize=0, signature=None):
        """The most blocks of ``blockdim`` threads (int or tuple) a cooperative launch of this
        kernel may have: blocks per multiprocessor at once (occupancy) times the device's
        multiprocessors (numba.cuda).  ``signature``: which compiled one (default: the only
        one; ValueError when there are several or none).  On the simulator: the residency
        of its device by threads alone (``cujit.simulator.grid.max_cooperative_blocks``),
        the limit its cooperative launches enforce."""
        from ..driver import get_driver
        nthreads = _block_threads(blockdim)
        if not self.backend_for(get_driver()).compiled:     # no specialisation needed
            return cooperative_grid_blocks(None, nthreads, dynsmemsize)
        self._compile_pending()
        if signature is None:
            if len(self._specs) != 1:
                raise ValueError(f"kernel {self.py_func.__qualname__} has "
                                 f"{len(self._specs)} compiled signatures; pass signature= "
                                 "to say which")
            spec = next(iter(self._specs.values()))
        else:
            spec = self._specs.get(self._sig_key(signature))
            if spec is None:
                raise KeyError(f"kernel {self.py_func.__qualname__} has no compiled signature "
                               f"{signature}")
        return cooperative_grid_blocks(spec, nthreads, dynsmemsize)


def _block_threads(blockdim):
    """Threads in a block of ``blockdim`` (a positive int or tuple of them); ValueError
    otherwise."""
    dims = blockdim if isinstance(blockdim, tuple) else (blockdim,)
    if not dims or not all(isinstance(d, (int, np.integer)) and not isinstance(d, bool)
                           and d >= 1 for d in dims):
        raise ValueError(f"blockdim must be a positive int or a tuple of them, got "
                         f"{blockdim!r}")
    return int(np.prod(dims))


def cooperative_grid_blocks(spec, blockdim, dynsmemsize=0):
    """The most blocks of ``blockdim`` threads a cooperative launch of compiled
    specialisation ``spec`` may have in the current context: occupancy (blocks per
    multiprocessor) times the multiprocessors; on the simulator its device's residency by
    threads alone (``spec`` unused).  Behind ``kernel.max_cooperative_grid_blocks`` and
    numba.cuda's ``kernel.overloads[sig].max_cooperative_grid_blocks(blockdim)``."""
    from ..driver import get_driver
    from ..runtime.devices import current_context
    from .backends import backend_of
    nthreads = _block_threads(blockdim)
    drv = get_driver()
    backend = backend_of(drv)
    ctx = current_context() if backend.compiled else None
    return backend.cooperative_grid_blocks(spec, nthreads, dynsmemsize, ctx, drv)
