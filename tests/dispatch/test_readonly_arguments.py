"""Writes to read-only kernel arguments.  A read-only NumPy array (or a
__cuda_array_interface__ object whose data is marked read-only) used to type as a mutable
array: on the simulator the write failed late with NumPy's ValueError, on a GPU the write was
made to the device copy and silently dropped (the launch does not copy back into a read-only
array).  Numba types such arrays as readonly and rejects the write at compile time."""
import numpy as np
import pytest

import cujit as cuda


@cuda.jit
def _write_first(x):
    x[0] = 42


@cuda.jit
def _atomic_first(x):
    cuda.atomic.add(x, 0, 1)


@cuda.jit
def _copy(src, dst):
    i = cuda.grid(1)
    if i < src.size:
        dst[i] = src[i] * 2


def _readonly(a):
    a.flags.writeable = False
    return a


def test_write_to_readonly_host_array_is_typing_error():
    a = _readonly(np.arange(4.0))
    with pytest.raises(cuda.TypingError, match="read-only"):
        _write_first[1, 1](a)
    assert (a == np.arange(4.0)).all()


def test_atomic_on_readonly_host_array_is_typing_error():
    a = _readonly(np.zeros(4, np.int32))
    with pytest.raises(cuda.TypingError, match="read-only"):
        _atomic_first[1, 1](a)


def test_reading_a_readonly_host_array_still_works():
    src = _readonly(np.arange(8, dtype=np.float32))
    dst = np.zeros(8, np.float32)
    _copy[1, 8](src, dst)
    assert (dst == np.arange(8, dtype=np.float32) * 2).all()


def test_write_through_readonly_cuda_array_interface_is_typing_error():
    d = cuda.to_device(np.arange(4.0))
    ptr = d.__cuda_array_interface__["data"][0]

    class ReadOnlyView:
        __cuda_array_interface__ = dict(d.__cuda_array_interface__, data=(ptr, True))
    with pytest.raises(cuda.TypingError, match="read-only"):
        _write_first[1, 1](ReadOnlyView())
    assert (d.copy_to_host() == np.arange(4.0)).all()


def _readonly_import():
    d = cuda.to_device(np.arange(4.0))
    ptr = d.__cuda_array_interface__["data"][0]

    class ReadOnlyView:
        __cuda_array_interface__ = dict(d.__cuda_array_interface__, data=(ptr, True))
    return d, cuda.as_cuda_array(ReadOnlyView())


def test_imported_readonly_array_keeps_the_flag_when_exported():
    _, a = _readonly_import()
    assert a.__cuda_array_interface__["data"][1] is True


def test_copy_into_imported_readonly_array_is_refused():
    d, a = _readonly_import()
    with pytest.raises(ValueError, match="read-only"):
        a.copy_to_device(np.ones(4))
    assert (d.copy_to_host() == np.arange(4.0)).all()


@pytest.mark.compile
def test_kernel_reading_readonly_array_compiles_to_ptx():
    # the readonly flag only changes typing; the generated code reads global memory as usual
    from cujit import types as ct
    from cujit.nvvm import linker, libnvvm as nvvm
    from cujit.dispatch.dispatcher import Dispatcher
    if not (nvvm.nvvm_available() and linker.nvjitlink_available()):
        pytest.skip("libNVVM / nvJitLink wheels not installed")
    src = _readonly(np.arange(8, dtype=np.float32))
    ro, rw = ct.typeof(src), ct.typeof(np.zeros(8, np.float32))
    assert ro.readonly and not rw.readonly
    spec = Dispatcher(_copy.py_func, [], {}).compile(ct.Signature(None, (ro, rw)))
    assert ".entry" in spec.ptx and "ld.global" in spec.ptx


def test_imported_readonly_array_refuses_setitem_in_views_and_types_readonly():
    d, a = _readonly_import()
    assert a.flags["WRITEABLE"] is False and a[1:].flags["WRITEABLE"] is False
    assert d.flags["WRITEABLE"] is True and d.__cuda_array_interface__["data"][1] is False
    for write in (lambda: a.__setitem__(0, 5.0), lambda: a[1:].__setitem__(slice(None), 5.0),
                  lambda: cuda.to_device(np.ones(4), to=a)):
        with pytest.raises(ValueError, match="read-only"):
            write()
    with pytest.raises(cuda.TypingError, match="read-only"):
        _write_first[1, 1](a[1:])
    assert (d.copy_to_host() == np.arange(4.0)).all()
    dst = cuda.device_array(4)
    _copy[1, 4](a, dst)             # reading it is fine
    assert (dst.copy_to_host() == np.arange(4.0) * 2).all()


@cuda.jit
def _write_first_again(x):
    x[0] = 42


def test_readonly_import_after_a_writable_launch_is_still_a_typing_error():
    """The first launch installs a fast path for writable float64 arrays; a read-only import
    of the same dtype, ndim and layout must not take it."""
    w = cuda.to_device(np.zeros(4))
    _write_first_again[1, 1](w)
    _write_first_again[1, 1](w)
    assert w.copy_to_host()[0] == 42
    d, a = _readonly_import()
    with pytest.raises(cuda.TypingError, match="read-only"):
        _write_first_again[1, 1](a)
    assert (d.copy_to_host() == np.arange(4.0)).all()
