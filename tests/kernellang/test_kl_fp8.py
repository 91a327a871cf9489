"""FP8 in kernels: ``cuda.fp8``'s saturating conversions float32 → E4M3 / E5M2 bits and back
(values against ``narrow_floats``, the PTX ``cvt.rn.satfinite`` rules), their typing errors,
and the inline PTX compiling to an sm_90 cubin."""
import numpy as np
import pytest

import cujit as cuda
from cujit import narrow_floats as nf
from cujit import types as T

from _kl_helpers import ptx_of


def fp8_roundtrip(x, e4, e5, back4, back5):
    i = cuda.grid(1)
    if i < x.size:
        e4[i] = cuda.fp8.float32_to_e4m3(x[i])
        e5[i] = cuda.fp8.float32_to_e5m2(x[i])
        back4[i] = cuda.fp8.e4m3_to_float32(e4[i])
        back5[i] = cuda.fp8.e5m2_to_float32(e5[i])


VALUES = np.array([0.0, -0.0, 1.0, -1.5, 448.0, 449.0, 500.0, 1e6, -1e6, 57344.0, 2.0 ** -9,
                   2.0 ** -10, 2.0 ** -17, 0.1, np.inf, -np.inf, np.nan, 3.3], np.float32)


def test_fp8_conversions_are_the_cvt_bits():
    n = VALUES.size
    e4, e5 = np.zeros(n, np.uint8), np.zeros(n, np.uint8)
    b4, b5 = np.zeros(n, np.float32), np.zeros(n, np.float32)
    cuda.jit(fp8_roundtrip)[1, 32](VALUES, e4, e5, b4, b5)
    assert e4.tolist() == [nf.float_to_fp8_bits(v, "e4m3") for v in VALUES]
    assert e5.tolist() == [nf.float_to_fp8_bits(v, "e5m2") for v in VALUES]
    np.testing.assert_array_equal(b4, [nf.fp8_bits_to_f32(b, "e4m3") for b in e4])
    np.testing.assert_array_equal(b5, [nf.fp8_bits_to_f32(b, "e5m2") for b in e5])
    assert e4[6] == 0x7E and e5[7] == 0x7B and e4[16] == 0x7F       # saturate, NaN


def fp8_from_float(out, x):
    out[0] = cuda.fp8.e4m3_to_float32(x)


def test_fp8_typing_errors():
    with pytest.raises(cuda.TypingError, match="the FP8 bits"):
        cuda.jit(fp8_from_float)[1, 1](np.zeros(1, np.float32), 1.5)


@pytest.mark.compile
def test_fp8_compiles_to_sm90_cubin():
    from cujit.nvvm.linker import link_cubin
    sig = (T.float32[::1], T.uint8[::1], T.uint8[::1], T.float32[::1], T.float32[::1])
    ptx = ptx_of(fp8_roundtrip, argtypes=sig)
    assert "cvt.rn.satfinite.e4m3x2.f32" in ptx and "cvt.rn.f16x2.e5m2x2" in ptx
    assert link_cubin(ptx, (9, 0))[:4] == b"\x7fELF"
