"""``numba.cuda.kernels``: ready-made device-array kernels (``transpose``; ``reduction.Reduce``,
which is :class:`cujit.Reduce`)."""
