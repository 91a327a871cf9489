"""Lowering of recognised calls: builtins, ``math`` (libdevice ``__nv_*``), casts, thread
indexing (``llvm.nvvm.read.ptx.sreg.*``), shared/local/const arrays, barriers
(``llvm.nvvm.barrier0*``), fences (``llvm.nvvm.membar.*``), atomics (``atomicrmw`` /
``cmpxchg``; float add through ``llvm.nvvm.atomic.load.add.f32/f64`` since NVVM's LLVM-7
dialect has no ``atomicrmw fadd``), warp intrinsics (``llvm.nvvm.shfl.sync.*``,
``llvm.nvvm.vote.*.sync``), ``print`` (``vprintf``) and device-function calls.
"""
import ast
import math

from llvmlite import ir

from .. import types as T
from . import lower_cooperative as cooperative, lower_intrinsics as intrinsics_extra
from . import lower_arrays as LA
from . import lower_atomics, lower_bf16, lower_complex, lower_extending, lower_fp16
from . import lower_fp8, lower_libdevice
from . import lower_scalars
from .lower_cache_hints import lower_cache_load, lower_cache_store
from .lower_vector import lower_vector_make
from . import lower_pipeline, lower_wgmma, lower_wmma
from .lower_exceptions import emit_raise
from .lower_extern import lower_extern_call, lower_from_buffer
from ..frontend import rules
from ..frontend.callkinds import Call, CallKind
from .lower_device import lower_closure_call, lower_device_call
from .lower_ops import _f16_wrap, _float_suffix, libdevice
from .lower_sreg import sreg
from .ltypes import I1, I32, I64, cast, half_asm, ltype, mtype, truth

__all__ = ["call", "sreg"]

def _nuw(inst):
    inst.flags.extend(("nuw", "nsw"))
    return inst


def _args(lw, node):
    return [lw.expr(a) for a in node.args], [lw.ty(a) for a in node.args]


def call(lw, node):
    """The value of call ``node``, lowered by the handler of the kind the typer recorded
    (:class:`~.callkinds.Call`); CompileError for a call the typer did not record."""
    c = lw.tf.info.get(node)
    if not isinstance(c, Call):
        raise lw.error(f"call of '{ast.unparse(node.func)}' cannot be lowered", node)
    return _HANDLERS[c.kind](lw, node, c)


# ---- memory --------------------------------------------------------------------------------
def _shared(lw, node, c):
    shape, dtype, dynamic = c.data.shape, c.data.dtype, c.data.dynamic
    aty = lw.ty(node)
    if dynamic:
        if lw.tf.shared_align:
            # as static tiles: wmma needs 32-byte tiles, wgmma's swizzles 1024-byte atoms
            ds = lw.m.dynamic_shared()
            ds.align = max(ds.align or 0, lw.tf.shared_align)
        return LA.dynamic_shared_array(lw, dtype, aty)
    g = lw.m.static_shared(shape, dtype)
    if lw.tf.shared_align:
        g.align = max(g.align, lw.tf.shared_align)
    if c.data.alignment is not None:
        g.align = max(g.align, c.data.alignment)
    return LA.static_array(lw, g, shape, dtype, aty)


def _local(lw, node, c):
    shape, dtype = c.data.shape, c.data.dtype
    n = 1
    for d in shape:
        n *= d
    from .ltypes import alignment_of, mtype
    slot = lw.alloca(ir.ArrayType(mtype(dtype), max(n, 1 if not shape else n)))
    slot.align = max(alignment_of(dtype), 4, c.data.alignment or 0)
    return LA.static_array(lw, slot, shape, dtype, lw.ty(node))


