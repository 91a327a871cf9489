"""FP8 in NVVM IR: a value is its ``i8`` bits; the conversions are those of
``cuda_fp8.hpp`` on an sm_89+ GPU (the H200 is sm_90), so the bits are the GPU's and
:mod:`cujit.narrow_floats` / :mod:`cujit.fp8_scalar` compute the same in the simulator.

- E4M3 / E5M2 from float32: ``cvt.rn.satfinite.{e4m3x2,e5m2x2}.f32`` (the only form: PTX
  requires ``.satfinite``); without saturation a magnitude beyond the rounding boundary
  (E4M3 > 464, E5M2 >= 61440, ±inf) then gives NaN / ±inf, as ``cuda_fp8.hpp``'s software
  path.  From float64 the value is first rounded to float32 toward zero with a sticky bit
  (round to odd: float32 keeps 20 more bits than FP8, so rounding that once more is the
  single rounding of the float64), the NaN rule of ``__nv_cvt_double_to_fp8`` applied apart.
- E4M3 / E5M2 to float16: ``cvt.rn.f16x2.{e4m3x2,e5m2x2}`` (exact), a NaN made the
  canonical ``0x7FFF``; float32 and float64 are exact widenings of it.
- E8M0 (no PTX instruction before sm_100): integer code as ``cuda_fp8.hpp``'s, on the
  bfloat16 bits (``cvt.rz.bf16.f32`` / ``cvt.rp.bf16.f32`` first, sm_90).
"""
from llvmlite import ir

from . import bf16_ptx

__all__ = ["I8", "to_f16", "to_f32", "to_bf16", "from_f32", "from_f64", "from_int",
           "e8m0_from_f32", "e8m0_from_f64", "e8m0_from_bf16", "e8m0_to_bf16", "truth"]

I1, I8, I16, I32, I64 = (ir.IntType(w) for w in (1, 8, 16, 32, 64))
F16, F32, F64 = ir.HalfType(), ir.FloatType(), ir.DoubleType()
#: ``fmt: (largest magnitude that rounds to a finite value under NOSAT (exclusive for E5M2,
#: whose boundary tie rounds up to inf), the overflow bits without saturation)``
_NOSAT = {"e4m3": (464.0, False, 0x7F), "e5m2": (61440.0, True, 0x7C)}


def _c(t, v):
    return ir.Constant(t, v)


def _asm(b, ret, text, cons, args):
    return b.asm(ir.FunctionType(ret, [a.type for a in args]), text, cons, args,
                 side_effect=False)


def _is_nan(b, bits, fmt):
    mag = b.and_(bits, _c(I8, 0x7F))
    if fmt == "e5m2":
        return b.icmp_unsigned(">", mag, _c(I8, 0x7C))
    return b.icmp_unsigned("==", mag, _c(I8, 0x7F))


def to_f16(b, bits, fmt):
    """float16 (LLVM ``half``) of E4M3 / E5M2 ``bits`` (an ``i8``): exact, NaN canonical."""
    h = _asm(b, I16, f"{{ .reg .b32 t; .reg .b16 hi; cvt.rn.f16x2.{fmt}x2 t, $1; "
             "mov.b32 {$0, hi}, t; }", "=h,h", [b.zext(bits, I16)])
    return b.bitcast(b.select(_is_nan(b, bits, fmt), _c(I16, 0x7FFF), h), F16)


def e8m0_to_bf16(b, bits):
    """bfloat16 bits (``i16``) of E8M0 ``bits``: ``bits << 7``, ``0x00`` → ``0x0040``,
    ``0xFF`` → the canonical NaN (``__nv_cvt_e8m0_to_bf16raw``)."""
    r = b.shl(b.zext(bits, I16), _c(I16, 7))
    r = b.select(b.icmp_unsigned("==", bits, _c(I8, 0)), _c(I16, 0x0040), r)
    return b.select(b.icmp_unsigned("==", bits, _c(I8, 0xFF)), _c(I16, 0x7FFF), r)


