"""Lowering of arrays: element addressing, views (slicing, integer sub-indexing, ``.T``,
``reshape``), attributes, records and the memory spaces behind ``shared.array`` /
``local.array`` / ``const.array_like``.

Element addresses: C-layout arrays index with their shape (``((i0*n1 + i1)*n2 + i2)``
elements), F-layout mirrored, any-layout ('A') with the byte strides — as Numba's
``get_item_pointer2``; all index arithmetic is i64.  Negative integer indices wrap once
(Python semantics); there is no bounds check.  Slices follow Python's clamping rules.
"""
import numpy as np
from llvmlite import ir

from .. import types as T
from ..frontend import rules
from .lower_exceptions import check_tuple_index
from .ltypes import I8, I8P, I32, I64, alignment_of, cast, ltype, mtype
from ..frontend.nodeinfo import IntIndex, SliceStore, TupleIndex, TupleItem, TupleSlice

__all__ = ["make_array", "dim", "array_attr", "ctypes_data", "load_subscript", "store_subscript",
           "subscript_pointer", "load_elem", "store_elem", "load_field", "store_field",
           "const_global_array", "iter_item", "static_array", "dynamic_shared_array",
           "reshape"]

_ZERO32 = ir.Constant(I32, 0)


def make_array(lw, data, shape, strides, aty):
    """The struct value of an array of type ``aty``."""
    b = lw.b
    out = ir.Constant(ltype(aty), ir.Undefined)
    out = b.insert_value(out, data, 0)
    for k, (n, s) in enumerate(zip(shape, strides)):
        out = b.insert_value(out, n, [1, k])
        out = b.insert_value(out, s, [2, k])
    return out


def dim(lw, arr, k):
    return lw.b.extract_value(arr, [1, k])


def stride(lw, arr, k):
    return lw.b.extract_value(arr, [2, k])


def _c_strides(shape, itemsize):
    out, acc = [], itemsize
    for n in reversed(shape):
        out.append(acc)
        acc *= n
    return list(reversed(out))


def array_attr(lw, arr, aty, attr, rt):
    b = lw.b
    n = aty.ndim
    if attr in ("shape", "strides"):
        out = ir.Constant(ltype(rt), ir.Undefined)
        for k in range(n):
            out = b.insert_value(out, b.extract_value(arr, [1 if attr == "shape" else 2, k]), k)
        return out
    if attr == "ndim":
        return ir.Constant(I64, n)
    if attr == "itemsize":
        return ir.Constant(I64, aty.dtype.dtype.itemsize)
    if attr in ("size", "nbytes"):
        size = ir.Constant(I64, 1)
        for k in range(n):
            size = b.mul(size, dim(lw, arr, k))
        if attr == "nbytes":
            size = b.mul(size, ir.Constant(I64, aty.dtype.dtype.itemsize))
        return size
    if attr == "T":
        if n < 2:
            return arr
        shape = [dim(lw, arr, k) for k in reversed(range(n))]
        strides = [stride(lw, arr, k) for k in reversed(range(n))]
        return make_array(lw, b.extract_value(arr, 0), shape, strides, rt)
    if isinstance(aty.dtype, T.Record) and attr in aty.dtype.fields:
        # a record array's field as an array: the same shape and byte strides, the data
        # pointer moved to the field's offset
        off = aty.dtype.fields[attr][1]
        raw = b.gep(b.bitcast(b.extract_value(arr, 0), I8P), [ir.Constant(I64, off)])
        fp = b.bitcast(raw, mtype(rt.dtype).as_pointer())
        return make_array(lw, fp, [dim(lw, arr, k) for k in range(n)],
                          [stride(lw, arr, k) for k in range(n)], rt)
    if attr in ("real", "imag"):
        if not rules.is_complex(aty.dtype):
            return arr
        fp = b.bitcast(b.extract_value(arr, 0), ltype(rt.dtype).as_pointer())
        if attr == "imag":
            fp = b.gep(fp, [ir.Constant(I32, 1)])
        return make_array(lw, fp, [dim(lw, arr, k) for k in range(n)],
                          [stride(lw, arr, k) for k in range(n)], rt)
    raise lw.error(f"array attribute '{attr}' cannot be lowered", None)


def ctypes_data(lw, arr):
    """``arr.ctypes.data``: the address of the array's first element as an i64."""
    return lw.b.ptrtoint(lw.b.extract_value(arr, 0), I64)


