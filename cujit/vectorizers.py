"""``numba.cuda.vectorizers``: the CUDA target of Numba's own ``numba.vectorize`` and
``numba.guvectorize``.  ``@numba.vectorize([...], target='cuda')`` looks this module up (Numba
registers it as the ``'cuda'`` target), so under the numba alias those decorators make cujit
ufuncs (:func:`cujit.vectorize`, :func:`cujit.guvectorize`).  The builders collect the
signatures Numba adds and build the ufunc with cujit's options and errors."""
from .ufuncs import guvectorize, vectorize

__all__ = ["CUDAVectorize", "CUDAGUFuncVectorize"]


class _Builder:
    def __init__(self, func, identity=None, cache=False, targetoptions=None):
        if not callable(func):
            raise TypeError(f"{type(self).__name__}: expected a function, got {func!r}")
        self.pyfunc = func
        self.identity = identity
        self.cache = cache
        self.targetoptions = dict(targetoptions or {})
        self._sigs = []

    def add(self, sig=None):
        """Add signature ``sig`` (a string or a signature; parsed, with cujit's errors, when
        the ufunc is built)."""
        if sig is not None:
            self._sigs.append(sig)

    def disable_compile(self):
        """Numba's call after the last ``add``: the ufunc has exactly those signatures."""

    def _options(self):
        opts = dict(self.targetoptions)
        if self.cache:
            opts["cache"] = True        # refused by cujit's builders, with numba's message
        return opts


class CUDAVectorize(_Builder):
    """``numba.vectorize(..., target='cuda')``: ``CUDAVectorize(func, identity=None,
    cache=False, targetoptions={})``, then ``add(sig)`` per signature and ``build_ufunc()``,
    which returns :func:`cujit.vectorize`'s ufunc (lazily typed when no signature was
    added).  The errors are :func:`cujit.vectorize`'s."""

    def build_ufunc(self):
        return vectorize(list(self._sigs), identity=self.identity,
                         **self._options())(self.pyfunc)


class CUDAGUFuncVectorize(_Builder):
    """``numba.guvectorize(sigs, layout, target='cuda')``: ``CUDAGUFuncVectorize(func,
    signature, identity=None, cache=False, targetoptions={}, writable_args=())``, ``add``
    per signature, ``build_ufunc()`` returning :func:`cujit.guvectorize`'s gufunc for the
    layout ``signature`` (``"(n),(n)->(n)"``).  ``writable_args`` is accepted (every
    argument of a CUDA gufunc is writable).  The errors are :func:`cujit.guvectorize`'s."""

    def __init__(self, func, signature, identity=None, cache=False, targetoptions=None,
                 writable_args=()):
        super().__init__(func, identity, cache, targetoptions)
        self.signature = signature
        self.writable_args = writable_args

    def build_ufunc(self):
        return guvectorize(list(self._sigs), self.signature,
                           **self._options())(self.pyfunc)
