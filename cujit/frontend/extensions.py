"""The registrations of the extension API (``cujit.extending``): overloads and intrinsics.

Behaviour reference: Numba's "High-level extension API" (``numba.extending.overload``,
``register_jitable``, ``intrinsic``) and numba-cuda's ``numba.cuda.extending``.

- An overload is registered *for a function object* (``overload(func)``), which may be a
  builtin or a library function that cannot carry attributes; so, as in Numba, the
  registrations live in one process-wide registry, :data:`overloads`, an
  :class:`OverloadRegistry` keyed by the function object itself (never by a name).  The typer
  asks it, through the call contract (``CallKind.OVERLOAD``), which implementation a call
  uses.
- An intrinsic is an object of its own (:class:`Intrinsic`, what ``@intrinsic`` returns): it
  keeps its typing function and its simulator implementation, and the typer recognises it by
  its class (``CallKind.USER_INTRINSIC``).
"""
import functools
import sys

from .pybuiltins import BUILTIN_OVERLOADS

__all__ = ["Overload", "OverloadRegistry", "overloads", "Intrinsic", "Implementation"]


# numba's target hierarchy, most specific first: a call prefers an overload for "cuda" to
# one for "gpu", and that to one for "generic" (any target)
_TARGET_ORDER = ("cuda", "gpu", "generic")


class Overload:
    """One registration: ``typing`` (called with the argument types of a call of
    ``function``; returns an implementation or None), the ``jit_options`` the
    implementation is compiled with (a dict; ``inline``/``forceinline`` as ``cuda.jit``),
    the ``target`` it was registered for (``"cuda"``, ``"gpu"`` or ``"generic"``),
    ``strict`` (the implementation's parameters must be the typing function's, numba's
    rule) and ``prefer_literal`` (integer constants are offered as ``Literal[int]`` types
    first, the plain types after; without it, the other way round)."""
    __slots__ = ("function", "typing", "jit_options", "target", "strict", "prefer_literal")

    def __init__(self, function, typing, jit_options, target="cuda", strict=True,
                 prefer_literal=False):
        self.function, self.typing, self.jit_options = function, typing, dict(jit_options)
        self.target = target
        self.strict, self.prefer_literal = bool(strict), bool(prefer_literal)

    def __repr__(self):
        return (f"<overload {getattr(self.typing, '__qualname__', self.typing)!s} of "
                f"{_name(self.function)}>")


def _name(func):
    return getattr(func, "__qualname__", None) or getattr(func, "__name__", None) or repr(func)


