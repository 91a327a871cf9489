"""Several GPUs and several processes (docs/scaling.md): IPC handles opened in another
process on the same and on the other GPU, and the two-GPU torch.distributed example.

These need a GPU machine (the two-GPU ones need two GPUs: the nvidia-h200-x2 kind); they
skip with the reason otherwise."""
import multiprocessing as mp
import os
import subprocess
import sys

import numpy as np
import pytest

import cujit

pytestmark = pytest.mark.gpu

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _gpus():
    try:
        return len(cujit.gpus)
    except Exception:
        return 0


def _child(handle, device, q):
    """Open ``handle`` on ``device`` in a fresh process; double the values with a cujit
    kernel there; report what it read."""
    try:
        import cujit as cuda

        @cuda.jit
        def double(a):
            i = cuda.grid(1)
            if i < a.size:
                a[i] *= 2

        cuda.select_device(device)
        with handle as arr:
            seen = arr.copy_to_host().tolist()
            double[(arr.size + 127) // 128, 128](arr)
            cuda.synchronize()
        q.put(("ok", seen, cuda.get_current_device().id))
    except Exception as exc:  # reported to the parent
        q.put(("error", repr(exc), device))


def _open_elsewhere(device):
    d = cujit.to_device(np.arange(1000, dtype=np.int32))
    h = d[10:].get_ipc_handle()
    ctx = mp.get_context("spawn")
    q = ctx.Queue()
    p = ctx.Process(target=_child, args=(h, device, q))
    p.start()
    status, seen, dev = q.get(timeout=180)
    p.join(60)
    assert status == "ok", seen
    return d, seen, dev


def test_ipc_handle_in_another_process_on_the_same_gpu():
    d, seen, dev = _open_elsewhere(0)
    assert dev == 0
    assert seen == list(range(10, 1000))
    want = np.arange(1000, dtype=np.int32)
    want[10:] *= 2                     # the other process wrote into our memory
    assert np.array_equal(d.copy_to_host(), want)


def test_ipc_handle_in_another_process_on_the_other_gpu():
    if _gpus() < 2:
        pytest.skip("needs two GPUs (the nvidia-h200-x2 machine)")
    d, seen, dev = _open_elsewhere(1)
    assert dev == 1                    # opened through peer access from GPU 1
    assert seen == list(range(10, 1000))
    want = np.arange(1000, dtype=np.int32)
    want[10:] *= 2
    assert np.array_equal(d.copy_to_host(), want)


def test_two_gpu_torch_distributed_example_matches_one_gpu():
    if _gpus() < 2:
        pytest.skip("needs two GPUs (the nvidia-h200-x2 machine)")
    torch = pytest.importorskip("torch")
    if not torch.distributed.is_nccl_available():
        pytest.skip("PyTorch without NCCL")
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    p = subprocess.run([sys.executable, os.path.join(ROOT, "examples",
                                                     "two_gpus_torch_distributed.py"), "1000003"],
                       capture_output=True, text=True, env=env, cwd=ROOT, timeout=600)
    assert p.returncode == 0, p.stdout + p.stderr
    lines = dict(line.split(": ", 1) for line in p.stdout.strip().splitlines())
    assert lines["equal"] == "True"
    assert lines["two GPUs"] == lines["one GPU"]
    x = (np.arange(1000003) % 1000 / 1000).astype(np.float32).astype(np.float64)
    assert float(lines["two GPUs"]) == pytest.approx(float((x * x).sum()), rel=1e-5)
