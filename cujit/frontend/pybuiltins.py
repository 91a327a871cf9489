"""Builtins the kernel language implements in Python: each is an overload (compiled as an
always-inlined device function for the argument types of a call, as ``cujit.extending``'s
overloads are) that :class:`~.extensions.OverloadRegistry` tries after the program's own
overloads of the same function.

- ``divmod(a, b)`` of two integers or floats: ``(a // b, a % b)``, numba's ``divmod``
  (Python's floored quotient and a remainder of the divisor's sign; integer division by zero
  gives ``(0, 0)``, NumPy's error model, as ``//`` and ``%`` do in kernels).
"""
from .. import types as T

__all__ = ["BUILTIN_OVERLOADS"]


def _is_real(t):
    return isinstance(t, (T.Integer, T.IntegerLiteral, T.Float)) and \
        not isinstance(t, T.Boolean)


def _divmod(a, b):
    return a // b, a % b


def _divmod_typing(a, b):
    if _is_real(a) and _is_real(b):
        return _divmod
    return None


#: ``{builtin: typing function}``; the typing function takes the argument types and returns
#: the implementation or None (these types are not accepted).
BUILTIN_OVERLOADS = {divmod: _divmod_typing}
