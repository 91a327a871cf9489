"""Lowering of the tensor-core calls of :mod:`cujit.wmma` to PTX ``wmma`` instructions
(inline PTX: libNVVM 13 knows the float16 ``llvm.nvvm.wmma.*`` intrinsics but not the
bfloat16/tf32 ones, so all precisions use one path).  A fragment is a reference to its
lane's registers (``ltypes``: ``[n x i32]*`` or ``[n x float]*``); loads, mma and fills
write them, stores and mma read them.  Addresses are generic (PTX generic addressing
reaches global and shared memory alike), except that a load of a tile in shared memory uses
the ``.shared`` form (``isspacep.shared``, which NVVM folds when the array is a shared one,
picks it), ``ldm`` is an i32.  Instructions, from the PTX
ISA's "Warp-level Matrix Instructions": ``wmma.load.{a,b,c}.sync.aligned.{row,col}.<shape>.
<type>``, ``wmma.mma.sync.aligned.<alayout>.<blayout>.<shape>.<types>``,
``wmma.store.d.sync.aligned.<layout>.<shape>.f32``; bfloat16 and tf32 need sm_80.
"""
from llvmlite import ir

from .. import types as T
from .lower_fragments import arg_node, asm, load_registers, store_registers
from .ltypes import I32, cast

__all__ = ["lower_fragment", "lower_fill", "lower_load", "lower_mma", "lower_store"]

F32 = ir.FloatType()
I8P = ir.IntType(8).as_pointer()
_PTX_TYPE = {"float16": "f16", "bfloat16": "bf16", "tf32": "tf32", "float32": "f32"}
_MMA_TYPES = {"float16": "f32.f32", "bfloat16": "f32.bf16.bf16.f32",
              "tf32": "f32.tf32.tf32.f32"}
_ROLE = {"matrix_a": "a", "matrix_b": "b", "accumulator": "c"}


def _shape(ft):
    return f"m{ft.m}n{ft.n}k{ft.k}"


def _lay(layout):
    return "row" if layout == "row_major" else "col"


def _reg(ft):
    n, kind = ft.registers
    return n, (F32 if kind == "f32" else I32), ("f" if kind == "f32" else "r")


def _regs(lw, slot, ft):
    return load_registers(lw, slot, _reg(ft)[0])


def _address(lw, node):
    """The generic address (i64) of the first element of array/view ``node``."""
    b = lw.b
    return b.ptrtoint(b.extract_value(lw.expr(node), 0), ir.IntType(64))


def _ldm(lw, node):
    return cast(lw.b, lw.expr(node), lw.ty(node), T.int32)


def lower_fragment(lw, node, c):
    """``wmma.fragment(...)``: the lane's registers, an entry-block alloca."""
    n, ety, _ = _reg(c.data.fragment)
    return lw.alloca(ir.ArrayType(ety, n))


def lower_fill(lw, node, c):
    """``wmma.fill_fragment(frag, value)``: every register holds ``value`` in the
    fragment's precision (packed two per register for 16-bit inputs)."""
    ft = c.data.fragment
    b = lw.b
    vnode = arg_node(node, 1, "value")
    v = cast(b, lw.expr(vnode), lw.ty(vnode), T.float32)
    n, ety, _ = _reg(ft)
    if ft.precision == "float32":
        reg = v
    elif ft.precision == "float16":
        h = b.fptrunc(v, ir.HalfType())
        vec = ir.Constant(ir.VectorType(ir.HalfType(), 2), None)
        vec = b.insert_element(vec, h, ir.Constant(I32, 0))
        vec = b.insert_element(vec, h, ir.Constant(I32, 1))
        reg = b.bitcast(vec, I32)
    elif ft.precision == "bfloat16":
        reg = asm(lw, "cvt.rn.bf16x2.f32 $0, $1, $1;", I32, [v], "=r,f")
    else:
        reg = asm(lw, "cvt.rna.tf32.f32 $0, $1;", I32, [v], "=r,f")
    store_registers(lw, lw.expr(arg_node(node, 0, "frag")), [reg] * n)


