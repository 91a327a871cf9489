"""``python -m cujit demo``: the five demo tasks and the memory report.

One module per task, each with ``run(cuda, sizes) -> Result`` (``cuda`` is the CUDA module to
use, so the same kernels can run under cujit or numba.cuda for comparison):

- :mod:`.shared_alias` — the seed guide's dynamic shared memory examples;
- :mod:`.matmul` — tiled float32 matrix multiply (shared memory, ``syncthreads``);
- :mod:`.const_filter` — FIR filter with taps in constant memory;
- :mod:`.pipeline` — chunks through pinned buffers on 4 streams vs 1;
- :mod:`.deferred` — the pending-deallocations queue and ``defer_cleanup``.

:mod:`.runner` runs them in order and prints the table; :mod:`.report` the memory report.
"""
__all__ = ["TASKS"]

#: Module names of the demo tasks, in the order they run.
TASKS = ("shared_alias", "matmul", "const_filter", "pipeline", "deferred")
