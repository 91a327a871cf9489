"""Code to link into a kernel from memory: numba-cuda's linkable-code classes
(``numba.cuda.CUSource``, ``PTXSource``, ``Cubin``, ``Fatbin``, ``LTOIR``, ``Archive``,
``Object``; numba-cuda's ``cudadrv/linkable_code.py``).

An object holds the code (``data``: str or bytes, or an ``io.StringIO``/``io.BytesIO`` read
when used) and a ``name`` that compiler and linker messages use.  ``link=`` of ``jit`` and
``declare_device`` takes these objects and file paths alike; :func:`linkable_of` turns a path
into the object of its extension, so the linker sees one kind of input.
"""
import hashlib
import io
import os

__all__ = ["LinkableCode", "CUSource", "PTXSource", "Cubin", "Fatbin", "LTOIR", "Archive",
           "Object", "linkable_of", "same_entry", "EXTENSIONS"]


class LinkableCode:
    """Code to link from memory.  ``data``: str, bytes (or bytearray/memoryview), or an
    ``io.StringIO``/``io.BytesIO`` whose content is read when :attr:`data` is used;
    ``name``: the name messages give it (default: the class's ``<unnamed-...>``);
    ``setup_callback(object_code)`` / ``teardown_callback(object_code)``: callables called,
    as numba-cuda's, with the cuda.core ``ObjectCode`` (its ``handle`` the ``CUlibrary``) of
    each module a kernel linking this code is loaded as: setup after the load, before the
    first launch in that context; teardown when the module unloads (dispatch/launcher.py
    ``load_kernel``; needs cuda.core on the GPU; the simulator calls neither); ``nrt``: numba's flag for code calling its
    runtime (cujit has no NRT, so True is refused).

    Raises TypeError for data of another type or a callback that is not callable,
    NotImplementedError for ``nrt=True``."""

    #: the nvJitLink input kind (``cuda.bindings.nvjitlink.InputType`` member name), or
    #: ``'cu'`` for CUDA C/C++ compiled with NVRTC first
    kind = None
    default_name = "<unnamed>"

    def __init__(self, data, name=None, setup_callback=None, teardown_callback=None,
                 nrt=False):
        if not isinstance(data, (str, bytes, bytearray, memoryview, io.StringIO, io.BytesIO)):
            raise TypeError(f"{type(self).__name__}: data must be str, bytes or an "
                            f"io.StringIO/BytesIO, got {type(data).__name__}")
        for what, cb in (("setup_callback", setup_callback),
                         ("teardown_callback", teardown_callback)):
            if cb is not None and not callable(cb):
                raise TypeError(f"{type(self).__name__}: {what} must be callable, got {cb!r}")
        if nrt:
            raise NotImplementedError(f"{type(self).__name__}(nrt=True): cujit has no Numba "
                                      "runtime (NRT) to link")
        if name is not None and not isinstance(name, str):
            raise TypeError(f"{type(self).__name__}: name must be a str, got {name!r}")
        self._code = data
        self._name = name
        self.setup_callback = setup_callback
        self.teardown_callback = teardown_callback
        self.nrt = False

    @property
    def name(self):
        """The name (str) compiler and linker messages give this code."""
        return self._name or self.default_name

    @property
    def data(self):
        """The code: str or bytes as given (a StringIO/BytesIO's content)."""
        d = self._code
        if isinstance(d, (io.StringIO, io.BytesIO)):
            return d.getvalue()
        if isinstance(d, (bytearray, memoryview)):
            return bytes(d)
        return d

    def data_bytes(self):
        """The code as bytes (str encoded as UTF-8)."""
        d = self.data
        return d.encode() if isinstance(d, str) else d

    @staticmethod
    def from_path(path):
        """The linkable-code object of file ``path`` (str or os.PathLike), of the class its
        extension names (:data:`EXTENSIONS`), named after the file.  ValueError for another
        extension, OSError when the file cannot be read."""
        path = os.fspath(path)
        root, ext = os.path.splitext(path)
        cls = _class_of(path, ext)
        with open(path, "rb") as f:
            data = f.read()
        if cls in (CUSource, PTXSource):
            data = data.decode(errors="replace")
        return cls(data, name=os.path.basename(path))

    def key(self):
        """What identifies this code in a kernel's cache key: class, name and a digest of
        the data (str)."""
        return f"{type(self).__name__}:{self.name}:{hashlib.sha1(self.data_bytes()).hexdigest()}"

    def __repr__(self):
        return f"<{type(self).__name__} {self.name}>"


class CUSource(LinkableCode):
    """CUDA C/C++ source text, compiled by NVRTC (:mod:`.nvrtc`) when linked."""
    kind = "cu"
    default_name = "<unnamed-cu>"


class PTXSource(LinkableCode):
    """PTX text."""
    kind = "PTX"
    default_name = "<unnamed-ptx>"


class Cubin(LinkableCode):
    """An ELF cubin."""
    kind = "CUBIN"
    default_name = "<unnamed-cubin>"


class Fatbin(LinkableCode):
    """A fat binary."""
    kind = "FATBIN"
    default_name = "<unnamed-fatbin>"


class LTOIR(LinkableCode):
    """LTO-IR (NVRTC's ``-dlto`` or libNVVM's ``-gen-lto`` output), linked with ``lto``."""
    kind = "LTOIR"
    default_name = "<unnamed-ltoir>"


class Archive(LinkableCode):
    """A static library (``.a``) of objects."""
    kind = "LIBRARY"
    default_name = "<unnamed-archive>"


class Object(LinkableCode):
    """A relocatable object file (``.o``)."""
    kind = "OBJECT"
    default_name = "<unnamed-object>"


#: file extension -> linkable-code class
EXTENSIONS = {".cu": CUSource, ".ptx": PTXSource, ".cubin": Cubin, ".fatbin": Fatbin,
              ".ltoir": LTOIR, ".a": Archive, ".o": Object}


def _class_of(path, ext):
    cls = EXTENSIONS.get(ext.lower())
    if cls is None:
        raise ValueError(f"cannot link {path!r}: its extension {ext!r} is not one of "
                         f"{', '.join(sorted(EXTENSIONS))}")
    return cls


def linkable_of(entry):
    """``entry`` of a ``link=`` list as a :class:`LinkableCode`: the object itself, or the
    file a path (str or os.PathLike) names, read now.  TypeError for anything else,
    ValueError for an unknown extension, OSError for a file that cannot be read."""
    if isinstance(entry, LinkableCode):
        return entry
    if isinstance(entry, (str, os.PathLike)):
        return LinkableCode.from_path(entry)
    raise TypeError(f"link= entries must be file paths or linkable-code objects "
                    f"(cujit.CUSource, PTXSource, Cubin, Fatbin, LTOIR, Archive, Object), "
                    f"got {entry!r}")


def same_entry(a, b):
    """True when ``link=`` entries ``a`` and ``b`` are the same code: one object, or paths
    naming the same file (linking it twice would define its symbols twice)."""
    if a is b:
        return True
    if isinstance(a, LinkableCode) or isinstance(b, LinkableCode):
        return False
    return os.path.abspath(os.fspath(a)) == os.path.abspath(os.fspath(b))