def _array_copy(lw, node, c):
    # a captured array's C-order bytes copied from constant memory into a local array
    value = c.data.value
    rt = lw.ty(node)
    src = LA.const_global_array(lw, value, rt)
    from .ltypes import alignment_of
    n = max(int(value.size), 1)
    slot = lw.alloca(ir.ArrayType(mtype(rt.dtype), n))
    slot.align = max(alignment_of(rt.dtype), 4)
    nbytes = int(value.nbytes)
    if nbytes:
        i8p = ir.IntType(8).as_pointer()
        memcpy = lw.m.declare("llvm.memcpy.p0i8.p0i8.i64", ir.FunctionType(
            ir.VoidType(), [i8p, i8p, I64, I1]))
        lw.b.call(memcpy, [lw.b.bitcast(slot, i8p),
                           lw.b.bitcast(lw.b.extract_value(src, 0), i8p),
                           ir.Constant(I64, nbytes), ir.Constant(I1, 0)])
    return LA.static_array(lw, slot, value.shape, rt.dtype, rt)


def _const(lw, node, c):
    return LA.const_global_array(lw, c.data.value, lw.ty(node))


# ---- indexing ------------------------------------------------------------------------------
def _grid(lw, node, c):
    ndim = c.data.ndim
    b = lw.b
    out = []
    for axis in "xyz"[:ndim]:
        tid = b.zext(sreg(lw, "threadIdx", axis), I64)
        ctaid = b.zext(sreg(lw, "blockIdx", axis), I64)
        ntid = b.zext(sreg(lw, "blockDim", axis), I64)
        out.append(_nuw(b.add(_nuw(b.mul(ctaid, ntid)), tid)))
    return out[0] if ndim == 1 else _tuple(lw, out, lw.ty(node))


def _gridsize(lw, node, c):
    ndim = c.data.ndim
    b = lw.b
    out = []
    for axis in "xyz"[:ndim]:
        out.append(_nuw(b.mul(b.zext(sreg(lw, "blockDim", axis), I64),
                              b.zext(sreg(lw, "gridDim", axis), I64))))
    return out[0] if ndim == 1 else _tuple(lw, out, lw.ty(node))


def _tuple(lw, vals, t):
    out = ir.Constant(ltype(t), ir.Undefined)
    for i, v in enumerate(vals):
        out = lw.b.insert_value(out, v, i)
    return out


# ---- synchronisation -----------------------------------------------------------------------
def _intrinsic(name, ret=ir.VoidType(), args=()):
    def h(lw, node, c):
        fn = lw.m.declare(name, ir.FunctionType(ret, list(args)))
        vals = []
        for a, want in zip(node.args, args):
            v, t = lw.expr(a), lw.ty(a)
            vals.append(cast(lw.b, v, t, T.int32) if want == I32 else v)
        return lw.b.call(fn, vals)
    return h


def _sync_pred(name):
    def h(lw, node, c):
        fn = lw.m.declare(name, ir.FunctionType(I32, [I32]))
        p = truth(lw.b, lw.expr(node.args[0]), lw.ty(node.args[0]))
        return lw.b.call(fn, [lw.b.zext(p, I32)])
    return h


def _syncwarp(lw, node, c):
    fn = lw.m.declare("llvm.nvvm.bar.warp.sync", ir.FunctionType(ir.VoidType(), [I32]))
    if node.args or node.keywords:
        a = node.args[0] if node.args else node.keywords[0].value
        mask = cast(lw.b, lw.expr(a), lw.ty(a), T.uint32)
    else:
        mask = ir.Constant(I32, 0xFFFFFFFF)
    return lw.b.call(fn, [mask])


# ---- warp ----------------------------------------------------------------------------------
_SHFL = {CallKind.SHFL_SYNC: ("idx", 0x1F), CallKind.SHFL_UP_SYNC: ("up", 0),
         CallKind.SHFL_DOWN_SYNC: ("down", 0x1F), CallKind.SHFL_XOR_SYNC: ("bfly", 0x1F)}


