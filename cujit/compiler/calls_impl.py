"""Typing of calls with runtime arguments: builtins, ``math``, casts, barriers, atomics, warp
intrinsics and device functions (result types as Numba's ``cudadecl.py`` / ``mathdecl.py``).
"""
import ast

from .. import kernelapi_extra as KX
from .. import types as T
from . import intrinsics_types as IX
from . import rules
from .calls_device import type_device_call
from .calls_ext import is_ext, type_ext
from .closures import type_closure_call
from .libdevice_table import type_libdevice
from .const_types import MATH_BINARY
from .rules import Global, RangeType

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


def _no_array_ufunc(typer, node, key, args):
    """Refuse a math function / NumPy ufunc called on whole arrays, as numba.cuda's
    ``np.sin(x, out)`` (its docs' "Calling a NumPy UFunc" example): cujit types these
    element-wise only, and a clear message beats "takes numbers" or an argument count."""
    for a, t in zip(node.args, args):
        if isinstance(t, T.Array):
            name = _spelled(node, key)
            nin = 2 if key[5:] in MATH_BINARY or key in ("min", "max") else 1
            ins = ", ".join(f"{ast.unparse(x)}[i]" if isinstance(xt, T.Array)
                            else ast.unparse(x) for x, xt in zip(node.args[:nin], args))
            out = ast.unparse(node.args[nin]) if len(node.args) > nin else "out"
            raise typer.error(
                f"{name}() of a whole array is not supported in kernels (numba.cuda accepts "
                f"NumPy ufuncs on arrays, e.g. `np.sin(x, out)`; cujit only on elements): "
                f"compute it per element, in a loop or one element per thread, e.g. "
                f"`{out}[i] = {name}({ins})`", a)


def _float_of(t):
    """The float type a math function computes in for argument type ``t``."""
    if rules.is_float(t):
        return t
    return T.float64


def type_func(typer, node, ft, args, kws):
    key = ft.key
    tf = typer.tf
    if key == "device":
        return _device_call(typer, node, ft.data, args, kws)
    if is_ext(key):
        if kws:
            raise typer.error(f"{key}() takes no keyword arguments in kernels", node)
        return type_ext(typer, node, key, args)
    if key == "closure":
        return type_closure_call(typer, node, ft.data, args, kws)
    if key.startswith("libdevice."):
        return type_libdevice(typer, node, key[10:], args, kws)
    if kws and key not in ("print", "syncwarp"):
        raise typer.error(f"{key}() takes no keyword arguments in kernels", node)
    n = len(args)
    if key.startswith("math.") or key in ("npfloor", "npceil", "nptrunc", "abs", "min", "max"):
        _no_array_ufunc(typer, node, key, args)

    def need(lo, hi=None):
        hi = lo if hi is None else hi
        if not lo <= n <= hi:
            want = str(lo) if lo == hi else f"{lo} to {hi}"
            raise typer.error(f"{_spelled(node, key)}() takes {want} argument(s), got {n}",
                              node)
        for a, t in zip(node.args, args):
            _scalar(typer, a, t, _spelled(node, key) + "()")

    tf.info[node] = (key, None)
    if key == "cast":
        need(1)
        if rules.is_complex(args[0]) and not rules.is_complex(ft.data):
            raise typer.error(f"cannot cast complex to {ft.data}", node)
        tf.info[node] = ("cast", ft.data)
        return ft.data
    if key in ("int", "float", "bool", "complex"):
        if key == "complex":
            need(1, 2)
            return T.complex128 if all(not rules.is_complex(a) or a is T.complex128
                                       for a in args) else T.complex128
        need(1)
        if key != "bool" and rules.is_complex(args[0]):
            raise typer.error(f"cannot convert complex to {key}", node)
        target = {"int": T.int64, "float": T.float64, "bool": T.boolean}[key]
        tf.info[node] = ("cast", target)
        return target
    if key == "round":
        need(1, 2)
        if rules.is_complex(args[0]):
            raise typer.error("round() of a complex number is not defined", node)
        if n == 1:
            return T.int64
        if not rules.is_int(args[1]):
            raise typer.error("round(x, ndigits): ndigits must be an integer", node.args[1])
        return _float_of(args[0])
    if key in ("min", "max"):
        if n == 1 and isinstance(args[0], (T.UniTuple, T.Tuple)):
            ts = list(args[0].types)
            tf.info[node] = (key, "tuple")
        else:
            if n < 2:
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
    if key == "abs":
        need(1)
        t = args[0]
        if rules.is_complex(t):
            return t.underlying_float
        return T.int64 if isinstance(t, T.Boolean) else t
    if key == "pow":
        need(2)
        return typer.binop_types("**", args[0], args[1], node)
    if key == "len":
        if n != 1:
            raise typer.error("len() takes 1 argument", node)
        t = args[0]
        if isinstance(t, T.Array):
            if t.ndim == 0:
                raise typer.error("len() of a 0-d array", node)
            return T.int64
        if isinstance(t, (T.UniTuple, T.Tuple)):
            return T.int64
        raise typer.error(f"len() of a value of type {t}", node)
    if key == "range":
        need(1, 3)
        for a, t in zip(node.args, args):
            if not (rules.is_int(t) or isinstance(t, T.Boolean)):
                raise typer.error(f"range() takes integers, got {t}", a)
        small = all(isinstance(t, T.Boolean) or (t.signed and t.bitwidth <= 32) for t in args)
        uns = all(rules.is_int(t) and not t.signed and t.bitwidth == 64 for t in args)
        return RangeType(T.int32 if small else T.uint64 if uns else T.int64)
    if key in ("enumerate", "zip"):
        if not args or (key == "enumerate" and len(args) != 1):
            want = "1 argument" if key == "enumerate" else "at least 1 argument"
            raise typer.error(f"{key}() takes {want}", node)
        for a, t in zip(node.args, args):
            if rules.element_type(t) is None:
                raise typer.error(f"{key}() in a kernel takes ranges, arrays or homogeneous "
                                  f"tuples, got {t}", a)
        return rules.IterType(key, args)
    if key == "print":
        for k in kws:
            raise typer.error(f"print() keyword '{k}' is not supported in kernels", node)
        for a, t in zip(node.args, args):
            if not (rules.is_number(t) or (isinstance(t, rules.Global) and
                                           isinstance(t.obj, str))):
                raise typer.error(f"print() in a kernel takes numbers and string constants, "
                                  f"got {t}", a)
        return T.void
    if key.startswith("math."):
        return _math(typer, node, key[5:], args, need)
    if key in ("npfloor", "npceil", "nptrunc"):
        need(1)
        return _float_of(args[0])
    if key.startswith("atomic."):
        return _atomic(typer, node, key[7:], args)
    return _kernel_api(typer, node, key, args, kws, need)


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
        elif isinstance(it, T.UniTuple) and rules.is_int(it.dtype):
            n = it.count
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
    typer.tf.info[node] = ("atomic", op)
    return aty.dtype


