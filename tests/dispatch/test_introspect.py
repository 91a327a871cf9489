"""Kernel objects (issue 14): inspect_* after lazy launches, signatures/overloads,
inspect_types, inspect_sass, forall, specialize and extensions= (numba.cuda's Dispatcher).
Unmarked tests run on the active backend (simulator here, the H200 for the integrator)."""
import io

import numpy as np
import pytest

import cujit as cuda
from cujit import types as T
from cujit.dispatch.introspect import find_nvdisasm, sass_of, types_listing


def scale(r, a, s):
    i = cuda.grid(1)
    if i < r.size:
        t = a[i] * s
        r[i] = t


SIG_F64 = (T.float64[::1], T.float64[::1], T.float64)
SIG_F32 = (T.float32[::1], T.float32[::1], T.float32)


def test_inspect_after_lazy_launches_has_every_signature():
    k = cuda.jit(scale)
    a64, r64 = np.arange(4.0), np.zeros(4)
    a32, r32 = np.arange(4, dtype=np.float32), np.zeros(4, np.float32)
    k[1, 4](r64, a64, 2.0)
    k[1, 4](r32, a32, np.float32(3))
    assert r64.tolist() == [0, 2, 4, 6] and r32.tolist() == [0, 3, 6, 9]
    assert k.signatures == [SIG_F64, SIG_F32]
    llvm, asm = k.inspect_llvm(), k.inspect_asm()
    assert set(llvm) == set(asm) == {SIG_F64, SIG_F32}
    assert "fmul double" in llvm[SIG_F64] and "fmul float" in llvm[SIG_F32]
    assert "mul.f64" in asm[SIG_F64] and "mul.f32" in asm[SIG_F32]
    assert k.inspect_asm(SIG_F32) == asm[SIG_F32]
    assert set(k.overloads) == {SIG_F64, SIG_F32}
    with pytest.raises(KeyError, match="no compiled signature"):
        k.inspect_llvm((T.int32[::1], T.int32[::1], T.int32))


def test_inspect_types_lists_each_variable_type():
    k = cuda.jit(scale)
    k[1, 4](np.zeros(4), np.arange(4.0), 2.0)
    f = io.StringIO()
    assert k.inspect_types(file=f) is None
    text = f.getvalue()
    assert text.startswith("scale (array(float64, 1d, C), array(float64, 1d, C), float64)")
    assert "#   i: int64" in text and "#   t: float64" in text and "#   s: float64" in text
    assert "t = a[i] * s" in text
    with pytest.raises(KeyError):
        k.inspect_types(file=f, signature=SIG_F32)


def test_types_listing_follows_argument_types():
    text = types_listing(scale, SIG_F32)
    assert "#   t: float32" in text and "#   i: int64" in text


def test_inspect_sass_needs_nvdisasm():
    k = cuda.jit(scale)
    k[1, 4](np.zeros(4), np.arange(4.0), 2.0)
    if find_nvdisasm() is None:
        with pytest.raises(RuntimeError, match="nvdisasm"):
            k.inspect_sass()
    else:
        sass = k.inspect_sass(SIG_F64)
        assert "DMUL" in sass


def test_sass_of_without_cubin_is_a_clear_error():
    with pytest.raises(RuntimeError, match="no cubin"):
        sass_of(None, "k")


def test_forall_covers_ntasks():
    k = cuda.jit(scale)
    n = 1000
    a, r = np.arange(n, dtype=np.float64), np.zeros(n)
    k.forall(n)(r, a, 2.0)
    assert np.array_equal(r, 2 * a)
    r[:] = 0
    k.forall(n, tpb=64)(r, a, 3.0)
    assert np.array_equal(r, 3 * a)
    r[:] = -1
    k.forall(0)(r, a, 3.0)          # nothing to do: no launch
    assert (r == -1).all()


def test_forall_negative_ntasks_says_numbas_message():
    with pytest.raises(ValueError, match="Can't create ForAll with negative task count: -3"):
        cuda.jit(scale).forall(-3)


@pytest.mark.parametrize("ntasks,tpb,exc", [(-1, 0, ValueError), (2.5, 0, TypeError),
                                            (True, 0, TypeError), (4, -2, ValueError)])
