"""Exact contracts of the simulator's memory helpers (docs/testing.md: written to kill the
mutants that survived): CAI views, extents, constant-memory copies."""
import numpy as np
import pytest

import cujit
from cujit.simulator import memory as M

pytestmark = pytest.mark.sim


@pytest.mark.parametrize("shape,strides,itemsize,want", [
    ((3, 4), (32, 8), 8, (0, 96)), ((3, 4), (-32, 8), 8, (-64, 96)),
    ((3, 4), (32, -8), 8, (-24, 96)), ((3, 0), (32, 8), 8, (0, 0)), ((), (), 4, (0, 4)),
    ((5,), (0,), 4, (0, 4))])
def test_extent_is_low_offset_and_span(shape, strides, itemsize, want):
    assert M._extent(shape, strides, itemsize) == want


@pytest.mark.parametrize("key", [np.s_[:], np.s_[:, ::2], np.s_[::-1, 1:], np.s_[1:3, ::-2],
                                 np.s_[2:2], np.s_[:, 0]])
def test_cai_view_matches_the_array(key):
    h = np.arange(48, dtype=np.int32).reshape(6, 8)
    d = cujit.to_device(h)[key]
    desc = d.__cuda_array_interface__
    v = M.cai_view(desc)
    assert v.shape == h[key].shape and v.dtype == np.int32
    assert np.array_equal(v, h[key])
    if v.size:
        v.flat[0] = -7                    # a view of the device memory, not a copy
        assert d.copy_to_host().flat[0] == -7


def test_cai_view_structured_and_null():
    rec = np.dtype([("a", np.int32), ("b", np.float64)])
    h = np.zeros(3, rec)
    h["a"] = [1, 2, 3]
    d = cujit.to_device(h)
    desc = dict(d.__cuda_array_interface__, descr=rec.descr, typestr="|V16")
    v = M.cai_view(desc)
    assert v.dtype == rec and v["a"].tolist() == [1, 2, 3]
    empty = M.cai_view({"shape": (0, 3), "typestr": "<f4", "data": (None, False),
                        "version": 3, "strides": None})
    assert empty.shape == (0, 3) and empty.dtype == np.float32


def test_frozen_const_is_a_read_only_copy():
    a = np.arange(6, dtype=np.float32).reshape(2, 3)[:, ::2]
    c = M.frozen_const(a)
    assert np.array_equal(c, a) and c.flags.writeable is False
    assert not np.shares_memory(c, a)
    a[0, 0] = 99
    assert c[0, 0] == 0
    rec = np.zeros(2, [("x", np.int16)])
    rc = M.frozen_const(rec)
    assert isinstance(rc, np.recarray) and rc.x.tolist() == [0, 0]


def test_frozen_const_limits():
    from cujit.frontend.errors import CompileError, TypingError
    with pytest.raises(TypingError, match="const.array_like: expected a NumPy array known at "
                                          "compile time, got list"):
        M.frozen_const([1, 2])
    limit = cujit.get_current_device().TOTAL_CONSTANT_MEMORY
    ok = M.frozen_const(np.zeros(limit, np.uint8))      # exactly the limit fits
    assert ok.nbytes == limit
    with pytest.raises(CompileError) as ei:
        M.frozen_const(np.zeros(limit + 1, np.uint8))
    msg = str(ei.value)
    assert f"const.array_like of {limit + 1} bytes (shape ({limit + 1},), uint8) does not " \
           f"fit; constant memory holds {limit} bytes ({limit // 1024} KiB)" in msg


@pytest.mark.parametrize("given,want", [(int, "int64"), (float, "float64"), (bool, "bool"),
                                        (complex, "complex128"), (np.float32, "float32"),
                                        ("f4", "float32"), (cujit.float32, "float32"),
                                        (np.dtype("i2"), "int16"), (np.uint8, "uint8")])
def test_as_dtype_accepts_every_spelling(given, want):
    assert M.as_dtype(given, "shared.array") == np.dtype(want)
    assert M.as_dtype(given, "shared.array") == np.dtype(want)      # cached the same


def _api(fn, *args):
    """Stands in for a kernel-API function (``shared.array``) that calls the helper."""
    return fn(*args)


def _kernel(fn, *args):
    return _api(fn, *args)          # the line an error must point at


_KERNEL_LINE = f"line {_kernel.__code__.co_firstlineno + 1}, "


@pytest.mark.parametrize("bad", ["nope", 3, object])
def test_as_dtype_error_names_the_dtype_and_the_caller(bad):
    from cujit.frontend.errors import TypingError
    with pytest.raises(TypingError) as ei:
        M.as_dtype(bad, "local.array")
    first = str(ei.value).splitlines()[0]
    assert first == (f"local.array: dtype {bad!r} is not a type cujit knows (expected a "
                     "cujit/Numba type, a NumPy dtype or type, or a string such as 'float32')")


# (mutmut's trampolines add frames, so its runs deselect the two caller_line tests)
def test_as_dtype_error_caller_line():
    from cujit.frontend.errors import TypingError
    with pytest.raises(TypingError) as ei:
        _kernel(M.as_dtype, "nope", "local.array")
    assert "test_sim_memory_contracts.py" in str(ei.value) and _KERNEL_LINE in str(ei.value)


@pytest.mark.parametrize("shape,want", [(4, (4,)), (np.int32(4), (4,)), ((2, 3), (2, 3)),
                                        ((np.int64(2), 0), (2, 0)), ((), ())])
def test_check_shape_normalises(shape, want):
    out = M.check_shape(shape, "shared.array")
    assert out == want and all(type(n) is int for n in out)


@pytest.mark.parametrize("shape,msg", [
    (2.5, "shared.array: shape 2.5 must be a constant int or tuple of ints"),
    ((True,), "shared.array: shape (True,) must be a constant int or tuple of ints"),
    ((2, 1.0), "shared.array: shape (2, 1.0) must be a constant int or tuple of ints"),
    ((2, -1), "shared.array: shape (2, -1) has a negative extent"),
    (-3, "shared.array: shape (-3,) has a negative extent")])
def test_check_shape_error_messages(shape, msg):
    from cujit.frontend.errors import TypingError
    with pytest.raises(TypingError) as ei:
        M.check_shape(shape, "shared.array")
    assert str(ei.value).splitlines()[0] == msg


@pytest.mark.parametrize("shape", [2.5, (2, -1)])
def test_check_shape_error_caller_line(shape):
    from cujit.frontend.errors import TypingError
    with pytest.raises(TypingError) as ei:
        _kernel(M.check_shape, shape, "shared.array")
    line = str(ei.value).splitlines()[1]
    assert "test_sim_memory_contracts.py" in line and _KERNEL_LINE in line


def test_device_view_of_memory_and_of_nothing():
    h = np.arange(12, dtype=np.float64).reshape(3, 4)
    d = cujit.to_device(h)
    ptr = d.device_ctypes_pointer.value
    v = M.device_view(ptr, (3, 4), (32, 8), np.float64)
    assert np.array_equal(v, h) and v.strides == (32, 8)
    last = ptr + 88                                   # element [2, 3], walking backwards
    r = M.device_view(last, (3, 4), (-32, -8), np.float64)
    assert np.array_equal(r, h[::-1, ::-1])
    z = M.device_view(0, (0, 4), (32, 8), np.float32)
    assert z.shape == (0, 4) and z.dtype == np.float32
    n = M.device_view(0, (2,), (8,), "f8")             # NULL: zeros, nothing read
    assert n.tolist() == [0.0, 0.0] and n.dtype == np.float64
    one = M.device_view(ptr + 8, (), (), np.float64)
    assert one[()] == 1.0
