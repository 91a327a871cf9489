"""Lowering of operators with Python semantics: arithmetic (``//`` and ``%`` floor, ``**``
with integer exponents), comparisons (chained, middle operand evaluated once), ``and``/``or``
(short-circuit), unary operators, complex arithmetic, and ``range`` arguments.
"""
import ast

from llvmlite import ir

from .. import types as T
from . import bf16_ptx, lower_datetime
from ..frontend import rules
from .ltypes import I1, I32, cast, const, half_asm, ltype, truth

__all__ = ["BINOPS", "binop", "unary", "compare", "boolop", "range_args", "range_count",
           "tuple_concat", "libdevice"]

BINOPS = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.FloorDiv: "//",
          ast.Mod: "%", ast.Pow: "**", ast.BitAnd: "&", ast.BitOr: "|", ast.BitXor: "^",
          ast.LShift: "<<", ast.RShift: ">>"}


def libdevice(lw, name, argtys, retty):
    """Declare (once) and return libdevice function ``name``."""
    return lw.m.declare(name, ir.FunctionType(retty, argtys))


def _float_suffix(t):
    return "f" if t.bitwidth == 32 else ""


def _f16_wrap(lw, fn, t, *vals):
    """Run a float32 computation for float16 operands."""
    if t is T.float16:
        vals = [lw.b.fpext(v, ir.FloatType()) for v in vals]
        return lw.b.fptrunc(fn(T.float32, *vals), ltype(T.float16))
    return fn(t, *vals)


def binop(lw, op, a, at, b_, bt, rt, node):
    """``a <op> b`` with operand types ``at``/``bt`` and result type ``rt`` (from typing)."""
    b = lw.b
    if op in ("/", "//", "%") and lw.m.debug:
        from .lower_exceptions import check_divisor
        check_divisor(lw, op, at, b_, bt, node)
    if rules.is_datetime(at) or rules.is_datetime(bt):
        return lower_datetime.binop(lw, op, a, at, b_, bt, rt)
    if op in ("<<", ">>") or (op in ("&", "|", "^") and isinstance(rt, T.Integer)):
        x, y = cast(b, a, at, rt), cast(b, b_, bt, rt)
        return {"&": b.and_, "|": b.or_, "^": b.xor, "<<": b.shl,
                ">>": b.ashr if rt.signed else b.lshr}[op](x, y)
    if isinstance(rt, T.Boolean):
        return {"&": b.and_, "|": b.or_, "^": b.xor}[op](a, b_)
    if isinstance(rt, T.BFloat16):
        # a mixed operand (an int64, an 8-bit integer) converts as bfloat16(x) first
        return {"+": bf16_ptx.add, "-": bf16_ptx.sub, "*": bf16_ptx.mul,
                "/": bf16_ptx.div}[op](b, cast(b, a, at, rt), cast(b, b_, bt, rt))
    if op == "**":
        return _power(lw, a, at, b_, bt, rt, node)
    if op == "/" and isinstance(rt, T.Float) and not isinstance(at, T.Float) \
            and not isinstance(bt, T.Float):
        x, y = cast(b, a, at, rt), cast(b, b_, bt, rt)
        return b.fdiv(x, y)
    x, y = cast(b, a, at, rt), cast(b, b_, bt, rt)
    if isinstance(rt, T.Integer):
        if op == "+":
            return b.add(x, y)
        if op == "-":
            return b.sub(x, y)
        if op == "*":
            return b.mul(x, y)
        if op == "//":
            return _int_floordiv(b, x, y, rt.signed)
        if op == "%":
            return _int_mod(b, x, y, rt.signed)
    if isinstance(rt, T.Float):
        if op == "+":
            return b.fadd(x, y)
        if op == "-":
            return b.fsub(x, y)
        if op == "*":
            return b.fmul(x, y)
        if op == "/":
            return b.fdiv(x, y)
        if op == "//":
            return _f16_wrap(lw, lambda t, p, q: _float_floordiv(lw, t, p, q), rt, x, y)
        if op == "%":
            return _f16_wrap(lw, lambda t, p, q: _float_mod(lw, t, p, q), rt, x, y)
    if isinstance(rt, T.Complex):
        return _complex_op(lw, op, x, y, rt, node)
    raise lw.error(f"operator {op} is not supported for {rt}", node)


