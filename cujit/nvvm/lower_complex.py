"""Lowering of ``cmath`` on complex64/complex128 values (real/imaginary pairs in LLVM).

The values are CPython's ``cmath`` (C99 Annex G), the reference numba-cuda's tests hold the
compiled functions to (its ``cmathimpl`` follows CPython's algorithms):

- finite arguments: CPython's algorithms on libdevice real functions — ``log`` by
  ``log1p`` near the unit circle, ``sqrt`` by the half-angle form, ``acos``/``acosh``/
  ``asinh`` by Kahan's products of two square roots, ``atanh`` by ``log1p`` (odd in ``z``),
  ``tanh`` by ``tanh x``/``tan y``, ``exp``/``cosh``/``sinh`` scaled near overflow; ``cos``,
  ``sin``, ``tan``, ``asin``, ``atan`` through ``cosh``/``sinh``/``tanh``/``asinh``/``atanh``
  of ``i z`` as CPython does, ``log10`` as ``log / ln 10``;
- an infinite or NaN part: the C99 special value, looked up in a 7 × 7 table indexed by the
  class of each part (−inf, negative, −0, +0, positive, +inf, NaN) and built when the kernel
  is compiled from Python's ``cmath`` itself (NumPy's value where ``cmath`` raises, as the
  simulator gives it); ``exp``/``cosh``/``sinh``/``tanh`` of an infinite real part and a
  finite nonzero imaginary part depend on ``cos y``/``sin y``: C99's formula there;
  ``rect(r, phi)`` the same way, over the classes of ``r`` and ``phi`` (CPython's
  ``rect_special_values``; NaN parts where Python raises, as numba-cuda's).

Finite values agree with Python's to the test suite's 1–2 ulp; complex64 computes in float32
(libdevice's ``f`` functions).
"""
import cmath
import math

import numpy as np
from llvmlite import ir

from .. import types as T
from ..frontend import rules
from .lower_ops import _float_suffix, libdevice
from .ltypes import I1, I32, I64, cast, ltype

__all__ = ["lower_cmath", "special_table", "CLASS_VALUES"]

#: one value of each class of a part, in table order: -inf, negative, -0, +0, positive,
#: +inf, NaN (CPython's special-value tables are indexed the same way)
CLASS_VALUES = (-math.inf, -1.5, -0.0, 0.0, 1.5, math.inf, math.nan)

_NP_NAMES = {"acos": "arccos", "acosh": "arccosh", "asinh": "arcsinh", "atanh": "arctanh"}


def _c99(name, z):
    if name == "rect":
        # rect(r, phi) of two reals, packed as complex(r, phi); where Python raises
        # (r nonzero, phi infinite) the value is numba-cuda's r * cos(phi): NaN parts
        try:
            return cmath.rect(z.real, z.imag)
        except ValueError:
            return complex(math.nan, math.nan)
    try:
        return getattr(cmath, name)(z)
    except (ValueError, OverflowError):
        with np.errstate(all="ignore"):
            return complex(getattr(np, _NP_NAMES.get(name, name))(np.complex128(z)))


def special_table(name, values=CLASS_VALUES):
    """The 49 values of ``cmath.<name>`` at ``complex(values[i], values[j])``, row-major, as
    a NumPy array of (re, im) float64 pairs: the table the compiled function reads when a
    part of its argument is infinite or NaN (for ``rect``, at ``rect(values[i],
    values[j])``)."""
    out = np.empty((len(values) * len(values), 2))
    for i, x in enumerate(values):
        for j, y in enumerate(values):
            z = _c99(name, complex(x, y))
            out[i * len(values) + j] = (z.real, z.imag)
    return out


