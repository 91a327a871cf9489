"""numba-cuda programs that call Numba CPU functions or use ``numba.cuda.extending``, run
unmodified under ``python -m cujit run`` (the numba alias): ``numba.cuda.extending`` is
cujit's extension API, and numba-cuda's docs examples with ``@numba.jit`` functions (CPU-GPU
compatibility, Monte Carlo) run when Numba is installed."""
import os
import subprocess
import sys
import textwrap

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
NUMBA = subprocess.run([sys.executable, "-c", "import numba"],
                       capture_output=True).returncode == 0


def _run_aliased(tmp_path, body):
    script = tmp_path / "prog.py"
    script.write_text(textwrap.dedent(body))
    env = dict(os.environ)
    env["PYTHONPATH"] = ROOT + os.pathsep + env.get("PYTHONPATH", "")
    env["NUMBA_ENABLE_CUDASIM"] = "1"
    for name in ("CUJIT_NUMBA_ALIAS", "CUJIT_ENABLE_CUDASIM", "PYTEST_ADDOPTS"):
        env.pop(name, None)
    return subprocess.run([sys.executable, "-m", "cujit", "run", str(script)],
                          cwd=str(tmp_path), env=env, capture_output=True, text=True,
                          timeout=600)


def test_numba_cuda_extending_is_cujits_extension_api(tmp_path):
    out = _run_aliased(tmp_path, """
        import numpy as np
        import cujit
        from numba import cuda
        from numba.cuda.extending import overload, register_jitable
        assert cuda.extending is cujit.extending

        @register_jitable
        def half(x):
            return x / 2

        def sq(x):
            pass

        @overload(sq, target="cuda")
        def _sq(x):
            def impl(x):
                return x * x
            return impl

        @cuda.jit
        def k(out, x):
            i = cuda.grid(1)
            if i < x.size:
                out[i] = half(sq(x[i]))
        x = np.arange(4.0)
        out = np.zeros(4)
        k[1, 4](out, x)
        print("EXT", out.tolist())
        """)
    assert out.returncode == 0, out.stderr
    assert "EXT [0.0, 0.5, 2.0, 4.5]" in out.stdout


@pytest.mark.skipif(not NUMBA, reason="numba is not installed in this interpreter")
def test_numba_cuda_cpu_gpu_compat_example_runs(tmp_path):
    # numba-cuda tests/doc_examples/test_cpu_gpu_compat.py, as a program
    out = _run_aliased(tmp_path, """
        from math import pi
        import numba
        import numpy as np
        from numba import cuda
        X = cuda.to_device([1, 10, 234])
        Y = cuda.to_device([2, 2, 4014])
        Z = cuda.to_device([3, 14, 2211])
        results = cuda.to_device([0.0, 0.0, 0.0])

        @numba.jit
        def business_logic(x, y, z):
            return 4 * z * (2 * x - (4 * y) / 2 * pi)

        @cuda.jit
        def f(res, xarr, yarr, zarr):
            tid = cuda.grid(1)
            if tid < len(xarr):
                res[tid] = business_logic(xarr[tid], yarr[tid], zarr[tid])

        f.forall(len(X))(results, X, Y, Z)
        expect = [business_logic(x, y, z) for x, y, z in zip(X, Y, Z)]
        np.testing.assert_equal(expect, results.copy_to_host())
        print("COMPAT", type(business_logic).__module__)
        """)
    assert out.returncode == 0, out.stderr
    assert "COMPAT numba.core.registry" in out.stdout


@pytest.mark.skipif(not NUMBA, reason="numba is not installed in this interpreter")
def test_numba_cuda_monte_carlo_example_runs(tmp_path):
    # numba-cuda tests/doc_examples/test_montecarlo.py (fewer samples), as a program: func
    # is a numba.jit function defined after the kernel that calls it
    out = _run_aliased(tmp_path, """
        import numba
        import numpy as np
        from numba import cuda
        from numba.cuda.random import (create_xoroshiro128p_states,
                                       xoroshiro128p_uniform_float32)
        nsamps = 20000

        @cuda.jit
        def mc_integrator_kernel(out, rng_states, lower_lim, upper_lim):
            size = len(out)
            gid = cuda.grid(1)
            if gid < size:
                samp = xoroshiro128p_uniform_float32(rng_states, gid)
                samp = samp * (upper_lim - lower_lim) + lower_lim
                y = func(samp)
                out[gid] = y

        @cuda.reduce
        def sum_reduce(a, b):
            return a + b

        def mc_integrate(lower_lim, upper_lim, nsamps):
            out = cuda.to_device(np.zeros(nsamps, dtype="float32"))
            rng_states = create_xoroshiro128p_states(nsamps, seed=42)
            mc_integrator_kernel.forall(nsamps)(out, rng_states, lower_lim, upper_lim)
            factor = (upper_lim - lower_lim) / (nsamps - 1)
            return sum_reduce(out) * factor

        @numba.jit
        def func(x):
            return 1.0 / x

        np.testing.assert_allclose(mc_integrate(1, 2, nsamps), 0.69315, atol=0.005)
        np.testing.assert_allclose(mc_integrate(2, 3, nsamps), 0.4055, atol=0.005)
        print("MONTECARLO ok")
        """)
    assert out.returncode == 0, out.stderr
    assert "MONTECARLO ok" in out.stdout


@pytest.mark.skipif(not NUMBA, reason="numba is not installed in this interpreter")
def test_numbas_own_register_jitable_is_refused_naming_the_cuda_one(tmp_path):
    out = _run_aliased(tmp_path, """
        import numpy as np
        from numba import cuda
        from numba.extending import register_jitable

        @register_jitable
        def half(x):
            return x / 2

        @cuda.jit
        def k(out):
            out[0] = half(3.0)
        try:
            k[1, 1](np.zeros(1))
        except cuda.TypingError as e:
            print("REFUSED", e)
        """)
    assert out.returncode == 0, out.stderr
    assert "REFUSED" in out.stdout and "'half' (function" in out.stdout
    assert "@cujit.extending.register_jitable" in out.stdout
