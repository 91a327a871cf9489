"""numba.cuda's cache-hinted loads and stores: ``ldca``, ``ldcg``, ``ldcs``, ``ldlu``,
``ldcv`` (``value = ldcg(array, i)``) and ``stcg``, ``stcs``, ``stwb``, ``stwt``
(``stcg(array, i, value)``), for kernels.

The values are numba's: a load returns ``array[i]``, a store writes ``array[i] = value``
(``i`` an integer for a 1-D array or a tuple of one integer per dimension; negative indices
wrap, as numba's).  On the GPU each compiles to the PTX instruction with its cache operator
(``ld.global.ca`` / ``.cg`` / ``.cs`` / ``.lu`` / ``.cv``, ``st.global.cg`` / ``.cs`` /
``.wb`` / ``.wt``, of the element's width: ``ld.global.cg.b32``), as numba-cuda's inline PTX
does.  The simulator has no caches: there a hinted access is the plain indexing access, with
the same bounds checks and race tracking.  Element types: integers and floats of 8 to 64
bits (numba's rule); the typer refuses others with numba's messages (``ldcs requires array of
integer or float type``, ``Expected 2 indices, got a scalar``).
Reference: numba-cuda's ``numba.cuda.cache_hints``; PTX ISA, "Cache Operators".
"""

__all__ = ["ldca", "ldcg", "ldcs", "ldlu", "ldcv", "stcg", "stcs", "stwb", "stwt"]


def _load(operator, doc):
    name = "ld" + operator

    def load(array, i):
        return array[i]
    load.__name__ = load.__qualname__ = name
    load.__doc__ = (f"``array[i]``, loaded with ``ld.global.{operator}`` ({doc}).  ``i``: an "
                    f"integer (1-D) or a tuple of one integer per dimension.")
    # the compiler recognises these by this mark (it sits below this library module)
    load.cujit_cache_hint = ("load", (operator, name))
    return load


def _store(operator, doc):
    name = "st" + operator

    def store(array, i, value):
        array[i] = value
    store.__name__ = store.__qualname__ = name
    store.__doc__ = (f"``array[i] = value``, stored with ``st.global.{operator}`` ({doc}).  "
                     f"``i``: an integer (1-D) or a tuple of one integer per dimension.")
    store.cujit_cache_hint = ("store", (operator, name))
    return store


ldca = _load("ca", "cache at all levels")
ldcg = _load("cg", "cache in L2, not L1")
ldcs = _load("cs", "cache streaming, likely read once")
ldlu = _load("lu", "last use")
ldcv = _load("cv", "do not cache, fetch again")
stcg = _store("cg", "cache in L2, not L1")
stcs = _store("cs", "cache streaming, likely written once")
stwb = _store("wb", "cache write-back at all levels")
stwt = _store("wt", "cache write-through to system memory")
