"""Typing of the names and calls the compiler recognises (by object identity).

``type_call`` types a call: builtins (``min max abs len range int float bool complex round
print pow``), ``math.*`` (lowered to libdevice ``__nv_*``), NumPy scalar casts
(``np.float32(x)``) and a few NumPy maths functions, cujit types as casts
(``cujit.float32(x)``), the kernel API of :mod:`cujit.kernelapi` (thread indexing,
shared/local/const arrays, barriers, fences, atomics, warp intrinsics) and device functions.
Each call's meaning is left in ``tf.info[node]`` as a :class:`~.callkinds.Call` (its kind and
typed payload) for the backends.
Compile-time values and the table of recognised callables are in :mod:`.const_types`.
"""
import ast
import types

import numpy as np

from ... import kernelapi as K
from ... import types as T
from . import runtime as calls_impl, wgmma as calls_wgmma, wmma as calls_wmma
from .binding import bind_arguments
from .. import rules
from ..callkinds import (ArrayCopy, ArraySpec, ArrayView, Call, CallKind, ConstArray, GridAxes,
                         IsInstance, PointerArray, Reshape)
from ..nodeinfo import SpecialRegister
from .device import type_starred_call
from .numeric import type_bit_count
from .reduce import type_reduction
from .ufunc import UfuncLoopFunction
from ..closures import escape
from ..const_types import (CONST_LIMIT, MATH_BINARY, MATH_UNARY, REDUCTION_METHODS,
                           STATIC_SHARED_LIMIT, const_type)
from ..errors import CompileError, RequireLiteralValue, UninferableType
from ..rules import BoundMethod, Func, Global

__all__ = ["const_type", "global_attr", "type_call", "MATH_UNARY", "MATH_BINARY", "LOCAL_LIMIT"]

#: Local memory one thread may use (bytes): CUDA's 512 KiB per thread on every architecture
#: since compute capability 2.0 (CUDA C Programming Guide, "Features and Technical
#: Specifications").
LOCAL_LIMIT = 512 * 1024

# The four index stubs by identity (their names are theirs: kernelapi keeps them private).
_DIM3 = {id(K.threadIdx): "threadIdx", id(K.blockIdx): "blockIdx", id(K.blockDim): "blockDim",
         id(K.gridDim): "gridDim"}


def global_attr(typer, node, obj, attr):
    """Type ``obj.attr`` where ``obj`` is a compile-time object."""
    if isinstance(obj, K.Dim3Stub):
        if attr not in ("x", "y", "z"):
            raise typer.error(f"{obj!r} has no attribute '{attr}' (use .x, .y or .z)", node)
        typer.tf.info[node] = SpecialRegister(_DIM3[id(obj)], attr)
        return T.int32
    if obj is K.shared or obj is K.local:
        if attr != "array":
            raise typer.error(f"{obj!r} has no attribute '{attr}' (use .array)", node)
        return Func(("shared" if obj is K.shared else "local") + ".array")
    if obj is K.const:
        if attr != "array_like":
            raise typer.error(f"cujit.const has no attribute '{attr}' (use .array_like)", node)
        return Func("const.array_like")
    if obj is K.atomic:
        name = attr.rstrip("_")
        if name not in _ATOMIC_OPS and attr != "compare_and_swap":
            raise typer.error(f"cujit.atomic has no operation '{attr}'", node)
        return Func("atomic." + ("cas0" if attr == "compare_and_swap" else name))
    if attr == "laneid" and getattr(obj, "__name__", None) in ("cujit", "cujit.kernelapi"):
        typer.tf.info[node] = SpecialRegister("laneid")
        return T.int32
    try:
        value = getattr(obj, attr)
    except AttributeError:
        raise typer.error(f"{getattr(obj, '__name__', repr(obj))} has no attribute '{attr}'",
                          node) from None
    return typer.typed_value(node, value)


_ATOMIC_OPS = ("add", "sub", "max", "min", "nanmax", "nanmin", "exch", "and", "or", "xor",
               "inc", "dec", "cas")


