"""Launch configurations, device limits and kernel-level limits (R-KER-1, launch-time limits)."""
import numpy as np
import pytest
from hypothesis import given, strategies as st

from cujit.dispatch import launcher as ln

LIM = ln.device_limits(0)       # the active backend's device 0 (fake H200 on the simulator)


def cfg(g=1, b=1, s=0, sh=0):
    return ln.make_config(g, b, s, sh, 0)


@given(st.integers(1, 2**20))
def test_int_dims(n):
    assert ln.normalize_dims(n, "griddim", "") == (n, 1, 1)
    assert ln.normalize_dims(np.int32(min(n, 2**31 - 1)), "griddim", "")[0] == min(n, 2**31 - 1)


@given(st.lists(st.integers(1, 1000), min_size=1, max_size=3))
def test_tuple_dims(dims):
    out = ln.normalize_dims(tuple(dims), "blockdim", "")
    assert out == tuple(dims) + (1,) * (3 - len(dims))
    assert ln.normalize_dims(list(dims), "blockdim", "") == out


@pytest.mark.parametrize("bad, exc, words", [
    ((), ValueError, "a sequence of 1, 2 or 3 integers"), ((1, 2, 3, 4), ValueError, "a sequence of 1, 2 or 3 integers"),
    (0, ValueError, ">= 1"), ((4, -1), ValueError, ">= 1"), (1.0, TypeError, "float"),
    ("8", TypeError, "str"), ((2, 2.5), TypeError, "float"), (True, TypeError, "bool"),
    (None, TypeError, "NoneType")])
def test_bad_dims_name_config(bad, exc, words):
    with pytest.raises(exc) as ei:
        cfg(g=bad, b=32)
    msg = str(ei.value)
    assert "griddim" in msg and words in msg and "launch configuration [" in msg
    with pytest.raises(exc, match="blockdim"):
        cfg(g=1, b=bad)


def test_config_fields():
    c = cfg((4, 2), (32, 4, 2), None, 128)
    assert c.griddim == (4, 2, 1) and c.blockdim == (32, 4, 2)
    assert c.nthreads == 256 and c.sharedmem == 128 and c.stream_handle == 0
    assert c.largs == (4, 2, 1, 32, 4, 2, 128, 0)
    assert c.ok == set() and "[(4, 2), (32, 4, 2)" in repr(c)


def test_block_limits():
    top = LIM["MAX_THREADS_PER_BLOCK"]
    assert cfg(b=top).nthreads == top
    with pytest.raises(ValueError, match=f"MAX_THREADS_PER_BLOCK = {top}") as ei:
        cfg(b=top + 1)
    assert str(top + 1) in str(ei.value)
    with pytest.raises(ValueError, match="MAX_THREADS_PER_BLOCK"):
        cfg(b=(32, 32, 2))
    z = LIM["MAX_BLOCK_DIM_Z"]
    with pytest.raises(ValueError, match=f"blockdim.z = {z + 1} exceeds the device's "
                                         f"MAX_BLOCK_DIM_Z = {z}"):
        cfg(b=(1, 1, z + 1))


def test_grid_limits():
    gy = LIM["MAX_GRID_DIM_Y"]
    assert cfg(g=(1, gy)).griddim == (1, gy, 1)
    with pytest.raises(ValueError, match=f"griddim.y = {gy + 1} exceeds the device's "
                                         f"MAX_GRID_DIM_Y = {gy}"):
        cfg(g=(1, gy + 1))
    gx = LIM["MAX_GRID_DIM_X"]
    with pytest.raises(ValueError, match="MAX_GRID_DIM_X"):
        cfg(g=gx + 1)