def to_f32(b, bits, fmt):
    """float32 of FP8 ``bits`` of format ``fmt`` (exact; a NaN is 0x7FFFFFFF)."""
    if fmt == "e8m0":
        return bf16_ptx.to_f32(b, e8m0_to_bf16(b, bits))
    # The H200's cvt.f32.f16 gives the canonical NaN 0x7FFFFFFF at run time, while NVVM
    # folds the half NaN constant to 0x7FFFE000: the NaN is chosen here, so it never depends
    # on what the optimiser folded.
    nan = b.bitcast(_c(I32, 0x7FFFFFFF), F32)
    return b.select(_is_nan(b, bits, fmt), nan, b.fpext(to_f16(b, bits, fmt), F32))


def to_bf16(b, bits, fmt):
    """bfloat16 bits (``i16``) of FP8 ``bits`` (exact; ``__float2bfloat16_rz`` of the float32
    for E4M3 / E5M2)."""
    if fmt == "e8m0":
        return e8m0_to_bf16(b, bits)
    return bf16_ptx.from_f32(b, to_f32(b, bits, fmt), "rz")


def truth(b, bits, fmt):
    """i1: ``bool(v)``: nonzero magnitude bits (E4M3 / E5M2), always true (E8M0)."""
    if fmt == "e8m0":
        return _c(I1, 1)
    return b.icmp_unsigned("!=", b.and_(bits, _c(I8, 0x7F)), _c(I8, 0))


def _nosat_fixup(b, r, mag, sign8, fmt):
    """``r`` with a magnitude ``mag`` (a float, ordered compare) past the no-saturation
    boundary replaced by NaN (E4M3) / ±inf (E5M2)."""
    bound, inclusive, bits = _NOSAT[fmt]
    over = b.fcmp_ordered(">=" if inclusive else ">", mag, _c(mag.type, bound))
    return b.select(over, b.or_(sign8, _c(I8, bits)), r)


def from_f32(b, x, fmt, saturate=True):
    """E4M3 / E5M2 bits (``i8``) of float32 ``x`` rounded to nearest even."""
    pair = _asm(b, I16, f"cvt.rn.satfinite.{fmt}x2.f32 $0, $1, $2;", "=h,f,f",
                [_c(F32, 0.0), x])
    r = b.trunc(pair, I8)
    if saturate:
        return r
    u = b.bitcast(x, I32)
    sign8 = b.trunc(b.lshr(u, _c(I32, 24)), I8)
    sign8 = b.and_(sign8, _c(I8, 0x80))
    mag = b.bitcast(b.and_(u, _c(I32, 0x7FFFFFFF)), F32)
    # a NaN (the compare is ordered) keeps the instruction's canonical 0x7F
    return _nosat_fixup(b, r, mag, sign8, fmt)


def from_f64(b, x, fmt, saturate=True):
    """E4M3 / E5M2 bits of float64 ``x`` rounded once to nearest even
    (``__nv_cvt_double_to_fp8``)."""
    t = _asm(b, F32, "cvt.rz.f32.f64 $0, $1;", "=f,d", [x])
    inexact = b.fcmp_ordered("!=", b.fpext(t, F64), x)
    odd = b.bitcast(b.or_(b.bitcast(t, I32), b.zext(inexact, I32)), F32)
    r = from_f32(b, odd, fmt, True)
    u = b.bitcast(x, I64)
    sign8 = b.and_(b.trunc(b.lshr(u, _c(I64, 56)), I8), _c(I8, 0x80))
    if not saturate:
        mag = b.bitcast(b.and_(u, _c(I64, 0x7FFFFFFFFFFFFFFF)), F64)
        r = _nosat_fixup(b, r, mag, sign8, fmt)
    if fmt == "e4m3":
        nan_bits = b.or_(sign8, _c(I8, 0x7F))
    else:
        top = b.and_(b.trunc(b.lshr(u, _c(I64, 50)), I8), _c(I8, 0x3))
        nan_bits = b.or_(sign8, b.or_(top, _c(I8, 0x7E)))
    return b.select(b.fcmp_unordered("uno", x, x), nan_bits, r)


