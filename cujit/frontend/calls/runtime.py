"""Typing of calls with runtime arguments: builtins, ``math``, casts, barriers, atomics, warp
intrinsics and device functions (result types as Numba's ``cudadecl.py`` / ``mathdecl.py``).
"""
import ast

import numpy as np

from ... import kernelapi as K
from ... import types as T
from .. import intrinsics_types as IX
from .. import rules
from ..callkinds import Atomic, Call, CallKind, Cast, ExternCall, Extremum, MathFunc, ValueType
from .cachehint import type_cache_hint
from .device import type_device_call
from .extending import type_overload_call, type_user_intrinsic
from .numeric import type_bf16_math, type_ext
from .printing import print_format
from .reduce import type_reduction
from .ufunc import is_array_call, type_ufunc_call
from .vector import type_vector_make
from .pipeline import type_pipeline_call
from .wgmma import type_wgmma_call
from .wmma import type_wmma_call
from ..closures import escape, needs_escape, type_closure_call
from ..libdevice_table import type_libdevice
from ..const_types import MATH_BINARY
from ..rules import Global, RangeType

__all__ = ["type_func"]


def _scalar(typer, node, t, what):
    if not rules.is_number(t):
        raise typer.error(f"{what} takes numbers, got a value of type {t}", node)


def _spelled(node, key):
    """The callee as the kernel's source spells it (``np.sin``, ``floor``), not the typer's
    internal key (``math.sin``, ``npfloor``), so messages name what the user wrote."""
    try:
        return ast.unparse(node.func)
    except Exception:       # a synthesised node without source: the key is the best name
        return key


_NP_OF = {"min": "minimum", "max": "maximum", "abs": "absolute", "math.atan2": "arctan2",
          "math.asin": "arcsin", "math.acos": "arccos", "math.atan": "arctan",
          "math.pow": "power", "math.asinh": "arcsinh", "math.acosh": "arccosh",
          "math.atanh": "arctanh", "npfloor": "floor", "npceil": "ceil", "nptrunc": "trunc"}


def _no_array_ufunc(typer, node, key, args):
    """Refuse a ``math`` function or builtin called on whole arrays (``math.sin(x)``): they
    take numbers; the NumPy ufunc takes arrays (``np.sin(x, out)``, :mod:`.calls.ufunc`)."""
    for a, t in zip(node.args, args):
        if isinstance(t, T.Array):
            name = _spelled(node, key)
            nin = 2 if key[5:] in MATH_BINARY or key in ("min", "max") else 1
            ins = [ast.unparse(x) for x in node.args[:nin]]
            each = ", ".join(f"{x}[i]" if isinstance(xt, T.Array) else x
                             for x, xt in zip(ins, args))
            np_name = _NP_OF.get(key, key.partition(".")[2] or key)
            raise typer.error(
                f"{name}() takes numbers, not arrays: use the NumPy ufunc with an output "
                f"array, `np.{np_name}({', '.join(ins)}, out)`, or compute it per element, "
                f"e.g. `out[i] = {name}({each})`", a)


def _float_of(t):
    """The float type a math function computes in for argument type ``t``."""
    if rules.is_float(t):
        return t
    return T.float64


class _Site:
    """One call being typed: the typer, the ``ast.Call``, the callee's ``Func`` (its key,
    kind and family name), the argument types and keyword types."""
    __slots__ = ("typer", "node", "ft", "key", "kind", "name", "args", "kws")

    def __init__(self, typer, node, ft, args, kws):
        self.typer, self.node, self.ft, self.args, self.kws = typer, node, ft, args, kws
        self.key, self.kind, self.name = ft.key, ft.kind, ft.name

    def record(self, data=None):
        self.typer.tf.info[self.node] = Call(self.kind, data)

    def need(self, lo, hi=None):
        """Check the argument count (``lo`` to ``hi``) and that every argument is a number."""
        n = len(self.args)
        hi = lo if hi is None else hi
        if not lo <= n <= hi:
            want = str(lo) if lo == hi else f"{lo} to {hi}"
            raise self.typer.error(f"{_spelled(self.node, self.key)}() takes {want} "
                                   f"argument(s), got {n}", self.node)
        for a, t in zip(self.node.args, self.args):
            _scalar(self.typer, a, t, _spelled(self.node, self.key) + "()")


