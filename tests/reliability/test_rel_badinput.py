"""The bad-input table (issue 16): public entry points given wrong values raise a clear,
typed error - never a crash, a hang, a SystemError or an AttributeError from inside cujit.

Each case runs in its own child process (forked from ``badinput_server.py``, which imports
cujit without initialising CUDA), so a crash or hang fails that one case, not the run.  The
expected types follow NumPy and numba.cuda where they define one.  Runs on whichever backend
this process uses (the server inherits the environment)."""
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

# NumPy's own error for a DLPack capsule of device memory: RuntimeError before NumPy 2.5,
# BufferError from 2.5 on (seen with 2.4.6 and 2.5.2)
NUMPY_DLPACK_DEVICE_ERROR = ("BufferError" if np.lib.NumpyVersion(np.__version__) >= "2.5.0"
                             else "RuntimeError")

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]

# a kernel compiled from a file in the child (kernels need source), and a device array
K = ("k = kernel('@cuda.jit\\ndef k(x):\\n    x[0] = 1\\n'); "
     "a = cuda.device_array(4); ")

CASES = [
    ('device_array-float-shape', 'cuda.device_array(2.5)', 'TypeError'),
    ('device_array-neg-shape', 'cuda.device_array(-1)', 'ValueError'),
    ('device_array-str-shape', "cuda.device_array('3')", 'TypeError'),
    ('device_array-none-shape', 'cuda.device_array(None)', 'TypeError'),
    ('device_array-bad-order', "cuda.device_array(3, order='X')", 'ValueError'),
    ('device_array-bad-dtype', "cuda.device_array(3, dtype='nope')", 'TypeError'),
    ('device_array-object-dtype', 'cuda.device_array(3, dtype=object)', 'TypeError'),
    ('device_array-strides-len', 'cuda.device_array((2, 2), strides=(8,))', 'ValueError'),
    ('device_array-huge', 'cuda.device_array(2**63)', 'ValueError'),
    ('device_array-huge-2d', 'cuda.device_array((2**40, 2**40))', 'ValueError'),
    ('device_array-bad-stream', "cuda.device_array(3, stream='s')", 'TypeError'),
    ('device_array_like-none', 'cuda.device_array_like(None)', 'TypeError'),
    ('to_device-object-array', 'cuda.to_device(np.array([object()]))', 'TypeError'),
    ('to_device-ragged', 'cuda.to_device([[1, 2], [3]])', 'ValueError'),
    ('to_device-none', 'cuda.to_device(None)', 'TypeError'),
    ('to_device-to-wrong-shape', 'cuda.to_device(np.zeros(3), to=cuda.device_array(4))', 'ValueError'),
    ('to_device-to-wrong-dtype', 'cuda.to_device(np.zeros(3), to=cuda.device_array(3, np.int32))', 'TypeError'),
    ('to_device-to-not-array', 'cuda.to_device(np.zeros(3), to=np.zeros(3))', 'TypeError'),
    ('to_device-masked', 'cuda.to_device(np.ma.masked_array([1, 2], mask=[0, 1]))', 'NotImplementedError'),
    ('copy_to_host-wrong-shape', 'cuda.device_array(3).copy_to_host(np.zeros(4))', 'ValueError'),
    ('copy_to_host-wrong-dtype', 'cuda.device_array(3).copy_to_host(np.zeros(3, np.int32))', 'TypeError'),
    ('copy_to_host-readonly', 'a = np.zeros(3); a.flags.writeable = False; cuda.device_array(3).copy_to_host(a)', 'ValueError'),
    ('copy_to_host-list', 'cuda.device_array(3).copy_to_host([0, 0, 0])', 'TypeError'),
    ('copy_to_device-wrong-shape', 'cuda.device_array(3).copy_to_device(np.zeros(4))', 'ValueError'),
    ('copy_to_device-wrong-dtype', 'cuda.device_array(3).copy_to_device(np.zeros(3, np.int32))', 'TypeError'),
    ('copy_to_device-string', "cuda.device_array(3).copy_to_device('abc')", 'TypeError'),
    ('getitem-out-of-range', 'cuda.device_array(3)[5]', 'IndexError'),
    ('getitem-too-many', 'cuda.device_array(3)[0, 0]', 'IndexError'),
    ('getitem-float-key', 'cuda.device_array(3)[1.5]', 'IndexError'),
    ('getitem-str-key', "cuda.device_array(3)['a']", 'IndexError'),
    ('getitem-fancy', 'cuda.device_array(3)[[0, 1]]', 'TypeError'),
    ('setitem-bad-broadcast', 'd = cuda.device_array(3); d[:] = np.zeros(4)', 'ValueError'),
    ('setitem-overflow-npscalar', 'd = cuda.device_array(3, np.int8); d[0] = np.int64(300)', 'OverflowError'),
    ('setitem-nan-to-int', "d = cuda.device_array(3, np.int32); d[0] = np.float64('nan')", 'ValueError'),
    ('setitem-string', "d = cuda.device_array(3); d[0] = 'x'", 'ValueError'),
    ('setitem-sequence-into-element', 'd = cuda.device_array(3); d[0] = [1, 2]', 'ValueError'),
    ('reshape-bad-size', 'cuda.device_array(6).reshape(4)', 'ValueError'),
    ('reshape-two-minus-one', 'cuda.device_array(6).reshape(-1, -1)', 'ValueError'),
    ('view-bad-itemsize', 'cuda.device_array(3, np.int8).view(np.int32)', 'ValueError'),
    ('transpose-bad-axes', 'cuda.device_array((2, 3)).transpose((0, 0))', 'ValueError'),
    ('squeeze-non-one-axis', 'cuda.device_array((2, 3)).squeeze(0)', 'ValueError'),
    ('split-zero', 'cuda.device_array(6).split(0)', 'ValueError'),
    ('ravel-bad-order', "cuda.device_array(6).ravel(order='Z')", 'ValueError'),
    ('pinned_array-huge', 'cuda.pinned_array(2**63)', 'ValueError'),
    ('pinned_array-neg', 'cuda.pinned_array(-1)', 'ValueError'),
    ('pinned_array-float', 'cuda.pinned_array(1.5)', 'TypeError'),
    ('mapped_array-huge', 'cuda.mapped_array(2**63)', 'ValueError'),
    ('mapped_array-bad-stream', 'cuda.mapped_array(3, stream=3.5)', 'TypeError'),
    ('managed_array-huge', 'cuda.managed_array(2**63)', 'ValueError'),
    ('pinned_array_like-none', 'cuda.pinned_array_like(None)', 'TypeError'),
    ('pinned-ctx-non-array', 'with cuda.pinned(5): pass', 'TypeError'),
    ('mapped-ctx-non-array', 'with cuda.mapped(5): pass', 'TypeError'),
    ('external_stream-huge', 'cuda.external_stream(2**64)', 'ValueError'),
    ('external_stream-negative', 'cuda.external_stream(-1)', 'ValueError'),
    ('external_stream-float', 'cuda.external_stream(1.5)', 'TypeError'),
    ('external_stream-none', 'cuda.external_stream(None)', 'TypeError'),
    ('event-record-bad-stream', "cuda.event().record(stream='x')", 'TypeError'),
    ('event-elapsed-unrecorded', 'a = cuda.event(); b = cuda.event(); a.elapsed_time(b)', 'CudaAPIError'),
    ('select_device-out-of-range', 'cuda.select_device(99)', 'IndexError'),
    ('select_device-str', "cuda.select_device('0')", 'TypeError'),
    ('gpus-out-of-range', 'cuda.gpus[99]', 'IndexError'),
    ('as_cuda_array-plain', 'cuda.as_cuda_array(np.zeros(3))', 'TypeError'),
    ('as_cuda_array-none', 'cuda.as_cuda_array(None)', 'TypeError'),
    ('from_dlpack-host', 'cuda.from_dlpack(np.zeros(3))', 'TypeError'),
    ('from_dlpack-int', 'cuda.from_dlpack(5)', 'TypeError'),
    ('numpy-from_dlpack-device', 'np.from_dlpack(cuda.device_array(3))', NUMPY_DLPACK_DEVICE_ERROR),
    ('config-bad-count-attr', "cuda.config.CUDA_DEALLOCS_COUNT = 'ten'", 'ValueError'),
    ('config-unknown', 'cuda.config.NOPE', 'AttributeError'),
    ('env-bad-count', "import os; os.environ['NUMBA_CUDA_MAX_PENDING_DEALLOCS_COUNT'] = 'ten'; cuda.device_array(3)", 'ValueError'),
    ('env-bad-ratio', "import os; os.environ['NUMBA_CUDA_MAX_PENDING_DEALLOCS_RATIO'] = 'nan'; cuda.device_array(3)", 'ValueError'),
    ('memalloc-negative', 'cuda.current_context().memalloc(-1)', 'ValueError'),
    ('memalloc-float', 'cuda.current_context().memalloc(1.5)', 'TypeError'),
    ('memhostalloc-huge', 'cuda.current_context().memhostalloc(2**64)', 'ValueError'),
    ('mempin-negative', 'cuda.current_context().mempin(None, 0, -1)', 'ValueError'),
    ('set_memory_manager-bad', 'cuda.set_memory_manager(5)', 'TypeError'),
    ('launch-zero-grid', K + 'k[0, 1](a)', 'ValueError'),
    ('launch-4d-grid', K + 'k[(1, 1, 1, 1), 1](a)', 'ValueError'),
    ('launch-float-grid', K + 'k[1.5, 1](a)', 'TypeError'),
    ('launch-huge-block', K + 'k[1, 5000](a)', 'ValueError'),
    ('launch-huge-grid', K + 'k[2**40, 1](a)', 'ValueError'),
    ('launch-bad-stream', K + "k[1, 1, 's'](a)", 'TypeError'),
    ('launch-negative-shared', K + 'k[1, 1, 0, -1](a)', 'ValueError'),
    ('launch-no-config', K + 'k(a)', 'ValueError'),
    ('launch-wrong-argcount', K + 'k[1, 1](a, a)', 'TypeError'),
    ('launch-object-arg', K + 'k[1, 1](object())', 'TypeError'),
    # None is a kernel argument (typed none); writing through it is a TypingError
    ('launch-none-arg', K + 'k[1, 1](None)', 'TypingError'),
    ('launch-string-arg', K + "k[1, 1]('abc')", 'TypeError'),
    ('jit-int', 'cuda.jit(5)', 'TypeError'),
    ('jit-bad-signature', "cuda.jit('not a signature')", 'ValueError'),
    ('setitem-none-int', 'd = cuda.device_array(3, np.int32); d[0] = None', 'TypeError'),
    ('reshape-noncontig', 'cuda.device_array((4, 4))[:, :3].reshape(12)', 'NotImplementedError'),
    ('event-wait-bad-stream', "cuda.event().wait(stream='x')", 'TypeError'),
    ('stream-add-callback-not-callable', 'cuda.stream().add_callback(5)', 'TypeError'),
    ('from_dlpack-device-5', 'class P:\n    def __init__(s, a): s.a = a\n    def __dlpack_device__(s): return (2, 5)\n    def __dlpack__(s, **k): return s.a.__dlpack__(**k)\ncuda.from_dlpack(P(cuda.device_array(3)))', 'ValueError'),
    ('context-memhostalloc-float', 'cuda.current_context().memhostalloc(2.5)', 'TypeError'),
    ('DeviceNDArray-gpu_data-str', "from cujit.arrays.devicearray import DeviceNDArray\nDeviceNDArray((3,), (8,), np.float64, gpu_data='x')", 'TypeError'),
    ('close-twice-then-use', 'cuda.close(); cuda.close(); cuda.device_array(3)', 'ok'),
]


