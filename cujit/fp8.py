"""``cuda.fp8``: numba-cuda's ``cuda_fp8`` bindings: the FP8 storage types ``fp8_e4m3``,
``fp8_e5m2``, ``fp8_e8m0`` and the ``cvt_*`` conversions, in kernels, on the host and in the
simulator.

Formats (:class:`fp8_interpretation_t`): E4M3 (largest 448, no inf, one NaN per sign) and
E5M2 (largest 57344, IEEE-like); E8M0 is the unsigned power-of-two scale of the MX formats.
Rounding is the GPU's bit for bit (:mod:`cujit.narrow_floats`): to FP8 round to nearest even,
with :data:`saturation_t.SATFINITE` out-of-range values and ±inf clamp to ±largest finite
(``cvt.rn.satfinite.e4m3x2.f32``), with ``NOSAT`` they give NaN (E4M3) or ±inf (E5M2); a
float32 NaN gives ``0x7F``, a float64 NaN keeps its sign (``__nv_cvt_double_to_fp8``).  To
E8M0 the exponent is rounded toward zero or up: the ``mode`` argument is a
``cudaRoundMode`` (``cudaRoundZero`` = 1, ``cudaRoundPosInf`` = 2, from
``cuda.bindings.runtime``) or ``'rz'`` / ``'ru'``.

The types: ``fp8_e4m3(x)`` (x a float16/32/64, bfloat16 or integer) converts as CUDA's
constructor (saturating; E8M0 rounds up), ``float32(v)``, ``float16(v)``, ``float64(v)``,
``bfloat16(v)``, ``int32(v)`` ... convert back (exact; integers truncate and clamp); see
:mod:`cujit.fp8_scalar` for the rules and :class:`cujit.types.FP8` for the type.  FP8 values
have no arithmetic, comparison or array form (as numba-cuda's).

The ``cvt_*`` functions take and give the bits (``uint8``; the bfloat16 bits as a ``ushort1``
whose ``.x`` is the ``uint16``, numba-cuda's ``__nv_bfloat16_raw``).  In kernels their
``saturate`` / ``interp`` / ``mode`` arguments must be compile-time constants (the enum
members).  :data:`KERNEL_FUNCTIONS` (``float32_to_e4m3(x)``, ``e4m3_to_float32(bits)``, the
same for E5M2) are cujit's saturating shorthands.  On the GPU (sm_89+) E4M3 / E5M2 use
``cvt.rn.satfinite.{e4m3x2,e5m2x2}.f32`` and ``cvt.rn.f16x2.{e4m3x2,e5m2x2}``; E8M0 has no
instruction before sm_100, so it is integer code, as ``cuda_fp8.hpp``'s.
"""
import enum

import numpy as np

from . import narrow_floats as nf
from .fp8_scalar import FP8
from .types.core import fp8_e4m3, fp8_e5m2, fp8_e8m0
from .vector_types import vector_types

__all__ = ["fp8_e4m3", "fp8_e5m2", "fp8_e8m0", "FP8", "saturation_t", "fp8_interpretation_t",
           "cvt_float_to_fp8", "cvt_double_to_fp8", "cvt_bfloat16raw_to_fp8",
           "cvt_fp8_to_float", "cvt_float_to_e8m0", "cvt_double_to_e8m0",
           "cvt_bfloat16raw_to_e8m0", "cvt_e8m0_to_bf16raw", "cvt_e8m0_to_float",
           "float32_to_e4m3", "float32_to_e5m2", "e4m3_to_float32", "e5m2_to_float32",
           "KERNEL_FUNCTIONS", "CVT_FUNCTIONS", "round_mode", "interpretation_name", "BF16RAW"]

#: The class of the bfloat16 bits the ``cvt_*`` functions take and give (``ushort1``: one
#: ``uint16`` member ``.x``, as ``__nv_bfloat16_raw``).
BF16RAW = vector_types["uint16x1"]