def type_func(typer, node, ft, args, kws):
    """Result type of call ``node`` of the recognised callable ``ft`` (a ``Func``) with
    argument types ``args`` and keyword types ``kws``; records the call's :class:`Call` in
    ``typer.tf.info[node]``.  TypingError for a call the kernel language does not accept."""
    c = _Site(typer, node, ft, args, kws)
    if isinstance(ft.data, np.ufunc) and is_array_call(ft.data, args, kws):
        # a ufunc typed as a scalar function (np.sin: MATH) on whole arrays: NumPy's loop
        return _t_ufunc(c)
    own = _OWN_CHECKS.get(c.kind)
    if own is not None:
        return own(c)
    if kws and c.kind not in (CallKind.PRINT, CallKind.SYNCWARP):
        raise typer.error(f"{c.key}() takes no keyword arguments in kernels", node)
    if c.kind in _ELEMENTWISE:
        _no_array_ufunc(typer, node, c.key, args)
    typing = _TYPERS.get(c.kind)
    if typing is None:      # a kind typed with its constant arguments or as a method
        raise typer.error(f"{ft.key}() is not supported in kernels", node)
    if c.kind.payload is type(None):
        c.record()
    return typing(c)


def _t_device(c):
    return type_device_call(c.typer, c.node, c.ft.data, c.args, c.kws, kind=c.kind)


def _t_ext(c):
    if c.kws:
        raise c.typer.error(f"{c.key}() takes no keyword arguments in kernels", c.node)
    return type_ext(c.typer, c.node, c.key, c.args)


def _t_overload(c):
    return type_overload_call(c.typer, c.node, c.ft.data, c.args, c.kws)


def _t_user_intrinsic(c):
    return type_user_intrinsic(c.typer, c.node, c.ft.data, c.args, c.kws)


def _t_extern(c):
    fn = c.ft.data
    if c.kws:
        raise c.typer.error(f"declared device function {fn.name}() takes no keyword "
                            f"arguments", c.node)
    params = fn.sig.args
    if len(c.args) != len(params):
        raise c.typer.error(f"declared device function {fn.name}{fn.sig} takes "
                            f"{len(params)} argument(s), the call passes {len(c.args)}",
                            c.node)
    for a, t, p in zip(c.node.args, c.args, params):
        if isinstance(p, (T.CPointer, T.RawPointer, T.Array)):
            why = _pointer_arg_problem(t, p)
            if why is not None:
                raise c.typer.error(f"declared device function {fn.name}(): an argument of "
                                    f"type {t} cannot be passed as {p} ({why})", a)
            continue
        if not rules.is_number(t) or isinstance(t, T.Complex):
            raise c.typer.error(f"declared device function {fn.name}(): an argument of type "
                                f"{t} cannot be passed as {p} (pass scalars)", a)
    c.record(ExternCall(fn))
    return fn.sig.return_type


def _t_reduce(c):
    if len(c.args) != 1:
        raise c.typer.error(f"np.{c.name}() takes one array in kernels, got {len(c.args)} "
                            f"arguments", c.node)
    return type_reduction(c.typer, c.node, c.name, c.args[0], c.node.args[0], c.kws)


def _pointer_arg_problem(t, p):
    """Why an argument of type ``t`` cannot be passed for the pointer or array parameter
    ``p`` of a declared C function (None when it can).  The C function gets a data pointer:
    a pointer of the element type, or an array (its data pointer: numba's arrays decay so);
    ``void*`` takes any pointer or array."""
    if isinstance(t, (T.CPointer, T.RawPointer)):
        if isinstance(p, T.RawPointer) or t == p:
            return None
        if isinstance(t, T.RawPointer) or t.dtype is not p.dtype:
            return "the element types differ"
        # a pointer of another address space is converted (addrspacecast), as C would
        return None
    if isinstance(t, T.Array):
        if isinstance(p, T.RawPointer):
            return None
        if t.dtype is not p.dtype:
            return "the element types differ"
        if isinstance(p, T.Array) and p.ndim != t.ndim:
            return f"it has {t.ndim} dimension(s), the parameter {p.ndim}"
        return None
    return "pass an array or a pointer from ffi.from_buffer(array)"


