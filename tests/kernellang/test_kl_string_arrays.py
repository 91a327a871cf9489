"""String and bytes constants stored into ``S<n>`` / ``U<n>`` array elements and record
fields (numba-cuda's test_const_string.py): NumPy's result (zero-padded, cut to the
element's length) on whichever backend the process has; the bytes the NVVM lowering writes
are checked on the CPU in tests/nvvm/test_lower_cpu.py."""
import numpy as np
import pytest

import cujit as cuda
from cujit import types as T
from cujit.frontend.errors import TypingError


@cuda.jit
def _assign_str(arr):
    i = cuda.grid(1)
    if i < len(arr) - 1:
        if i % 2 == 0:
            arr[i] = "XYZ"
        else:
            arr[i] = "a longer text than twelve"


@cuda.jit
def _assign_bytes(arr):
    i = cuda.grid(1)
    if i < len(arr) - 1:
        arr[i] = b"XYZ"


@pytest.mark.parametrize("dtype, kernel, values", [
    ("<U12", _assign_str, ["XYZ", "a longer tex"]),
    ("S12", _assign_bytes, [b"XYZ", b"XYZ"]),
])
def test_constants_fill_string_array_elements(dtype, kernel, values):
    arr = np.zeros(9, dtype=dtype)
    kernel[1, 8](arr)
    expected = np.zeros_like(arr)
    expected[:-1:2], expected[1:-1:2] = values
    np.testing.assert_array_equal(arr, expected)


@cuda.jit
def _assign_fields(a, b):
    a[0]["x"] = 1
    a[0]["y"] = "ABC"
    a[1]["x"] = 2
    a[1].y = "XYZ"
    b[0]["y"] = b"ABC"


def test_constants_fill_string_record_fields():
    dt = np.dtype([("x", np.int32), ("y", np.dtype("<U12"))])
    dtb = np.dtype([("x", np.float32), ("y", np.dtype("S12"))])
    a, b = np.zeros(2, dt), np.zeros(1, dtb)
    _assign_fields[1, 1](a, b)
    np.testing.assert_array_equal(a, np.asarray([(1, "ABC"), (2, "XYZ")], dtype=dt))
    assert b[0]["y"] == b"ABC"


def test_string_dtypes_are_char_sequence_types():
    assert T.from_dtype("S12") is T.CharSeq("S", 12)
    assert T.from_dtype("<U3") is T.CharSeq("U", 3) and T.CharSeq("U", 3).size == 12
    assert str(T.CharSeq("S", 4)) == "[char x 4]" and T.CharSeq("S", 4).encode(b"ab") == \
        b"ab\0\0"
    with pytest.raises(TypeError, match="kind is 'S' or 'U'"):
        T.CharSeq("x", 3)


def test_non_constant_or_wrong_kind_string_stores_are_typing_errors():
    @cuda.jit
    def number_into_str(arr):
        arr[0] = 1.5

    @cuda.jit
    def non_ascii_into_bytes(arr):
        arr[0] = "é"
    with pytest.raises(TypingError, match=r"only a str or bytes constant can be stored into "
                                          r"an element of type \[unichr x 4\]"):
        number_into_str[1, 1](np.zeros(2, "<U4"))
    with pytest.raises(TypingError, match=r"cannot store 'é' into an element of type "
                                          r"\[char x 4\]"):
        non_ascii_into_bytes[1, 1](np.zeros(2, "S4"))


def test_reading_string_elements_is_a_typing_error():
    @cuda.jit
    def read_element(arr, out):
        x = arr[0]
        out[0] = len(x)

    @cuda.jit
    def read_field(a, out):
        out[0] = len(a[0].y)
    with pytest.raises(TypingError, match=r"reading an element of type \[char x 3\] \(a "
                                          r"string or bytes array\) is not supported"):
        read_element[1, 1](np.zeros(2, "S3"), np.zeros(1, np.int64))
    with pytest.raises(TypingError, match=r"reading an element of type \[unichr x 2\]"):
        read_field[1, 1](np.zeros(1, [("y", "<U2")]), np.zeros(1, np.int64))
