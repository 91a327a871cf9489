"""Bit-exact rounding to the GPU's narrow float formats: bfloat16 and FP8 (E4M3, E5M2, E8M0).

Every function gives the bits the GPU's conversion instruction gives, so the simulator and
the host agree with a kernel bit for bit:

- bfloat16 (1 sign, 8 exponent, 7 mantissa bits; IEEE-like with subnormals, inf and NaN):
  ``cvt.{rn,rz,rm,rp}.bf16.f32`` / ``cvt.rn.bf16.f64`` / ``cvt.{rn,rz,rm,rp}.bf16.{s,u}N``;
  a NaN float32 or integer-path input gives the canonical NaN ``0x7FFF`` (``CUDART_NAN_BF16``,
  what ``cuda_bf16.hpp``'s conversions produce), while ``cvt.rn.bf16.f64`` keeps a NaN's sign
  and the top 7 payload bits with the quiet bit set (``0x7FC0`` for float64's default NaN);
  overflow gives inf under ``rn`` and the largest
  finite value or inf by the direction of the mode otherwise, as IEEE directed rounding.
- bfloat16 to integers: ``cvt.{rni,rzi,rmi,rpi}.{s,u}N.bf16``: rounded in the mode, clamped
  to the integer type's range; NaN gives 0 for 8 to 32 bits and ``0x8000000000000000`` for
  64 bits (signed and unsigned), as an H200 computes it.
- FP8 E4M3 (bias 7, no inf, NaN ``S.1111.111``, largest 448) and E5M2 (bias 15, IEEE-like,
  largest 57344): ``cvt.rn.satfinite.{e4m3x2,e5m2x2}.f32``: round to nearest even, values
  beyond the largest finite (and ±inf) clamp to ±largest finite, NaN gives ``0x7F``.  Without
  saturation (``cuda_fp8.hpp``'s ``__NV_NOSAT``) overflow gives NaN for E4M3 and ±inf for
  E5M2.
- E8M0 (an unsigned power of two ``2**(bits - 127)``, ``0xFF`` is NaN, no zero): from float32
  rounding toward zero (``rz``) or up (``rp``) on the exponent, as ``cvt.{rz,rp}.satfinite
  .ue8m0x2.f32``: values below ``2**-127`` give ``0x00``, values at or above ``2**128``
  (and +inf) give ``0xFE`` when saturating, ``0xFF`` otherwise; NaN gives ``0xFF``.

Scalars are handled with Python integers (exact); the NumPy array functions are vectorised
versions of the same rules for float32 and float64 inputs.
"""
import math

import numpy as np

__all__ = ["ROUNDING_MODES", "BF16_NAN", "f32_to_bf16_bits", "f64_to_bf16_bits",
           "bf16_bits_to_f32", "round_exact_to_bf16", "int_to_bf16_bits", "bf16_to_int",
           "fma_bf16_bits", "FP8_FORMATS", "float_to_fp8_bits", "fp8_bits_to_f32",
           "float_to_e8m0_bits", "e8m0_bits_to_f32", "double_to_fp8_bits",
           "fp8_bits_to_f16_bits", "F16_NAN", "e8m0_bits_to_bf16_bits", "bf16_bits_to_e8m0_bits",
           "int_to_e8m0_bits"]

#: The rounding-mode suffixes of numba-cuda's conversion names and PTX's (``rd`` is PTX
#: ``rm``, ``ru`` is ``rp``).
ROUNDING_MODES = ("rn", "rz", "rd", "ru")

#: bfloat16's canonical NaN.
BF16_NAN = 0x7FFF
#: float16's canonical NaN (``cuda_fp8.hpp``'s FP8 → half conversion gives it for a NaN).
F16_NAN = 0x7FFF

_U16, _U32, _U64 = np.uint16, np.uint32, np.uint64


def _check_mode(mode):
    if mode not in ROUNDING_MODES:
        raise ValueError(f"rounding mode must be one of {ROUNDING_MODES}, got {mode!r}")


