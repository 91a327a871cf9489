"""``@cujit.guvectorize(signatures, layout, target="cuda")``: CUDA generalised ufuncs
(R-LIB-2), numba's API.

The layout (``"(n),(n)->(n)"``, ``"(m,n),(n,p)->(m,p)"``, ``"(),()->()"``) names the core
dimensions of each argument; the leading dimensions of the inputs are loop dimensions,
broadcast together.  The decorated function is an ordinary device function that receives
the core views of one loop item (a scalar for a ``()`` argument declared scalar in the
signature, a 1-element array for one declared as an array) and writes its outputs.  One
thread runs one loop item: every argument is laid out as ``(loop items, *core)`` and the
generated kernel calls the function on ``arg[i]``.

Inputs whose loop dimensions broadcast are expanded to the full loop shape before the launch
(host inputs by NumPy before their copy; device inputs on the device, by a broadcasting copy
ufunc), so each thread reads its own copy; inputs of the full loop shape are used in place.
"""
import re

import numpy as np

from .. import types as ct
from . import _args
from ._source import as_def, define
from .vectorize import _check_target

__all__ = ["guvectorize", "CUDAGUFunc", "parse_layout"]

_DIMS = re.compile(r"\(\s*([A-Za-z_]\w*(?:\s*,\s*[A-Za-z_]\w*)*)?\s*,?\s*\)")


def parse_layout(layout):
    """``"(n),(n)->(n)"`` → ``([('n',), ('n',)], [('n',)])``: the core dimension names of the
    inputs and of the outputs.  Raises ValueError for a malformed layout."""
    if not isinstance(layout, str) or layout.count("->") != 1:
        raise ValueError(f"layout must be a string such as '(n),(n)->(n)', got {layout!r}")

    def side(text):
        text = text.replace(" ", "")
        out, pos = [], 0
        while pos < len(text):
            m = _DIMS.match(text, pos)
            if m is None:
                raise ValueError(f"malformed layout {layout!r} at {text[pos:]!r}")
            out.append(tuple(d.strip() for d in m.group(1).split(",")) if m.group(1) else ())
            pos = m.end()
            if pos < len(text):
                if text[pos] != ",":
                    raise ValueError(f"malformed layout {layout!r} at {text[pos:]!r}")
                pos += 1
        if not out:
            raise ValueError(f"layout {layout!r} has an empty side")
        return out
    ins, outs = layout.split("->")
    return side(ins), side(outs)


def guvectorize(ftylist, layout, target="cuda", **kws):
    """Make a CUDA generalised ufunc (numba.guvectorize with ``target='cuda'``).

    ``ftylist``: signatures such as ``'void(float32[:], float32[:], float32[:])'`` (one
    argument per input and output, arrays of the layout's core rank, scalars allowed for
    ``()`` inputs); ``layout``: ``"(n),(n)->(n)"``.  Keywords: ``nopython=True`` (redundant),
    and cujit's compile options ``fastmath``, ``debug``, ``lineinfo``, ``opt``.  Raises
    ValueError for another target or a bad layout, TypeError when a signature does not fit
    the layout or returns a value ("guvectorized functions cannot return values"), for
    ``nopython=False``, ``cache=True`` or an unknown keyword (numba-cuda's messages).
    """
    _check_target(target)
    options = _args.compile_options(kws, "guvectorize")
    if isinstance(ftylist, (str, ct.Signature)):
        ftylist = [ftylist]
    sigs = [ct.parse_signature(s) for s in ftylist]
    ins, outs = parse_layout(layout)
    return lambda func: CUDAGUFunc(func, sigs, ins, outs, options)


def _identity(v):
    return v


_COPY = []


def _broadcast_copy():
    """A CUDA ufunc returning its input: ``copy(src, out=dst)`` broadcasts ``src`` into
    ``dst`` on the device."""
    if not _COPY:
        from .vectorize import CUDAUFunc
        _COPY.append(CUDAUFunc(_identity, None, {}))
    return _COPY[0]


def _fit_loop(out, shape):
    """``out`` as a view of ``shape`` when it only lacks leading length-1 loop dimensions
    (numba accepts ``out`` of shape ``(4,)`` for a loop shape ``(1,)`` and core ``(4,)``)."""
    have = tuple(np.shape(out))
    extra = len(shape) - len(have)
    if extra > 0 and shape[extra:] == have and all(d == 1 for d in shape[:extra]) \
            and hasattr(out, "reshape"):
        return out.reshape(shape)
    return out


