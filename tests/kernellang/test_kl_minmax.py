"""Builtin ``min``/``max`` in kernels.  Two float32/float64 arguments are libdevice's
``fmin``/``fmax`` (PTX ``min.f*``/``max.f*``: a NaN loses to a number), as numba-cuda
lowers them; three or more arguments, integers and a tuple follow Python's rule (the first
extreme argument wins, NaN included).  Each is checked on the active backend (the simulator
here, per thread and whole-block) and in the PTX (the generated IR run on the host:
tests/nvvm/test_lower_cpu_data.py)."""
import math

import numpy as np
import pytest

import cujit as cuda
from cujit import types as T

from _kl_helpers import ptx_of

NAN = math.nan


def two(out, a, b):
    i = cuda.grid(1)
    if i < out.shape[0]:
        out[i, 0] = max(a[i], b[i])
        out[i, 1] = min(a[i], b[i])


def three(out, a, b):
    i = cuda.grid(1)
    if i < out.shape[0]:
        out[i, 0] = max(a[i], b[i], a[i])
        out[i, 1] = min(a[i], b[i], a[i])


A = [1.0, NAN, 2.0, NAN, -1.5, 3.0]
B = [NAN, 1.0, NAN, NAN, 2.5, -3.0]


@pytest.mark.parametrize("da,db", [(np.float64, np.float64), (np.float32, np.float32),
                                   (np.float32, np.float64), (np.float64, np.float32)])
def test_two_floats_ignore_nan(da, db):
    a, b = np.array(A, da), np.array(B, db)
    out = np.zeros((len(A), 2), np.result_type(da, db))
    cuda.jit(two)[1, 32](out, a, b)
    np.testing.assert_array_equal(out[:, 0], np.fmax(a, b))
    np.testing.assert_array_equal(out[:, 1], np.fmin(a, b))


def test_three_floats_follow_python():
    a, b = np.array(A), np.array(B)
    out = np.zeros((len(A), 2))
    cuda.jit(three)[1, 32](out, a, b)
    want_max = [max(x, y, x) for x, y in zip(A, B)]
    want_min = [min(x, y, x) for x, y in zip(A, B)]
    np.testing.assert_array_equal(out[:, 0], want_max)
    np.testing.assert_array_equal(out[:, 1], want_min)


def scalar_pair(out, x, y):
    out[0] = max(x, y)
    out[1] = min(x, y)
    out[2] = max(x, y, 0.0)


@pytest.mark.parametrize("x,y", [(NAN, 1.0), (1.0, NAN), (-2.0, 3.0)])
def test_one_thread_scalars(x, y):
    # the per-thread simulator path (one thread, scalar arguments)
    out = np.zeros(3)
    cuda.jit(scalar_pair)[1, 1](out, x, y)
    np.testing.assert_array_equal(out[:2], [np.fmax(x, y), np.fmin(x, y)])
    np.testing.assert_array_equal(out[2:], [max(x, y, 0.0)])


@pytest.mark.compile
@pytest.mark.parametrize("ta,tb,insn", [(T.float64, T.float64, "max.f64"),
                                        (T.float32, T.float64, "max.f64"),
                                        (T.float32, T.float32, "max.f32")])
def test_ptx_uses_max_instruction(ta, tb, insn):
    ptx = ptx_of(two, argtypes=(T.float64[:, ::1], ta[::1], tb[::1]))
    assert insn in ptx and insn.replace("max", "min") in ptx
