"""NVVM IR → PTX: libNVVM through ``cuda.bindings.nvvm``, or llvmlite's NVPTX target.

libNVVM (``nvidia-nvvm`` wheel or a CUDA toolkit, found by ``cuda-pathfinder``) is the
compiler NVIDIA ships for exactly this dialect (typed pointers, ``!nvvmir.version``), so it is
preferred.  libdevice (``libdevice.10.bc``, the ``__nv_*`` maths functions behind ``math``) is
added with ``nvvmLazyAddModuleToProgram`` so only the functions a kernel calls are linked.

Where libNVVM cannot be loaded, llvmlite's own NVPTX back end compiles the same IR (LLVM reads
the typed-pointer syntax and upgrades the old ``nvvm.annotations``); libdevice is linked in
and every function that came from it is internalised so that the optimiser drops what is
unused.  ``CUJIT_NVVM_BACKEND=llvmlite`` forces this path (``=nvvm`` forbids it).
"""
import threading

from ..frontend.errors import ToolchainError
from ..config import config

__all__ = ["NvvmError", "compile_ptx", "libdevice_path", "nvvm_available", "nvvm_version",
           "backend_name", "arch_option"]

_lock = threading.Lock()
_libdevice = None           # bytes of libdevice.10.bc, read once
_nvvm_state = None          # (module or None, reason)


#: libNVVM (or the llvmlite fallback) rejected a module; ``.log`` holds the tool's log.
NvvmError = ToolchainError


def _nvvm():
    """``cuda.bindings.nvvm`` when libNVVM loads, else None (the reason is kept)."""
    global _nvvm_state
    st = _nvvm_state
    if st is None:
        if config.NVVM_BACKEND == "llvmlite":
            st = (None, "CUJIT_NVVM_BACKEND=llvmlite")
        else:
            try:
                from cuda.bindings import nvvm
                nvvm.version()          # loads libnvvm.so; raises when absent
                st = (nvvm, "")
            except Exception as exc:    # ImportError, RuntimeError, pathfinder errors
                st = (None, f"libNVVM is not available: {exc}")
        _nvvm_state = st
    return st[0]


def nvvm_probed():
    """True when this process has already looked for libNVVM (so asking costs nothing)."""
    return _nvvm_state is not None


def nvvm_available():
    """True when libNVVM can be used (it is found and loads)."""
    return _nvvm() is not None


def nvvm_version():
    """``(major, minor)`` of libNVVM, or None when it is absent."""
    nvvm = _nvvm()
    return None if nvvm is None else tuple(nvvm.version())


def backend_name():
    """'nvvm' or 'llvmlite': which compiler :func:`compile_ptx` uses here."""
    return "nvvm" if nvvm_available() else "llvmlite"


def libdevice_path():
    """Path (str) of ``libdevice.10.bc`` found by cuda-pathfinder.

    Raises NvvmError when it cannot be found (install ``nvidia-nvvm``)."""
    try:
        from cuda.pathfinder import find_bitcode_lib
        return find_bitcode_lib("device")
    except Exception as exc:
        raise NvvmError(f"libdevice (libdevice.10.bc) was not found: {exc}; install the "
                        "nvidia-nvvm wheel or a CUDA toolkit") from exc


def _libdevice_bytes():
    global _libdevice
    if _libdevice is None:
        with open(libdevice_path(), "rb") as f:
            _libdevice = f.read()
    return _libdevice


def arch_suffix(cc):
    """``'90'`` / ``'90a'`` / ``'100f'``: the digits and feature suffix of compute capability
    ``cc`` — ``(major, minor)``, or ``(major, minor, 'a')`` for the architecture-specific
    target (numba-cuda 0.24; e.g. sm_90a for wgmma), or ``(major, minor, 'f')`` for the family
    target.  Raises ValueError for another shape or suffix, TypeError for non-int versions."""
    if len(cc) not in (2, 3):
        raise ValueError(f"compute capability {cc!r} must be (major, minor) or "
                         f"(major, minor, 'a'|'f')")
    major, minor = cc[0], cc[1]
    if not all(v.__class__ is int or hasattr(v, "__index__") for v in (major, minor)) or \
            isinstance(major, bool) or isinstance(minor, bool):
        raise TypeError(f"compute capability {cc!r}: major and minor must be ints")
    suffix = cc[2] if len(cc) == 3 else ""
    if suffix not in ("", "a", "f"):
        raise ValueError(f"compute capability {cc!r}: the third item must be 'a' "
                         f"(architecture-specific) or 'f' (family-specific), got {suffix!r}")
    return f"{int(major)}{int(minor)}{suffix}"


def arch_option(cc):
    """``'compute_90'`` from a compute capability ``(9, 0)`` (``'compute_90a'`` from
    ``(9, 0, 'a')``, see :func:`arch_suffix`) or an arch string."""
    if isinstance(cc, str):
        return cc if cc.startswith("compute_") else "compute_" + cc.split("_")[-1]
    return "compute_" + arch_suffix(cc)


def _options(arch, opt, fastmath, debug, lineinfo):
    opts = [f"-arch={arch}", f"-opt={3 if opt is True else 0 if opt is False else int(opt)}"]
    if fastmath:
        opts += ["-ftz=1", "-prec-sqrt=0", "-prec-div=0", "-fma=1"]
    if debug:
        opts.append("-g")
    elif lineinfo:
        opts.append("-generate-line-info")
    return opts