def type_call(typer, node):
    """Type an ast.Call; records ``tf.info[node]``."""
    ft = typer.expr(node.func)
    if ft is None:
        return None
    if isinstance(ft, Func) and ft.kind in _CONST_ARG_CALLS:
        return _CONST_ARG_CALLS[ft.kind](typer, node, ft)
    for kw in node.keywords:
        if kw.arg is None:
            raise typer.error("**kwargs in calls are not supported in kernels", kw.value)
    if any(isinstance(a, ast.Starred) for a in node.args):
        if isinstance(ft, Func) and ft.kind in (CallKind.DEVICE, CallKind.KERNEL):
            return type_starred_call(typer, node, ft.data, ft.kind)
        if isinstance(ft, Func) and ft.kind is CallKind.CLOSURE:
            return type_starred_call(typer, node, escape(typer, ft.data, node))
        star = _star_forwarder(typer, node, ft)
        if star is not None:
            return type_starred_call(typer, node, star)
        raise typer.error("*args in calls are supported for device functions and for the "
                          "functions the kernel language recognises (complex(*t), "
                          "math.hypot(*t))", node)
    args = [typer.expr(a) for a in node.args]
    kws = {kw.arg: typer.expr(kw.value) for kw in node.keywords}
    if any(a is None for a in args) or any(v is None for v in kws.values()):
        return None
    if isinstance(ft, BoundMethod):
        return _method(typer, node, ft, args, kws)
    if not isinstance(ft, Func):
        hint = ""
        if isinstance(ft, Global) and isinstance(ft.obj, types.FunctionType):
            # numba.extending.register_jitable registers in Numba's CPU registry, which
            # cujit does not read: name the decorators that reach cujit
            hint = ("; a Python function called from a kernel must be a device function: "
                    "decorate it with @cuda.jit(device=True) or "
                    "@cujit.extending.register_jitable (numba.extending.register_jitable "
                    "registers it for Numba's CPU target only)")
        # numba's words for a global it has no type for, before cujit's reason
        untyped = (f"Untyped global name '{node.func.id}': "
                   if isinstance(ft, Global) and isinstance(node.func, ast.Name) else "")
        raise typer.error(f"{untyped}'{ast.unparse(node.func)}' ({_describe(ft)}) cannot be "
                          f"called in a kernel{hint}", node.func)
    return calls_impl.type_func(typer, node, ft, args, kws)


def _global_object(fsrc, func):
    """The object callee expression ``func`` names through globals / closure variables
    (``complex``, ``cmath.polar``), or None."""
    if isinstance(func, ast.Name):
        found, value = fsrc.resolve_global(func.id)
        return value if found else None
    if isinstance(func, ast.Attribute):
        base = _global_object(fsrc, func.value)
        return getattr(base, func.attr, None) if base is not None else None
    return None


def _star_forwarder(typer, node, ft):
    """For ``f(a, *t, ...)`` of a function the kernel language recognises (``ft``, a
    ``Func``): a generated device function of the expanded arguments that calls ``f`` with
    them, so the call binds as a device call with ``*t`` expanded (both backends run that);
    None when ``f`` is not a recognised function named by globals, or an argument is
    untyped."""
    if not isinstance(ft, Func) or node.keywords:
        return None
    obj = _global_object(typer.fsrc, node.func)
    try:
        same = obj is not None and const_type(obj)[0] == ft
    except (TypeError, ValueError):
        same = False
    if not same:
        return None
    n = 0
    for a in node.args:
        if isinstance(a, ast.Starred):
            t = typer.expr(a.value)
            if t is None:
                return None
            if not isinstance(t, (T.UniTuple, T.Tuple)):
                raise typer.error(f"*{ast.unparse(a.value)} in a call must be a tuple, got {t}",
                                  a)
            n += len(t.types)
        else:
            n += 1
    key = ("star", id(obj), n)
    fn = typer.env.generated.get(key)
    if fn is None:
        params = ", ".join(f"a{k}" for k in range(n))
        name = f"star_{getattr(obj, '__name__', 'call')}"
        text = f"def np_{name}_loop({params}):\n    return _f({params})\n"
        # the callee kept by the generated function, as a ufunc loop keeps its casts
        fn = typer.env.generated[key] = UfuncLoopFunction(name, text, {"_f": obj})
    return fn


def _describe(t):
    if isinstance(t, Global):
        return f"{type(t.obj).__name__} {t.obj!r:.50}"
    return f"a value of type {t}"


