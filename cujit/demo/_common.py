"""Shared pieces of the demo tasks: the result record, the size presets and timing helpers.

Every demo task is a module with ``run(cuda, sizes) -> Result``; ``cuda`` is the CUDA module
to use (``cujit``, or ``numba.cuda`` when comparing), so the same kernels run under either.
"""
import dataclasses
import time
import types

__all__ = ["Result", "Sizes", "sizes_for", "Timer", "kernel_ms", "jit_with"]


@dataclasses.dataclass
class Result:
    """The outcome of one demo task.

    ``seconds`` is the measured time of the timed part (kernel time from CUDA events for
    kernels, wall time for pipelines); ``rate`` is in ``rate_unit`` ('GB/s', 'GFLOP/s' or '')
    or None; ``lines`` are what the task printed, in order; ``passed`` is the NumPy check."""
    name: str
    size: str
    seconds: float = 0.0
    rate: float = None
    rate_unit: str = ""
    passed: bool = False
    detail: str = ""
    lines: list = dataclasses.field(default_factory=list)
    extra: dict = dataclasses.field(default_factory=dict)

    def as_dict(self):
        """A JSON-ready dict of every field."""
        return dataclasses.asdict(self)


@dataclasses.dataclass(frozen=True)
class Sizes:
    """Problem sizes of one preset.

    ``matmul_n``: square float32 matrix order; ``filter_n``: signal length (float32 elements);
    ``pipeline_bytes`` / ``pipeline_chunk_bytes``: total and per-chunk bytes of the streams
    pipeline; ``max_blocks``: cap on the grid of grid-stride kernels (None: one element per
    thread); ``timing_reps``: how often timed kernels are repeated (median)."""
    label: str
    matmul_n: int
    filter_n: int
    pipeline_bytes: int
    pipeline_chunk_bytes: int
    max_blocks: int = None
    timing_reps: int = 5


_PRESETS = {
    # The sizes: 4096² matmul, 2^26-sample filter, 1 GiB through the pipeline.
    "gpu": Sizes("gpu", 4096, 1 << 26, 1 << 30, 64 << 20, None, 5),
    "gpu-quick": Sizes("gpu-quick", 1024, 1 << 22, 128 << 20, 8 << 20, None, 3),
    # Simulated threads are Python: keep the thread count in the thousands so that the whole
    # demo stays well under a minute on two CPU cores.
    # 40 is not a multiple of the 16-wide tile: the partial tiles' bounds checks run too.
    "sim": Sizes("sim", 40, 1 << 12, 256 << 10, 32 << 10, 4, 1),
    "sim-quick": Sizes("sim-quick", 32, 1 << 11, 64 << 10, 8 << 10, 2, 1),
}


def sizes_for(simulator, quick):
    """The :class:`Sizes` preset for the backend (``simulator``: bool) and ``quick`` (bool)."""
    return _PRESETS[("sim" if simulator else "gpu") + ("-quick" if quick else "")]


class Timer:
    """Wall-clock timer (``time.perf_counter``): ``with Timer() as t: ...; t.seconds``."""

    def __enter__(self):
        self._t0 = time.perf_counter()
        return self

    def __exit__(self, *exc):
        self.seconds = time.perf_counter() - self._t0
        return False


def kernel_ms(cuda, launch, reps):
    """Median milliseconds of ``launch()`` over ``reps`` runs, timed with CUDA events.

    ``launch`` must queue its work on the default stream.  Events come from ``cuda.event()``
    (cuEventRecord / cuEventElapsedTime via ``Event.elapsed_time``); where they give no
    positive time (a simulator), the wall time is used.  Synchronises before returning."""
    times = []
    for _ in range(max(1, reps)):
        start, end = cuda.event(), cuda.event()
        t0 = time.perf_counter()
        start.record()
        launch()
        end.record()
        end.synchronize()
        ms = start.elapsed_time(end)
        # A backend without timing events (a simulator may report 0 or -1): wall time.
        times.append(ms if ms > 0 else (time.perf_counter() - t0) * 1e3)
    times.sort()
    return times[len(times) // 2]


def jit_with(cuda_module):
    """A decorator: ``cuda_module.jit`` of the function rebuilt over its own copy of its
    module's globals, in which ``cuda`` is ``cuda_module``.  The demo kernels name ``cuda``
    as a module global, as user code does (numba-cuda's simulator swaps its fake module in
    only there); a private globals dict per kernel keeps each kernel on the module it was
    made for, where rebinding the shared module global would change what a kernel made
    earlier, and compiled later, sees."""
    def decorate(pyfunc):
        g = dict(pyfunc.__globals__)
        g["cuda"] = cuda_module
        fn = types.FunctionType(pyfunc.__code__, g, pyfunc.__name__, pyfunc.__defaults__,
                                pyfunc.__closure__)
        fn.__qualname__ = pyfunc.__qualname__
        fn.__module__ = pyfunc.__module__
        fn.__doc__ = pyfunc.__doc__
        return cuda_module.jit(fn)
    return decorate
