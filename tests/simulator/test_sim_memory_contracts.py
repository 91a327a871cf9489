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
    from cujit.compiler.errors import CompileError, TypingError
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
