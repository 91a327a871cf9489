"""Benchmark side: CuPy (``python benchmarks/side_cupy.py [--quick]``); prints one JSON line.

Same figures as :mod:`suite` where CuPy has the operation: launches through ``RawKernel``
(NVRTC), allocation through CuPy's memory pool, ``cp.asarray``/``.get``,
``cupyx.empty_pinned``, ``ndarray.set``/``.get(out=)`` and device-to-device ``copy_from_device``.
Kernel run times are left to the numba-cuda comparison (different kernels would not compare).
"""
import sys

import numpy as np

from bench_common import Side, host_us, MiB
from suite import event_us

_SRC = r"""
extern "C" __global__ void empty1(float* a) { if (threadIdx.x == 1024) a[0] = 0.f; }
extern "C" __global__ void empty5(float* a, const float* b, const float* c, float alpha,
                                  long long n) {
    if (threadIdx.x == 1024) a[0] = b[0] + c[0] + alpha + (float)n;
}
"""


class _CupyAsCuda:
    """The two calls :func:`suite.event_us` needs, on CuPy."""

    def __init__(self, cp):
        self.cp = cp

    def synchronize(self):
        self.cp.cuda.Device().synchronize()

    def event(self):
        return _Event(self.cp)


class _Event:
    def __init__(self, cp):
        self.cp = cp
        self.e = cp.cuda.Event()

    def record(self):
        self.e.record()

    def synchronize(self):
        self.e.synchronize()

    def elapsed_time(self, end):
        return self.cp.cuda.get_elapsed_time(self.e, end.e)


def run(side, cp, cupyx):
    dev = cp.cuda.Device()
    side.doc["device"] = cp.cuda.runtime.getDeviceProperties(dev.id)["name"].decode()
    sync = dev.synchronize
    reps = side.reps(20000, 2000)
    a, b, c = (cp.zeros(1024, cp.float32) for _ in range(3))
    mod = cp.RawModule(code=_SRC)
    k1, k5 = mod.get_function("empty1"), mod.get_function("empty5")
    args5 = (a, b, c, np.float32(2.0), np.int64(1024))
    side.measure("launch_1arg_us", lambda: host_us(lambda: k1((1,), (32,), (a,)), reps, 200,
                                                   500, sync))
    side.measure("launch_5args_us", lambda: host_us(lambda: k5((1,), (32,), args5), reps, 200,
                                                    500, sync))
    small = side.reps(10000, 1000)
    side.measure("alloc_free_us", lambda: host_us(lambda: cp.empty(1024, cp.float32), small))
    # CuPy's default allocator is its caching pool: the same figure is the pool row's peer.
    if "alloc_free_us" in side.doc["figures"]:
        side.doc["figures"]["pool_alloc_free_us"] = side.doc["figures"]["alloc_free_us"]
    h = np.ones(1024, np.float32)
    side.measure("to_device_4k_us", lambda: host_us(lambda: cp.asarray(h), small))
    d4 = cp.asarray(h)
    out = np.empty_like(h)
    side.measure("copy_to_host_4k_us", lambda: host_us(lambda: d4.get(out=out), small))
    side.measure("pinned_array_4k_us",
                 lambda: host_us(lambda: cupyx.empty_pinned(1024, np.float32),
                                 side.reps(3000, 300)))
    n = side.reps(256 * MiB, 256 * MiB, MiB)
    breps = side.reps(10, 3, 2)
    d = cp.empty(n, cp.uint8)
    pageable = np.ones(n, np.uint8)
    pinned = cupyx.empty_pinned(n, np.uint8)
    pinned[:] = 1

    def gbps(us):
        return n / (us * 1e-6) / 1e9

    def h2d(src):
        d.set(src)
        sync()

    def d2h(dst):
        d.get(out=dst)
        sync()

    side.measure("htod_pageable_256m_gbps", lambda: gbps(host_us(lambda: h2d(pageable), breps, 2)))
    side.measure("htod_pinned_256m_gbps", lambda: gbps(host_us(lambda: h2d(pinned), breps, 2)))
    side.measure("dtoh_pageable_256m_gbps", lambda: gbps(host_us(lambda: d2h(pageable), breps, 2)))
    side.measure("dtoh_pinned_256m_gbps", lambda: gbps(host_us(lambda: d2h(pinned), breps, 2)))
    d2 = cp.empty(n, cp.uint8)
    us = event_us(_CupyAsCuda(cp), lambda: d2.data.copy_from_device(d.data, n),
                  side.reps(20, 5))
    side.measure("dtod_256m_gbps", lambda: 2 * n / (us * 1e-6) / 1e9)
    del d, d2, pinned, pageable
    # library.py's reduction row: a sum of 2^26 float32 on the device, result on the host
    x = cp.asarray(np.random.default_rng(1).random(side.reps(1 << 26, 1 << 22), np.float32))
    side.measure("lib_reduce_sum_us", lambda: host_us(lambda: float(x.sum()),
                                                      side.reps(200, 50), 5))
    del x
    import gemm
    gemm.cupy_figures(side, cp, lambda fn, per_round: event_us(_CupyAsCuda(cp), fn,
                                                               per_round))


def main():
    side = Side("cupy", quick="--quick" in sys.argv)
    try:
        import cupy as cp
        import cupyx
        side.doc["versions"] = {"cupy": cp.__version__}
        if cp.cuda.runtime.getDeviceCount() < 1:
            return side.skip("CuPy sees no GPU")
    except Exception as exc:
        return side.skip(f"CuPy not usable: {type(exc).__name__}: {exc}")
    run(side, cp, cupyx)
    side.emit()


if __name__ == "__main__":
    main()