def _view_dtype(t):
    """The cujit scalar type a ``view`` argument names (``np.int32``, ``cuda.int32``,
    a captured ``np.dtype``), or None."""
    if isinstance(t, Func) and t.kind is CallKind.CAST and isinstance(t.data, T.Scalar):
        return t.data
    if isinstance(t, Global) and isinstance(t.obj, np.dtype) and t.obj.fields is None:
        try:
            return T.from_dtype(t.obj)
        except (TypeError, ValueError, KeyError, NotImplementedError):
            return None
    return None


def _array_view(typer, node, aty, args):
    """``arr.view(dtype)`` (NumPy's): the same bytes as ``dtype`` elements.  An element
    size that differs needs at least one dimension; the last one must then be contiguous and
    hold a whole number of new elements (ValueError in the thread otherwise, as NumPy's)."""
    dt = _view_dtype(args[0]) if len(args) == 1 else None
    if dt is None or isinstance(dt, (T.Record,)) or not (rules.is_number(dt) or
                                                         isinstance(dt, T.Boolean)):
        raise typer.error("view() in a kernel takes one scalar dtype (np.int32, "
                          "cuda.float32, or a captured np.dtype)", node)
    old = aty.dtype.dtype.itemsize
    if dt.dtype.itemsize != old and aty.ndim == 0:
        raise typer.error(f"view() of a 0-d array as {dt}: the element sizes differ "
                          f"({old} and {dt.dtype.itemsize} bytes)", node)
    layout = aty.layout if dt.dtype.itemsize == old else ("C" if aty.layout == "C" else "A")
    typer.tf.info[node] = Call(CallKind.ARRAY_VIEW, ArrayView(dt))
    return T.Array(dt, aty.ndim, layout, aty.readonly)


def _array_copy(typer, node, aty, args):
    """``arr.copy()`` of a captured NumPy array (a global or closure variable): a writable
    C-order copy in the thread's local memory, its shape known when compiling.  TypingError
    for arguments, for another array (its shape is known only at launch, and a cujit kernel
    allocates no heap; numba-cuda allocates through its NRT) and past the local-memory
    limit."""
    value = typer.tf.constvals.get(node.func.value)
    if args:
        raise typer.error("copy() of an array takes no arguments in kernels", node)
    if not isinstance(value, np.ndarray):
        raise typer.error("copy() in a kernel copies a captured NumPy array (a global or "
                          "closure variable, whose shape is known when compiling) into "
                          "local memory; copy other arrays into a cuda.local.array",
                          node)
    if value.nbytes > LOCAL_LIMIT:
        raise typer.error(f"copy() of a {value.nbytes}-byte array exceeds the local memory "
                          f"per thread ({LOCAL_LIMIT} bytes)", node)
    typer.tf.info[node] = Call(CallKind.ARRAY_COPY, ArrayCopy(value))
    return T.Array(aty.dtype, aty.ndim, "C", False)


def _method(typer, node, bm, args, kws):
    if kws and not (isinstance(bm.recv, T.Array) and bm.name in REDUCTION_METHODS):
        raise typer.error(f"{bm.name}() takes no keyword arguments in kernels", node)
    if bm.name == "conjugate":
        typer.tf.info[node] = Call(CallKind.CONJUGATE)
        return bm.recv
    if bm.name == "bit_count":
        return type_bit_count(typer, node, bm.recv, args)
    if isinstance(bm.recv, T.Array) and bm.name in REDUCTION_METHODS:
        if args:
            raise typer.error(f"{bm.name}() of an array takes no arguments in kernels (the "
                              f"whole array is reduced)", node)
        return type_reduction(typer, node, bm.name, bm.recv, node.func.value, kws)
    if isinstance(bm.recv, T.Array) and bm.name == "view":
        return _array_view(typer, node, bm.recv, args)
    if isinstance(bm.recv, T.Array) and bm.name == "copy":
        return _array_copy(typer, node, bm.recv, args)
    if bm.name == "reshape":
        aty = bm.recv
        if len(args) == 1 and isinstance(args[0], (T.UniTuple, T.Tuple)):
            dims = list(args[0].types)
        else:
            dims = args
        if not dims or not all(rules.is_int(d) for d in dims):
            raise typer.error("reshape() takes integer dimensions or a tuple of them", node)
        if aty.layout != "C":
            raise typer.error(f"reshape() in a kernel needs a C-contiguous array, got {aty}",
                              node)
        typer.tf.info[node] = Call(CallKind.RESHAPE, Reshape(len(dims)))
        return T.Array(aty.dtype, len(dims), "C", aty.readonly)
    raise typer.error(f"method {bm.name}() is not supported in kernels", node)


