"""PTX → ``sm_XY`` cubin through nvJitLink (``cuda.bindings.nvjitlink``).

A cubin made here loads on any driver that supports the GPU, whereas PTX must not be newer than
the driver's PTX ISA (driver 580 = CUDA 13.0 takes ≤ 9.0), so the launcher loads the cubin
whenever nvJitLink is present and falls back to PTX (its ``.version`` lowered to what the driver
reads, :func:`fit_ptx_version`) otherwise.
"""
import os
import re
import threading

from .errors import ToolchainError
from .nvvm import arch_suffix

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


_KINDS = {".ptx": "PTX", ".cubin": "CUBIN", ".fatbin": "FATBIN", ".o": "OBJECT",
          ".a": "LIBRARY", ".ltoir": "LTOIR"}


def _text(nj, getter_size, getter, h):
    try:
        n = getter_size(h)
        buf = bytearray(n)
        getter(h, buf)
        return bytes(buf).rstrip(b"\0").decode(errors="replace")
    except Exception:
        return ""


def link_cubin(ptx, cc=(9, 0), *, files=(), max_registers=None, debug=False, lineinfo=False,
               name="cujit_module.ptx"):
    """Link PTX (str or bytes) and extra ``files`` (paths of .ptx/.cubin/.fatbin/.o/.a/.ltoir)
    into one cubin (bytes, an ELF image) for ``cc`` (``(9, 0)`` or ``'sm_90'``).

    Raises LinkerError with nvJitLink's log when linking fails, or when nvJitLink is absent;
    ValueError for a file whose kind cannot be told from its extension.
    """
    nj = _nvjitlink()
    if nj is None:
        raise LinkerError("nvJitLink is not available (install nvidia-nvjitlink)")
    data = ptx.encode() if isinstance(ptx, str) else bytes(ptx)
    opts = [f"-arch={sm_option(cc)}"]
    if max_registers:
        opts.append(f"-maxrregcount={int(max_registers)}")
    if debug:
        opts.append("-g")
    elif lineinfo:
        opts.append("-lineinfo")
    kinds = []
    for path in files:
        ext = os.path.splitext(str(path))[1].lower()
        if ext not in _KINDS:
            raise ValueError(f"cannot link {path!r}: its extension {ext!r} is not one of "
                             f"{', '.join(sorted(_KINDS))}")
        kinds.append((str(path), getattr(nj.InputType, _KINDS[ext])))
    with _lock:
        h = nj.create(len(opts), opts)
        try:
            try:
                nj.add_data(h, nj.InputType.PTX, data, len(data), name)
                for path, kind in kinds:
                    nj.add_file(h, kind, path)
                nj.complete(h)
            except nj.nvJitLinkError as exc:
                log = _text(nj, nj.get_error_log_size, nj.get_error_log, h)
                raise LinkerError(f"nvJitLink could not link {name} for {opts[0][6:]}: {exc}",
                                  log) from None
            n = nj.get_linked_cubin_size(h)
            buf = bytearray(n)
            nj.get_linked_cubin(h, buf)
        finally:
            nj.destroy(h)
    return bytes(buf)


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