def _nonzero_divisor(b, y):
    """(divisor safe to divide by, i1 "was zero" or None).  Numba's CUDA target uses the
    NumPy error model: integer ``//`` and ``%`` by zero give 0 (LLVM's division by zero is
    undefined behaviour, so it must not reach the instruction)."""
    if isinstance(y, ir.Constant) and isinstance(y.constant, int) and y.constant != 0:
        return y, None
    is_zero = b.icmp_unsigned("==", y, ir.Constant(y.type, 0))
    return b.select(is_zero, ir.Constant(y.type, 1), y), is_zero


def _int_floordiv(b, x, y, signed):
    y, is_zero = _nonzero_divisor(b, y)
    r = _int_floordiv_nz(b, x, y, signed)
    return r if is_zero is None else b.select(is_zero, ir.Constant(x.type, 0), r)


def _int_mod(b, x, y, signed):
    y, is_zero = _nonzero_divisor(b, y)
    r = _int_mod_nz(b, x, y, signed)
    return r if is_zero is None else b.select(is_zero, ir.Constant(x.type, 0), r)


def _int_floordiv_nz(b, x, y, signed):
    if not signed:
        return b.udiv(x, y)
    q = b.sdiv(x, y)
    r = b.srem(x, y)
    zero = ir.Constant(x.type, 0)
    # Python floors: subtract one when the remainder is nonzero and the signs differ
    adjust = b.and_(b.icmp_signed("!=", r, zero),
                    b.icmp_signed("<", b.xor(r, y), zero))
    return b.sub(q, b.zext(adjust, x.type))


def _int_mod_nz(b, x, y, signed):
    if not signed:
        return b.urem(x, y)
    r = b.srem(x, y)
    zero = ir.Constant(x.type, 0)
    adjust = b.and_(b.icmp_signed("!=", r, zero),
                    b.icmp_signed("<", b.xor(r, y), zero))
    return b.select(adjust, b.add(r, y), r)


def _fmod(lw, t, x, y):
    """C ``fmod`` from libdevice (exact).  LLVM's NVPTX backend expands ``frem`` to
    ``x - trunc(x / y) * y``, which is wrong for large quotients and NaN for an infinite
    ``y``; Numba calls ``fmod`` too."""
    fn = libdevice(lw, "__nv_fmod" + _float_suffix(t), [x.type] * 2, x.type)
    return lw.b.call(fn, [x, y])


def _copysign(lw, t, x, y):
    fn = libdevice(lw, "__nv_copysign" + _float_suffix(t), [x.type] * 2, x.type)
    return lw.b.call(fn, [x, y])


def _float_mod(lw, t, x, y):
    """Python's float ``x % y`` (CPython's float_rem, as Numba): ``fmod``, moved to the
    divisor's sign; a zero result takes the divisor's sign."""
    b = lw.b
    r = _fmod(lw, t, x, y)
    zero = ir.Constant(x.type, 0.0)
    adjust = b.and_(b.fcmp_ordered("!=", r, zero),
                    b.xor(b.fcmp_ordered("<", r, zero), b.fcmp_ordered("<", y, zero)))
    r = b.select(adjust, b.fadd(r, y), r)
    return b.select(b.fcmp_ordered("==", r, zero), _copysign(lw, t, zero, y), r)


