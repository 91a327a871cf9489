"""Lowering of ``math.modf`` / ``math.frexp`` / ``math.ldexp`` (libdevice ``__nv_modf``,
``__nv_frexp``, ``__nv_ldexp``, whose out-parameters live in a local slot) and of
``int.bit_count()`` (``llvm.ctpop`` of the absolute value, as Python's ``int.bit_count``).
"""
from llvmlite import ir

from .. import types as T
from .lower_ops import _float_suffix, libdevice
from .ltypes import I32, cast, ltype

__all__ = ["lower_math_parts", "lower_bit_count", "round_ndigits"]


def _arg(lw, node, k, to):
    return cast(lw.b, lw.expr(node.args[k]), lw.ty(node.args[k]), to)


def _modf(lw, node):
    ft = lw.ty(node).dtype
    x = _arg(lw, node, 0, ft)
    slot = lw.alloca(x.type)
    fn = libdevice(lw, "__nv_modf" + _float_suffix(ft), [x.type, x.type.as_pointer()], x.type)
    frac = lw.b.call(fn, [x, slot])
    out = ir.Constant(ltype(lw.ty(node)), ir.Undefined)
    out = lw.b.insert_value(out, frac, 0)
    return lw.b.insert_value(out, lw.b.load(slot), 1)


def _frexp(lw, node):
    ft = lw.ty(node).types[0]
    x = _arg(lw, node, 0, ft)
    slot = lw.alloca(I32)
    fn = libdevice(lw, "__nv_frexp" + _float_suffix(ft), [x.type, I32.as_pointer()], x.type)
    m = lw.b.call(fn, [x, slot])
    out = ir.Constant(ltype(lw.ty(node)), ir.Undefined)
    out = lw.b.insert_value(out, m, 0)
    return lw.b.insert_value(out, lw.b.load(slot), 1)


def _ldexp(lw, node):
    ft = lw.ty(node)
    x = _arg(lw, node, 0, ft)
    e = _arg(lw, node, 1, T.int32)
    fn = libdevice(lw, "__nv_ldexp" + _float_suffix(ft), [x.type, I32], x.type)
    return lw.b.call(fn, [x, e])


def _bit_count(lw, node):
    b = lw.b
    recv = node.func.value
    t = lw.ty(recv)
    v = lw.expr(recv)
    if t.signed:
        zero = ir.Constant(v.type, 0)
        v = b.select(b.icmp_signed("<", v, zero), b.sub(zero, v), v)
    fn = lw.m.declare(f"llvm.ctpop.i{t.bitwidth}", ir.FunctionType(v.type, [v.type]))
    # the absolute value of the most negative intN is itself, read as unsigned: ctpop agrees
    return cast(b, b.call(fn, [v]), T.Integer(t.bitwidth, False), T.int64)


_MATH_PARTS = {"modf": _modf, "frexp": _frexp, "ldexp": _ldexp}


def lower_math_parts(lw, node, call):
    """The value of ``math.modf``/``frexp``/``ldexp`` (``call.data.name``) through
    libdevice's ``__nv_*`` with out-pointers in local slots."""
    return _MATH_PARTS[call.data.name](lw, node)


def lower_bit_count(lw, node, call):
    """The value of ``i.bit_count()``: ``ctpop(abs(i))`` as int64."""
    return _bit_count(lw, node)


def round_ndigits(lw, x, nd, ft):
    """``round(x, ndigits)`` for float ``x`` (type ``ft``) and i64 ``nd``, as numba's
    ``round_ndigits`` (CPython's fallback algorithm): scale by ``10**ndigits`` (split in
    two factors above 22 digits so neither overflows), round half to even, scale back; a
    product that overflows means ``x`` has no digits to drop (the result is ``x``), and a
    negative ``ndigits`` so large that ``10**-ndigits`` is inf gives a signed zero."""
    b = lw.b
    lt = x.type
    zero64 = ir.Constant(nd.type, 0)
    neg = b.icmp_signed("<", nd, zero64)
    big = b.icmp_signed(">", nd, ir.Constant(nd.type, 22))
    e1 = b.select(neg, b.sub(zero64, nd), b.select(big, b.sub(nd, ir.Constant(nd.type, 22)),
                                                    nd))
    e1f = b.sitofp(e1, lt)
    pw = libdevice(lw, "__nv_pow" + _float_suffix(ft), [lt, lt], lt)
    pow1 = b.call(pw, [ir.Constant(lt, 10.0), e1f])
    pow2 = b.select(b.and_(big, b.not_(neg)), ir.Constant(lt, 1e22), ir.Constant(lt, 1.0))
    y_pos = b.fmul(b.fmul(x, pow1), pow2)
    y = b.select(neg, b.fdiv(x, pow1), y_pos)
    rint = libdevice(lw, "__nv_rint" + _float_suffix(ft), [lt], lt)
    z = b.call(rint, [y])      # round-half-even, as Python's round
    r_pos = b.fdiv(b.fdiv(z, pow2), pow1)
    z_zero = b.fcmp_ordered("==", z, ir.Constant(lt, 0.0))
    r_neg = b.select(z_zero, z, b.fmul(z, pow1))
    r = b.select(neg, r_neg, r_pos)
    fabs = libdevice(lw, "__nv_fabs" + _float_suffix(ft), [lt], lt)
    y_inf = b.fcmp_ordered("==", b.call(fabs, [y_pos]), ir.Constant(lt, float("inf")))
    return b.select(b.and_(b.not_(neg), y_inf), x, r)
