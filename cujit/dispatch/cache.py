"""On-disk cache of compiled kernels (``@jit(cache=True)``, R-KER-10).

Each entry is one specialisation (kernel × argument types × options × target) stored as a
pickle of plain data: the kernel symbol, LLVM IR, PTX, cubin and the resource numbers the
launcher needs.  The key is a SHA-256 over

- the whole source file of the kernel (so an edited device function or global constant in the
  same file invalidates it) and those of the device functions it calls from other files, the function's qualified name and first line (two functions of
  one name in a file are two kernels), the contents of the NumPy arrays it names
  (``const.array_like`` sources changed at run time) and the values it captures from an
  enclosing function (pickled: closures made with other values are other kernels; numba
  keys on them too),
- the contents of its ``link=`` files,
- the argument types, the compile options and the target compute capability,
- cujit's version, cuda-bindings' version, the compiler backend asked for
  (``CUJIT_NVVM_BACKEND``) and the driver version.

The versions of libNVVM and nvJitLink that built an entry are stored *in* it, not in the key:
a hit in a fresh process must not load the compiler (loading libNVVM and nvJitLink is most of
a cache hit's cost otherwise).  When this process has already loaded them (it compiled
something), an entry built by other versions is treated as a miss and rebuilt.

Global scalars are not in the key (as in Numba): a kernel compiled with ``Z = 1`` is served
from the cache after the program sets ``Z = 10``; ``kernel.recompile()`` compiles it again and
overwrites the entry.  A kernel that refers to a device array (a global or a captured one)
cannot be cached: its address is frozen into the code (``pickle.PicklingError``, as numba's).

The files (numba's layout): in the ``__pycache__`` folder next to the source file (else in
``~/.cache/cujit``; ``$CUJIT_CACHE_DIR`` or ``$NUMBA_CACHE_DIR``, when set, holds them in its
``cujit`` folder; in those two shared places, a folder per source folder,
``<name>_<digest of its path>``), one index per kernel, ``<module>.<qualname>-<line>.py<XY>.cji``, and one
data file per specialisation, ``<same>.<key>.cjc``.  The index records the source digest and
the data files made from that source: when the source changes, the next entry saved replaces
the index and deletes the data files of the old source.  A lookup reads the data file its key
names, never the index (so a process that lost a race to write the index still finds the
entry).  Writes go to a temporary file renamed into place, so concurrent processes never read
half a file; an unreadable or stale entry is ignored and rewritten.  The device functions (and
Numba CPU functions) a kernel names, directly or as ``module.f``, key their own source files
and what they name in turn, so editing one in another module recompiles the kernel (Numba's
cache misses that change).  Not covered (as in Numba): other values of other modules that
the kernel reads at compile time.
"""
import os
import pickle
import sys
import tempfile
import types
from ..config import config

try:    # CPython's own SHA-256: importing hashlib loads OpenSSL, a cost a cache hit can skip
    from _sha2 import sha256 as _sha256         # Python >= 3.12
except ImportError:
    try:
        from _sha256 import sha256 as _sha256   # Python <= 3.11
    except ImportError:                          # pragma: no cover - other interpreters
        from hashlib import sha256 as _sha256

__all__ = ["DiskCache", "cache_key"]

_FORMAT = 3


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


def _refuse_device_array(pyfunc, name):
    raise pickle.PicklingError(
        f"cannot cache kernel {pyfunc.__qualname__}: it refers to device array {name!r}, and "
        f"kernels that refer to global device arrays cannot be cached (the array's address "
        f"is frozen into the code); pass the array as an argument, or drop cache=True")


def _is_device_array(v):
    return not isinstance(v, type) and hasattr(v, "__cuda_array_interface__")


def _named_values(pyfunc):
    """``[(name, value, captured)]``: the globals ``pyfunc`` names, the attributes it reads
    of the modules it names (``mod.f``), and the values of its closure cells."""
    code = pyfunc.__code__
    g = pyfunc.__globals__
    names = set(code.co_names)
    values = []
    for n in code.co_names:
        if n not in g:
            continue
        v = g[n]
        values.append((n, v, False))
        if isinstance(v, types.ModuleType):
            attrs = vars(v)
            values += [(f"{n}.{a}", attrs[a], False) for a in names if a != n and a in attrs]
    for name, cell in zip(code.co_freevars, pyfunc.__closure__ or ()):
        try:
            values.append((name, cell.cell_contents, True))
        except ValueError:
            pass
    return values


def _callee(v):
    """The Python function of a device function, kernel or Numba CPU function ``v`` (what a
    kernel calling it compiles in), else None."""
    f = getattr(v, "py_func", None) if not isinstance(v, type) else None
    return f if hasattr(f, "__code__") and hasattr(f, "__globals__") else None


def _globals_digest(pyfunc, seen=None):
    """Digest of the NumPy arrays the kernel names directly (globals and closure cells), so
    that a ``const.array_like`` source changed at run time is not served stale, of the
    other values it captures from an enclosing function (pickled), and of the device
    functions it calls (by name or as ``module.f``) — their source files and, in turn, what
    they name — so that an edit of a device function in another module is not served
    stale.  None when a captured value cannot be pickled or a callee's source cannot be read
    (then the kernel is not cached); PicklingError when the kernel refers to a device
    array."""
    import numpy as np
    h = _sha256()
    seen = {pyfunc} if seen is None else seen
    for name, v, captured in _named_values(pyfunc):
        callee = _callee(v)
        if callee is not None:
            if callee not in seen:
                seen.add(callee)
                digest, _ = _source_digest(callee)
                inner = _globals_digest(callee, seen)
                if digest is None or inner is None:
                    return None
                h.update(f"{name}:{callee.__qualname__}:{digest}:{inner}".encode())
            continue
        if isinstance(v, np.ndarray):
            h.update(f"{name}:{v.dtype.str}:{v.shape}".encode())
            h.update(np.ascontiguousarray(v).tobytes())
        elif _is_device_array(v):
            _refuse_device_array(pyfunc, name)
        elif captured:
            try:
                h.update(f"{name}:".encode() + pickle.dumps(v, protocol=4))
            except Exception:
                return None
    return h.hexdigest()


