"""The extension API: functions usable in kernels, added by libraries (``numba.cuda.extending``
under the numba alias).  Behaviour reference: Numba's "High-level extension API"
(``overload``, ``register_jitable``, ``intrinsic``) and numba-cuda's
``numba.cuda.extending``; docs/kernel-language.md ("The extension API") has the
differences.

- :func:`overload` registers a typing function for a function object in the process-wide
  registry :data:`overload_registry`; a kernel's call of that function is compiled from the
  implementation the typing function returns for the call's argument types.
- :func:`register_jitable` makes a plain Python function callable from kernels (compiled
  as a device function) and leaves it callable on the host.
- :func:`intrinsic` makes an intrinsic: a typing function returning ``(signature,
  codegen)``, the codegen emitting LLVM IR with llvmlite; cujit adds its simulator
  implementation (``sim=``).

Typing functions receive cujit types (:mod:`cujit.types`), not Numba's.
"""
from .frontend.extensions import Intrinsic, OverloadRegistry, overloads as overload_registry
from .types.core import Signature

__all__ = ["overload", "register_jitable", "intrinsic", "overload_registry",
           "OverloadRegistry", "Intrinsic", "signature"]

_TARGETS = ("cuda", "generic", "gpu")


def overload(func, jit_options=None, strict=True, inline="never", prefer_literal=False,
             target="cuda", **kwargs):
    """Decorator: the decorated typing function implements ``func`` (any hashable callable)
    in kernels.  When a kernel calls ``func(a, b, ...)`` the typing function is called with
    the *cujit types* of the arguments (keywords as keywords) and returns a Python function
    implementing ``func`` for those types (compiled as a device function, with
    ``jit_options``), or ``(signature, function)`` as Numba allows, or None: this overload
    does not apply (the next one is tried; a TypingError naming ``func`` and the types when
    none applies).  Overloads for ``target="cuda"`` are tried before ``"gpu"`` and
    ``"generic"`` ones (numba's target hierarchy), each in registration order.  Returns the
    typing function unchanged.

    ``inline``: ``"never"`` (default) or ``"always"`` (the implementation is marked
    alwaysinline).  ``strict`` (default True, numba's rule): the implementation's parameters
    must be the typing function's (same names, same keyword defaults, no ``**kwargs``; a
    ``*args`` of the typing function repeated in the implementation), else the call is a
    TypingError saying where they differ.  ``prefer_literal``: an integer constant argument
    is offered to the typing function as a ``cujit.types.IntegerLiteral``
    (``.literal_value``) first and as its plain type if that is refused (returns None or
    raises); by default the plain types come first and the literal ones are tried after,
    as in numba.  ValueError for a ``target`` other than
    ``"cuda"``/``"generic"``, for ``inline`` in ``jit_options`` or another value of ``inline``,
    or unknown keyword arguments; TypeError when ``func`` is not a hashable callable."""
    if target not in _TARGETS:
        raise ValueError(f"overload(target={target!r}): cujit compiles only for 'cuda' "
                         f"(or 'generic')")
    if kwargs:
        raise ValueError(f"overload() got unexpected keyword arguments: {sorted(kwargs)}")
    if jit_options is not None and not isinstance(jit_options, dict):
        raise TypeError(f"overload(jit_options=...) takes a dict, got {jit_options!r}")
    if jit_options and "inline" in jit_options:
        raise ValueError("`inline` should be passed as a separate argument, not in "
                         "`jit_options`")
    if inline not in ("never", "always"):
        raise ValueError(f"overload(inline={inline!r}): 'never' or 'always'")
    opts = dict(jit_options or {})
    opts["inline"] = inline

    def decorate(typing):
        overload_registry.register(func, typing, opts, target, strict=strict,
                                   prefer_literal=prefer_literal)
        return typing
    return decorate


def register_jitable(*args, **kwargs):
    """``@register_jitable`` / ``@register_jitable(**jit_options)``: ``fn`` becomes callable
    from kernels and device functions (compiled from its Python source, for the argument
    types of each call) and stays callable on the host; returns ``fn`` itself.  As Numba,
    this is ``overload(fn, jit_options=...)`` with a typing function returning ``fn``.
    TypeError when the decorated object is not a Python function."""
    def wrap(fn):
        if not hasattr(fn, "__code__"):
            raise TypeError(f"register_jitable decorates a Python function, got {fn!r}")
        inline = kwargs.pop("inline", "never")

        def typing(*argtypes, **kwtypes):
            return fn
        typing.__qualname__ = f"register_jitable({fn.__qualname__})"
        # not strict: the typing function takes any arguments (numba's register_jitable)
        overload(fn, jit_options=kwargs, inline=inline, strict=False)(typing)
        return fn
    if kwargs or len(args) != 1:
        if args:
            raise TypeError("register_jitable takes a function, or keyword options only")
        return wrap
    return wrap(args[0])


def intrinsic(*args, **kwargs):
    """``@intrinsic`` / ``@intrinsic(sim=python_impl, prefer_literal=False)``: make an
    :class:`Intrinsic` of a typing function ``typing(typingctx, *argtypes)`` returning
    ``(signature, codegen)`` (``signature``: ``cujit.int32(cujit.int32, ...)`` or a Numba
    signature; None: these argument types are not accepted).  On the GPU backend
    ``codegen(context, builder, signature, args)`` builds the call's LLVM IR with the
    ``llvmlite.ir.IRBuilder`` ``builder`` and returns its value (None for a void signature);
    ``context`` is a :class:`~cujit.nvvm.lower_extending.LoweringContext`.  On the
    simulator ``sim`` (cujit's addition) runs per thread with the argument values converted
    to the signature's types; set it later with ``@the_intrinsic.simulator``.  TypeError for
    a non-callable typing function or ``sim``."""
    if len(args) == 1 and not kwargs and callable(args[0]):
        return Intrinsic(args[0])
    if args:
        raise TypeError("intrinsic takes a typing function, or keyword options only")

    def wrap(typing):
        return Intrinsic(typing, **kwargs)
    return wrap


def signature(return_type, *args):
    """The signature ``return_type(*args)`` (cujit types), as ``numba.core.typing
    .signature``."""
    return Signature(return_type, args)