# ---- bfloat16 ------------------------------------------------------------------------------
def f32_to_bf16_bits(x, mode="rn"):
    """bfloat16 bits (uint16 array, or a NumPy uint16 scalar for a scalar ``x``) of float32
    values ``x`` rounded in ``mode`` (``'rn'``, ``'rz'``, ``'rd'``, ``'ru'``), as
    ``cvt.<mode>.bf16.f32``.  ValueError for another mode."""
    _check_mode(mode)
    a = np.asarray(x, dtype=np.float32)
    u = a.view(_U32).astype(_U64)
    low = u & 0xFFFF
    neg = (u >> 31) == 1
    if mode == "rn":
        r = (u + 0x7FFF + ((u >> 16) & 1)) >> 16
    elif mode == "rz":
        r = u >> 16
    else:
        away = neg if mode == "rd" else ~neg
        r = (u >> 16) + ((low != 0) & away)
    r = np.where((u & 0x7FFFFFFF) > 0x7F800000, BF16_NAN, r).astype(_U16)
    return r[()] if r.ndim == 0 else r


def f64_to_bf16_bits(x):
    """bfloat16 bits of float64 values ``x`` rounded once to nearest even, as
    ``cvt.rn.bf16.f64`` (float64 → float32 is rounded to odd first, which makes the second
    rounding exact)."""
    d = np.asarray(x, dtype=np.float64)
    with np.errstate(over="ignore", invalid="ignore"):
        t = d.astype(np.float32)
        t = np.where(np.abs(t.astype(np.float64)) > np.abs(d), np.nextafter(t, np.float32(0)),
                     t).astype(np.float32)
        inexact = (t.astype(np.float64) != d) & ~np.isnan(d)
    bits = t.view(_U32) | inexact.astype(_U32)
    r = f32_to_bf16_bits(bits.view(np.float32), "rn")
    nan = np.isnan(d)
    if np.any(nan):
        # unlike the float32 conversion, cvt.rn.bf16.f64 keeps a NaN's sign and the top 7
        # bits of its payload, and sets the quiet bit (seen on an H200: 0xFFF4.. -> 0xFFE0)
        u = d.view(_U64)
        quiet = ((u >> 48) & 0x8000) | 0x7FC0 | ((u >> 45) & 0x7F)
        r = np.where(nan, quiet.astype(_U16), r).astype(_U16)
        r = r[()] if r.ndim == 0 else r
    return r


def bf16_bits_to_f32(bits):
    """float32 values of bfloat16 bits (exact, as ``cvt.f32.bf16``; NaN payloads kept)."""
    b = np.asarray(bits).astype(_U16).astype(_U32) << 16
    r = b.view(np.float32)
    return r[()] if r.ndim == 0 else r


def _split(v):
    """``(sign, m, e)`` with ``v == (-1)**sign * m * 2**e`` exactly, for a finite Python
    float or int ``v`` (m ≥ 0 an int)."""
    if isinstance(v, int):
        return (1 if v < 0 else 0), abs(v), 0
    sign = 1 if math.copysign(1.0, v) < 0 else 0
    frac, exp = math.frexp(abs(v))
    return sign, int(math.ldexp(frac, 53)), exp - 53


def _round_to_grid(sign, m, e, q, mode):
    """``m * 2**e`` rounded to a multiple of ``2**q`` in ``mode``: the integer multiple."""
    if e >= q:
        return m << (e - q)
    k = q - e
    n = m >> k
    rem = m - (n << k)
    if rem:
        if mode == "rn":
            half = 1 << (k - 1)
            n += rem > half or (rem == half and n & 1)
        elif (mode == "ru" and not sign) or (mode == "rd" and sign):
            n += 1
    return n


def _encode(sign, m, e, mode, mbits, bias, emax_field, max_mant, overflow):
    """Bits of ``(-1)**sign * m * 2**e`` in a format with ``mbits`` mantissa bits, exponent
    ``bias``, largest finite value ``(max_mant | 1 << mbits) * 2**(emax_field - bias -
    mbits)``; ``overflow(sign, mode)`` gives the bits for a rounded magnitude beyond it."""
    sbit = sign << (mbits + (emax_field.bit_length() if emax_field else 0))
    if m == 0:
        return sbit
    emin = 1 - bias
    exp = m.bit_length() - 1 + e
    q = max(exp, emin) - mbits
    n = _round_to_grid(sign, m, e, q, mode)
    if n >> (mbits + 1):
        n >>= 1
        q += 1
    if n < (1 << mbits):
        return sbit | n                           # subnormal (or zero)
    field = q + mbits + bias
    mant = n - (1 << mbits)
    if field > emax_field or (field == emax_field and mant > max_mant):
        return overflow(sign, mode)
    return sbit | (field << mbits) | mant


