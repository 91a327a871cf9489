"""Cooperative groups: lowering of ``cuda.cg.this_grid()`` and ``grid.sync()`` (numba.cuda's
names; typed in :mod:`.calls.runtime`).

numba-cuda lowers ``grid.sync()`` to cudadevrt's ``cudaCGSynchronize``, which needs the
static ``libcudadevrt.a`` of a CUDA toolkit (the pip wheels cujit uses do not ship it).  cujit
implements the same barrier itself, as the CUDA cooperative-groups headers do: one 32-bit
counter in global memory per module; after a ``bar.sync``, thread 0 of each block adds 1
(block 0 adds ``0x80000000 - (blocks - 1)``), so the counter's top bit flips exactly when
the last block arrives; each block's thread 0 spins until it sees the flip, then a second
``bar.sync`` releases its block.  The low bits return to their value each round, so the
counter needs no reset between barriers or launches.  Correct only when every block is
resident at once: a kernel that calls ``grid.sync()`` is launched with
``cuLaunchCooperativeKernel``, which fails (CudaAPIError) for grids larger than
``kernel.max_cooperative_grid_blocks(blockdim)``.
"""
from llvmlite import ir

from .lower_sreg import sreg
from .ltypes import I32

__all__ = ["BARRIER_GLOBAL", "lower_this_grid", "lower_grid_sync"]

BARRIER_GLOBAL = "_cujit_grid_barrier"


def lower_this_grid(lw, node, call):
    """``cg.this_grid()``: a compile-time object, no value."""
    return None


def lower_grid_sync(lw, node, call):
    """``cg.this_grid().sync()``: the grid barrier (a counter in global memory)."""
    m = lw.m
    m.uses_grid_sync = True
    b = lw.b
    g = m.module.globals.get(BARRIER_GLOBAL)
    if g is None:
        g = ir.GlobalVariable(m.module, I32, BARRIER_GLOBAL, addrspace=1)
        g.linkage = "internal"
        g.initializer = ir.Constant(I32, 0)
        g.align = 4
    bar = m.declare("llvm.nvvm.barrier0", ir.FunctionType(ir.VoidType(), []))
    fence = m.declare("llvm.nvvm.membar.gl", ir.FunctionType(ir.VoidType(), []))
    b.call(bar, [])
    zero = ir.Constant(I32, 0)
    tid = b.or_(b.or_(sreg(lw, "threadIdx", "x"), sreg(lw, "threadIdx", "y")),
                sreg(lw, "threadIdx", "z"))
    with b.if_then(b.icmp_unsigned("==", tid, zero)):
        cta = b.or_(b.or_(sreg(lw, "blockIdx", "x"), sreg(lw, "blockIdx", "y")),
                    sreg(lw, "blockIdx", "z"))
        nblocks = b.mul(b.mul(sreg(lw, "gridDim", "x"), sreg(lw, "gridDim", "y")),
                        sreg(lw, "gridDim", "z"))
        master_add = b.sub(ir.Constant(I32, 0x80000000), b.sub(nblocks, ir.Constant(I32, 1)))
        nb = b.select(b.icmp_unsigned("==", cta, zero), master_add, ir.Constant(I32, 1))
        b.call(fence, [])
        old = b.atomic_rmw("add", g, nb, "monotonic")
        spin = lw.func.append_basic_block("gridsync.spin")
        done = lw.func.append_basic_block("gridsync.done")
        b.branch(spin)
        b.position_at_end(spin)
        cur = b.load_atomic(g, "monotonic", 4)
        flipped = b.icmp_unsigned("!=", b.and_(b.xor(old, cur), ir.Constant(I32, 0x80000000)),
                                  zero)
        b.cbranch(flipped, done, spin)
        b.position_at_end(done)
        b.call(fence, [])
    b.call(bar, [])

