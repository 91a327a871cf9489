"""The FP8 value of the host and the simulator (:class:`FP8`): numba-cuda's ``fp8_e5m2``,
``fp8_e4m3`` and ``fp8_e8m0`` storage types (``cuda_fp8.hpp``'s ``__nv_fp8_e5m2`` ...).

An :class:`FP8` holds the 8 bits of one value and its format (``'e4m3'``, ``'e5m2'``,
``'e8m0'``); it has no arithmetic (the CUDA types have none), only the conversions of the
CUDA constructors and conversion operators, computed bit for bit as an sm_89+ GPU does
(rounding by :mod:`cujit.narrow_floats`):

- to E4M3 / E5M2 from float16, float32, bfloat16 (exact in float32): round to nearest even,
  saturating to the largest finite (``cvt.rn.satfinite.<fmt>x2.f32``); from float64 rounded
  once (``__nv_cvt_double_to_fp8``); from an integer through float32 (rounded to nearest).
- to E8M0 from a float or an integer: the magnitude's exponent rounded up
  (``cudaRoundPosInf``), saturating to ``0xFE`` (``2**127``); NaN gives ``0xFF``.
- from E4M3 / E5M2: float16 exact (NaN the canonical ``0x7FFF``), float32 and float64 through
  it; bfloat16 exact (``__float2bfloat16_rz``); integers truncated toward zero and clamped to
  the type's range, NaN giving 0 (``1 << 63`` for 64 bits), as ``__half2int_rz`` & co.
- from E8M0: bfloat16 exact (``__nv_cvt_e8m0_to_bf16raw``; ``0xFF`` the canonical NaN),
  float32 and float64 through it, float16 rounded to nearest from float32, integers as above.
- truth: nonzero magnitude bits (a NaN is true) for E4M3 / E5M2; always true for E8M0 (it
  has no zero).
"""
import numpy as np

from . import bf16_scalar
from . import narrow_floats as nf

__all__ = ["FP8", "FORMATS"]

#: The FP8 formats, by the name of their type (``fp8_e4m3`` ...).
FORMATS = ("e4m3", "e5m2", "e8m0")


def _check_fmt(fmt):
    if fmt not in FORMATS:
        raise ValueError(f"FP8 format must be one of {FORMATS}, got {fmt!r}")


def _bits_of(fmt, value):
    """The bits of ``fp8_<fmt>(value)`` (see the module docstring)."""
    if isinstance(value, FP8):
        raise TypeError(f"fp8_{fmt}() takes a float, bfloat16 or integer value, got "
                        f"{value!r}: convert FP8 values through float32(x)")
    if isinstance(value, bf16_scalar.BF16):
        if fmt == "e8m0":
            return nf.bf16_bits_to_e8m0_bits(value.bits, "ru", True)
        return nf.float_to_fp8_bits(value.to_float32(), fmt, True)
    if isinstance(value, (bool, np.bool_, int, np.integer)):
        if fmt == "e8m0":
            return nf.int_to_e8m0_bits(int(value))
        return nf.float_to_fp8_bits(np.float32(int(value)), fmt, True)
    if isinstance(value, (np.float32, np.float16)):
        if fmt == "e8m0":
            return nf.float_to_e8m0_bits(np.float32(value), "ru", True)
        return nf.float_to_fp8_bits(np.float32(value), fmt, True)
    if isinstance(value, (float, np.floating)):
        if fmt == "e8m0":
            return nf.float_to_e8m0_bits(float(value), "ru", True)
        return nf.double_to_fp8_bits(float(value), fmt, True)
    raise TypeError(f"fp8_{fmt}() takes a float, bfloat16 or integer value, got {value!r} "
                    f"({type(value).__name__})")


class FP8:
    """One FP8 value of format ``fmt`` (``'e4m3'``, ``'e5m2'`` or ``'e8m0'``).
    ``FP8(fmt, x)`` converts ``x`` (int, float, NumPy scalar, ``BF16``) as the CUDA
    constructor; ``FP8.from_bits(fmt, b)`` takes the 8 bits.  ValueError for another format,
    TypeError for a value that is not a number (or is an FP8 value)."""
    __slots__ = ("fmt", "bits")

    def __init__(self, fmt, value=0):
        _check_fmt(fmt)
        self.fmt = fmt
        self.bits = _bits_of(fmt, value)

    @classmethod
    def from_bits(cls, fmt, bits):
        """The value of format ``fmt`` whose bits are ``bits`` (an int, taken modulo 256)."""
        _check_fmt(fmt)
        v = object.__new__(cls)
        v.fmt = fmt
        v.bits = int(bits) & 0xFF
        return v

    # ---- conversions ------------------------------------------------------------------------
    def to_float16(self):
        """The np.float16 value (exact for E4M3 / E5M2; E8M0 rounded to nearest)."""
        if self.fmt == "e8m0":
            if self.bits == 0xFF:
                return np.uint16(nf.F16_NAN).view(np.float16)
            with np.errstate(over="ignore", under="ignore"):
                return np.float16(self.to_float32())
        return np.uint16(nf.fp8_bits_to_f16_bits(self.bits, self.fmt)).view(np.float16)

    def to_float32(self):
        """The exact np.float32 value (a NaN as the GPU's conversion gives it: E4M3 / E5M2
        go through float16, whose ``cvt.f32.f16`` gives the canonical NaN 0x7FFFFFFF on an
        H200; E8M0 through bfloat16, 0x7FFF0000)."""
        if self.fmt == "e8m0":
            return nf.bf16_bits_to_f32(nf.e8m0_bits_to_bf16_bits(self.bits))
        h = self.to_float16()
        if np.isnan(h):
            return np.uint32(0x7FFFFFFF).view(np.float32)
        return h.astype(np.float32)

    def to_float64(self):
        """The exact np.float64 value (a NaN the float32 one widened, as the compiled
        conversion: 0x7FFFFFFFE0000000 for E4M3 / E5M2)."""
        return self.to_float32().astype(np.float64)

    def to_bfloat16(self):
        """The exact :class:`~cujit.bf16_scalar.BF16` value (a NaN is the canonical one)."""
        if self.fmt == "e8m0":
            return bf16_scalar.BF16.from_bits(nf.e8m0_bits_to_bf16_bits(self.bits))
        return bf16_scalar.BF16.from_bits(int(nf.f32_to_bf16_bits(self.to_float32(), "rz")))

    def to_int(self, signed, bitwidth):
        """The integer (Python int) of an integer type of ``bitwidth`` bits: truncated toward
        zero, clamped to the type's range, NaN 0 (``1 << 63`` for 64 bits)."""
        return nf.bf16_to_int(self.to_bfloat16().bits, "rz", signed, bitwidth)

    def __float__(self):
        return float(self.to_float32())

    def __int__(self):
        return self.to_int(True, 64)

    def __bool__(self):
        return True if self.fmt == "e8m0" else (self.bits & 0x7F) != 0

    def __repr__(self):
        return f"fp8_{self.fmt}({float(self)!r})"

    def __eq__(self, other):
        # the same format and bits (the CUDA types have no comparison operators)
        if not isinstance(other, FP8):
            return NotImplemented
        return self.fmt == other.fmt and self.bits == other.bits

    def __hash__(self):
        return hash((self.fmt, self.bits))