def _t_from_buffer(c):
    # cffi's ffi.from_buffer(array) → the data pointer, typed as numba's cffi_utils does
    if len(c.args) != 1:
        raise c.typer.error(f"ffi.from_buffer() takes one array in kernels, got "
                            f"{len(c.args)} argument(s)", c.node)
    (at,) = c.args
    if not isinstance(at, T.Array):
        raise c.typer.error(f"from_buffer() expected a buffer object, got {at}", c.node.args[0])
    if at.layout not in ("C", "F"):
        raise c.typer.error(f"from_buffer() unsupported on non-contiguous buffers (got {at})",
                            c.node.args[0])
    if at.layout != "C" and at.ndim > 1:
        raise c.typer.error(f"from_buffer() only supports multidimensional arrays with C "
                            f"layout (got {at})", c.node.args[0])
    return T.CPointer(at.dtype)


def _t_ufunc(c):
    return type_ufunc_call(c.typer, c.node, c.ft.data, c.args, c.kws)


def _t_closure(c):
    if needs_escape(c.ft.data, c.node):
        # defaults, *args or keywords: the closure as a device function of its own
        return type_device_call(c.typer, c.node, escape(c.typer, c.ft.data, c.node), c.args,
                                c.kws)
    return type_closure_call(c.typer, c.node, c.ft.data, c.args, c.kws)


def _t_wmma(c):
    return type_wmma_call(c.typer, c.node, c.kind, c.args, c.kws)


def _t_wgmma(c):
    return type_wgmma_call(c.typer, c.node, c.kind, c.args, c.kws)


def _t_pipeline(c):
    return type_pipeline_call(c.typer, c.node, c.kind, c.args, c.kws)


def _t_libdevice(c):
    return type_libdevice(c.typer, c.node, c.name, c.args, c.kws)


def _t_cast(c):
    typer, node, args = c.typer, c.node, c.args
    if c.name is None and len(args) == 1 and not c.kws and (
            isinstance(c.ft.data, T.FP8) or isinstance(args[0], T.FP8)):
        # fp8_e4m3(x) of a float, bfloat16 or integer, or one of those types of an FP8
        # value (numba-cuda's constructors and conversion operators; none between formats)
        other = args[0] if isinstance(c.ft.data, T.FP8) else c.ft.data
        if not (isinstance(other, (T.BFloat16, T.Boolean)) or rules.is_int(other)
                or rules.is_float(other)):
            raise typer.error(f"cannot convert {args[0]} to {c.ft.data} (FP8 values convert "
                              "to and from the float types, bfloat16 and integers)", node)
        c.record(Cast(c.ft.data))
        return c.ft.data
    if c.name is not None and len(args) == 1 and isinstance(args[0], T.FP8) and not c.kws:
        # int(v) / float(v) / bool(v) of an FP8 value
        target = {"int": T.int64, "float": T.float64, "bool": T.boolean}[c.name]
        c.record(Cast(target))
        return target
    if c.name is None and len(args) == 1 and not c.kws and (
            isinstance(c.ft.data, T.BFloat16) or isinstance(args[0], T.BFloat16)):
        # bfloat16(x) of a real number, or a real type / bool of a bfloat16
        other = args[0] if isinstance(c.ft.data, T.BFloat16) else c.ft.data
        if not (isinstance(other, T.BFloat16) or rules.is_int(other) or rules.is_float(other)
                or isinstance(other, T.Boolean)):
            raise typer.error(f"cannot convert {args[0]} to {c.ft.data}", node)
        c.record(Cast(c.ft.data))
        return c.ft.data
    if c.name == "float" and len(args) == 1 and not c.kws and isinstance(args[0], Global) \
            and isinstance(args[0].obj, str):
        # float("nan"), float("inf"): a compile-time constant (numba-cuda's tests write them)
        try:
            value = float(args[0].obj)
        except ValueError:
            raise typer.error(f"float() of {args[0].obj!r}: not a number", node) from None
        typer.tf.constvals[node] = value
        c.record(Cast(T.float64))
        return T.float64
    c.need(1)
    if c.name is None:
        if rules.is_complex(args[0]) and not rules.is_complex(c.ft.data):
            raise typer.error(f"cannot cast complex to {c.ft.data}", node)
        c.record(Cast(c.ft.data))
        return c.ft.data
    if c.name != "bool" and rules.is_complex(args[0]):
        raise typer.error(f"cannot convert complex to {c.name}", node)
    target = {"int": T.int64, "float": T.float64, "bool": T.boolean}[c.name]
    if c.name == "float" and args[0] in (T.float16, T.float32):
        target = args[0]    # numba-cuda's typing: float() of a float keeps its type
    c.record(Cast(target))
    return target


