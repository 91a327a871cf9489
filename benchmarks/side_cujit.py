"""Benchmark side: cujit (``python benchmarks/side_cujit.py [--quick]``); prints one JSON line.

Besides the shared suite (:mod:`suite`), it measures ``pool_alloc_free_us``: the same
``device_array(1024, float32)`` + drop with the stream-ordered pool manager, in a child
process started with ``CUJIT_CUDA_MEMORY_MANAGER=cujit.memory.pool`` (a manager is chosen
when the context is created, so it needs a fresh process); and the CUDA-graph rows (numba-cuda
has no graphs): ``stream_100_launches_us`` and ``graph_100_launches_us``, wall microseconds
per kernel of 100 small kernels (axpy on 1024 elements) issued on a stream then synchronised,
as 100 launches and as one captured graph replayed with ``Graph.launch``; and
``graph_speedup_x``, the first over the second; the tensor-core GEMM rows of :mod:`gemm`;
and the two-GPU rows of :mod:`multi_gpu`.
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


def _graph_figures(side, cuda):
    import numpy as np
    import kernels as K
    axpy = K.build(cuda)["axpy"]
    s = cuda.stream()
    x = cuda.to_device(np.ones(1024, np.float32))
    y = cuda.to_device(np.ones(1024, np.float32))
    alpha = np.float32(1.0)
    k = axpy[4, 256, s]
    n = 100

    def hundred():
        for _ in range(n):
            k(y, alpha, x)

    hundred()
    s.synchronize()
    with cuda.graph(s) as g:
        hundred()
    if g.node_count != n:
        raise RuntimeError(f"the graph captured {g.node_count} nodes, not {n}")
    reps = side.reps(300, 50, 2)

    def streamed():
        hundred()
        s.synchronize()

    def replayed():
        g.launch(s)
        s.synchronize()

    us_stream = side.measure("stream_100_launches_us", lambda: host_us(streamed, reps, 5) / n)
    us_graph = side.measure("graph_100_launches_us", lambda: host_us(replayed, reps, 5) / n)
    if us_stream and us_graph:
        side.measure("graph_speedup_x", lambda: us_stream / us_graph)
    g.close()


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
    try:
        _graph_figures(side, cuda)
    except Exception as exc:
        side.doc["errors"]["graph_100_launches_us"] = f"{type(exc).__name__}: {exc}"
    import gemm
    from suite import event_us
    gemm.cujit_figures(side, cuda, event_us)
    import multi_gpu
    try:
        multi_gpu.cujit_figures(side, cuda)
    except Exception as exc:
        side.doc["errors"]["peer_copy_256m_gbps"] = f"{type(exc).__name__}: {exc}"
    side.emit()


if __name__ == "__main__":
    main()
