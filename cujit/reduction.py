"""``cujit.Reduce`` / ``@cujit.reduce``: numba.cuda's reduction objects (R-LIB-3).

``Reduce(binop)`` compiles ``binop(a, b)`` (any associative function of two values, a ``def``
or a lambda) as a device function; calling the object reduces a 1-D host or device array::

    sum_reduce = cujit.reduce(lambda a, b: a + b)
    total = sum_reduce(d_arr)                       # NumPy scalar of d_arr.dtype
    sum_reduce(d_arr, res=d_out, init=1, stream=s)  # written into d_out[0], returns None

Two launches: ``G`` blocks of 256 threads each fold a grid-stride slice of the array in a
register (the loop NVVM unrolls), then a shared-memory tree per block; one block folds the
``G`` partial results and applies ``init`` once, as numba does (``binop(result, init)``).
Every thread starts from an element of the array, so ``binop`` needs no identity value.

The partial results and the one-element result live in scratch device arrays kept per
(context, stream, thread, dtype) and reused by the next call there: work on one stream runs
in order, so a call's first pass cannot overwrite partials a previous call still reads, and
the two ``cuMemAlloc``s (and the later frees, which synchronise) leave the hot path.  The
host then only launches and copies, as CuPy's ``sum`` does.  The scratch of a stream is
keyed weakly by the stream object: it goes when the stream goes (a module-level ``Reduce``
keeps no stream alive).
"""
import numbers
import threading
import weakref

import numpy as np

from .ufuncs._source import as_def, define

__all__ = ["Reduce", "reduce"]

_BLOCK = 256
_MAX_BLOCKS = 1024          # the second pass folds the partials with one block of <= 1024

_KERNEL = """
def _reduce_kernel(arr, out, init, use_init):
    tid = cuda.threadIdx.x
    bs = cuda.blockDim.x
    blk = cuda.blockIdx.x
    sm = cuda.shared.array(1024, dtype)
    start = tid + bs * blk
    acc = arr[start]
    for i in range(start + bs * cuda.gridDim.x, arr.shape[0], bs * cuda.gridDim.x):
        acc = op(acc, arr[i])
    sm[tid] = acc
    cuda.syncthreads()
    width = 1
    while width < bs:
        width *= 2
    width //= 2
    while width > 0:
        if tid < width and tid + width < bs:
            sm[tid] = op(sm[tid], sm[tid + width])
        cuda.syncthreads()
        width //= 2
    if tid == 0:
        if use_init:
            out[blk] = op(sm[0], init)
        else:
            out[blk] = sm[0]
"""


def _check_stream(stream):
    """TypeError unless ``stream`` is 0, None or a stream (R-STR-4)."""
    from .runtime.streams import stream_handle
    stream_handle(stream)


