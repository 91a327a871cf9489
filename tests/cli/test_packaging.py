"""pyproject.toml's dependency split, and the simulator running without the GPU toolchain.

``pip install cujit`` brings the simulator's needs only; the GPU toolchain is the ``[cu13]``
(or ``[cu12]``) extra.  The subprocess tests run cujit in a child whose import system refuses
llvmlite, cuda-bindings, cuda-pathfinder and the NVIDIA wheels, as on a lean install.
"""
import os
import re
import subprocess
import sys
import textwrap

import pytest

tomllib = pytest.importorskip("tomllib")     # Python 3.11+

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

TOOLCHAIN = {"cuda-bindings", "cuda-pathfinder", "llvmlite", "nvidia-nvvm", "nvidia-nvjitlink",
             "nvidia-cuda-nvrtc", "nvidia-cuda-runtime", "nvidia-cuda-cccl"}
LEAN = {"numpy", "greenlet", "tqdm"}


def _project():
    with open(os.path.join(ROOT, "pyproject.toml"), "rb") as f:
        return tomllib.load(f)["project"]


def _specs(reqs):
    out = {}
    for r in reqs:
        name = re.match(r"[A-Za-z0-9_.-]+", r).group(0).lower()
        out[name] = r[len(name):].strip()
    return out


def _extra(name):
    return _specs(_project()["optional-dependencies"][name])


def test_plain_install_is_the_simulators_needs_only():
    assert set(_specs(_project()["dependencies"])) == LEAN


def test_cu13_extra_is_the_gpu_toolchain_for_cuda_13():
    cu13 = _extra("cu13")
    assert set(cu13) == TOOLCHAIN
    assert cu13["cuda-bindings"] == ">=13.0,<14"
    assert all(cu13[n] == "==13.0.*" for n in cu13 if n.startswith("nvidia-"))


def test_cu12_extra_pins_cuda_12_packages():
    cu12 = _extra("cu12")
    assert cu12["cuda-bindings"] == ">=12.8,<13"
    assert {n for n in cu12 if n.startswith("nvidia-")} == {"nvidia-cuda-nvcc-cu12",
                                                          "nvidia-nvjitlink-cu12",
                                                          "nvidia-cuda-nvrtc-cu12",
                                                          "nvidia-cuda-runtime-cu12",
                                                          "nvidia-cuda-cccl-cu12"}
    assert all(cu12[n] == "==12.*" for n in cu12 if n.startswith("nvidia-"))
    assert {"llvmlite", "cuda-pathfinder"} <= set(cu12)


def test_extras_do_not_respecify_base_dependencies():
    base = _specs(_project()["dependencies"])
    for extra, reqs in _project()["optional-dependencies"].items():
        clash = {n: (base[n], s) for n, s in _specs(reqs).items() if n in base and s != base[n]}
        assert clash == {}, f"[{extra}] pins {clash} differently from the base install"


def test_test_extra_brings_the_cu13_toolchain_and_the_docs_tools():
    """CI installs ``.[test]``: the compile-only PTX checks need the toolchain, the docs build
    test needs Sphinx, the plot test matplotlib; none is pinned a second time."""
    test = _extra("test")
    assert test["cujit"] == "[cu13,docs,bf16]"
    assert "matplotlib" in test
    assert not TOOLCHAIN & set(test)
    assert {"sphinx", "myst-parser"} <= set(_extra("docs"))


BLOCKER = textwrap.dedent('''
    import importlib.abc, sys
    BLOCKED = ("llvmlite", "cuda.bindings", "cuda.pathfinder", "nvidia")
    attempts = []

    class LeanInstall(importlib.abc.MetaPathFinder):
        """Refuse the GPU toolchain's modules, as an environment without them would."""
        def find_spec(self, name, path, target=None):
            if any(name == b or name.startswith(b + ".") for b in BLOCKED):
                attempts.append(name)
                raise ModuleNotFoundError(f"No module named {name!r}", name=name)
            return None

    sys.meta_path.insert(0, LeanInstall())
''')


def _run_lean(tmp_path, body, sim=True):
    """Run ``BLOCKER + body`` as a script file (kernels need a source file) in a child."""
    script = tmp_path / "lean_child.py"
    script.write_text(BLOCKER + textwrap.dedent(body))
    env = dict(os.environ)
    env["PYTHONPATH"] = ROOT + os.pathsep + env.get("PYTHONPATH", "")
    env.pop("NUMBA_ENABLE_CUDASIM", None)
    if sim:
        env["CUJIT_ENABLE_CUDASIM"] = "1"
    else:
        env.pop("CUJIT_ENABLE_CUDASIM", None)
    return subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          cwd=str(tmp_path), env=env, timeout=300)