class CUDAGUFunc:
    """A CUDA gufunc made by :func:`guvectorize`: ``gufunc(*inputs, out=None, stream=0)`` or
    ``gufunc(*inputs, *outputs, stream=0)``.

    Returns the output (a tuple when there are several): device arrays when an input is on
    the device, host arrays otherwise; given outputs are written and returned.  Raises
    TypeError for a wrong number of arguments, no signature matching the input dtypes or a
    bad ``out``; ValueError when loop dimensions do not broadcast, a core dimension has two
    sizes, an argument has fewer dimensions than its core, or an output's size is unknown.
    """

    def __init__(self, func, sigs, ins, outs, options):
        from ..dispatch import jit
        self.py_func = func
        self._device = jit(device=True, **options)(as_def(func))
        self._options = options
        self._sigs = sigs
        self._ins, self._outs = ins, outs
        self.nin, self.nout = len(ins), len(outs)
        self.__name__ = getattr(func, "__name__", "gufunc")
        self._kernels = {}
        for s in sigs:
            if s.return_type is not None and s.return_type is not ct.void:
                raise TypeError(f"guvectorized functions cannot return values: signature {s} "
                                f"specifies {s.return_type} return type")
            if len(s.args) != self.nin + self.nout:
                raise TypeError(f"signature {s} has {len(s.args)} argument(s); the layout has "
                                f"{self.nin} input(s) and {self.nout} output(s)")
            for t, core in zip(s.args, ins + outs):
                nd = t.ndim if isinstance(t, ct.Array) else 0
                if nd != max(len(core), 1 if isinstance(t, ct.Array) else 0):
                    raise TypeError(f"signature {s}: {t} does not fit the core dimensions "
                                    f"({', '.join(core)})")
            for t in s.args[self.nin:]:
                if not isinstance(t, ct.Array):
                    raise TypeError(f"signature {s}: outputs must be arrays, got {t}")

    def __repr__(self):
        return f"<cujit CUDA gufunc {self.__name__!r}>"

    def _kernel(self, sig):
        k = self._kernels.get(sig)
        if k is None:
            import cujit
            from ..dispatch import jit
            n = self.nin + self.nout
            params = [f"a{k}" for k in range(n)]
            call = []
            for k, (t, core) in enumerate(zip(sig.args, self._ins + self._outs)):
                call.append(f"a{k}[i:i + 1]" if not core and isinstance(t, ct.Array)
                            else f"a{k}[i]")
            src = (f"def _gufunc_kernel({', '.join(params)}):\n"
                   f"    i = cuda.grid(1)\n"
                   f"    if i < a{n - 1}.shape[0]:\n"
                   f"        func({', '.join(call)})\n")
            k = jit(**self._options)(define(src, "_gufunc_kernel",
                                            {"cuda": cujit, "func": self._device}))
            self._kernels[sig] = k
        return k

    def __call__(self, *args, out=None, stream=0):
        from ..arrays import device_array, DeviceNDArray
        from ..runtime.streams import stream_handle
        stream_handle(stream)
        stream = stream or 0
        if out is not None and len(args) > self.nin:
            raise ValueError("cannot specify argument 'out' as both positional and keyword")
        if len(args) == self.nin + self.nout and out is None:
            args, out = args[:self.nin], args[self.nin:]
        elif len(args) != self.nin:
            def n_args(n):
                return f"{n} positional argument{'s' * (n != 1)}"
            raise TypeError(f"{self.__name__}: This gufunc accepts {n_args(self.nin)} (when "
                            f"providing input only) or {n_args(self.nin + self.nout)} (when "
                            f"providing input and output). Got {n_args(len(args))}.")
        if out is not None and not isinstance(out, (tuple, list)):
            out = (out,)
        if out is not None and len(out) != self.nout:
            raise TypeError(f"{self.__name__} has {self.nout} output(s), got {len(out)}")
        values = [_args.as_device_or_host(a) for a in args]
        sig, values = _args.select_castable(self._sigs, values)
        sizes, loops = {}, []
        for v, core, t in zip(values, self._ins, sig.args):
            shape = tuple(np.shape(v)) if not _args.is_scalar(v) else ()
            if len(shape) < len(core):
                raise ValueError(f"{self.__name__}: an input of shape {shape} has fewer "
                                 f"dimensions than its core ({', '.join(core)})")
            split = len(shape) - len(core)
            for name, size in zip(core, shape[split:]):
                if sizes.setdefault(name, size) != size:
                    raise ValueError(f"{self.__name__}: core dimension {name!r} is "
                                     f"{sizes[name]} in one argument and {size} in another")
            loops.append(shape[:split])
        try:
            loop = tuple(np.broadcast_shapes(*loops))
        except ValueError:
            raise ValueError(f"{self.__name__}: loop dimensions {loops} cannot be broadcast "
                             "to a single shape") from None
        out_shapes = []
        for k, core in enumerate(self._outs):
            if out is not None:
                o = out[k]
                sizes_o = tuple(np.shape(o))[len(np.shape(o)) - len(core):] if core else ()
                for name, size in zip(core, sizes_o):
                    if sizes.setdefault(name, size) != size:
                        raise ValueError(f"{self.__name__}: core dimension {name!r} is "
                                         f"{sizes[name]}, but output {k} has {size}")
            missing = [d for d in core if d not in sizes]
            if missing:
                raise ValueError(f"{self.__name__}: the size of output dimension(s) {missing} "
                                 "is not given by any input; pass out=")
            out_shapes.append(loop + tuple(sizes[d] for d in core))
        any_device = any(_args.is_device(v) for v in values)
        n_items = int(np.prod(loop)) if loop else 1
        dev_args = []
        for v, core, t in zip(values, self._ins, sig.args):
            full = loop + tuple(sizes[d] for d in core)
            dev_args.append(self._prepare(v, t, full, n_items, len(core), stream))
        user_outs, dev_outs = [], []
        for k, (shape, t) in enumerate(zip(out_shapes, sig.args[self.nin:])):
            dt = np.dtype(t.dtype.dtype)
            o = None
            if out is not None:
                o = _args.check_out(_fit_loop(out[k], shape), shape, dt, f"output {k}")
            user_outs.append(o)
            if o is not None and _args.is_device(o) and o.is_c_contiguous():
                d = o
            else:
                d = device_array(shape, dt, stream=stream)
                if o is not None:      # the function may read its output: start from it
                    d.copy_to_device(o, stream=stream)
            dev_outs.append(d)
        if n_items:
            flat = [d.reshape((n_items,) + tuple(d.shape[len(loop):])) for d in dev_outs]
            _args.launch_1d(self._kernel(sig), n_items, stream, dev_args + flat)
        results = []
        for k, (d, o) in enumerate(zip(dev_outs, user_outs)):
            if o is not None and _args.is_device(o) and d is not o:
                o.copy_to_device(d, stream=stream)
            r = _args.deliver(d, o, any_device, stream)
            # given outputs: the caller's own arrays, not our reshaped views of them; a
            # foreign (CUDA-array-interface) output as its device-array view, as numba-cuda
            # and the CUDA ufuncs return it
            given = out[k] if out is not None else None
            foreign = given is not None and not isinstance(given, (np.ndarray, DeviceNDArray))
            results.append(r if given is None or foreign else given)
        return results[0] if self.nout == 1 else tuple(results)

    def _prepare(self, v, t, full, n_items, core_nd, stream):
        """Argument ``v`` as a C-contiguous device array of shape ``(n_items, *core)``, or a
        scalar of type ``t``."""
        from ..arrays import device_array
        if _args.is_scalar(v):
            dt = np.dtype(t.dtype.dtype) if isinstance(t, ct.Array) else np.dtype(t.dtype)
            return _args.to_device(np.full((n_items,), v, dtype=dt), stream)
        core = full[len(full) - core_nd:] if core_nd else ()
        if tuple(v.shape) != full:
            if _args.is_device(v):           # expand on the device, by a broadcasting ufunc
                c = device_array(full, v.dtype, stream=stream)
                _broadcast_copy()(v, out=c, stream=stream)
                v = c
            else:
                v = np.ascontiguousarray(np.broadcast_to(v, full))
        if _args.is_device(v) and not v.is_c_contiguous():
            c = device_array(v.shape, v.dtype, stream=stream)
            c.copy_to_device(v, stream=stream)
            v = c
        d = _args.to_device(v, stream)
        return d.reshape((n_items,) + core)