def _t_complex(c):
    c.need(1, 2)
    return T.complex128


def _t_round(c):
    typer, node, args = c.typer, c.node, c.args
    c.need(1, 2)
    if rules.is_complex(args[0]):
        raise typer.error("round() of a complex number is not defined", node)
    if len(args) == 1:
        return T.int64
    if not rules.is_int(args[1]):
        raise typer.error("round(x, ndigits): ndigits must be an integer", node.args[1])
    return _float_of(args[0])


def _t_extremum(c):
    typer, node, args, key = c.typer, c.node, c.args, c.key
    if len(args) == 1 and isinstance(args[0], (T.UniTuple, T.Tuple)):
        ts = list(args[0].types)
        c.record(Extremum(True))
    else:
        c.record(Extremum(False, len(args) == 2 and all(t in (T.float32, T.float64)
                                                        for t in args)))
        if len(args) < 2:
            raise typer.error(f"{key}() takes at least 2 arguments in kernels", node)
        ts = args
        for a, t in zip(node.args, args):
            _scalar(typer, a, t, key + "()")
    r = None
    for t in ts:
        if rules.is_complex(t):
            raise typer.error(f"{key}() of complex numbers is not defined", node)
        r = rules.unify(r, t)
    return r


def _t_abs(c):
    c.need(1)
    t = c.args[0]
    if rules.is_complex(t):
        return t.underlying_float
    return T.int64 if isinstance(t, T.Boolean) else t


def _t_pow(c):
    c.need(2)
    return c.typer.binop_types("**", c.args[0], c.args[1], c.node)


def _t_tuple(c):
    typer, node, args = c.typer, c.node, c.args
    if len(args) != 1:
        raise typer.error(f"tuple() takes 1 argument in kernels, got {len(args)}", node)
    t = args[0]
    if isinstance(t, T.UniTuple):          # a namedtuple or vector gives a plain tuple
        return T.UniTuple(t.dtype, t.count)
    if isinstance(t, T.Tuple):
        return T.Tuple(t.types)
    raise typer.error(f"tuple() in kernels takes a tuple, got a value of type {t}", node)


def _t_len(c):
    typer, node, args = c.typer, c.node, c.args
    if len(args) != 1:
        raise typer.error("len() takes 1 argument", node)
    t = args[0]
    if isinstance(t, T.Array):
        if t.ndim == 0:
            raise typer.error("len() of a 0-d array", node)
        return T.int64
    if isinstance(t, (T.UniTuple, T.Tuple)):
        return T.int64
    raise typer.error(f"len() of a value of type {t}", node)


def _t_range(c):
    c.need(1, 3)
    for a, t in zip(c.node.args, c.args):
        if not (rules.is_int(t) or isinstance(t, T.Boolean)):
            raise c.typer.error(f"range() takes integers, got {t}", a)
    small = all(isinstance(t, T.Boolean) or (t.signed and t.bitwidth <= 32) for t in c.args)
    uns = all(rules.is_int(t) and not t.signed and t.bitwidth == 64 for t in c.args)
    return RangeType(T.int32 if small else T.uint64 if uns else T.int64)


def _t_iterator(c):
    typer, node, args, key = c.typer, c.node, c.args, c.key
    if not args or (key == "enumerate" and len(args) != 1):
        want = "1 argument" if key == "enumerate" else "at least 1 argument"
        raise typer.error(f"{key}() takes {want}", node)
    for a, t in zip(node.args, args):
        if rules.element_type(t) is None:
            raise typer.error(f"{key}() in a kernel takes ranges, arrays or homogeneous "
                              f"tuples, got {t}", a)
    return rules.IterType(c.kind, args)


