"""``typecheck_kernel(pyfunc, args)``: type a kernel for its launch values, no toolchain.

The simulator calls it before a kernel's first launch so that code which runs there also
compiles for the GPU (same ``TypingError`` / ``CompileError`` as the compiler).  It imports
neither llvmlite nor libNVVM, and caches results per (function, argument types).
"""
from .. import types as T
from .typeinfer import CompileEnv, infer

__all__ = ["typecheck_kernel", "typecheck"]

_done = {}


def typecheck(pyfunc, argtypes, kernel=True, debug=False):
    """Type ``pyfunc`` for ``argtypes`` (cujit types); returns the ``TypedFunction``.
    ``debug``: type as ``jit(debug=True)`` compiles (assertions included, their messages
    must be constants)."""
    key = (pyfunc, tuple(argtypes), kernel, bool(debug))
    hit = _done.get(key)
    if hit is None:
        hit = infer(pyfunc, tuple(argtypes), kernel=kernel, env=CompileEnv(debug=debug))
        _done[key] = hit
    return hit


def typecheck_kernel(pyfunc, args, debug=False):
    """Type-infer kernel ``pyfunc`` for the launch values ``args`` (arrays, device arrays,
    scalars …; typed with :func:`cujit.types.typeof`).

    Returns the argument types (tuple).  Raises TypeError for a value no kernel can take,
    and ``TypingError`` / ``CompileError`` (with file, line, column and source line) for
    code that would not compile.  ``debug``: the kernel's ``jit(debug=True)`` option (the
    GPU compiles assertions then, so a non-constant assert message is a TypingError).
    """
    argtypes = tuple(T.typeof(a) for a in args)
    typecheck(pyfunc, argtypes, kernel=True, debug=debug)
    return argtypes
