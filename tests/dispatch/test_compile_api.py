"""numba.cuda's ahead-of-time API (``cujit.compile``, ``compile_ptx``, ...,
``declare_device``) and the profiler controls (``profile_start``/``stop``, ``profiling``)."""
import numpy as np
import pytest

import cujit as cuda
from cujit import types as T
from cujit.frontend.errors import TypingError


def add(a, b):
    return a + b


def store(o, x):
    o[0] = x * 3


def returns(o):
    return 1


@pytest.mark.compile
def test_compile_device_function_ptx_and_return_type():
    ptx, resty = cuda.compile(add, "float32(float32, float32)")
    assert resty == T.float32
    assert ".func" in ptx and ".entry" not in ptx and ".target sm_90" in ptx


@pytest.mark.compile
def test_compile_ptx_kernel_default_and_cc():
    ptx, resty = cuda.compile_ptx(store, "void(float32[:], float32)", cc=(8, 0))
    assert resty == T.void
    assert ".entry" in ptx and ".target sm_80" in ptx
    ptx2, _ = cuda.compile_ptx(cuda.jit(store), (T.float32[:], T.float32))    # a Dispatcher
    assert ".entry" in ptx2


@pytest.mark.compile
def test_compile_ptx_device_and_options():
    ptx, resty = cuda.compile_ptx(add, "int64(int64, int64)", device=True, opt=False,
                                  lineinfo=True, fastmath=True)
    assert resty == T.int64 and ".func" in ptx and ".loc" in ptx


@pytest.mark.compile
def test_compile_for_current_device():
    cc = cuda.get_current_device().compute_capability
    ptx, resty = cuda.compile_ptx_for_current_device(store, "void(float64[:], float64)")
    assert f".target sm_{cc[0]}{cc[1]}" in ptx and resty == T.void
    ptx, resty = cuda.compile_for_current_device(add, "float64(float64, float64)")
    assert resty == T.float64 and f".target sm_{cc[0]}{cc[1]}" in ptx


def test_compile_kernel_returning_value_is_typing_error():
    with pytest.raises(TypingError, match="kernel cannot return a value"):
        cuda.compile_ptx(returns, "int32(float32[:])")


@pytest.mark.parametrize("kw, exc, text", [
    ({"output": "cubin"}, ValueError, "output must be 'ptx' or 'ltoir', got 'cubin'"),
    ({"abi": "fortran"}, ValueError, "'fortran'"),
    ({"abi_info": {"abi_name": "f"}, "abi": "numba"}, ValueError, "needs abi='c'"),
    ({"abi_info": {"abi_name": "f"}, "device": False}, ValueError, "needs abi='c'"),
    ({"abi_info": {"abi_name": "not a name"}}, ValueError, "C identifier"),
    ({"abi_info": {"name": "f"}}, ValueError, "the key 'abi_name'"),
    ({"forceinline": True}, ValueError, "Can only designate forced inlining in LTO-IR"),
])
def test_compile_unsupported_options(kw, exc, text):
    with pytest.raises(exc, match=text.replace("(", r"\(")):
        cuda.compile(add, "float32(float32, float32)", **kw)


def test_declare_device_rejects_a_bad_name():
    with pytest.raises(ValueError, match="C identifier"):
        cuda.declare_device("not a name", "float32(float32)")


def test_profiling_calls_the_driver(monkeypatch):
    from cujit.driver import get_driver
    cuda.current_context()
    drv = get_driver()
    calls = []
    monkeypatch.setattr(drv, "profiler_start", lambda: calls.append("start"), raising=False)
    monkeypatch.setattr(drv, "profiler_stop", lambda: calls.append("stop"), raising=False)
    cuda.profile_start()
    cuda.profile_stop()
    with pytest.raises(KeyError):
        with cuda.profiling():
            calls.append("body")
            raise KeyError("x")
    assert calls == ["start", "stop", "start", "body", "stop"]


def test_profiling_real_calls_return_none():
    # the driver's own calls (cuProfilerStart/Stop on a GPU, no-ops on the simulator)
    assert cuda.profile_start() is None
    assert cuda.profile_stop() is None
    with cuda.profiling():
        out = np.zeros(1)
        cuda.jit(store)[1, 1](out, 2.0)
    assert out[0] == 6.0
