"""Typing of values known at compile time: globals, closure cells, literals and the callables
the compiler recognises by object identity (builtins, ``math``, NumPy maths and casts, the
kernel API of :mod:`cujit.kernelapi`), as numba.cuda types them.

``const_type(value)`` gives ``(type, info)``; the tables here are shared by the typing of
calls (:mod:`.calls`, :mod:`.calls.runtime`, :mod:`.calls.device`).  Also the sizes of the memory
that kernels declare at compile time.
"""
import builtins
import math

import numpy as np

from .. import bf16_scalar
from .. import kernelapi as K
from .. import types as T
from ..vector_types import is_vector_class
from ..driver.api import STATIC_SHARED_LIMIT
from ..numba_types import from_numba_type, is_numba_object, numba_jit_function
from .declared import DeclaredFunction
from .extensions import Intrinsic, overloads
from .calls.pipeline import table_entries as pipeline_entries
from .calls.wgmma import table_entries as wgmma_entries
from .calls.wmma import table_entries as wmma_entries
from .nodeinfo import SpecialRegister
from .rules import Func, Global
from .ufunc_loops import SUPPORTED as UFUNCS

__all__ = ["const_type", "MATH_UNARY", "MATH_BINARY", "STATIC_SHARED_LIMIT", "CONST_LIMIT",
           "REDUCTIONS", "REDUCTION_METHODS"]

#: Constant memory available to one module (bytes; CUDA's 64 KiB on every architecture).
CONST_LIMIT = 64 * 1024
MATH_UNARY = ("sqrt", "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh",
              "asinh", "acosh", "atanh", "exp", "exp2", "expm1", "log", "log2", "log10", "log1p",
              "fabs", "erf", "erfc", "gamma", "lgamma", "degrees", "radians")
MATH_BINARY = ("atan2", "pow", "hypot", "copysign", "fmod", "remainder", "nextafter")
_MATH_PRED = ("isnan", "isinf", "isfinite")
_MATH_TOINT = ("floor", "ceil", "trunc")
_NP_UNARY = {"sqrt": "sqrt", "sin": "sin", "cos": "cos", "tan": "tan", "arcsin": "asin",
             "arccos": "acos", "arctan": "atan", "sinh": "sinh", "cosh": "cosh",
             "tanh": "tanh", "exp": "exp", "exp2": "exp2", "expm1": "expm1", "log": "log",
             "log2": "log2", "log10": "log10", "log1p": "log1p", "fabs": "fabs",
             "floor": "npfloor", "ceil": "npceil", "trunc": "nptrunc", "abs": "abs",
             "absolute": "abs", "isnan": "isnan", "isinf": "isinf", "isfinite": "isfinite"}
_NP_BINARY = {"arctan2": "atan2", "power": "pow", "hypot": "hypot", "copysign": "copysign",
              "fmod": "fmod", "minimum": "min", "maximum": "max"}

#: NumPy's whole-array reductions in kernels (``calls/reduce.py``), by the name their key
#: carries (``'reduce.sum'``); and the array methods of the same reductions (``a.sum()``)
REDUCTIONS = ("sum", "prod", "mean", "var", "std", "min", "max", "amin", "amax", "all", "any",
              "nansum", "nanprod", "nanmean", "nanmin", "nanmax", "count_nonzero")
REDUCTION_METHODS = ("sum", "prod", "mean", "var", "std", "min", "max", "all", "any")

_TABLE = None


def _table():
    """{id(obj): key} of every recognised callable, built on first use."""
    global _TABLE
    if _TABLE is None:
        t = {}
        for name in ("grid", "gridsize", "syncthreads", "syncthreads_count", "syncthreads_and",
                     "syncthreads_or", "syncwarp", "threadfence", "threadfence_block",
                     "threadfence_system", "shfl_sync", "shfl_up_sync", "shfl_down_sync",
                     "shfl_xor_sync", "ballot_sync", "all_sync", "any_sync", "eq_sync",
                     "activemask", "lanemask_lt", "popc", "brev", "clz", "ffs", "fma", "cbrt",
                     "selp", "mulhi", "nanosleep", "match_any_sync", "match_all_sync"):
            t[id(getattr(K, name))] = name
        t[id(K.this_grid)] = "cg.this_grid"
        t[id(K.grid_sync)] = "cg.grid_sync"
        t[id(K.carray)] = "carray"
        t[id(K.farray)] = "farray"
        for name in MATH_UNARY + MATH_BINARY + _MATH_PRED + _MATH_TOINT:
            if hasattr(math, name):
                t[id(getattr(math, name))] = "math." + name
        for name, key in _NP_UNARY.items():
            t[id(getattr(np, name))] = key if key in ("abs",) or key.startswith("np") \
                else "math." + key
        for name, key in _NP_BINARY.items():
            t[id(getattr(np, name))] = key if key in ("min", "max") else "math." + key
        for name in UFUNCS:
            if id(getattr(np, name)) not in t:
                t[id(getattr(np, name))] = "ufunc." + name   # typed by their NumPy loop
        for name in REDUCTIONS:
            t[id(getattr(np, name))] = "reduce." + name
        for name in ("min", "max", "abs", "len", "range", "int", "float", "bool", "complex",
                     "round", "print", "pow", "enumerate", "zip", "tuple", "isinstance"):
            t[id(getattr(builtins, name))] = name
        from .calls.numeric import table_entries
        t.update(table_entries())
        t.update(wmma_entries())
        t.update(wgmma_entries())
        t.update(pipeline_entries())
        _TABLE = t
    return _TABLE