def _t_print(c):
    for k in c.kws:
        raise c.typer.error(f"print() keyword '{k}' is not supported in kernels", c.node)
    c.record(print_format(c.typer, c.node, c.args))
    return T.void


def _t_math(c):
    if c.args and isinstance(c.args[0], T.BFloat16):
        return type_bf16_math(c.typer, c.node, c.name, c.args)
    c.record(MathFunc(c.name))
    return _math(c.typer, c.node, c.name, c.args, c.need)


def _t_np_rounding(c):
    c.record(MathFunc(c.name))
    c.need(1)
    return _float_of(c.args[0])


def _t_atomic(c):
    return _atomic(c.typer, c.node, c.name, c.args)


def _math(typer, node, name, args, need):
    if name in MATH_BINARY:
        need(2)
        a, b = (_float_of(t) for t in args)
        return rules.promote(a, b)
    need(1)
    t = args[0]
    if rules.is_complex(t):
        raise typer.error(f"math.{name} of a complex number is not supported (use cmath)", node)
    if name in ("isnan", "isinf", "isfinite"):
        return T.boolean
    if name in ("floor", "ceil", "trunc"):
        return t if rules.is_int(t) else T.int64
    if name == "fabs" or name not in ("sqrt",):
        return _float_of(t)
    return _float_of(t)


_ATOMIC_TYPES = {
    "add": (T.int32, T.uint32, T.int64, T.uint64, T.float32, T.float64),
    "sub": (T.int32, T.uint32, T.int64, T.uint64, T.float32, T.float64),
    "max": (T.int32, T.uint32, T.int64, T.uint64, T.float32, T.float64),
    "min": (T.int32, T.uint32, T.int64, T.uint64, T.float32, T.float64),
    "nanmax": (T.int32, T.uint32, T.int64, T.uint64, T.float32, T.float64),
    "nanmin": (T.int32, T.uint32, T.int64, T.uint64, T.float32, T.float64),
    "exch": (T.int32, T.uint32, T.int64, T.uint64, T.float32, T.float64),
    "and": (T.int32, T.uint32, T.int64, T.uint64),
    "or": (T.int32, T.uint32, T.int64, T.uint64),
    "xor": (T.int32, T.uint32, T.int64, T.uint64),
    "inc": (T.uint32, T.uint64),
    "dec": (T.uint32, T.uint64),
    "cas": (T.int32, T.uint32, T.int64, T.uint64),
    "cas0": (T.int32, T.uint32, T.int64, T.uint64),
}


def _atomic(typer, node, op, args):
    nval = 2 if op in ("cas", "cas0") else 1
    nidx = 0 if op == "cas0" else 1
    want = 1 + nidx + nval
    name = "compare_and_swap" if op == "cas0" else op
    if len(args) != want:
        raise typer.error(f"atomic.{name}() takes {want} arguments, got {len(args)}", node)
    aty = args[0]
    if not isinstance(aty, T.Array):
        raise typer.error(f"atomic.{name}(): the first argument must be an array, got {aty}",
                          node.args[0])
    if aty.readonly:
        raise typer.error(f"atomic.{name}() on a read-only array (a const array, or a read-only argument)", node)
    if aty.dtype not in _ATOMIC_TYPES[op]:
        raise typer.error(f"atomic.{name}() does not support arrays of {aty.dtype} (supported: "
                          f"{', '.join(map(str, _ATOMIC_TYPES[op]))})", node.args[0])
    if nidx:
        it = args[1]
        if rules.is_int(it):
            n = 1
        elif isinstance(it, (T.UniTuple, T.Tuple)) and it.types and \
                all(rules.is_int(t) for t in it.types):
            n = it.count        # mixed integer types, as numba: (int32, uint64)
        else:
            raise typer.error(f"atomic.{name}(): the index must be an integer or a tuple of "
                              f"integers, got {it}", node.args[1])
        if n != aty.ndim:
            raise typer.error(f"atomic.{name}(): {n} index(es) for a {aty.ndim}-d array",
                              node.args[1])
    elif aty.ndim != 1:
        raise typer.error("atomic.compare_and_swap() needs a 1-d array", node.args[0])
    for a, t in zip(node.args[1 + nidx:], args[1 + nidx:]):
        _scalar(typer, a, t, f"atomic.{name}()")
        if rules.is_complex(t):
            raise typer.error(f"atomic.{name}(): complex values are not supported", a)
    typer.tf.info[node] = Call(CallKind.ATOMIC, Atomic(op))
    return aty.dtype