def test_simulator_runs_kernels_without_llvmlite_or_cuda_bindings(tmp_path):
    r = _run_lean(tmp_path, '''
        import numpy as np
        import cujit as cuda

        @cuda.jit
        def scale(x, factor):
            tile = cuda.shared.array(32, dtype=np.float32)
            i = cuda.grid(1)
            tile[cuda.threadIdx.x] = x[i]
            cuda.syncthreads()
            x[i] = tile[cuda.threadIdx.x] * factor

        d = cuda.to_device(np.arange(64, dtype=np.float32))
        scale[2, 32](d, 3.0)
        print("values", d.copy_to_host().tolist() == [3.0 * i for i in range(64)])
        try:
            cuda.device_array(1 << 50, dtype=np.uint8)
        except cuda.CudaAPIError as e:
            print("oom", e.name)
        loaded = sorted(m for m in sys.modules if m.startswith(("llvmlite", "cuda.")))
        print("attempts", attempts, "loaded", loaded)
    ''')
    assert r.returncode == 0, r.stderr
    assert "values True" in r.stdout
    assert "oom CUDA_ERROR_OUT_OF_MEMORY" in r.stdout
    assert "attempts [] loaded []" in r.stdout


def test_compile_ptx_without_the_toolchain_names_the_extra(tmp_path):
    r = _run_lean(tmp_path, '''
        import cujit as cuda

        def kernel(x):
            x[0] = 1.0

        try:
            cuda.compile_ptx(kernel, "void(float32[:])")
        except cuda.CudaSupportError as e:
            print("error:", e)
    ''')
    assert r.returncode == 0, r.stderr
    assert "error: compiling a kernel to PTX" in r.stdout
    assert "llvmlite cannot be imported" in r.stdout and "cujit[cu13]" in r.stdout


def test_gpu_backend_without_cuda_bindings_names_the_extra(tmp_path):
    r = _run_lean(tmp_path, '''
        import cujit as cuda
        try:
            cuda.current_context()
        except cuda.CudaSupportError as e:
            print("error:", e)
    ''', sim=False)
    assert r.returncode == 0, r.stderr
    assert "error: the CUDA driver backend needs cujit's GPU toolchain" in r.stdout
    # "cuda" where the namespace package itself is absent (a real lean install)
    assert re.search(r"\(cuda(\.bindings)? cannot be imported", r.stdout)
    assert "cujit[cu13]" in r.stdout


def test_demo_on_a_driver_machine_without_the_extra_says_so_and_runs_on_the_simulator(tmp_path):
    """``pip install cujit`` on a GPU machine: the demo names the extra, then simulates."""
    r = _run_lean(tmp_path, '''
        import cujit.driver.probe as probe
        probe.driver_library_present = lambda: True     # a driver is installed here
        from cujit.cli import main
        sys.exit(main(["demo", "--only", "matmul"]))
    ''', sim=False)
    assert r.returncode == 0, r.stdout + r.stderr
    first = r.stdout.splitlines()[0]
    assert "a CUDA driver is installed but cuda-bindings cannot be imported" in first
    assert "pip install 'cujit[cu13]'" in first and "running on the simulator" in first
    assert "1/1 checks passed" in r.stdout


def test_demo_without_a_driver_or_the_extra_runs_on_the_simulator(tmp_path):
    r = _run_lean(tmp_path, '''
        import cujit.driver.probe as probe
        probe.driver_library_present = lambda: False
        from cujit.cli import main
        sys.exit(main(["demo", "--only", "matmul"]))
    ''', sim=False)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "cuda-bindings cannot be imported" in r.stdout.splitlines()[0]
    assert "cujit[cu13]" not in r.stdout.splitlines()[0]
    assert "1/1 checks passed" in r.stdout


def test_info_without_the_toolchain_says_what_is_missing_and_names_the_extra(tmp_path):
    r = _run_lean(tmp_path, '''
        from cujit.cli import main
        sys.exit(main(["info"]))
    ''', sim=False)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert "  libNVVM          not found - cuda-pathfinder is not installed" in lines
    assert any("PTX from         nothing (llvmlite, which builds the NVVM IR, is not installed)"
               in ln for ln in lines)
    assert any("pip install 'cujit[cu13]'" in ln for ln in lines[lines.index("toolchain:"):])