def _shfl(lw, node, c):
    b = lw.b
    vt = c.data.type
    mode, clamp = _SHFL[c.kind]
    (m, v, lane), (mt, vt0, lt) = _args(lw, node)
    mask = cast(b, m, mt, T.uint32)
    lane = cast(b, lane, lt, T.uint32)
    v = cast(b, v, vt0, vt)
    clamp = ir.Constant(I32, clamp)
    if vt.bitwidth == 32:
        kind = "f32" if rules.is_float(vt) else "i32"
        fn = lw.m.declare(f"llvm.nvvm.shfl.sync.{mode}.{kind}",
                          ir.FunctionType(ltype(vt), [I32, ltype(vt), I32, I32]))
        return b.call(fn, [mask, v, lane, clamp])
    fn = lw.m.declare(f"llvm.nvvm.shfl.sync.{mode}.i32", ir.FunctionType(I32, [I32] * 4))
    bits = b.bitcast(v, I64) if rules.is_float(vt) else v
    lo = b.trunc(bits, I32)
    hi = b.trunc(b.lshr(bits, ir.Constant(I64, 32)), I32)
    lo = b.zext(b.call(fn, [mask, lo, lane, clamp]), I64)
    hi = b.zext(b.call(fn, [mask, hi, lane, clamp]), I64)
    r = b.or_(lo, b.shl(hi, ir.Constant(I64, 32)))
    return b.bitcast(r, ltype(vt)) if rules.is_float(vt) else r


def _vote(name, ret):
    def h(lw, node, c):
        (m, p), (mt, pt) = _args(lw, node)
        fn = lw.m.declare(name, ir.FunctionType(ret, [I32, I1]))
        return lw.b.call(fn, [cast(lw.b, m, mt, T.uint32), truth(lw.b, p, pt)])
    return h


def _asm(text):
    def h(lw, node, c):
        return lw.b.call(lw.m.inline_asm(text, "=r", I32), [])
    return h


def _bitop(lw, node, c):
    key = c.kind
    (v,), (t,) = _args(lw, node)
    ity = v.type
    w = ity.width
    b = lw.b
    if key is CallKind.POPC:
        return b.call(lw.m.declare(f"llvm.ctpop.i{w}", ir.FunctionType(ity, [ity])), [v])
    if key is CallKind.BREV:
        rt = lw.ty(node)
        v = cast(b, v, t, rt)
        ity = v.type
        w = ity.width
        return b.call(lw.m.declare(f"llvm.bitreverse.i{w}", ir.FunctionType(ity, [ity])), [v])
    if key is CallKind.CLZ:
        fn = lw.m.declare(f"llvm.ctlz.i{w}", ir.FunctionType(ity, [ity, I1]))
        return b.call(fn, [v, ir.Constant(I1, 0)])
    # ffs: 1-based position of the lowest set bit
    if w < 32:
        v = cast(b, v, t, T.int32)
        w = 32
    fn = libdevice(lw, "__nv_ffs" if w == 32 else "__nv_ffsll", [ir.IntType(w)], I32)
    return b.call(fn, [v])


# ---- numbers -------------------------------------------------------------------------------
def _cast(lw, node, c):
    (v,), (t,) = _args(lw, node)
    return cast(lw.b, v, t, c.data.target)


def _complex(lw, node, c):
    vals, ts = _args(lw, node)
    rt = lw.ty(node)
    re = cast(lw.b, vals[0], ts[0], rt)
    if len(vals) == 1:
        return re
    im = cast(lw.b, vals[1], ts[1], rt)
    b = lw.b
    r, i = b.extract_value(re, 0), b.extract_value(im, 0)
    # CPython's complex(): a part's imaginary component is folded in only when that
    # argument is complex, so complex(x, -0.0) keeps its -0.0 (0.0 + -0.0 would not)
    if rules.is_complex(ts[1]):
        r = b.fsub(r, b.extract_value(im, 1))
    if rules.is_complex(ts[0]):
        i = b.fadd(i, b.extract_value(re, 1))
    return b.insert_value(b.insert_value(re, r, 0), i, 1)


