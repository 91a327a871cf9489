"""``typecheck_kernel(pyfunc, args)``: type a kernel for its launch values, no toolchain.

The simulator calls :func:`type_launch` before a kernel's first launch of each signature so
that code which runs there also compiles for the GPU (same ``TypingError`` / ``CompileError``
as the compiler).  It imports neither llvmlite nor libNVVM.  Nothing is cached here: the
caller that owns the kernel keeps the ``TypedFunction`` (the simulator's ``SimKernel``, held
by the dispatcher), so a typing lives as long as its kernel.
"""
from .. import types as T
from .typeinfer import CompileEnv, infer

__all__ = ["typecheck_kernel", "typecheck", "type_launch"]


def typecheck(pyfunc, argtypes, kernel=True, debug=False, source=None):
    """Type ``pyfunc`` for ``argtypes`` (cujit types); returns the ``TypedFunction``.
    ``debug``: type as ``jit(debug=True)`` compiles (assertions included, their messages
    must be constants).  ``source``: ``pyfunc``'s FunctionSource when its owner keeps one
    (parsed again otherwise)."""
    return infer(pyfunc, tuple(argtypes), kernel=kernel, env=CompileEnv(debug=debug),
                 source=source)


def type_launch(pyfunc, args, debug=False, source=None):
    """The ``TypedFunction`` of kernel ``pyfunc`` for the launch values ``args`` (typed with
    :func:`cujit.types.typeof`; parameters that size local/shared arrays typed as literals of
    their values, :meth:`FunctionSource.literal_argtypes`); raises as
    :func:`typecheck_kernel`, and TypeError for a non-integer sizing argument."""
    argtypes = tuple(T.typeof(a) for a in args)
    if source is not None:
        argtypes = source.literal_argtypes(argtypes, args)
    return typecheck(pyfunc, argtypes, kernel=True, debug=debug, source=source)


def typecheck_kernel(pyfunc, args, debug=False, source=None):
    """Type-infer kernel ``pyfunc`` for the launch values ``args`` (arrays, device arrays,
    scalars …; typed with :func:`cujit.types.typeof`).

    Returns the argument types (tuple).  Raises TypeError for a value no kernel can take,
    and ``TypingError`` / ``CompileError`` (with file, line, column and source line) for
    code that would not compile.  ``debug``: the kernel's ``jit(debug=True)`` option (the
    GPU compiles assertions then, so a non-constant assert message is a TypingError).
    """
    return type_launch(pyfunc, args, debug=debug, source=source).argtypes
