"""The numba alias (cujit/numba_alias.py, cujit/run_cli.py, cujit/alias_site/): unmodified
programs that say ``from numba import cuda`` run on cujit under ``python -m cujit run`` and
``pytest -p cujit.numba_alias``, child processes included; Numba's CPU JIT stays Numba's."""
import importlib
import os
import subprocess
import sys
import textwrap

import pytest

from cujit import numba_alias
from cujit.run_cli import parse_run_args

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _numba_installed():
    probe = subprocess.run([sys.executable, "-c", "import numba"], capture_output=True)
    return probe.returncode == 0


NUMBA = _numba_installed()

KERNEL = '''
import numpy as np
from numba import cuda
import cujit

@cuda.jit
def add_one(a):
    i = cuda.grid(1)
    if i < a.size:
        a[i] += 1

def run():
    a = np.arange(6, dtype=np.float32)
    add_one[1, 8](a)
    return a.tolist()
'''


def _env(extra=None):
    env = dict(os.environ)
    env["PYTHONPATH"] = ROOT + os.pathsep + env.get("PYTHONPATH", "")
    env["NUMBA_ENABLE_CUDASIM"] = "1"
    for name in ("CUJIT_NUMBA_ALIAS", "CUJIT_NUMBA_COMPAT", "CUJIT_ENABLE_CUDASIM",
                 "PYTEST_ADDOPTS"):
        env.pop(name, None)
    env.update(extra or {})
    return env


def _run(args, cwd, env=None, timeout=300):
    return subprocess.run([sys.executable] + list(args), cwd=str(cwd), env=_env(env),
                          capture_output=True, text=True, timeout=timeout)


@pytest.fixture
def program(tmp_path):
    """``program(name, body)`` writes a script next to ``kernels.py`` (the KERNEL above)."""
    (tmp_path / "kernels.py").write_text(KERNEL)

    def write(name, body):
        path = tmp_path / name
        path.write_text(textwrap.dedent(body))
        return path
    return write


def test_run_script_resolves_numba_cuda_to_cujit(program, tmp_path):
    script = program("main.py", """
        import sys
        import numba.cuda, cujit
        from kernels import run, add_one
        assert sys.modules["numba.cuda"] is cujit and numba.cuda is cujit
        assert add_one.__class__.__module__.startswith("cujit.")
        print("RESULT", run(), sys.argv[1:], __name__)
        """)
    out = _run(["-m", "cujit", "run", str(script), "a", "--b"], tmp_path)
    assert out.returncode == 0, out.stderr
    assert "RESULT [1.0, 2.0, 3.0, 4.0, 5.0, 6.0] ['a', '--b'] __main__" in out.stdout


def test_run_gives_the_programs_exit_status(program, tmp_path):
    script = program("fails.py", "import sys\nfrom numba import cuda\nsys.exit(7)\n")
    assert _run(["-m", "cujit", "run", str(script)], tmp_path).returncode == 7


def test_run_module_with_its_own_options(program, tmp_path):
    program("mod.py", """
        import sys
        from numba import cuda
        import cujit
        assert cuda is cujit
        print("MOD", sys.argv[1:])
        """)
    out = _run(["-m", "cujit", "run", "-m", "mod", "-x", "--flag"], tmp_path,
               env={"PYTHONPATH": f"{tmp_path}{os.pathsep}{ROOT}"})
    assert out.returncode == 0, out.stderr
    assert "MOD ['-x', '--flag']" in out.stdout


def test_run_without_numba_gives_a_stand_in_that_says_numba_is_missing(program, tmp_path):
    if NUMBA:
        pytest.skip("numba is installed here: no stand-in")
    script = program("standin.py", """
        import numba
        from numba import cuda
        import cujit
        assert numba.cuda is cujit and dir(numba) == ["cuda"]
        assert not hasattr(numba, "__version__")
        for attempt in ("numba.njit", "from numba import njit", "import numba.core.errors"):
            try:
                exec(attempt)
            except ModuleNotFoundError as exc:
                assert type(exc).__name__ == "NumbaNotInstalledError", exc
                assert "Numba is not installed" in str(exc), exc
                print("REFUSED", attempt)
        """)
    out = _run(["-m", "cujit", "run", str(script)], tmp_path)
    assert out.returncode == 0, out.stderr
    assert out.stdout.count("REFUSED") == 3, out.stdout