class OverloadRegistry:
    """The overloads of functions called in kernels, keyed by the function object.

    Numba keeps one global registry (its typing context's templates); cujit keeps this one,
    :data:`overloads`.  A function may have several overloads: a call tries them in the
    order of their targets' specificity (``"cuda"``, then ``"gpu"``, then ``"generic"``:
    numba's target hierarchy), then of registration, and the first whose typing function
    returns an implementation is used.  Registered functions stay alive while registered
    (:meth:`unregister` drops them).
    """

    def __init__(self):
        self._by_function = {}
        # Numba's own registrations, indexed when its registry's length changes:
        # (length, {function: [Overload]})
        self._numba_index = (-1, {})

    def register(self, function, typing, jit_options=None, target="cuda", strict=True,
                 prefer_literal=False):
        """Register ``typing`` (a callable taking argument types) as an overload of
        ``function`` (a callable) for ``target`` (``"cuda"``, ``"gpu"`` or ``"generic"``),
        ``strict`` and ``prefer_literal`` as :class:`Overload`'s; returns the
        :class:`Overload`.  TypeError when either is not callable or
        ``function`` is not hashable; ValueError for another target."""
        if target not in _TARGET_ORDER:
            raise ValueError(f"overload target must be one of {', '.join(_TARGET_ORDER)}, "
                             f"got {target!r}")
        if not callable(function):
            raise TypeError(f"overload() takes the function to overload, got {function!r}")
        if not callable(typing):
            raise TypeError(f"overload({_name(function)}) decorates a typing function, got "
                            f"{typing!r}")
        if jit_options is not None and not isinstance(jit_options, dict):
            raise TypeError(f"jit_options must be a dict, got {jit_options!r}")
        try:
            hash(function)
        except TypeError:
            raise TypeError(f"cannot overload {function!r}: it is not hashable") from None
        reg = Overload(function, typing, jit_options or {}, target, strict, prefer_literal)
        regs = self._by_function.setdefault(function, [])
        regs.append(reg)
        regs.sort(key=lambda r: _TARGET_ORDER.index(r.target))     # stable: then by order
        return reg

    def overloads_of(self, function):
        """The :class:`Overload` registrations of ``function`` in the order a call tries
        them (a tuple; empty for a function without any, or an unhashable value): this
        registry's and, when the program imported Numba, those made with Numba's own
        ``numba.extending.overload`` for target ``"cuda"``, ``"gpu"`` or ``"generic"``
        (numba-cuda's typing context reads Numba's registry too), by target, then cujit's
        before Numba's; last, the kernel language's own implementation of a builtin
        (:data:`~.pybuiltins.BUILTIN_OVERLOADS`: ``divmod``)."""
        try:
            regs = list(self._by_function.get(function, ()))
            regs += self._numba_overloads().get(function, ())
            builtin = BUILTIN_OVERLOADS.get(function)
        except TypeError:
            return ()
        regs.sort(key=lambda r: _TARGET_ORDER.index(r.target))
        if builtin is not None:
            regs.append(Overload(function, builtin, {"inline": "always"}, "cuda"))
        return tuple(regs)

    def _numba_overloads(self):
        """{function: [Overload]} of Numba's ``builtin_registry`` (never imported here: only
        when the program has ``numba.core.typing.templates`` loaded), duck-typed on its
        overload templates (``_overload_func``, ``_jit_options``, ``_inline``,
        ``metadata['target']``, default ``"cpu"``: those are left out)."""
        mod = sys.modules.get("numba.core.typing.templates")
        entries = getattr(getattr(mod, "builtin_registry", None), "globals", None)
        if not isinstance(entries, list):
            return {}
        if self._numba_index[0] != len(entries):
            index = {}
            for value, typ in list(entries):
                for tmpl in getattr(typ, "templates", ()):
                    typing = getattr(tmpl, "_overload_func", None)
                    target = (getattr(tmpl, "metadata", None) or {}).get("target", "cpu")
                    if typing is None or target not in _TARGET_ORDER:
                        continue
                    opts = dict(getattr(tmpl, "_jit_options", None) or {})
                    inline = getattr(tmpl, "_inline", None)
                    opts["inline"] = ("always" if getattr(inline, "is_always_inline", False)
                                      else "never")
                    try:
                        index.setdefault(value, []).append(
                            Overload(value, typing, opts, target,
                                     getattr(tmpl, "_strict", True),
                                     getattr(tmpl, "prefer_literal", False)))
                    except TypeError:       # an unhashable value
                        continue
            self._numba_index = (len(entries), index)
        return self._numba_index[1]

    def __contains__(self, function):
        return bool(self.overloads_of(function))

    def unregister(self, function):
        """Drop every overload of ``function``; KeyError when it has none."""
        try:
            del self._by_function[function]
        except (KeyError, TypeError):
            raise KeyError(f"{_name(function)} has no overloads") from None


#: The process-wide overload registry (see :class:`OverloadRegistry`).
overloads = OverloadRegistry()


class Implementation:
    """An overload's implementation as the typer compiles it: a device function made of
    ``py_func`` (the Python function the typing function returned) with ``targetoptions``
    (the registration's ``jit_options``)."""
    __slots__ = ("py_func", "targetoptions")

    def __init__(self, py_func, targetoptions):
        self.py_func, self.targetoptions = py_func, targetoptions


class Intrinsic:
    """What ``@intrinsic`` makes of a typing function ``typing(typingctx, *argtypes)``,
    which returns ``(signature, codegen)`` (or None: these types are not accepted).

    ``codegen(context, builder, signature, args)`` emits the LLVM IR on the NVVM backend
    (``builder``: an ``llvmlite.ir.IRBuilder``; ``args``: the argument values converted to
    ``signature.args``); ``sim`` (cujit's addition: numba's simulator cannot run
    intrinsics) is a Python function of the argument values, run per thread by the
    simulator.  Set it with ``@intrinsic(sim=f)`` or ``@my_intrinsic.simulator``.
    Calling an intrinsic outside a kernel is a TypeError, as in Numba.
    """

    def __init__(self, typing, sim=None, prefer_literal=False):
        if not callable(typing):
            raise TypeError(f"@intrinsic decorates a typing function, got {typing!r}")
        if sim is not None and not callable(sim):
            raise TypeError(f"intrinsic {_name(typing)}: sim must be a Python function, got "
                            f"{sim!r}")
        self.typing = typing
        self.sim = sim
        self.prefer_literal = prefer_literal
        functools.update_wrapper(self, typing)

    def simulator(self, fn):
        """Decorator: ``fn`` (a Python function of the argument values) is this
        intrinsic's simulator implementation; returns ``fn``."""
        if not callable(fn):
            raise TypeError(f"intrinsic {self.__name__}: simulator() takes a function, got "
                            f"{fn!r}")
        self.sim = fn
        return fn

    def __call__(self, *args, **kwargs):
        raise TypeError(f"intrinsic {self.__name__} can only be called from a kernel or a "
                        "device function")

    def __repr__(self):
        return f"<cujit intrinsic {self.__qualname__}>"
