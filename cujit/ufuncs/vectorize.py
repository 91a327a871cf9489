"""``@cujit.vectorize(signatures, target="cuda")``: CUDA ufuncs (R-LIB-2), numba's API.

The decorated scalar function becomes a device function; a call broadcasts the arguments as
NumPy does and launches one thread per output element, each calling the device function on
its inputs.  A kernel is generated per (signature, number of dimensions, which inputs are
scalars or broadcast): inputs of the output's shape are indexed like the output, broadcast
ones clamp their indices on length-1 axes, scalars are kernel parameters.  Arrays of one
shape, all C-contiguous, go through one flat index (the kernel a user would write).

Signature choice is numba's (``casting='no'`` for arrays, Python scalars fit any type); the
legacy spelling without signatures types the function for each new tuple of argument types
at call time, its return type the one the compiler infers.
"""
import importlib

import numpy as np

from .. import types as ct
from . import _args
from ._source import as_def, define
from ..dispatch.serialize import as_function, find_by_name, reduce_function

__all__ = ["vectorize", "CUDAUFunc"]


def _check_target(target):
    if target != "cuda":
        raise ValueError(f"cujit only compiles for target='cuda', got target={target!r}")


def vectorize(ftylist_or_function=(), target="cuda", identity=None, **kws):
    """Make a CUDA ufunc from a scalar function (numba.vectorize with ``target='cuda'``).

    ``ftylist_or_function``: a list of signatures (``'float32(float32, float32)'``, cujit or
    Numba signatures), or the function itself (legacy spelling: signatures are made lazily
    from the argument types of each call).  ``target``: only ``'cuda'``.  ``identity`` and
    ``nopython=True`` are accepted (numba's; the latter with numba-cuda's RuntimeWarning
    "nopython kwarg for cuda target is redundant"); ``fastmath``, ``debug``, ``lineinfo`` and
    ``opt`` are passed on to the compiler.

    Raises ValueError for another target or a signature that does not parse, TypeError for a
    signature whose arguments are not scalars, for ``nopython=False`` or ``cache=True``, and
    for an unknown keyword an error that is both a KeyError (numba's "Unrecognized options.
    cuda vectorize target does not support option(s): ...") and a TypeError.
    """
    _check_target(target)
    options = _args.compile_options(kws, "vectorize")
    if callable(ftylist_or_function) and not isinstance(ftylist_or_function, (str, list)):
        return CUDAUFunc(ftylist_or_function, None, options)
    sigs = ftylist_or_function
    if isinstance(sigs, (str, ct.Signature)):
        sigs = [sigs]
    parsed = [ct.parse_signature(s) for s in sigs]
    return lambda func: CUDAUFunc(func, parsed or None, options)


def _kernel_source(nin, ndim, kinds):
    """Text of a ufunc kernel: ``kinds[k]`` is 's' (scalar), 'f' (full shape), 'b'
    (broadcast, ndim_k <= ndim given as kinds 'b<ndim_k>')."""
    params = [f"a{k}" for k in range(nin)] + ["out"]
    body = ["    i = cuda.grid(1)", "    if i < out.size:"]
    if ndim == 1 and all(k in "sf" for k in kinds):
        idx = ["i"]
        body_idx = []
    else:
        idx = [f"i{d}" for d in range(ndim)]
        body_idx = ["        r = i"]
        for d in range(ndim - 1, 0, -1):
            body_idx += [f"        i{d} = r % out.shape[{d}]", f"        r = r // out.shape[{d}]"]
        body_idx.append("        i0 = r")
    call = []
    for k, kind in enumerate(kinds):
        if kind == "s":
            call.append(f"a{k}")
        elif kind == "f":
            call.append(f"a{k}[{', '.join(idx)}]")
        else:
            nd = int(kind[1:])
            sub = [f"min({idx[ndim - nd + j]}, a{k}.shape[{j}] - 1)" for j in range(nd)]
            call.append(f"a{k}[{', '.join(sub)}]" if nd else f"a{k}[0]")
    body += body_idx
    body.append(f"        out[{', '.join(idx)}] = func({', '.join(call)})")
    return f"def _ufunc_kernel({', '.join(params)}):\n" + "\n".join(body) + "\n"