class saturation_t(enum.IntEnum):
    """What a conversion to FP8 does with values beyond the largest finite (CUDA's
    ``__nv_saturation_t``)."""
    NOSAT = 0
    SATFINITE = 1


class fp8_interpretation_t(enum.IntEnum):
    """The FP8 format (CUDA's ``__nv_fp8_interpretation_t``)."""
    E4M3 = 0
    E5M2 = 1


def interpretation_name(interp):
    """``'e4m3'`` or ``'e5m2'`` of an :class:`fp8_interpretation_t` (or its int value).
    ValueError for another value."""
    try:
        return {0: "e4m3", 1: "e5m2"}[int(fp8_interpretation_t(interp))]
    except (ValueError, TypeError):
        raise ValueError(f"FP8 interpretation must be fp8_interpretation_t.E4M3 or .E5M2, "
                         f"got {interp!r}") from None


def round_mode(mode):
    """``'rz'`` or ``'ru'`` of an E8M0 rounding mode: ``cudaRoundMode.cudaRoundZero`` (1) /
    ``cudaRoundPosInf`` (2), or the strings themselves.  ValueError for another mode (the
    E8M0 conversions round only toward zero or up, as ``cuda_fp8.hpp``'s)."""
    if mode in ("rz", "ru"):
        return mode
    if not isinstance(mode, str):
        try:
            return {1: "rz", 2: "ru"}[int(mode)]
        except (KeyError, TypeError, ValueError):
            pass
    raise ValueError(f"E8M0 rounding mode must be cudaRoundMode.cudaRoundZero, "
                     f"cudaRoundMode.cudaRoundPosInf, 'rz' or 'ru', got {mode!r}")


def _raw_bits(raw):
    if not isinstance(raw, BF16RAW):
        raise TypeError(f"expected the bfloat16 bits as a ushort1 (cvt_e8m0_to_bf16raw's "
                        f"result), got {raw!r}")
    return int(raw.x)


def _sat(saturate):
    try:
        return saturation_t(saturate) is saturation_t.SATFINITE
    except (ValueError, TypeError):
        raise ValueError(f"saturate must be saturation_t.NOSAT or .SATFINITE, got "
                         f"{saturate!r}") from None


def cvt_float_to_fp8(x, saturate, interp):
    """The FP8 bits (int 0..255) of float32 ``x`` (rounded to float32 first).  ValueError
    for an unknown ``saturate`` / ``interp``."""
    return nf.float_to_fp8_bits(np.float32(x), interpretation_name(interp), _sat(saturate))


def cvt_double_to_fp8(x, saturate, interp):
    """The FP8 bits of float64 ``x``, rounded once (a NaN keeps its sign:
    ``narrow_floats.double_to_fp8_bits``)."""
    return nf.double_to_fp8_bits(float(x), interpretation_name(interp), _sat(saturate))


def cvt_bfloat16raw_to_fp8(raw, saturate, interp):
    """The FP8 bits of the bfloat16 whose bits are ``raw.x`` (a ``ushort1``), converted as
    its exact float32.  TypeError for another ``raw``, ValueError for an unknown
    ``saturate`` / ``interp``."""
    fmt = interpretation_name(interp)
    return nf.float_to_fp8_bits(nf.bf16_bits_to_f32(_raw_bits(raw)), fmt, _sat(saturate))


def cvt_fp8_to_float(bits, interp):
    """The float32 value of FP8 ``bits`` (exact)."""
    return nf.fp8_bits_to_f32(bits, interpretation_name(interp))


def cvt_float_to_e8m0(x, saturate, mode="rz"):
    """The E8M0 bits of float32 ``x`` rounded in ``mode`` (:func:`round_mode`).  ValueError
    for an unknown ``saturate`` / ``mode``."""
    return nf.float_to_e8m0_bits(np.float32(x), round_mode(mode), _sat(saturate))


