"""A streaming pipeline: chunks through pinned buffers on several streams.

Data too big (or too slow) to move in one piece is cut into chunks; each chunk is copied in,
processed and copied out on its own stream.  Because the host buffers are pinned
(page-locked), the copies are truly asynchronous, so while one stream's kernel runs another
stream's chunk is crossing the bus in each direction.  The same work on one stream runs every
step one after the other.  Compare the two times for the overlap speed-up.

Rules this relies on: work on one stream runs in order (so a device buffer can be reused by
the next chunk of its own stream), work on different streams may overlap, and the host side of
an asynchronous copy must not be touched until its stream is synchronised.

Run: ``python examples/streams_pipeline.py [MiB] [streams]`` (default 256 MiB and 4 streams on
a GPU, 0.25 MiB on the simulator, where nothing overlaps).
"""
import math
import sys
import time

import numpy as np

import cujit as cuda


@cuda.jit
def scale_shift(x, a, b):
    start = cuda.grid(1)
    stride = cuda.gridsize(1)
    for i in range(start, x.size, stride):      # grid-stride loop: any grid covers any size
        x[i] = x[i] * a + b


def run(h_in, h_out, nstreams, chunk, max_blocks):
    streams = [cuda.stream() for _ in range(nstreams)]
    bufs = [cuda.device_array(chunk, dtype=np.float32) for _ in range(nstreams)]
    blocks = min(math.ceil(chunk / 256), max_blocks)
    t0 = time.perf_counter()
    for c, lo in enumerate(range(0, h_in.size, chunk)):
        s, d = streams[c % nstreams], bufs[c % nstreams]
        d.copy_to_device(h_in[lo:lo + chunk], stream=s)          # H->D, asynchronous
        scale_shift[blocks, 256, s](d, np.float32(2.0), np.float32(1.0))
        d.copy_to_host(h_out[lo:lo + chunk], stream=s)           # D->H, asynchronous
    for s in streams:
        s.synchronize()                                         # now h_out may be read
    return time.perf_counter() - t0


def main():
    simulated = cuda.get_current_device().name.startswith("cujit simulated")
    mib = float(sys.argv[1]) if len(sys.argv) > 1 else (0.25 if simulated else 256)
    # Simulated threads are Python: a few blocks, each looping over many elements.
    max_blocks = 4 if simulated else 1024
    nstreams = int(sys.argv[2]) if len(sys.argv) > 2 else 4
    n = int(mib * (1 << 20)) // 64 * 16
    chunk = n // 16                      # 16 equal chunks
    h_in = cuda.pinned_array(n, dtype=np.float32)
    h_out = cuda.pinned_array(n, dtype=np.float32)
    h_in[:] = np.arange(n, dtype=np.float32) % np.float32(1000.0)
    expected = h_in * np.float32(2.0) + np.float32(1.0)

    scale_shift[1, 32](cuda.device_array(1, np.float32), np.float32(1), np.float32(0))  # compile
    t_many = run(h_in, h_out, nstreams, chunk, max_blocks)
    assert np.array_equal(h_out, expected)
    h_out[:] = 0
    t_one = run(h_in, h_out, 1, chunk, max_blocks)
    assert np.array_equal(h_out, expected)
    print(f"{mib:g} MiB in 16 chunks: {nstreams} streams {t_many * 1e3:.1f} ms, "
          f"1 stream {t_one * 1e3:.1f} ms, overlap speed-up {t_one / t_many:.2f}x")


if __name__ == "__main__":
    main()