# The grid group as the compiler sees it: one object, so that its type is one Global; only
# its ``sync`` attribute (kernelapi_extra.grid_sync, recognised by identity) is read.
_GRID_GROUP = KX.GridGroup()

_WARP_TYPES = (T.int32, T.uint32, T.int64, T.uint64, T.float32, T.float64)


def _kernel_api(typer, node, key, args, kws, need):
    tf = typer.tf
    if key in IX.KEYS:
        return IX.type_intrinsic(typer, node, key, args, kws, need)
    if key.startswith("cg."):
        # this_grid() is the grid group (a compile-time object: its .sync is recognised);
        # sync() returns None (lowered in .cooperative)
        need(0)
        return Global(_GRID_GROUP) if key == "cg.this_grid" else T.void
    if key == "syncthreads" or key.startswith("threadfence"):
        need(0)
        return T.void
    if key in ("syncthreads_count", "syncthreads_and", "syncthreads_or"):
        need(1)
        return T.int32
    if key == "syncwarp":
        if kws and set(kws) != {"mask"}:
            raise typer.error("syncwarp() takes only 'mask'", node)
        if len(args) + len(kws) > 1:
            raise typer.error("syncwarp() takes at most 1 argument", node)
        for a, t in zip(node.args, args):
            _scalar(typer, a, t, "syncwarp()")
        return T.void
    if key in ("shfl_sync", "shfl_up_sync", "shfl_down_sync", "shfl_xor_sync"):
        need(3)
        vt = args[1]
        if isinstance(vt, T.Boolean):
            vt = T.int32
        if vt not in _WARP_TYPES:
            raise typer.error(f"{key}() supports {', '.join(map(str, _WARP_TYPES))} values, "
                              f"got {args[1]}", node.args[1])
        tf.info[node] = (key, vt)
        return vt
    if key in ("ballot_sync", "all_sync", "any_sync", "eq_sync"):
        need(2)
        if not (rules.is_int(args[1]) or isinstance(args[1], T.Boolean)):     # numba: the predicate is a bool or an integer
            raise typer.error(f"{key}() predicate must be a boolean or an integer, got "
                              f"{args[1]}", node.args[1])
        return T.uint32 if key == "ballot_sync" else T.boolean
    if key in ("activemask", "lanemask_lt"):
        need(0)
        return T.uint32
    if key in ("popc", "brev", "clz", "ffs"):
        need(1)
        t = args[0]
        if not rules.is_int(t):
            raise typer.error(f"{key}() takes an integer, got {t}", node.args[0])
        if key == "ffs":
            return T.uint32
        if key == "brev":       # numba: brev is defined for uint32 and uint64
            return T.uint64 if t.bitwidth == 64 else T.uint32
        return t
    if key == "fma":
        need(3)
        r = None
        for t in args:
            r = rules.unify(r, _float_of(t))
        return r
    if key == "cbrt":
        need(1)
        return _float_of(args[0])
    raise typer.error(f"{key}() is not supported in kernels", node)


def _device_call(typer, node, dev, args, kws):
    return type_device_call(typer, node, dev, args, kws)