@pytest.mark.skipif(not NUMBA, reason="numba is not installed in this interpreter")
def test_run_keeps_numbas_cpu_jit_when_numba_is_installed(program, tmp_path):
    script = program("withnumba.py", """
        import numba, cujit
        from numba import cuda, njit
        assert cuda is cujit
        assert numba.njit.__module__.startswith("numba."), numba.njit.__module__

        @njit
        def twice(x):
            return 2 * x
        assert twice(21) == 42
        from numba.core.errors import NumbaPerformanceWarning
        from numba import float32, int32, void        # Numba's type objects, in a signature
        import numpy as np

        @cuda.jit(void(float32[:], int32))
        def fill(a, n):
            i = cuda.grid(1)
            if i < n:
                a[i] = cuda.f4(i) * 2
        a = np.zeros(3, np.float32)
        fill[1, 4](a, 3)
        from kernels import run
        print("BOTH", run(), type(numba).__name__, a.tolist())
        """)
    out = _run(["-m", "cujit", "run", str(script)], tmp_path)
    assert out.returncode == 0, out.stderr
    assert "BOTH [1.0, 2.0, 3.0, 4.0, 5.0, 6.0] module [0.0, 2.0, 4.0]" in out.stdout


def test_child_processes_inherit_the_alias(program, tmp_path):
    script = program("parent.py", """
        import multiprocessing as mp
        import subprocess, sys
        from numba import cuda

        def work(q):
            import numba.cuda, cujit
            from kernels import run
            q.put((numba.cuda is cujit, run()))

        if __name__ == "__main__":
            ctx = mp.get_context("spawn")
            q = ctx.Queue()
            p = ctx.Process(target=work, args=(q,))
            p.start()
            print("SPAWN", q.get(timeout=240))
            p.join()
            child = subprocess.run([sys.executable, "-c",
                                    "import numba.cuda, cujit; print(numba.cuda is cujit)"],
                                   capture_output=True, text=True)
            print("SUBPROCESS", child.stdout.strip(), child.stderr.strip())
        """)
    out = _run(["-m", "cujit", "run", str(script)], tmp_path)
    assert out.returncode == 0, out.stderr
    assert "SPAWN (True, [1.0, 2.0, 3.0, 4.0, 5.0, 6.0])" in out.stdout
    assert "SUBPROCESS True" in out.stdout


def test_pytest_plugin_installs_the_alias_before_conftest(program, tmp_path):
    (tmp_path / "conftest.py").write_text("from numba import cuda\nimport cujit\n"
                                          "assert cuda is cujit\n")
    program("test_uses_numba_cuda.py", """
        import subprocess, sys
        from numba import cuda
        from kernels import run

        def test_kernel_runs_on_cujit():
            import cujit
            assert cuda is cujit
            assert run() == [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]

        def test_subprocess_of_the_interpreter_has_it():
            code = "import numba.cuda, cujit; print(numba.cuda is cujit)"
            out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
            assert out.stdout.strip() == "True", out.stderr
        """)
    args = ["-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "cujit.numba_alias",
            "test_uses_numba_cuda.py"]
    out = _run(args, tmp_path)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "2 passed" in out.stdout
    # the same suite under ``python -m cujit run -m pytest`` (no plugin)
    out = _run(["-m", "cujit", "run", "-m", "pytest", "-q", "-p", "no:cacheprovider",
                "test_uses_numba_cuda.py"], tmp_path)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "2 passed" in out.stdout


def test_pytest_xdist_workers_have_the_alias(program, tmp_path):
    pytest.importorskip("xdist")
    program("test_in_worker.py", """
        import os
        from numba import cuda
        import cujit

        def test_worker_resolves_numba_cuda():
            assert os.environ.get("PYTEST_XDIST_WORKER") == "gw0"
            assert cuda is cujit
        """)
    out = _run(["-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "cujit.numba_alias",
                "-n", "1", "test_in_worker.py"], tmp_path)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "1 passed" in out.stdout