def _minmax(lw, node, c):
    key = "max" if c.kind is CallKind.MAX else "min"
    rt = lw.ty(node)
    b = lw.b
    if c.data.of_tuple:
        tup, tt = lw.expr(node.args[0]), lw.ty(node.args[0])
        items = [(b.extract_value(tup, i), et) for i, et in enumerate(tt.types)]
    else:
        vals, ts = _args(lw, node)
        items = list(zip(vals, ts))
    if c.data.nan_ignoring:
        x, y = (cast(b, v, t, rt) for v, t in items)
        fn = libdevice(lw, f"__nv_f{key}" + _float_suffix(rt), [x.type] * 2, x.type)
        return b.call(fn, [x, y])
    acc = cast(b, items[0][0], items[0][1], rt)
    for v, t in items[1:]:
        v = cast(b, v, t, rt)
        # Python: max(a, b) is b only when b > a (the first of equals wins)
        if rules.is_float(rt):
            better = b.fcmp_ordered(">" if key == "max" else "<", v, acc)
        elif isinstance(rt, T.Boolean) or not rt.signed:
            better = b.icmp_unsigned(">" if key == "max" else "<", v, acc)
        else:
            better = b.icmp_signed(">" if key == "max" else "<", v, acc)
        acc = b.select(better, v, acc)
    return acc


def _abs(lw, node, c):
    (v,), (t,) = _args(lw, node)
    b = lw.b
    if rules.is_complex(t):
        ft = t.underlying_float
        fn = libdevice(lw, "__nv_hypot" + _float_suffix(ft), [ltype(ft)] * 2, ltype(ft))
        return b.call(fn, [b.extract_value(v, 0), b.extract_value(v, 1)])
    if t is T.float16:
        return half_asm(b, "abs.f16 $0, $1;", v)
    if rules.is_float(t):
        return _f16_wrap(lw, lambda tt, x: b.call(
            libdevice(lw, "__nv_fabs" + _float_suffix(tt), [x.type], x.type), [x]), t, v)
    rt = lw.ty(node)
    v = cast(b, v, t, rt)
    if not rt.signed:
        return v
    neg = b.icmp_signed("<", v, ir.Constant(v.type, 0))
    return b.select(neg, b.sub(ir.Constant(v.type, 0), v), v)


def _round(lw, node, c):
    vals, ts = _args(lw, node)
    b = lw.b
    t = ts[0]
    rt = lw.ty(node)
    if rules.is_int(t) and len(vals) == 1:
        return cast(b, vals[0], t, rt)
    ft = t if rules.is_float(t) and t is not T.float16 else T.float64 if not rules.is_float(
        t) else T.float32
    x = cast(b, vals[0], t, ft)
    rint = libdevice(lw, "__nv_rint" + _float_suffix(ft), [x.type], x.type)
    if len(vals) == 1:
        return cast(b, b.call(rint, [x]), ft, rt)     # round-half-even, as Python
    from .lower_scalars import round_ndigits
    # numba's round_ndigits scales by 10.0 ** ndigits, a float64: it computes in float64
    # for every float (round(np.float32(0.3425), 3) is 0.343, from 342.50000119...)
    x = cast(b, x, ft, T.float64)
    r = round_ndigits(lw, x, cast(b, vals[1], ts[1], T.int64), T.float64)
    return cast(b, r, T.float64, rt)


_LIBDEVICE_NAME = {"gamma": "tgamma", "fabs": "fabs"}


def _math(lw, node, c):
    name = c.data.name
    vals, ts = _args(lw, node)
    rt = lw.ty(node)
    b = lw.b
    if name in ("isnan", "isinf", "isfinite"):
        t = ts[0]
        if not rules.is_float(t):
            return ir.Constant(I1, 1 if name == "isfinite" else 0)
        x = vals[0]
        if name == "isnan":
            return b.fcmp_unordered("uno", x, x)
        ax = _abs_float(lw, x, t)
        inf = ir.Constant(x.type, math.inf)
        return b.fcmp_ordered("==" if name == "isinf" else "!=", ax, inf)
    if name in ("floor", "ceil", "trunc"):
        t = ts[0]
        if rules.is_int(t):
            return cast(b, vals[0], t, rt)
        ft = T.float32 if t is T.float32 else T.float64
        x = cast(b, vals[0], t, ft)
        fn = libdevice(lw, f"__nv_{name}" + _float_suffix(ft), [x.type], x.type)
        return cast(b, b.call(fn, [x]), ft, rt)
    ct = T.float32 if rt in (T.float32, T.float16) else T.float64
    xs = [cast(b, v, t, ct) for v, t in zip(vals, ts)]
    if name in ("degrees", "radians"):
        k = 180.0 / math.pi if name == "degrees" else math.pi / 180.0
        r = b.fmul(xs[0], ir.Constant(xs[0].type, k))
    else:
        ld = _LIBDEVICE_NAME.get(name, name)
        fn = libdevice(lw, f"__nv_{ld}" + _float_suffix(ct), [x.type for x in xs], xs[0].type)
        r = b.call(fn, xs)
    return cast(b, r, ct, rt)