def _wrap(lw, idx, it, n):
    """Index ``idx`` (type ``it``) as i64, wrapped once when negative."""
    b = lw.b
    v = cast(b, idx, it, T.int64 if not (rules.is_int(it) and not it.signed) else T.uint64)
    if isinstance(v, ir.Constant) and not isinstance(v.constant, str) \
            and isinstance(v.constant, int):
        if v.constant >= 0:
            return v
        return b.add(v, n)
    if rules.is_int(it) and not it.signed:
        return v
    neg = b.icmp_signed("<", v, ir.Constant(I64, 0))
    return b.select(neg, b.add(v, n), v)


def _index_values(lw, parts):
    """Evaluate index parts (``nodeinfo`` records): list of ``('int', value, type)`` /
    ``('slice', ast.Slice)``."""
    out = []
    tuple_cache = {}
    for p in parts:
        if isinstance(p, IntIndex):
            it = lw.ty(p.node)
            if isinstance(it, T.Array):     # a 0-d integer array: the integer it holds
                out.append(("int", lw.b.load(_elem_ptr(lw, lw.expr(p.node), it, [])),
                            it.dtype))
            else:
                out.append(("int", lw.expr(p.node), it))
        elif isinstance(p, TupleIndex):
            node = p.node
            if id(node) not in tuple_cache:
                tuple_cache[id(node)] = lw.expr(node)
            tt = lw.ty(node)
            out.append(("int", lw.b.extract_value(tuple_cache[id(node)], p.position),
                        tt.dtype))
        else:
            out.append(("slice", p.node))
    return out


def _elem_ptr(lw, arr, aty, idxs):
    """Generic pointer to the element at i64 indices ``idxs`` (one per dimension)."""
    b = lw.b
    data = b.extract_value(arr, 0)
    n = aty.ndim
    if n == 0:
        return data
    if aty.layout in ("C", "F"):
        order = range(n) if aty.layout == "C" else reversed(range(n))
        lin = None
        for k in order:
            lin = idxs[k] if lin is None else b.add(b.mul(lin, dim(lw, arr, k)), idxs[k])
        return b.gep(data, [lin], inbounds=True)
    off = None
    for k in range(n):
        term = b.mul(idxs[k], stride(lw, arr, k))
        off = term if off is None else b.add(off, term)
    raw = b.gep(b.bitcast(data, I8P), [off], inbounds=True)
    return b.bitcast(raw, data.type)


def _slice_bounds(lw, sl, n):
    """(start, length, step) i64 values of slice ``sl`` over a dimension of length ``n``."""
    b = lw.b
    zero, one = ir.Constant(I64, 0), ir.Constant(I64, 1)

    def val(x):
        if x is None or isinstance(lw.ty(x), T.NoneType):
            return None
        return cast(b, lw.expr(x), lw.ty(x), T.int64)

    start, stop, step = val(sl.lower), val(sl.upper), val(sl.step)
    step_c = None
    if step is None:
        step, step_c = one, 1
    elif isinstance(step, ir.Constant):
        step_c = step.constant
        if step_c == 0:
            raise lw.error("slice step cannot be zero", sl)

    def clamp(x, lo, hi):
        x = b.select(b.icmp_signed("<", x, zero), b.add(x, n), x)
        x = b.select(b.icmp_signed("<", x, lo), lo, x)
        return b.select(b.icmp_signed(">", x, hi), hi, x)

    if step_c is not None and step_c > 0:
        s = zero if start is None else clamp(start, zero, n)
        e = n if stop is None else clamp(stop, zero, n)
        span = b.sub(e, s)
        length = b.sdiv(b.add(span, ir.Constant(I64, step_c - 1)), step)
        length = b.select(b.icmp_signed(">", span, zero), length, zero)
        return s, length, step
    m1 = ir.Constant(I64, -1)
    nm1 = b.sub(n, one)
    if step_c is not None:   # negative constant step
        s = nm1 if start is None else clamp(start, m1, nm1)
        e = m1 if stop is None else clamp(stop, m1, nm1)
        span = b.sub(s, e)
        length = b.sdiv(b.add(span, ir.Constant(I64, -step_c - 1)), ir.Constant(I64, -step_c))
        length = b.select(b.icmp_signed(">", span, zero), length, zero)
        return s, length, step
    pos = b.icmp_signed(">", step, zero)
    s_pos = zero if start is None else clamp(start, zero, n)
    e_pos = n if stop is None else clamp(stop, zero, n)
    s_neg = nm1 if start is None else clamp(start, m1, nm1)
    e_neg = m1 if stop is None else clamp(stop, m1, nm1)
    s = b.select(pos, s_pos, s_neg)
    span = b.select(pos, b.sub(e_pos, s_pos), b.sub(s_neg, e_neg))
    astep = b.select(pos, step, b.sub(zero, step))
    length = b.sdiv(b.add(span, b.sub(astep, one)), astep)
    length = b.select(b.icmp_signed(">", span, zero), length, zero)
    return s, length, step