def cvt_double_to_e8m0(x, saturate, mode="rz"):
    """The E8M0 bits of float64 ``x`` rounded in ``mode`` (:func:`round_mode`).  ValueError
    for an unknown ``saturate`` / ``mode``."""
    return nf.float_to_e8m0_bits(float(x), round_mode(mode), _sat(saturate))


def cvt_bfloat16raw_to_e8m0(raw, saturate, mode="rz"):
    """The E8M0 bits of the bfloat16 whose bits are ``raw.x`` (a ``ushort1``), rounded in
    ``mode`` (:func:`round_mode`), as ``__nv_cvt_bfloat16raw_to_e8m0``.  TypeError for
    another ``raw``, ValueError for an unknown ``saturate`` / ``mode``."""
    return nf.bf16_bits_to_e8m0_bits(_raw_bits(raw), round_mode(mode), _sat(saturate))


def cvt_e8m0_to_bf16raw(bits):
    """The bfloat16 bits (a ``ushort1``; ``.x`` the ``uint16``) of E8M0 ``bits`` (the low 8
    bits of an integer): ``2**(bits - 127)`` exactly, 0xFF the canonical NaN 0x7FFF."""
    return BF16RAW(nf.e8m0_bits_to_bf16_bits(int(bits) & 0xFF))


def cvt_e8m0_to_float(bits):
    """The float32 value ``2**(bits - 127)`` of E8M0 ``bits`` (0xFF is NaN)."""
    return nf.e8m0_bits_to_f32(bits)


def float32_to_e4m3(x):
    """E4M3 bits (int) of float32 ``x``, saturating (``cvt.rn.satfinite.e4m3x2.f32``)."""
    return nf.float_to_fp8_bits(np.float32(x), "e4m3", True)


def float32_to_e5m2(x):
    """E5M2 bits (int) of float32 ``x``, saturating (``cvt.rn.satfinite.e5m2x2.f32``)."""
    return nf.float_to_fp8_bits(np.float32(x), "e5m2", True)


def e4m3_to_float32(bits):
    """The float32 value of E4M3 ``bits`` (the low 8 bits of an integer; exact; a NaN as
    the GPU's conversion through float16 gives it)."""
    return FP8.from_bits("e4m3", int(bits)).to_float32()


def e5m2_to_float32(bits):
    """The float32 value of E5M2 ``bits`` (the low 8 bits of an integer; exact; a NaN as
    the GPU's conversion through float16 gives it)."""
    return FP8.from_bits("e5m2", int(bits)).to_float32()


#: The ``cvt_*`` functions kernels call: ``name: (source, target)``; ``source`` is the first
#: argument's kind (``'float32'``, ``'float64'``, ``'bf16raw'``, ``'e8m0'``: the E8M0 bits),
#: ``target`` the result's (``'fp8'``: takes ``saturate, interp``; ``'e8m0'``: takes
#: ``saturate, mode``; ``'bf16raw'``: no more arguments).
CVT_FUNCTIONS = {"cvt_float_to_fp8": ("float32", "fp8"), "cvt_double_to_fp8": ("float64", "fp8"),
                 "cvt_bfloat16raw_to_fp8": ("bf16raw", "fp8"),
                 "cvt_float_to_e8m0": ("float32", "e8m0"),
                 "cvt_double_to_e8m0": ("float64", "e8m0"),
                 "cvt_bfloat16raw_to_e8m0": ("bf16raw", "e8m0"),
                 "cvt_e8m0_to_bf16raw": ("e8m0", "bf16raw")}

#: The shorthand functions kernels call: ``name: (format, direction)`` (``'to'``: float32 → bits,
#: ``'from'``: bits → float32).
KERNEL_FUNCTIONS = {"float32_to_e4m3": ("e4m3", "to"), "float32_to_e5m2": ("e5m2", "to"),
                    "e4m3_to_float32": ("e4m3", "from"), "e5m2_to_float32": ("e5m2", "from")}
