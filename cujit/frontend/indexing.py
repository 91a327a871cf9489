"""Typing of array/tuple/record indexing and array attributes (Numba's basic indexing).

``a[i, j]`` with one integer per dimension gives an element (a 0-d integer array counts as
the integer it holds); fewer integers, or slices, give a view (an ``Array`` of fewer dimensions).  Negative integer indices wrap (Python
semantics); there are no bounds checks (as numba.cuda).  Views keep the C layout only where
NumPy would keep the data contiguous: integer indices first, then one step-less slice, then
only full slices.
"""
import ast
import enum

import numpy as np

from .. import types as T
from . import rules
from .const_types import REDUCTION_METHODS
from .nodeinfo import (ArrayIndex, IntIndex, PointerIndex, RecordField, SliceIndex, SliceStore,
                       TupleDynamic, TupleIndex, TupleItem, TupleSlice)
from .rules import ArrayCTypes, BoundMethod, Global

__all__ = ["getitem", "setitem", "check_charseq_store", "array_attr", "index_parts", "nested_store_ok",
           "pointer_index"]


def pointer_index(typer, node, pty):
    """The element type of ``node`` (a Subscript of a pointer of type ``pty``): ``p[i]`` with
    one integer ``i`` reads or writes the element at ``p + i`` (C's indexing: no wrap of
    negative indices, no bounds on the GPU).  Records a :class:`~.nodeinfo.PointerIndex`;
    None while the index is untyped.  TypingError for a ``void*`` (no element type), a slice,
    several indices or an index that is not an integer."""
    if isinstance(pty, T.RawPointer):
        raise typer.error(f"a {pty} pointer has no element type and cannot be indexed: "
                          f"declare it as CPointer(dtype)", node)
    sl = node.slice
    if isinstance(sl, (ast.Slice, ast.Tuple)):
        raise typer.error(f"a pointer ({pty}) takes one integer index (p[i]), got "
                          f"'{ast.unparse(sl)}'", sl)
    it = typer.expr(sl)
    if it is None:
        return None
    if not rules.is_int(it):
        raise typer.error(f"a pointer ({pty}) index must be an integer, got a value of type "
                          f"{it}", sl)
    typer.tf.info[node] = PointerIndex(sl)
    return pty.dtype


def index_parts(typer, node, aty):
    """Type each index of ``node`` (a Subscript on an array of type ``aty``).

    Returns a list of :class:`~.nodeinfo.IntIndex` / ``SliceIndex`` / ``TupleIndex``
    entries, or None when some index is not typed yet.  Raises TypingError for indices that
    are not integers or slices, or too many of them.
    """
    sl = node.slice
    elts = sl.elts if isinstance(sl, ast.Tuple) else [sl]
    parts = []
    for e in elts:
        if isinstance(e, ast.Slice):
            for sub in (e.lower, e.upper, e.step):
                if sub is None:
                    continue
                st = typer.expr(sub)
                if st is None:
                    return None
                if not (rules.is_int(st) or isinstance(st, T.Boolean)) \
                        and not isinstance(st, T.NoneType):
                    raise typer.error(f"slice bounds must be integers, got {st}", sub)
            parts.append(SliceIndex(e))
            continue
        if isinstance(e, ast.Constant) and e.value is Ellipsis:
            raise typer.error("'...' in an index is not supported in kernels", e)
        t = typer.expr(e)
        if t is None:
            return None
        if rules.is_int(t) or (isinstance(t, T.Array) and t.ndim == 0
                                and rules.is_int(t.dtype)):
            # a 0-d integer array indexes as the integer it holds (NumPy's and numba's rule)
            parts.append(IntIndex(e))
        elif isinstance(t, T.UniTuple) and rules.is_int(t.dtype) and len(elts) == 1:
            parts.extend(TupleIndex(e, k) for k in range(t.count))
        elif isinstance(t, T.Tuple) and t.count == 0 and len(elts) == 1:
            pass
        elif isinstance(t, Global) and isinstance(t.obj, str) and \
                isinstance(aty.dtype, T.Record) and t.obj in aty.dtype.fields:
            raise typer.error(f"a field of a record array is read per element in kernels: "
                              f"use a[i][{t.obj!r}] or a[i].{t.obj} (got the field name "
                              f"{t.obj!r} as an array index)", e)
        else:
            what = f"the constant {t.obj!r:.60}" if isinstance(t, Global) else \
                f"a value of type {t}"
            raise typer.error(f"array index must be an integer or a slice, got {what}", e)
    if len(parts) > aty.ndim:
        raise typer.error(f"too many indices ({len(parts)}) for a {aty.ndim}-d array", node)
    return parts


