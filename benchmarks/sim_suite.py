"""Simulator benchmarks, cujit against numba-cuda's simulator (``NUMBA_ENABLE_CUDASIM=1``),
each side in its own process:

- ``reduction``: a 256-thread block reduction (a barrier per step) over 64 blocks;
- ``matmul``: a 128 x 128 float32 tiled matrix product (16 x 16 tiles in shared memory, two
  barriers per tile step), 8 x 8 blocks;
- ``stencil``: a 5-point 2-D stencil over 1024 x 1024 float32 (1M threads, 16 x 16 blocks).

Usage::

    python benchmarks/sim_suite.py [--kernels reduction,matmul,stencil] [--peers-python PY]
    python benchmarks/sim_suite.py --side cujit --kernel matmul [--checks 0|1] [--access-report 0|1]
    python benchmarks/sim_suite.py --access-cost --kernels matmul,stencil [--checks 0|1]
    PY benchmarks/sim_suite.py --side numba --kernel matmul

The driver (no ``--side``) runs cujit with checks on and off (this interpreter) and numba-cuda
under the interpreter named by ``--peers-python`` or ``$CUJIT_BENCH_PEERS_PYTHON`` (as
``python -m cujit bench``; without either the numba side is not run and says why), one
JSON line per run, then a summary line per kernel with the speed-ups (numba seconds / cujit
seconds).  Each side prints ``{"bench", "kernel", "side", "checks", "seconds", "cpu_seconds",
"correct"}`` (medians over the launches: wall seconds, and process CPU seconds, which a
loaded machine distorts less).  Not a test: nothing here asserts timings.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

import numpy as np

RED_TPB = 256
PEERS_PYTHON_ENV = "CUJIT_BENCH_PEERS_PYTHON"     # the runner's (benchmarks/runner.py) too
TILE = 16

# Bound by run_side: numba-cuda's simulator swaps its fake module in only where a kernel
# names it as a global, so the kernels read these as globals.
cuda = None
float32 = None


def block_sum(a, out):
    s = cuda.shared.array(RED_TPB, float32)
    tid = cuda.threadIdx.x
    i = cuda.blockIdx.x * cuda.blockDim.x + tid
    s[tid] = a[i]
    cuda.syncthreads()
    stride = RED_TPB // 2
    while stride > 0:
        if tid < stride:
            s[tid] += s[tid + stride]
        cuda.syncthreads()
        stride //= 2
    if tid == 0:
        out[cuda.blockIdx.x] = s[0]


def matmul(A, B, C):
    sA = cuda.shared.array(shape=(TILE, TILE), dtype=float32)
    sB = cuda.shared.array(shape=(TILE, TILE), dtype=float32)
    x, y = cuda.grid(2)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    acc = float32(0.0)
    for step in range(A.shape[1] // TILE):
        sA[tx, ty] = A[x, step * TILE + ty]
        sB[tx, ty] = B[step * TILE + tx, y]
        cuda.syncthreads()
        for k in range(TILE):
            acc += sA[tx, k] * sB[k, ty]
        cuda.syncthreads()
    C[x, y] = acc


def stencil(a, b):
    i, j = cuda.grid(2)
    if 0 < i < a.shape[0] - 1 and 0 < j < a.shape[1] - 1:
        b[i, j] = float32(0.25) * (a[i - 1, j] + a[i + 1, j] + a[i, j - 1] + a[i, j + 1])


def _problem(kernel):
    """(python function, launch (grid, block), args, check(args) -> bool)."""
    if kernel == "reduction":
        blocks = 64
        a = (np.arange(blocks * RED_TPB) % 7).astype(np.float32)
        out = np.zeros(blocks, np.float32)
        expect = a.reshape(blocks, RED_TPB).sum(axis=1)
        return block_sum, (blocks, RED_TPB), [a, out], lambda: np.array_equal(out, expect)
    if kernel == "matmul":
        n = 128
        rng = np.random.default_rng(0)
        A = rng.standard_normal((n, n)).astype(np.float32)
        B = rng.standard_normal((n, n)).astype(np.float32)
        C = np.zeros((n, n), np.float32)
        return matmul, ((n // TILE, n // TILE), (TILE, TILE)), [A, B, C], \
            lambda: np.allclose(C, A @ B, rtol=1e-4, atol=1e-3)
    if kernel == "stencil":
        n = 1024
        a = np.arange(n * n, dtype=np.float32).reshape(n, n) % 13
        b = np.zeros_like(a)
        exp = np.zeros_like(a)
        exp[1:-1, 1:-1] = np.float32(0.25) * (a[:-2, 1:-1] + a[2:, 1:-1] + a[1:-1, :-2]
                                              + a[1:-1, 2:])
        return stencil, ((n // 16, n // 16), (16, 16)), [a, b], \
            lambda: np.array_equal(b, exp)
    raise ValueError(f"unknown kernel {kernel!r}")


def run_side(side, kernel, checks, repeat, access_report=False):
    global cuda, float32
    if side == "numba":
        os.environ["NUMBA_ENABLE_CUDASIM"] = "1"
        from numba import cuda, float32
        try:
            from importlib.metadata import version as _v
            version = _v("numba-cuda")
        except Exception:
            import numba
            version = numba.__version__
    else:
        os.environ["CUJIT_ENABLE_CUDASIM"] = "1"
        os.environ["CUJIT_SIM_CHECKS"] = "1" if checks else "0"
        # the access recorder on every launch (its cost is what this measures)
        os.environ["CUJIT_ACCESS_REPORT"] = "1" if access_report else "0"
        os.environ.setdefault("CUJIT_SIM_PROGRESS", "0")
        sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        import cujit as cuda
        from numpy import float32
        version = cuda.__version__
    fn, (grid, block), args, check = _problem(kernel)
    k = cuda.jit(fn)
    times, cpu = [], []
    correct = True
    for _ in range(repeat):
        t0, c0 = time.perf_counter(), time.process_time()
        k[grid, block](*args)
        cuda.synchronize()
        times.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
        correct = correct and bool(check())
    return {"bench": "sim_suite", "kernel": kernel, "side": side, "version": version,
            "checks": bool(checks) if side == "cujit" else None, "repeat": repeat,
            "access_report": bool(access_report) if side == "cujit" else None,
            "seconds": statistics.median(times), "cpu_seconds": statistics.median(cpu),
            "correct": correct,
            "python": sys.version.split()[0]}


def access_cost(kernel, checks, repeat):
    """The access recorder's cost on the cujit side: launches with recording off and on
    (``cujit.access_report()``, default block sample) alternate in one process, so a loaded
    machine affects both alike; minimum process CPU seconds of each."""
    global cuda, float32
    os.environ["CUJIT_ENABLE_CUDASIM"] = "1"
    os.environ["CUJIT_SIM_CHECKS"] = "1" if checks else "0"
    os.environ["CUJIT_ACCESS_REPORT"] = "0"
    os.environ.setdefault("CUJIT_SIM_PROGRESS", "0")
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    import cujit as cuda
    from numpy import float32
    fn, (grid, block), args, check = _problem(kernel)
    k = cuda.jit(fn)
    k[grid, block](*args)               # typing and first-launch work out of the figures
    cpu = {"off": [], "on": []}
    for _ in range(repeat):
        for mode in ("off", "on"):
            c0 = time.process_time()
            if mode == "off":
                k[grid, block](*args)
            else:
                with cuda.access_report() as rep:
                    k[grid, block](*args)
            cpu[mode].append(time.process_time() - c0)
    off, on = min(cpu["off"]), min(cpu["on"])
    return {"bench": "sim_suite_access_cost", "kernel": kernel, "checks": bool(checks),
            "repeat": repeat, "off_cpu_seconds": off, "on_cpu_seconds": on,
            "cost_percent": round(100 * (on / off - 1), 1), "correct": bool(check()),
            "warnings": len(rep.warnings)}


def _child(python, args):
    r = subprocess.run([python, os.path.abspath(__file__)] + args, capture_output=True,
                       text=True)
    lines = [ln for ln in r.stdout.splitlines() if ln.startswith("{")]
    if r.returncode or not lines:
        return {"side": args[1], "error": (r.stderr or r.stdout)[-2000:]}
    return json.loads(lines[-1])


def drive(kernels, peers, cujit_repeat, numba_repeat):
    for kernel in kernels:
        res = {}
        for checks in (1, 0):
            r = _child(sys.executable, ["--side", "cujit", "--kernel", kernel, "--checks",
                                        str(checks), "--repeat", str(cujit_repeat)])
            print(json.dumps(r), flush=True)
            res["cujit_checks" if checks else "cujit_nochecks"] = r
        if not peers:
            r = {"side": "numba", "error": "not run: no numba-cuda interpreter named "
                 f"(--peers-python PYTHON or ${PEERS_PYTHON_ENV})"}
        elif not os.path.exists(peers):
            r = {"side": "numba", "error": f"no numba-cuda interpreter at {peers}"}
        else:
            r = _child(peers, ["--side", "numba", "--kernel", kernel, "--repeat",
                               str(numba_repeat)])
        print(json.dumps(r), flush=True)
        res["numba"] = r
        summary = {"bench": "sim_suite", "kernel": kernel}
        for key in ("cujit_checks", "cujit_nochecks", "numba"):
            summary[key + "_s"] = res[key].get("seconds")
            summary[key + "_cpu_s"] = res[key].get("cpu_seconds")
        for suffix in ("_s", "_cpu_s"):
            n = summary["numba" + suffix]
            for key in ("cujit_checks", "cujit_nochecks"):
                c = summary[key + suffix]
                name = "speedup_" + key.split("_")[1] + ("_cpu" if "cpu" in suffix else "")
                summary[name] = round(n / c, 1) if n and c else None
        print(json.dumps(summary), flush=True)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--side", choices=["cujit", "numba"])
    p.add_argument("--kernel", choices=["reduction", "matmul", "stencil"])
    p.add_argument("--kernels", default="reduction,matmul,stencil")
    p.add_argument("--checks", type=int, default=1)
    p.add_argument("--repeat", type=int, default=None)
    p.add_argument("--access-report", type=int, default=0,
                   help="1: record accesses for the access report (cujit side only)")
    p.add_argument("--access-cost", action="store_true",
                   help="measure the access recorder's cost (recording off and on "
                        "alternating in this process) for --kernels")
    p.add_argument("--peers-python", default=os.environ.get(PEERS_PYTHON_ENV),
                   help=f"the interpreter with numba-cuda (default ${PEERS_PYTHON_ENV})")
    a = p.parse_args(argv)
    if a.access_cost:
        for kernel in [k for k in a.kernels.split(",") if k]:
            print(json.dumps(access_cost(kernel, a.checks, a.repeat or 3)), flush=True)
    elif a.side is None:
        drive([k for k in a.kernels.split(",") if k], a.peers_python, a.repeat or 3, 1)
    else:
        if a.kernel is None:
            p.error("--side needs --kernel")
        repeat = a.repeat or (1 if a.side == "numba" else 3)
        print(json.dumps(run_side(a.side, a.kernel, a.checks, repeat, bool(a.access_report))),
              flush=True)


if __name__ == "__main__":
    main()
