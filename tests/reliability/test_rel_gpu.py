"""Reliability on a real GPU (issue 16): the shared primary context, sticky faults, the
sanitizer.  Every test runs its program in a child process: a sticky error ruins the
context for the rest of a process, and exit-time problems (other libraries' finalisers
failing) only show on the child's stderr and exit status."""
import importlib.util
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.gpu


def _python(tmp_path, source, timeout=600, prefix=()):
    script = tmp_path / "child.py"
    script.write_text(textwrap.dedent(source))
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
    env.pop("CUJIT_ENABLE_CUDASIM", None)
    # the children launch small grids; their stderr must hold nothing but real errors
    env["CUJIT_CUDA_LOW_OCCUPANCY_WARNINGS"] = "0"
    return subprocess.run([*prefix, sys.executable, str(script)], capture_output=True,
                          text=True, timeout=timeout, env=env, cwd=str(tmp_path))


def _needs(module):
    if importlib.util.find_spec(module) is None:
        pytest.skip(f"{module} is not installed")


_CUJIT_WORK = """
    import numpy as np
    import cujit

    @cujit.jit
    def twice(x):
        i = cujit.grid(1)
        if i < x.size:
            x[i] *= 2

    def cujit_work():
        d = cujit.to_device(np.arange(1000, dtype=np.float32))
        twice[4, 256](d)
        s = cujit.stream()
        e = cujit.event()
        e.record(s)
        p = cujit.pinned_array(100)
        m = cujit.mapped_array(100)
        assert (d.copy_to_host() == 2 * np.arange(1000, dtype=np.float32)).all()
        return d, s, e, p, m        # still alive at reset/close: cujit frees them
"""


def test_cupy_arrays_and_kernels_survive_cujit_reset_and_close(tmp_path):
    _needs("cupy")
    r = _python(tmp_path, _CUJIT_WORK + """
    import cupy as cp
    a = cp.arange(1 << 20, dtype=cp.float32)
    k = cp.ElementwiseKernel("float32 x", "float32 y", "y = x + 1", "rel_plus_one")
    b = k(a)
    keep = cujit_work()
    cujit.current_context().reset()
    keep = cujit_work()
    cujit.close()
    c = k(b)                                    # CuPy's module and memory are intact
    assert float(c[-1]) == float((1 << 20) - 1 + 2)
    assert float(cp.sum(a)) == float(sum(range(1 << 20)))
    d = cp.ones(10) * 3                         # new CuPy kernels and allocations work
    assert float(d.sum()) == 30.0
    keep = cujit_work()                         # cujit works again after close
    print("OK")
    """)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "OK"
    assert r.stderr.strip() == ""               # nothing from finalisers at exit


def test_torch_tensors_survive_cujit_reset_and_close(tmp_path):
    _needs("torch")
    r = _python(tmp_path, _CUJIT_WORK + """
    import torch
    t = torch.arange(1 << 20, dtype=torch.float32, device="cuda")
    u = t * 2
    keep = cujit_work()
    cujit.current_context().reset()
    keep = cujit_work()
    cujit.close()
    v = u + t                                   # PyTorch's cached memory and kernels work
    torch.cuda.synchronize()
    assert float(v[-1]) == 3.0 * ((1 << 20) - 1)
    w = torch.ones(10, device="cuda").cumsum(0)
    assert float(w[-1]) == 10.0
    dl = cujit.from_dlpack(torch.arange(4, dtype=torch.float64, device="cuda"))
    assert dl.copy_to_host().tolist() == [0.0, 1.0, 2.0, 3.0]
    print("OK")
    """)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "OK"
    assert r.stderr.strip() == ""


def test_illegal_address_names_the_kernel_then_the_context_is_unusable(tmp_path):
    r = _python(tmp_path, """
    import numpy as np
    import cujit

    @cujit.jit
    def wild_store(x):
        x[1 << 36] = 1.0        # 512 GiB past the allocation

    a = cujit.to_device(np.zeros(16))
    wild_store[1, 1](a)
    try:
        cujit.synchronize()
        print("NO ERROR AT SYNC")
    except cujit.CudaAPIError as e:
        print("first:", e.code, "wild_store" in str(e), "restart the process" in str(e))
    for what, fn in (("alloc", lambda: cujit.device_array(10)),
                     ("copy", lambda: a.copy_to_host()),
                     ("launch", lambda: wild_store[1, 1](a)),
                     ("sync", lambda: cujit.synchronize()),
                     ("stream", lambda: cujit.stream())):
        try:
            fn()
            cujit.synchronize()
            print(what, "NO ERROR")
        except cujit.CudaAPIError as e:
            print(what, "unusable" in str(e) and "restart the process" in str(e))
    """, timeout=300)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.split("\n")
    assert lines[0] == "first: 700 True True", r.stdout
    for what in ("alloc", "copy", "launch", "sync", "stream"):
        assert f"{what} True" in lines, r.stdout


def _sanitizer():
    exe = shutil.which("compute-sanitizer")
    for cand in ("/usr/local/cuda/bin/compute-sanitizer",
                 "/usr/local/cuda/compute-sanitizer/compute-sanitizer"):
        if exe is None and os.path.exists(cand):
            exe = cand
    if exe is None:
        pytest.skip("compute-sanitizer is not installed")
    return exe


_PROGRAMS = [("demo", ["-m", "cujit", "demo"])] + [
    (p.stem, [str(p)]) for p in sorted((ROOT / "examples").glob("*.py"))]


@pytest.mark.slow
@pytest.mark.parametrize("tool", ["memcheck", "racecheck"])
@pytest.mark.parametrize("name, args", _PROGRAMS, ids=[p[0] for p in _PROGRAMS])
def test_compute_sanitizer_reports_nothing(tool, name, args):
    exe = _sanitizer()
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
    env.pop("CUJIT_ENABLE_CUDASIM", None)
    r = subprocess.run([exe, "--tool", tool, "--error-exitcode", "99", sys.executable, *args],
                       capture_output=True, text=True, timeout=1800, env=env, cwd=str(ROOT))
    assert r.returncode == 0, (r.stdout[-4000:], r.stderr[-4000:])
    assert "ERROR SUMMARY: 0 errors" in r.stdout + r.stderr or \
        "RACECHECK SUMMARY: 0 hazards" in r.stdout + r.stderr, r.stdout[-2000:]