def _link_digest(links):
    """Digest of the contents of the ``link=`` files (paths; linkable-code objects carry a
    digest of their data in their key already); a file that cannot be read counts by name
    (the link step reports it)."""
    h = _sha256()
    for p in links:
        if isinstance(p, (str, os.PathLike)):
            try:
                with open(p, "rb") as f:
                    h.update(f.read())
            except OSError:
                h.update(os.fsencode(p))
    return h.hexdigest()


def cache_key(pyfunc, argtypes, options, cc, links=()):
    """Hex digest identifying one compiled specialisation, or None when the source file
    cannot be read or a captured value cannot be pickled (then nothing is cached).
    ``argtypes``: tuple of cujit types; ``options``: dict of compile options; ``cc``:
    (major, minor); ``links``: the ``link=`` entries (their files' contents are keyed).
    PicklingError when the kernel refers to a device array."""
    digest, _ = _source_digest(pyfunc)
    if digest is None:
        return None
    captured = _globals_digest(pyfunc)
    if captured is None:
        return None
    parts = (_FORMAT, digest, captured, pyfunc.__module__, pyfunc.__qualname__,
             pyfunc.__code__.co_firstlineno, _link_digest(links),
             tuple(str(t) for t in argtypes), tuple(sorted((k, repr(v)) for k, v in options.items())),
             tuple(cc), _versions())
    return _sha256(repr(parts).encode()).hexdigest()


def _shared_dir(root, src_dir):
    """The folder of a cache shared by many source folders (``CACHE_DIR``, the user-wide
    one): one per source folder, ``<its name>_<digest of its path>`` (numba's scheme), so that
    the kernels of two ``mod.py`` files never share an index."""
    if src_dir is None:
        return root
    digest = _sha256(os.fsencode(src_dir)).hexdigest()[:16]
    return os.path.join(root, f"{os.path.basename(src_dir) or 'root'}_{digest}")


class DiskCache:
    """The on-disk store of one kernel's specialisations (the files: module docstring).

    ``load(key)`` → the stored dict or None; ``save(key, entry)`` stores a dict of plain
    values (bytes/str/int).  I/O errors are swallowed: a cache must never break a launch.
    ``directory``: where the files are (numba's ``stats.cache_path``)."""

    def __init__(self, pyfunc):
        self.pyfunc = pyfunc
        self.directory = self._pick_dir()
        name = f"{pyfunc.__module__}.{pyfunc.__qualname__}".replace("<", "_").replace(">", "_")
        self._base = (f"{name}-{pyfunc.__code__.co_firstlineno}"
                      f".py{sys.version_info[0]}{sys.version_info[1]}")

    def _pick_dir(self):
        _, path = _source_digest(self.pyfunc)
        src_dir = os.path.dirname(os.path.abspath(path)) if path else None
        env = config.CACHE_DIR
        if env:
            return _shared_dir(os.path.join(env, "cujit"), src_dir)
        if src_dir:
            d = os.path.join(src_dir, "__pycache__")
            try:
                os.makedirs(d, exist_ok=True)
                if os.access(d, os.W_OK):
                    return d
            except OSError:
                pass
        return _shared_dir(os.path.join(os.path.expanduser("~"), ".cache", "cujit"), src_dir)

    def _path(self, key):
        return os.path.join(self.directory, f"{self._base}.{key[:32]}.cjc")

    @property
    def index_path(self):
        """The kernel's index file."""
        return os.path.join(self.directory, self._base + ".cji")

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
        """True when some specialisation of this kernel is on disk (its index exists)."""
        return os.path.exists(self.index_path)

    def _read_index(self):
        try:
            with open(self.index_path, "rb") as f:
                index = pickle.load(f)
            if isinstance(index, dict) and isinstance(index.get("entries"), list):
                return index
        except Exception:
            pass
        return None

    def _write(self, path, data):
        tmp = None
        try:
            os.makedirs(self.directory, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=self.directory, suffix=".tmp")
            with os.fdopen(fd, "wb") as f:
                f.write(data)
            os.replace(tmp, path)
            return True
        except Exception:
            if tmp is not None and os.path.exists(tmp):
                os.unlink(tmp)
            return False

    def _update_index(self, name):
        """List data file ``name`` in the index; a source other than the index's replaces
        it, and the data files the old index listed are deleted."""
        source, _ = _source_digest(self.pyfunc)
        index = self._read_index()
        if index is not None and index.get("source") == source:
            if name in index["entries"]:
                return
            index["entries"].append(name)
        else:
            for old in (index or {}).get("entries", ()):
                if old != name:
                    try:
                        os.unlink(os.path.join(self.directory, old))
                    except OSError:
                        pass
            index = {"source": source, "entries": [name]}
        self._write(self.index_path, pickle.dumps(index, protocol=pickle.HIGHEST_PROTOCOL))

    def save(self, key, entry):
        if key is None:
            return False
        entry = dict(entry, key=key, toolchain=toolchain())
        try:
            # raises before any file exists for what cannot be pickled (an exception class
            # defined in a function, recorded by a debug kernel): nothing is cached then
            data = pickle.dumps(entry, protocol=pickle.HIGHEST_PROTOCOL)
        except Exception:
            return False
        path = self._path(key)
        if not self._write(path, data):
            return False
        self._update_index(os.path.basename(path))
        return True