# ---- shared / local / const arrays (arguments must be compile-time constants) -------------
def _shape_value(typer, snode, what):
    reads = [m for m in ast.walk(snode) if isinstance(m, ast.Attribute) and
             isinstance(m.value, ast.Name) and
             isinstance(typer.tf.vartypes.get(m.value.id), T.Array)]
    if reads and not typer._const(snode)[0]:
        read = next((m for m in ast.walk(snode) if isinstance(m, ast.Subscript) and
                     m.value is reads[0]), reads[0])      # x.shape[0], not x.shape
        # numba rejects it at typing too (RequireLiteralValue); name the run-time read
        # rather than the generic rule, and never the array's contents
        raise typer.error(
            f"the shape of {what} must be a compile-time constant or an integer argument; "
            f"'{ast.unparse(snode)}' is not: '{ast.unparse(read)}' is an attribute of the "
            f"array '{reads[0].value.id}', read at run time (pass the size as an integer "
            "argument, or use a constant)", snode)
    v = typer.const_eval(snode, f"the shape of {what}")
    seq = v if isinstance(v, tuple) else (v,)
    dims = []
    for d in seq:
        if isinstance(d, (bool, np.bool_)) or not isinstance(d, (int, np.integer)):
            raise typer.error(f"the shape of {what} must be a Python int or a tuple of ints; "
                              f"got {v!r} ({type(d).__name__})", snode)
        if d < 0:
            raise typer.error(f"the shape of {what} cannot be negative (got {v!r})", snode)
        dims.append(int(d))
    return tuple(dims)


def _dtype_value(typer, dnode, what):
    ok, v = typer._const(dnode)
    if not ok and isinstance(dnode, ast.Attribute) and dnode.attr == "dtype":
        # ``x.dtype`` of an array: its element type is known when the kernel is compiled
        # (numba-cuda's ``cuda.shared.array(n, dtype=ary.dtype)``)
        base = typer.expr(dnode.value)
        if isinstance(base, T.Array):
            return base.dtype
    if not ok:
        src = ast.unparse(dnode)
        why = ("a kernel argument" if isinstance(dnode, ast.Name) and dnode.id in
               typer.fsrc.argnames else "not known when the kernel is compiled")
        raise UninferableType(f"the dtype of {what} must be a compile-time constant (a "
                              "cujit/NumPy type, a NumPy dtype or a string such as "
                              f"'float32'); '{src}' is {why}", typer.loc(dnode))
    try:
        return T.as_dtype_type(v)
    except TypeError as e:
        if isinstance(v, str):      # numba's words for it, which its tests match
            raise typer.error(f"Invalid NumPy dtype specified: {v!r} (bad dtype for {what}: "
                              f"{e})", dnode) from None
        raise typer.error(f"bad dtype for {what}: {e}", dnode) from None


def _alignment_value(typer, anode, what):
    """The ``alignment=`` of a shared/local array: None, or a compile-time int that is
    positive, a power of 2 and a multiple of the pointer size (8), numba-cuda's rules
    (cudaimpl._validate_alignment).  A value that is not an int is a TypingError saying
    ``RequireLiteralValue: ... must be a constant integer`` (numba's typing refusal,
    cudadecl.Cuda_array_decl); an int that breaks a rule is a ValueError starting with
    numba's ``Alignment must be ...``, with the kernel's source location."""
    if anode is None:
        return None
    v = typer.const_eval(anode, f"the alignment of {what}")
    if v is None:
        return None
    if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, np.integer)):
        raise RequireLiteralValue(f"RequireLiteralValue: {what}'s alignment must be a "
                                  f"constant integer, got {v!r}", typer.loc(anode))
    v = int(v)
    rule = ("positive" if v <= 0 else "a power of 2" if v & (v - 1)
            else "a multiple of 8 (the pointer size)" if v % 8 else None)
    if rule is not None:
        raise ValueError(f"Alignment must be {rule}: {what}(..., alignment={v})\n"
                         f"{typer.loc(anode).render()}")
    return v