def compile_ptx(llvm_ir, cc=(9, 0), *, opt=3, fastmath=False, debug=False, lineinfo=False,
                libdevice=None, name="cujit_module", lto=False):
    """Compile one NVVM IR module (text, str or bytes) to PTX (str), or with ``lto`` to
    LTO-IR (bytes: libNVVM's ``-gen-lto``, for nvJitLink's link-time optimisation).

    ``cc``: target compute capability ``(major, minor)`` or ``'compute_XY'``; ``opt``: 0–3
    (or bool); ``fastmath``: flush denormals and approximate div/sqrt; ``libdevice``: link
    libdevice (default: when the IR names a ``__nv_`` function).  Raises NvvmError with the
    compiler's log when the module is rejected, ValueError naming ``CUJIT_NVVM_BACKEND``
    when it holds something other than ``llvmlite``, ``nvvm`` or nothing; NvvmError for
    ``lto`` without libNVVM (llvmlite makes no LTO-IR).
    """
    backend = config.NVVM_BACKEND    # read at every compile: a malformed value is an error
    text = llvm_ir.encode() if isinstance(llvm_ir, str) else bytes(llvm_ir)
    if libdevice is None:
        libdevice = b"@__nv_" in text or b"@\"__nv_" in text   # llvmlite quotes names
    arch = arch_option(cc)
    nvvm = _nvvm()
    if lto:
        if nvvm is None:
            raise NvvmError(f"LTO-IR for {name} needs libNVVM (-gen-lto): "
                            + (_nvvm_state[1] or "it is not available"))
        return _compile_nvvm(nvvm, text, _options(arch, opt, fastmath, debug, lineinfo)
                             + ["-gen-lto"], libdevice, name, binary=True)
    if nvvm is None:
        if backend == "nvvm":
            raise NvvmError(_nvvm_state[1] + " (and CUJIT_NVVM_BACKEND=nvvm forbids llvmlite)")
        return _compile_llvmlite(text, arch, opt, fastmath, libdevice)
    return _compile_nvvm(nvvm, text, _options(arch, opt, fastmath, debug, lineinfo),
                         libdevice, name)


def _log(nvvm, prog):
    try:
        n = nvvm.get_program_log_size(prog)
        buf = bytearray(n)
        nvvm.get_program_log(prog, buf)
        return bytes(buf).rstrip(b"\0").decode(errors="replace")
    except Exception:
        return ""


def _compile_nvvm(nvvm, text, opts, libdevice, name, binary=False):
    with _lock:     # libNVVM programs are not shared, but numba and CuPy serialise too
        prog = nvvm.create_program()
        try:
            nvvm.add_module_to_program(prog, text, len(text), name)
            if libdevice:
                lib = _libdevice_bytes()
                nvvm.lazy_add_module_to_program(prog, lib, len(lib), "libdevice")
            try:
                nvvm.compile_program(prog, len(opts), opts)
            except nvvm.nvvmError as exc:
                raise NvvmError(f"libNVVM could not compile {name} ({' '.join(opts)}): {exc}",
                                _log(nvvm, prog)) from None
            size = nvvm.get_compiled_result_size(prog)
            buf = bytearray(size)
            nvvm.get_compiled_result(prog, buf)
        finally:
            nvvm.destroy_program(prog)
    return bytes(buf) if binary else bytes(buf).rstrip(b"\0").decode()


# PTX ISA that LLVM's NVPTX back end is asked for, per target major version: the lowest that
# supports the target, so that older drivers can still JIT it.
_LLVM_PTX = {7: "+ptx70", 8: "+ptx78", 9: "+ptx80", 10: "+ptx86", 12: "+ptx87"}
_llvm_ready = False


def _compile_llvmlite(text, arch, opt, fastmath, libdevice):
    global _llvm_ready
    import llvmlite.binding as llvm
    with _lock:
        if not _llvm_ready:
            llvm.initialize_all_targets()
            llvm.initialize_all_asmprinters()
            _llvm_ready = True
        try:
            mod = llvm.parse_assembly(text.decode())
            own = {f.name for f in mod.functions if not f.is_declaration}
            if libdevice:
                mod.link_in(llvm.parse_bitcode(_libdevice_bytes()))
                for f in mod.functions:
                    if not f.is_declaration and f.name not in own:
                        f.linkage = "internal"
            mod.verify()
            sm = "sm_" + arch.split("_")[-1]
            major = int(arch.split("_")[-1].rstrip("af")[:-1])
            feats = _LLVM_PTX.get(major, "+ptx80")
            level = 3 if opt is True else 0 if opt is False else int(opt)
            target = llvm.Target.from_triple("nvptx64-nvidia-cuda")
            tm = target.create_target_machine(cpu=sm, features=feats, opt=level)
            if level:
                pb = llvm.create_pass_builder(tm, llvm.PipelineTuningOptions(speed_level=level))
                pb.getModulePassManager().run(mod, pb)
            return tm.emit_assembly(mod)
        except RuntimeError as exc:
            raise NvvmError(f"llvmlite's NVPTX back end could not compile the module for "
                            f"{arch}", str(exc)) from None