def test_dynamic_shared_limits():
    optin = LIM["MAX_SHARED_MEMORY_PER_BLOCK_OPTIN"]
    assert cfg(sh=optin).sharedmem == optin
    with pytest.raises(ValueError) as ei:
        cfg(sh=optin + 1)
    msg = str(ei.value)
    assert "shared memory" in msg and str(optin + 1) in msg and str(optin) in msg
    with pytest.raises(ValueError, match=">= 0"):
        cfg(sh=-1)
    with pytest.raises(TypeError, match="dynamic_shared_bytes must be an int"):
        cfg(sh=1.5)
    with pytest.raises(TypeError, match="dynamic_shared_bytes"):
        cfg(sh=True)


def test_bad_stream():
    with pytest.raises(TypeError, match="stream") as ei:
        cfg(s="fast")
    assert "launch configuration" in str(ei.value)
    with pytest.raises(TypeError):
        cfg(s=3.0)


def test_cuda_stream_protocol_stream():
    """Case 32: an object whose __cuda_stream__() returns (0, handle) is a launch stream."""
    import cujit

    s = cujit.stream()

    class Foreign:
        def __cuda_stream__(self):
            return (0, s.handle)

    c = cfg(s=Foreign())
    assert c.stream_handle == s.handle
    assert c.largs[-1] == s.handle


def test_function_limits_raise_dynamic_shared_attribute():
    calls = []
    info = ln.FunctionInfo(7, "k", 512, 1000, 48 * 1024, 227 * 1024)
    assert info.dyn_limit == 48 * 1024 - 1000
    c = cfg(b=512, sh=1024)
    ln.check_function_limits(c, info, lambda *a: calls.append(a))
    assert calls == [] and c.ok == {info}
    big = cfg(b=128, sh=100_000)
    ln.check_function_limits(big, info, lambda *a: calls.append(a))
    assert calls == [(7, "MAX_DYNAMIC_SHARED_SIZE_BYTES", 100_000)]
    assert info.dyn_limit == 100_000
    ln.check_function_limits(cfg(sh=90_000), info, lambda *a: calls.append(a))
    assert len(calls) == 1          # already raised far enough


def test_function_limits_exact_limits_are_allowed():
    """Each limit is inclusive: exactly MAX_THREADS_PER_BLOCK threads, exactly the default
    dynamic budget (no cuFuncSetAttribute), exactly the opt-in maximum (raised, not refused)."""
    calls = []
    info = ln.FunctionInfo(7, "k", 256, 1000, 48 * 1024, 227 * 1024)
    c = cfg(b=256, sh=48 * 1024 - 1000)
    ln.check_function_limits(c, info, lambda *a: calls.append(a))
    assert calls == [] and c.ok == {info}
    c = cfg(b=1, sh=227 * 1024 - 1000)
    ln.check_function_limits(c, info, lambda *a: calls.append(a))
    assert calls == [(7, "MAX_DYNAMIC_SHARED_SIZE_BYTES", 227 * 1024 - 1000)]
    assert c.ok == {info} and info.dyn_limit == 227 * 1024 - 1000
    c = cfg(b=257)
    with pytest.raises(ValueError, match="at most 256 threads"):
        ln.check_function_limits(c, info, None)
    info2 = ln.FunctionInfo(8, "k2", 256, 1000, 48 * 1024, 227 * 1024)
    with pytest.raises(ValueError, match="shared memory"):
        ln.check_function_limits(cfg(sh=227 * 1024 - 999), info2, None)


def test_function_limits_errors():
    info = ln.FunctionInfo(7, "k", 256, 1000, 48 * 1024, 227 * 1024)
    c = cfg(b=512)
    with pytest.raises(ValueError, match="at most 256 threads") as ei:
        ln.check_function_limits(c, info, None)
    assert "512" in str(ei.value) and c.ok == set()
    c = cfg(sh=227 * 1024)
    with pytest.raises(ValueError) as ei:
        ln.check_function_limits(c, info, None)
    msg = str(ei.value)
    assert "shared memory" in msg and str(227 * 1024 + 1000) in msg and str(227 * 1024) in msg
    assert c.ok == set()
