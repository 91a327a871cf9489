"""Argument handling shared by CUDA ufuncs and gufuncs: which inputs live on the device,
choosing a signature as numba's CUDA ufuncs do, and moving host data in and out."""
import numbers

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
