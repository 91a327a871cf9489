"""Argument handling shared by CUDA ufuncs and gufuncs: which inputs live on the device,
choosing a signature as numba's CUDA ufuncs do, and moving host data in and out."""
import numbers
import warnings

import numpy as np

from .. import types as ct

NO_MATCH = ("No matching version.  GPU ufunc requires array arguments to have the exact "
            "types.  This behaves like regular ufunc with casting='no'.")


def is_device(value):
    """True for a cujit device array or any object with ``__cuda_array_interface__``."""
    from ..arrays import DeviceNDArray
    return isinstance(value, DeviceNDArray) or hasattr(value, "__cuda_array_interface__")


def as_device_or_host(value):
    """A DeviceNDArray for device data, an ndarray for host arrays, the value itself for a
    scalar (Python or NumPy).  Raises TypeError for anything else."""
    from ..arrays import DeviceNDArray, as_cuda_array
    if isinstance(value, DeviceNDArray):
        return value
    if hasattr(value, "__cuda_array_interface__"):
        return as_cuda_array(value)
    if isinstance(value, (numbers.Number, np.generic)):
        return value
    if isinstance(value, (np.ndarray, list, tuple)):
        arr = np.asarray(value)
        if arr.dtype == object:
            raise TypeError(f"ufunc argument {value!r} is not an array of numbers")
        return arr[()] if arr.ndim == 0 else arr      # a 0-d array is a (typed) scalar
    raise TypeError(f"ufunc arguments must be arrays or scalars, got {type(value).__name__}")


def is_scalar(value):
    return isinstance(value, (numbers.Number, np.generic))


def select(sigs, values):
    """The signature for ``values``, numba's CUDA ufunc rule: the first in ``sigs`` whose
    types equal the arguments' dtypes (a scalar's is ``np.asarray(scalar).dtype``: Python
    float → float64); failing that, the one matching the arrays exactly with scalars cast to
    anything.  Raises TypeError when none matches, or several do only through scalars."""
    actual = [np.asarray(v).dtype if is_scalar(v) else np.dtype(v.dtype) for v in values]
    for sig in sigs:
        if all(a == _sig_dtype(t) for a, t in zip(actual, sig.args)):
            return sig
    loose = [None if is_scalar(v) else a for a, v in zip(actual, values)]
    matches = [sig for sig in sigs
               if all(a is None or a == _sig_dtype(t) for a, t in zip(loose, sig.args))]
    if not matches:
        got = ", ".join(str(a) for a in actual)
        raise TypeError(f"{NO_MATCH} (got {got}; have {', '.join(map(str, sigs))})")
    if len(matches) > 1:
        raise TypeError("Failed to resolve ufunc due to ambiguous signature. Too many untyped "
                        "scalars. Use numpy dtype object to type tag.")
    return matches[0]


# jit options a CUDA ufunc/gufunc passes on to its device function and kernels (cujit's; numba's
# CUDA gufuncs take none but nopython=True)
COMPILE_OPTIONS = ("fastmath", "debug", "lineinfo", "opt")


class UnrecognizedOptionsError(KeyError, TypeError):
    """An unknown keyword of ``vectorize``/``guvectorize``: a KeyError, as numba-cuda's
    ``vectorize`` raises ("Unrecognized options. cuda vectorize target does not support
    option: ..."), and a TypeError, as numba-cuda's ``guvectorize`` raises ("The following
    target options are not supported: ...")."""

    def __str__(self):
        return str(self.args[0]) if self.args else ""


def compile_options(kws, what):
    """The compile options among ufunc/gufunc builder keywords ``kws`` (dict) →
    ``{name: value}``; ``what``: ``'vectorize'`` or ``'guvectorize'`` (for numba's errors).

    ``nopython=True`` is accepted (and redundant: ``vectorize`` warns so with numba-cuda's
    RuntimeWarning); ``nopython=False`` → TypeError("nopython flag must be True");
    ``cache=True`` → TypeError("caching is not supported"); ``writable_args`` → TypeError;
    any other unknown keyword → :class:`UnrecognizedOptionsError`, both a KeyError (numba's
    vectorize) and a TypeError (numba-cuda's gufuncs), worded as numba-cuda words it for
    ``what``: "Unrecognized options. cuda vectorize target does not support option(s): 'x',
    'y' (accepted: ...)", and for guvectorize exactly "The following target options are not
    supported: 'x', 'y'" (the list is the whole message, as numba-cuda's; the accepted
    options are the exception's note, shown in its traceback)."""
    kws = dict(kws)
    if what == "vectorize" and "nopython" in kws:
        warnings.warn("nopython kwarg for cuda target is redundant", RuntimeWarning,
                      stacklevel=3)
    if not kws.pop("nopython", True):
        raise TypeError("nopython flag must be True")
    if kws.pop("cache", False):
        raise TypeError(f"caching is not supported (cujit.{what}(cache=True))")
    if kws.pop("writable_args", ()):
        raise TypeError("writable_args are not supported")
    options = {k: kws.pop(k) for k in COMPILE_OPTIONS if k in kws}
    if kws:
        names = ", ".join(map(repr, kws))
        accepted = ", ".join(map(repr, ("nopython",) + COMPILE_OPTIONS))
        if what == "vectorize":
            raise UnrecognizedOptionsError(
                "Unrecognized options. cuda vectorize target does not support option(s): "
                f"{names} (accepted: {accepted})")
        exc = UnrecognizedOptionsError(f"The following target options are not supported: "
                                       f"{names}")
        exc.add_note(f"{what} accepts the options {accepted}")
        raise exc
    return options


