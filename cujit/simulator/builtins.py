"""Builtins whose kernel semantics differ from Python's, given to simulated kernels.

``round(x, ndigits)`` on a float follows numba's ``round_ndigits`` (CPython's fallback
algorithm, what the compiled kernel computes: ``nvvm/lower_scalars.round_ndigits``), in
float64 for every float (numba scales by the float64 ``10.0 ** ndigits``) and converted back
to the argument's type: at the float limits the result is ``x`` itself where NumPy's scalar
``round`` overflows to inf, ``round(2.675, 2)`` is 2.68 and ``round(np.float32(0.3425), 3)``
is 0.343 (the float32 is 0.34250000119...).
"""
import math

import numpy as np

__all__ = ["kernel_round", "KERNEL_BUILTINS"]


def kernel_round(x, ndigits=None):
    """``round`` as compiled kernels compute it (see the module docstring)."""
    if ndigits is None or isinstance(x, (bool, int, np.integer, np.bool_)):
        return round(x) if ndigits is None else round(x, ndigits)
    # numba's round_ndigits scales by 10.0 ** ndigits, a float64, so every float computes
    # in float64; the result is converted back to the argument's float type
    out = type(x) if isinstance(x, (np.float32, np.float16)) else np.float64
    ft = np.float64
    x = ft(x)
    nd = int(ndigits)
    with np.errstate(all="ignore"):
        if nd >= 0:
            pow1 = ft(10.0) ** ft(nd - 22 if nd > 22 else nd)
            pow2 = ft(1e22) if nd > 22 else ft(1.0)
            y = (x * pow1) * pow2
            if math.isinf(y):
                return out(x)
            return out((np.rint(y) / pow2) / pow1)
        pow1 = ft(10.0) ** ft(-nd)
        z = np.rint(x / pow1)
        return out(z if z == 0 else z * pow1)


KERNEL_BUILTINS = {"round": kernel_round}
