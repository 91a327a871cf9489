"""Lowering of ``cmath`` on complex64/complex128 values (real/imaginary pairs in LLVM).

Formulas are the textbook ones numba's ``cmathimpl`` builds on, on libdevice real functions:
``exp(x+iy) = e^x (cos y + i sin y)``, ``log z = log|z| + i atan2(y, x)``, ``sqrt`` by the
half-angle form (no cancellation), ``sin/cos/sinh/cosh`` by their real-part expansions,
``tanh`` by ``(sinh 2x + i sin 2y) / (cosh 2x + cos 2y)`` (saturated for ``|x| > 20``), and
the inverse functions through ``log`` and ``sqrt`` (``asin z = -i log(iz + sqrt(1 - z^2))``
...).  Values agree with Python's ``cmath`` to a few ulp away from the branch cuts; on a
cut, the side taken may differ from CPython's for signed zeros.
"""
import math

from llvmlite import ir

from .. import types as T
from ..frontend import rules
from .lower_ops import _float_suffix, libdevice
from .ltypes import I1, cast, ltype

__all__ = ["lower_cmath"]


class _C:
    """Complex arithmetic on (re, im) LLVM values of float type ``ft``."""

    def __init__(self, lw, ft):
        self.lw, self.b, self.ft = lw, lw.b, ft
        self.lt = ltype(ft)

    def k(self, v):
        return ir.Constant(self.lt, v)

    def f(self, name, *xs):
        fn = libdevice(self.lw, f"__nv_{name}" + _float_suffix(self.ft), [self.lt] * len(xs),
                       self.lt)
        return self.b.call(fn, list(xs))

    def add(self, p, q):
        return (self.b.fadd(p[0], q[0]), self.b.fadd(p[1], q[1]))

    def sub(self, p, q):
        return (self.b.fsub(p[0], q[0]), self.b.fsub(p[1], q[1]))

    def mul(self, p, q):
        b = self.b
        return (b.fsub(b.fmul(p[0], q[0]), b.fmul(p[1], q[1])),
                b.fadd(b.fmul(p[0], q[1]), b.fmul(p[1], q[0])))

    def scale(self, p, s):
        return (self.b.fmul(p[0], s), self.b.fmul(p[1], s))

    def times_i(self, p):
        return (self.b.fsub(self.k(-0.0), p[1]), p[0])

    def times_minus_i(self, p):
        return (p[1], self.b.fsub(self.k(-0.0), p[0]))

    def exp(self, z):
        e = self.f("exp", z[0])
        return (self.b.fmul(e, self.f("cos", z[1])), self.b.fmul(e, self.f("sin", z[1])))

    def log(self, z):
        return (self.f("log", self.f("hypot", z[0], z[1])), self.f("atan2", z[1], z[0]))

    def sqrt(self, z):
        b, (x, y) = self.b, z
        ax = self.f("fabs", x)
        t = self.f("sqrt", b.fmul(b.fadd(ax, self.f("hypot", x, y)), self.k(0.5)))
        zero = b.fcmp_ordered("==", t, self.k(0.0))
        other = b.fdiv(y, b.fmul(t, self.k(2.0)))
        other = b.select(zero, self.k(0.0), other)
        pos = b.fcmp_ordered(">=", x, self.k(0.0))
        re = b.select(pos, t, self.f("fabs", other))
        im = b.select(pos, other, self.f("copysign", t, y))
        return (re, b.select(zero, y, im))

    def sin(self, z):
        b, (x, y) = self.b, z
        return (b.fmul(self.f("sin", x), self.f("cosh", y)),
                b.fmul(self.f("cos", x), self.f("sinh", y)))

    def cos(self, z):
        b, (x, y) = self.b, z
        return (b.fmul(self.f("cos", x), self.f("cosh", y)),
                b.fsub(self.k(-0.0), b.fmul(self.f("sin", x), self.f("sinh", y))))

    def sinh(self, z):
        b, (x, y) = self.b, z
        return (b.fmul(self.f("sinh", x), self.f("cos", y)),
                b.fmul(self.f("cosh", x), self.f("sin", y)))

    def cosh(self, z):
        b, (x, y) = self.b, z
        return (b.fmul(self.f("cosh", x), self.f("cos", y)),
                b.fmul(self.f("sinh", x), self.f("sin", y)))

    def tanh(self, z):
        b, (x, y) = self.b, z
        two = self.k(2.0)
        x2, y2 = b.fmul(x, two), b.fmul(y, two)
        d = b.fadd(self.f("cosh", x2), self.f("cos", y2))
        re = b.fdiv(self.f("sinh", x2), d)
        im = b.fdiv(self.f("sin", y2), d)
        big = b.fcmp_ordered(">", self.f("fabs", x), self.k(20.0))
        # far from 0, tanh saturates: cosh(2x) would overflow to inf/inf
        re = b.select(big, self.f("copysign", self.k(1.0), x), re)
        small_im = b.fmul(b.fmul(self.k(4.0), b.fmul(self.f("sin", y), self.f("cos", y))),
                          self.f("exp", b.fmul(self.k(-2.0), self.f("fabs", x))))
        return (re, b.select(big, small_im, im))

    def tan(self, z):
        # tan z = -i tanh(i z)
        return self.times_minus_i(self.tanh(self.times_i(z)))

    def asin(self, z):
        one = (self.k(1.0), self.k(0.0))
        w = self.add(self.times_i(z), self.sqrt(self.sub(one, self.mul(z, z))))
        return self.times_minus_i(self.log(w))

    def acos(self, z):
        a = self.asin(z)
        return (self.b.fsub(self.k(math.pi / 2), a[0]), self.b.fsub(self.k(-0.0), a[1]))

    def atan(self, z):
        one = (self.k(1.0), self.k(0.0))
        iz = self.times_i(z)
        d = self.sub(self.log(self.sub(one, iz)), self.log(self.add(one, iz)))
        return self.scale(self.times_i(d), self.k(0.5))

    def asinh(self, z):
        one = (self.k(1.0), self.k(0.0))
        return self.log(self.add(z, self.sqrt(self.add(self.mul(z, z), one))))

    def acosh(self, z):
        one = (self.k(1.0), self.k(0.0))
        s = self.mul(self.sqrt(self.add(z, one)), self.sqrt(self.sub(z, one)))
        return self.log(self.add(z, s))

    def atanh(self, z):
        one = (self.k(1.0), self.k(0.0))
        d = self.sub(self.log(self.add(one, z)), self.log(self.sub(one, z)))
        return self.scale(d, self.k(0.5))

    def log10(self, z):
        return self.scale(self.log(z), self.k(1.0 / math.log(10.0)))