def _view_layout(aty, parts):
    if aty.layout == "A":
        return "A"
    padded = parts + [None] * (aty.ndim - len(parts))      # None: a full slice
    if aty.layout == "F":
        return "F" if all(_is_full(p) for p in padded) else "A"
    seen_slice = False
    for p in padded:
        if isinstance(p, (IntIndex, TupleIndex)):
            if seen_slice:
                return "A"
        else:
            if seen_slice and not _is_full(p):
                return "A"
            if not seen_slice and p is not None and p.node.step is not None:
                return "A"
            seen_slice = True
    return "C"


def _is_full(p):
    if p is None:
        return True
    if not isinstance(p, SliceIndex):
        return False
    s = p.node
    return s.lower is None and s.upper is None and s.step is None


def getitem(typer, node):
    """Type ``node`` (an ast.Subscript used as a value)."""
    base = typer.expr(node.value)
    if base is None:
        return None
    if isinstance(base, T.Array):
        parts = index_parts(typer, node, base)
        if parts is None:
            return None
        n_int = sum(1 for p in parts if isinstance(p, (IntIndex, TupleIndex)))
        typer.tf.info[node] = ArrayIndex(parts)
        if n_int == base.ndim:
            return base.dtype
        return T.Array(base.dtype, base.ndim - n_int, _view_layout(base, parts), base.readonly)
    if isinstance(base, (T.CPointer, T.RawPointer)):
        return pointer_index(typer, node, base)
    if isinstance(base, (T.UniTuple, T.Tuple)):
        return _tuple_getitem(typer, node, base)
    if isinstance(base, T.Record):
        ok, key = typer._const(node.slice)
        names = list(base.fields)
        if ok and isinstance(key, int) and not isinstance(key, bool) and \
                -len(names) <= key < len(names):
            key = names[key]        # rec[0]: the field at that position, as in NumPy
        if ok and isinstance(key, str) and key in base.fields:
            ft = base.fields[key][0]
            typer.tf.info[node] = RecordField(key)
            return T.Array(ft.dtype, ft.ndim, "C") if isinstance(ft, T.NestedArray) else ft
        raise typer.error(f"record index must be a constant field name or position of {base}",
                          node.slice)
    if isinstance(base, Global) and isinstance(base.obj, enum.EnumMeta):
        # RequestError["not_found"]: the member, a compile-time constant as in numba
        ok, key = typer._const(node.slice)
        members = base.obj.__members__
        if ok and isinstance(key, str) and key in members:
            return typer.typed_value(node, members[key])
        raise typer.error(f"{base.obj.__name__}[...] in a kernel takes a constant member name "
                          f"(one of {', '.join(members)})", node.slice)
    if isinstance(base, Global) and isinstance(base.obj, tuple):
        # tup[i] of a compile-time tuple (a literal_unroll loop's element): the element
        ok, key = typer._const(node.slice)
        if ok and isinstance(key, int) and not isinstance(key, bool) and \
                -len(base.obj) <= key < len(base.obj):
            return typer.typed_value(node, base.obj[key])
        raise typer.error(f"a compile-time tuple is indexed by a constant integer in "
                          f"range(-{len(base.obj)}, {len(base.obj)}) in kernels", node.slice)
    raise typer.error(f"a value of type {base} cannot be indexed", node)


def _tuple_getitem(typer, node, base):
    sl = node.slice
    if isinstance(sl, ast.Slice):
        vals = []
        for s in (sl.lower, sl.upper, sl.step):
            if s is None:
                vals.append(None)
                continue
            ok, v = typer._const(s)
            if not ok or not isinstance(v, int):
                raise typer.error("tuple slice bounds must be constant integers", s)
            vals.append(v)
        idx = list(range(base.count))[slice(*vals)]
        typer.tf.info[node] = TupleSlice(tuple(idx))
        return T.Tuple(tuple(base.types[i] for i in idx))
    ok, v = typer._const(sl)
    if ok and isinstance(v, int) and not isinstance(v, bool):
        if not -base.count <= v < base.count:
            raise typer.error(f"tuple index {v} is out of range for a tuple of {base.count}",
                              sl)
        typer.tf.info[node] = TupleItem(v % base.count)
        return base.types[v]
    it = typer.expr(sl)
    if it is None:
        return None
    if isinstance(base, T.UniTuple) and rules.is_int(it):
        typer.tf.info[node] = TupleDynamic()
        return base.dtype
    raise typer.error(f"a tuple of mixed types ({base}) can only be indexed by a constant "
                      "integer", sl)