def _ufunc_by_name(module, qualname):
    importlib.import_module(module)
    return find_by_name(module, qualname)


def _ufunc_again(reduced, sigs, options):
    return CUDAUFunc(as_function(reduced), sigs, options)


class CUDAUFunc:
    """A CUDA ufunc made by :func:`vectorize`: ``ufunc(*inputs, out=None, stream=0)``.

    Inputs: host arrays, device arrays (or CUDA Array Interface objects) and scalars,
    broadcast together.  Returns a device array when an input is on the device, otherwise a
    host array (a 1-element array when every input is a scalar, as numba's); with ``out=`` (host or device array of
    the broadcast shape and the signature's return dtype) the result is written there and
    ``out`` returned.  ``stream``: 0 or a Stream; with a stream, host results are copied back
    asynchronously (synchronise before reading them).

    Raises TypeError for a wrong number of inputs, no signature matching their dtypes, or a
    bad ``out``/``stream``; ValueError when the shapes do not broadcast or ``out`` has
    another shape.
    """

    nout = 1

    def __init__(self, func, sigs, options):
        from ..dispatch import jit
        self.py_func = func
        self._device = jit(device=True, **options)(as_def(func))
        self._options = options
        self._sigs = list(sigs) if sigs else []
        self._lazy = sigs is None
        self._kernels = {}
        code = getattr(func, "__code__", None)
        self.nin = code.co_argcount if code is not None else None
        for s in self._sigs:
            if self.nin is not None and len(s.args) != self.nin:
                raise TypeError(f"signature {s} has {len(s.args)} argument(s), but "
                                f"{func.__name__} takes {self.nin}")
            if not all(isinstance(t, ct.Scalar) for t in (*s.args, s.return_type)):
                raise TypeError(f"ufunc signature {s} must have scalar argument and return "
                                "types")
        self.__name__ = getattr(func, "__name__", "ufunc")
        self.__doc__ = getattr(func, "__doc__", None)
        self._reducer = None

    def __repr__(self):
        return f"<cujit CUDA ufunc {self.__name__!r}>"

    def __reduce__(self):
        """Pickled by name when its module binds it there, else as its function (by value
        when pickle cannot find it by name, :mod:`cujit.dispatch.serialize`), signatures and
        options (numba-cuda pickles its ufuncs); the kernels are compiled again."""
        fn = self.py_func
        module, qualname = getattr(fn, "__module__", None), getattr(fn, "__qualname__", "")
        if module and find_by_name(module, qualname) is self:
            return (_ufunc_by_name, (module, qualname))
        return (_ufunc_again, (reduce_function(fn), None if self._lazy else self._sigs,
                               self._options))

    @property
    def types(self):
        """The loops, as NumPy spells them (``'ff->f'``)."""
        return [("".join(np.dtype(t.dtype).char for t in s.args) + "->"
                 + np.dtype(s.return_type.dtype).char) for s in self._sigs]

    @property
    def ntypes(self):
        return len(self._sigs)

    def _lazy_signature(self, values):
        from ..frontend.typecheck import typecheck
        argtypes = tuple(ct.from_dtype(np.dtype(v.dtype)) if not _args.is_scalar(v)
                         or isinstance(v, np.generic) else ct.typeof(v) for v in values)
        for s in self._sigs:
            if tuple(s.args) == argtypes:
                return s
        rt = typecheck(self._device.py_func, argtypes, kernel=False).return_type
        if not isinstance(rt, ct.Scalar):
            raise TypeError(f"{self.__name__} returns {rt}, not a scalar")
        sig = ct.Signature(rt, argtypes)
        self._sigs.append(sig)
        return sig

    def _kernel(self, sig, ndim, kinds):
        key = (sig, ndim, kinds)
        k = self._kernels.get(key)
        if k is None:
            import cujit
            from ..dispatch import jit
            src = _kernel_source(len(kinds), ndim, kinds)
            k = jit(**self._options)(define(src, "_ufunc_kernel",
                                            {"cuda": cujit, "func": self._device}))
            self._kernels[key] = k
        return k

    def __call__(self, *args, out=None, stream=0):
        from ..runtime.streams import stream_handle
        stream_handle(stream)
        stream = stream or 0
        if self.nin is not None and len(args) != self.nin:
            raise TypeError(f"{self.__name__} takes {self.nin} input(s), got {len(args)}")
        values = [_args.as_device_or_host(a) for a in args]
        sig = self._lazy_signature(values) if self._lazy else _args.select(self._sigs, values)
        try:
            shape = np.broadcast_shapes(*(np.shape(v) if not _args.is_scalar(v) else ()
                                          for v in values))
        except ValueError:
            raise ValueError("shape mismatch: objects cannot be broadcast to a single shape: "
                             + ", ".join(str(tuple(np.shape(v))) for v in values)) from None
        rdtype = np.dtype(sig.return_type.dtype)
        any_device = any(_args.is_device(v) for v in values)
        if out is not None and hasattr(out, "shape"):
            # as NumPy: the inputs may broadcast up to ``out``'s shape, never ``out`` to theirs
            try:
                grown = np.broadcast_shapes(shape, tuple(out.shape))
            except ValueError:
                grown = None
            if grown == tuple(out.shape):
                shape = grown
        if out is not None:
            out = _args.check_out(out, shape, rdtype)
        all_scalar = all(_args.is_scalar(v) for v in values)
        if all_scalar:
            shape = (1,)
        n = int(np.prod(shape))
        from ..arrays import device_array
        if out is not None and _args.is_device(out):
            dev_out = out
        else:
            dev_out = device_array(shape, rdtype, stream=stream)
        if n:
            self._run(sig, values, shape, dev_out, stream)
        # all inputs scalars: a 1-element array, as numba's CUDA ufuncs (they run on
        # ``np.array([x])``), not NumPy's scalar
        return _args.deliver(dev_out, out, any_device, stream)

    def _run(self, sig, values, shape, dev_out, stream):
        ndim = len(shape)
        contiguous = dev_out.is_c_contiguous() if hasattr(dev_out, "is_c_contiguous") \
            else dev_out.flags.c_contiguous
        kargs, kinds = [], []
        flat = contiguous
        for v, t in zip(values, sig.args):
            if _args.is_scalar(v):
                kargs.append(_args.scalar_of(t, v))
                kinds.append("s")
                continue
            d = _args.to_device(v, stream)
            if d.ndim == 0:
                d = d.reshape(1)
            if tuple(d.shape) == tuple(shape):
                kinds.append("f")
                flat = flat and d.is_c_contiguous()
            else:
                kinds.append(f"b{d.ndim}")
                flat = False
            kargs.append(d)
        o = dev_out
        if flat and ndim != 1:
            kargs = [a.reshape(-1) if k == "f" else a for a, k in zip(kargs, kinds)]
            o = dev_out.reshape(-1)
            ndim = 1
        kernel = self._kernel(sig, ndim, tuple(kinds))
        _args.launch_1d(kernel, o.size, stream, kargs + [o])

    def reduce(self, arr, stream=0):
        """Reduce the 1-D array ``arr`` with this (binary) ufunc, as numba's CUDA ufuncs do
        (the order of the combinations is a tree, so the function should be associative).
        Raises TypeError for a ufunc that is not binary."""
        if self.nin != 2:
            raise TypeError(f"reduce needs a binary ufunc; {self.__name__} takes {self.nin} "
                            "input(s)")
        if self._reducer is None:
            from ..reduction import Reduce
            self._reducer = Reduce(self.py_func)
        if np.shape(arr) and np.shape(arr)[0] == 0:
            raise ValueError(f"zero-size array to reduction operation {self.__name__} which "
                             "has no identity")
        return self._reducer._reduce(arr, None, None, 0, False, stream)
