"""Tuples as kernel data: heterogeneous tuples of arrays, scalars and nested tuples,
namedtuples (fields by name and index), iteration, the empty tuple, tuples returned by device
functions; host arrays inside tuples are copied back (numba-cuda's test_tuple* behaviour)."""
from collections import namedtuple

import numpy as np
import pytest

import cujit as cuda
from cujit import types as T

from _kl_helpers import ptx_of

Pt = namedtuple("Pt", "x y")
Pair = namedtuple("Pair", "a b")


def hetero(r, t):
    r[0] = t[0][0]
    r[1] = t[1]
    r[2] = t[2][0]


def by_name(r, p):
    r[0] = p.x
    r[1] = p.y
    r[2] = p[0] + p[1]


def sum_tuple(r, arrs):
    for a in arrs:
        for i in range(r.size):
            r[i] += a[i]


def write_in_tuple(t):
    t[0][1] = 7.0
    t[1][0] = t[0][0] + 1.0


def empty(r, t):
    r[0] = 1


@cuda.jit(device=True)
def divmod_dev(a, b):
    return a // b, a % b


def unpack_returned(r, a, b):
    q, m = divmod_dev(a, b)
    r[0] = q
    r[1] = m


def namedtuple_of_arrays(p):
    p.a[0] = p.b[0] * 2


def test_heterogeneous_tuple():
    r = np.zeros(3, np.int64)
    cuda.jit(hetero)[1, 1](r, (np.array([1]), 10, (4, 3)))
    np.testing.assert_array_equal(r, [1, 10, 4])


def test_namedtuple_fields_by_name_and_index():
    r = np.zeros(3)
    cuda.jit(by_name)[1, 1](r, Pt(2, 2.5))
    np.testing.assert_array_equal(r, [2.0, 2.5, 4.5])
    assert T.typeof(Pt(2, 2.5)).fields == ("x", "y")
    assert isinstance(T.typeof(Pt(1, 2)), T.NamedUniTuple)


def test_namedtuple_unknown_field_is_typing_error():
    def bad(r, p):
        r[0] = p.z
    with pytest.raises(cuda.TypingError, match="attribute 'z'"):
        cuda.jit(bad)[1, 1](np.zeros(1), Pt(1.0, 2.0))


def test_iterate_over_tuple_of_arrays():
    r = np.zeros(3, np.float32)
    cuda.jit(sum_tuple)[1, 1](r, tuple(k * np.ones(3, np.float32) for k in range(5)))
    np.testing.assert_array_equal(r, [10, 10, 10])


def test_host_arrays_in_tuple_are_copied_back():
    a, b = np.array([1.0, 0.0]), np.zeros(1)
    cuda.jit(write_in_tuple)[1, 1]((a, b))
    np.testing.assert_array_equal(a, [1.0, 7.0])
    np.testing.assert_array_equal(b, [2.0])


def test_device_arrays_and_cai_objects_in_tuple():
    class Wrap:
        def __init__(self, d):
            self._d = d

        @property
        def __cuda_array_interface__(self):
            return self._d.__cuda_array_interface__
    d = cuda.to_device(np.array([1.0, 0.0]))
    w = cuda.to_device(np.zeros(1))
    cuda.jit(write_in_tuple)[1, 1]((d, Wrap(w)))
    np.testing.assert_array_equal(d.copy_to_host(), [1.0, 7.0])
    np.testing.assert_array_equal(w.copy_to_host(), [2.0])


def test_namedtuple_of_arrays_written():
    a, b = np.zeros(1), np.array([4.0])
    cuda.jit(namedtuple_of_arrays)[1, 1](Pair(a, b))
    assert a[0] == 8.0


def test_empty_tuple():
    r = np.zeros(1, np.int64)
    cuda.jit(empty)[1, 1](r, ())
    assert r[0] == 1


def test_tuple_returned_from_device_function():
    r = np.zeros(2, np.int64)
    cuda.jit(unpack_returned)[1, 1](r, 17, 5)
    np.testing.assert_array_equal(r, [3, 2])


@pytest.mark.compile
@pytest.mark.parametrize("fn,args", [
    (hetero, (np.zeros(3, np.int64), (np.array([1]), 10, (4, 3)))),
    (by_name, (np.zeros(3), Pt(2, 2.5))),
    (sum_tuple, (np.zeros(3, np.float32), tuple(np.ones(3, np.float32) for _ in range(5)))),
    (write_in_tuple, ((np.zeros(2), np.zeros(1)),)),
    (namedtuple_of_arrays, (Pair(np.zeros(1), np.zeros(1)),)),
    (empty, (np.zeros(1, np.int64), ())),
    (unpack_returned, (np.zeros(2, np.int64), 17, 5)),
], ids=lambda v: getattr(v, "__name__", ""))
def test_tuples_compile(fn, args):
    assert ".entry" in ptx_of(fn, *args)


@cuda.jit(device=True)
def dev_shared(v):
    s = cuda.shared.array(2, np.float32)
    s[0] = v * 5.0
    cuda.syncthreads()
    return s[0]


def shared_same_name(r):
    s = cuda.shared.array(2, np.float32)
    s[0] = 3.0
    cuda.syncthreads()
    got = dev_shared(s[0])
    r[0] = s[0]
    r[1] = got


def test_kernel_and_device_function_shared_arrays_are_independent():
    # handed case: each function's shared.array of the same name and shape is its own
    r = np.zeros(2, np.float32)
    cuda.jit(shared_same_name)[1, 1](r)
    np.testing.assert_array_equal(r, [3.0, 15.0])


@pytest.mark.compile
def test_shared_same_name_compiles_to_two_arrays():
    ptx = ptx_of(shared_same_name, np.zeros(2, np.float32))
    # NVVM folds the two arrays' values: r[0] = 3.0f, r[1] = 15.0f (aliasing would give 15.0
    # twice)
    assert "1077936128" in ptx and "1097859072" in ptx


def test_tuple_of_a_tuple_is_its_members():
    @cuda.jit
    def as_tuple(out):
        v = cuda.float32x3(1, 2, 3)
        t = tuple(v)
        out[0] = t[2] + len(tuple((1, 2.5)))
        for w in tuple((v, v)):
            out[1] += w.x

    out = np.zeros(2)
    as_tuple[1, 1](out)
    assert out.tolist() == [5.0, 2.0]


def test_tuple_of_a_non_tuple_is_a_typing_error():
    def bad(out):
        out[0] = tuple(out)[0]

    def two(out):
        out[0] = tuple((1,), (2,))[0]

    with pytest.raises(cuda.TypingError, match="tuple\\(\\) in kernels takes a tuple"):
        cuda.compile_ptx(bad, "void(float64[::1])")
    with pytest.raises(cuda.TypingError, match="tuple\\(\\) takes 1 argument"):
        cuda.compile_ptx(two, "void(float64[::1])")