_NP_SCALAR_TYPES = None


def _np_cast_target(value):
    global _NP_SCALAR_TYPES
    if _NP_SCALAR_TYPES is None:
        _NP_SCALAR_TYPES = {t.dtype.type: t for t in T.number_domain | {T.boolean}}
        if bf16_scalar.HAVE_ML_DTYPES:
            # ml_dtypes.bfloat16(x) casts as cuda.bfloat16(x) (numba-cuda's typeof of the
            # class); without ml_dtypes the storage is uint16, which stays uint16
            _NP_SCALAR_TYPES[T.bfloat16.dtype.type] = T.bfloat16
    return _NP_SCALAR_TYPES.get(value) if isinstance(value, type) else None


def const_type(value):
    """``(type, info)`` of a value known at compile time.  ``info`` is None, or the record
    the backends need (``nodeinfo.SpecialRegister('laneid')``)."""
    if value is K.laneid:
        return T.int32, SpecialRegister("laneid")
    if isinstance(value, bool) or isinstance(value, np.bool_):
        return T.boolean, None
    if isinstance(value, int):
        return T.typeof(value), None
    if isinstance(value, float):
        return T.float64, None
    if isinstance(value, complex):
        return T.complex128, None
    if T.is_plain_enum_member(value):
        return T.typeof(value), None      # an Enum member: a constant of its value's type
    if isinstance(value, np.generic) and value.dtype.fields is None:
        return T.from_dtype(value.dtype), None
    if isinstance(value, np.ndarray):
        return T.Array(T.from_dtype(value.dtype), value.ndim, "C", True), None
    if value is None:
        return T.void, None
    if _is_device_array(value):
        t = T.typeof(value)
        if isinstance(t, T.Array):
            # a captured device array: read and written in place, as in numba.cuda
            return t, None
    key = _table().get(id(value))
    if key is not None:
        # a NumPy ufunc keeps its object: on arrays it is typed by its NumPy loop (UFUNC)
        return Func(key, value if isinstance(value, np.ufunc) else None), None
    if getattr(value, "_cujit_device_function", False):
        return Func("device", value), None
    if getattr(value, "_cujit_kernel", False):
        return Func("kernel", value), None
    if isinstance(value, Intrinsic):
        return Func("user_intrinsic", value), None
    if isinstance(value, DeclaredFunction):
        return Func("extern", value), None
    if _is_cffi_from_buffer(value):
        return Func("ffi.from_buffer"), None
    if numba_jit_function(value) is not None:
        # numba.jit / njit: compiled for the GPU from its Python function, as numba-cuda
        # does ("CPU-GPU compatibility")
        return Func("device", value), None
    if callable(value) and value in overloads:
        return Func("overload", value), None
    if is_vector_class(value):
        return Func("vector", value), None
    hint = getattr(value, "cujit_cache_hint", None)
    if hint.__class__ is tuple:        # a cujit.cache_hints function (library layer: by mark)
        return Func("cache_" + hint[0], hint[1]), None
    libdevice = getattr(value, "cujit_libdevice", None)
    if libdevice.__class__ is str:     # a cujit.libdevice stub (top layer: known by mark)
        return Func("libdevice." + libdevice), None
    if isinstance(value, (T.Scalar,)):
        return Func("cast", value), None
    if is_numba_object(value):
        nt = from_numba_type(value)
        if isinstance(nt, T.Scalar):
            return Func("cast", nt), None
    target = _np_cast_target(value)
    if target is not None:
        return Func("cast", target), None
    if isinstance(value, tuple) and value:
        parts = [const_type(v) for v in value]
        if all(isinstance(p[0], T.Scalar) and p[1] is None for p in parts):
            return T.Tuple(tuple(p[0] for p in parts)), None
    return Global(value), None


def _is_cffi_from_buffer(value):
    # ffi.from_buffer of a cffi.FFI object, known by its class (cujit never imports cffi)
    owner = getattr(value, "__self__", None)
    return (getattr(value, "__name__", None) == "from_buffer" and owner is not None
            and type(owner).__name__ == "FFI"
            and (type(owner).__module__ or "").startswith("cffi"))


def _is_device_array(value):
    if isinstance(value, (type, np.ndarray)):
        return False
    try:
        return (getattr(value, "_layout", None) is not None and hasattr(value, "ndim")) or \
            hasattr(value, "__cuda_array_interface__")
    except Exception:   # a property that raises: not an array
        return False


