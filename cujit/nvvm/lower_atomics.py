"""Lowering of ``cujit.atomic.*`` (numba.cuda semantics: each returns the old value).

Integer add/sub/and/or/xor/max/min/exch are one ``atomicrmw`` (relaxed ordering, as CUDA's
``atomicAdd``); float add is ``llvm.nvvm.atomic.load.add.f32/f64`` (NVVM's LLVM-7 dialect has
no ``atomicrmw fadd``); float max/min, 64-bit inc/dec and float exchange go through a
``cmpxchg`` loop on the value's bits; 32-bit inc/dec use ``llvm.nvvm.atomic.load.inc/dec.32``.
"""
from llvmlite import ir

from .. import types as T
from . import lower_arrays as LA
from ..frontend import rules
from .lower_ops import _float_suffix, libdevice
from .ltypes import I32, cast, ltype

__all__ = ["lower_atomic"]


def _pointer(lw, node, aty, op):
    b = lw.b
    arr = lw.expr(node.args[0])
    if op == "cas0":
        idxs = [LA._wrap(lw, ir.Constant(ir.IntType(64), 0), T.int64, LA.dim(lw, arr, 0))]
        return LA._elem_ptr(lw, arr, aty, idxs)
    inode = node.args[1]
    it = lw.ty(inode)
    iv = lw.expr(inode)
    if isinstance(it, (T.UniTuple, T.Tuple)):
        raw = [(b.extract_value(iv, k), et) for k, et in enumerate(it.types)]
    else:
        raw = [(iv, it)]
    idxs = [LA._wrap(lw, v, t, LA.dim(lw, arr, k)) for k, (v, t) in enumerate(raw)]
    return LA._elem_ptr(lw, arr, aty, idxs)


def lower_atomic(lw, node, op):
    b = lw.b
    aty = lw.ty(node.args[0])
    dt = aty.dtype
    ptr = _pointer(lw, node, aty, op)
    first = 1 if op == "cas0" else 2
    vals = [cast(b, lw.expr(a), lw.ty(a), dt) for a in node.args[first:]]
    if op in ("cas", "cas0"):
        res = b.cmpxchg(ptr, vals[0], vals[1], "monotonic", "monotonic")
        return b.extract_value(res, 0)
    v = vals[0]
    if rules.is_int(dt):
        if op in ("inc", "dec"):
            if dt.bitwidth == 32:
                fn = lw.m.declare(f"llvm.nvvm.atomic.load.{op}.32.p0i32",
                                  ir.FunctionType(I32, [I32.as_pointer(), I32]))
                return b.call(fn, [ptr, v])
            return _cas_loop(lw, ptr, dt, lambda old: _incdec(b, op, old, v))
        rmw = {"add": "add", "sub": "sub", "and": "and", "or": "or", "xor": "xor",
               "exch": "xchg", "max": "max" if dt.signed else "umax",
               "nanmax": "max" if dt.signed else "umax",
               "min": "min" if dt.signed else "umin",
               "nanmin": "min" if dt.signed else "umin"}[op]
        return b.atomic_rmw(rmw, ptr, v, "monotonic")
    # floats
    if op in ("add", "sub"):
        if op == "sub":
            v = b.fsub(ir.Constant(v.type, -0.0), v)
        w = dt.bitwidth
        fn = lw.m.declare(f"llvm.nvvm.atomic.load.add.f{w}.p0f{w}",
                          ir.FunctionType(ltype(dt), [ltype(dt).as_pointer(), ltype(dt)]))
        return b.call(fn, [ptr, v])
    if op == "exch":
        return _cas_loop(lw, ptr, dt, lambda old: v)
    if op in ("nanmax", "nanmin"):
        name = "__nv_fmax" if op == "nanmax" else "__nv_fmin"
        fn = libdevice(lw, name + _float_suffix(dt), [v.type, v.type], v.type)
        return _cas_loop(lw, ptr, dt, lambda old: b.call(fn, [old, v]))
    # max/min as numba-cuda 0.30.4's CAS helpers (___numba_atomic_double_max: an early
    # return when either side is NaN): v is stored only when v > old (max) / v < old (min)
    # compares ordered, so a NaN on either side keeps the old value
    cmp = ">" if op == "max" else "<"
    return _cas_loop(lw, ptr, dt,
                     lambda old: b.select(b.fcmp_ordered(cmp, v, old), v, old))


def _incdec(b, op, old, v):
    zero = ir.Constant(old.type, 0)
    one = ir.Constant(old.type, 1)
    if op == "inc":
        return b.select(b.icmp_unsigned(">=", old, v), zero, b.add(old, one))
    wrap = b.or_(b.icmp_unsigned("==", old, zero), b.icmp_unsigned(">", old, v))
    return b.select(wrap, v, b.sub(old, one))


def _cas_loop(lw, ptr, dt, new_of):
    """Atomically replace ``*ptr`` by ``new_of(old)``; returns the old value."""
    b = lw.b
    ity = ir.IntType(dt.bitwidth)
    iptr = b.bitcast(ptr, ity.as_pointer())
    is_float = rules.is_float(dt)
    start = b.block
    init = b.load(iptr)
    loop = lw.func.append_basic_block("atomic.cas")
    done = lw.func.append_basic_block("atomic.done")
    b.branch(loop)
    b.position_at_end(loop)
    old_i = b.phi(ity)
    old_i.add_incoming(init, start)
    old = b.bitcast(old_i, ltype(dt)) if is_float else old_i
    new = new_of(old)
    new_i = b.bitcast(new, ity) if is_float else new
    res = b.cmpxchg(iptr, old_i, new_i, "monotonic", "monotonic")
    seen = b.extract_value(res, 0)
    ok = b.extract_value(res, 1)
    old_i.add_incoming(seen, b.block)
    b.cbranch(ok, done, loop)
    b.position_at_end(done)
    return old
