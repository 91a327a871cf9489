"""The teaching programs in examples/ run and print what their docstrings promise."""
import os
import subprocess
import sys

import pytest

import cujit as cuda

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _run(name, *args):
    env = dict(os.environ)
    env["PYTHONPATH"] = ROOT + os.pathsep + env.get("PYTHONPATH", "")
    p = subprocess.run([sys.executable, os.path.join(ROOT, "examples", name), *args],
                       capture_output=True, text=True, env=env, cwd=ROOT, timeout=300)
    assert p.returncode == 0, p.stderr
    return p.stdout.split()


def test_shared_memory_aliasing_prints_the_seed_values():
    words = _run("shared_memory_aliasing.py")
    assert [float(words[0]), int(words[1]), float(words[2]), int(words[3])] == \
        [pytest.approx(3.14, abs=1e-6), 1078523331, pytest.approx(3.14, abs=1e-6), 1]


def test_tiled_matmul_matches_numpy():
    words = _run("tiled_matmul.py", "40")
    assert words[0] == "40x40"
    assert float(words[-1]) < 1e-4


def test_tensor_core_gemm_matches_numpy():
    words = _run("tensor_core_gemm.py", "--size", "256")      # the GPU's default is 4096
    dev = cuda.get_current_device()
    hopper = not dev.name.startswith("cujit simulated") and \
        tuple(dev.compute_capability) == (9, 0)
    # the default kernel: Hopper's warpgroup MMA on cc 9.0, the portable wmma elsewhere
    assert words[:3] == ["256x256x256", "fp16", "wgmma:" if hopper else "wmma:"]
    assert words[-1] == "(ok)"


@pytest.mark.parametrize("kernel", ["wgmma", "wmma"])
def test_tensor_core_gemm_kernel_choice(kernel):
    dev = cuda.get_current_device()
    if kernel == "wgmma" and not dev.name.startswith("cujit simulated") and \
            tuple(dev.compute_capability) != (9, 0):
        pytest.skip("wgmma exists on compute capability 9.0 only")
    words = _run("tensor_core_gemm.py", "--size", "256", "--kernel", kernel)
    assert words[:3] == ["256x256x256", "fp16", kernel + ":"] and words[-1] == "(ok)"


def test_constant_memory_results():
    out = " ".join(_run("constant_memory.py"))
    assert "[1. 2. 3. 1. 2. 3. 1. 2. 3.]" in out
    assert "0.25 0.5 0.25" in out


def test_streams_pipeline_checks_its_output():
    out = " ".join(_run("streams_pipeline.py", "0.0625", "2"))
    assert "0.0625 MiB in 16 chunks: 2 streams" in out and "overlap speed-up" in out


def test_deferred_deallocation_shows_the_flush():
    out = _run("deferred_deallocation.py")
    text = " ".join(out)
    assert "dropped array 10: 10 frees pending" in text
    assert "dropped array 11: 0 frees pending" in text
    assert "inside defer_cleanup: 26 frees pending" in text


def test_example_without_a_gpu_fails_with_one_clear_paragraph(on_gpu):
    """The rule (docs/guide.md §4): programs never switch to the simulator by themselves; on
    a machine without a GPU the first CUDA call raises CudaSupportError whose message says
    how to run on the simulator, with no chained loader traceback."""
    if on_gpu:
        pytest.skip("this machine has a GPU")
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""),
               CUJIT_ENABLE_CUDASIM="0", NUMBA_ENABLE_CUDASIM="0")
    p = subprocess.run([sys.executable, os.path.join(ROOT, "examples", "tiled_matmul.py")],
                       capture_output=True, text=True, env=env, cwd=ROOT, timeout=300)
    assert p.returncode == 1
    last = p.stderr.strip().splitlines()[-1]
    assert last.startswith("cujit.driver.errors.CudaSupportError: no usable CUDA GPU: ")
    assert "CUJIT_ENABLE_CUDASIM=1 python your_script.py" in last and ".." not in last
    assert "The above exception was the direct cause" not in p.stderr
