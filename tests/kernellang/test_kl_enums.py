"""``enum.Enum`` members in kernels as numba-cuda's tests/cudapy/test_enums.py uses them:
members as kernel arguments and constants, ``==`` / ``!=`` between members of one Enum,
``is`` / ``is not`` between any members, ``Color["red"]``, ``.value``, members returned by
device functions; and the TypingErrors for what numba.cuda refuses too.  Unmarked tests run
on the active backend (the simulator here, the H200 for the integrator)."""
import enum

import numpy as np
import pytest

import cujit as cuda
from cujit import types as T
from cujit.frontend.errors import TypingError
from cujit.frontend.typecheck import typecheck_kernel

from _kl_helpers import ptx_of


class Color(enum.Enum):
    red = 1
    green = 2
    blue = 3


class Shake(enum.Enum):
    vanilla = 7
    mint = 3            # the value of Color.blue


class Planet(enum.Enum):
    MERCURY = (3.303e23, 2.4397e6)
    VENUS = (4.869e24, 6.0518e6)
    EARTH = (5.976e24, 6.37814e6)
    MARS = (6.421e23, 3.3972e6)


class Shape(enum.IntEnum):
    circle = 2          # the value of Color.green
    square = 500


class RequestError(enum.IntEnum):
    dummy = 2
    not_found = 404
    internal_error = 500


class IntEnumWithNegatives(enum.IntEnum):
    one = 1
    two = 2
    too = 2
    negone = -1


class Mixed(enum.Enum):
    red = 1.0
    blue = 3j


def k_compare(a, b, out):
    out[0] = a == b
    out[1] = a != b
    out[2] = a is b
    out[3] = a is not b


@pytest.mark.parametrize("a, b", [(Color.red, Color.red), (Color.red, Color.green),
                                  (Planet.EARTH, Planet.EARTH), (Planet.VENUS, Planet.MARS),
                                  (Shape.circle, IntEnumWithNegatives.two),
                                  (Shape.circle, Shape.circle), (Shape.circle, Shape.square),
                                  (IntEnumWithNegatives.two, IntEnumWithNegatives.too)],
                         ids=str)
def test_compare_arguments_as_numba(a, b):
    got = np.zeros(4, np.bool_)
    expected = got.copy()
    cuda.jit(k_compare)[1, 1](a, b, got)
    k_compare(a, b, expected)
    np.testing.assert_array_equal(got, expected)


def k_is_other_enum(a, b, out):
    out[0] = a is b
    out[1] = a is not b


def test_is_between_different_enums_is_false():
    got = np.zeros(2, np.bool_)
    cuda.jit(k_is_other_enum)[1, 1](Color.blue, Shake.mint, got)     # equal values
    assert got.tolist() == [False, True]


def k_getattr_getitem(out):
    out[0] = Color.red == Color.green
    out[1] = Color["red"] == Color["green"]
    out[2] = Color["blue"] == Color.blue
    out[3] = Color.green != Color["green"]


def test_constants_by_attribute_and_name():
    got = np.zeros(4, np.bool_)
    cuda.jit(k_getattr_getitem)[1, 1](got)
    assert got.tolist() == [False, False, True, False]


@cuda.jit(device=True)
def _pick(pred):
    return Color.red if pred else Color.green


def k_device_return(pred, out):
    out[0] = _pick(pred) == Color.red
    out[1] = _pick(not pred) == Color.green
    c = _pick(pred)
    out[2] = c is Color.green


@pytest.mark.parametrize("pred", [True, False])
def test_member_returned_by_a_device_function(pred):
    got = np.zeros(3, np.bool_)
    cuda.jit(k_device_return)[1, 1](pred, got)
    assert got.tolist() == [pred, pred, not pred]


def k_value(c, p, out, pos):
    out[0] = c.value + Color.blue.value
    pos[0], pos[1] = p.value
    pos[2] = Planet.MARS.value[1]


def test_value_of_arguments_and_constants():
    out = np.zeros(1, np.int64)
    pos = np.zeros(3)
    cuda.jit(k_value)[1, 1](Color.green, Planet.EARTH, out, pos)
    assert out[0] == 5
    assert pos.tolist() == [5.976e24, 6.37814e6, 3.3972e6]