class _C:
    """Complex arithmetic on (re, im) LLVM values of float type ``ft``."""

    def __init__(self, lw, ft):
        self.lw, self.b, self.ft = lw, lw.b, ft
        self.lt = ltype(ft)
        fi = np.finfo(ft.dtype)
        self.large = float(fi.max) / 4              # CPython's CM_LARGE_DOUBLE
        self.sqrt_large = math.sqrt(self.large)
        self.log_large = math.log(self.large)       # CM_LOG_LARGE_DOUBLE
        self.sqrt_min = math.sqrt(float(fi.tiny))

    # ---- real helpers ------------------------------------------------------------------
    def k(self, v):
        return ir.Constant(self.lt, v)

    def f(self, name, *xs):
        fn = libdevice(self.lw, f"__nv_{name}" + _float_suffix(self.ft), [self.lt] * len(xs),
                       self.lt)
        return self.b.call(fn, list(xs))

    def neg(self, v):
        return self.b.fsub(self.k(-0.0), v)

    def less(self, a, v):
        return self.b.fcmp_ordered("<", a, self.k(v) if isinstance(v, float) else v)

    def more(self, a, v):
        return self.b.fcmp_ordered(">", a, self.k(v) if isinstance(v, float) else v)

    def eq(self, a, v):
        return self.b.fcmp_ordered("==", a, self.k(v) if isinstance(v, float) else v)

    def sel(self, c, p, q):
        """(re, im) ``p`` where ``c`` else ``q``."""
        return (self.b.select(c, p[0], q[0]), self.b.select(c, p[1], q[1]))

    def finite(self, v):
        return self.less(self.f("fabs", v), math.inf)

    def isinf(self, v):
        return self.eq(self.f("fabs", v), math.inf)

    def cls(self, v):
        """The class index (0..6, :data:`CLASS_VALUES` order) of real ``v``, as an i32."""
        b = self.b
        ity = ir.IntType(self.ft.bitwidth)
        neg = b.icmp_signed("<", b.bitcast(v, ity), ir.Constant(ity, 0))
        c = lambda n: ir.Constant(I32, n)       # noqa: E731
        i = b.select(neg, c(2), c(3))
        i = b.select(self.more(v, 0.0), c(4), i)
        i = b.select(self.less(v, 0.0), c(1), i)
        i = b.select(self.eq(v, math.inf), c(5), i)
        i = b.select(self.eq(v, -math.inf), c(0), i)
        return b.select(b.fcmp_unordered("uno", v, v), c(6), i)

    def table(self, name, z):
        """C99's value of ``cmath.<name>(z)`` from the special-value table."""
        b = self.b
        dt = self.ft.dtype
        g = self.lw.m.const_table(("cmath", name, dt.str),
                                  lambda: special_table(name).astype(dt), dt.itemsize)
        p = b.bitcast(g, self.lt.as_pointer(g.type.addrspace))
        if g.type.addrspace:
            p = b.addrspacecast(p, self.lt.as_pointer())
        idx = b.add(b.mul(self.cls(z[0]), ir.Constant(I32, 7)), self.cls(z[1]))
        at = b.zext(b.mul(idx, ir.Constant(I32, 2)), I64)
        re = b.load(b.gep(p, [at]))
        im = b.load(b.gep(p, [b.add(at, ir.Constant(I64, 1))]))
        return (re, im)

    def special(self, name, z, value):
        """``value`` (the finite algorithm's) where both parts are finite, else the table."""
        both = self.b.and_(self.finite(z[0]), self.finite(z[1]))
        return self.sel(both, value, self.table(name, z))

    def inf_real(self, z):
        """Real part infinite, imaginary part finite and nonzero: C99's formula cases."""
        b = self.b
        return b.and_(self.isinf(z[0]), b.and_(self.finite(z[1]),
                                               b.fcmp_unordered("une", z[1], self.k(0.0))))

    # ---- complex helpers ---------------------------------------------------------------
    def times_i(self, z):
        return (self.neg(z[1]), z[0])

    def from_times_i(self, r):
        """``-i r``: the value of ``f(z)`` from ``r = g(i z)`` (sin/tan/asin/atan)."""
        return (r[1], self.neg(r[0]))

    # ---- the functions -----------------------------------------------------------------
    def exp(self, z):
        b, (x, y) = self.b, z
        big = self.more(x, self.log_large)
        # near overflow e^x = e^(x-1) * e, so that e^x cos y is finite when it can be
        l = self.f("exp", b.select(big, b.fsub(x, self.k(1.0)), x))
        scale = b.select(big, self.k(math.e), self.k(1.0))
        c, s = self.f("cos", y), self.f("sin", y)
        fin = (b.fmul(b.fmul(l, c), scale), b.fmul(b.fmul(l, s), scale))
        out = self.special("exp", z, fin)
        pos = self.more(x, 0.0)
        inf, zero = self.k(math.inf), self.k(0.0)
        edge = (self.f("copysign", b.select(pos, inf, zero), c),
                self.f("copysign", b.select(pos, inf, zero), s))
        return self.sel(self.inf_real(z), edge, out)

    def log(self, z):
        b, (x, y) = self.b, z
        ax, ay = self.f("fabs", x), self.f("fabs", y)
        h = self.f("hypot", ax, ay)
        am, an = self.f("fmax", ax, ay), self.f("fmin", ax, ay)
        near1 = b.and_(b.fcmp_ordered(">=", h, self.k(0.71)),
                       b.fcmp_ordered("<=", h, self.k(1.73)))
        # near |z| = 1, log|z| = log1p(|z|^2 - 1) / 2 without cancellation
        t = b.fadd(b.fmul(b.fsub(am, self.k(1.0)), b.fadd(am, self.k(1.0))), b.fmul(an, an))
        re = b.select(near1, b.fmul(self.f("log1p", t), self.k(0.5)), self.f("log", h))
        big = self.more(am, self.large)
        half = self.k(0.5)
        re_big = b.fadd(self.f("log", self.f("hypot", b.fmul(ax, half), b.fmul(ay, half))),
                        self.k(math.log(2.0)))
        re = b.select(big, re_big, re)
        return self.special("log", z, (re, self.f("atan2", y, x)))

    def sqrt(self, z, special=True):
        """``special=False``: for finite ``z`` only (the square roots inside acos & co.,
        whose own table covers their non-finite arguments)."""
        b, (x, y) = self.b, z
        ax, ay = self.f("fabs", x), self.f("fabs", y)
        # s = sqrt((|x| + |z|) / 2), scaled by 1/8 so that |x| + |z| cannot overflow
        e = self.k(0.125)
        s = b.fmul(self.k(2.0), self.f("sqrt", b.fadd(b.fmul(ax, e),
                                                     self.f("hypot", b.fmul(ax, e),
                                                            b.fmul(ay, e)))))
        d = b.fdiv(ay, b.fmul(s, self.k(2.0)))
        pos = b.fcmp_ordered(">=", x, self.k(0.0))
        fin = (b.select(pos, s, d), self.f("copysign", b.select(pos, d, s), y))
        zero = b.and_(self.eq(x, 0.0), self.eq(y, 0.0))
        fin = self.sel(zero, (self.k(0.0), y), fin)
        return self.special("sqrt", z, fin) if special else fin

    def _cosh_sinh(self, z, sinh):
        b, (x, y) = self.b, z
        big = self.more(self.f("fabs", x), self.log_large)
        xm = b.select(big, b.fsub(x, self.f("copysign", self.k(1.0), x)), x)
        scale = b.select(big, self.k(math.e), self.k(1.0))
        ch, sh = b.fmul(self.f("cosh", xm), scale), b.fmul(self.f("sinh", xm), scale)
        c, s = self.f("cos", y), self.f("sin", y)
        fin = (b.fmul(c, sh), b.fmul(s, ch)) if sinh else (b.fmul(c, ch), b.fmul(s, sh))
        out = self.special("sinh" if sinh else "cosh", z, fin)
        inf = self.k(math.inf)
        sx = self.f("copysign", self.k(1.0), x)
        ci, si = self.f("copysign", inf, c), self.f("copysign", inf, s)
        edge = (b.fmul(ci, sx), si) if sinh else (ci, b.fmul(si, sx))
        return self.sel(self.inf_real(z), edge, out)

    def cosh(self, z):
        return self._cosh_sinh(z, False)

    def sinh(self, z):
        return self._cosh_sinh(z, True)

    def tanh(self, z):
        b, (x, y) = self.b, z
        one = self.k(1.0)
        tx, ty = self.f("tanh", x), self.f("tan", y)
        cx = b.fdiv(one, self.f("cosh", x))
        txty = b.fmul(tx, ty)
        den = b.fadd(one, b.fmul(txty, txty))
        fin = (b.fdiv(b.fmul(tx, b.fadd(one, b.fmul(ty, ty))), den),
               b.fmul(b.fmul(b.fdiv(ty, den), cx), cx))
        ax = self.f("fabs", x)
        s, c = self.f("sin", y), self.f("cos", y)
        far = (self.f("copysign", one, x),
               b.fmul(b.fmul(self.k(4.0), b.fmul(s, c)),
                      self.f("exp", b.fmul(self.k(-2.0), ax))))
        fin = self.sel(self.more(ax, self.log_large), far, fin)
        out = self.special("tanh", z, fin)
        edge = (self.f("copysign", one, x),
                self.f("copysign", self.k(0.0), b.fmul(self.k(2.0), b.fmul(s, c))))
        return self.sel(self.inf_real(z), edge, out)

    def _log_half_big(self, z):
        """log|z| + ln 4 for huge |z| (log(hypot(x/2, y/2)) + 2 ln 2)."""
        b, half = self.b, self.k(0.5)
        h = self.f("hypot", b.fmul(z[0], half), b.fmul(z[1], half))
        return b.fadd(self.f("log", h), self.k(2.0 * math.log(2.0)))

    def _big(self, z):
        return self.b.or_(self.more(self.f("fabs", z[0]), self.large),
                          self.more(self.f("fabs", z[1]), self.large))

    def acos(self, z):
        b, (x, y) = self.b, z
        one = self.k(1.0)
        s1 = self.sqrt((b.fsub(one, x), self.neg(y)), False)
        s2 = self.sqrt((b.fadd(one, x), y), False)
        fin = (b.fmul(self.k(2.0), self.f("atan2", s1[0], s2[0])),
               self.f("asinh", b.fsub(b.fmul(s2[0], s1[1]), b.fmul(s2[1], s1[0]))))
        lg = self._log_half_big(z)
        big = (self.f("atan2", self.f("fabs", y), x),
               b.select(self.less(x, 0.0), self.neg(self.f("copysign", lg, y)),
                        self.f("copysign", lg, self.neg(y))))
        return self.special("acos", z, self.sel(self._big(z), big, fin))

    def acosh(self, z):
        b, (x, y) = self.b, z
        one = self.k(1.0)
        s1 = self.sqrt((b.fsub(x, one), y), False)
        s2 = self.sqrt((b.fadd(x, one), y), False)
        fin = (self.f("asinh", b.fadd(b.fmul(s1[0], s2[0]), b.fmul(s1[1], s2[1]))),
               b.fmul(self.k(2.0), self.f("atan2", s1[1], s2[0])))
        big = (self._log_half_big(z), self.f("atan2", y, x))
        return self.special("acosh", z, self.sel(self._big(z), big, fin))

    def asinh(self, z):
        b, (x, y) = self.b, z
        one = self.k(1.0)
        s1 = self.sqrt((b.fadd(one, y), self.neg(x)), False)
        s2 = self.sqrt((b.fsub(one, y), x), False)
        fin = (self.f("asinh", b.fsub(b.fmul(s1[0], s2[1]), b.fmul(s2[0], s1[1]))),
               self.f("atan2", y, b.fsub(b.fmul(s1[0], s2[0]), b.fmul(s1[1], s2[1]))))
        lg = self._log_half_big(z)
        big = (b.select(b.fcmp_ordered(">=", y, self.k(0.0)), self.f("copysign", lg, x),
                        self.neg(self.f("copysign", lg, self.neg(x)))),
               self.f("atan2", y, self.f("fabs", x)))
        return self.special("asinh", z, self.sel(self._big(z), big, fin))

    def atanh(self, z):
        b = self.b
        # atanh is odd: compute at the argument with x >= 0 and negate back
        flip = self.less(z[0], 0.0)
        x = b.select(flip, self.neg(z[0]), z[0])
        y = b.select(flip, self.neg(z[1]), z[1])
        one, ay = self.k(1.0), self.f("fabs", y)
        omx = b.fsub(one, x)
        re = b.fmul(self.f("log1p", b.fdiv(b.fmul(self.k(4.0), x),
                                           b.fadd(b.fmul(omx, omx), b.fmul(ay, ay)))),
                    self.k(0.25))
        im = b.fmul(self.neg(self.f("atan2", b.fmul(self.k(-2.0), y),
                                    b.fsub(b.fmul(omx, b.fadd(one, x)), b.fmul(ay, ay)))),
                    self.k(0.5))
        r = (re, im)
        # |z| huge: atanh z ~ 1/z (+ i pi/2 sign)
        half = self.k(0.5)
        h = self.f("hypot", b.fmul(x, half), b.fmul(y, half))
        huge = (b.fdiv(b.fdiv(b.fmul(x, self.k(0.25)), h), h),
                self.neg(self.f("copysign", self.k(math.pi / 2), self.neg(y))))
        r = self.sel(b.or_(self.more(x, self.sqrt_large), self.more(ay, self.sqrt_large)), huge, r)
        # x == 1, y tiny: the log1p form loses y; the pole itself (y == 0) is inf + i y
        near = (self.neg(self.f("log", b.fdiv(self.f("sqrt", ay),
                                              self.f("sqrt", self.f("hypot", ay,
                                                                     self.k(2.0)))))),
                self.f("copysign", b.fmul(self.f("atan2", self.k(2.0), self.neg(ay)), half), y))
        near = self.sel(self.eq(ay, 0.0), (self.k(math.inf), y), near)
        r = self.sel(b.and_(self.eq(x, 1.0), self.less(ay, self.sqrt_min)), near, r)
        r = self.sel(flip, (self.neg(r[0]), self.neg(r[1])), r)
        return self.special("atanh", z, r)

    def cos(self, z):
        return self.cosh(self.times_i(z))

    def sin(self, z):
        return self.from_times_i(self.sinh(self.times_i(z)))

    def tan(self, z):
        return self.from_times_i(self.tanh(self.times_i(z)))

    def asin(self, z):
        return self.from_times_i(self.asinh(self.times_i(z)))

    def atan(self, z):
        return self.from_times_i(self.atanh(self.times_i(z)))

    def quot(self, p, q):
        """``p / q`` by Smith's method, as CPython's complex division (``cmath.log(z, b)``
        divides so): the ratio of the smaller to the larger part of ``q`` keeps it finite;
        NaN parts where ``q`` has a NaN part, and where ``q`` is zero (Python raises)."""
        b, (a, bi), (c, d) = self.b, p, q
        ac, ad = self.f("fabs", c), self.f("fabs", d)
        r1 = b.fdiv(d, c)
        den1 = b.fadd(c, b.fmul(d, r1))
        one = (b.fdiv(b.fadd(a, b.fmul(bi, r1)), den1), b.fdiv(b.fsub(bi, b.fmul(a, r1)), den1))
        r2 = b.fdiv(c, d)
        den2 = b.fadd(b.fmul(c, r2), d)
        two = (b.fdiv(b.fadd(b.fmul(a, r2), bi), den2), b.fdiv(b.fsub(b.fmul(bi, r2), a), den2))
        nan = (self.k(math.nan), self.k(math.nan))
        out = self.sel(b.fcmp_ordered(">=", ad, ac), two, nan)
        out = self.sel(b.fcmp_ordered(">=", ac, ad), one, out)
        zero = b.and_(self.eq(c, 0.0), self.eq(d, 0.0))
        return self.sel(zero, (self.k(0.0), self.k(0.0)), out)

    def rect(self, r, phi):
        """``cmath.rect(r, phi)`` of two reals, CPython's cases: ``phi == 0`` gives
        ``(r, r * phi)`` (its signed zero), an infinite ``r`` with a finite nonzero ``phi``
        infinite parts signed by ``cos phi``/``sin phi``, any other infinite or NaN part
        the special-value table (``rect(0, inf)`` is 0)."""
        b = self.b
        c, s = self.f("cos", phi), self.f("sin", phi)
        fin = (b.fmul(r, c), b.fmul(r, s))
        fin = self.sel(self.eq(phi, 0.0), (r, b.fmul(r, phi)), fin)
        out = self.special("rect", (r, phi), fin)
        inf = self.f("copysign", self.k(math.inf), r)
        edge = (self.f("copysign", inf, b.fmul(inf, c)),
                self.f("copysign", inf, b.fmul(inf, s)))
        return self.sel(self.inf_real((r, phi)), edge, out)

    def log10(self, z):
        r = self.log(z)
        ln10 = self.k(math.log(10.0))
        return (self.b.fdiv(r[0], ln10), self.b.fdiv(r[1], ln10))


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
        return _pack(lw, rt, c.rect(r, phi))
    at = lw.ty(node.args[0])
    ct = T.complex64 if at in (T.complex64, T.float32, T.float16) else T.complex128
    if name == "log" and len(node.args) == 2:
        ct = rt     # log(z, base) computes in its result type
    c = _C(lw, ct.underlying_float)
    z = _operand(lw, node, ct)
    if name == "log" and len(node.args) == 2:
        base = cast(b, lw.expr(node.args[1]), lw.ty(node.args[1]), ct)
        base = (b.extract_value(base, 0), b.extract_value(base, 1))
        return _pack(lw, rt, c.quot(c.log(z), c.log(base)))
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

