"""IPC handles (R-EMM-1 IpcHandle, GetIpcHandleMixin)."""
import os
import pickle
import subprocess
import sys

import numpy as np
import pytest

import cujit
from cujit.driver import get_driver
from cujit.driver.errors import CudaAPIError
from cujit.memory import IpcHandle


def test_ipc_handle_pickles_without_its_base():
    h = IpcHandle(object(), b"\x01" * 64, 128, source_info="GPU-x", offset=16)
    h2 = pickle.loads(pickle.dumps(h))
    assert (h2.base, h2.handle, h2.size, h2.source_info, h2.offset) == \
        (None, b"\x01" * 64, 128, "GPU-x", 16)
    with pytest.raises(ValueError, match="not opened"):
        h2.close()


def test_ipc_handle_bytes_have_the_structs_reserved_field():
    class CUipcMemHandleLike:
        reserved = bytes(range(64))
    h = IpcHandle(None, CUipcMemHandleLike(), 64)
    assert h.handle == bytes(range(64)) and h.handle.reserved == bytes(range(64))
    assert type(h.handle.reserved) is bytes
    h2 = pickle.loads(pickle.dumps(h))
    assert h2.handle.reserved == h.handle.reserved and h2.base is None and h2.size == 64


def test_simulator_reports_ipc_unsupported(ctx):
    if not get_driver().is_simulator:
        pytest.skip("simulator behaviour")
    p = ctx.memalloc(64)
    with pytest.raises(CudaAPIError) as err:
        ctx.get_ipc_handle(p)
    assert err.value.name == "CUDA_ERROR_NOT_SUPPORTED"


@pytest.mark.gpu
def test_ipc_handle_opened_in_another_process(ctx):
    n = 4096
    p = ctx.memalloc(n)
    src = np.arange(n, dtype=np.uint8)
    get_driver().memcpy_htod(p.device_pointer_value, src.ctypes.data, n)
    view = p.view(1024)
    h = ctx.get_ipc_handle(view)
    assert h.offset == 1024 and h.size == n - 1024 and len(h.handle) == 64
    code = ("import pickle, sys, numpy as np, cujit\n"
            "from cujit.driver import get_driver\n"
            "h = pickle.loads(sys.stdin.buffer.read())\n"
            "m = h.open(cujit.current_context())\n"
            "out = np.empty(m.size, np.uint8)\n"
            "get_driver().memcpy_dtoh(out.ctypes.data, m.device_pointer_value, m.size)\n"
            "h.close()\n"
            "print(int(out[0]), int(out.sum()))\n")
    env = dict(os.environ)
    env["PYTHONPATH"] = os.path.dirname(os.path.dirname(cujit.__file__))
    r = subprocess.run([sys.executable, "-c", code], input=pickle.dumps(h),
                       capture_output=True, env=env)
    assert r.returncode == 0, r.stderr.decode()
    expect = src[1024:]
    assert r.stdout.decode().split() == [str(int(expect[0])), str(int(expect.sum()))]
