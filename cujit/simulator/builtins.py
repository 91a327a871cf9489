"""Builtins whose kernel semantics differ from Python's, given to simulated kernels.

``round(x, ndigits)`` on a float follows numba's ``round_ndigits`` (CPython's fallback
algorithm, what the compiled kernel computes: ``nvvm/lower_scalars.round_ndigits``), in
the float's own precision: at the float limits the result is ``x`` itself where NumPy's
scalar ``round`` overflows to inf, and ``round(2.675, 2)`` is 2.68.
"""
import math

import numpy as np

__all__ = ["kernel_round", "KERNEL_BUILTINS"]


def kernel_round(x, ndigits=None):
    """``round`` as compiled kernels compute it (see the module docstring)."""
    if ndigits is None or isinstance(x, (bool, int, np.integer, np.bool_)):
        return round(x) if ndigits is None else round(x, ndigits)
    ft = type(x) if isinstance(x, np.floating) and not isinstance(x, np.float16) \
        else np.float64
    if isinstance(x, np.float16):
        ft = np.float32
    x = ft(x)
    nd = int(ndigits)
    with np.errstate(all="ignore"):
        if nd >= 0:
            pow1 = ft(10.0) ** ft(nd - 22 if nd > 22 else nd)
            pow2 = ft(1e22) if nd > 22 else ft(1.0)
            y = (x * pow1) * pow2
            if math.isinf(y):
                return x
            return ft((np.rint(y) / pow2) / pow1)
        pow1 = ft(10.0) ** ft(-nd)
        z = np.rint(x / pow1)
        return ft(z if z == 0 else z * pow1)


KERNEL_BUILTINS = {"round": kernel_round}
