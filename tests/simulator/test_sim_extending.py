"""The simulator's execution of the extension API's calls (typedast.c_overload /
c_user_intrinsic, vecexpr.vc_overload): an overload runs lane by lane on the vector executor
and per thread, bit for bit alike; an intrinsic's Python implementation gets its arguments
converted to the signature's types and its result converted to the return type, as the
compiled call does; an overload whose implementation captures a device array sees the
launch's view of it."""
import sys

import numpy as np
import pytest

import cujit as cuda
from cujit import extending, types

pytestmark = pytest.mark.sim

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from vector_helpers import compare  # noqa: E402


def smoothstep(x):
    raise NotImplementedError


@extending.overload(smoothstep)
def _smoothstep(x):
    if isinstance(x, types.Float):
        def impl(x):
            t = min(max(x, 0.0), 1.0)
            return t * t * (3.0 - 2.0 * t)
        return impl


def k_smooth(out, x, n):
    i = cuda.grid(1)
    if i < n:
        out[i] = smoothstep(x[i])


def test_overload_runs_vectorized_and_per_thread_alike(monkeypatch):
    x = np.linspace(-0.5, 1.5, 64).astype(np.float32)
    out = compare(monkeypatch, k_smooth, 2, 32, np.zeros(64, np.float32), x, 64)[0]
    t = np.clip(x, 0, 1)
    np.testing.assert_allclose(out, t * t * (3 - 2 * t), rtol=1e-6)


@extending.intrinsic(sim=lambda a: a * 2)       # sees int8 values, as the GPU's i8
def double8(typingctx, a):
    def codegen(context, builder, signature, args):
        return builder.add(args[0], args[0])
    return types.int8(types.int8), codegen


def k_double8(out, x):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = double8(x[i])


def test_intrinsic_result_wraps_to_its_return_type(monkeypatch):
    x = np.array([1, 100, -100, 300], np.int64)      # 300 converts to int8 44
    out = compare(monkeypatch, k_double8, 1, 4, np.zeros(4, np.int64), x, expect=None)[0]
    assert out.tolist() == [2, -56, 56, 88]


captured = cuda.to_device(np.array([10.0, 20.0, 30.0]))


def offset(i):
    raise NotImplementedError


@extending.overload(offset)
def _offset(i):
    def impl(i):
        return captured[i] + 1.0
    return impl


def k_offset(out):
    i = cuda.grid(1)
    if i < 3:
        out[i] = offset(i)


def test_overload_implementation_reads_a_captured_device_array():
    out = np.zeros(3)
    cuda.jit(k_offset)[1, 3](out)
    assert out.tolist() == [11.0, 21.0, 31.0]
