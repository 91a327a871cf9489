"""The measurements shared by the cujit and numba-cuda sides (same public API, same kernels).

``run(side, cuda)`` fills ``side`` (a :class:`bench_common.Side`) with:

- ``launch_1arg_us``, ``launch_5args_us``: host time of one asynchronous launch of an empty
  kernel with 1 array / 3 arrays + 2 scalars (``kernel[1, 32](...)``);
- the launch rows of :mod:`launch_rows` (foreign arrays, many arguments, compile chains);
- ``alloc_free_us``: ``device_array(1024, float32)`` then dropping it (the free is deferred);
- ``to_device_4k_us``, ``copy_to_host_4k_us``, ``pinned_array_4k_us``;
- ``htod_{pageable,pinned}_256m_gbps``, ``dtoh_{pageable,pinned}_256m_gbps``: synchronous
  copies of 256 MiB; ``dtod_256m_gbps``: device→device, bytes read + written, CUDA events;
- ``kernel_{axpy,matmul,reduce,stencil}_us``: kernel time per launch from CUDA events over
  many back-to-back launches (warm: compiled first);
- ``kernel_stencil_coalesced_us``, ``kernel_matmul_conflict_free_us``: the rewrites the access
  report suggests, same sizes; ``access_{stencil,matmul}_speedup_x``: original / rewrite;
- the library figures of :mod:`library` (``lib_*``: random, vectorize, reduce);
- ``first_launch_s``: a fresh process importing the module, compiling and launching a kernel;
  ``cache_hit_launch_s``: the same with ``@jit(cache=True)`` and the cache filled by an
  earlier process (a fresh temporary cache folder per measurement).
"""
import json
import os
import subprocess
import sys

import numpy as np

import kernels as K
from bench_common import host_us, median, MiB, bytes_text, count_text

HERE = os.path.dirname(os.path.abspath(__file__))


def _launch_figures(side, cuda, ks):
    a = cuda.device_array(1024, np.float32)
    b = cuda.device_array(1024, np.float32)
    c = cuda.device_array(1024, np.float32)
    e1, e5 = ks["empty1"], ks["empty5"]
    alpha, n = np.float32(2.0), 1024
    e1[1, 32](a)
    e5[1, 32](a, b, c, alpha, n)
    cuda.synchronize()
    reps = side.reps(20000, 2000, 20)
    warm = side.reps(200, 200, 2)
    l1 = e1[1, 32]
    l5 = e5[1, 32]
    side.measure("launch_1arg_us", lambda: host_us(lambda: l1(a), reps, warm, 500,
                                                   cuda.synchronize))
    side.measure("launch_5args_us", lambda: host_us(lambda: l5(a, b, c, alpha, n), reps, warm,
                                                    500, cuda.synchronize))


def _small_copy_figures(side, cuda):
    reps = side.reps(10000, 1000, 20)
    f32 = np.float32
    side.measure("alloc_free_us", lambda: host_us(lambda: cuda.device_array(1024, f32), reps))
    h = np.ones(1024, dtype=np.float32)
    side.measure("to_device_4k_us", lambda: host_us(lambda: cuda.to_device(h), reps))
    d = cuda.to_device(h)
    out = np.empty_like(h)
    side.measure("copy_to_host_4k_us", lambda: host_us(lambda: d.copy_to_host(out), reps))
    side.measure("pinned_array_4k_us",
                 lambda: host_us(lambda: cuda.pinned_array(1024, f32), side.reps(3000, 300, 10)))