def test_alias_site_runs_the_sitecustomize_it_shadows(program, tmp_path):
    site = tmp_path / "theirs"
    site.mkdir()
    (site / "sitecustomize.py").write_text("import builtins\nbuiltins.THEIRS_RAN = True\n")
    script = program("chain.py", """
        import builtins
        from numba import cuda
        import cujit
        print("CHAIN", cuda is cujit, getattr(builtins, "THEIRS_RAN", False))
        """)
    out = _run(["-m", "cujit", "run", str(script)], tmp_path,
               env={"PYTHONPATH": f"{ROOT}{os.pathsep}{site}"})
    assert out.returncode == 0, out.stderr
    assert "CHAIN True True" in out.stdout


def test_alias_site_is_inert_without_the_setting(tmp_path):
    env = {"PYTHONPATH": f"{numba_alias.SITE_DIR}{os.pathsep}{ROOT}"}
    out = _run(["-c", "import sys; from cujit import numba_alias; "
                      "print(numba_alias.installed(), 'numba' in sys.modules)"], tmp_path, env)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "False False"


def test_simulator_from_numbas_variable(program, tmp_path):
    script = program("sim.py", """
        from numba import cuda
        print("SIM", cuda.config.ENABLE_CUDASIM, cuda.config.source("ENABLE_CUDASIM"))
        """)
    out = _run(["-m", "cujit", "run", str(script)], tmp_path)
    assert "SIM True NUMBA_ENABLE_CUDASIM" in out.stdout, out.stderr
    out = _run(["-m", "cujit", "run", "--sim", str(script)], tmp_path,
               env={"NUMBA_ENABLE_CUDASIM": "0"})
    assert "SIM True CUJIT_ENABLE_CUDASIM" in out.stdout, out.stderr


def test_run_on_the_simulator_answers_the_queries_as_numbas_simulator(program, tmp_path):
    # numba-cuda's simulator answers False to both; code written for it imports the bfloat16
    # names only off the simulator and skips its bfloat16 paths on that answer
    script = program("queries.py", """
        import subprocess, sys
        from numba import cuda
        print("ALIAS", cuda.is_bfloat16_supported(), cuda.is_fp8_supported())
        code = "from numba import cuda; print(cuda.is_bfloat16_supported())"
        child = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
        print("CHILD", child.stdout.strip(), child.stderr[-300:])
        """)
    out = _run(["-m", "cujit", "run", str(script)], tmp_path)
    assert "ALIAS False False" in out.stdout and "CHILD False" in out.stdout, out.stderr
    # the environment's choice wins: cujit's own answers under the alias
    out = _run(["-m", "cujit", "run", str(script)], tmp_path, env={"CUJIT_NUMBA_COMPAT": "0"})
    assert "ALIAS True True" in out.stdout and "CHILD True" in out.stdout, out.stderr
    # without the alias, cujit's simulator computes both, and says so
    code = "import cujit; print('OWN', cujit.is_bfloat16_supported(), cujit.is_fp8_supported())"
    out = _run(["-c", code], tmp_path)
    assert "OWN True True" in out.stdout, out.stderr


@pytest.mark.parametrize("argv, message", [
    ([], "no program given"),
    (["--sim"], "no program given"),
    (["-m"], "-m needs a module name"),
    (["-m", "-x"], "-m needs a module name"),
    (["-c"], "-c needs the program's code"),
    (["--fast", "x.py"], "unknown option '--fast'"),
    (["no_such_script.py"], "no such script: 'no_such_script.py'"),
])
def test_run_refuses_bad_arguments(argv, message, tmp_path):
    with pytest.raises(ValueError, match=message.replace("(", r"\(")):
        parse_run_args(argv)
    out = _run(["-m", "cujit", "run"] + argv, tmp_path)
    assert out.returncode == 2
    assert message in out.stderr and "usage: python -m cujit run" in out.stderr


def test_run_help_and_the_listing(tmp_path):
    out = _run(["-m", "cujit", "run", "--help"], tmp_path)
    assert out.returncode == 0 and "python -m cujit run [--sim] -m MODULE" in out.stdout
    listing = _run(["-m", "cujit", "--help"], tmp_path)
    assert listing.returncode == 0 and "run a script, module (-m) or code (-c)" in listing.stdout


