"""Typing of ``raise`` and ``assert`` in kernels and device functions (numba.cuda's rules).

- ``raise ExcClass``, ``raise ExcClass(arg, ...)`` and ``raise exc_instance``: the class and
  its arguments must be known when the kernel is compiled (a class defined at module level or
  in a closure, literal or constant arguments), as in Numba, because the device only stores
  which raise happened; the host builds the exception after the launch.
- ``assert cond[, "message"]``: compiled only with ``debug=True`` (Numba drops assertions
  otherwise); a failed assertion raises ``AssertionError(message)``.
- A bare ``raise`` and ``raise ... from ...`` are TypingErrors (nothing is being handled on
  the device).

The typer records ``tf.info[stmt] = nodeinfo.Raise(cls, args)`` / ``Assert(cls, args)``; the
lowering is in :mod:`.lower_exceptions`.
"""
import ast

from .nodeinfo import Assert, Raise

__all__ = ["type_raise", "type_assert"]

_ARG_TYPES = (str, int, float, bool, complex, type(None))


def _exception_class(typer, node):
    """``(cls, args)`` of the raised expression ``node`` (TypingError when not constant)."""
    args = ()
    target = node
    if isinstance(node, ast.Call):
        if node.keywords:
            raise typer.error("keyword arguments of a raised exception are not supported in "
                              "kernels (pass them positionally)", node.keywords[0].value)
        args = tuple(typer.const_eval(a, "an argument of a raised exception")
                     for a in node.args)
        target = node.func
    value = typer.const_eval(target, "the raised exception")
    if isinstance(value, BaseException) and target is node:
        return type(value), tuple(value.args)
    if not (isinstance(value, type) and issubclass(value, BaseException)):
        raise typer.error(f"exceptions must derive from BaseException; "
                          f"'{ast.unparse(target)}' is {value!r}", target)
    for a in args:
        if not isinstance(a, _ARG_TYPES):
            raise typer.error(f"an argument of a raised exception must be a string or number "
                              f"constant, got {a!r}", node)
    return value, args


def type_raise(typer, s):
    """Type ``raise`` statement ``s`` (see the module docstring)."""
    if s.exc is None:
        raise typer.error("a bare 'raise' is not supported in kernels (there is no exception "
                          "being handled on the device)", s)
    if s.cause is not None:
        raise typer.error("'raise ... from ...' is not supported in kernels", s.cause)
    cls, args = _exception_class(typer, s.exc)
    typer.tf.info[s] = Raise(cls, args)


def type_assert(typer, s):
    """Type ``assert`` statement ``s``: nothing without ``debug=True`` (Numba's CUDA target
    does not compile assertions then); with it, the condition and a constant message."""
    if not getattr(typer.env, "debug", False):
        return
    typer.truth(s.test)
    args = ()
    if s.msg is not None:
        args = (typer.const_eval(s.msg, "the message of an assert statement"),)
    typer.tf.info[s] = Assert(AssertionError, args)