def lower_load(lw, node, c):
    """``wmma.load_matrix_sync(frag, src, ldm[, layout][, offset])``."""
    ft, layout = c.data.fragment, c.data.layout
    n, ety, con = _reg(ft)
    slot = lw.expr(arg_node(node, 0, "frag"))
    b = lw.b
    src = arg_node(node, 1, "src")
    data = b.extract_value(lw.expr(src), 0)
    onode = arg_node(node, 4, "offset")
    if onode is not None:
        # no wraparound or clamping: the offset is the kernel's pointer arithmetic
        data = b.gep(data, [cast(b, lw.expr(onode), lw.ty(onode), T.int64)], inbounds=True)
    ptr = b.bitcast(data, I8P)
    ldm = _ldm(lw, arg_node(node, 2, "ldm"))
    regs = ", ".join(f"${i}" for i in range(n))
    rty = ir.LiteralStructType([ety] * n)
    cons = ",".join([f"={con}"] * n + ["l", "r", "~{memory}"])

    def load(space, addr):
        text = (f"wmma.load.{_ROLE[ft.role]}.sync.aligned.{_lay(layout)}.{_shape(ft)}{space}."
                f"{_PTX_TYPE[ft.precision]} {{{regs}}}, [${n}], ${n + 1};")
        return asm(lw, text, rty, [addr, ldm], cons)

    # A tile in shared memory is read with the .shared form (ldmatrix in SASS; the generic
    # form is one generic load per register).  NVVM folds isspacep.shared of an address
    # that comes from a shared array, so the test and one of the branches vanish.
    isspacep = lw.m.declare("llvm.nvvm.isspacep.shared", ir.FunctionType(ir.IntType(1), [I8P]))
    shared = b.call(isspacep, [ptr])
    with b.if_else(shared) as (then, otherwise):
        with then:
            sp = b.ptrtoint(b.addrspacecast(ptr, ir.IntType(8).as_pointer(3)), ir.IntType(64))
            out_s = load(".shared", sp)
            bb_s = b.block
        with otherwise:
            out_g = load("", b.ptrtoint(ptr, ir.IntType(64)))
            bb_g = b.block
    out = b.phi(rty)
    out.add_incoming(out_s, bb_s)
    out.add_incoming(out_g, bb_g)
    store_registers(lw, slot, [b.extract_value(out, i) for i in range(n)])


def lower_mma(lw, node, c):
    """``wmma.mma_sync(d, a, b, c)``: ``d = a @ b + c`` (``d`` may be ``c``)."""
    fa, fb = c.data.a, c.data.b
    acc = T.Fragment("accumulator", fa.m, fa.n, fa.k, "float32")
    slots = [lw.expr(arg_node(node, i, name)) for i, name in enumerate("dabc")]
    ra, rb, rc = _regs(lw, slots[1], fa), _regs(lw, slots[2], fb), _regs(lw, slots[3], acc)
    nd = len(rc)
    ops, k = [], nd
    for group in (ra, rb, rc):
        ops.append("{" + ", ".join(f"${k + i}" for i in range(len(group))) + "}")
        k += len(group)
    text = (f"wmma.mma.sync.aligned.{_lay(fa.layout)}.{_lay(fb.layout)}.{_shape(fa)}."
            f"{_MMA_TYPES[fa.precision]} {{{', '.join(f'${i}' for i in range(nd))}}}, "
            + ", ".join(ops) + ";")
    cons = ["=f"] * nd + ["r"] * (len(ra) + len(rb)) + ["f"] * nd
    out = asm(lw, text, ir.LiteralStructType([F32] * nd), ra + rb + rc, ",".join(cons))
    store_registers(lw, slots[0], [lw.b.extract_value(out, i) for i in range(nd)])


def lower_store(lw, node, c):
    """``wmma.store_matrix_sync(dst, frag, ldm, layout)``."""
    ft, layout = c.data.fragment, c.data.layout
    addr = _address(lw, arg_node(node, 0, "dst"))
    regs = _regs(lw, lw.expr(arg_node(node, 1, "frag")), ft)
    ldm = _ldm(lw, arg_node(node, 2, "ldm"))
    n = len(regs)
    text = (f"wmma.store.d.sync.aligned.{_lay(layout)}.{_shape(ft)}.f32 [$0], "
            f"{{{', '.join(f'${i + 1}' for i in range(n))}}}, ${n + 1};")
    asm(lw, text, ir.VoidType(), [addr] + regs + [ldm],
         ",".join(["l"] + ["f"] * n + ["r", "~{memory}"]))
