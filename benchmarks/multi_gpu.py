"""The two-GPU measurements (issue 17, "Two GPUs"), used by the cujit and bare sides.

- ``peer_copy_256m_gbps``: 256 MiB from GPU 0 to GPU 1, host time of the copy queued on a
  stream of GPU 1 plus that stream's synchronisation.  cujit: ``d1.copy_to_device(d0,
  stream=s1)`` (peer access enabled by cujit on the first copy); bare: ``cuMemcpyPeerAsync``
  with peer access enabled both ways + ``cuStreamSynchronize``.  GB/s = bytes / time.
- ``multi_gpu_axpy_1gpu_us`` / ``multi_gpu_axpy_2gpu_us`` / ``multi_gpu_speedup_x`` (cujit):
  a bandwidth-bound kernel (the suite's axpy over 2^28 float32) launched ``PER_ROUND`` times
  and synchronised, on one GPU over all the data, and by two Python threads, one per GPU
  (``with cuda.gpus[i]:``), each over its half (allocated on its GPU); host time from the
  start signal to both threads synchronised, per launch.  The threads live for the whole
  measurement (a barrier starts each round), so thread start-up is not timed.

With fewer than two devices the figures are absent and each key's error says
"needs 2 GPUs".  A smoke run on cujit's simulator asks it for two simulated devices
(``cujit.config.SIM_DEVICES``) so the code path runs end to end; its figures mean nothing.
"""
import threading
import time

import numpy as np

from bench_common import host_us, median, MiB, bytes_text, count_text

__all__ = ["cujit_figures", "bare_figures", "KEYS_CUJIT", "KEYS_BARE"]

PER_ROUND = 20
KEYS_CUJIT = ("peer_copy_256m_gbps", "multi_gpu_axpy_1gpu_us", "multi_gpu_axpy_2gpu_us",
              "multi_gpu_speedup_x")
KEYS_BARE = ("peer_copy_256m_gbps",)


def _needs_two(side, keys, count):
    for key in keys:
        side.doc["errors"][key] = f"needs 2 GPUs ({count} present)"


# -- cujit --------------------------------------------------------------------------------------
def cujit_figures(side, cuda):
    """Fill ``side`` with :data:`KEYS_CUJIT` measured through cujit (module ``cuda``)."""
    if side.smoke and len(cuda.gpus) < 2:
        cuda.config.SIM_DEVICES = 2
    count = len(cuda.gpus)
    if count < 2:
        return _needs_two(side, KEYS_CUJIT, count)
    side.measure("peer_copy_256m_gbps", lambda: _cujit_peer_copy(side, cuda),
                 bytes_text(_peer_copy_bytes(side)))
    one = side.measure("multi_gpu_axpy_1gpu_us", lambda: _cujit_axpy(side, cuda, 1),
                       f"{count_text(_axpy_elements(side))} f32")
    two = side.measure("multi_gpu_axpy_2gpu_us", lambda: _cujit_axpy(side, cuda, 2))
    if one and two:
        side.measure("multi_gpu_speedup_x", lambda: one / two)


def _peer_copy_bytes(side):
    """Bytes of the peer copy (all sides copy the same)."""
    return side.reps(256 * MiB, 256 * MiB, MiB)


def _axpy_elements(side):
    """float32 elements of the multi-GPU axpy, split across the GPUs."""
    return side.reps(1 << 28, 1 << 26, 1 << 10)


def _cujit_peer_copy(side, cuda):
    n = _peer_copy_bytes(side)
    with cuda.gpus[0]:
        d0 = cuda.to_device(np.ones(n, np.uint8))
    with cuda.gpus[1]:
        d1 = cuda.device_array(n, np.uint8)
        s1 = cuda.stream()

        def once():
            d1.copy_to_device(d0, stream=s1)
            s1.synchronize()
        us = host_us(once, side.reps(20, 5), 2)
        if not side.smoke and not np.array_equal(d1[:4096].copy_to_host(), np.ones(4096)):
            raise RuntimeError("the peer copy did not copy the data")
    return n / (us * 1e-6) / 1e9