def _bf16_overflow(sign, mode):
    to_inf = mode == "rn" or (mode == "ru" and not sign) or (mode == "rd" and sign)
    return (sign << 15) | (0x7F80 if to_inf else 0x7F7F)


def round_exact_to_bf16(value, mode="rn"):
    """bfloat16 bits (int) of an exact value: a Python int, a finite or non-finite float, or
    a pair of floats ``(hi, lo)`` standing for their exact sum; rounded once in ``mode``."""
    _check_mode(mode)
    if isinstance(value, tuple):
        hi, lo = value
        if not math.isfinite(hi):
            return round_exact_to_bf16(hi, mode)
        s1, m1, e1 = _split(hi)
        s2, m2, e2 = _split(lo)
        e = min(e1, e2)
        total = (-1) ** s1 * (m1 << (e1 - e)) + (-1) ** s2 * (m2 << (e2 - e))
        if total == 0:
            return 0x8000 if s1 and s2 else 0       # -0 + -0 is -0; otherwise +0
        return _encode(1 if total < 0 else 0, abs(total), e, mode, 7, 127, 254, 0x7F,
                       _bf16_overflow)
    if isinstance(value, float):
        if math.isnan(value):
            return BF16_NAN
        if math.isinf(value):
            return 0xFF80 if value < 0 else 0x7F80
    sign, m, e = _split(value)
    return _encode(sign, m, e, mode, 7, 127, 254, 0x7F, _bf16_overflow)


def int_to_bf16_bits(i, mode="rn"):
    """bfloat16 bits (int) of integer ``i`` rounded in ``mode``, as
    ``cvt.<mode>.bf16.{s,u}N``."""
    return round_exact_to_bf16(int(i), mode)


def bf16_to_int(bits, mode, signed, bitwidth):
    """The integer (Python int) bfloat16 ``bits`` converts to in ``mode`` (``'rn'`` ties to
    even, ``'rz'``, ``'rd'``, ``'ru'``) for an integer type of ``bitwidth`` bits, as
    ``cvt.r?i.{s,u}N.bf16``: clamped to the type's range; NaN gives 0, or ``1 << 63`` (as
    ``-(1 << 63)`` when signed) for 64 bits."""
    _check_mode(mode)
    f = float(bf16_bits_to_f32(bits))
    lo, hi = (-(1 << (bitwidth - 1)), (1 << (bitwidth - 1)) - 1) if signed \
        else (0, (1 << bitwidth) - 1)
    if math.isnan(f):
        # 32 bits and narrower give 0; the 64-bit conversions give bit 63 alone (an H200's
        # cvt.r?i.{s,u}64.bf16, as cvt from float32)
        return (-(1 << 63) if signed else 1 << 63) if bitwidth == 64 else 0
    if math.isinf(f):
        return hi if f > 0 else lo
    if mode == "rn":
        n = round(f)                # Python rounds ties to even
    elif mode == "rz":
        n = math.trunc(f)
    elif mode == "rd":
        n = math.floor(f)
    else:
        n = math.ceil(f)
    return min(max(n, lo), hi)


def fma_bf16_bits(a, b, c):
    """bfloat16 bits (int) of ``a * b + c`` for bfloat16 bits ``a``, ``b``, ``c``, rounded
    once to nearest even as ``fma.rn.bf16`` (a NaN result is the canonical NaN)."""
    x, y, z = (float(bf16_bits_to_f32(v)) for v in (a, b, c))
    p = x * y                       # exact: 8-bit by 8-bit significands
    s = p + z
    if not math.isfinite(s):
        return BF16_NAN if math.isnan(s) else round_exact_to_bf16(s)
    bb = s - p
    err = (p - (s - bb)) + (z - bb)         # TwoSum: p + z == s + err exactly
    if s == 0 and err == 0:
        return round_exact_to_bf16((p, z))   # the sign of an exact zero
    return round_exact_to_bf16((s, err))