class Reduce:
    """A reduction by the binary function ``functor`` (numba.cuda.Reduce).

    ``functor(a, b)``: a Python function (or lambda) compiled as a CUDA device function; it
    must be associative (the order in which elements are combined is not sequential).  The
    compiled kernels are kept per dtype in this object.  Raises TypeError when ``functor`` is
    not a Python function.
    """

    def __init__(self, functor):
        from .dispatch import jit
        self._functor = functor
        self._op = jit(device=True)(as_def(functor))
        self._kernels = {}
        self._scratch = weakref.WeakKeyDictionary()    # stream -> {key: scratch}
        self._scratch0 = {}                             # the same for stream 0 / None

    def __repr__(self):
        return f"<cujit Reduce {getattr(self._functor, '__qualname__', self._functor)!r}>"

    def _kernel(self, dtype):
        k = self._kernels.get(dtype)
        if k is None:
            from . import dispatch as compiler
            import cujit
            ns = {"cuda": cujit, "op": self._op, "dtype": dtype}
            k = compiler.jit(define(_KERNEL, "_reduce_kernel", ns))
            self._kernels[dtype] = k
        return k

    def __call__(self, arr, size=None, res=None, init=0, stream=0):
        """Reduce the first ``size`` elements (all when None) of the 1-D host or device array
        ``arr`` with the binary function, then combine the result with ``init`` once.

        Returns the result as a NumPy scalar of ``arr.dtype``, or None when ``res`` (a device
        array, written at ``res[0]``) is given; ``stream``: 0 or a Stream the work is queued
        on.  An empty selection gives ``init`` (also written into ``res``).

        Raises TypeError for an array that is not 1-D, a ``size`` that is not an integer, a
        ``res`` that is not a device array or a bad ``stream``; ValueError for a negative
        ``size``.
        """
        return self._reduce(arr, size, res, init, True, stream)

    def _reduce(self, arr, size, res, init, use_init, stream):
        from .arrays import DeviceNDArray, device_array, to_device
        _check_stream(stream)
        stream = stream or 0
        if not isinstance(arr, DeviceNDArray):
            if not hasattr(arr, "__cuda_array_interface__"):
                arr = np.asarray(arr)
            else:
                from .arrays import as_cuda_array
                arr = as_cuda_array(arr)
        if arr.ndim != 1:
            raise TypeError(f"Reduce only supports 1-D arrays, got {arr.ndim} dimension(s) "
                            f"(shape {arr.shape})")
        if res is not None and not isinstance(res, DeviceNDArray):
            if hasattr(res, "__cuda_array_interface__"):
                from .arrays import as_cuda_array
                res = as_cuda_array(res)
            else:
                raise TypeError(f"res must be a device array, got {type(res).__name__}")
        if res is not None and res.size < 1:
            raise ValueError("res must have at least one element")
        if size is not None:
            if isinstance(size, (bool, np.bool_)) or not isinstance(size, numbers.Integral):
                raise TypeError(f"size must be an integer or None, got {size!r}")
            if size < 0:
                raise ValueError(f"size must be >= 0, got {size}")
            arr = arr[:int(size)]
        init = arr.dtype.type(init)
        n = arr.shape[0]
        if n == 0:
            if res is not None:
                res[:1].copy_to_device(np.array([init], dtype=res.dtype), stream=stream)
                return None
            return init
        if not isinstance(arr, DeviceNDArray):
            arr = to_device(np.ascontiguousarray(arr), stream=stream)
        kernel = self._kernel(arr.dtype)
        partials, scratch_out = self._scratch_for(arr.dtype, stream)
        out = res[:1] if res is not None else scratch_out
        if n <= _BLOCK:
            kernel[1, n, stream](arr, out, init, use_init)
        else:
            blocks = min(n // _BLOCK, _MAX_BLOCKS)
            partials = partials[:blocks]
            kernel[blocks, _BLOCK, stream](arr, partials, init, False)
            kernel[1, blocks, stream](partials, out, init, use_init)
        if res is not None:
            return None
        host = out.copy_to_host(stream=stream)
        if hasattr(stream, "synchronize"):
            stream.synchronize()
        return host[0]

    def _scratch_for(self, dtype, stream):
        """``(partials, out)``: device arrays of ``_MAX_BLOCKS`` and 1 elements of ``dtype``
        for a call on ``stream`` in this thread and the current context (see the module
        docstring), made again after the context's reset."""
        from .arrays import device_array
        from .runtime.devices import current_context
        ctx = current_context()
        key = (id(ctx), threading.get_ident(), dtype)
        if not stream:
            table = self._scratch0
        else:
            try:
                table = self._scratch.get(stream)
                if table is None:
                    table = self._scratch[stream] = {}
            except TypeError:       # a foreign stream object without weak references
                return (device_array(_MAX_BLOCKS, dtype, stream=stream),
                        device_array(1, dtype, stream=stream))
        hit = table.get(key)
        if hit is not None and hit[0] is ctx and hit[1] == ctx.generation:
            return hit[2], hit[3]
        if len(table) >= 64:            # threads come and go
            table.clear()
        partials = device_array(_MAX_BLOCKS, dtype, stream=stream)
        out = device_array(1, dtype, stream=stream)
        # every use names its stream; the arrays must not hold it (the table is keyed weakly
        # by it, so a dropped stream takes its scratch with it)
        partials.stream = out.stream = 0
        table[key] = (ctx, ctx.generation, partials, out)
        return partials, out


reduce = Reduce
