"""run_kernel's launch path: compile-time check hook, streams, errors, argument handling."""
import sys
import types

import numpy as np
import pytest

import cujit as cuda
from cujit.frontend.errors import TypingError
from cujit.driver.errors import CudaAPIError
from cujit.kernelapi import _state

pytestmark = pytest.mark.sim


def _fresh_kernel():
    def k(a, n):
        i = cuda.grid(1)
        if i < n:
            a[i] = i
    return k


def test_typecheck_called_once_per_signature_and_errors_propagate(launch, monkeypatch):
    from cujit.simulator.kernel import SimKernel
    calls = []

    def type_launch(pyfunc, args, debug=False, source=None):
        calls.append(tuple(type(a).__name__ for a in args))
        if isinstance(args[1], float):
            raise TypingError("n must be an integer")

    fake = types.ModuleType("cujit.frontend.typecheck")
    fake.type_launch = type_launch
    monkeypatch.setitem(sys.modules, "cujit.frontend.typecheck", fake)
    k = SimKernel(_fresh_kernel())      # what a dispatcher keeps: typed once per signature
    a = np.zeros(4)
    launch(k, 1, 4, a, 4)
    launch(k, 1, 4, a, 3)
    assert calls == [("ndarray", "int")]
    assert a.tolist() == [0, 1, 2, 3]
    with pytest.raises(TypingError, match="n must be an integer"):
        launch(k, 1, 4, a, 4.0)
    launch(k, 1, 4, np.zeros(4, np.int32), 4)
    assert len(calls) == 3


def test_unknown_stream_is_a_driver_error(launch):
    with pytest.raises(CudaAPIError, match="cuLaunchKernel"):
        launch(_fresh_kernel(), 1, 4, np.zeros(4), 4, stream=0xDEAD)


def test_launch_on_a_stream_runs_in_order(launch):
    s = cuda.stream()
    a = np.zeros(4)
    order = []
    s.add_callback(lambda *_: order.append(("before", a.sum())))
    launch(_fresh_kernel(), 1, 4, a, 4, stream=s)
    s.add_callback(lambda *_: order.append(("after", a.sum())))
    s.synchronize()
    assert order == [("before", 0.0), ("after", 6.0)]


def printer():
    print("thread", cuda.threadIdx.x, "block", cuda.blockIdx.x)


def test_print_in_kernel(launch, capsys):
    launch(printer, 2, 2)
    assert capsys.readouterr().out == ("thread 0 block 0\nthread 1 block 0\n"
                                       "thread 0 block 1\nthread 1 block 1\n")


class TwoArgs(Exception):
    def __init__(self, code, text):
        super().__init__(code, text)
        self.code = code


def raise_two_args():
    if cuda.blockIdx.y == 1 and cuda.threadIdx.x == 2:
        raise TwoArgs(7, "odd")


def test_exception_that_cannot_be_rebuilt_keeps_type_and_gets_a_note(launch, no_typecheck):
    with pytest.raises(TwoArgs) as ei:
        launch(raise_two_args, (1, 2), 4)
    assert ei.value.code == 7
    assert any(n.startswith("threadIdx=(2, 0, 0) blockIdx=(0, 1, 0) at test_sim_launch.py:")
               for n in ei.value.__notes__)
    assert _state.current is None


def zero_size(a, out):
    out[0] = a.size
    out[1] = len(a)


def test_zero_size_and_empty_device_arrays(launch):
    out = np.zeros(2)
    launch(zero_size, 1, 1, cuda.device_array(0, np.float32), out)
    assert out.tolist() == [0, 0]


def record_arg(r, out):
    out[0] = r.x + r.y


def test_device_record_argument(launch, no_typecheck):
    dt = np.dtype([("x", np.float64), ("y", np.float64)])
    rec = np.zeros(1, dt)[0]
    rec["x"], rec["y"] = 1.5, 2.0
    out = np.zeros(1)
    launch(record_arg, 1, 1, cuda.to_device(rec), out)
    assert out[0] == 3.5