def _np_round(lw, node, c):
    key = c.data.name
    (v,), (t,) = _args(lw, node)
    rt = lw.ty(node)
    ct = T.float32 if rt in (T.float32, T.float16) else T.float64
    x = cast(lw.b, v, t, ct)
    fn = libdevice(lw, f"__nv_{key}" + _float_suffix(ct), [x.type], x.type)
    return cast(lw.b, lw.b.call(fn, [x]), ct, rt)


def _abs_float(lw, x, t):
    ct = T.float32 if t is not T.float64 else T.float64
    xx = cast(lw.b, x, t, ct)
    fn = libdevice(lw, "__nv_fabs" + _float_suffix(ct), [xx.type], xx.type)
    return cast(lw.b, lw.b.call(fn, [xx]), ct, t)


def _fma(lw, node, c):
    vals, ts = _args(lw, node)
    rt = lw.ty(node)
    xs = [cast(lw.b, v, t, rt) for v, t in zip(vals, ts)]
    fn = lw.m.declare(f"llvm.fma.f{rt.bitwidth}", ir.FunctionType(ltype(rt), [ltype(rt)] * 3))
    return lw.b.call(fn, xs)


def _cbrt(lw, node, c):
    (v,), (t,) = _args(lw, node)
    rt = lw.ty(node)
    ct = T.float32 if rt in (T.float32, T.float16) else T.float64
    x = cast(lw.b, v, t, ct)
    fn = libdevice(lw, "__nv_cbrt" + _float_suffix(ct), [x.type], x.type)
    return cast(lw.b, lw.b.call(fn, [x]), ct, rt)


def _print(lw, node, c):
    from .lower_print import lower_print
    return lower_print(lw, node, c.data)


def _device(lw, node, c):
    return lower_device_call(lw, node, c.data.callee, c.data.bound)


def _array_view(lw, node, c):
    # NumPy's ndarray.view(dtype): the same data pointer; of another element size, the last
    # dimension holds n * old // new elements of stride new (it must be contiguous and hold
    # whole elements: ValueError in the thread otherwise, NumPy's conditions)
    b = lw.b
    arr_node = node.func.value
    aty, rt = lw.ty(arr_node), lw.ty(node)
    arr = lw.expr(arr_node)
    old, new = aty.dtype.dtype.itemsize, rt.dtype.dtype.itemsize
    data = b.bitcast(b.extract_value(arr, 0), mtype(rt.dtype).as_pointer())
    shape = [LA.dim(lw, arr, k) for k in range(aty.ndim)]
    strides = [LA.stride(lw, arr, k) for k in range(aty.ndim)]
    if old != new:
        last_n, last_s = shape[-1], strides[-1]
        nbytes = b.mul(last_n, ir.Constant(I64, old))
        contiguous = b.or_(b.icmp_signed("==", last_s, ir.Constant(I64, old)),
                           b.icmp_signed("<=", last_n, ir.Constant(I64, 1)))
        whole = b.icmp_signed("==", b.srem(nbytes, ir.Constant(I64, new)),
                              ir.Constant(I64, 0))
        with b.if_then(b.not_(b.and_(contiguous, whole)), likely=False):
            emit_raise(lw, ValueError, (
                "To change to a dtype of a different size, the last axis must be contiguous "
                "and its size in bytes a multiple of the new itemsize",), node)
        shape[-1] = b.sdiv(nbytes, ir.Constant(I64, new))
        strides[-1] = ir.Constant(I64, new)
    return LA.make_array(lw, data, shape, strides, rt)