def test_parse_run_args_reads_script_and_module(tmp_path):
    script = tmp_path / "s.py"
    script.write_text("")
    assert parse_run_args([str(script), "-v"]) == (False, [str(script), "-v"])
    assert parse_run_args(["--sim", "-m", "pytest", "-x"]) == (True, ["-m", "pytest", "-x"])
    assert parse_run_args(["-c", "pass", "a"]) == (False, ["-c", "pass", "a"])
    assert parse_run_args(["--sim", "-", "a"]) == (True, ["-", "a"])


_INLINE = """
import sys
import numpy as np
from numba import cuda
import cujit
assert cuda is cujit
@cuda.jit
def twice(a):
    i = cuda.grid(1)
    if i < a.size:
        a[i] *= 2
a = np.arange(4.0)
twice[1, 4](a)
print("RESULT", a.tolist(), sys.argv[1:])
"""


def test_run_code_given_with_dash_c(tmp_path):
    # a kernel of `python -c` (compiled from its bytecode), with numba.cuda resolved to cujit
    out = _run(["-m", "cujit", "run", "-c", _INLINE, "x", "-y"], tmp_path)
    assert out.returncode == 0, out.stderr
    assert "RESULT [0.0, 2.0, 4.0, 6.0] ['x', '-y']" in out.stdout


