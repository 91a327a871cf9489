"""``cuda.fp8``: FP8 conversions (numba-cuda's ``cuda_fp8`` bindings: ``cvt_float_to_fp8``
& co.), on the host and in the simulator.

Formats (:class:`fp8_interpretation_t`): E4M3 (largest 448, no inf, one NaN per sign) and
E5M2 (largest 57344, IEEE-like); E8M0 is the unsigned power-of-two scale of the MX formats.
Rounding is the GPU's bit for bit (:mod:`cujit.narrow_floats`): to FP8 round to nearest even,
with :data:`saturation_t.SATFINITE` out-of-range values and ±inf clamp to ±largest finite
(``cvt.rn.satfinite.e4m3x2.f32``), with ``NOSAT`` they give NaN (E4M3) or ±inf (E5M2); NaN
gives ``0x7F``.  To E8M0 (``cudaRoundMode``-like ``'rz'`` / ``'ru'``) see
``narrow_floats.float_to_e8m0_bits``.

In kernels (and the simulator) FP8 values are their bits in a ``uint8``: the kernel
functions :data:`KERNEL_FUNCTIONS` (``float32_to_e4m3(x)``, ``e4m3_to_float32(bits)``, the
same for E5M2) are the saturating conversions, lowered to ``cvt.rn.satfinite.e4m3x2.f32`` /
``cvt.rn.f16x2.e4m3x2`` (sm_89+).  There is no ``fp8_e4m3`` type in the kernel language yet
(numba-cuda's ``cuda_fp8`` bindings' classes); the ``cvt_*`` functions are host functions.
"""
import enum

import numpy as np

from . import narrow_floats as nf

__all__ = ["saturation_t", "fp8_interpretation_t", "cvt_float_to_fp8", "cvt_double_to_fp8",
           "cvt_fp8_to_float", "cvt_float_to_e8m0", "cvt_double_to_e8m0",
           "cvt_e8m0_to_float", "float32_to_e4m3", "float32_to_e5m2", "e4m3_to_float32",
           "e5m2_to_float32", "KERNEL_FUNCTIONS"]


class saturation_t(enum.IntEnum):
    """What a conversion to FP8 does with values beyond the largest finite (CUDA's
    ``__nv_saturation_t``)."""
    NOSAT = 0
    SATFINITE = 1


class fp8_interpretation_t(enum.IntEnum):
    """The FP8 format (CUDA's ``__nv_fp8_interpretation_t``)."""
    E4M3 = 0
    E5M2 = 1


def _fmt(interp):
    try:
        return {0: "e4m3", 1: "e5m2"}[int(fp8_interpretation_t(interp))]
    except (ValueError, TypeError):
        raise ValueError(f"FP8 interpretation must be fp8_interpretation_t.E4M3 or .E5M2, "
                         f"got {interp!r}") from None


def _sat(saturate):
    try:
        return saturation_t(saturate) is saturation_t.SATFINITE
    except (ValueError, TypeError):
        raise ValueError(f"saturate must be saturation_t.NOSAT or .SATFINITE, got "
                         f"{saturate!r}") from None


def cvt_float_to_fp8(x, saturate, interp):
    """The FP8 bits (int 0..255) of float32 ``x`` (rounded to float32 first).  ValueError
    for an unknown ``saturate`` / ``interp``."""
    return nf.float_to_fp8_bits(np.float32(x), _fmt(interp), _sat(saturate))


def cvt_double_to_fp8(x, saturate, interp):
    """The FP8 bits of float64 ``x``, rounded once."""
    return nf.float_to_fp8_bits(float(x), _fmt(interp), _sat(saturate))


def cvt_fp8_to_float(bits, interp):
    """The float32 value of FP8 ``bits`` (exact)."""
    return nf.fp8_bits_to_f32(bits, _fmt(interp))


def cvt_float_to_e8m0(x, saturate, mode="rz"):
    """The E8M0 bits of float32 ``x`` rounded in ``mode`` (``'rz'`` or ``'ru'``)."""
    return nf.float_to_e8m0_bits(np.float32(x), mode, _sat(saturate))


def cvt_double_to_e8m0(x, saturate, mode="rz"):
    """The E8M0 bits of float64 ``x`` rounded in ``mode`` (``'rz'`` or ``'ru'``)."""
    return nf.float_to_e8m0_bits(float(x), mode, _sat(saturate))


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
    """The float32 value of E4M3 ``bits`` (the low 8 bits of an integer; exact)."""
    return nf.fp8_bits_to_f32(int(bits) & 0xFF, "e4m3")


def e5m2_to_float32(bits):
    """The float32 value of E5M2 ``bits`` (the low 8 bits of an integer; exact)."""
    return nf.fp8_bits_to_f32(int(bits) & 0xFF, "e5m2")


#: The functions kernels call: ``name: (format, direction)`` (``'to'``: float32 → bits,
#: ``'from'``: bits → float32).
KERNEL_FUNCTIONS = {"float32_to_e4m3": ("e4m3", "to"), "float32_to_e5m2": ("e5m2", "to"),
                    "e4m3_to_float32": ("e4m3", "from"), "e5m2_to_float32": ("e5m2", "from")}