def _reshape(lw, node, c):
    b = lw.b
    arr_node = node.func.value
    aty = lw.ty(arr_node)
    arr = lw.expr(arr_node)
    vals, ts = _args(lw, node)
    if len(vals) == 1 and isinstance(ts[0], (T.UniTuple, T.Tuple)):
        dims = [cast(b, b.extract_value(vals[0], i), t, T.int64)
                for i, t in enumerate(ts[0].types)]
    else:
        dims = [cast(b, v, t, T.int64) for v, t in zip(vals, ts)]
    return LA.reshape(lw, arr, aty, dims, lw.ty(node))


def _conjugate(lw, node, c):
    v = lw.expr(node.func.value)
    t = lw.ty(node.func.value)
    if not rules.is_complex(t):
        return v
    b = lw.b
    im = b.extract_value(v, 1)
    return b.insert_value(v, b.fsub(ir.Constant(im.type, -0.0), im), 1)


def _tuple_of(lw, node, c):
    return lw.expr(node.args[0])     # the same members, in the same LLVM aggregate


def _len(lw, node, c):
    (v,), (t,) = _args(lw, node)
    if isinstance(t, T.Array):
        return LA.dim(lw, v, 0)
    return ir.Constant(I64, len(t.types))


def _isinstance(lw, node, c):
    return ir.Constant(I1, int(c.data.value))      # decided by the typer


def _pow(lw, node, c):
    from .lower_ops import binop
    (a, e), (at, et) = _args(lw, node)
    return binop(lw, "**", a, at, e, et, lw.ty(node), node)


def _iterated(lw, node, c):
    # range/enumerate/zip are iterated by the for loop that names them (llvmgen.s_For)
    raise lw.error(f"call of '{c.kind.value}' cannot be lowered", node)


def _atomic(lw, node, c):
    return lower_atomics.lower_atomic(lw, node, c.data.op)


def _overload(lw, node, c):
    return lower_device_call(lw, node, c.data.call.callee, c.data.call.bound)


def _ufunc(lw, node, c):
    # the loop function the typer generated for the operands (frontend/calls/ufunc.py)
    return lower_device_call(lw, node, c.data.call.callee, c.data.call.bound)


def _reduce(lw, node, c):
    # the reduction function the typer generated for the array's type (frontend/calls/reduce.py)
    return lower_device_call(lw, node, c.data.call.callee, c.data.call.bound)


def _closure(lw, node, c):
    return lower_closure_call(lw, node, c.data.function, c.data.free)


