"""numba.cuda's ahead-of-time compilation functions: ``compile``, ``compile_for_current_device``,
``compile_ptx``, ``compile_ptx_for_current_device`` and ``declare_device``.

They run the one compiler pipeline (:func:`cujit.dispatch.dispatcher.compile_ptx`: typing,
lowering to NVVM IR, libNVVM) and need no GPU: the target is ``cc`` or, for the
``*_for_current_device`` forms, the current device's compute capability.  Each returns
``(code, return_type)`` as numba.cuda does.

``output='ltoir'`` is libNVVM's LTO-IR (``-gen-lto``; bytes), for nvJitLink's link-time
optimisation.  ``abi='c'`` with ``abi_info={'abi_name': name}`` names the device function's
symbol, so CUDA C/C++ can declare and call it (``extern "C" __device__ T name(...)``).

Difference from numba.cuda, reported rather than hidden: device functions are emitted with
the C calling convention (the value returned directly) whichever ``abi`` is named; numba's
``abi='numba'`` passes a pointer to the result and returns a status.
"""
from ..config import config
from ..frontend.declared import declare_device as _declare_device
from ..frontend.linkable import CUSource, linkable_of
from ..nvvm.nvrtc import compile_cuda

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
    (default (9, 0)); ``opt``: optimise (True → level 3, False/0 → none; None:
    ``cujit.config.OPT`` decides, 0 → none, as numba-cuda's); ``debug``,
    ``lineinfo``, ``fastmath``: as for ``jit``.

    ``output``: ``'ptx'`` (str) or ``'ltoir'`` (bytes, libNVVM's LTO-IR).  ``abi='c'``
    with ``abi_info={'abi_name': name}`` (a device function only) gives the function the
    symbol ``name``.

    ``launch_bounds``: an int or 1–3 ints (max threads per block, min blocks per SM, max
    blocks per cluster) for a kernel, as the jit option; ``cc`` may be ``(9, 0, 'a')`` for the
    architecture-specific target (``.target sm_90a``).

    Raises ValueError for an unknown ``output`` or ``abi``, more than three launch bounds,
    launch bounds on a device function, or an ``abi_info`` that is not a dict with a C
    identifier ``'abi_name'``, given for a kernel or with ``abi='numba'``, and for
    ``forceinline=True`` (the function gets LLVM's ``alwaysinline`` attribute, for the
    program it is linked into) without ``output='ltoir'``; NvvmError for ``'ltoir'``
    without libNVVM;
    TypingError / CompileError for code that does not compile."""
    code, restype, _ = _compile(pyfunc, sig, debug, lineinfo, device, fastmath, cc, opt, abi,
                                abi_info, output, forceinline, launch_bounds)
    return code, restype


def _abi_name(abi, abi_info, device):
    if abi not in _ABIS:
        raise ValueError(f"abi must be one of {_ABIS}, got {abi!r}")
    if abi_info is None:
        return None
    if not isinstance(abi_info, dict) or set(abi_info) - {"abi_name"}:
        raise ValueError(f"abi_info must be a dict with the key 'abi_name', got {abi_info!r}")
    if abi != "c" or not device:
        raise ValueError(f"abi_info={abi_info!r} names a device function's C symbol: it "
                         f"needs abi='c' and device=True")
    name = abi_info.get("abi_name")
    if name is not None and not (isinstance(name, str) and name.isidentifier()):
        raise ValueError(f"abi_info['abi_name'] must be a C identifier, got {name!r}")
    return name


def _compile(pyfunc, sig, debug, lineinfo, device, fastmath, cc, opt, abi, abi_info, output,
             forceinline, launch_bounds):
    from .dispatcher import compile_ptx as _compile_ptx
    if output not in ("ptx", "ltoir"):
        raise ValueError(f"output must be 'ptx' or 'ltoir', got {output!r}")
    abi_name = _abi_name(abi, abi_info, device)
    if forceinline and output != "ltoir":
        # numba-cuda's rule and words: PTX cannot carry the attribute to a later link
        raise ValueError("Can only designate forced inlining in LTO-IR (output='ltoir'), "
                         f"got output={output!r}")
    return _compile_ptx(pyfunc, sig, debug=bool(debug), lineinfo=bool(lineinfo),
                        device=device, fastmath=bool(fastmath), cc=cc,
                        opt=(config.OPT != 0) if opt is None else opt,
                        launch_bounds=launch_bounds,
                        abi_name=abi_name, lto=output == "ltoir", with_links=True,
                        forceinline=bool(forceinline))


def compile_all(pyfunc, sig, debug=None, lineinfo=False, device=True, fastmath=False,
                cc=None, opt=None, abi="c", abi_info=None, output="ltoir", forceinline=False,
                launch_bounds=None):
    """numba.cuda's ``compile_all``: :func:`compile`, returning ``(codes, return_type)``,
    ``codes`` a list holding the compiled function first, then the code it links: the
    ``link=`` entries of the declared and device functions it calls, CUDA C/C++ compiled by
    NVRTC to ``output`` (PTX text or LTO-IR bytes), other entries as their bytes (PTX as
    str).

    ``output`` defaults to ``'ltoir'`` as in numba.  Raises what :func:`compile` raises, and
    NvrtcError for linked CUDA C/C++ that does not compile."""
    code, restype, linked = _compile(pyfunc, sig, debug, lineinfo, device, fastmath, cc, opt,
                                     abi, abi_info, output, forceinline, launch_bounds)
    codes = [code]
    target = tuple(cc) if cc else (config.FORCE_CUDA_CC or config_default_cc)
    for entry in linked:
        lc = linkable_of(entry)
        if isinstance(lc, CUSource):
            out = compile_cuda(lc.data, target, name=lc.name, lto=output == "ltoir",
                               debug=bool(debug), lineinfo=bool(lineinfo))
            codes.append(out if output == "ltoir" else out.decode())
        else:
            codes.append(lc.data)
    return codes, restype


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


def declare_device(name, sig, link=None, use_cooperative=False, abi="numba", sim=None):
    """numba.cuda's declaration of an external device function (CUDA C/C++, PTX or any code
    nvJitLink links): see :func:`cujit.frontend.declared.declare_device`, which it is."""
    return _declare_device(name, sig, link=link, use_cooperative=use_cooperative, abi=abi,
                           sim=sim)
