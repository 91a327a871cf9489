"""Timing of the arrays layer against the task's targets (not a test: run by hand on a GPU).

    python tests/arrays/bench_arrays.py        # prints one line per measurement

Targets (H200): to_device 4 KiB <= 15 us; copy_to_host 4 KiB <= 12 us; pinned_array 4 KiB
<= 10 us; H->D 256 MiB from pinned >= 50 GB/s, from pageable >= 20 GB/s; D->D 256 MiB
>= 3.5 TB/s counting read + write.
"""
import time

import numpy as np

import cujit


def _best(fn, n=2000, repeat=5):
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        best = min(best, (time.perf_counter() - t0) / n)
    return best


def _bandwidth(fn, nbytes, repeat=5):
    fn()
    cujit.synchronize()
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        cujit.synchronize()
        best = min(best, time.perf_counter() - t0)
    return nbytes / best / 1e9


def main():
    small = np.arange(512, dtype=np.float64)            # 4 KiB
    d = cujit.to_device(small)
    out = np.empty_like(small)
    rows = [
        ("to_device 4 KiB (us)", _best(lambda: cujit.to_device(small)) * 1e6, "<= 15"),
        ("copy_to_host 4 KiB new array (us)", _best(lambda: d.copy_to_host()) * 1e6, "<= 12"),
        ("copy_to_host 4 KiB into array (us)", _best(lambda: d.copy_to_host(out)) * 1e6, ""),
        ("pinned_array 4 KiB (us)", _best(lambda: cujit.pinned_array(512)) * 1e6, "<= 10"),
        ("d[i] (us)", _best(lambda: d[3]) * 1e6, ""),
        ("d[i] = x (us)", _best(lambda: d.__setitem__(3, 1.0)) * 1e6, ""),
    ]
    n = 256 << 20
    pinned = cujit.pinned_array(n, np.uint8)
    pinned[:] = 1
    pageable = np.ones(n, np.uint8)
    dev = cujit.device_array(n, np.uint8)
    dev2 = cujit.device_array(n, np.uint8)
    rows += [
        ("H->D 256 MiB pinned (GB/s)", _bandwidth(lambda: dev.copy_to_device(pinned), n), ">= 50"),
        ("H->D 256 MiB pageable (GB/s)", _bandwidth(lambda: dev.copy_to_device(pageable), n),
         ">= 20"),
        ("D->H 256 MiB pinned (GB/s)", _bandwidth(lambda: dev.copy_to_host(pinned), n), ""),
        ("D->H 256 MiB pageable (GB/s)", _bandwidth(lambda: dev.copy_to_host(pageable), n), ""),
        ("D->D 256 MiB, read+write (GB/s)",
         _bandwidth(lambda: dev2.copy_to_device(dev), 2 * n), ">= 3500"),
    ]
    for name, value, target in rows:
        print(f"{name:40s} {value:10.2f}   target {target}")


if __name__ == "__main__":
    main()