def _view(lw, arr, aty, parts, rt):
    """The view ``arr[parts]`` of type ``rt`` (some indices are slices)."""
    b = lw.b
    vals = _index_values(lw, parts)
    data = b.bitcast(b.extract_value(arr, 0), I8P)
    off = ir.Constant(I64, 0)
    shape, strides = [], []
    for k in range(aty.ndim):
        n, s = dim(lw, arr, k), stride(lw, arr, k)
        p = vals[k] if k < len(vals) else None
        if p is None:
            shape.append(n)
            strides.append(s)
        elif p[0] == "int":
            off = b.add(off, b.mul(_wrap(lw, p[1], p[2], n), s))
        else:
            start, length, step = _slice_bounds(lw, p[1], n)
            off = b.add(off, b.mul(start, s))
            shape.append(length)
            strides.append(b.mul(s, step))
    ptr = b.bitcast(b.gep(data, [off], inbounds=True), ltype(rt).elements[0])
    return make_array(lw, ptr, shape, strides, rt)


def pointer_element(lw, ptr, pty, idx, it):
    """The address of ``ptr[idx]`` (``ptr`` of type ``CPointer``, ``idx`` of integer type
    ``it``): C's ``ptr + idx``, no wrap of negative indices and no bounds, as numba.cuda."""
    return lw.b.gep(ptr, [cast(lw.b, idx, it, T.int64 if it.signed else T.uint64)])


def lower_pointer_array(lw, node, c):
    """``carray(ptr, shape[, dtype])`` / ``farray``: an array struct of the pointer as data,
    the shape's values, and the contiguous strides of ``c.data.order`` (bytes)."""
    b = lw.b
    bound = dict(zip(("ptr", "shape", "dtype"), node.args))
    bound.update((kw.arg, kw.value) for kw in node.keywords)
    rt = lw.ty(node)
    ptr = lw.expr(bound["ptr"])
    st = lw.ty(bound["shape"])
    sv = lw.expr(bound["shape"])
    if isinstance(st, (T.UniTuple, T.Tuple)):
        dims = [cast(b, b.extract_value(sv, k), t, T.int64) for k, t in enumerate(st.types)]
    else:
        dims = [cast(b, sv, st, T.int64)]
    step = ir.Constant(I64, c.data.dtype.dtype.itemsize)
    strides = [None] * len(dims)
    order = range(len(dims) - 1, -1, -1) if c.data.order == "C" else range(len(dims))
    for k in order:
        strides[k] = step
        step = b.mul(step, dims[k])
    data = b.bitcast(ptr, ltype(rt).elements[0])
    return make_array(lw, data, dims, strides, rt)


def subscript_pointer(lw, node):
    """(pointer, element type) of ``arr[i, j, …]`` (all integer indices) or ``ptr[i]``."""
    aty = lw.ty(node.value)
    if isinstance(aty, T.CPointer):
        return pointer_element(lw, lw.expr(node.value), aty, lw.expr(node.slice),
                               lw.ty(node.slice)), aty.dtype
    arr = lw.expr(node.value)
    parts = lw.tf.info[node].parts
    vals = _index_values(lw, parts)
    idxs = [_wrap(lw, v, t, dim(lw, arr, k)) for k, (_, v, t) in enumerate(vals)]
    return _elem_ptr(lw, arr, aty, idxs), aty.dtype


def load_elem(lw, ptr, t, align=None):
    if isinstance(t, T.Record):
        return lw.b.bitcast(ptr, I8P)
    v = lw.b.load(ptr, align=align or alignment_of(t))
    if isinstance(t, T.Boolean):
        return lw.b.trunc(v, ir.IntType(1))
    return v


def store_elem(lw, ptr, v, t, align=None):
    if isinstance(t, T.Boolean):
        v = lw.b.zext(v, I8)
    lw.b.store(v, ptr, align=align or alignment_of(t))


