"""The FP8 value of the host and the simulator (``cujit.fp8_scalar.FP8``) and the FP8 types
``fp8_e4m3`` / ``fp8_e5m2`` / ``fp8_e8m0`` called on the host: construction as
``cuda_fp8.hpp``'s constructors, the conversions back, and the errors."""
import math

import numpy as np
import pytest

import cujit
from cujit import narrow_floats as nf
from cujit import types as T
from cujit.bf16_scalar import BF16
from cujit.fp8_scalar import FP8


def test_the_types_build_values_and_signatures():
    v = T.fp8_e4m3(1.5)
    assert isinstance(v, FP8) and v.fmt == "e4m3" and v.bits == 0x3C
    assert str(T.fp8_e5m2) == "fp8_e5m2" and T.fp8_e8m0.__name__ == "fp8_e8m0"
    assert T.FP8("e4m3") is T.fp8_e4m3 and cujit.fp8.fp8_e4m3 is T.fp8_e4m3
    assert str(T.fp8_e4m3(T.float32)) == "fp8_e4m3(float32)"
    with pytest.raises(ValueError, match="FP8 format must be one of"):
        T.FP8("e3m4")


def test_construction_rounds_as_the_cuda_constructors():
    assert FP8("e4m3", 500.0).bits == 0x7E and FP8("e4m3", math.inf).bits == 0x7E
    assert FP8("e5m2", -1e9).bits == 0xFB and FP8("e4m3", np.float32("nan")).bits == 0x7F
    assert FP8("e5m2", math.nan).bits == 0x7E               # the float64 NaN rule
    assert FP8("e4m3", np.float16(2.0)).bits == 0x40 and FP8("e4m3", BF16(-2.0)).bits == 0xC0
    assert FP8("e4m3", 17).bits == nf.float_to_fp8_bits(17.0, "e4m3")
    assert FP8("e4m3", True).bits == 0x38
    # E8M0 rounds the magnitude up, saturates to 2**127, NaN 0xFF
    assert [FP8("e8m0", v).bits for v in (1.0, 3.0, -3.0, 0.0, 1e300, math.inf, math.nan)] \
        == [127, 129, 129, 0, 0xFE, 0xFE, 0xFF]
    assert FP8("e8m0", 2 ** 53 + 1).bits == 127 + 54        # exact for big integers
    assert FP8("e8m0", BF16.from_bits(0x3F81)).bits == 128
    assert FP8.from_bits("e5m2", 0x13C).bits == 0x3C


def test_conversions_back():
    v = FP8("e4m3", -3.25)
    assert float(v) == -3.25 and int(v) == -3 and v.to_int(False, 8) == 0
    assert v.to_float16() == np.float16(-3.25) and v.to_float64() == -3.25
    assert v.to_bfloat16().bits == BF16(-3.25).bits and repr(v) == "fp8_e4m3(-3.25)"
    nan = FP8.from_bits("e4m3", 0xFF)
    assert nan.to_float32().view(np.uint32) == 0x7FFFFFFF and nan.to_int(True, 64) == -2 ** 63
    assert nan.to_bfloat16().bits == 0x7FFF and bool(nan) and not FP8("e5m2", -0.0)
    e = FP8.from_bits("e8m0", 0)
    assert e.to_float32() == np.float32(2.0 ** -127) and e.to_float16() == 0 and bool(e)
    assert FP8.from_bits("e8m0", 0xFF).to_float32().view(np.uint32) == 0x7FFF0000
    assert FP8.from_bits("e8m0", 0xFF).to_float16().view(np.uint16) == 0x7FFF
    assert FP8.from_bits("e8m0", 254).to_int(False, 64) == 2 ** 64 - 1      # clamped
    assert FP8.from_bits("e8m0", 143).to_float16() == np.float16(np.inf)   # 2**16: inf
    assert FP8("e4m3", 1.0) == FP8.from_bits("e4m3", 0x38) != FP8.from_bits("e5m2", 0x38)
    assert len({FP8("e4m3", 1.0), FP8.from_bits("e4m3", 0x38)}) == 1
    assert (FP8("e4m3", 1.0) == 1.0) is False


def test_bad_values_are_type_errors():
    with pytest.raises(TypeError, match=r"fp8_e4m3\(\) takes a float, bfloat16 or integer"):
        FP8("e4m3", "1.0")
    with pytest.raises(TypeError, match="convert FP8 values through float32"):
        FP8("e5m2", FP8("e4m3", 1.0))
    with pytest.raises(ValueError, match="FP8 format must be one of"):
        FP8.from_bits("e2m5", 0)


def test_host_calls_of_the_number_types_convert_fp8_values():
    v = FP8("e4m3", -2.5)
    assert T.bfloat16(v).bits == BF16(-2.5).bits and T.float32(v) == np.float32(-2.5)
    assert T.float16(v) == np.float16(-2.5) and T.int32(v) == -2
    assert T.uint8(v) == 0 and T.int8(FP8("e5m2", 1000.0)) == 127     # clamped
    assert T.boolean(v) and type(T.float64(v)) is np.float64
    with pytest.raises(TypeError, match="cannot convert fp8_e4m3"):
        T.complex64(v)
