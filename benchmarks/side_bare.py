"""Benchmark side: floors through bare cuda-bindings calls, no cujit code at all.

``python benchmarks/side_bare.py [--quick]`` prints one JSON line with:

- ``launch_1arg_us`` / ``launch_5args_us``: ``cuLaunchKernel`` of an empty hand-written PTX
  kernel (ISA 8.0, loads on any driver since CUDA 12.0) whose parameters are what cujit's ABI
  passes: a 1-D array is data pointer + shape + stride (3 × 8 bytes); the 5-argument kernel
  takes 3 such arrays, a float32 and an int64.  The ``void*[]`` is built once.
- ``alloc_free_us``: ``cuMemAlloc`` + ``cuMemFree`` of 4 KiB;
  ``pool_alloc_free_us``: ``cuMemAllocFromPoolAsync`` + ``cuMemFreeAsync`` on the default pool
  (release threshold raised so the pool keeps its memory, as cujit's pool manager does);
- ``to_device_4k_us``: ``cuMemAlloc`` + ``cuMemcpyHtoD`` + ``cuMemFree`` of 4 KiB (what
  ``to_device`` and dropping its result do); ``copy_to_host_4k_us``: ``cuMemcpyDtoH`` of 4 KiB
  (into an existing array, as cujit's figure); ``pinned_array_4k_us``: ``cuMemHostAlloc`` +
  ``cuMemFreeHost`` of 4 KiB;
- ``htod_/dtoh_{pageable,pinned}_256m_gbps``, ``dtod_256m_gbps`` (read + written, events);
- ``cache_hit_launch_s``: ``bare_first_launch.py`` in fresh processes, the driver's floor under a
  ``cache=True`` hit (import cuda-bindings, init, context, module load, copy, first launch);
- ``peer_copy_256m_gbps`` with two GPUs (:mod:`multi_gpu`).
"""
import ctypes
import sys

import numpy as np

from bench_common import Side, host_us, median, MiB

PTX = b"""
.version 8.0
.target sm_52
.address_size 64

.visible .entry empty1(.param .u64 a_data, .param .u64 a_shape, .param .u64 a_stride)
{
    ret;
}

.visible .entry empty5(.param .u64 a0, .param .u64 a1, .param .u64 a2,
                       .param .u64 b0, .param .u64 b1, .param .u64 b2,
                       .param .u64 c0, .param .u64 c1, .param .u64 c2,
                       .param .f32 alpha, .param .u64 n)
{
    ret;
}
\x00"""


def _ok(result, call):
    err = result[0]
    if int(err):
        raise RuntimeError(f"{call} failed: {getattr(err, 'name', err)}")
    if len(result) == 1:
        return None
    return result[1] if len(result) == 2 else result[1:]


class _Params:
    """A ``void*[]`` over ctypes values, built once; ``.address`` goes to cuLaunchKernel."""

    def __init__(self, values):
        self.values = values
        self.array = (ctypes.c_void_p * len(values))(
            *[ctypes.addressof(v) for v in values])
        self.address = ctypes.addressof(self.array)