def load_subscript(lw, node):
    bt = lw.ty(node.value)
    rt = lw.ty(node)
    info = lw.tf.info.get(node)
    if isinstance(bt, T.Array):
        if isinstance(rt, T.Array):
            return _view(lw, lw.expr(node.value), bt, info.parts, rt)
        ptr, et = subscript_pointer(lw, node)
        return load_elem(lw, ptr, et)
    if isinstance(bt, T.CPointer):
        ptr, et = subscript_pointer(lw, node)
        return load_elem(lw, ptr, et)
    if isinstance(bt, (T.UniTuple, T.Tuple)):
        tup = lw.expr(node.value)
        if isinstance(info, TupleItem):
            return lw.b.extract_value(tup, info.index)
        if isinstance(info, TupleSlice):
            out = ir.Constant(ltype(rt), ir.Undefined)
            for j, i in enumerate(info.indices):
                out = lw.b.insert_value(out, lw.b.extract_value(tup, i), j)
            return out
        slot = lw.alloca(tup.type)
        lw.b.store(tup, slot)
        idx = _wrap(lw, lw.expr(node.slice), lw.ty(node.slice), ir.Constant(I64, bt.count))
        check_tuple_index(lw, idx, bt.count, node)
        return lw.b.load(lw.b.gep(slot, [_ZERO32, idx]))
    if isinstance(bt, T.Record):
        return load_field(lw, lw.expr(node.value), bt, info.name)
    raise lw.error(f"cannot index a value of type {bt}", node)


def store_subscript(lw, target, v, vt):
    bt = lw.ty(target.value)
    if isinstance(bt, T.Record):
        store_field(lw, target, v, vt, field=lw.tf.info[target].name)
        return
    info = lw.tf.info[target]
    if isinstance(info, SliceStore):
        rt = lw.ty(target)
        view = _view(lw, lw.expr(target.value), bt, info.parts, rt)
        if not info.copy:
            value = cast(lw.b, v, vt, rt.dtype)
            _fill(lw, view, rt, lambda idxs: value)
        else:
            src_t = vt.copy(layout="A")
            _fill(lw, view, rt, lambda idxs: cast(
                lw.b, load_elem(lw, _elem_ptr(lw, v, src_t, idxs), vt.dtype), vt.dtype,
                rt.dtype))
        return
    ptr, et = subscript_pointer(lw, target)
    if isinstance(et, T.Record):
        from .lower_records import copy_record
        copy_record(lw, ptr, v, et)
        return
    store_elem(lw, ptr, cast(lw.b, v, vt, et), et)


def _fill(lw, view, vty, value_at):
    """Store ``value_at(indices)`` in every element of ``view`` (a loop per dimension).
    Overlapping source and destination are not detected (copy in order)."""
    b = lw.b
    idxs = []

    def level(k):
        if k == vty.ndim:
            store_elem(lw, _elem_ptr(lw, view, vty.copy(layout="A"), idxs), value_at(idxs),
                       vty.dtype)
            return
        n = dim(lw, view, k)
        i_slot = lw.alloca(I64)
        b.store(ir.Constant(I64, 0), i_slot)
        head = lw.func.append_basic_block("fill.cond")
        body = lw.func.append_basic_block("fill.body")
        end = lw.func.append_basic_block("fill.end")
        b.branch(head)
        b.position_at_end(head)
        i = b.load(i_slot)
        b.cbranch(b.icmp_signed("<", i, n), body, end)
        b.position_at_end(body)
        idxs.append(i)
        level(k + 1)
        idxs.pop()
        b.store(b.add(i, ir.Constant(I64, 1)), i_slot)
        b.branch(head)
        b.position_at_end(end)
    level(0)


def _field_align(rty, name):
    """Alignment an access of field ``name`` of record type ``rty`` may assume.  NumPy's
    packed (not ``align=True``) records put fields at any offset and records at multiples of
    an odd itemsize, so a float64 field can sit at offset 20: claiming its natural 8-byte
    alignment makes the GPU fault with CUDA_ERROR_MISALIGNED_ADDRESS
    (``types.Record.field_alignment`` is what every element guarantees)."""
    return max(1, min(alignment_of(rty.fields[name][0]), rty.field_alignment(name)))


def _field_ptr(lw, rec, rty, name):
    ft, off = rty.fields[name]
    raw = lw.b.gep(rec, [ir.Constant(I64, off)], inbounds=True)
    return raw, ft


def load_field(lw, rec, rty, name):
    raw, ft = _field_ptr(lw, rec, rty, name)
    if isinstance(ft, T.Record):
        return raw
    if isinstance(ft, T.NestedArray):
        aty = T.Array(ft.dtype, ft.ndim, "C")
        ptr = lw.b.bitcast(raw, ltype(aty).elements[0])
        item = ft.dtype.dtype.itemsize
        return make_array(lw, ptr, [ir.Constant(I64, n) for n in ft.shape],
                          [ir.Constant(I64, s) for s in _c_strides(ft.shape, item)], aty)
    return load_elem(lw, lw.b.bitcast(raw, mtype(ft).as_pointer()), ft,
                     _field_align(rty, name))


