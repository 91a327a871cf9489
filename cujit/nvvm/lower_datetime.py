"""datetime64 / timedelta64 in kernels: int64 counts of their unit, NaT the smallest int64.

The operations compute what NumPy computes (its ``TIMEDELTA_*`` and ``DATETIME_*`` loops):
operands are first brought to the unit the typer chose (``rules.common_time_unit``: a
coarser unit is multiplied up; a conversion to a coarser unit floors, as NumPy's casts);
any NaT operand gives NaT (``==``, ``<`` ... give False, ``!=`` True); a timedelta times or
divided by a number (``/`` and ``//`` alike) truncates toward zero (a non-finite result, or a
zero integer divisor, gives NaT); timedelta / timedelta is the float quotient, ``//`` floors (0 for NaT or a zero
divisor) and ``%`` takes the divisor's sign (NaT for a zero divisor).
"""
import ast

from llvmlite import ir

from .. import types as T
from ..frontend import rules
from .ltypes import I64, NAT, cast, floordiv_i64, time_unit_cast

__all__ = ["binop", "compare"]

F64 = ir.DoubleType()
_NAT = ir.Constant(I64, NAT)


def _is_nat(b, v):
    return b.icmp_signed("==", v, _NAT)


def _nat_or(b, operands, value):
    bad = _is_nat(b, operands[0])
    for v in operands[1:]:
        bad = b.or_(bad, _is_nat(b, v))
    return b.select(bad, _NAT, value)


def binop(lw, op, x, xt, y, yt, rt):
    """``x <op> y`` with a datetime64/timedelta64 operand (typed by
    ``rules.datetime_binop_type`` as ``rt``)."""
    b = lw.b
    if rules.is_datetime(xt) and rules.is_datetime(yt):
        unit = rules.common_time_unit(xt.unit, yt.unit)
        a, c = time_unit_cast(b, x, xt.unit, unit), time_unit_cast(b, y, yt.unit, unit)
        either = b.or_(_is_nat(b, a), _is_nat(b, c))
        if op in ("+", "-"):
            return _nat_or(b, [a, c], (b.add if op == "+" else b.sub)(a, c))
        zero = b.icmp_signed("==", c, ir.Constant(I64, 0))
        if op == "/":
            q = b.fdiv(b.sitofp(a, F64), b.sitofp(c, F64))
            return b.select(either, ir.Constant(F64, float("nan")), q)
        safe = b.select(zero, ir.Constant(I64, 1), c)
        if op == "//":
            return b.select(b.or_(either, zero), ir.Constant(I64, 0), floordiv_i64(b, a, safe))
        # '%': the divisor's sign, as Python and NumPy
        q = floordiv_i64(b, a, safe)
        return b.select(b.or_(either, zero), _NAT, b.sub(a, b.mul(q, safe)))
    td, tdt, num, numt = (x, xt, y, yt) if rules.is_datetime(xt) else (y, yt, x, xt)
    if rules.is_float(numt):
        f = cast(b, num, numt, T.float64)
        tf = b.sitofp(td, F64)
        r = b.fmul(tf, f) if op == "*" else b.fdiv(tf, f)
        finite = b.fcmp_ordered("<", b.call(lw.m.declare("llvm.fabs.f64", ir.FunctionType(
            F64, [F64])), [r]), ir.Constant(F64, float(2 ** 63)))
        return b.select(b.or_(_is_nat(b, td), b.not_(finite)), _NAT, b.fptosi(r, I64))
    n = cast(b, num, numt, T.int64)
    if op == "*":
        return _nat_or(b, [td], b.mul(td, n))
    zero = b.icmp_signed("==", n, ir.Constant(I64, 0))
    safe = b.select(zero, ir.Constant(I64, 1), n)
    q = b.sdiv(td, safe)        # NumPy truncates ``/`` and ``//`` by a number alike
    return b.select(b.or_(_is_nat(b, td), zero), _NAT, q)


_CMP = {ast.Eq: "==", ast.NotEq: "!=", ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">",
        ast.GtE: ">="}


def compare(lw, op, x, xt, y, yt):
    """``x <op> y`` of two datetime64 or two timedelta64 values (an ``ast`` comparison
    operator), in their common unit; NaT compares unequal to everything, itself included."""
    b = lw.b
    unit = rules.common_time_unit(xt.unit, yt.unit)
    a, c = time_unit_cast(b, x, xt.unit, unit), time_unit_cast(b, y, yt.unit, unit)
    sym = _CMP[type(op)]
    either = b.or_(_is_nat(b, a), _is_nat(b, c))
    r = b.icmp_signed(sym, a, c)
    if sym == "!=":
        return b.or_(either, r)
    return b.and_(b.not_(either), r)