def run(side, d):
    _ok(d.cuInit(0), "cuInit")
    dev = _ok(d.cuDeviceGet(0), "cuDeviceGet")
    name = _ok(d.cuDeviceGetName(256, dev), "cuDeviceGetName")
    side.doc["device"] = name.split(b"\x00")[0].decode()
    ctx = _ok(d.cuDevicePrimaryCtxRetain(dev), "cuDevicePrimaryCtxRetain")
    _ok(d.cuCtxSetCurrent(ctx), "cuCtxSetCurrent")
    sync = d.cuCtxSynchronize
    mod = _ok(d.cuModuleLoadData(PTX), "cuModuleLoadData")
    f1 = int(_ok(d.cuModuleGetFunction(mod, b"empty1"), "cuModuleGetFunction"))
    f5 = int(_ok(d.cuModuleGetFunction(mod, b"empty5"), "cuModuleGetFunction"))
    buf = int(_ok(d.cuMemAlloc(4096), "cuMemAlloc"))
    u64 = ctypes.c_uint64
    p1 = _Params([u64(buf), u64(1024), u64(4)])
    p5 = _Params([u64(buf), u64(1024), u64(4)] * 3 + [ctypes.c_float(2.0), u64(1024)])
    launch = d.cuLaunchKernel
    reps = side.reps(20000, 2000)
    side.measure("launch_1arg_us", lambda: host_us(
        lambda: launch(f1, 1, 1, 1, 32, 1, 1, 0, 0, p1.address, 0), reps, 200, 500, sync))
    side.measure("launch_5args_us", lambda: host_us(
        lambda: launch(f5, 1, 1, 1, 32, 1, 1, 0, 0, p5.address, 0), reps, 200, 500, sync))

    small = side.reps(10000, 1000)
    alloc, free = d.cuMemAlloc, d.cuMemFree

    def alloc_free():
        free(alloc(4096)[1])
    side.measure("alloc_free_us", lambda: host_us(alloc_free, small))

    def pool_figure():
        pool = _ok(d.cuDeviceGetDefaultMemPool(dev), "cuDeviceGetDefaultMemPool")
        _ok(d.cuMemPoolSetAttribute(pool, d.CUmemPool_attribute.CU_MEMPOOL_ATTR_RELEASE_THRESHOLD,
                                    d.cuuint64_t(2**64 - 1)), "cuMemPoolSetAttribute")
        stream = _ok(d.cuStreamCreate(0), "cuStreamCreate")
        pa, pf = d.cuMemAllocFromPoolAsync, d.cuMemFreeAsync

        def once():
            pf(pa(4096, pool, stream)[1], stream)
        us = host_us(once, small, 100, 500, lambda: d.cuStreamSynchronize(stream))
        d.cuStreamDestroy(stream)
        return us
    side.measure("pool_alloc_free_us", pool_figure)

    h = np.ones(1024, np.float32)
    hp = h.ctypes.data
    htod, dtoh = d.cuMemcpyHtoD, d.cuMemcpyDtoH

    def alloc_copy_free():
        p = alloc(4096)[1]
        htod(p, hp, 4096)
        free(p)
    side.measure("to_device_4k_us", lambda: host_us(alloc_copy_free, small))
    side.measure("copy_to_host_4k_us", lambda: host_us(lambda: dtoh(hp, buf, 4096), small))
    halloc, hfree = d.cuMemHostAlloc, d.cuMemFreeHost
    side.measure("pinned_array_4k_us",
                 lambda: host_us(lambda: hfree(halloc(4096, 0)[1]), side.reps(3000, 300)))

    n = side.reps(256 * MiB, 256 * MiB, MiB)
    breps = side.reps(10, 3, 2)
    big = int(_ok(d.cuMemAlloc(n), "cuMemAlloc"))
    big2 = int(_ok(d.cuMemAlloc(n), "cuMemAlloc"))
    pageable = np.ones(n, np.uint8)
    pinned_ptr = int(_ok(d.cuMemHostAlloc(n, 0), "cuMemHostAlloc"))
    ctypes.memset(pinned_ptr, 1, n)
    pg = pageable.ctypes.data

    def gbps(us):
        return n / (us * 1e-6) / 1e9
    side.measure("htod_pageable_256m_gbps",
                 lambda: gbps(host_us(lambda: htod(big, pg, n), breps, 2)))
    side.measure("htod_pinned_256m_gbps",
                 lambda: gbps(host_us(lambda: htod(big, pinned_ptr, n), breps, 2)))
    side.measure("dtoh_pageable_256m_gbps",
                 lambda: gbps(host_us(lambda: dtoh(pg, big, n), breps, 2)))
    side.measure("dtoh_pinned_256m_gbps",
                 lambda: gbps(host_us(lambda: dtoh(pinned_ptr, big, n), breps, 2)))

    def dtod_figure():
        start = _ok(d.cuEventCreate(0), "cuEventCreate")
        end = _ok(d.cuEventCreate(0), "cuEventCreate")
        per = side.reps(20, 5)
        times = []
        for _ in range(2):
            d.cuMemcpyDtoD(big2, big, n)
        for _ in range(5):
            d.cuEventRecord(start, 0)
            for _ in range(per):
                d.cuMemcpyDtoD(big2, big, n)
            d.cuEventRecord(end, 0)
            d.cuEventSynchronize(end)
            ms = _ok(d.cuEventElapsedTime(start, end), "cuEventElapsedTime")
            times.append(ms * 1e3 / per)
        return 2 * n / (median(times) * 1e-6) / 1e9
    side.measure("dtod_256m_gbps", dtod_figure)
    sync()
    for p in (buf, big, big2):
        d.cuMemFree(p)
    d.cuMemFreeHost(pinned_ptr)


def main():
    side = Side("bare", quick="--quick" in sys.argv)
    try:
        from cuda.bindings import driver as d
        from importlib.metadata import version
        side.doc["versions"] = {"cuda-bindings": version("cuda-bindings")}
        (err,) = d.cuInit(0)
        if int(err):
            return side.skip(f"cuInit failed: {getattr(err, 'name', err)}")
    except Exception as exc:
        return side.skip(f"no CUDA driver: {type(exc).__name__}: {exc}")
    run(side, d)
    side.measure("cache_hit_launch_s", lambda: fresh_process_s(side.reps(5, 2, 1)))
    import multi_gpu
    try:
        multi_gpu.bare_figures(side, d)
    except Exception as exc:
        side.doc["errors"]["peer_copy_256m_gbps"] = f"{type(exc).__name__}: {exc}"
    side.emit()


def fresh_process_s(runs):
    """Median seconds of ``bare_first_launch.py`` in fresh processes: the driver's floor under
    a ``cache=True`` hit (import, init, context, module load, first launch)."""
    import json
    import os
    import subprocess
    script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "bare_first_launch.py")
    times = []
    for _ in range(runs):
        p = subprocess.run([sys.executable, script], capture_output=True, text=True, timeout=120)
        if p.returncode:
            raise RuntimeError(f"bare_first_launch.py failed: {p.stderr.strip()[-500:]}")
        times.append(json.loads(p.stdout.strip().splitlines()[-1])["seconds"])
    return median(times)


if __name__ == "__main__":
    main()