def setitem(typer, target, vt):
    """Type ``target[...] = <value of type vt>``."""
    base = typer.expr(target.value)
    if base is None:
        return
    if isinstance(base, T.Record):
        check_record_writable(typer, target.value, target)
        rt = getitem(typer, target)
        if isinstance(rt, T.CharSeq):
            if vt is not None:
                check_charseq_store(typer, target, rt, vt)
            typer.record(target, rt)
            return
        if vt is not None and not (rules.is_number(rt) and rules.is_number(vt)) \
                and not nested_store_ok(rt, vt):
            raise typer.error(f"cannot store a {vt} into a record field of type {rt}", target)
        typer.record(target, rt)
        return
    if isinstance(base, (T.CPointer, T.RawPointer)):
        rt = pointer_index(typer, target, base)
        typer.record(target, rt)
        if rt is None or vt is None:
            return
        if isinstance(rt, T.Record):
            if vt is not rt:
                raise typer.error(f"cannot assign a value of type {vt} through a pointer to "
                                  f"{rt} (a whole record needs a record of the same dtype)",
                                  target)
            return
        _check_scalar_store(typer, target, rt, vt)
        return
    if not isinstance(base, T.Array):
        raise typer.error(f"cannot assign into an element of a value of type {base}", target)
    if base.readonly:
        raise typer.error("this array is read-only (a const array, or a read-only argument)", target)
    rt = getitem(typer, target)
    typer.record(target, rt)
    if rt is None or vt is None:
        return
    if isinstance(rt, T.Array):
        if isinstance(vt, T.Array) and vt.ndim == rt.ndim and rules.is_number(vt.dtype) \
                and rules.is_number(rt.dtype) and not (rules.is_complex(vt.dtype) and
                                                       not rules.is_complex(rt.dtype)):
            # element-wise copy of an array of the same shape (not checked, like indexing)
            typer.tf.info[target] = SliceStore(typer.tf.info[target].parts, True)
            return
        if not rules.is_number(vt) or not rules.is_number(rt.dtype):
            raise typer.error(f"only a scalar or an array of the same number of dimensions "
                              f"({rt.ndim}) can be assigned to an array slice (got {vt})",
                              target)
        typer.tf.info[target] = SliceStore(typer.tf.info[target].parts, False)
        return
    if isinstance(rt, T.Record):
        if vt is not rt:
            raise typer.error(f"cannot assign a value of type {vt} to an element of an array "
                              f"of {rt} (a whole record needs a record of the same dtype)",
                              target)
        return      # whole-record copy (lower_records.copy_record)
    if isinstance(rt, T.CharSeq):
        check_charseq_store(typer, target, rt, vt)
        return
    _check_scalar_store(typer, target, rt, vt)


def check_charseq_store(typer, target, rt, vt):
    """TypingError unless ``vt`` is a str or bytes constant that an element of string type
    ``rt`` (``T.CharSeq``) takes as NumPy does (numba-cuda stores constant strings into
    ``S``/``U`` arrays and record fields); the backends write ``rt.encode(value)``."""
    value = vt.obj if isinstance(vt, rules.Global) else None
    if not isinstance(value, (str, bytes)):
        raise typer.error(f"only a str or bytes constant can be stored into an element of "
                          f"type {rt} (a {'bytes' if rt.kind == 'S' else 'string'} array), "
                          f"got a value of type {vt}", target)
    try:
        rt.encode(value)
    except (TypeError, ValueError, UnicodeError) as e:
        raise typer.error(f"cannot store {value!r} into an element of type {rt}: {e}",
                          target) from None


def _check_scalar_store(typer, target, rt, vt):
    """TypingError unless a value of type ``vt`` may be stored into an element of scalar
    type ``rt`` (an array's or a pointer's)."""
    if isinstance(rt, T.BFloat16) or isinstance(vt, T.BFloat16):
        # converted as bfloat16(x) / float32(x) ... would (numba-cuda converts implicitly)
        other = vt if isinstance(rt, T.BFloat16) else rt
        if not (isinstance(other, (T.BFloat16, T.Boolean)) or rules.is_int(other)
                or rules.is_float(other)):
            raise typer.error(f"cannot store a value of type {vt} into an array of {rt}",
                              target)
        return
    if rules.is_datetime(rt) or rules.is_datetime(vt):
        # datetime64 into datetime64, timedelta64 into timedelta64, converted to the
        # element's unit (NumPy's same_kind cast)
        if type(rt) is not type(vt) or rules.common_time_unit(rt.unit, vt.unit) is None:
            raise typer.error(f"cannot store a value of type {vt} into an array of {rt}",
                              target)
        return
    if not rules.is_number(vt):
        raise typer.error(f"cannot store a value of type {vt} into an array of {rt}", target)
    if rules.is_complex(vt) and not rules.is_complex(rt):
        raise typer.error(f"cannot store a complex value into an array of {rt}", target)