K = CallKind
#: The lowering of each call kind (tests/frontend/test_call_contract.py: one per kind).  The
#: issue-13 data kinds (cmath, cuda.fp16, modf/frexp/ldexp, bit_count), the issue-14
#: intrinsics, libdevice and cooperative groups are lowered in their own modules.
_HANDLERS = {
    K.SHARED_ARRAY: _shared, K.LOCAL_ARRAY: _local, K.CONST_ARRAY: _const,
    K.GRID: _grid, K.GRIDSIZE: _gridsize,
    K.SYNCTHREADS: _intrinsic("llvm.nvvm.barrier0"),
    K.SYNCTHREADS_COUNT: _sync_pred("llvm.nvvm.barrier0.popc"),
    K.SYNCTHREADS_AND: _sync_pred("llvm.nvvm.barrier0.and"),
    K.SYNCTHREADS_OR: _sync_pred("llvm.nvvm.barrier0.or"),
    K.SYNCWARP: _syncwarp,
    K.THREADFENCE: _intrinsic("llvm.nvvm.membar.gl"),
    K.THREADFENCE_BLOCK: _intrinsic("llvm.nvvm.membar.cta"),
    K.THREADFENCE_SYSTEM: _intrinsic("llvm.nvvm.membar.sys"),
    K.SHFL_SYNC: _shfl, K.SHFL_UP_SYNC: _shfl, K.SHFL_DOWN_SYNC: _shfl, K.SHFL_XOR_SYNC: _shfl,
    K.BALLOT_SYNC: _vote("llvm.nvvm.vote.ballot.sync", I32),
    K.ALL_SYNC: _vote("llvm.nvvm.vote.all.sync", I1),
    K.ANY_SYNC: _vote("llvm.nvvm.vote.any.sync", I1),
    K.EQ_SYNC: _vote("llvm.nvvm.vote.uni.sync", I1),
    K.ACTIVEMASK: _asm("activemask.b32 $0;"),
    K.LANEMASK_LT: _asm("mov.u32 $0, %lanemask_lt;"),
    K.POPC: _bitop, K.BREV: _bitop, K.CLZ: _bitop, K.FFS: _bitop,
    K.FMA: _fma, K.CBRT: _cbrt, K.CAST: _cast,
    K.COMPLEX: _complex, K.MIN: _minmax, K.MAX: _minmax, K.ABS: _abs, K.ROUND: _round,
    K.MATH: _math, K.NP_ROUNDING: _np_round,
    K.PRINT: _print, K.DEVICE: _device, K.KERNEL: _device, K.RESHAPE: _reshape, K.ARRAY_VIEW: _array_view, K.ARRAY_COPY: _array_copy,
    K.CONJUGATE: _conjugate,
    K.LEN: _len, K.ISINSTANCE: _isinstance, K.TUPLE: _tuple_of, K.POW: _pow, K.ATOMIC: _atomic, K.CLOSURE: _closure,
    K.RANGE: _iterated, K.ENUMERATE: _iterated, K.ZIP: _iterated,
    K.CMATH: lower_complex.lower_cmath, K.FP16: lower_fp16.lower_fp16,
    K.BF16: lower_bf16.lower_bf16, K.FP8: lower_fp8.lower_fp8,
    K.MATH_PARTS: lower_scalars.lower_math_parts, K.BIT_COUNT: lower_scalars.lower_bit_count,
    K.LIBDEVICE: lower_libdevice.lower_libdevice,
    K.SELP: intrinsics_extra.lower_selp, K.MULHI: intrinsics_extra.lower_mulhi,
    K.NANOSLEEP: intrinsics_extra.lower_nanosleep,
    K.MATCH_ANY_SYNC: intrinsics_extra.lower_match, K.MATCH_ALL_SYNC: intrinsics_extra.lower_match,
    K.THIS_GRID: cooperative.lower_this_grid, K.GRID_SYNC: cooperative.lower_grid_sync,
    K.OVERLOAD: _overload, K.USER_INTRINSIC: lower_extending.lower_user_intrinsic,
    K.EXTERN: lower_extern_call, K.FROM_BUFFER: lower_from_buffer, K.UFUNC: _ufunc,
    K.REDUCE: _reduce,
    K.CARRAY: LA.lower_pointer_array, K.FARRAY: LA.lower_pointer_array,
    K.VECTOR: lower_vector_make, K.CACHE_LOAD: lower_cache_load,
    K.CACHE_STORE: lower_cache_store,
    K.WMMA_FRAGMENT: lower_wmma.lower_fragment, K.WMMA_FILL: lower_wmma.lower_fill,
    K.WMMA_LOAD: lower_wmma.lower_load, K.WMMA_MMA: lower_wmma.lower_mma,
    K.WMMA_STORE: lower_wmma.lower_store,
    K.PIPELINE_COPY: lower_pipeline.lower_copy, K.PIPELINE_COMMIT: lower_pipeline.lower_commit,
    K.PIPELINE_WAIT: lower_pipeline.lower_wait,
    K.WGMMA_ACCUMULATOR: lower_wgmma.lower_accumulator, K.WGMMA_FILL: lower_wgmma.lower_fill,
    K.WGMMA_DESCRIPTOR: lower_wgmma.lower_descriptor, K.WGMMA_FENCE: lower_wgmma.lower_fence,
    K.WGMMA_FENCE_PROXY: lower_wgmma.lower_fence_proxy, K.WGMMA_MMA: lower_wgmma.lower_mma,
    K.WGMMA_COMMIT: lower_wgmma.lower_commit, K.WGMMA_WAIT: lower_wgmma.lower_wait,
    K.WGMMA_STORE: lower_wgmma.lower_store,
}
del K
