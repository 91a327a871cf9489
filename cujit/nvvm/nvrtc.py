"""CUDA C/C++ → PTX or LTO-IR through NVRTC (``cuda.bindings.nvrtc``; the library comes from
NVIDIA's ``nvidia-cuda-nvrtc`` wheel or a CUDA toolkit, found by cuda-pathfinder as libNVVM and
nvJitLink are), for ``link=`` entries that are ``.cu`` files or ``CUSource`` objects.

Sources are compiled as relocatable device code (``-rdc=true``) so that their ``extern "C"
__device__`` functions stay for the linker, as numba-cuda compiles them.  Include paths: the
CUDA runtime and CCCL headers cuda-pathfinder finds (wheels or toolkit), then
``config.CUDA_NVRTC_EXTRA_SEARCH_PATHS`` (``:``-separated, numba-cuda's setting).
"""
import threading

from ..config import config
from ..frontend.errors import ToolchainError
from .libnvvm import arch_suffix

__all__ = ["NvrtcError", "compile_cuda", "nvrtc_available", "nvrtc_version", "include_dirs"]

_lock = threading.Lock()
_state = None


#: NVRTC rejected a source, or is absent; ``.log`` holds NVRTC's program log.
NvrtcError = ToolchainError


def _nvrtc():
    global _state
    if _state is None:
        try:
            from cuda.bindings import nvrtc
            err, _, _ = nvrtc.nvrtcVersion()     # loads libnvrtc; raises when absent
            _state = (nvrtc if int(err) == 0 else None,)
        except Exception:
            _state = (None,)
    return _state[0]


def nvrtc_available():
    """True when NVRTC loads here."""
    return _nvrtc() is not None


def nvrtc_version():
    """``(major, minor)`` of NVRTC, or None when it is absent."""
    nv = _nvrtc()
    if nv is None:
        return None
    _, major, minor = nv.nvrtcVersion()
    return (major, minor)


def include_dirs():
    """The include directories (list of str) given to NVRTC: the CUDA runtime's and CCCL's
    headers where cuda-pathfinder finds them, then ``config.CUDA_NVRTC_EXTRA_SEARCH_PATHS``."""
    dirs = []
    try:
        from cuda.pathfinder import find_nvidia_header_directory
    except ImportError:
        find_nvidia_header_directory = None
    if find_nvidia_header_directory is not None:
        for lib in ("cudart", "cccl"):
            try:
                d = find_nvidia_header_directory(lib)
            except Exception:        # an unknown name in an older cuda-pathfinder
                d = None
            if d and d not in dirs:
                dirs.append(d)
    extra = config.CUDA_NVRTC_EXTRA_SEARCH_PATHS
    dirs += [p for p in extra.split(":") if p] if extra else []
    return dirs


def _check(nv, result, what):
    if int(result[0]) != 0:
        _, text = nv.nvrtcGetErrorString(result[0])
        raise NvrtcError(f"NVRTC {what} failed: {text.decode(errors='replace')}")
    return result[1:]


def _log(nv, prog):
    try:
        _, n = nv.nvrtcGetProgramLogSize(prog)
        buf = b" " * n
        nv.nvrtcGetProgramLog(prog, buf)
        return buf.rstrip(b"\0").decode(errors="replace").strip()
    except Exception:
        return ""


def compile_cuda(source, cc=(9, 0), *, name="<unnamed-cu>", lto=False, debug=False,
                 lineinfo=False):
    """Compile CUDA C/C++ ``source`` (str or bytes) for compute capability ``cc`` (``(9, 0)``,
    ``(9, 0, 'a')``) → PTX (bytes, ``-arch=compute_XY``) or, with ``lto``, LTO-IR (bytes,
    ``-arch=sm_XY -dlto``).  ``name``: the file name in NVRTC's messages.

    Raises NvrtcError when NVRTC is absent (install ``nvidia-cuda-nvrtc``, in cujit's
    ``[cu13]``/``[cu12]`` extras) or rejects the source (the message names the source and
    holds NVRTC's log); ValueError/TypeError for a bad ``cc``."""
    nv = _nvrtc()
    if nv is None:
        raise NvrtcError(f"cannot compile {name}: NVRTC is not available (install the "
                         "nvidia-cuda-nvrtc wheel, part of cujit's [cu13] / [cu12] extras)")
    src = source.encode() if isinstance(source, str) else bytes(source)
    suffix = arch_suffix(cc)
    opts = ["-rdc=true", f"-arch=sm_{suffix}" if lto else f"-arch=compute_{suffix}"]
    if lto:
        opts.append("-dlto")
    if debug:
        opts.append("-G")
    elif lineinfo:
        opts.append("-lineinfo")
    opts += [f"-I{d}" for d in include_dirs()]
    bopts = [o.encode() for o in opts]
    with _lock:
        (prog,) = _check(nv, nv.nvrtcCreateProgram(src, name.encode(), 0, [], []),
                         "nvrtcCreateProgram")
        try:
            (err,) = nv.nvrtcCompileProgram(prog, len(bopts), bopts)
            if int(err) != 0:
                _, text = nv.nvrtcGetErrorString(err)
                raise NvrtcError(f"NVRTC could not compile {name} ({' '.join(opts[:3])}): "
                                 f"{text.decode(errors='replace')}", _log(nv, prog))
            if lto:
                (n,) = _check(nv, nv.nvrtcGetLTOIRSize(prog), "nvrtcGetLTOIRSize")
                buf = b" " * n
                _check(nv, nv.nvrtcGetLTOIR(prog, buf) + (None,), "nvrtcGetLTOIR")
            else:
                (n,) = _check(nv, nv.nvrtcGetPTXSize(prog), "nvrtcGetPTXSize")
                buf = b" " * n
                _check(nv, nv.nvrtcGetPTX(prog, buf) + (None,), "nvrtcGetPTX")
        finally:
            nv.nvrtcDestroyProgram(prog)
    return buf.rstrip(b"\0") if not lto else buf
