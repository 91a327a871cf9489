"""Recognise Numba's type objects where cujit takes a type, without importing numba.

Users porting numba.cuda code write ``from numba import float32, void`` and pass those objects
to ``cuda.jit`` signatures, ``shared.array`` / ``local.array`` dtypes and casts.  These
functions convert them to cujit's interned types, duck-typed on what Numba's classes expose
(``numba.core.types``: every type has ``.name``; ``Array`` has ``dtype``/``ndim``/``layout``/
``mutable``; ``Record`` has ``dtype``; ``UniTuple`` ``dtype``/``count``; ``Tuple`` ``types``;
``numba.core.typing.templates.Signature`` has ``return_type``/``args``).  Behaviour reference:
Numba's "Types and signatures" documentation.

The code is in :mod:`cujit.types.core`: the conversion and ``as_dtype_type`` call each other,
and a module of its own here closed an import circle with :mod:`cujit.types`.
"""
import types as _pytypes

from .types.core import is_numba_object, from_numba_type, from_numba_signature

__all__ = ["is_numba_object", "from_numba_type", "from_numba_signature",
           "numba_jit_function"]


def numba_jit_function(obj):
    """The Python function of a Numba CPU-JIT function (what ``numba.jit`` / ``njit``
    return: a ``numba.core.registry.CPUDispatcher``, known by its class's module under
    ``numba`` and its ``py_func`` attribute), or None for any other object.  Kernels call
    such functions as device functions compiled from that Python function, as numba-cuda
    documents ("CPU-GPU compatibility")."""
    if isinstance(obj, type) or not is_numba_object(obj):
        return None
    fn = getattr(obj, "py_func", None)
    return fn if isinstance(fn, _pytypes.FunctionType) else None
