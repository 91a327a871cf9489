"""Library-surface benchmarks shared by the cujit and numba-cuda sides (same source):
``cuda.random``, ``vectorize(target='cuda')`` and ``cuda.reduce`` (issue 15).

- ``lib_random_init_ms``: ``create_xoroshiro128p_states(10**6, seed)`` and a synchronize,
  host milliseconds (numba-cuda fills the states on the host; cujit in a kernel);
- ``lib_random_uniform_us``: 2^20 states draw 64 uniform float32 each (summed per thread, so
  the generator, not the stores, is timed), CUDA events;
- ``lib_vectorize_axpy_us`` / ``lib_axpy_kernel_us``: ``a * x + y`` into ``out`` on 2^26
  float32 device arrays, by a ``vectorize`` ufunc and by the same hand-written kernel;
  ``lib_vectorize_over_kernel``: their ratio (the target is within 5%);
- ``lib_reduce_sum_us``: ``cuda.reduce(lambda a, b: a + b)`` over 2^26 float32 on the
  device, the result returned to the host, host microseconds per call.
"""
import time

import numpy as np

from bench_common import host_us, median, count_text


def _vectorize(cuda):
    if cuda.__name__ == "cujit":
        return cuda.vectorize
    from numba import vectorize             # numba's documented spelling, target='cuda'
    return vectorize


def _random_figures(side, cuda, event_ms):
    rnd = __import__(cuda.__name__ + ".random", fromlist=["x"])
    n_init = side.reps(10 ** 6, 10 ** 5, 64)

    def init_ms():
        times = []
        for _ in range(side.reps(5, 2, 1)):
            t = time.perf_counter()
            rnd.create_xoroshiro128p_states(n_init, seed=1)
            cuda.synchronize()
            times.append((time.perf_counter() - t) * 1e3)
        return median(times)
    rnd.create_xoroshiro128p_states(side.reps(1024, 1024, 8), seed=1)   # compile first
    side.measure("lib_random_init_ms", init_ms, count_text(n_init))

    n = side.reps(1 << 20, 1 << 18, 64)
    draws = side.reps(64, 64, 4)
    states = rnd.create_xoroshiro128p_states(n, seed=7)
    out = cuda.device_array(n, np.float32)
    uniform = rnd.xoroshiro128p_uniform_float32

    @cuda.jit
    def draw(states, out, draws):
        i = cuda.grid(1)
        if i < states.shape[0]:
            acc = np.float32(0.0)
            for _ in range(draws):
                acc += uniform(states, i)
            out[i] = acc

    k = draw[(n + 255) // 256, 256]
    side.measure("lib_random_uniform_us", lambda: event_ms(lambda: k(states, out, draws), 20),
                 f"{count_text(n)} states x {draws}")


def _vectorize_figures(side, cuda, event_ms):
    vectorize = _vectorize(cuda)

    @vectorize(["float32(float32, float32, float32)"], target="cuda")
    def vaxpy(a, x, y):
        return a * x + y

    @cuda.jit
    def kaxpy(out, a, x, y):
        i = cuda.grid(1)
        if i < out.size:
            out[i] = a * x[i] + y[i]

    n = side.reps(1 << 26, 1 << 22, 1 << 10)
    rng = np.random.default_rng(0)
    x = cuda.to_device(rng.random(n, dtype=np.float32))
    y = cuda.to_device(rng.random(n, dtype=np.float32))
    out = cuda.device_array(n, np.float32)
    a = np.float32(2.0)
    k = kaxpy[(n + 255) // 256, 256]
    size = f"{count_text(n)} f32"
    side.measure("lib_axpy_kernel_us", lambda: event_ms(lambda: k(out, a, x, y), 50), size)
    side.measure("lib_vectorize_axpy_us",
                 lambda: event_ms(lambda: vaxpy(a, x, y, out=out), 50), size)
    f = side.doc["figures"]
    if f.get("lib_axpy_kernel_us") and f.get("lib_vectorize_axpy_us"):
        side.measure("lib_vectorize_over_kernel",
                     lambda: f["lib_vectorize_axpy_us"] / f["lib_axpy_kernel_us"])


def _reduce_figures(side, cuda):
    n = side.reps(1 << 26, 1 << 22, 1 << 10)
    x = cuda.to_device(np.random.default_rng(1).random(n, dtype=np.float32))
    sum_reduce = cuda.reduce(lambda a, b: a + b)
    side.measure("lib_reduce_sum_us",
                 lambda: host_us(lambda: sum_reduce(x), side.reps(200, 50, 2), 5),
                 f"{count_text(n)} f32")


def run(side, cuda, events):
    """All library figures; ``events(fn, per_round)`` times ``fn`` with CUDA events (us)."""
    _random_figures(side, cuda, events)
    _vectorize_figures(side, cuda, events)
    _reduce_figures(side, cuda)