def _cujit_axpy(side, cuda, ngpus):
    """Microseconds per launch of axpy over ``n`` float32 split across ``ngpus`` GPUs."""
    import kernels as K
    n = _axpy_elements(side)
    per = side.reps(PER_ROUND, PER_ROUND // 2, 1)
    rounds = side.reps(7, 3, 1)
    warm_s = 0.0 if side.smoke else 1.0     # an idle GPU's clocks ramp up (see suite.py)
    part = n // ngpus
    alpha = np.float32(2.0)
    work = []
    for dev in range(ngpus):
        with cuda.gpus[dev]:
            # one dispatcher per GPU, compiled here: threads never compile, and each keeps
            # its warm launch path for its own context
            axpy = K.build(cuda)["axpy"]
            x = cuda.to_device(np.ones(part, np.float32))
            y = cuda.to_device(np.ones(part, np.float32))
            launch = axpy[(part + 255) // 256, 256]
            launch(y, alpha, x)
            cuda.synchronize()
            work.append((dev, launch, x, y))
    start = threading.Barrier(ngpus + 1)
    done = threading.Barrier(ngpus + 1)
    stop = []
    errors = []

    def worker(dev, launch, x, y):
        try:
            with cuda.gpus[dev]:
                while True:
                    start.wait()
                    if stop:
                        return
                    for _ in range(per):
                        launch(y, alpha, x)
                    cuda.synchronize()
                    done.wait()
        except threading.BrokenBarrierError:
            pass
        except Exception as exc:          # reported by the measuring thread
            errors.append(exc)
            start.abort()
            done.abort()
    threads = [threading.Thread(target=worker, args=w, daemon=True) for w in work]
    for t in threads:
        t.start()
    times = []
    try:
        warm_end = time.perf_counter() + warm_s
        while len(times) < rounds:
            start.wait()
            t0 = time.perf_counter()
            done.wait()
            if t0 >= warm_end:
                times.append((time.perf_counter() - t0) * 1e6 / per)
        stop.append(True)
        start.wait()
    except threading.BrokenBarrierError:
        pass
    for t in threads:
        t.join()
    if errors:
        raise errors[0]
    return median(times)


# -- bare cuda-bindings -------------------------------------------------------------------------
def _ok(result, call):
    err = result[0]
    if int(err):
        raise RuntimeError(f"{call} failed: {getattr(err, 'name', err)}")
    return None if len(result) == 1 else result[1]


def bare_figures(side, d):
    """Fill ``side`` with :data:`KEYS_BARE` through cuda-bindings' driver module ``d``."""
    count = int(_ok(d.cuDeviceGetCount(), "cuDeviceGetCount"))
    if count < 2:
        return _needs_two(side, KEYS_BARE, count)
    side.measure("peer_copy_256m_gbps", lambda: _bare_peer_copy(side, d),
                 bytes_text(_peer_copy_bytes(side)))


def _bare_peer_copy(side, d):
    n = _peer_copy_bytes(side)
    devs = [_ok(d.cuDeviceGet(i), "cuDeviceGet") for i in (0, 1)]
    ctxs = [_ok(d.cuDevicePrimaryCtxRetain(dev), "cuDevicePrimaryCtxRetain") for dev in devs]
    bufs = []
    for i in (0, 1):
        _ok(d.cuCtxSetCurrent(ctxs[i]), "cuCtxSetCurrent")
        if _ok(d.cuDeviceCanAccessPeer(devs[i], devs[1 - i]), "cuDeviceCanAccessPeer"):
            (err,) = d.cuCtxEnablePeerAccess(ctxs[1 - i], 0)
            if int(err) not in (0, 704):        # 704: already enabled
                raise RuntimeError(f"cuCtxEnablePeerAccess failed: {getattr(err, 'name', err)}")
        bufs.append(int(_ok(d.cuMemAlloc(n), "cuMemAlloc")))
    stream = _ok(d.cuStreamCreate(0), "cuStreamCreate")       # on GPU 1, the destination
    copy, sync = d.cuMemcpyPeerAsync, d.cuStreamSynchronize
    src, dst = bufs

    def once():
        copy(dst, ctxs[1], src, ctxs[0], n, stream)
        sync(stream)
    try:
        us = host_us(once, side.reps(20, 5), 2)
    finally:
        d.cuStreamDestroy(stream)
        for i in (1, 0):
            d.cuCtxSetCurrent(ctxs[i])
            d.cuMemFree(bufs[i])
    return n / (us * 1e-6) / 1e9
