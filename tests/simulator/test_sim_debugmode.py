"""``jit(debug=True)`` on the simulator (simulator/debugmode.py): a kernel's exception has the
compiled debug kernel's message, numba's ``In function 'f', file f.py, line N, tid=[..]
ctaid=[..]: message``, naming the thread once."""
import inspect

import numpy as np
import pytest

import cujit as cuda

pytestmark = pytest.mark.sim


class Boom(Exception):
    pass


def _line(fn, text):
    lines, start = inspect.getsourcelines(fn)
    return start + next(k for k, line in enumerate(lines) if text in line)


def _asserts(x):
    assert x[0] == 1, "x0 not one"


def _raises(x):
    if cuda.threadIdx.x == 3 and cuda.blockIdx.x == 1:
        raise Boom("bad thread")


def _device_raises(v):
    if v > 2:
        raise Boom("from the device function")
    return v


def _calls_device(x):
    x[cuda.threadIdx.x] = _dev(cuda.threadIdx.x)


_dev = cuda.jit(device=True)(_device_raises)


@pytest.mark.parametrize("fn, launch_cfg, cls, where, message", [
    (_asserts, (1, 1), AssertionError, "_asserts", "tid=[0, 0, 0] ctaid=[0, 0, 0]: x0 not one"),
    (_raises, (2, 4), Boom, "_raises", "tid=[3, 0, 0] ctaid=[1, 0, 0]: bad thread"),
    (_calls_device, (1, 4), Boom, "_device_raises",
     "tid=[3, 0, 0] ctaid=[0, 0, 0]: from the device function"),
])
def test_a_debug_kernels_exception_has_the_compiled_kernels_message(fn, launch_cfg, cls, where,
                                                                    message):
    k = cuda.jit(debug=True, opt=False)(fn)
    with pytest.raises(cls) as ei:
        k[launch_cfg](np.zeros(4))
    src = {"_asserts": _asserts, "_raises": _raises, "_device_raises": _device_raises}[where]
    line = _line(src, "raise Boom" if where != "_asserts" else "assert x")
    assert str(ei.value) == (f"In function '{where}', file {__file__}, line {line}, "
                             f"{message}")


def test_without_debug_the_simulator_names_the_thread_and_site():
    k = cuda.jit(_asserts)
    with pytest.raises(AssertionError, match=r"^threadIdx=\(0, 0, 0\) blockIdx=\(0, 0, 0\) at "
                       r"test_sim_debugmode.py:\d+: x0 not one$"):
        k[1, 1](np.zeros(1))