def e8m0_from_bf16(b, v, mode, saturate=True):
    """E8M0 bits of bfloat16 bits ``v`` (``i16``), the exponent rounded toward zero
    (``'rz'``) or up (``'ru'``), as ``__nv_cvt_bfloat16raw_to_e8m0``."""
    res = b.trunc(b.lshr(v, _c(I16, 7)), I8)
    mag = b.and_(v, _c(I16, 0x7FFF))
    if mode == "ru":
        up = b.and_(b.icmp_unsigned("!=", b.and_(v, _c(I16, 0x7F)), _c(I16, 0)),
                    b.and_(b.icmp_unsigned(">", mag, _c(I16, 0x0040)),
                           b.icmp_unsigned("<", mag, _c(I16, 0x7F80))))
        res = b.add(res, b.zext(up, I8))
    if saturate:
        over = b.and_(b.icmp_unsigned("<=", mag, _c(I16, 0x7F80)),
                      b.icmp_unsigned("==", res, _c(I8, 0xFF)))
        res = b.select(over, _c(I8, 0xFE), res)
    return res


def e8m0_from_f32(b, x, mode, saturate=True):
    """E8M0 bits of float32 ``x`` (``__nv_cvt_float_to_e8m0``: through the bfloat16 rounded
    toward zero, or of the magnitude rounded up)."""
    if mode == "ru":
        x = b.bitcast(b.and_(b.bitcast(x, I32), _c(I32, 0x7FFFFFFF)), F32)
    return e8m0_from_bf16(b, bf16_ptx.from_f32(b, x, mode), mode, saturate)


def e8m0_from_f64(b, x, mode, saturate=True):
    """E8M0 bits of float64 ``x``: rounded to float32 keeping a sticky bit
    (``__internal_double_to_float_with_sticky``), then as :func:`e8m0_from_f32`."""
    f = _asm(b, F32, "cvt.rn.f32.f64 $0, $1;", "=f,d", [x])
    d = _asm(b, F64, "cvt.f64.f32 $0, $1;", "=d,f", [f])
    u = b.bitcast(f, I32)
    zero = _c(F64, 0.0)
    down = b.or_(b.and_(b.fcmp_ordered(">", x, zero), b.fcmp_ordered(">", d, x)),
                 b.and_(b.fcmp_ordered("<", x, zero), b.fcmp_ordered("<", d, x)))
    u = b.sub(u, b.zext(down, I32))
    not_nan = b.icmp_unsigned("<=", b.shl(u, _c(I32, 1)), _c(I32, 0xFF000000))
    sticky = b.and_(b.fcmp_unordered("!=", d, x), not_nan)
    u = b.or_(u, b.zext(sticky, I32))
    return e8m0_from_f32(b, b.bitcast(u, F32), mode, saturate)


def from_int(b, v, signed, fmt):
    """FP8 bits of integer ``v``: E4M3 / E5M2 through float32 (rounded to nearest, then
    saturating), E8M0 the magnitude rounded up to a power of two (exact for every width, as
    the ``__nv_fp8_e8m0`` integer constructors)."""
    if fmt != "e8m0":
        f = (b.sitofp if signed else b.uitofp)(v, F32)
        return from_f32(b, f, fmt, True)
    w = (b.sext if signed else b.zext)(v, I64) if v.type.width < 64 else v
    mag = b.select(b.icmp_signed("<", w, _c(I64, 0)), b.neg(w), w) if signed else w
    clz = b.zext(_asm(b, I32, "clz.b64 $0, $1;", "=r,l", [mag]), I64)
    top = b.sub(_c(I64, 63), clz)
    not_pow2 = b.icmp_unsigned("!=", b.and_(mag, b.sub(mag, _c(I64, 1))), _c(I64, 0))
    field = b.add(b.add(top, b.zext(not_pow2, I64)), _c(I64, 127))
    field = b.select(b.icmp_unsigned("==", mag, _c(I64, 0)), _c(I64, 0), field)
    return b.trunc(field, I8)
