"""On-disk cache of compiled kernels (``@jit(cache=True)``, R-KER-10).

Each entry is one specialisation (kernel × argument types × options × target) stored as a
pickle of plain data: the kernel symbol, LLVM IR, PTX, cubin and the resource numbers the
launcher needs.  The key is a SHA-256 over

- the whole source file of the kernel (so an edited device function or global constant in the
  same file invalidates it), the function's qualified name, and the contents of the NumPy
  arrays it names (``const.array_like`` sources changed at run time),
- the argument types, the compile options and the target compute capability,
- cujit's version, cuda-bindings' version, the compiler backend asked for
  (``CUJIT_NVVM_BACKEND``) and the driver version.

The versions of libNVVM and nvJitLink that built an entry are stored *in* it, not in the key:
a hit in a fresh process must not load the compiler (loading libNVVM and nvJitLink is most of
a cache hit's cost otherwise).  When this process has already loaded them (it compiled
something), an entry built by other versions is treated as a miss and rebuilt.

Entries live in ``$CUJIT_CACHE_DIR`` (or ``$NUMBA_CACHE_DIR``) when set, else in a
``__pycache__/cujit`` folder next to the source file, else in ``~/.cache/cujit``.  Writes go to a
temporary file renamed into place, so concurrent processes never read half an entry; an
unreadable or stale entry is ignored and rewritten.  Not covered (as in Numba): changes in
other modules that the kernel reads at compile time.
"""
import os
import pickle
import tempfile
from ..config import config

try:    # CPython's own SHA-256: importing hashlib loads OpenSSL, a cost a cache hit can skip
    from _sha2 import sha256 as _sha256         # Python >= 3.12
except ImportError:
    try:
        from _sha256 import sha256 as _sha256   # Python <= 3.11
    except ImportError:                          # pragma: no cover - other interpreters
        from hashlib import sha256 as _sha256

__all__ = ["DiskCache", "cache_key"]

_FORMAT = 2


def _versions():
    """What the key holds of the environment: cheap to get, loads no compiler library."""
    from .. import __version__
    try:
        from cuda import bindings
        bindings_version = getattr(bindings, "__version__", None)
    except ImportError:
        bindings_version = None
    try:
        from ..driver import get_driver
        drv = get_driver().driver_version()
    except Exception:
        drv = None
    return (__version__, bindings_version, config.NVVM_BACKEND, drv)


def toolchain():
    """``(backend, libNVVM version, nvJitLink version)`` of this process; loads them."""
    from ..nvvm.libnvvm import nvvm_version, backend_name
    from ..nvvm.linker import nvjitlink_version
    return (backend_name(), nvvm_version(), nvjitlink_version())


def _loaded_toolchain():
    """:func:`toolchain` when this process already loaded the compiler, else None."""
    from ..nvvm import libnvvm, linker
    if not (libnvvm.nvvm_probed() and linker.nvjitlink_probed()):
        return None
    return toolchain()


def _source_digest(pyfunc):
    try:
        path = pyfunc.__code__.co_filename
        if not path.endswith(".py"):
            import inspect
            path = inspect.getsourcefile(pyfunc)
        with open(path, "rb") as f:
            return _sha256(f.read()).hexdigest(), path
    except (OSError, TypeError):
        return None, None


def _globals_digest(pyfunc):
    """Digest of the NumPy arrays the kernel names directly (globals and closure cells), so
    that a ``const.array_like`` source changed at run time is not served stale, and of the
    address and shape of the device arrays it captures."""
    import numpy as np
    h = _sha256()
    code = pyfunc.__code__
    g = pyfunc.__globals__
    values = [(n, g[n]) for n in code.co_names if n in g]
    for name, cell in zip(code.co_freevars, pyfunc.__closure__ or ()):
        try:
            values.append((name, cell.cell_contents))
        except ValueError:
            pass
    for name, v in values:
        if isinstance(v, np.ndarray):
            h.update(f"{name}:{v.dtype.str}:{v.shape}".encode())
            h.update(np.ascontiguousarray(v).tobytes())
        elif not isinstance(v, type) and hasattr(v, "__cuda_array_interface__"):
            # a captured device array: its address is frozen into the code, so it is part
            # of the key (another process's allocation must not reuse this entry)
            cai = v.__cuda_array_interface__
            h.update(f"{name}:{cai.get('data')}:{cai.get('shape')}:{cai.get('strides')}:"
                     f"{cai.get('typestr')}".encode())
    return h.hexdigest()


def cache_key(pyfunc, argtypes, options, cc):
    """Hex digest identifying one compiled specialisation, or None when the source file
    cannot be read (then nothing is cached).  ``argtypes``: tuple of cujit types;
    ``options``: dict of compile options; ``cc``: (major, minor)."""
    digest, _ = _source_digest(pyfunc)
    if digest is None:
        return None
    parts = (_FORMAT, digest, _globals_digest(pyfunc), pyfunc.__module__, pyfunc.__qualname__,
             tuple(str(t) for t in argtypes), tuple(sorted((k, repr(v)) for k, v in options.items())),
             tuple(cc), _versions())
    return _sha256(repr(parts).encode()).hexdigest()


class DiskCache:
    """The on-disk store of one kernel's specialisations.

    ``load(key)`` → the stored dict or None; ``save(key, entry)`` stores a dict of plain
    values (bytes/str/int).  I/O errors are swallowed: a cache must never break a launch."""

    def __init__(self, pyfunc):
        self.pyfunc = pyfunc
        self.directory = self._pick_dir()

    def _pick_dir(self):
        env = config.CACHE_DIR
        if env:
            return os.path.join(env, "cujit")
        _, path = _source_digest(self.pyfunc)
        if path:
            d = os.path.join(os.path.dirname(os.path.abspath(path)), "__pycache__", "cujit")
            try:
                os.makedirs(d, exist_ok=True)
                if os.access(d, os.W_OK):
                    return d
            except OSError:
                pass
        return os.path.join(os.path.expanduser("~"), ".cache", "cujit")

    def _path(self, key):
        name = f"{self.pyfunc.__module__}.{self.pyfunc.__qualname__}".replace("<", "_")
        return os.path.join(self.directory, f"{name.replace('>', '_')}-{key[:32]}.cjk")

    def load(self, key):
        if key is None:
            return None
        try:
            with open(self._path(key), "rb") as f:
                entry = pickle.load(f)
        except Exception:
            return None
        if not isinstance(entry, dict) or entry.get("key") != key:
            return None
        loaded = _loaded_toolchain()
        if loaded is not None and tuple(entry.get("toolchain") or ()) != loaded:
            return None
        return entry

    def has_entries(self):
        """True when some specialisation of this kernel is on disk (any key)."""
        prefix = os.path.basename(self._path("0" * 32)).rsplit("-", 1)[0] + "-"
        try:
            with os.scandir(self.directory) as it:
                return any(e.name.startswith(prefix) and e.name.endswith(".cjk") for e in it)
        except OSError:
            return False

    def save(self, key, entry):
        if key is None:
            return False
        entry = dict(entry, key=key, toolchain=toolchain())
        tmp = None
        try:
            # raises before any file exists for what cannot be pickled (an exception class
            # defined in a function, recorded by a debug kernel): nothing is cached then
            data = pickle.dumps(entry, protocol=pickle.HIGHEST_PROTOCOL)
            os.makedirs(self.directory, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=self.directory, suffix=".tmp")
            with os.fdopen(fd, "wb") as f:
                f.write(data)
            os.replace(tmp, self._path(key))
            return True
        except Exception:
            if tmp is not None and os.path.exists(tmp):
                os.unlink(tmp)
            return False