def test_run_program_on_stdin(tmp_path):
    out = subprocess.run([sys.executable, "-m", "cujit", "run", "-", "z"], cwd=str(tmp_path),
                         env=_env(), input=_INLINE, capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr
    assert "RESULT [0.0, 2.0, 4.0, 6.0] ['z']" in out.stdout


def test_child_environment_puts_the_site_dir_first_once():
    env = numba_alias.child_environment({"PYTHONPATH": f"/a{os.pathsep}{numba_alias.SITE_DIR}"})
    assert env["CUJIT_NUMBA_ALIAS"] == "1"
    assert env["PYTHONPATH"].split(os.pathsep) == [numba_alias.SITE_DIR, "/a"]
    assert numba_alias.child_environment({})["PYTHONPATH"] == numba_alias.SITE_DIR
    assert os.path.isfile(os.path.join(numba_alias.SITE_DIR, "sitecustomize.py"))


@pytest.fixture
def alias_in_process():
    """The alias installed in this process for one test, everything restored after."""
    saved_path = list(sys.meta_path)
    saved = {k: v for k, v in sys.modules.items() if k == "numba" or k.startswith("numba.")}
    yield numba_alias
    numba_alias.uninstall()
    sys.meta_path[:] = saved_path
    for k in [k for k in sys.modules if k == "numba" or k.startswith("numba.")]:
        del sys.modules[k]
    sys.modules.update(saved)


def test_install_in_process_maps_the_submodules(alias_in_process):
    import cujit
    alias_in_process.install()
    alias_in_process.install()          # twice is once
    assert sum(isinstance(f, numba_alias.NumbaCudaFinder) for f in sys.meta_path) == 1
    for alias, target in numba_alias.SUBMODULES.items():
        assert importlib.import_module(alias) is importlib.import_module(target)
    assert cujit.__spec__.name == "cujit" and cujit.cudadrv.__spec__.name == "cujit.cudadrv"
    assert isinstance(cujit.config, type(cujit.config)) and hasattr(cujit.config, "source")
    from numba.cuda.cudadrv.driver import _raise_driver_not_found
    with pytest.raises(cujit.CudaSupportError, match="CUDA driver library cannot be found"):
        _raise_driver_not_found()


def test_unmapped_numba_cuda_submodule_is_a_clear_error(alias_in_process):
    alias_in_process.install()
    with pytest.raises(ModuleNotFoundError, match="numba.cuda.testing.*no equivalent") as e:
        importlib.import_module("numba.cuda.testing")
    assert e.value.name == "numba.cuda.testing"


def test_a_cujit_module_outside_the_map_is_not_loaded_a_second_time(alias_in_process):
    # without the refusal, the path finder would load cujit/config.py again as
    # numba.cuda.config and the import system would then overwrite cujit.config with it
    import cujit
    settings = cujit.config
    alias_in_process.install()
    for name in ("numba.cuda.config", "numba.cuda.simulator", "numba.cuda.frontend"):
        with pytest.raises(ModuleNotFoundError, match="no equivalent"):
            importlib.import_module(name)
        assert name not in sys.modules
    assert cujit.config is settings and hasattr(cujit.config, "ENABLE_CUDASIM")


def test_install_refuses_when_numbas_cuda_is_already_imported(alias_in_process):
    import types
    sys.modules["numba.cuda"] = types.ModuleType("numba.cuda")
    with pytest.raises(RuntimeError, match="numba.cuda was imported .* before cujit's numba "
                                           "alias was installed"):
        alias_in_process.install()
    assert not alias_in_process.installed()


def test_uninstall_forgets_the_aliases(alias_in_process):
    alias_in_process.install()
    importlib.import_module("numba.cuda")
    alias_in_process.uninstall()
    assert not alias_in_process.installed()
    assert "numba.cuda" not in sys.modules
    if not NUMBA:
        assert "numba" not in sys.modules


def test_install_from_environment_follows_the_setting(alias_in_process, monkeypatch):
    monkeypatch.delenv("CUJIT_NUMBA_ALIAS", raising=False)
    assert alias_in_process.install_from_environment() is False
    assert not alias_in_process.installed()
    monkeypatch.setenv("CUJIT_NUMBA_ALIAS", "1")
    assert alias_in_process.install_from_environment() is True
    assert alias_in_process.installed()
    monkeypatch.setenv("CUJIT_NUMBA_ALIAS", "maybe")
    with pytest.raises(ValueError, match="CUJIT_NUMBA_ALIAS='maybe'"):
        alias_in_process.install_from_environment()


def test_install_turns_numba_compat_on_and_uninstall_off(alias_in_process, monkeypatch):
    from cujit import config
    monkeypatch.delenv("CUJIT_NUMBA_COMPAT", raising=False)
    assert config.NUMBA_COMPAT is False
    alias_in_process.install()
    assert config.NUMBA_COMPAT is True and config.source("NUMBA_COMPAT") == "override"
    alias_in_process.install()          # twice is once
    alias_in_process.uninstall()
    assert config.NUMBA_COMPAT is False and config.source("NUMBA_COMPAT") == "default"


def test_install_keeps_numba_compat_the_environment_chose(alias_in_process, monkeypatch):
    from cujit import config
    monkeypatch.setenv("CUJIT_NUMBA_COMPAT", "0")
    alias_in_process.install()
    assert config.NUMBA_COMPAT is False and config.source("NUMBA_COMPAT") == "CUJIT_NUMBA_COMPAT"
    alias_in_process.uninstall()
    assert config.source("NUMBA_COMPAT") == "CUJIT_NUMBA_COMPAT"
    monkeypatch.setenv("CUJIT_NUMBA_COMPAT", "sometimes")
    with pytest.raises(ValueError, match="CUJIT_NUMBA_COMPAT='sometimes'"):
        config.NUMBA_COMPAT


def test_run_resolves_numba_cuda_config_and_vector_types(program, tmp_path):
    script = program("vt.py", """
        import numpy as np
        import numba.cuda
        from numba import cuda
        from numba.cuda import config
        from numba.cuda.vector_types import vector_types
        import cujit
        assert config is cujit.config and numba.cuda.config is cujit.config
        config.CUDA_DEALLOCS_COUNT = 3
        assert cujit.config.CUDA_DEALLOCS_COUNT == 3        # one store: the settings object
        assert vector_types["float32x4"] is cuda.float4 is cujit.float32x4

        @cuda.jit
        def k(out):
            v = cuda.float4(cuda.float2(1, 2), 3, 4)
            out[0] = v.x + v.y * 10 + v.z * 100 + v.w * 1000

        out = np.zeros(1, np.float32)
        k[1, 1](out)
        print("VT", out[0], config.ENABLE_CUDASIM)
        """)
    out = _run(["-m", "cujit", "run", str(script)], tmp_path)
    assert out.returncode == 0, out.stderr
    assert "VT 4321.0 True" in out.stdout
