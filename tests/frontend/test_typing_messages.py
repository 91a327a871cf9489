"""numba-cuda programs ported unchanged: TypingErrors named an internal type,
``Global('b')`` and ``Global(None)``, instead of what the user wrote.  ``ary['b']`` on a
record array (numba reads fields per element: ``ary[i]['b']``) now says so, and iterating over
a constant that is not a tuple of numbers names the expression; other messages show a
constant as its Python value (``str 'inf'``)."""
import numpy as np
import pytest

import cujit as cuda

_REC = np.dtype([("a", np.float64), ("b", np.int32)])


@cuda.jit
def _field_of_record_array(r, ary):
    i = cuda.grid(1)
    if i < ary.size:
        r[i] = ary['b'][i]


@cuda.jit
def _string_index(r, x):
    r[0] = x['b']


@cuda.jit
def _iterate_strings(r):
    for name in ("a", "b"):
        r[0] = 1


def _raises(kernel, args, match):
    with pytest.raises(cuda.TypingError, match=match) as e:
        kernel[1, 1](*args)
    assert "Global(" not in str(e.value)


def test_field_name_as_index_of_a_record_array_says_to_index_elements():
    ary = np.zeros(2, _REC)
    r = np.zeros(2)
    _raises(_field_of_record_array, (r, ary),
            r"a field of a record array is read per element in kernels: use a\[i\]\['b'\] or "
            r"a\[i\]\.b \(got the field name 'b' as an array index\)")
    assert (r == 0).all()


def test_string_index_of_a_plain_array_names_the_constant():
    _raises(_string_index, (np.zeros(1), np.zeros(3)),
            r"array index must be an integer or a slice, got the constant 'b'")


def test_iterating_a_tuple_of_strings_names_the_expression():
    _raises(_iterate_strings, (np.zeros(1),),
            r"cannot iterate over '\('a', 'b'\)' \(a compile-time constant\) in a kernel")


@cuda.jit
def _int_of_string(r):
    r[0] = int("7")     # no strings at run time (float("inf") is a constant, numba's too)


def test_constants_in_messages_are_shown_as_python_values():
    _raises(_int_of_string, (np.zeros(1),),
            r"int\(\) takes numbers, got a value of type str '7'")
