"""Simulator benchmark: a shared-memory block reduction (256 threads per block, a barrier per
step) over 64 blocks, on cujit's simulator and on numba-cuda's (``NUMBA_ENABLE_CUDASIM=1``).

Usage::

    python benchmarks/sim_reduction.py                      # driver: runs every side, prints ratios
    python benchmarks/sim_reduction.py --side cujit [--checks 0|1]
    $CUJIT_BENCH_PEERS_PYTHON benchmarks/sim_reduction.py --side numba

Each side runs in its own process and prints one JSON line: ``{"bench": "sim_reduction",
"side": ..., "checks": ..., "seconds": <median wall seconds of one launch>, "correct": ...}``.
The driver (no ``--side``) runs cujit with checks on and off (this interpreter) and numba-cuda
(the interpreter in ``$CUJIT_BENCH_PEERS_PYTHON``; skipped when unset), then prints a last JSON line with
the speed-ups (numba seconds / cujit seconds).  Not a test: nothing here asserts timings.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

import numpy as np

TPB = 256


# Set by run_side: numba-cuda's simulator swaps the numba.cuda module for its fake one only
# where a kernel names it as a global, so the kernel reads these two as globals.
cuda = None
float32 = None


def block_sum(a, out):
    s = cuda.shared.array(TPB, float32)
    tid = cuda.threadIdx.x
    i = cuda.blockIdx.x * cuda.blockDim.x + tid
    s[tid] = a[i]
    cuda.syncthreads()
    stride = TPB // 2
    while stride > 0:
        if tid < stride:
            s[tid] += s[tid + stride]
        cuda.syncthreads()
        stride //= 2
    if tid == 0:
        out[cuda.blockIdx.x] = s[0]


def run_side(side, checks, blocks, repeat, warmup):
    global cuda, float32
    if side == "numba":
        os.environ["NUMBA_ENABLE_CUDASIM"] = "1"
        from numba import cuda, float32
        import numba
        version = numba.__version__
        try:
            from importlib.metadata import version as _v
            version = _v("numba-cuda")
        except Exception:
            pass
    else:
        os.environ["CUJIT_ENABLE_CUDASIM"] = "1"
        os.environ["CUJIT_SIM_CHECKS"] = "1" if checks else "0"
        sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        import cujit as cuda
        from numpy import float32
        version = cuda.__version__
    kernel = cuda.jit(block_sum)
    a = (np.arange(blocks * TPB) % 7).astype(np.float32)
    expect = a.reshape(blocks, TPB).sum(axis=1)
    out = np.zeros(blocks, np.float32)
    for _ in range(warmup):
        kernel[blocks, TPB](a, out)
    times = []
    correct = True
    for _ in range(repeat):
        out[:] = 0
        t0 = time.perf_counter()
        kernel[blocks, TPB](a, out)
        cuda.synchronize()
        times.append(time.perf_counter() - t0)
        correct = correct and bool(np.array_equal(out, expect))
    return {"bench": "sim_reduction", "side": side, "version": version,
            "checks": bool(checks) if side == "cujit" else None, "blocks": blocks,
            "threads_per_block": TPB, "repeat": repeat, "seconds": statistics.median(times),
            "correct": correct, "python": sys.version.split()[0]}


def _child(python, args):
    r = subprocess.run([python, os.path.abspath(__file__)] + args, capture_output=True,
                       text=True)
    lines = [ln for ln in r.stdout.splitlines() if ln.startswith("{")]
    if r.returncode or not lines:
        return {"side": args[1], "error": (r.stderr or r.stdout)[-2000:]}
    return json.loads(lines[-1])


def drive(blocks, numba_repeat, cujit_repeat):
    peers = os.environ.get("CUJIT_BENCH_PEERS_PYTHON", "")
    res = {}
    for checks in (1, 0):
        r = _child(sys.executable, ["--side", "cujit", "--checks", str(checks), "--blocks",
                                    str(blocks), "--repeat", str(cujit_repeat)])
        print(json.dumps(r), flush=True)
        res["cujit_checks" if checks else "cujit_nochecks"] = r
    if peers and os.path.exists(peers):
        r = _child(peers, ["--side", "numba", "--blocks", str(blocks), "--repeat",
                           str(numba_repeat), "--warmup", "0"])
    else:
        r = {"side": "numba", "error": f"no numba-cuda interpreter: CUJIT_BENCH_PEERS_PYTHON="
             f"{peers!r}"}
    print(json.dumps(r), flush=True)
    res["numba"] = r
    summary = {"bench": "sim_reduction", "blocks": blocks, "threads_per_block": TPB}
    for k in ("cujit_checks", "cujit_nochecks", "numba"):
        summary[k + "_s"] = res[k].get("seconds")
    n = summary["numba_s"]
    for k in ("cujit_checks", "cujit_nochecks"):
        c = summary[k + "_s"]
        summary["speedup_" + k.split("_")[1]] = round(n / c, 1) if n and c else None
    print(json.dumps(summary), flush=True)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--side", choices=["cujit", "numba"])
    p.add_argument("--checks", type=int, default=1, help="cujit: simulator checks on (1) or off (0)")
    p.add_argument("--blocks", type=int, default=64)
    p.add_argument("--repeat", type=int, default=None)
    p.add_argument("--warmup", type=int, default=1)
    a = p.parse_args(argv)
    if a.side is None:
        drive(a.blocks, a.repeat or 1, 5)
    else:
        repeat = a.repeat or (1 if a.side == "numba" else 5)
        print(json.dumps(run_side(a.side, a.checks, a.blocks, repeat, a.warmup)), flush=True)


if __name__ == "__main__":
    main()