def _bulk_figures(side, cuda):
    n = side.reps(256 * MiB, 256 * MiB, MiB)
    reps = side.reps(10, 3, 2)
    d = cuda.device_array(n, np.uint8)
    pageable = np.ones(n, dtype=np.uint8)
    pinned = cuda.pinned_array(n, np.uint8)
    pinned[:] = 1

    def gbps(us):
        return n / (us * 1e-6) / 1e9

    size = bytes_text(n)
    side.measure("htod_pageable_256m_gbps",
                 lambda: gbps(host_us(lambda: d.copy_to_device(pageable), reps, 2)), size)
    side.measure("htod_pinned_256m_gbps",
                 lambda: gbps(host_us(lambda: d.copy_to_device(pinned), reps, 2)), size)
    side.measure("dtoh_pageable_256m_gbps",
                 lambda: gbps(host_us(lambda: d.copy_to_host(pageable), reps, 2)), size)
    side.measure("dtoh_pinned_256m_gbps",
                 lambda: gbps(host_us(lambda: d.copy_to_host(pinned), reps, 2)), size)
    d2 = cuda.device_array(n, np.uint8)
    side.measure("dtod_256m_gbps", lambda: 2 * n / (
        _events(side, cuda, lambda: d2.copy_to_device(d), side.reps(20, 5)) * 1e-6) / 1e9,
        size)


def event_us(cuda, fn, per_round, rounds=5, warmup=2):
    """Median microseconds per ``fn()`` call, CUDA events around ``per_round`` calls."""
    for _ in range(warmup):
        fn()
    cuda.synchronize()
    times = []
    for _ in range(rounds):
        start, end = cuda.event(), cuda.event()
        start.record()
        for _ in range(per_round):
            fn()
        end.record()
        end.synchronize()
        ms = start.elapsed_time(end)
        if ms <= 0:         # a simulator's dummy events: no figure rather than a wrong one
            raise ValueError(f"CUDA events gave {ms} ms")
        times.append(ms * 1e3 / per_round)
    return median(times)


def _events(side, cuda, fn, per_round):
    """:func:`event_us` with the side's round counts (one round, one call in a smoke run)."""
    if side.smoke:
        return event_us(cuda, fn, 1, rounds=1, warmup=1)
    return event_us(cuda, fn, per_round)


def _warm_gpu(side, cuda, fn, seconds=1.0):
    """Keep the GPU busy for ``seconds`` so its clocks have ramped up before kernels are timed.

    An idle H200 drops its SM clock to a few hundred MHz; a side whose first timed kernels
    caught the ramp reported compute-bound kernels up to 1.5x slower than the same PTX gave in
    the other side's process."""
    if side.smoke:
        return
    import time
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        for _ in range(20):
            fn()
        cuda.synchronize()