# The grid group as the compiler sees it: one object, so that its type is one Global; only
# its ``sync`` attribute (kernelapi.grid_sync, recognised by identity) is read.
_GRID_GROUP = K.GridGroup()

_WARP_TYPES = (T.int32, T.uint32, T.int64, T.uint64, T.float32, T.float64)


def _t_intrinsic(c):
    return IX.type_intrinsic(c.typer, c.node, c.key, c.args, c.kws, c.need)


def _t_this_grid(c):
    # this_grid() is the grid group (a compile-time object: its .sync is recognised)
    c.need(0)
    return Global(_GRID_GROUP)


def _t_no_args(c):
    c.need(0)
    return T.void


def _t_sync_pred(c):
    c.need(1)
    return T.int32


def _t_syncwarp(c):
    typer, node, kws = c.typer, c.node, c.kws
    if kws and set(kws) != {"mask"}:
        raise typer.error("syncwarp() takes only 'mask'", node)
    if len(c.args) + len(kws) > 1:
        raise typer.error("syncwarp() takes at most 1 argument", node)
    for a, t in zip(node.args, c.args):
        _scalar(typer, a, t, "syncwarp()")
    return T.void


def _t_shfl(c):
    c.need(3)
    vt = c.args[1]
    if isinstance(vt, T.Boolean):
        vt = T.int32
    if vt not in _WARP_TYPES:
        raise c.typer.error(f"{c.key}() supports {', '.join(map(str, _WARP_TYPES))} values, "
                            f"got {c.args[1]}", c.node.args[1])
    c.record(ValueType(vt))
    return vt


def _t_vote(c):
    c.need(2)
    m, p = c.args
    # numba-cuda's words first ("Mask type must be an integer. Got ..."), then cujit's
    if not rules.is_int(m):
        raise c.typer.error(f"Mask type must be an integer. Got {m}: the mask of {c.key}() "
                            "is an integer naming the participating lanes (0xffffffff for "
                            "the whole warp)", c.node.args[0])
    if not (rules.is_int(p) or isinstance(p, T.Boolean)):
        raise c.typer.error(f"Predicate must be an integer or boolean. Got {p}: {c.key}() "
                            "predicate must be a boolean or an integer", c.node.args[1])
    return T.uint32 if c.kind is CallKind.BALLOT_SYNC else T.boolean


def _t_mask(c):
    c.need(0)
    return T.uint32


def _t_bitop(c):
    c.need(1)
    t = c.args[0]
    if not rules.is_int(t):
        raise c.typer.error(f"{c.key}() takes an integer, got {t}", c.node.args[0])
    if c.kind is CallKind.FFS:
        return T.uint32
    if c.kind is CallKind.BREV:       # numba: brev is defined for uint32 and uint64
        return T.uint64 if t.bitwidth == 64 else T.uint32
    return t


def _t_fma(c):
    c.need(3)
    r = None
    for t in c.args:
        r = rules.unify(r, _float_of(t))
    return r


def _t_cbrt(c):
    c.need(1)
    return _float_of(c.args[0])


def _t_vector(c):
    return type_vector_make(c.typer, c.node, c.ft.data, c.args, c.kws)


def _t_cache_hint(c):
    return type_cache_hint(c.typer, c.node, c.kind, c.ft.data, c.args, c.kws)


