"""Numba's own type objects accepted wherever cujit takes a type (signatures, shared/local
array dtypes, casts), recognised duck-typed: cujit never imports numba."""
import numpy as np
import pytest

import cujit as cuda
from cujit import types as T
from cujit.numba_types import from_numba_signature, from_numba_type

from _kl_helpers import fake_numba_array, fake_numba_scalar, fake_numba_signature, ptx_of

nb_f32, nb_i32, nb_void = (fake_numba_scalar(n) for n in ("float32", "int32", "none"))


def test_scalar_and_array_types_map_to_cujit_types():
    assert from_numba_type(nb_f32) is T.float32
    assert from_numba_type(fake_numba_scalar("uint16")) is T.uint16
    assert from_numba_type(fake_numba_scalar("bool")) is T.boolean
    assert from_numba_type(nb_void) is T.void
    assert from_numba_type(fake_numba_array(nb_f32, 2, "C")) is T.float32[:, ::1]
    assert from_numba_type(fake_numba_array(nb_f32, 1, "A", mutable=False)) is \
        T.Array(T.float32, 1, "A", True)
    assert from_numba_type(np.float32) is None      # not a Numba object
    assert T.as_dtype_type(nb_f32) is T.float32


def test_unknown_numba_type_is_a_type_error():
    odd = fake_numba_scalar("float32")
    odd.name = "unicode_type"
    with pytest.raises(TypeError, match="unicode_type"):
        from_numba_type(odd)
    with pytest.raises(TypeError, match="unicode_type"):
        T.as_dtype_type(odd)


def test_numba_signature_parses():
    sig = fake_numba_signature(nb_void, fake_numba_array(nb_f32, 1, "A"), nb_i32)
    got = T.parse_signature(sig)
    assert got == T.Signature(T.void, (T.float32[:], T.int32))
    assert from_numba_signature(sig) == got
    assert T.parse_signature([fake_numba_array(nb_f32, 1, "C"), nb_i32]).args == \
        (T.float32[::1], T.int32)


def scale(a, n):
    i = cuda.grid(1)
    if i < a.size:
        a[i] = a[i] * n


def test_jit_with_numba_signature_runs():
    sig = fake_numba_signature(nb_void, fake_numba_array(nb_f32, 1, "C"), nb_i32)
    k = cuda.jit(sig)(scale)
    a = np.arange(4, dtype=np.float32)
    k[1, 4](a, 3)
    np.testing.assert_array_equal(a, [0, 3, 6, 9])
    k2 = cuda.jit([sig])(scale)
    k2[1, 4](a, 2)
    np.testing.assert_array_equal(a, [0, 6, 12, 18])


def shared_and_local(out):
    s = cuda.shared.array(4, nb_f32)
    loc = cuda.local.array(2, dtype=nb_i32)
    i = cuda.threadIdx.x
    s[i] = i * 1.5
    loc[0] = i
    cuda.syncthreads()
    out[i] = s[3 - i] + nb_f32(loc[0])


def test_numba_dtypes_in_shared_local_and_casts():
    out = np.zeros(4, np.float32)
    cuda.jit(shared_and_local)[1, 4](out)
    np.testing.assert_array_equal(out, [4.5, 4.0, 3.5, 3.0])


@pytest.mark.compile
def test_numba_dtypes_compile():
    ptx = ptx_of(shared_and_local, np.zeros(4, np.float32))
    assert ".shared" in ptx


def test_with_real_numba():
    numba = pytest.importorskip("numba")
    from numba import float32, int32, void
    k = cuda.jit(void(float32[::1], int32))(scale)
    a = np.ones(4, np.float32)
    k[1, 4](a, 5)
    np.testing.assert_array_equal(a, [5] * 4)
    assert T.as_dtype_type(numba.types.float64) is T.float64
    assert T.parse_signature((numba.types.Array(float32, 1, "C"),)).args == (T.float32[::1],)
    rec = np.dtype([("a", np.float64), ("b", np.int32)])
    assert T.as_dtype_type(numba.from_dtype(rec)) is T.Record(rec)

    @cuda.jit
    def k(out):
        s = cuda.shared.array(2, dtype=float32)
        loc = cuda.local.array(1, numba.types.int64)
        s[0] = float32(1.5)
        loc[0] = int32(7)
        out[0] = s[0] + loc[0]
    out = np.zeros(1)
    k[1, 1](out)
    assert out[0] == 8.5


@cuda.extending.intrinsic(sim=lambda x: x + 1)
def _inc_by_numba_signature(typingctx, x):
    # an intrinsic written for Numba gives a signature of Numba types
    return (fake_numba_signature(nb_i32, nb_i32),
            lambda context, builder, sig, args: builder.add(
                args[0], context.get_constant(T.int32, 1)))


def k_inc(out, x):
    out[0] = _inc_by_numba_signature(x[0])


def test_intrinsic_signature_of_numba_types_is_converted():
    out = np.zeros(1, np.int64)
    cuda.jit(k_inc)[1, 1](out, np.array([41], np.int32))
    assert out[0] == 42


def test_overloads_are_found_by_numba_argument_types():
    # numba-cuda's test_cuda_cache_config: kernel.overloads[(types.float32[::1], ...)]
    nb_vec = fake_numba_array(nb_f32, 1, "C")
    k = cuda.jit((nb_vec, nb_i32))(scale)
    spec = k.overloads[(T.float32[::1], T.int32)]
    assert k.overloads[(nb_vec, nb_i32)] is spec
    assert (nb_vec, nb_i32) in k.overloads and k.overloads.get((nb_vec, nb_i32)) is spec
    other = (fake_numba_array(nb_f32, 2, "C"), nb_i32)
    assert other not in k.overloads and k.overloads.get(other) is None
    with pytest.raises(KeyError):
        k.overloads[other]
    odd = fake_numba_scalar("float32")
    odd.name = "unicode_type"
    with pytest.raises(TypeError, match="unicode_type"):
        k.overloads[(odd,)]
