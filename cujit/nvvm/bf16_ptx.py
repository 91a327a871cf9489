"""bfloat16 in NVVM IR: the value is an ``i16`` (libNVVM's LLVM 7 dialect has no ``bfloat``
type) and every operation that rounds is inline PTX, so it is the GPU's instruction:
``cvt.{rn,rz,rm,rp}.bf16.f32``, ``cvt.rn.bf16.f64``, ``cvt.{rn,rz,rm,rp}.bf16.{s,u}N``,
``cvt.{rni,rzi,rmi,rpi}.{s,u}N.bf16``, ``fma.rn.bf16`` (``+ - *`` as numba-cuda's sm_80
path: ``a*1+b``, ``b*-1+a``, ``a*b-0``), ``fma.rn.relu.bf16``, ``max``/``min``
(``.NaN``) ``.bf16``.  Widening to float32 is exact and needs no instruction (the bits
shifted up 16), so comparisons and ``/`` (float32 quotient, then ``cvt.rn``) go through
float32.  ``fma``/``max``/``min`` need sm_80, the other conversions sm_90 (the H200).
:mod:`cujit.narrow_floats` computes the same bits in the simulator.
"""
from llvmlite import ir

__all__ = ["I16", "to_f32", "from_f32", "from_f64", "from_int", "to_int", "fma", "add",
           "sub", "mul", "div", "neg", "abs_", "extremum", "fma_relu", "bits_const", "truth"]

I16, I32 = ir.IntType(16), ir.IntType(32)
F32, F64 = ir.FloatType(), ir.DoubleType()
_PTX_MODE = {"rn": "rn", "rz": "rz", "rd": "rm", "ru": "rp"}
_ONE, _NEG_ONE, _NEG_ZERO = 0x3F80, 0xBF80, 0x8000


def bits_const(bits):
    """The ``i16`` constant of bfloat16 ``bits``."""
    return ir.Constant(I16, int(bits) & 0xFFFF)


def _asm(b, ret, text, cons, args):
    return b.asm(ir.FunctionType(ret, [a.type for a in args]), text, cons, args,
                 side_effect=False)


def to_f32(b, v):
    """float32 of bfloat16 ``v`` (exact: the bits are the float32's upper half)."""
    return b.bitcast(b.shl(b.zext(v, I32), ir.Constant(I32, 16)), F32)


def from_f32(b, v, mode="rn"):
    """bfloat16 of float32 ``v`` rounded in ``mode`` (``cvt.<mode>.bf16.f32``)."""
    return _asm(b, I16, f"cvt.{_PTX_MODE[mode]}.bf16.f32 $0, $1;", "=h,f", [v])


def from_f64(b, v):
    """bfloat16 of float64 ``v`` rounded once to nearest even (``cvt.rn.bf16.f64``)."""
    return _asm(b, I16, "cvt.rn.bf16.f64 $0, $1;", "=h,d", [v])


def _widen_int(b, v, signed):
    """(value, PTX type width, constraint) for an integer ``v``: 8-bit and 1-bit values go in
    a 16-bit register (PTX has no 8-bit operand constraint)."""
    w = v.type.width
    if w < 16:
        v = (b.sext if signed else b.zext)(v, I16)
        w = 16
    return v, w, {16: "h", 32: "r", 64: "l"}[w]


def from_int(b, v, signed, mode="rn"):
    """bfloat16 of integer ``v`` rounded in ``mode`` (``cvt.<mode>.bf16.{s,u}N``)."""
    v, w, c = _widen_int(b, v, signed)
    return _asm(b, I16, f"cvt.{_PTX_MODE[mode]}.bf16.{'s' if signed else 'u'}{w} $0, $1;",
                f"=h,{c}", [v])


def to_int(b, v, signed, width, mode):
    """Integer of ``width`` bits of bfloat16 ``v`` rounded in ``mode``, clamped to the type's
    range, NaN to 0 (``cvt.<mode>i.{s,u}N.bf16``)."""
    t = ("s" if signed else "u")
    m = _PTX_MODE[mode] + "i"
    if width == 8:
        r = _asm(b, I16, f"{{ .reg .{t}8 c; cvt.{m}.{t}8.bf16 c, $1; cvt.{t}16.{t}8 $0, c; }}",
                 "=h,h", [v])
        return b.trunc(r, ir.IntType(8))
    c = {16: "h", 32: "r", 64: "l"}[width]
    return _asm(b, ir.IntType(width), f"cvt.{m}.{t}{width}.bf16 $0, $1;", f"={c},h", [v])


def fma(b, x, y, z):
    """``x * y + z`` rounded once (``fma.rn.bf16``)."""
    return _asm(b, I16, "fma.rn.bf16 $0, $1, $2, $3;", "=h,h,h,h", [x, y, z])


def fma_relu(b, x, y, z):
    """``max(x * y + z, 0)`` rounded once (``fma.rn.relu.bf16``)."""
    return _asm(b, I16, "fma.rn.relu.bf16 $0, $1, $2, $3;", "=h,h,h,h", [x, y, z])


def add(b, x, y):
    """``x + y`` (``fma.rn.bf16 x, 1, y``)."""
    return fma(b, x, bits_const(_ONE), y)


def sub(b, x, y):
    """``x - y`` (``fma.rn.bf16 y, -1, x``)."""
    return fma(b, y, bits_const(_NEG_ONE), x)


def mul(b, x, y):
    """``x * y`` (``fma.rn.bf16 x, y, -0``)."""
    return fma(b, x, y, bits_const(_NEG_ZERO))


def div(b, x, y):
    """``x / y``: the float32 quotient (``div.rn.f32``) rounded once."""
    return from_f32(b, b.fdiv(to_f32(b, x), to_f32(b, y)))


def neg(b, x):
    """``-x``: the sign bit flipped."""
    return b.xor(x, bits_const(0x8000))


def abs_(b, x):
    """``|x|``: the sign bit cleared."""
    return b.and_(x, bits_const(0x7FFF))


def extremum(b, x, y, larger, nan):
    """``max.bf16`` / ``min.bf16`` (``nan``: the ``.NaN`` variant)."""
    op = ("max" if larger else "min") + (".NaN" if nan else "")
    return _asm(b, I16, f"{op}.bf16 $0, $1, $2;", "=h,h,h", [x, y])


def truth(b, x):
    """i1: ``x`` is not ±0."""
    return b.icmp_unsigned("!=", b.and_(x, bits_const(0x7FFF)), bits_const(0))