def check_record_writable(typer, rec, target):
    """TypingError when the record ``rec`` (an ast expression of Record type) whose field
    ``target`` stores is an element of a read-only array (``x[i]['a'] = v``, ``x[i].a = v``
    with ``x`` a const array or a read-only argument), as a store into ``x[i]`` is."""
    if isinstance(rec, ast.Subscript):
        at = typer.tf.typemap.get(rec.value)
        if isinstance(at, T.Array) and at.readonly:
            raise typer.error("this array is read-only (a const array, or a read-only "
                              "argument): its records' fields cannot be written", target)


def array_attr(typer, node, aty, attr):
    """Type ``arr.<attr>``: shape, size, ndim, strides, itemsize, nbytes, T, reshape,
    ``ctypes`` (its ``.data``), and a record array's field by name (``arr.x``: the strided
    array of that field, as NumPy's recarray and Numba give it)."""
    n = aty.ndim
    if attr == "ctypes":
        return ArrayCTypes(aty)
    if attr in ("shape", "strides"):
        return T.UniTuple(T.int64, n) if n else T.Tuple(())
    if attr in ("size", "ndim", "itemsize", "nbytes"):
        return T.int64
    if attr == "T":
        return aty.copy(layout={"C": "F", "F": "C"}.get(aty.layout, "A")) if n > 1 else aty
    if attr in REDUCTION_METHODS or attr in ("view", "copy"):
        return BoundMethod(aty, attr)       # a.sum(), a.max() …: calls/reduce.py; a.view(dt)
    if attr in ("reshape", "copy_to_host"):
        if attr == "reshape":
            return BoundMethod(aty, attr)
    if attr == "dtype":
        return Global(aty.dtype)
    if attr in ("real", "imag") and rules.is_complex(aty.dtype):
        # a strided view of the float parts (NumPy's arr.real / arr.imag), e.g. for atomics
        return T.Array(aty.dtype.underlying_float, n, "A", aty.readonly)
    if attr == "real" and rules.is_number(aty.dtype):
        return aty
    # after the array's own attributes, which win over same-named fields (as in Numba)
    if isinstance(aty.dtype, T.Record) and attr in aty.dtype.fields:
        ft = aty.dtype.fields[attr][0]
        if isinstance(ft, T.NestedArray):
            raise typer.error(f"field '{attr}' of {aty.dtype} is a nested array: read it "
                              f"from one record ({ast.unparse(node.value)}[i].{attr}), not as "
                              "an attribute of the whole array", node)
        if isinstance(ft, T.CharSeq):
            raise typer.error(f"field '{attr}' of {aty.dtype} is a string field: a view of "
                              "string elements is not supported in kernels", node)
        need = np.dtype(ft.dtype).alignment
        off, size = aty.dtype.fields[attr][1], aty.dtype.size
        if aty.dtype.field_alignment(attr) < need:
            # a packed record (NumPy's default) puts the field at offsets its elements'
            # loads may not assume: the GPU faults with CUDA_ERROR_MISALIGNED_ADDRESS
            raise typer.error(
                f"field '{attr}' ({ft}) of the packed record {aty.dtype} is not aligned to "
                f"{need} bytes in every element (offset {off}, itemsize {size}), so it cannot "
                f"be viewed as an array: read it from one record "
                f"({ast.unparse(node.value)}[i].{attr}), or make the dtype with align=True",
                node)
        return T.Array(ft, n, "A", aty.readonly)
    fields = (f", the record fields {', '.join(aty.dtype.fields)}"
              if isinstance(aty.dtype, T.Record) else "")
    raise typer.error(f"arrays have no attribute '{attr}' in kernels (available: shape, size, "
                      f"ndim, strides, itemsize, nbytes, T, ctypes.data{fields}, reshape, "
                      "view, copy, the reductions "
                      f"{', '.join(REDUCTION_METHODS)}, and real/imag of complex arrays)", node)


def nested_store_ok(field_t, vt):
    """True when an array of type ``vt`` may be stored into a nested-array field viewed as
    ``field_t`` (numba-cuda's ``rec['array1'] = arr``): same number of dimensions, numbers
    (not complex into real); copied element by element, shapes not checked (as slices)."""
    return (isinstance(field_t, T.Array) and isinstance(vt, T.Array)
            and vt.ndim == field_t.ndim and rules.is_number(vt.dtype)
            and rules.is_number(field_t.dtype)
            and not (rules.is_complex(vt.dtype) and not rules.is_complex(field_t.dtype)))
