"""Lowering of the Hopper warpgroup-MMA calls of :mod:`cujit.wgmma` to inline PTX (PTX ISA,
"Asynchronous Warpgroup Level Matrix Multiply-Accumulate Instructions"; sm_90a, which cujit
targets on cc 9.0 devices):

- ``accumulator``: the thread's ``n/2`` float registers, an entry-block alloca (SROA keeps
  them in registers: every access has a constant index);
- ``make_descriptor``: the 64-bit matrix descriptor, computed from the operand's 32-bit
  shared-window address (``cvta.to.shared`` of its generic address), LBO, SBO and the
  swizzle mode (PTX ISA, "Matrix Descriptor Format": bits 0-13 start >> 4, 16-29 LBO >> 4,
  32-45 SBO >> 4, 62-63 the mode: 1 = 128-byte, 2 = 64-byte, 3 = 32-byte swizzle);
- ``mma_async``: ``wgmma.mma_async.sync.aligned.m64nNk16.f32.<t>.<t>`` (``k8`` and no
  transpose operands for tf32) with the accumulator registers as tied in/out operands;
- ``fence`` / ``commit_group`` / ``wait_group``: ``wgmma.fence`` / ``commit_group`` /
  ``wait_group``, ``.sync.aligned``; ``fence_proxy_async``: ``fence.proxy.async.shared::cta``;
- ``store_accumulator``: one store per register at the element the register holds.

Every asm statement is side-effecting with a memory clobber, so LLVM keeps their order and
keeps shared-memory stores before them.  The registers of an accumulator are SSA values to
LLVM, which knows nothing of their asynchronous update: after each ``wait_group`` every
accumulator of the function passes through an empty asm statement that "redefines" it, so
no read of it (a store, a conversion) moves above the wait (CUTLASS's
``warpgroup_fence_operand``).
"""
from llvmlite import ir

from .. import types as T
from .lower_fragments import arg_node, asm, load_registers, store_registers
from .lower_sreg import sreg
from .ltypes import I32, I64, cast

__all__ = ["lower_accumulator", "lower_fill", "lower_descriptor", "lower_fence",
           "lower_fence_proxy", "lower_mma", "lower_commit", "lower_wait", "lower_store"]

F32 = ir.FloatType()
_I8 = ir.IntType(8)
_SWIZZLE_MODE = {0: 0, 128: 1, 64: 2, 32: 3}
_PTX_TYPE = {"float16": "f16", "bfloat16": "bf16", "tf32": "tf32"}


def lower_accumulator(lw, node, c):
    """``wgmma.accumulator(m, n)``: the thread's registers, an entry-block alloca."""
    n = c.data.accumulator.registers
    slot = lw.alloca(ir.ArrayType(F32, n))
    lw.wgmma_accumulators.append((slot, n))
    return slot


def lower_fill(lw, node, c):
    """``wgmma.fill_accumulator(acc, value)``."""
    vnode = arg_node(node, 1, "value")
    v = cast(lw.b, lw.expr(vnode), lw.ty(vnode), T.float32)
    slot = lw.expr(arg_node(node, 0, "acc"))
    store_registers(lw, slot, [v] * c.data.accumulator.registers)


def lower_descriptor(lw, node, c):
    """``wgmma.make_descriptor(smem, offset, swizzle, leading_bytes, stride_bytes)``."""
    b = lw.b
    smem = arg_node(node, 0, "smem")
    data = b.extract_value(lw.expr(smem), 0)
    onode = arg_node(node, 1, "offset")
    data = b.gep(data, [cast(b, lw.expr(onode), lw.ty(onode), T.int64)], inbounds=True)
    ptr = b.bitcast(data, _I8.as_pointer())
    addr = b.ptrtoint(b.addrspacecast(ptr, _I8.as_pointer(3)), I64)

    def field(v, shift):
        # (v & 0x3FFFF) >> 4: the 14 bits PTX keeps of a byte value, at bit ``shift``
        v = b.lshr(b.and_(v, ir.Constant(I64, 0x3FFFF)), ir.Constant(I64, 4))
        return b.shl(v, ir.Constant(I64, shift)) if shift else v

    def i64(name, i):
        n = arg_node(node, i, name)
        return cast(b, lw.expr(n), lw.ty(n), T.int64)

    desc = b.or_(field(addr, 0), field(i64("leading_bytes", 3), 16))
    desc = b.or_(desc, field(i64("stride_bytes", 4), 32))
    mode = _SWIZZLE_MODE[c.data.swizzle]
    if mode:
        desc = b.or_(desc, ir.Constant(I64, mode << 62))
    return desc


def lower_fence(lw, node, c):
    """``wgmma.fence()``."""
    asm(lw, "wgmma.fence.sync.aligned;", ir.VoidType(), [], "~{memory}")


def lower_fence_proxy(lw, node, c):
    """``wgmma.fence_proxy_async()``."""
    asm(lw, "fence.proxy.async.shared::cta;", ir.VoidType(), [], "~{memory}")


