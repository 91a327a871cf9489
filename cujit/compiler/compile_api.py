"""numba.cuda's ahead-of-time compilation functions: ``compile``, ``compile_for_current_device``,
``compile_ptx``, ``compile_ptx_for_current_device`` and ``declare_device``.

They run the one compiler pipeline (:func:`cujit.compiler.dispatcher.compile_ptx`: typing,
lowering to NVVM IR, libNVVM) and need no GPU: the target is ``cc`` or, for the
``*_for_current_device`` forms, the current device's compute capability.  Each returns
``(code, return_type)`` as numba.cuda does.

Differences from numba.cuda, reported rather than ignored: ``output='ltoir'`` and
``abi_info`` raise NotImplementedError (cujit makes no LTO-IR and does not rename entry
points); device functions are emitted with cujit's calling convention (the value returned
directly, as numba's ``abi='c'``) whichever ``abi`` is named.
"""
from .. import types as ct

__all__ = ["compile", "compile_all", "compile_for_current_device", "compile_ptx",
           "compile_ptx_for_current_device", "declare_device", "config_default_cc",
           "numba_cuda_default_ptx_cc"]

#: The compute capability that ``compile`` & co. target when given no ``cc`` (numba.cuda's
#: two names for its default; numba-cuda's value is (7, 5), cujit's is sm_90).
config_default_cc = numba_cuda_default_ptx_cc = (9, 0)

_ABIS = ("c", "numba")


def compile(pyfunc, sig, debug=None, lineinfo=False, device=True, fastmath=False, cc=None,
            opt=None, abi="c", abi_info=None, output="ptx", forceinline=False,
            launch_bounds=None):
    """Compile ``pyfunc`` (a Python function or a ``cujit.jit`` object) for signature ``sig``
    (a signature string such as ``'float32(float32, float32)'``, a Signature, or a tuple of
    argument types) → ``(ptx, return_type)``, as ``numba.cuda.compile``.

    ``device``: True (the default here, as in numba) for a device function, False for a
    kernel (whose return type must be void).  ``cc``: target compute capability tuple
    (default (9, 0)); ``opt``: optimise (None/True → level 3, False/0 → none); ``debug``,
    ``lineinfo``, ``fastmath``: as for ``jit``.  ``output``: ``'ptx'`` only.

    ``launch_bounds``: an int or 1–3 ints (max threads per block, min blocks per SM, max
    blocks per cluster) for a kernel, as the jit option; ``cc`` may be ``(9, 0, 'a')`` for the
    architecture-specific target (``.target sm_90a``).

    Raises ValueError for an unknown ``output`` or ``abi``, more than three launch bounds or
    launch bounds on a device function; NotImplementedError for ``output='ltoir'``,
    ``abi_info`` or ``forceinline``; TypingError / CompileError for code that does not
    compile."""
    from .dispatcher import compile_ptx as _compile
    if output not in ("ptx", "ltoir"):
        raise ValueError(f"output must be 'ptx' or 'ltoir', got {output!r}")
    if output == "ltoir":
        raise NotImplementedError("cujit.compile(output='ltoir'): cujit does not generate "
                                  "LTO-IR; use output='ptx'")
    if abi not in _ABIS:
        raise ValueError(f"abi must be one of {_ABIS}, got {abi!r}")
    if abi_info is not None:
        raise NotImplementedError("cujit.compile(abi_info=...): renaming the compiled "
                                  "function is not supported")
    if forceinline:
        raise NotImplementedError("cujit.compile(forceinline=...) is not supported")
    return _compile(pyfunc, sig, debug=bool(debug), lineinfo=bool(lineinfo), device=device,
                    fastmath=bool(fastmath), cc=cc, opt=True if opt is None else opt,
                    launch_bounds=launch_bounds)


def compile_all(pyfunc, sig, debug=None, lineinfo=False, device=True, fastmath=False,
                cc=None, opt=None, abi="c", abi_info=None, output="ltoir", forceinline=False,
                launch_bounds=None):
    """numba.cuda's ``compile_all``: :func:`compile`, returning ``([code], return_type)``,
    the list holding the compiled function and the external code it links.  cujit links no
    external code (:func:`declare_device` is not supported), so the list has one entry.

    ``output`` defaults to ``'ltoir'`` as in numba, which cujit cannot make: pass
    ``output='ptx'``.  Raises what :func:`compile` raises (NotImplementedError for
    ``'ltoir'``, ValueError for an unknown ``output`` or ``abi``)."""
    code, restype = compile(pyfunc, sig, debug=debug, lineinfo=lineinfo, device=device,
                            fastmath=fastmath, cc=cc, opt=opt, abi=abi, abi_info=abi_info,
                            output=output, forceinline=forceinline,
                            launch_bounds=launch_bounds)
    return [code], restype


def compile_for_current_device(pyfunc, sig, debug=None, lineinfo=False, device=True,
                               fastmath=False, opt=None, abi="c", abi_info=None,
                               output="ptx", forceinline=False, launch_bounds=None):
    """:func:`compile` for the current device's compute capability ((9, 0) without one)."""
    from .build import target as _target
    return compile(pyfunc, sig, debug=debug, lineinfo=lineinfo, device=device,
                   fastmath=fastmath, cc=_target()[0], opt=opt, abi=abi, abi_info=abi_info,
                   output=output, forceinline=forceinline, launch_bounds=launch_bounds)


def compile_ptx(pyfunc, sig, debug=None, lineinfo=False, device=False, fastmath=False,
                cc=None, opt=None, abi="numba", abi_info=None, forceinline=False,
                launch_bounds=None):
    """``(ptx, return_type)`` of ``pyfunc`` for ``sig``, as ``numba.cuda.compile_ptx``: a
    kernel by default (``device=False``).  Arguments and errors as :func:`compile`."""
    return compile(pyfunc, sig, debug=debug, lineinfo=lineinfo, device=device,
                   fastmath=fastmath, cc=cc, opt=opt, abi=abi, abi_info=abi_info,
                   output="ptx", forceinline=forceinline, launch_bounds=launch_bounds)


def compile_ptx_for_current_device(pyfunc, sig, debug=None, lineinfo=False, device=False,
                                   fastmath=False, opt=None, abi="numba", abi_info=None,
                                   forceinline=False, launch_bounds=None):
    """:func:`compile_ptx` for the current device's compute capability."""
    from .build import target as _target
    return compile_ptx(pyfunc, sig, debug=debug, lineinfo=lineinfo, device=device,
                       fastmath=fastmath, cc=_target()[0], opt=opt, abi=abi,
                       abi_info=abi_info, forceinline=forceinline,
                       launch_bounds=launch_bounds)


def declare_device(name, sig, link=None, use_cooperative=False):
    """numba.cuda's declaration of an external device function (implemented in linked
    CUDA C/C++ or PTX).  Not supported by cujit: raises NotImplementedError naming
    ``name``; ValueError/TypeError first for a malformed ``name`` or ``sig``."""
    if not isinstance(name, str) or not name.isidentifier():
        raise ValueError(f"declare_device: name must be a C identifier string, got {name!r}")
    ct.parse_signature(sig)
    raise NotImplementedError(f"cujit.declare_device({name!r}, {sig!r}): external device "
                              "functions are not supported by cujit (write the function in "
                              "Python with cujit.jit(device=True))")