def _float_floordiv(lw, t, x, y):
    """Python's float ``x // y`` exactly (CPython's float_floor_div, as Numba): from
    ``fmod``, so that ``x // y`` and ``x % y`` agree even when ``x / y`` rounds up."""
    b = lw.b
    zero = ir.Constant(x.type, 0.0)
    one = ir.Constant(x.type, 1.0)
    mod = _fmod(lw, t, x, y)
    div = b.fdiv(b.fsub(x, mod), y)
    fix = b.and_(b.fcmp_ordered("!=", mod, zero),
                 b.xor(b.fcmp_ordered("<", y, zero), b.fcmp_ordered("<", mod, zero)))
    div = b.select(fix, b.fsub(div, one), div)
    fl = _float_floor(lw, t, div)
    fl = b.select(b.fcmp_ordered(">", b.fsub(div, fl), ir.Constant(x.type, 0.5)),
                  b.fadd(fl, one), fl)
    # a zero quotient takes the sign of x / y (NaN and inf inputs fall through as floor)
    signed_zero = _copysign(lw, t, zero, b.fdiv(x, y))
    return b.select(b.fcmp_ordered("==", div, zero), signed_zero, fl)


def _float_floor(lw, t, v):
    fn = libdevice(lw, "__nv_floor" + _float_suffix(t), [v.type], v.type)
    return lw.b.call(fn, [v])


def _power(lw, a, at, e, et, rt, node):
    b = lw.b
    if isinstance(rt, T.Integer):
        x = cast(b, a, at, rt)
        y = cast(b, e, et, rt)
        fn = lw.m.ipow(ltype(rt))
        return b.call(fn, [x, y])
    if isinstance(rt, T.Complex):
        return _complex_power(lw, cast(b, a, at, rt), cast(b, e, et, rt), rt)
    x = cast(b, a, at, rt)
    # small constant integer exponents become multiplications (as Numba)
    if isinstance(node, ast.BinOp) and isinstance(node.right, ast.Constant) \
            and node.right.value in (2, 3, 2.0, 3.0) and not isinstance(node.right.value, bool):
        r = b.fmul(x, x)
        return b.fmul(r, x) if node.right.value == 3 else r
    if isinstance(et, (T.Integer, T.Boolean)):
        def powi(t, p):
            n = cast(b, e, et, T.int32)
            fn = libdevice(lw, "__nv_powi" + _float_suffix(t), [p.type, I32], p.type)
            return b.call(fn, [p, n])
        return _f16_wrap(lw, powi, rt, x)
    y = cast(b, e, et, rt)

    def pw(t, p, q):
        fn = libdevice(lw, "__nv_pow" + _float_suffix(t), [p.type, q.type], p.type)
        return b.call(fn, [p, q])
    return _f16_wrap(lw, pw, rt, x, y)


def _complex_power(lw, x, y, ct):
    """``x ** y`` of two complex values of type ``ct`` by numba-cuda's algorithm (its
    translation of CPython's ``_Py_c_pow``, in the precision of ``ct``); branch-free, as
    selects.  A zero base gives 0 as in CPython (numba-cuda tests ``x.real == 0 and
    y.real == 0`` instead, which makes ``1j ** 2j`` 0, not e**-pi).  The simulator computes
    the same steps (``simulator/scalars.complex_pow``)."""
    b = lw.b
    ft = ct.underlying_float
    lt = ltype(ft)

    def f(name, *vals):
        fn = libdevice(lw, "__nv_" + name + _float_suffix(ft), [lt] * len(vals), lt)
        return b.call(fn, list(vals))
    zero, one = ir.Constant(lt, 0.0), ir.Constant(lt, 1.0)
    xr, xi = b.extract_value(x, 0), b.extract_value(x, 1)
    yr, yi = b.extract_value(y, 0), b.extract_value(y, 1)
    vabs = f("hypot", xr, xi)
    length = f("pow", vabs, yr)
    at = f("atan2", xi, xr)
    phase = b.fmul(at, yr)
    has_imag = b.fcmp_unordered("!=", yi, zero)
    length = b.select(has_imag, b.fdiv(length, f("exp", b.fmul(at, yi))), length)
    phase = b.select(has_imag, b.fadd(phase, b.fmul(yi, f("log", vabs))), phase)
    re = b.fmul(length, f("cos", phase))
    im = b.fmul(length, f("sin", phase))
    y_zero = b.and_(b.fcmp_ordered("==", yr, zero), b.fcmp_ordered("==", yi, zero))
    to_zero = b.and_(b.fcmp_ordered("==", xr, zero), b.fcmp_ordered("==", xi, zero))
    re = b.select(y_zero, one, b.select(to_zero, zero, re))
    im = b.select(y_zero, zero, b.select(to_zero, zero, im))
    out = b.insert_value(ir.Constant(ltype(ct), ir.Undefined), re, 0)
    return b.insert_value(out, im, 1)