def store_field(lw, target, v, vt, field=None):
    rty = lw.ty(target.value)
    name = field if field is not None else target.attr
    rec = lw.expr(target.value)
    raw, ft = _field_ptr(lw, rec, rty, name)
    if isinstance(ft, T.NestedArray):       # an array stored into a nested-array field
        view_t = T.Array(ft.dtype, ft.ndim, "C")
        view = load_field(lw, rec, rty, name)
        src_t = vt.copy(layout="A")
        _fill(lw, view, view_t, lambda idxs: cast(
            lw.b, load_elem(lw, _elem_ptr(lw, v, src_t, idxs), vt.dtype), vt.dtype, ft.dtype))
        return
    store_elem(lw, lw.b.bitcast(raw, mtype(ft).as_pointer()), cast(lw.b, v, vt, ft), ft,
               _field_align(rty, name))


def iter_item(lw, arr, aty, i):
    """(value, type) of the i-th item when iterating over an array."""
    if aty.ndim == 1:
        ptr = _elem_ptr(lw, arr, aty, [i])
        return load_elem(lw, ptr, aty.dtype), aty.dtype
    rt = aty.copy(ndim=aty.ndim - 1, layout="A")
    data = lw.b.bitcast(lw.b.extract_value(arr, 0), I8P)
    ptr = lw.b.gep(data, [lw.b.mul(i, stride(lw, arr, 0))], inbounds=True)
    ptr = lw.b.bitcast(ptr, ltype(rt).elements[0])
    shape = [dim(lw, arr, k) for k in range(1, aty.ndim)]
    strides = [stride(lw, arr, k) for k in range(1, aty.ndim)]
    return make_array(lw, ptr, shape, strides, rt), rt


def static_array(lw, gptr, shape, dtype, aty):
    """An array of constant ``shape`` over ``gptr`` (a pointer in any address space)."""
    elem_p = mtype(dtype).as_pointer()
    space = gptr.type.addrspace
    p = lw.b.bitcast(gptr, mtype(dtype).as_pointer(space))
    if space:
        p = lw.b.addrspacecast(p, elem_p)
    item = dtype.dtype.itemsize
    return make_array(lw, p, [ir.Constant(I64, n) for n in shape],
                      [ir.Constant(I64, s) for s in _c_strides(shape, item)], aty)


def dynamic_shared_array(lw, dtype, aty):
    """The dynamic shared memory seen as a 1-d array of ``dtype``; its length comes from
    ``%dynamic_smem_size`` (bytes given at launch) // itemsize."""
    b = lw.b
    g = lw.m.dynamic_shared()
    p = b.addrspacecast(b.bitcast(g, mtype(dtype).as_pointer(3)), mtype(dtype).as_pointer())
    size = b.call(lw.m.inline_asm("mov.u32 $0, %dynamic_smem_size;", "=r", I32,
                                     side_effect=False), [])
    item = dtype.dtype.itemsize
    n = b.udiv(b.zext(size, I64), ir.Constant(I64, item))
    return make_array(lw, p, [n], [ir.Constant(I64, item)], aty)


def const_global_array(lw, value, aty):
    """A NumPy array placed in constant memory (addrspace 4), as an array value."""
    # a 0-d array is contiguous as it is (np.ascontiguousarray would make it 1-d); the
    # same object each time, so that const_array places it once
    zero_d = isinstance(value, np.ndarray) and value.ndim == 0
    arr = value if zero_d else np.ascontiguousarray(value)
    g = lw.m.const_array(arr, alignment_of(aty.dtype))
    return static_array(lw, g, arr.shape, aty.dtype, aty)


def reshape(lw, arr, aty, dims, rt):
    """C-order view of ``arr`` with shape ``dims`` (i64 values); one ``-1`` dimension takes
    what is left of the size, as NumPy's ``reshape``."""
    b = lw.b
    if any(not (isinstance(d, ir.Constant) and d.constant >= 0) for d in dims):
        size = ir.Constant(I64, 1)
        for k in range(aty.ndim):
            size = b.mul(size, dim(lw, arr, k))
        prod = ir.Constant(I64, 1)
        for d in dims:
            prod = b.mul(prod, d)
        # with exactly one -1 the product is -(known dims): size // -prod fills it in
        missing = b.sdiv(size, b.sub(ir.Constant(I64, 0), prod))
        zero = ir.Constant(I64, 0)
        dims = [b.select(b.icmp_signed("<", d, zero), missing, d) for d in dims]
    item = ir.Constant(I64, aty.dtype.dtype.itemsize)
    strides, acc = [], item
    for n in reversed(dims):
        strides.append(acc)
        acc = b.mul(acc, n)
    return make_array(lw, b.extract_value(arr, 0), dims, list(reversed(strides)), rt)

