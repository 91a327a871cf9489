"""numba.cuda's cache-hinted loads and stores: ``ldca``, ``ldcg``, ``ldcs``, ``ldlu``,
``ldcv`` (``value = ldcg(array, i)``) and ``stcg``, ``stcs``, ``stwb``, ``stwt``
(``stcg(array, i, value)``), for kernels.

The values are numba's: a load returns ``array[i]``, a store writes ``array[i] = value``
(``i`` an integer for a 1-D array or a tuple of one integer per dimension; negative indices
wrap, as numba's).  What cujit does not do yet is emit the hint: these are device functions
that compile to plain ``ld.global`` / ``st.global`` (the PTX cache operators ``.ca``, ``.cg``,
``.cs``, ``.lu``, ``.cv``, ``.wb``, ``.wt`` are performance hints, never a change of the
value read or written), and the simulator has no caches to hint.  numba accepts only integer
and float element types for these; cujit accepts any element type an index accepts.
Reference: numba-cuda's ``numba.cuda.cache_hints``; PTX ISA, "Cache Operators".
"""
from .compiler import jit

__all__ = ["ldca", "ldcg", "ldcs", "ldlu", "ldcv", "stcg", "stcs", "stwb", "stwt"]


@jit(device=True)
def ldca(array, i):
    """``array[i]`` (numba: ``ld.global.ca``, cache at all levels)."""
    return array[i]


@jit(device=True)
def ldcg(array, i):
    """``array[i]`` (numba: ``ld.global.cg``, cache in L2, not L1)."""
    return array[i]


@jit(device=True)
def ldcs(array, i):
    """``array[i]`` (numba: ``ld.global.cs``, cache streaming, likely read once)."""
    return array[i]


@jit(device=True)
def ldlu(array, i):
    """``array[i]`` (numba: ``ld.global.lu``, last use)."""
    return array[i]


@jit(device=True)
def ldcv(array, i):
    """``array[i]`` (numba: ``ld.global.cv``, do not cache, fetch again)."""
    return array[i]


@jit(device=True)
def stcg(array, i, value):
    """``array[i] = value`` (numba: ``st.global.cg``, cache in L2, not L1)."""
    array[i] = value


@jit(device=True)
def stcs(array, i, value):
    """``array[i] = value`` (numba: ``st.global.cs``, cache streaming)."""
    array[i] = value


@jit(device=True)
def stwb(array, i, value):
    """``array[i] = value`` (numba: ``st.global.wb``, cache write-back)."""
    array[i] = value


@jit(device=True)
def stwt(array, i, value):
    """``array[i] = value`` (numba: ``st.global.wt``, cache write-through)."""
    array[i] = value