def _complex_op(lw, op, x, y, rt, node):
    b = lw.b
    a, c = b.extract_value(x, 0), b.extract_value(y, 0)
    bi, d = b.extract_value(x, 1), b.extract_value(y, 1)
    if op == "+":
        re, im = b.fadd(a, c), b.fadd(bi, d)
    elif op == "-":
        re, im = b.fsub(a, c), b.fsub(bi, d)
    elif op == "*":
        re = b.fsub(b.fmul(a, c), b.fmul(bi, d))
        im = b.fadd(b.fmul(a, d), b.fmul(bi, c))
    elif op == "/":
        den = b.fadd(b.fmul(c, c), b.fmul(d, d))
        re = b.fdiv(b.fadd(b.fmul(a, c), b.fmul(bi, d)), den)
        im = b.fdiv(b.fsub(b.fmul(bi, c), b.fmul(a, d)), den)
    else:
        raise lw.error(f"operator {op} is not supported for complex numbers", node)
    out = b.insert_value(ir.Constant(ltype(rt), ir.Undefined), re, 0)
    return b.insert_value(out, im, 1)


def unary(lw, node):
    b = lw.b
    op = type(node.op)
    at, rt = lw.ty(node.operand), lw.ty(node)
    v = lw.expr(node.operand)
    if op is ast.Not:
        return b.xor(truth(b, v, at), ir.Constant(I1, 1))
    v = cast(b, v, at, rt)
    if op is ast.UAdd:
        return v
    if isinstance(rt, T.BFloat16):
        return bf16_ptx.neg(b, v)
    if op is ast.Invert:
        return b.xor(v, ir.Constant(v.type, -1 if not isinstance(rt, T.Boolean) else 1))
    if isinstance(v, ir.Constant) and isinstance(rt, (T.Integer, T.Float)) \
            and isinstance(v.constant, (int, float)):
        return ir.Constant(v.type, -v.constant)     # keeps `a[::-1]` a constant-step slice
    if isinstance(rt, (T.Integer, T.NPTimedelta)):
        # -NaT wraps to NaT, as NumPy's negation of the smallest int64
        return b.sub(ir.Constant(v.type, 0), v)
    if rt is T.float16:
        return half_asm(b, "neg.f16 $0, $1;", v)        # the GPU's instruction, as numba's
    if isinstance(rt, T.Float):
        return b.fsub(ir.Constant(v.type, -0.0), v)     # LLVM 7 has no fneg
    re = b.fsub(ir.Constant(b.extract_value(v, 0).type, -0.0), b.extract_value(v, 0))
    im = b.fsub(ir.Constant(re.type, -0.0), b.extract_value(v, 1))
    return b.insert_value(b.insert_value(v, re, 0), im, 1)


_CMP = {ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=", ast.Eq: "==", ast.NotEq: "!=",
        ast.Is: "==", ast.IsNot: "!=", ast.In: "in", ast.NotIn: "not in"}


def _lower_in(lw, op, x, xt, seq, seq_t):
    """i1 of ``x in seq`` (``op == "in"``) or ``x not in seq`` for a tuple ``seq`` (typed by
    containment.type_in): the OR of ``x == element`` over the elements; ``x in ()`` is False."""
    b = lw.b
    found = ir.Constant(I1, 0)
    for i, et in enumerate(seq_t.types):
        found = b.or_(found, _cmp2(lw, "==", x, xt, b.extract_value(seq, i), et))
    return found if op == "in" else b.xor(found, ir.Constant(I1, 1))


