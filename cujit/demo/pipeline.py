"""Demo 4: a streaming pipeline — chunks through pinned buffers on 4 streams, overlapped.

The input and output live in page-locked (pinned) host memory, so each chunk's host→device
copy, kernel and device→host copy can be queued asynchronously.  With one chunk per stream in
flight, the copy engines and the SMs work on different chunks at once; the same work on one
stream serialises them.  The ratio of the two wall times is the overlap speed-up.
"""
import math

import numpy as np

from ._common import Result, Timer, jit_with

cuda = None  # each kernel's own globals bind it (_common.jit_with)

__all__ = ["run", "NSTREAMS"]

NSTREAMS = 4
_A = np.float32(2.0)
_B = np.float32(1.0)


def make_kernel(cuda_module):
    """``axpb(x, a, b)``: in place ``x = x * a + b`` over a float32 1-D array (grid-stride)."""
    # the kernels name ``cuda`` as a module global, as user code does (see jit_with)
    jit = jit_with(cuda_module)

    @jit
    def axpb(x, a, b):
        start = cuda.grid(1)
        stride = cuda.gridsize(1)
        for i in range(start, x.size, stride):
            x[i] = x[i] * a + b

    return axpb


def _pipeline(cuda, kern, h_in, h_out, streams, bufs, chunk, blocks, tpb):
    """Queue every chunk round-robin over ``streams`` (each with its own device buffer), then
    wait for all of them.  Reusing a buffer on its own stream is safe: the stream orders it."""
    n = h_in.size
    for c, lo in enumerate(range(0, n, chunk)):
        k = c % len(streams)
        s, d = streams[k], bufs[k]
        hi = min(lo + chunk, n)
        dv = d if hi - lo == chunk else d[:hi - lo]
        dv.copy_to_device(h_in[lo:hi], stream=s)
        kern[blocks, tpb, s](dv, _A, _B)
        dv.copy_to_host(h_out[lo:hi], stream=s)
    for s in streams:
        s.synchronize()


def run(cuda, sizes):
    """Push ``sizes.pipeline_bytes`` of float32 through the pipeline on 4 streams and on 1;
    PASS when both outputs equal NumPy's ``x * 2 + 1`` exactly.  Time: the 4-stream wall
    time; rate: GB/s over the bus (bytes in + bytes out); the speed-up is printed and in
    ``extra``."""
    n = sizes.pipeline_bytes // 4
    chunk = sizes.pipeline_chunk_bytes // 4
    h_in = cuda.pinned_array(n, dtype=np.float32)
    h_out = cuda.pinned_array(n, dtype=np.float32)
    # A cheap, exactly representable pattern (random numbers for 1 GiB take seconds).
    h_in[:] = np.arange(n, dtype=np.float32) % np.float32(4099.0)
    ref = h_in * _A + _B
    tpb = 256
    blocks = math.ceil(chunk / tpb)
    if sizes.max_blocks:
        blocks = min(blocks, sizes.max_blocks)
    kern = make_kernel(cuda)
    streams = [cuda.stream() for _ in range(NSTREAMS)]
    bufs = [cuda.device_array(chunk, dtype=np.float32) for _ in range(NSTREAMS)]
    kern[blocks, tpb](bufs[0], _A, _B)      # compile outside the timing
    cuda.synchronize()

    times, ok = {}, True
    for ns in (NSTREAMS, 1):
        h_out[:] = 0
        with Timer() as t:
            _pipeline(cuda, kern, h_in, h_out, streams[:ns], bufs[:ns], chunk, blocks, tpb)
        times[ns] = t.seconds
        # Exact: x * 2 + 1 of integers below 2^12 is exact in float32, fused or not (and
        # array_equal needs no GiB-sized temporaries, unlike allclose).
        ok &= bool(np.array_equal(h_out, ref))
    speedup = times[1] / times[NSTREAMS] if times[NSTREAMS] > 0 else float("nan")
    mib = sizes.pipeline_bytes / (1 << 20)
    res = Result(f"streams pipeline ({NSTREAMS} streams, pinned)",
                 f"{mib / 1024:g} GiB" if mib >= 1024 else f"{mib:g} MiB")
    res.seconds = times[NSTREAMS]
    res.rate = 2.0 * sizes.pipeline_bytes / res.seconds / 1e9 if res.seconds > 0 else None
    res.rate_unit = "GB/s"
    res.passed = ok
    res.extra = {"seconds_1_stream": times[1], "overlap_speedup": speedup,
                 "chunks": math.ceil(n / chunk), "chunk_bytes": chunk * 4}
    res.detail = f"overlap speed-up {speedup:.2f}x vs 1 stream"
    res.lines.append(f"{res.extra['chunks']} chunks of {chunk * 4 >> 10} KiB; "
                     f"4 streams {times[NSTREAMS] * 1e3:.1f} ms, 1 stream {times[1] * 1e3:.1f} ms"
                     f" -> overlap speed-up {speedup:.2f}x")
    return res