def test_forall_bad_arguments(ntasks, tpb, exc):
    with pytest.raises(exc):
        cuda.jit(scale).forall(ntasks, tpb)


def test_specialize_fixes_types_and_is_cached():
    k = cuda.jit(scale)
    r, a = np.zeros(4), np.arange(4.0)
    s = k.specialize(r, a, 1.0)
    assert s.specialized and not k.specialized
    assert s is k.specialize(r, a, 1.0)
    assert s.signatures == [SIG_F64]
    s[1, 4](r, a, 5.0)
    assert r.tolist() == [0, 5, 10, 15]
    with pytest.raises(RuntimeError, match="already specialized"):
        s.specialize(r, a, 1.0)
    with pytest.raises(TypeError, match="No matching definition"):
        s[1, 4](np.zeros(4, np.int32), np.zeros(4, np.int32), 1)
    with pytest.raises(TypeError, match="takes 3"):
        k.specialize(r, a)


class Wrapped:
    def __init__(self, arr):
        self.arr = arr


class Unwrap:
    """numba's argument-handler protocol: prepare_args(ty, val, stream=, retr=)."""

    def __init__(self):
        self.post = 0
        self.seen = []

    def prepare_args(self, ty, val, stream=None, retr=None):
        self.seen.append(ty)
        if isinstance(val, Wrapped):
            retr.append(self._after)
            return ty, val.arr
        return ty, val

    def _after(self):
        self.post += 1


class AsInt32:
    def prepare_args(self, ty, val, **kwargs):
        if isinstance(val, int) and not isinstance(val, bool):
            return T.int32, val
        return ty, val


def store_scalar(r, x):
    r[0] = x


def test_extensions_prepare_args_and_post_return():
    h = Unwrap()
    k = cuda.jit(extensions=[h])(scale)
    r, a = np.zeros(4), np.arange(4.0)
    k[1, 4](r, Wrapped(a), 2.0)
    assert r.tolist() == [0, 2, 4, 6]
    assert h.post == 1
    assert h.seen[1] is None and h.seen[2] is T.float64     # no type for the wrapper
    k.forall(4)(r, Wrapped(a), 3.0)
    assert r.tolist() == [0, 3, 6, 9] and h.post == 2


def test_extension_returned_type_types_the_argument():
    k = cuda.jit(extensions=[AsInt32()])(store_scalar)
    r = np.zeros(1, np.int64)
    k[1, 1](r, 7)
    assert r[0] == 7
    assert k.signatures == [(T.int64[::1], T.int32)]


@pytest.mark.parametrize("bad,msg", [(Unwrap(), "must be a list"),
                                     ([object()], "has no prepare_args")])
def test_extensions_option_checked(bad, msg):
    with pytest.raises(TypeError, match=msg):
        cuda.jit(extensions=bad)(scale)


class _CopyInOnly:
    """An argument handler making plain host arrays ``In`` arguments (numba's protocol)."""

    def prepare_args(self, ty, val, **kwargs):
        from cujit.args import wrap_arg
        return ty, wrap_arg(val, default=cuda.In)


def test_extensions_appended_after_jit_and_after_a_launch_take_effect():
    @cuda.jit
    def set3(a):
        a[0] = 3

    host = np.zeros(1)
    set3[1, 1](host)
    assert host[0] == 3                  # a plain host array is copied back
    set3.extensions.append(_CopyInOnly())
    host = np.zeros(1)
    set3[1, 1](host)
    assert host[0] == 0                  # now an In argument: not copied back
    set3.extensions.clear()
    set3[1, 1](host)
    assert host[0] == 3


def test_extensions_list_checks_what_is_added():
    @cuda.jit(extensions=[_CopyInOnly()])
    def k(a):
        a[0] = 1

    assert isinstance(k.extensions[0], _CopyInOnly)
    with pytest.raises(TypeError, match="has no prepare_args"):
        k.extensions.append(object())
    with pytest.raises(TypeError, match="has no prepare_args"):
        k.extensions[0] = 3
    assert len(k.extensions) == 1 and isinstance(k.extensions[0], _CopyInOnly)