# Kinds that check their keyword arguments themselves (typed in their own modules).
_OWN_CHECKS = {CallKind.DEVICE: _t_device, CallKind.KERNEL: _t_device,
               CallKind.CLOSURE: _t_closure,
               CallKind.LIBDEVICE: _t_libdevice, CallKind.CMATH: _t_ext,
               CallKind.REDUCE: _t_reduce,
               CallKind.FP16: _t_ext, CallKind.BF16: _t_ext, CallKind.FP8: _t_ext,
               CallKind.MATH_PARTS: _t_ext,
               CallKind.OVERLOAD: _t_overload, CallKind.USER_INTRINSIC: _t_user_intrinsic,
               CallKind.EXTERN: _t_extern, CallKind.UFUNC: _t_ufunc,
               CallKind.WMMA_FILL: _t_wmma, CallKind.WMMA_LOAD: _t_wmma,
               CallKind.WMMA_MMA: _t_wmma, CallKind.WMMA_STORE: _t_wmma,
               CallKind.PIPELINE_COPY: _t_pipeline, CallKind.PIPELINE_COMMIT: _t_pipeline,
               CallKind.PIPELINE_WAIT: _t_pipeline,
               **dict.fromkeys((CallKind.WGMMA_FILL, CallKind.WGMMA_DESCRIPTOR,
                                CallKind.WGMMA_FENCE, CallKind.WGMMA_FENCE_PROXY,
                                CallKind.WGMMA_MMA, CallKind.WGMMA_COMMIT, CallKind.WGMMA_WAIT,
                                CallKind.WGMMA_STORE), _t_wgmma),
               CallKind.VECTOR: _t_vector, CallKind.CACHE_LOAD: _t_cache_hint,
               CallKind.CACHE_STORE: _t_cache_hint}
# Kinds that refuse whole-array arguments with numba's ufunc advice.
_ELEMENTWISE = frozenset((CallKind.MATH, CallKind.NP_ROUNDING, CallKind.ABS, CallKind.MIN,
                          CallKind.MAX))
_TYPERS = {
    CallKind.CAST: _t_cast, CallKind.COMPLEX: _t_complex, CallKind.ROUND: _t_round,
    CallKind.MIN: _t_extremum, CallKind.MAX: _t_extremum, CallKind.ABS: _t_abs,
    CallKind.POW: _t_pow, CallKind.LEN: _t_len, CallKind.TUPLE: _t_tuple, CallKind.RANGE: _t_range,
    CallKind.ENUMERATE: _t_iterator, CallKind.ZIP: _t_iterator, CallKind.PRINT: _t_print,
    CallKind.MATH: _t_math, CallKind.NP_ROUNDING: _t_np_rounding,
    CallKind.ATOMIC: _t_atomic,
    CallKind.SELP: _t_intrinsic, CallKind.MULHI: _t_intrinsic,
    CallKind.NANOSLEEP: _t_intrinsic, CallKind.MATCH_ANY_SYNC: _t_intrinsic,
    CallKind.MATCH_ALL_SYNC: _t_intrinsic,
    CallKind.THIS_GRID: _t_this_grid, CallKind.GRID_SYNC: _t_no_args,
    CallKind.SYNCTHREADS: _t_no_args, CallKind.THREADFENCE: _t_no_args,
    CallKind.THREADFENCE_BLOCK: _t_no_args, CallKind.THREADFENCE_SYSTEM: _t_no_args,
    CallKind.SYNCTHREADS_COUNT: _t_sync_pred, CallKind.SYNCTHREADS_AND: _t_sync_pred,
    CallKind.SYNCTHREADS_OR: _t_sync_pred, CallKind.SYNCWARP: _t_syncwarp,
    CallKind.SHFL_SYNC: _t_shfl, CallKind.SHFL_UP_SYNC: _t_shfl,
    CallKind.SHFL_DOWN_SYNC: _t_shfl, CallKind.SHFL_XOR_SYNC: _t_shfl,
    CallKind.BALLOT_SYNC: _t_vote, CallKind.ALL_SYNC: _t_vote, CallKind.ANY_SYNC: _t_vote,
    CallKind.EQ_SYNC: _t_vote, CallKind.ACTIVEMASK: _t_mask, CallKind.LANEMASK_LT: _t_mask,
    CallKind.POPC: _t_bitop, CallKind.BREV: _t_bitop, CallKind.CLZ: _t_bitop,
    CallKind.FFS: _t_bitop, CallKind.FMA: _t_fma, CallKind.CBRT: _t_cbrt,
    CallKind.FROM_BUFFER: _t_from_buffer,
}



