"""Lowering of whole-record operations (field access is in ``lower_arrays``).

A record value is the ``i8*`` of its bytes (docs/design-compiler.md, kernel ABI), so
``out[i] = inp[i]`` between arrays of one record dtype is a copy of ``size`` bytes, as numba
does (numba-cuda ``test_record_dtype``: record assignment copies every field).
"""
from llvmlite import ir

from .ltypes import I1, I8P, I64

__all__ = ["copy_record"]


def copy_record(lw, dst, src, rty):
    """Copy the ``rty.size`` bytes of record ``src`` (an ``i8*``) to element pointer ``dst``."""
    b = lw.b
    fn = lw.m.declare("llvm.memcpy.p0i8.p0i8.i64",
                      ir.FunctionType(ir.VoidType(), [I8P, I8P, I64, I1]))
    b.call(fn, [b.bitcast(dst, I8P), b.bitcast(src, I8P), ir.Constant(I64, rty.size),
                ir.Constant(I1, 0)])
