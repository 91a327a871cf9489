"""``print(...)`` in kernels: the vprintf format and values of a call (numba-cuda's
``printimpl`` rules), computed once when typing and read by both backends.

Arguments are separated by spaces and end with a newline (Python's ``print``).  Integers
print with ``%lld``/``%llu`` (widened to 64 bits), floats, float16 and bfloat16 as ``%f``
(widened to double), booleans as ``True``/``False``, complex numbers as ``(re+imj)``, string
constants as part of the format; tuples (nested too) as Python writes them, ``(1,)`` for one
element; ``cuda.threadIdx``, ``blockIdx``, ``blockDim``, ``gridDim`` as the tuple of their
``x``, ``y``, ``z``.  vprintf takes at most 32 values: a call with more prints its format
string as it is, with a ``NumbaWarning`` when the kernel is compiled (numba-cuda's
behaviour, which counts ``print``'s arguments; cujit counts vprintf's values, the limit
CUDA has: docs/requirements.md §10).
"""
import warnings

from ... import kernelapi as K
from ... import types as T
from .. import rules
from ..callkinds import PrintFormat, PrintValue
from ..errors import NumbaWarning

__all__ = ["print_format", "warn_if_raw", "MAX_PRINT_VALUES", "TOO_MANY_MESSAGE"]

#: vprintf's limit on the values of one format (CUDA C++ Programming Guide, "Formatted
#: Output", Limitations: at most 32 arguments besides the format).
MAX_PRINT_VALUES = 32

#: numba-cuda's warning for a print() over that limit.
TOO_MANY_MESSAGE = ("CUDA print() cannot print more than 32 items. The raw format string "
                    "will be emitted by the kernel instead.")

_DIM3 = {id(K.threadIdx): "threadIdx", id(K.blockIdx): "blockIdx",
         id(K.blockDim): "blockDim", id(K.gridDim): "gridDim"}


def _item(t, arg, path, values):
    """The format of one value of type ``t`` (appending its PrintValues), or None when
    ``t`` cannot be printed."""
    if isinstance(t, T.Boolean):
        values.append(PrintValue(arg, path, t))
        return "%s"
    if isinstance(t, T.Integer):
        values.append(PrintValue(arg, path, t))
        return "%lld" if t.signed else "%llu"
    if isinstance(t, (T.Float, T.BFloat16)):
        values.append(PrintValue(arg, path, t))
        return "%f"
    if isinstance(t, T.Complex):
        values.append(PrintValue(arg, path, t))
        return "(%f%+fj)"
    if isinstance(t, (T.UniTuple, T.Tuple)):
        parts = [_item(et, arg, path + (i,), values) for i, et in enumerate(t.types)]
        if any(p is None for p in parts):
            return None
        return "(" + ", ".join(parts) + ("," if len(parts) == 1 else "") + ")"
    return None


def print_format(typer, node, argtypes):
    """The :class:`PrintFormat` of ``print`` call ``node`` with argument types ``argtypes``.
    TypingError naming the argument when one cannot be printed."""
    fmt, values = [], []
    for i, (a, t) in enumerate(zip(node.args, argtypes)):
        if isinstance(t, rules.Global) and isinstance(t.obj, str):
            fmt.append(t.obj.replace("%", "%%"))
            continue
        if isinstance(t, rules.Global) and id(t.obj) in _DIM3:
            reg = _DIM3[id(t.obj)]
            for axis in "xyz":
                values.append(PrintValue(i, (), T.int32, (reg, axis)))
            fmt.append("(%lld, %lld, %lld)")
            continue
        f = _item(t, i, (), values)
        if f is None:
            raise typer.error("print() in a kernel takes numbers, tuples of them, string "
                              f"constants and cuda.threadIdx-like indices, got {t}", a)
        fmt.append(f)
    text = " ".join(fmt) + "\n"
    count = sum(2 if isinstance(v.type, T.Complex) else 1 for v in values)
    if count > MAX_PRINT_VALUES:
        return PrintFormat(text.replace("%", "%%"), (), True)
    return PrintFormat(text, tuple(values))


def warn_if_raw(pf, stacklevel=2):
    """numba-cuda's ``NumbaWarning`` for a print() over vprintf's limit (``pf.raw``); the
    backends call it once per compiled call."""
    if pf.raw:
        warnings.warn(TOO_MANY_MESSAGE, NumbaWarning, stacklevel=stacklevel + 1)
