"""Numba.cuda's ``cuda.open_ipc_array(handle, shape, dtype, strides=None,
offset=0)`` (a context manager over a raw 64-byte IPC handle) was missing
(AttributeError).  Now in ``cujit.arrays.ipc``; bad arguments are typed errors before the
driver is called; the simulator has no IPC (CudaAPIError NOT_SUPPORTED)."""
import multiprocessing as mp

import numpy as np
import pytest

import cujit as cuda
from cujit import CudaAPIError

GOOD = bytes(range(64))


@pytest.mark.parametrize("kwargs,exc,words", [
    ({"handle": None}, TypeError, "64 bytes"),
    ({"handle": "abc"}, TypeError, "64 bytes"),
    ({"handle": b"x" * 63}, ValueError, "got 63"),
    ({"handle": [1] * 65}, ValueError, "got 65"),
    ({"handle": [300] * 64}, TypeError, "64 bytes"),
    ({"handle": [1.5] * 64}, TypeError, "64 bytes"),
    ({"shape": -1}, ValueError, "negative dimension"),
    ({"shape": "4"}, TypeError, "not an integer"),
    ({"dtype": "foo"}, TypeError, "foo"),
    ({"dtype": object}, TypeError, "object"),
    ({"strides": (8, 8)}, ValueError, "2 entries"),
    ({"strides": (-8,)}, ValueError, "before element 0"),
    ({"offset": -8}, ValueError, "offset"),
    ({"offset": 2.0}, TypeError, "offset"),
    ({"offset": True}, TypeError, "offset"),
])
def test_open_ipc_array_rejects_bad_arguments_before_the_driver(kwargs, exc, words):
    args = dict(handle=GOOD, shape=4, dtype=np.float64)
    args.update(kwargs)
    with pytest.raises(exc, match=words):
        with cuda.open_ipc_array(**args):
            pass


@pytest.mark.sim
def test_open_ipc_array_on_the_simulator_is_not_supported():
    with pytest.raises(CudaAPIError, match="NOT_SUPPORTED"):
        with cuda.open_ipc_array(list(GOOD), (2, 2), "float32"):
            pass


def _child(raw, offset, q):
    try:
        import cujit as cuda

        @cuda.jit
        def negate(a):
            i = cuda.grid(1)
            if i < a.size:
                a[i] = -a[i]

        with cuda.open_ipc_array(raw, shape=(5,), dtype=np.int32, offset=offset) as arr:
            seen = arr.copy_to_host().tolist()
            negate[1, 32](arr)
            cuda.synchronize()
        q.put(("ok", seen))
    except Exception as exc:     # reported to the parent
        q.put(("error", repr(exc)))


@pytest.mark.gpu
def test_open_ipc_array_in_another_process_reads_and_writes_the_exported_memory():
    d = cuda.to_device(np.arange(100, dtype=np.int32))
    h = d[20:].get_ipc_handle()
    raw, offset = h.ipc_handle.handle, h.ipc_handle.offset + h.offset
    ctx = mp.get_context("spawn")
    q = ctx.Queue()
    p = ctx.Process(target=_child, args=(raw, offset, q))
    p.start()
    status, seen = q.get(timeout=180)
    p.join(60)
    assert status == "ok", seen
    assert seen == [20, 21, 22, 23, 24]
    want = np.arange(100, dtype=np.int32)
    want[20:25] *= -1
    assert np.array_equal(d.copy_to_host(), want)