# ---- FP8 ------------------------------------------------------------------------------------
#: ``name: (mantissa bits, bias, largest exponent field, largest mantissa at that field,
#: has inf)``.
FP8_FORMATS = {"e4m3": (3, 7, 15, 0b110, False), "e5m2": (2, 15, 30, 0b11, True)}


def float_to_fp8_bits(x, fmt, saturate=True):
    """FP8 bits (int) of the float ``x`` (Python float / NumPy float16/32/64; integers are
    exact as floats first) in format ``fmt`` (``'e4m3'`` or ``'e5m2'``), rounded to nearest
    even, as ``cvt.rn.satfinite.<fmt>x2.f32`` when ``saturate`` (see the module docstring
    for the no-saturation rule).  ValueError for another format."""
    if fmt not in FP8_FORMATS:
        raise ValueError(f"FP8 format must be one of {tuple(FP8_FORMATS)}, got {fmt!r}")
    mbits, bias, emax_field, max_mant, has_inf = FP8_FORMATS[fmt]
    v = float(x)
    maxfin = emax_field << mbits | max_mant

    def overflow(sign, mode):
        if saturate:
            return sign << 7 | maxfin
        return sign << 7 | (0x7C if has_inf else 0x7F)

    if math.isnan(v):
        return 0x7F
    sign = 1 if math.copysign(1.0, v) < 0 else 0
    if math.isinf(v):
        return overflow(sign, "rn")
    s, m, e = _split(v)
    return _encode(s, m, e, "rn", mbits, bias, emax_field, max_mant, overflow)


def fp8_bits_to_f32(bits, fmt):
    """The float32 value of FP8 ``bits`` (int 0..255) in ``fmt`` (exact, as
    ``cvt.rn.f16x2.<fmt>x2`` then to float32)."""
    if fmt not in FP8_FORMATS:
        raise ValueError(f"FP8 format must be one of {tuple(FP8_FORMATS)}, got {fmt!r}")
    mbits, bias, emax_field, max_mant, has_inf = FP8_FORMATS[fmt]
    bits = int(bits) & 0xFF
    sign = -1.0 if bits & 0x80 else 1.0
    field = (bits >> mbits) & ((1 << (7 - mbits)) - 1)
    mant = bits & ((1 << mbits) - 1)
    top = (1 << (7 - mbits)) - 1
    if has_inf and field == top:
        return np.float32(sign * math.inf) if mant == 0 else np.float32(math.nan)
    if not has_inf and field == top and mant == (1 << mbits) - 1:
        return np.float32(math.nan)
    if field == 0:
        return np.float32(sign * math.ldexp(mant, 1 - bias - mbits))
    return np.float32(sign * math.ldexp(mant | 1 << mbits, field - bias - mbits))


def float_to_e8m0_bits(x, mode="rz", saturate=True):
    """E8M0 bits (int) of float ``x`` rounded on its exponent toward zero (``'rz'``) or up
    (``'ru'``; PTX ``rp``), as ``cvt.<mode>.satfinite.ue8m0x2.f32`` (see the module
    docstring).  E8M0 is unsigned: the magnitude of ``x`` is converted.  ValueError for
    another mode."""
    if mode not in ("rz", "ru"):
        raise ValueError(f"E8M0 rounding mode must be 'rz' or 'ru', got {mode!r}")
    v = abs(float(x))
    if math.isnan(v):
        return 0xFF
    if math.isinf(v):
        return 0xFE if saturate else 0xFF
    if v == 0:
        return 0x00
    frac, exp = math.frexp(v)        # v = frac * 2**exp, 0.5 <= frac < 1
    e = exp - 1
    if mode == "ru" and frac != 0.5:
        e += 1
    field = e + 127
    if field < 0:
        return 0x00
    if field > 0xFE:
        return 0xFE if saturate else 0xFF
    return field