def _shared_array(typer, node, ft):
    what = ft.key
    a = bind_arguments(typer, node, ft.key, ("shape", "dtype", "alignment"), ("alignment",))
    shape = _shape_value(typer, a["shape"], what)
    dtype = _dtype_value(typer, a["dtype"], what)
    if isinstance(dtype, T.FP8):
        # numba-cuda has no arrays of its FP8 types; their bits (uint8) are the storage
        raise typer.error(f"{what}() of {dtype}: FP8 values have no array form; store their "
                          "bits in a uint8 array (cuda.fp8.cvt_float_to_fp8 & co.)",
                          a["dtype"])
    alignment = _alignment_value(typer, a.get("alignment"), what)
    tf = typer.tf
    itemsize = dtype.dtype.itemsize
    dynamic = ft.kind is CallKind.SHARED_ARRAY and 0 in shape
    if dynamic:
        if len(shape) != 1:
            raise typer.error(f"dynamic shared memory (a 0 in the shape) must be 1-D, as in "
                              f"shared.array(0, dtype); got shape {shape}", a["shape"])
        tf.uses_dynamic_shared = True
    else:
        nbytes = int(np.prod(shape, dtype=np.int64)) * itemsize
        if ft.kind is CallKind.SHARED_ARRAY:
            tf.shared_bytes += nbytes
            if nbytes > STATIC_SHARED_LIMIT:
                raise CompileError(
                    f"shared memory: shared.array of shape {shape} and dtype {dtype} asks "
                    f"{nbytes} bytes of static shared memory; the limit for static shared "
                    f"memory is {STATIC_SHARED_LIMIT} bytes (48 KiB). Use dynamic shared "
                    "memory (shared.array(0, dtype) and the 4th launch value) for more",
                    typer.loc(node))
        elif nbytes > LOCAL_LIMIT:
            sized = sorted(n for n in tf.literal_args
                           if any(isinstance(m, ast.Name) and m.id == n
                                  for m in ast.walk(a["shape"])))
            given = (f" (from kernel argument(s) {', '.join(f'{n}={tf.literal_args[n]}' for n in sized)})"
                     if sized else "")
            raise CompileError(f"local.array of shape {shape}{given} and dtype {dtype} asks "
                               f"{nbytes} bytes per thread, more than the device's local "
                               f"memory per thread ({LOCAL_LIMIT} bytes, 512 KiB)",
                               typer.loc(node))
    if dynamic and alignment is not None:
        raise typer.error("dynamic shared memory (shared.array(0, dtype)) takes no "
                          "alignment: its bytes start at the launch's dynamic shared memory",
                          a["alignment"])
    tf.info[node] = Call(ft.kind, ArraySpec(shape, dtype, dynamic, alignment))
    return T.Array(dtype, len(shape), "C")


def _const_array_like(typer, node, ft):
    a = bind_arguments(typer, node, "const.array_like", ("arr",))
    v = typer.const_eval(a["arr"], "the argument of const.array_like")
    if not isinstance(v, np.ndarray):
        if hasattr(v, "__cuda_array_interface__") or hasattr(v, "copy_to_host"):
            raise typer.error("const.array_like needs a host NumPy array known at compile "
                              "time, not a device array", a["arr"])
        try:
            v = np.asarray(v)
        except Exception:
            raise typer.error(f"const.array_like needs a NumPy array, got {type(v).__name__}",
                              a["arr"]) from None
        if v.dtype == object:
            raise typer.error("const.array_like needs a numeric or record array", a["arr"])
    if v.nbytes > CONST_LIMIT:
        raise CompileError(f"constant memory: const.array_like of {v.nbytes} bytes (shape "
                           f"{v.shape}, {v.dtype}) does not fit; constant memory holds "
                           f"{CONST_LIMIT} bytes (64 KiB)", typer.loc(node))
    try:
        dtype = T.from_dtype(v.dtype)
    except TypeError as e:
        raise typer.error(f"const.array_like: {e}", a["arr"]) from None
    typer.tf.const_bytes += v.nbytes
    typer.tf.info[node] = Call(CallKind.CONST_ARRAY, ConstArray(v))
    return T.Array(dtype, v.ndim, "C", True)


