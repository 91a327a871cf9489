"""numba-cuda programs ported unchanged: numba.cuda's copy-direction hints
``cuda.In(a)``, ``cuda.Out(b)``, ``cuda.InOut(c)`` around kernel arguments were an
AttributeError.  They now decide the copies of host arrays: ``In`` is not copied back (the
kernel's writes to it do not reach the host), ``Out`` and ``InOut`` are."""
import numpy as np
import pytest

import cujit as cuda


@cuda.jit
def _axpy(out, x, y):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = 2 * x[i] + y[i]
        x[i] = -1           # written, but x is In: the host array keeps its values


def test_in_out_inout_copies_as_numba():
    x = np.arange(8.0)
    y = np.ones(8)
    out = np.zeros(8)
    _axpy[1, 8](cuda.Out(out), cuda.In(x), cuda.InOut(y))
    assert out.tolist() == (2 * np.arange(8.0) + 1).tolist()
    assert x.tolist() == np.arange(8.0).tolist()
    assert y.tolist() == [1.0] * 8


@cuda.jit
def _bump(a):
    i = cuda.grid(1)
    if i < a.size:
        a[i] += 1


def test_inout_writes_come_back_and_in_writes_do_not():
    a = np.zeros(4)
    _bump[1, 4](cuda.InOut(a))
    assert a.tolist() == [1.0] * 4
    _bump[1, 4](cuda.In(a))
    assert a.tolist() == [1.0] * 4


def test_hints_around_device_arrays_and_scalars_pass_them_through():
    d = cuda.to_device(np.zeros(4))
    _bump[1, 4](cuda.In(d))      # a device array is used in place whatever the hint says
    assert d.copy_to_host().tolist() == [1.0] * 4

    @cuda.jit
    def scaled(out, k):
        out[0] = k * 2

    out = np.zeros(1)
    scaled[1, 1](cuda.Out(out), cuda.In(21.0))
    assert out[0] == 42.0


def test_hint_repr_and_value():
    a = np.zeros(2)
    h = cuda.Out(a)
    assert h.value is a and repr(h).startswith("Out(")


def test_hint_around_a_freed_array_is_refused():
    from cujit.memory.pointers import DeadMemoryError
    d = cuda.to_device(np.zeros(4))
    d.gpu_data.free() if hasattr(d.gpu_data, "free") else pytest.skip("no explicit free")
    with pytest.raises(DeadMemoryError, match="argument 0 of kernel"):
        _bump[1, 4](cuda.In(d))


@pytest.mark.parametrize("hint", [cuda.In, cuda.InOut, cuda.Out])
def test_hint_around_a_read_only_array_is_typed_read_only(hint):
    # as a plain read-only host array: a write is a TypingError on both backends
    a = np.zeros(4)
    a.flags.writeable = False
    with pytest.raises(cuda.TypingError, match="read-only"):
        _bump[1, 4](hint(a))
    assert (a == 0).all()