def tuple_arg(t, out):
    out[0] = t[0] * t[1]


def test_tuple_and_scalar_arguments(launch):
    out = np.zeros(1)
    launch(tuple_arg, 1, 1, (3, 4.5), out)
    assert out[0] == 13.5


def freed_arg(a):
    a[0] = 1


def test_freed_device_memory_is_a_driver_error(launch):
    d = cuda.device_array(4)
    ptr = d._data_ptr

    class Dangling:
        __cuda_array_interface__ = {"data": (ptr, False), "shape": (4,), "typestr": "<f8",
                                    "strides": None, "version": 3}
    del d
    import gc
    gc.collect()
    cuda.current_context().memory_manager.deallocations.clear()   # run the queued free
    with pytest.raises(CudaAPIError, match="not device-accessible"):
        launch(freed_arg, 1, 1, Dangling())


def test_host_copy_into_memory_next_to_a_registered_range():
    """Sim-driver fix: pageable host memory that starts inside a page-locked range and runs
    past it is still plain host memory for a copy (a real driver copies it)."""
    import ctypes
    from cujit.driver import get_driver
    drv = get_driver()
    buf = np.zeros(3 * 4096, np.uint8)
    base = (buf.ctypes.data + 4095) // 4096 * 4096
    drv.mem_host_register(base, 4096)
    try:
        dev = drv.mem_alloc(1000)
        drv.memset_d8(dev, 7, 1000)
        drv.memcpy_dtoh(base + 3500, dev, 1000)       # 596 bytes inside, 404 past the end
        got = np.frombuffer((ctypes.c_uint8 * 1000).from_address(base + 3500), np.uint8)
        assert (got == 7).all()
        with pytest.raises(CudaAPIError, match="runs past the end"):
            drv.memcpy_dtod(dev + 500, dev, 1000)       # device memory stays strict
        drv.mem_free(dev)
    finally:
        drv.mem_host_unregister(base)


class _Foreign:
    def __init__(self, desc):
        self.__cuda_array_interface__ = desc


@cuda.jit
def _add_one(x):
    i = cuda.grid(1)
    if i < x.size:
        x[i] += 1


@pytest.mark.parametrize("change, cls, message", [
    ({"data": (0, False)}, ValueError, r"NULL data pointer for a non-empty array of shape \(4,\)"),
    ({"data": None}, ValueError, r"data must be a \(pointer, read_only\) tuple"),
    ({"mask": "something"}, NotImplementedError, r"Masked arrays are not supported"),
    ({"stream": 0}, ValueError, r"'stream' is 0, which the interface forbids"),
])
def test_a_foreign_array_the_gpu_launch_refuses_is_refused(change, cls, message):
    # as the GPU launch reads it (from_cuda_array_interface); a NULL pointer used to read as
    # fresh zeros, the kernel's writes lost
    d = cuda.to_device(np.arange(4.0))
    desc = dict(d.__cuda_array_interface__, **change)
    with pytest.raises(cls, match=message):
        _add_one[1, 4](_Foreign(desc))
    assert d.copy_to_host().tolist() == [0, 1, 2, 3]


def test_a_foreign_array_without_data_is_a_malformed_interface_not_a_keyerror():
    d = cuda.to_device(np.arange(4.0))
    desc = {k: v for k, v in d.__cuda_array_interface__.items() if k != "data"}
    with pytest.raises(ValueError, match=r"malformed __cuda_array_interface__: missing key "
                                         r"'data'"):
        _add_one[1, 4](_Foreign(desc))


def test_a_well_formed_foreign_array_is_written_in_place():
    d = cuda.to_device(np.arange(4.0))
    _add_one[1, 4](_Foreign(dict(d.__cuda_array_interface__)))
    assert d.copy_to_host().tolist() == [1, 2, 3, 4]