def _grid(typer, node, ft):
    a = bind_arguments(typer, node, ft.key, ("ndim",))
    n = typer.const_eval(a["ndim"], f"the argument of {ft.key}")
    if n not in (1, 2, 3) or isinstance(n, bool):
        raise typer.error(f"{ft.key}(ndim) takes 1, 2 or 3, got {n!r}", a["ndim"])
    typer.tf.info[node] = Call(ft.kind, GridAxes(n))
    return T.int64 if n == 1 else T.UniTuple(T.int64, n)


def _pointer_array(typer, node, ft):
    """``carray(ptr, shape, dtype=None)`` / ``farray``: an array of the pointer's element
    type (or ``dtype``, a compile-time type that must agree with it; required for a
    ``void*``), C or F order, of ``shape`` (an integer or a tuple of integers, run-time
    values allowed).  TypingError otherwise."""
    what = ft.key
    a = bind_arguments(typer, node, what, ("ptr", "shape", "dtype"), ("dtype",))
    pt = typer.expr(a["ptr"])
    st = typer.expr(a["shape"])
    if pt is None or st is None:
        return None
    if not isinstance(pt, (T.CPointer, T.RawPointer)):
        raise typer.error(f"{what}() takes a C pointer (CPointer), got a value of type {pt}",
                          a["ptr"])
    if rules.is_int(st):
        ndim = 1
    elif isinstance(st, (T.UniTuple, T.Tuple)) and st.types and \
            all(rules.is_int(t) for t in st.types):
        ndim = len(st.types)
    else:
        raise typer.error(f"the shape of {what}() must be an integer or a tuple of integers, "
                          f"got {st}", a["shape"])
    dnode = a.get("dtype")
    dtype = None
    if dnode is not None and not (isinstance(dnode, ast.Constant) and dnode.value is None):
        dtype = _dtype_value(typer, dnode, what)
    if isinstance(pt, T.RawPointer):
        if dtype is None:
            raise typer.error(f"explicit dtype required for void* argument of {what}()", node)
    elif dtype is None:
        dtype = pt.dtype
    elif dtype is not pt.dtype:
        raise typer.error(f"mismatching dtype '{dtype}' for pointer {pt}", dnode)
    order = "F" if ft.kind is CallKind.FARRAY else "C"
    typer.tf.info[node] = Call(ft.kind, PointerArray(order, dtype))
    return T.Array(dtype, ndim, order)


def _isinstance(typer, node, ft):
    """``isinstance(x, classinfo)``: a compile-time bool (Numba's rules:
    ``rules.isinstance_of``).  ``x`` is typed; ``classinfo`` is read as a compile-time value
    (``int``, ``np.float32``, ``float64[:]``, a tuple of classes), not typed as an
    expression."""
    if len(node.args) != 2 or node.keywords:
        raise typer.error("isinstance() takes 2 arguments, a value and a class (or a tuple "
                          "of classes)", node)
    vt = typer.expr(node.args[0])
    if vt is None:
        return None
    classinfo = typer.const_eval(node.args[1], "the class given to isinstance()")
    try:
        value = rules.isinstance_of(vt, classinfo)
    except TypeError as e:
        raise typer.error(str(e), node) from None
    typer.tf.info[node] = Call(CallKind.ISINSTANCE, IsInstance(value))
    return T.boolean


_CONST_ARG_CALLS = {CallKind.CARRAY: _pointer_array, CallKind.FARRAY: _pointer_array, CallKind.SHARED_ARRAY: _shared_array, CallKind.LOCAL_ARRAY: _shared_array,
                    CallKind.CONST_ARRAY: _const_array_like, CallKind.GRID: _grid,
                    CallKind.GRIDSIZE: _grid, CallKind.WMMA_FRAGMENT: calls_wmma.type_fragment,
                    CallKind.WGMMA_ACCUMULATOR: calls_wgmma.type_accumulator,
                    CallKind.ISINSTANCE: _isinstance}