@pytest.fixture(scope="module")
def server():
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [str(ROOT)] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]))
    proc = subprocess.Popen([sys.executable, str(HERE / "badinput_server.py")],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env)
    yield proc
    proc.stdin.close()
    proc.wait(timeout=60)
    proc.stdout.close()


def _run(server, code):
    server.stdin.write(json.dumps({"code": code, "timeout": 120}) + "\n")
    server.stdin.flush()
    line = server.stdout.readline()
    assert line, "the case server died"
    return json.loads(line)


@pytest.mark.parametrize("code, expected", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_bad_input(server, code, expected):
    r = _run(server, code)
    assert r["outcome"] in ("ok", "raised"), f"{r['outcome']}: {r}"
    if expected == "ok":
        assert r["outcome"] == "ok", r
        return
    assert r["outcome"] == "raised", f"no error; expected {expected}"
    assert r["type"] == expected, f"{r['type']}: {r['message']}"
    assert r["message"].strip(), "empty message"


def test_the_table_is_run_in_children(server):
    # a crash in a case is reported for that case, and the next case still runs
    assert _run(server, "import os; os.abort()")["outcome"] == "crash"
    assert _run(server, "import os; os._exit(3)") == {"outcome": "crash", "status": 3}
    assert _run(server, "x = 1")["outcome"] == "ok"