def _cmp2(lw, op, x, xt, y, yt):
    b = lw.b
    if op in ("in", "not in"):
        return _lower_in(lw, op, x, xt, y, yt)
    if isinstance(xt, T.EnumMember):
        return _enum_cmp(lw, op, x, xt, y, yt)
    ct = rules.unify(xt, yt)
    if isinstance(xt, T.Boolean) and isinstance(yt, T.Boolean):
        ct = T.boolean
    if isinstance(ct, T.BFloat16):      # exact in float32; '!=' unordered as CUDA's operator
        x, y, ct = bf16_ptx.to_f32(b, x), bf16_ptx.to_f32(b, y), T.float32
        return (b.fcmp_unordered if op == "!=" else b.fcmp_ordered)(op, x, y)
    x, y = cast(b, x, xt, ct), cast(b, y, yt, ct)
    if isinstance(ct, T.Boolean):
        return b.icmp_unsigned(op, x, y)
    if isinstance(ct, T.Integer):
        return (b.icmp_signed if ct.signed else b.icmp_unsigned)(op, x, y)
    if isinstance(ct, T.Float):
        return (b.fcmp_unordered if op == "!=" else b.fcmp_ordered)(op, x, y)
    re = _cmp2(lw, "==", b.extract_value(x, 0), ct.underlying_float,
               b.extract_value(y, 0), ct.underlying_float)
    im = _cmp2(lw, "==", b.extract_value(x, 1), ct.underlying_float,
               b.extract_value(y, 1), ct.underlying_float)
    eq = b.and_(re, im)
    return eq if op == "==" else b.xor(eq, ir.Constant(I1, 1))


def _enum_cmp(lw, op, x, xt, y, yt):
    """Enum members (frontend/enums.py): equal when of one Enum and equal values ('is'
    comes here as '=='); members of different Enums are never the same member."""
    b = lw.b
    if xt is not yt:
        return ir.Constant(I1, 0 if op == "==" else 1)
    dt = xt.dtype
    if isinstance(dt, (T.UniTuple, T.Tuple)):
        eq = ir.Constant(I1, 1)
        for i, et in enumerate(dt.types):
            eq = b.and_(eq, _cmp2(lw, "==", b.extract_value(x, i), et,
                                  b.extract_value(y, i), et))
        return eq if op == "==" else b.xor(eq, ir.Constant(I1, 1))
    return _cmp2(lw, op, x, dt, y, dt)


def _cmp_op(lw, op, x, xt, y, yt):
    if isinstance(op, (ast.Is, ast.IsNot)) and xt is not yt:
        # 'is' between members of different Enums (frontend/enums.py): never the same
        return ir.Constant(I1, int(isinstance(op, ast.IsNot)))
    if rules.is_datetime(xt):
        return lower_datetime.compare(lw, op, x, xt, y, yt)
    return _cmp2(lw, _CMP[type(op)], x, xt, y, yt)


def compare(lw, node):
    b = lw.b
    left, lt = lw.expr(node.left), lw.ty(node.left)
    if len(node.ops) == 1:
        right, rt = lw.expr(node.comparators[0]), lw.ty(node.comparators[0])
        return _cmp_op(lw, node.ops[0], left, lt, right, rt)
    end = lw.func.append_basic_block("cmp.end")
    results = []
    for k, (op, comp) in enumerate(zip(node.ops, node.comparators)):
        right, rtype = lw.expr(comp), lw.ty(comp)
        r = _cmp_op(lw, op, left, lt, right, rtype)
        results.append((r, b.block))
        if k == len(node.ops) - 1:
            b.branch(end)
        else:
            nxt = lw.func.append_basic_block("cmp.next")
            b.cbranch(r, nxt, end)
            b.position_at_end(nxt)
        left, lt = right, rtype
    b.position_at_end(end)
    phi = b.phi(I1)
    for r, blk in results:
        phi.add_incoming(r, blk)
    return phi