def e8m0_bits_to_f32(bits):
    """The float32 value ``2**(bits - 127)`` of E8M0 ``bits`` (0xFF is NaN; 0x00 is
    ``2**-127``, a float32 subnormal)."""
    bits = int(bits) & 0xFF
    if bits == 0xFF:
        return np.float32(math.nan)
    return np.float32(math.ldexp(1.0, bits - 127))


def double_to_fp8_bits(x, fmt, saturate=True):
    """FP8 bits (int) of float64 ``x`` in ``fmt`` (``'e4m3'`` / ``'e5m2'``), rounded once to
    nearest even, as ``cuda_fp8.hpp``'s ``__nv_cvt_double_to_fp8`` (no PTX instruction
    converts from float64; the device runs that software conversion): as
    :func:`float_to_fp8_bits` except for a NaN, which keeps its sign and gives ``0x7F``
    (E4M3) or ``0x7E`` with the top mantissa bit of the NaN's payload below the quiet bit
    (E5M2: ``0x7E`` for float64's default NaN).  ValueError for another format."""
    v = float(x)
    if fmt not in FP8_FORMATS:
        raise ValueError(f"FP8 format must be one of {tuple(FP8_FORMATS)}, got {fmt!r}")
    if math.isnan(v):
        u = int(np.float64(v).view(_U64))
        sign = (u >> 63) << 7
        return sign | (0x7F if fmt == "e4m3" else 0x7E | ((u >> 50) & 0x3))
    return float_to_fp8_bits(v, fmt, saturate)


def fp8_bits_to_f16_bits(bits, fmt):
    """float16 bits (int) of FP8 ``bits`` in ``fmt`` (exact, as ``cvt.rn.f16x2.<fmt>x2``); a
    NaN gives the canonical :data:`F16_NAN`, as ``cuda_fp8.hpp``'s conversion."""
    f = fp8_bits_to_f32(bits, fmt)
    if math.isnan(f):
        return F16_NAN
    return int(np.float16(f).view(_U16))


def e8m0_bits_to_bf16_bits(bits):
    """bfloat16 bits (int) of E8M0 ``bits``: ``2**(bits - 127)`` exactly (``0x00`` is the
    bfloat16 subnormal ``0x0040``), ``0xFF`` the canonical NaN, as ``cuda_fp8.hpp``'s
    ``__nv_cvt_e8m0_to_bf16raw``."""
    bits = int(bits) & 0xFF
    if bits == 0xFF:
        return BF16_NAN
    return 0x0040 if bits == 0 else bits << 7


def bf16_bits_to_e8m0_bits(bits, mode="rz", saturate=True):
    """E8M0 bits (int) of the bfloat16 ``bits`` rounded on the exponent toward zero
    (``'rz'``) or up (``'ru'``) as ``cuda_fp8.hpp``'s ``__nv_cvt_bfloat16raw_to_e8m0``: the
    exponent field of the magnitude, plus one under ``'ru'`` for a finite value above
    ``2**-127`` with mantissa bits; ±inf gives ``0xFE`` when saturating and ``0xFF``
    otherwise, NaN ``0xFF``, zero ``0x00``.  ValueError for another mode."""
    if mode not in ("rz", "ru"):
        raise ValueError(f"E8M0 rounding mode must be 'rz' or 'ru', got {mode!r}")
    b = int(bits) & 0xFFFF
    mag = b & 0x7FFF
    res = (b >> 7) & 0xFF
    if mode == "ru" and (b & 0x7F) and 0x0040 < mag < 0x7F80:
        res += 1
    if saturate and mag <= 0x7F80 and res == 0xFF:
        res = 0xFE
    return res


def int_to_e8m0_bits(i):
    """E8M0 bits (int) of integer ``i``: its magnitude rounded up to a power of two (the
    ``__nv_fp8_e8m0`` constructors from integers, exact for every width); 0 gives ``0x00``."""
    m = abs(int(i))
    if m == 0:
        return 0x00
    e = m.bit_length() - 1
    if m & (m - 1):
        e += 1
    return min(e + 127, 0xFE)