def _kernel_figures(side, cuda, ks):
    rng = np.random.default_rng(0)
    iters = side.reps(50, 10, 1)
    n = side.reps(1 << 26, 1 << 22, 1 << 10)
    x = cuda.to_device(rng.random(n, dtype=np.float32))
    y = cuda.to_device(rng.random(n, dtype=np.float32))
    axpy = ks["axpy"][(n + 255) // 256, 256]
    _warm_gpu(side, cuda, lambda: axpy(y, np.float32(2.0), x))
    side.measure("kernel_axpy_us", lambda: _events(side, cuda, lambda: axpy(y, np.float32(2.0), x),
                                                    iters), f"{count_text(n)} f32")
    out = cuda.to_device(np.zeros(1, np.float32))
    red = ks["reduce"][side.reps(1024, 256, 1), K.RED_TPB]
    side.measure("kernel_reduce_us", lambda: _events(side, cuda, lambda: red(x, out), iters),
                 f"{count_text(n)} f32")
    del x, y
    m = side.reps(2048, 512, 32)
    A = cuda.to_device(rng.random((m, m), dtype=np.float32))
    B = cuda.to_device(rng.random((m, m), dtype=np.float32))
    C = cuda.device_array((m, m), np.float32)
    mm = ks["matmul"][(m // K.TPB, m // K.TPB), (K.TPB, K.TPB)]
    _warm_gpu(side, cuda, lambda: mm(A, B, C), 0.5)
    side.measure("kernel_matmul_us", lambda: _events(side, cuda, lambda: mm(A, B, C),
                                                      max(2, iters // 5)), f"{m}^2")
    s = side.reps(4096, 1024, 32)
    a = cuda.to_device(rng.random((s, s), dtype=np.float32))
    b = cuda.device_array((s, s), np.float32)
    st = ks["stencil"][(s // 16, s // 16), (16, 16)]
    side.measure("kernel_stencil_us", lambda: _events(side, cuda, lambda: st(a, b), iters),
                 f"{s}^2")
    # the rewrites the access report suggests (docs/access-report.md), same sizes
    stc = ks["stencil_coalesced"][(s // 16, s // 16), (16, 16)]
    side.measure("kernel_stencil_coalesced_us",
                 lambda: _events(side, cuda, lambda: stc(a, b), iters))
    mmc = ks["matmul_conflict_free"][(m // K.TPB, m // K.TPB), (K.TPB, K.TPB)]
    _warm_gpu(side, cuda, lambda: mmc(A, B, C), 0.5)
    side.measure("kernel_matmul_conflict_free_us",
                 lambda: _events(side, cuda, lambda: mmc(A, B, C), max(2, iters // 5)),
                 f"{m}^2")
    f = side.doc["figures"]
    for orig, fixed, key in (("kernel_stencil_us", "kernel_stencil_coalesced_us",
                              "access_stencil_speedup_x"),
                             ("kernel_matmul_us", "kernel_matmul_conflict_free_us",
                              "access_matmul_speedup_x")):
        if f.get(orig) and f.get(fixed):
            side.measure(key, lambda o=orig, x=fixed: f[o] / f[x])


def _byte_compile(which):
    """Write the bytecode of the package under test, as ``pip install`` does: a checkout run
    where ``PYTHONDONTWRITEBYTECODE`` is set (some GPU images set it) would otherwise compile
    every module's source in each fresh process (about 0.3 s of cujit's on an H200 host),
    which an installed package never does."""
    import importlib.util
    spec = importlib.util.find_spec("cujit" if which == "cujit" else "numba.cuda")
    for folder in (spec.submodule_search_locations or []) if spec else []:
        subprocess.run([sys.executable, "-m", "compileall", "-q", folder],
                       capture_output=True, timeout=300)


def first_launch_s(which, runs=3, cache=False):
    """Median seconds of import + compile (or, with ``cache``, a disk-cache hit) + first
    launch + synchronize in fresh processes."""
    import tempfile
    argv = [sys.executable, os.path.join(HERE, "first_launch.py"), which]
    env = None
    _byte_compile(which)
    with tempfile.TemporaryDirectory(prefix="cujit-bench-cache-") as tmp:
        if cache:
            argv.append("--cache")
            env = dict(os.environ, CUJIT_CACHE_DIR=tmp, NUMBA_CACHE_DIR=tmp)
            runs += 1           # the first run fills the cache
        times = []
        for _ in range(runs):
            p = subprocess.run(argv, capture_output=True, text=True, timeout=180, env=env)
            if p.returncode:
                raise RuntimeError(f"first_launch.py {which} failed: {p.stderr.strip()[-500:]}")
            times.append(json.loads(p.stdout.strip().splitlines()[-1])["seconds"])
    return median(times[1:] if cache else times)


def run(side, cuda, which):
    """Fill ``side`` with every figure for module ``cuda`` (``which``: 'cujit' or 'numba')."""
    name = getattr(cuda.get_current_device(), "name", "?")
    side.doc["device"] = name.decode() if isinstance(name, bytes) else str(name)
    ks = K.build(cuda)
    _launch_figures(side, cuda, ks)
    import launch_rows
    launch_rows.run(side, cuda, ks)
    _small_copy_figures(side, cuda)
    _bulk_figures(side, cuda)
    _kernel_figures(side, cuda, ks)
    import library
    library.run(side, cuda, lambda fn, per_round: _events(side, cuda, fn, per_round))
    side.measure("first_launch_s", lambda: first_launch_s(which, side.reps(3, 1, 1)))
    side.measure("cache_hit_launch_s",
                 lambda: first_launch_s(which, side.reps(5, 2, 1), cache=True))
