"""PTX → ``sm_XY`` cubin through nvJitLink (``cuda.bindings.nvjitlink``).

A cubin made here loads on any driver that supports the GPU, whereas PTX must not be newer than
the driver's PTX ISA (driver 580 = CUDA 13.0 takes ≤ 9.0), so the launcher loads the cubin
whenever nvJitLink is present and falls back to PTX (its ``.version`` lowered to what the driver
reads, :func:`fit_ptx_version`) otherwise.
"""
import re
import threading

from ..frontend.errors import ToolchainError
from ..frontend.linkable import linkable_of
from .nvrtc import compile_cuda
from .libnvvm import arch_suffix

__all__ = ["LinkerError", "link_cubin", "nvjitlink_available", "nvjitlink_version",
           "sm_option", "fit_ptx_version", "driver_ptx_isa"]

_lock = threading.Lock()
_state = None


#: nvJitLink rejected the inputs; ``.log`` holds the tool's log.
LinkerError = ToolchainError


def _nvjitlink():
    global _state
    if _state is None:
        try:
            from cuda.bindings import nvjitlink
            nvjitlink.version()     # loads libnvJitLink; raises when absent
            _state = (nvjitlink,)
        except Exception:
            _state = (None,)
    return _state[0]


def nvjitlink_probed():
    """True when this process has already looked for nvJitLink (so asking costs nothing)."""
    return _state is not None


def nvjitlink_available():
    """True when nvJitLink loads here."""
    return _nvjitlink() is not None


def nvjitlink_version():
    """``(major, minor)`` of nvJitLink, or None when absent."""
    nj = _nvjitlink()
    return None if nj is None else tuple(nj.version())


def sm_option(cc):
    """``'sm_90'`` from ``(9, 0)`` (``'sm_90a'`` from ``(9, 0, 'a')``) or an arch string."""
    if isinstance(cc, str):
        return cc if cc.startswith("sm_") else "sm_" + cc.split("_")[-1]
    return "sm_" + arch_suffix(cc)


def _inputs(nj, files, cc, lto, debug, lineinfo):
    """``(InputType, bytes, name)`` of each ``link=`` entry; ``.cu`` code through NVRTC."""
    out = []
    for entry in files:
        code = linkable_of(entry)
        if code.kind == "cu":
            data = compile_cuda(code.data, cc, name=code.name, lto=lto, debug=debug,
                                lineinfo=lineinfo)
            kind = "LTOIR" if lto else "PTX"
        else:
            data, kind = code.data_bytes(), code.kind
        out.append((getattr(nj.InputType, kind), data, code.name))
    return out


def _text(nj, getter_size, getter, h):
    try:
        n = getter_size(h)
        buf = bytearray(n)
        getter(h, buf)
        return bytes(buf).rstrip(b"\0").decode(errors="replace")
    except Exception:
        return ""