def boolop(lw, node):
    """``a and b`` / ``a or b``: the deciding operand, converted to the unified type."""
    b = lw.b
    rt = lw.ty(node)
    is_and = isinstance(node.op, ast.And)
    end = lw.func.append_basic_block("boolop.end")
    incoming = []
    for k, v in enumerate(node.values):
        val = lw.expr(v)
        vt = lw.ty(v)
        res = cast(b, val, vt, rt)
        if k == len(node.values) - 1:
            incoming.append((res, b.block))
            b.branch(end)
            break
        t = truth(b, val, vt)
        nxt = lw.func.append_basic_block("boolop.next")
        incoming.append((res, b.block))
        if is_and:
            b.cbranch(t, nxt, end)
        else:
            b.cbranch(t, end, nxt)
        b.position_at_end(nxt)
    b.position_at_end(end)
    phi = b.phi(ltype(rt))
    for v, blk in incoming:
        phi.add_incoming(v, blk)
    return phi


def range_args(lw, call, ity):
    """(start, stop, step, step as a Python int or None) of ``range(...)`` as ``ity``."""
    vals = [cast(lw.b, lw.expr(a), lw.ty(a), ity) for a in call.args]
    step_const = 1
    if len(vals) == 1:
        return const(ity, 0), vals[0], const(ity, 1), 1
    if len(vals) == 3:
        ok, sc = lw_const(lw, call.args[2])
        step_const = sc if ok and isinstance(sc, int) else None
        if step_const == 0:
            raise lw.error("range() step must not be zero", call.args[2])
        return vals[0], vals[1], vals[2], step_const
    return vals[0], vals[1], const(ity, 1), 1


def range_count(lw, start, stop, step, step_const, ity):
    """Number of items of ``range(start, stop, step)`` (values of integer type ``ity``), as an
    unsigned value of the same width: ``(|stop - start| - 1) // |step| + 1`` when the range is
    not empty, else 0.  The differences are taken modulo 2**bits, which is exact for any
    start/stop of the type (no overflow at the type's limits).  A runtime step of 0 gives 0
    items (Python raises ValueError; kernels cannot)."""
    b = lw.b
    lty = ltype(ity)
    zero, one = ir.Constant(lty, 0), ir.Constant(lty, 1)
    cmp = b.icmp_signed if ity.signed else b.icmp_unsigned

    def count(lo, hi, astep):       # for lo < hi
        return b.add(b.udiv(b.sub(b.sub(hi, lo), one), astep), one)

    if step_const is not None:
        if step_const > 0:
            return b.select(cmp("<", start, stop), count(start, stop, step), zero)
        return b.select(cmp(">", start, stop), count(stop, start, b.sub(zero, step)), zero)
    if not ity.signed:
        nonzero = b.icmp_unsigned("!=", step, zero)
        astep = b.select(nonzero, step, one)
        return b.select(b.and_(nonzero, cmp("<", start, stop)), count(start, stop, astep),
                        zero)
    pos = b.icmp_signed(">", step, zero)
    nonempty = b.select(pos, cmp("<", start, stop),
                        b.and_(b.icmp_signed("<", step, zero), cmp(">", start, stop)))
    lo, hi = b.select(pos, start, stop), b.select(pos, stop, start)
    astep = b.select(pos, step, b.select(b.icmp_signed("<", step, zero), b.sub(zero, step), one))
    return b.select(nonempty, count(lo, hi, astep), zero)


def lw_const(lw, node):
    v = lw.tf.constvals.get(node)
    if v is not None:
        return True, v
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        ok, x = lw_const(lw, node.operand)
        return (ok, -x) if ok else (False, None)
    return False, None


def tuple_concat(lw, a, at, b_, bt, rt):
    b = lw.b
    out = ir.Constant(ltype(rt), ir.Undefined)
    k = 0
    for v, t in ((a, at), (b_, bt)):
        for i, et in enumerate(t.types):
            out = b.insert_value(out, cast(b, b.extract_value(v, i), et, rt.types[k]), k)
            k += 1
    return out