def _operand(lw, node, ct):
    a = node.args[0]
    v = cast(lw.b, lw.expr(a), lw.ty(a), ct)
    return (lw.b.extract_value(v, 0), lw.b.extract_value(v, 1))


def _pack(lw, t, parts):
    out = ir.Constant(ltype(t), ir.Undefined)
    for i, p in enumerate(parts):
        out = lw.b.insert_value(out, p, i)
    return out


def lower_cmath(lw, node, call):
    """The value of ``cmath.<name>(...)`` (``call.data.name``), as numba-cuda's cmath."""
    name = call.data.name
    rt = lw.ty(node)
    b = lw.b
    if name == "rect":
        ft = rt.underlying_float
        c = _C(lw, ft)
        r, phi = (cast(b, lw.expr(a), lw.ty(a), ft) for a in node.args)
        return _pack(lw, rt, (b.fmul(r, c.f("cos", phi)), b.fmul(r, c.f("sin", phi))))
    at = lw.ty(node.args[0])
    ct = T.complex64 if at in (T.complex64, T.float32, T.float16) else T.complex128
    c = _C(lw, ct.underlying_float)
    z = _operand(lw, node, ct)
    if name in ("isnan", "isinf", "isfinite"):
        if not (rules.is_float(at) or rules.is_complex(at)):
            return ir.Constant(I1, 1 if name == "isfinite" else 0)
        if name == "isnan":
            return b.or_(b.fcmp_unordered("uno", z[0], z[0]), b.fcmp_unordered("uno", z[1], z[1]))
        inf = c.k(math.inf)
        ax, ay = c.f("fabs", z[0]), c.f("fabs", z[1])
        if name == "isinf":
            return b.or_(b.fcmp_ordered("==", ax, inf), b.fcmp_ordered("==", ay, inf))
        return b.and_(b.fcmp_ordered("!=", ax, inf), b.fcmp_ordered("!=", ay, inf))
    if name == "phase":
        return c.f("atan2", z[1], z[0])
    if name == "polar":
        return _pack(lw, rt, (c.f("hypot", z[0], z[1]), c.f("atan2", z[1], z[0])))
    return _pack(lw, rt, getattr(c, name)(z))