def k_int_coerce(x, out):
    # numba's test_int_coerce / test_int_cast: IntEnum members are integers
    if x > RequestError.internal_error:
        out[0] = x - RequestError.not_found
    else:
        out[0] = x + Shape.circle
    out[1] = x + cuda.int16(Shape.square) + RequestError.dummy.value
    out[2] = Shape.circle.value * 10 + IntEnumWithNegatives.negone


@pytest.mark.parametrize("x", [300, 450, 550])
def test_int_enum_members_are_integers(x):
    got = np.zeros(3, np.int32)
    cuda.jit(k_int_coerce)[1, 1](x, got)
    assert got.tolist() == [x - 404 if x > 500 else x + 2, x + 502, 19]


def k_int_is(a, out):
    out[0] = a is Shape.circle
    out[1] = a is RequestError.dummy         # equal value, other Enum
    out[2] = a.value + 1
    out[3] = a is not Shape.square


def test_is_and_value_of_an_int_enum_argument():
    got = np.zeros(4, np.int64)
    cuda.jit(k_int_is)[1, 1](Shape.circle, got)
    assert got.tolist() == [1, 0, 3, 1]


def test_typeof():
    assert T.typeof(Color.red) is T.EnumMember(Color, T.int64)
    assert str(T.typeof(Color.red)) == "EnumMember(<enum 'Color'>, int64)"
    assert T.typeof(Planet.EARTH).dtype == T.UniTuple(T.float64, 2)
    it = T.typeof(Shape.circle)
    assert it is T.IntEnumMember(Shape, T.int64) and isinstance(it, T.Integer)
    assert str(it) == "IntEnumMember(<enum 'Shape'>, int64)" and it.bitwidth == 64
    with pytest.raises(TypeError, match="members of Enum Mixed have values of different"):
        T.typeof(Mixed.red)


def k_eq_other_enum(a, b, out):
    out[0] = a == b


def k_lt(a, b, out):
    out[0] = a < b


def k_eq_int(a, b, out):
    out[0] = a == 1


def k_name(a, b, out):
    out[0] = a.name == 1


@pytest.mark.parametrize("kernel, args, msg", [
    (k_eq_other_enum, (Color.red, Shake.mint),
     r"cannot compare EnumMember\(<enum 'Color'>, int64\) with EnumMember\(<enum 'Shake'>"),
    (k_lt, (Color.red, Color.blue), "Enum members compare only with ==, !=, is and is not"),
    (k_eq_int, (Color.red, Color.blue), r"an Enum member compares only with members of its"),
    (k_name, (Color.red, Color.blue), "has only the attribute 'value'"),
], ids=["other-enum", "less-than", "with-int", "name"])
def test_what_numba_refuses_is_a_typing_error(kernel, args, msg):
    with pytest.raises(TypingError, match=msg):
        typecheck_kernel(kernel, args + (np.zeros(1, np.bool_),))


def k_heterogeneous(out):
    out[0] = Mixed.red == Mixed.red


def test_heterogeneous_enum_constant_is_a_typing_error():
    with pytest.raises(TypingError, match="have values of different types"):
        typecheck_kernel(k_heterogeneous, (np.zeros(1, np.bool_),))


@pytest.mark.compile
def test_ptx_passes_the_member_as_its_value():
    ptx = ptx_of(k_compare, argtypes=(T.EnumMember(Color, T.int64),
                                      T.EnumMember(Color, T.int64), T.boolean[::1]))
    assert ".param .u64" in ptx and "setp.eq.s64" in ptx
    ptx = ptx_of(k_compare, argtypes=(T.EnumMember(Planet, T.UniTuple(T.float64, 2)),) * 2
                 + (T.boolean[::1],))
    assert ptx.count(".param .f64") == 4


@pytest.mark.compile
def test_ptx_of_int_enum_is_and_value():
    ptx = ptx_of(k_int_is, argtypes=(T.IntEnumMember(Shape, T.int64), T.int64[::1]))
    assert ".param .u64" in ptx and "st.global.u64" in ptx
    ptx = ptx_of(k_compare, argtypes=(T.IntEnumMember(Shape, T.int64),
                                      T.IntEnumMember(IntEnumWithNegatives, T.int64),
                                      T.boolean[::1]))
    assert "setp.eq.s64" in ptx or "setp.ne.s64" in ptx