def lower_commit(lw, node, c):
    """``wgmma.commit_group()``."""
    asm(lw, "wgmma.commit_group.sync.aligned;", ir.VoidType(), [], "~{memory}")


def _redefine(lw, slot, n):
    """Pass accumulator ``slot``'s registers through an empty asm statement (see the module
    docstring)."""
    regs = load_registers(lw, slot, n)
    cons = ",".join(["=f"] * n + [str(i) for i in range(n)])
    out = asm(lw, "", ir.LiteralStructType([F32] * n), regs, cons)
    store_registers(lw, slot, [lw.b.extract_value(out, i) for i in range(n)])


def lower_wait(lw, node, c):
    """``wgmma.wait_group(n)``."""
    asm(lw, f"wgmma.wait_group.sync.aligned {c.data.n};", ir.VoidType(), [], "~{memory}")
    for slot, n in lw.wgmma_accumulators:
        _redefine(lw, slot, n)


def lower_mma(lw, node, c):
    """``wgmma.mma_async(acc, a_desc, b_desc, dtype, a_layout, b_layout[, accumulate])``."""
    d = c.data
    b = lw.b
    acc = d.accumulator
    n = acc.registers
    slot = lw.expr(arg_node(node, 0, "acc"))
    adesc, bdesc = lw.expr(arg_node(node, 1, "a_desc")), lw.expr(arg_node(node, 2, "b_desc"))
    if d.accumulate is None:
        an = arg_node(node, 6, "accumulate")
        v = lw.expr(an)
        t = lw.ty(an)
        scale = b.zext(v, I32) if isinstance(t, T.Boolean) else \
            b.zext(b.icmp_unsigned("!=", v, ir.Constant(v.type, 0)), I32)
    else:
        scale = ir.Constant(I32, int(d.accumulate))
    k = 8 if d.precision == "tf32" else 16
    t = _PTX_TYPE[d.precision]
    regs = ", ".join(f"${i}" for i in range(n))
    imm = "1, 1" if d.precision == "tf32" else \
        f"1, 1, {int(d.a_layout == 'col_major')}, {int(d.b_layout == 'row_major')}"
    text = (f"{{ .reg .pred p; setp.ne.b32 p, ${n + 2}, 0; "
            f"wgmma.mma_async.sync.aligned.m64n{acc.n}k{k}.f32.{t}.{t} "
            f"{{{regs}}}, ${n}, ${n + 1}, p, {imm}; }}")
    cons = ",".join(["=f"] * n + ["l", "l", "r"] + [str(i) for i in range(n)] + ["~{memory}"])
    out = asm(lw, text, ir.LiteralStructType([F32] * n), [adesc, bdesc, scale] +
               load_registers(lw, slot, n), cons)
    store_registers(lw, slot, [b.extract_value(out, i) for i in range(n)])


def lower_store(lw, node, c):
    """``wgmma.store_accumulator(dst, acc)``: register i of thread (warp w, lane l) of the
    warpgroup to ``dst[16w + l//4 + 8 * ((i//2) % 2), 8 * (i//4) + 2 * (l%4) + i%2]``."""
    b = lw.b
    d = c.data
    n = d.accumulator.registers
    dnode = arg_node(node, 0, "dst")
    arr = lw.expr(dnode)
    regs = load_registers(lw, lw.expr(arg_node(node, 1, "acc")), n)
    data = b.ptrtoint(b.extract_value(arr, 0), I64)
    strides = b.extract_value(arr, 2)
    s0, s1 = b.extract_value(strides, 0), b.extract_value(strides, 1)
    # the thread's rank in the block (x fastest), then its warp in the warpgroup
    tx, ty, tz = (sreg(lw, "threadIdx", a) for a in "xyz")
    nx, ny = sreg(lw, "blockDim", "x"), sreg(lw, "blockDim", "y")
    tid = b.add(tx, b.mul(nx, b.add(ty, b.mul(ny, tz))))
    lane = sreg(lw, "laneid", None)
    warp = b.and_(b.lshr(tid, ir.Constant(I32, 5)), ir.Constant(I32, 3))
    row0 = b.zext(b.add(b.shl(warp, ir.Constant(I32, 4)), b.lshr(lane, ir.Constant(I32, 2))),
                  I64)
    col0 = b.zext(b.shl(b.and_(lane, ir.Constant(I32, 3)), ir.Constant(I32, 1)), I64)
    base = b.add(data, b.add(b.mul(row0, s0), b.mul(col0, s1)))
    half = d.dtype is T.float16
    ety = ir.HalfType() if half else F32
    for i, v in enumerate(regs):
        dr, dc = 8 * ((i // 2) % 2), 8 * (i // 4) + i % 2
        off = b.add(b.mul(ir.Constant(I64, dr), s0), b.mul(ir.Constant(I64, dc), s1))
        p = b.inttoptr(b.add(base, off), ety.as_pointer())
        b.store(b.fptrunc(v, ety) if half else v, p)
