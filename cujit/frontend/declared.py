"""External device functions: ``cuda.declare_device(name, sig, link=...)``, numba.cuda's
declaration of a function written in CUDA C/C++, PTX or any code nvJitLink links (numba-cuda
docs, "Calling foreign functions from Python kernels").

The declaration is a :class:`DeclaredFunction` a kernel calls like a device function; the
typer records the call as ``CallKind.EXTERN`` and the NVVM lowering calls the symbol ``name``
with the declared ABI:

- ``abi='numba'`` (numba's default): ``int name(T *return_value, args...)``: the result is
  stored through the first parameter, the int returned is a status the caller ignores.
- ``abi='c'``: ``T name(args...)``: the result is returned directly.

Pointer parameters (``CPointer(float32)`` → ``float*``, ``voidptr`` → ``void*``) take a
pointer (``ffi.from_buffer(arr)``, a pointer parameter of the kernel) or an array of the
element type, whose data pointer is passed.  An array parameter (``float32[:]``) is passed
the same way, as its data pointer (numba.cuda passes its array structure's fields instead,
which no C function can read; docs/kernel-language.md lists the difference).

The code comes from the declaration's ``link=`` and the calling kernel's ``link=``; the
kernel links it (:mod:`.linker`).  The simulator has no body to run: a declaration may carry a
Python implementation (``sim=``, a cujit extension), else calling it on the simulator raises
NotImplementedError naming the function.
"""
import os

from .. import types as T
from .linkable import LinkableCode

__all__ = ["DeclaredFunction", "declare_device"]

_ABIS = ("numba", "c")


def _param_ok(t):
    return isinstance(t, (T.Integer, T.Float, T.Boolean, T.CPointer, T.RawPointer)) or (
        isinstance(t, T.Array) and isinstance(t.dtype, (T.Integer, T.Float, T.Boolean,
                                                         T.Complex, T.Record)))


def _return_ok(t):
    return isinstance(t, (T.Integer, T.Float, T.Boolean, T.CPointer, T.RawPointer))


class DeclaredFunction:
    """A device function declared by :func:`declare_device`: ``name`` (the C symbol),
    ``sig`` (a cujit ``Signature``), ``link`` (tuple of paths / linkable-code objects),
    ``use_cooperative`` (the kernels calling it are launched cooperatively), ``abi``
    (``'numba'`` or ``'c'``) and ``sim`` (its Python implementation for the simulator, or
    None).  Called from Python (the simulator running a kernel as written, with
    ``CUJIT_SIM_TYPED=0``), it runs ``sim`` and raises NotImplementedError without one."""

    def __init__(self, name, sig, link, use_cooperative, abi, sim):
        self.name = name
        self.sig = sig
        self.link = link
        self.use_cooperative = use_cooperative
        self.abi = abi
        self.sim = sim
        self.__name__ = self.__qualname__ = name

    def simulator(self, fn):
        """Decorator: ``fn`` (a Python function of the argument values returning the
        result) is this function's implementation on the simulator; returns ``fn``.
        TypeError when ``fn`` is not callable."""
        if not callable(fn):
            raise TypeError(f"declared function {self.name}: simulator() takes a function, "
                            f"got {fn!r}")
        self.sim = fn
        return fn

    def __call__(self, *args):
        if self.sim is None:
            raise NotImplementedError(
                f"declared device function {self.name} has no Python implementation: its "
                f"code is linked CUDA C/C++/PTX, which the simulator cannot run; give one "
                f"with cuda.declare_device(..., sim=python_function) or "
                f"@{self.name}.simulator")
        return self.sim(*args)

    def __repr__(self):
        return f"<declared device function {self.name} {self.sig}>"


def _links(name, link):
    if link is None:
        return ()
    if isinstance(link, (list, tuple, set)):
        items = tuple(link)
    else:
        items = (link,)
    for item in items:
        if not isinstance(item, (str, os.PathLike, LinkableCode)):
            raise TypeError(f"declare_device({name!r}): link entries must be file paths or "
                            f"linkable-code objects (cujit.CUSource, PTXSource, ...), got "
                            f"{item!r}")
    return items


def declare_device(name, sig, link=None, use_cooperative=False, abi="numba", sim=None):
    """Declare the external device function ``name`` (a C identifier) of signature ``sig``
    (a signature string such as ``'float32(float32, float32)'`` or a cujit Signature; the
    return type is required; parameters are integers, floats, booleans, pointers
    (``CPointer(dtype)``, ``voidptr``) or arrays (passed as their data pointer, ``T*``); the
    result is void, an integer, float, boolean or pointer) →
    a :class:`DeclaredFunction` that kernels call, as ``numba.cuda.declare_device``.

    ``link``: a path (``.cu``, ``.ptx``, ``.cubin``, ``.fatbin``, ``.o``, ``.a``,
    ``.ltoir``), a linkable-code object (``cujit.CUSource`` ...) or a list of them, linked
    into every kernel that calls the function.  ``use_cooperative``: the code needs a
    cooperative launch (grid sync).  ``abi``: ``'numba'`` (``int name(T *ret, args...)``)
    or ``'c'`` (``T name(args...)``).  ``sim`` (cujit's addition): a Python function the
    simulator runs for each call, given the argument values (a pointer, or an array passed
    for one, as a simulator pointer that ``p[i]`` reads and writes, bounds-checked); set
    later with ``@decl.simulator``.

    Raises ValueError for a name that is not a C identifier, NotImplementedError for
    another ``abi`` (as numba), TypeError for a signature without a return type, other
    parameter or return types, a bad ``link`` entry or a ``sim`` that is not callable."""
    if not isinstance(name, str) or not name.isidentifier():
        raise ValueError(f"declare_device: name must be a C identifier string, got {name!r}")
    if abi not in _ABIS:
        raise NotImplementedError(f"declare_device({name!r}): unsupported ABI {abi!r}; "
                                  f"expected one of {_ABIS}")
    parsed = sig if isinstance(sig, T.Signature) else T.parse_signature(sig)
    if not isinstance(parsed, T.Signature) or parsed.return_type is None:
        raise TypeError(f"declare_device({name!r}, {sig!r}): Return type must be given: "
                        f"a signature with a return type (e.g. 'float32(float32, float32)')")
    for t in parsed.args:
        if not _param_ok(t):
            raise TypeError(f"declare_device({name!r}, {sig!r}): parameter type {t} is not "
                            f"supported (integers, floats, booleans, pointers such as "
                            f"CPointer(float32) and voidptr, and arrays, passed as their "
                            f"data pointer, are)")
    rt = parsed.return_type
    if rt is not T.void and not _return_ok(rt):
        raise TypeError(f"declare_device({name!r}, {sig!r}): return type {rt} is not "
                        f"supported (void, integers, floats, booleans and pointers are)")
    if sim is not None and not callable(sim):
        raise TypeError(f"declare_device({name!r}): sim must be a Python function, got "
                        f"{sim!r}")
    return DeclaredFunction(name, parsed, _links(name, link), bool(use_cooperative), abi, sim)