def select_castable(sigs, values):
    """The gufunc signature for ``values`` → ``(sig, values)`` with host arrays cast to it:
    :func:`select`'s exact rule first; failing that, as numba-cuda's gufuncs, the first
    signature to which every host input can be cast (cujit: NumPy's ``same_kind`` rule from
    the input's dtype to the signature's, so float64 data runs a float32 signature) and
    every device input already matches.  Raises TypeError when none does — for a device
    input that would need a cast with numba's words ("compatible signature is possible by
    casting but ... does not support .astype()")."""
    try:
        return select(sigs, values), values
    except TypeError as exact_error:
        for sig in sigs:
            need_device_cast = None
            ok = True
            for v, t in zip(values, sig.args):
                if is_scalar(v):
                    continue
                have, want = np.dtype(v.dtype), _sig_dtype(t)
                if have == want:
                    continue
                if not np.can_cast(have, want, "same_kind"):
                    ok = False
                    break
                if is_device(v):
                    need_device_cast = v
            if not ok:
                continue
            if need_device_cast is not None:
                raise TypeError(f"compatible signature {sig} is possible by casting but "
                                f"{type(need_device_cast).__name__} does not support "
                                ".astype(); copy the device array to the signature's dtype "
                                "first") from None
            return sig, [v if is_scalar(v) or np.dtype(v.dtype) == _sig_dtype(t)
                         else np.asarray(v).astype(_sig_dtype(t))
                         for v, t in zip(values, sig.args)]
        raise exact_error


def _sig_dtype(t):
    return np.dtype(t.dtype.dtype) if isinstance(t, ct.Array) else np.dtype(t.dtype)


def scalar_of(t, value):
    """``value`` as the NumPy scalar of cujit scalar type ``t``."""
    return np.dtype(t.dtype).type(value)


def to_device(value, stream):
    """Device array of ``value`` (device data as is; host data copied, contiguous)."""
    from ..arrays import to_device as _to_device
    if is_device(value):
        return value
    return _to_device(np.ascontiguousarray(value), stream=stream)


def check_out(out, shape, dtype, what="out"):
    """Validate a user ``out=`` array: shape ``shape`` and dtype ``dtype``.  Returns it as a
    device array or ndarray.  Raises TypeError for a non-array or a dtype mismatch,
    ValueError for a shape mismatch."""
    if not (is_device(out) or isinstance(out, np.ndarray)):
        raise TypeError(f"{what} must be a host or device array, got {type(out).__name__}")
    out = as_device_or_host(out)
    if tuple(out.shape) != tuple(shape):
        raise ValueError(f"{what} has shape {tuple(out.shape)}, but the result has shape "
                         f"{tuple(shape)}")
    if np.dtype(out.dtype) != np.dtype(dtype):
        raise TypeError(f"{what} has dtype {out.dtype}, but the result is {np.dtype(dtype)}")
    if isinstance(out, np.ndarray) and not out.flags.writeable:
        raise ValueError(f"{what} is read-only")
    return out


def deliver(dev_out, user_out, any_device, stream):
    """The call's result: the device array when an input was on the device (or ``out=`` is
    one); otherwise copied back into ``user_out`` or a new host array."""
    if user_out is not None and is_device(user_out):
        return user_out
    if user_out is None and any_device:
        return dev_out
    if user_out is None:
        return dev_out.copy_to_host(stream=stream)
    if user_out.flags.c_contiguous:
        dev_out.copy_to_host(user_out, stream=stream)
    else:
        np.copyto(user_out, dev_out.copy_to_host(stream=stream))
    return user_out


def launch_1d(kernel, n, stream, args):
    """Launch ``kernel`` with one thread per item (256 per block)."""
    threads = 256
    kernel[(n + threads - 1) // threads, threads, stream](*args)
