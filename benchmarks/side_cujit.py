"""Benchmark side: cujit (``python benchmarks/side_cujit.py [--quick]``); prints one JSON line.

Besides the shared suite (:mod:`suite`), it measures ``pool_alloc_free_us``: the same
``device_array(1024, float32)`` + drop with the stream-ordered pool manager, in a child
process started with ``CUJIT_CUDA_MEMORY_MANAGER=cujit.memory.pool`` (a manager is chosen
when the context is created, so it needs a fresh process).
"""
import json
import os
import subprocess
import sys

from bench_common import Side, host_us


def _pool_child(quick):
    import numpy as np
    import cujit as cuda
    side = Side("cujit", quick)
    us = host_us(lambda: cuda.device_array(1024, np.float32), side.reps(10000, 1000, 20))
    print(json.dumps({"pool_alloc_free_us": us,
                      "manager": type(cuda.current_context().memory_manager).__name__}))


def _pool_figure(quick):
    env = dict(os.environ, CUJIT_CUDA_MEMORY_MANAGER="cujit.memory.pool")
    argv = [sys.executable, os.path.abspath(__file__), "--pool-child"]
    argv += ["--quick"] if quick else []
    p = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=300)
    if p.returncode:
        raise RuntimeError(p.stderr.strip().splitlines()[-1] if p.stderr.strip() else
                           f"exit {p.returncode}")
    doc = json.loads(p.stdout.strip().splitlines()[-1])
    if doc["manager"] != "PoolMemoryManager":
        raise RuntimeError(f"the child used {doc['manager']}, not PoolMemoryManager")
    return doc["pool_alloc_free_us"]


def main():
    quick = "--quick" in sys.argv
    if "--pool-child" in sys.argv:
        return _pool_child(quick)
    side = Side("cujit", quick=quick)
    try:
        import cujit as cuda
        import suite
        side.doc["versions"] = {"cujit": cuda.__version__}
        if not cuda.is_available():
            return side.skip("no usable GPU for cujit (cujit.is_available() is False)")
    except Exception as exc:
        return side.skip(f"cujit not usable: {type(exc).__name__}: {exc}")
    suite.run(side, cuda, "cujit")
    side.measure("pool_alloc_free_us", lambda: _pool_figure(quick))
    side.emit()


if __name__ == "__main__":
    main()