def link_cubin(ptx, cc=(9, 0), *, files=(), max_registers=None, debug=False, lineinfo=False,
               name="cujit_module.ptx", lto=False, ltoir=False, output="cubin"):
    """Link PTX (str or bytes; with ``ltoir``, LTO-IR bytes from libNVVM's ``-gen-lto``) and
    the ``link=`` entries ``files`` (paths of .cu/.ptx/.cubin/.fatbin/.o/.a/.ltoir, or
    :mod:`.linkable` objects; CUDA C/C++ is compiled by NVRTC for ``cc`` first) into one
    cubin (bytes, an ELF image) for ``cc`` (``(9, 0)`` or ``'sm_90'``).  ``lto``: link-time
    optimisation (nvJitLink ``-lto``; NVRTC then makes LTO-IR).  ``output='ptx'``: the
    linked PTX (str) instead, which nvJitLink makes for LTO links only (``-ptx``: what
    ``inspect_lto_ptx`` shows; inputs other than LTO-IR are left out).

    Raises LinkerError with nvJitLink's log when linking fails (a declared function no input
    defines, for one), or when nvJitLink is absent; NvrtcError with NVRTC's log for CUDA
    C/C++ that does not compile; ValueError for a file whose kind cannot be told from its
    extension or an ``output`` other than 'cubin'/'ptx'; TypeError for an entry that is
    neither a path nor a linkable-code object.
    """
    if output not in ("cubin", "ptx"):
        raise ValueError(f"output must be 'cubin' or 'ptx', got {output!r}")
    nj = _nvjitlink()
    if nj is None:
        raise LinkerError("nvJitLink is not available (install nvidia-nvjitlink)")
    data = ptx.encode() if isinstance(ptx, str) else bytes(ptx)
    lto = bool(lto or ltoir)
    opts = [f"-arch={sm_option(cc)}"]
    if lto:
        opts.append("-lto")
    if output == "ptx":
        opts.append("-ptx")
    if max_registers:
        opts.append(f"-maxrregcount={int(max_registers)}")
    if debug:
        opts.append("-g")
    elif lineinfo:
        opts.append("-lineinfo")
    cc_tuple = cc if not isinstance(cc, str) else _cc_of(cc)
    inputs = _inputs(nj, files, cc_tuple, lto, debug, lineinfo)
    if output == "ptx":
        # nvJitLink makes PTX only from LTO-IR; the other inputs are left out, as numba's
        # get_lto_ptx does (their functions stay calls of external symbols)
        inputs = [i for i in inputs if i[0] == nj.InputType.LTOIR]
    with _lock:
        h = nj.create(len(opts), opts)
        try:
            try:
                nj.add_data(h, nj.InputType.LTOIR if ltoir else nj.InputType.PTX, data,
                            len(data), name)
                for kind, blob, what in inputs:
                    nj.add_data(h, kind, blob, len(blob), what)
                nj.complete(h)
            except nj.nvJitLinkError as exc:
                log = _text(nj, nj.get_error_log_size, nj.get_error_log, h)
                raise LinkerError(f"nvJitLink could not link {name} for {opts[0][6:]}: {exc}",
                                  log) from None
            if output == "ptx":
                n = nj.get_linked_ptx_size(h)
                buf = bytearray(n)
                nj.get_linked_ptx(h, buf)
                return bytes(buf).rstrip(b"\0").decode()
            n = nj.get_linked_cubin_size(h)
            buf = bytearray(n)
            nj.get_linked_cubin(h, buf)
        finally:
            nj.destroy(h)
    return bytes(buf)


def _cc_of(arch):
    """``(9, 0)`` / ``(9, 0, 'a')`` from ``'sm_90'`` / ``'sm_90a'``."""
    digits = arch.split("_")[-1]
    suffix = digits[-1] if digits[-1].isalpha() else ""
    digits = digits.rstrip("af")
    cc = (int(digits[:-1]), int(digits[-1]))
    return cc + (suffix,) if suffix else cc


def driver_ptx_isa(driver_version):
    """The newest PTX ISA ``(major, minor)`` a driver of ``driver_version`` (e.g. 13000) JITs."""
    major, minor = driver_version // 1000, (driver_version % 1000) // 10
    if major >= 13:
        return (9, minor)
    if major == 12:
        return (8, min(minor, 8))
    if major == 11:
        return (7, min(minor, 8))
    return (6, 4)


PTX_VERSION = re.compile(rb"^\.version\s+(\d+)\.(\d+)", re.M)


def fit_ptx_version(ptx, driver_version):
    """PTX (bytes) whose ``.version`` is at most what the driver reads.

    LLVM and libNVVM stamp the newest ISA they know even when the kernel uses nothing from it;
    lowering the stamp lets an older driver JIT it (a feature really missing is then reported
    by the driver at load time)."""
    data = ptx.encode() if isinstance(ptx, str) else bytes(ptx)
    m = PTX_VERSION.search(data)
    if m is None:
        return data
    have = (int(m.group(1)), int(m.group(2)))
    top = driver_ptx_isa(driver_version)
    if have <= top:
        return data
    return data[:m.start()] + b".version %d.%d" % top + data[m.end():]
