"""Shape, stride and indexing arithmetic for strided arrays, in Python ints.

Everything here works on ``(shape, strides, itemsize)`` triples — strides in bytes, possibly
negative or zero — and never touches memory, so the same code serves device arrays, mapped
and managed arrays and the copy planner.  The rules are NumPy's (basic indexing, contiguity
ignoring length-1 axes, ``empty_like(order='K')`` axis order), so NumPy is the test oracle.
Offsets are Python ints, so pointer arithmetic on addresses above 2**31 (or 2**63 on the
simulator) never overflows (numba issue: int32 shapes and slice bounds).
"""
import operator

import numpy as np

__all__ = ["normalize_shape", "normalize_dtype", "contiguous_strides", "is_c_contiguous",
           "is_f_contiguous", "layout_code", "index", "axis_order", "packed_strides_like",
           "reshape", "squeeze", "transpose", "view_dtype", "extent", "normalize_strides",
           "reject_masked", "prepare_shape_strides_dtype"]


_DTYPES = {}


def normalize_dtype(dtype):
    """``np.dtype(dtype)``; accepts NumPy dtypes and types, strings and cujit/Numba scalar types
    (through their ``.dtype``).  Raises TypeError naming the value when it is not a dtype, or
    when it holds Python objects (``object``, or a structured dtype with an object field):
    every caller allocates device or page-locked memory, where objects have no meaning."""
    try:
        return _DTYPES[dtype]
    except (KeyError, TypeError):
        pass
    try:
        out = np.dtype(dtype)
    except TypeError as exc:
        raise TypeError(f"dtype {dtype!r} is not a data type NumPy understands "
                        f"(a NumPy dtype or type, a string such as 'float32', or a cujit type): "
                        f"{exc}") from None
    if out.hasobject:
        raise TypeError(f"dtype {out} holds Python objects, which have no meaning in device or "
                        "page-locked memory (the uninitialised bytes would be taken as object "
                        "pointers); use a numeric, bool, string or structured dtype")
    if len(_DTYPES) < 256 and (isinstance(dtype, (str, type, np.dtype))):
        try:
            _DTYPES[dtype] = out
        except TypeError:
            pass
    return out


def reject_masked(obj, what):
    """NotImplementedError for NumPy masked arrays: the mask cannot go to the device, and
    copying the masked-out values would silently give wrong results (numba.cuda refuses
    masks too).  ``obj`` any value; returns nothing when it is not masked."""
    if isinstance(obj, np.ma.MaskedArray):
        raise NotImplementedError(
            f"{what}: masked arrays (np.ma.MaskedArray) are not supported: the mask cannot be "
            "copied to the device; pass m.filled(fill_value) or m.data (the values under "
            "the mask included) instead")


def normalize_shape(shape, what="shape"):
    """``shape`` (an int or a sequence of ints, Python or NumPy) as a tuple of Python ints.

    Raises TypeError for floats and other non-integers, ValueError for negative sizes."""
    if type(shape) is tuple and all(type(n) is int and n >= 0 for n in shape):
        return shape
    if isinstance(shape, (list, tuple)):
        items = shape
    else:
        items = (shape,)
        if not isinstance(shape, (str, bytes)) and getattr(shape, "ndim", 1) != 0:
            try:
                operator.index(shape)
            except TypeError:
                # NumPy's rule: any sequence of integers is a shape (a NumPy integer array,
                # a range)
                try:
                    items = tuple(shape)
                except TypeError:
                    pass
    out = []
    for n in items:
        if isinstance(n, (bool, np.bool_)):
            raise TypeError(f"{what} {shape!r}: {n!r} is a bool, expected an integer")
        try:
            n = operator.index(n)
        except TypeError:
            raise TypeError(f"{what} {shape!r}: {n!r} ({type(n).__name__}) is not an integer; "
                            f"{what} must be an int or a tuple of ints") from None
        if n < 0:
            raise ValueError(f"{what} {shape!r}: negative dimension {n} is not allowed")
        out.append(n)
    return tuple(out)


def shape_str(shape):
    """``shape`` as NumPy prints it in error messages: ``(2,3)``, ``(4,)``, ``()``."""
    return "(" + ",".join(str(n) for n in shape) + ("," if len(shape) == 1 else "") + ")"


def prepare_shape_strides_dtype(shape, strides, dtype, order):
    """``(shape, strides, dtype)`` normalised as numba.cuda's ``prepare_shape_strides_dtype``
    does for its array constructors: ``shape`` (int or sequence of ints) → tuple of ints;
    ``strides`` (bytes: an int, a sequence, or None/empty for packed ``order`` 'C' or 'F')
    → tuple; ``dtype`` → ``np.dtype``.  Packed strides are numba's: a zero-length axis
    gives its outer axes zero strides.

    Raises TypeError for a non-integer shape (floats included) or dtype, ValueError for a
    negative dimension, strides whose length is not the shape's, or an ``order`` other than
    'C'/'F' when the strides are to be filled in."""
    dtype = normalize_dtype(dtype)
    shape = normalize_shape(shape)
    if not (strides is None or (isinstance(strides, (tuple, list)) and not strides)):
        return shape, normalize_strides(strides, len(shape)), dtype
    if order not in ("C", "F"):
        raise ValueError(f"order must be 'C' or 'F' to fill in the strides, got {order!r}")
    out, acc = [0] * len(shape), dtype.itemsize
    for i in (range(len(shape) - 1, -1, -1) if order == "C" else range(len(shape))):
        out[i] = acc
        acc *= shape[i]
    return shape, tuple(out), dtype


def normalize_strides(strides, ndim):
    """``strides`` (sequence of ints, bytes) as a tuple of Python ints of length ``ndim``.

    Raises ValueError when the length differs from ``ndim``, TypeError for non-integers."""
    if isinstance(strides, (int, np.integer)):
        strides = (strides,)
    try:
        out = tuple(operator.index(s) for s in strides)
    except TypeError:
        raise TypeError(f"strides {strides!r} must be a tuple of ints (bytes)") from None
    if len(out) != ndim:
        raise ValueError(f"strides {strides!r} has {len(out)} entries but the shape has {ndim} "
                         "dimensions")
    return out


def contiguous_strides(shape, itemsize, order="C"):
    """Packed strides (bytes) of ``shape`` in ``order`` 'C' or 'F' (ValueError otherwise)."""
    if order not in ("C", "F"):
        raise ValueError(f"order {order!r} must be 'C' or 'F'")
    strides = [0] * len(shape)
    acc = itemsize
    axes = range(len(shape) - 1, -1, -1) if order == "C" else range(len(shape))
    for i in axes:
        strides[i] = acc
        acc *= shape[i] if shape[i] else 1
    return tuple(strides)


def is_c_contiguous(shape, strides, itemsize):
    """NumPy's C_CONTIGUOUS: strides of length-1 axes are ignored; size-0 arrays count."""
    acc = itemsize
    for n, s in zip(reversed(shape), reversed(strides)):
        if n == 0:
            return True
        if n != 1:
            if s != acc:
                # keep scanning for a zero-size axis, which makes any layout contiguous
                return 0 in shape
            acc *= n
    return True


def is_f_contiguous(shape, strides, itemsize):
    """NumPy's F_CONTIGUOUS (see :func:`is_c_contiguous`)."""
    acc = itemsize
    for n, s in zip(shape, strides):
        if n == 0:
            return True
        if n != 1:
            if s != acc:
                return 0 in shape
            acc *= n
    return True


def layout_code(shape, strides, itemsize):
    """'C' when C-contiguous, else 'F' when Fortran-contiguous, else 'A' (Numba's layouts)."""
    if is_c_contiguous(shape, strides, itemsize):
        return "C"
    if is_f_contiguous(shape, strides, itemsize):
        return "F"
    return "A"


def extent(shape, strides, itemsize):
    """``(lo, hi)`` byte offsets, relative to element 0...0, of the memory the array spans
    (``hi - lo`` bytes).  ``(0, 0)`` for size 0."""
    lo = hi = 0
    for n, s in zip(shape, strides):
        if n == 0:
            return 0, 0
        d = (n - 1) * s
        if d < 0:
            lo += d
        else:
            hi += d
    return lo, hi + itemsize


_KEY_TYPES_MSG = ("only integers, slices (':'), Ellipsis ('...') and None are valid indices of "
                  "a device array")
# NumPy's IndexError text for a key of a type no index accepts (floats, strings...)
_NUMPY_KEY_MSG = ("only integers, slices (`:`), ellipsis (`...`), numpy.newaxis (`None`) and "
                  "integer or boolean arrays are valid indices")


def index(shape, strides, key):
    """Basic (view) indexing as NumPy's ``a[key]``.

    Returns ``(offset_bytes, new_shape, new_strides, is_element)`` where ``is_element`` is True
    when ``key`` picks one element (all integers, one per axis), as NumPy returns a scalar then.
    Raises IndexError for out-of-range integers, too many indices and keys of a type no index
    accepts (floats, strings: NumPy's type and message), TypeError for array/sequence keys
    (NumPy's advanced indexing, not supported on device arrays) and bools."""
    ndim = len(shape)
    if type(key) is not tuple:
        key = (key,)
    # Fast path: integers only.
    if len(key) == ndim:
        off = 0
        for i, (k, n) in enumerate(zip(key, shape)):
            if type(k) is not int:
                break
            if k < 0:
                k += n
            if not 0 <= k < n:
                raise IndexError(f"index {key[i]} is out of bounds for axis {i} with size {n}")
            off += k * strides[i]
        else:
            return off, (), (), True
    n_ell = 0
    n_real = 0
    for k in key:
        if k is Ellipsis:
            n_ell += 1
        elif k is not None:
            n_real += 1
    if n_ell > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    if n_real > ndim:
        raise IndexError(f"too many indices for array: array is {ndim}-dimensional, "
                         f"but {n_real} were indexed")
    off = 0
    out_shape = []
    out_strides = []
    axis = 0
    n_int = 0
    for k in key:
        if k is None:
            out_shape.append(1)
            out_strides.append(0)
            continue
        if k is Ellipsis:
            for _ in range(ndim - n_real):
                out_shape.append(shape[axis])
                out_strides.append(strides[axis])
                axis += 1
            continue
        n, s = shape[axis], strides[axis]
        if isinstance(k, slice):
            start, stop, step = k.indices(n)
            length = len(range(start, stop, step))
            if length:
                off += start * s
            out_shape.append(length)
            out_strides.append(step * s)
        else:
            if isinstance(k, (bool, np.bool_)):
                raise TypeError(f"index {k!r} is a bool; {_KEY_TYPES_MSG}")
            try:
                i = operator.index(k)
            except TypeError:
                if hasattr(k, "__len__") or hasattr(k, "__cuda_array_interface__"):
                    # an array/sequence key: NumPy's advanced indexing, not supported here
                    raise TypeError(f"index {k!r} ({type(k).__name__}): "
                                    f"{_KEY_TYPES_MSG}") from None
                raise IndexError(_NUMPY_KEY_MSG) from None     # NumPy's type and text
            j = i + n if i < 0 else i
            if not 0 <= j < n:
                raise IndexError(f"index {i} is out of bounds for axis {axis} with size {n}")
            off += j * s
            n_int += 1
        axis += 1
    for a in range(axis, ndim):
        out_shape.append(shape[a])
        out_strides.append(strides[a])
    is_element = n_int == ndim and n_ell == 0 and len(out_shape) == 0
    return off, tuple(out_shape), tuple(out_strides), is_element


def axis_order(shape, strides):
    """Axes sorted outermost first by decreasing ``|stride|``, as NumPy's
    ``empty_like(order='K')`` does: length-1 and zero-stride axes are ambiguous and keep their
    place relative to the others (C order when nothing decides)."""
    perm = []
    for ax in range(len(shape)):
        pos = len(perm)
        sa = abs(strides[ax])
        for j in range(len(perm) - 1, -1, -1):
            b = perm[j]
            if shape[ax] == 1 or shape[b] == 1:
                continue
            sb = abs(strides[b])
            if sa > sb:
                pos = j
            else:
                break
        perm.insert(pos, ax)
    return perm


def packed_strides_like(shape, strides, itemsize):
    """Packed (contiguous) strides for ``shape`` that keep the axis order of ``strides``:
    C in → C out, F in → F out, permuted in → the same permutation (numba's
    ``device_array_like`` / NumPy's ``empty_like(order='K')``)."""
    if is_c_contiguous(shape, strides, itemsize) and all(s >= 0 for s in strides):
        return contiguous_strides(shape, itemsize, "C")
    if is_f_contiguous(shape, strides, itemsize) and all(s >= 0 for s in strides):
        return contiguous_strides(shape, itemsize, "F")
    out = [0] * len(shape)
    acc = itemsize
    for ax in reversed(axis_order(shape, strides)):
        out[ax] = acc
        acc *= shape[ax] if shape[ax] else 1
    return tuple(out)


def _resolve_newshape(size, newshape):
    unknown = [i for i, n in enumerate(newshape) if n == -1]
    if len(unknown) > 1:
        raise ValueError(f"can only specify one unknown dimension (-1), got shape {newshape}")
    if any(n < -1 for n in newshape):
        raise ValueError(f"negative dimension in shape {newshape}")
    if unknown:
        known = 1
        for n in newshape:
            if n != -1:
                known *= n
        if known == 0 or size % known:
            raise ValueError(f"cannot reshape array of size {size} into shape "
                             f"{_unknown_shape_str(newshape)}")
        newshape = tuple(size // known if n == -1 else n for n in newshape)
    total = 1
    for n in newshape:
        total *= n
    if total != size:
        raise ValueError(f"cannot reshape array of size {size} into shape "
                         f"{shape_str(newshape)}")
    return newshape


def _unknown_shape_str(newshape):
    """A shape holding -1 as NumPy prints it in reshape errors: a leading -1 is left out,
    others read ``newaxis``, no trailing comma (``(4)``, ``(2,newaxis,4)``)."""
    items = ["newaxis" if n == -1 else str(n) for n in newshape]
    if items and items[0] == "newaxis":
        items = items[1:]
    return "(" + ",".join(items) + ")"


def reshape(shape, strides, itemsize, newshape, order="C"):
    """Strides of the no-copy reshape of ``(shape, strides)`` to ``newshape`` (may hold one -1),
    reading elements in ``order`` ('C', 'F' or 'A').  Returns ``(newshape, newstrides)``.

    Raises ValueError for an incompatible size or order, NotImplementedError when the reshape
    would need a copy (as numba's ``DeviceNDArray.reshape``)."""
    if order not in ("C", "F", "A"):
        raise ValueError(f"order {order!r} must be 'C', 'F' or 'A'")
    if not isinstance(newshape, tuple) or any(type(n) is not int for n in newshape):
        items = newshape if isinstance(newshape, (tuple, list)) else (newshape,)
        try:
            newshape = tuple(operator.index(n) for n in items)
        except TypeError:
            raise TypeError(f"shape {newshape!r} must be ints") from None
    size = 1
    for n in shape:
        size *= n
    newshape = _resolve_newshape(size, newshape)
    if order == "A":
        order = "F" if (is_f_contiguous(shape, strides, itemsize)
                        and not is_c_contiguous(shape, strides, itemsize)) else "C"
    if size == 0 or (order == "C" and is_c_contiguous(shape, strides, itemsize)) \
            or (order == "F" and is_f_contiguous(shape, strides, itemsize)):
        return newshape, contiguous_strides(newshape, itemsize, order)
    # General no-copy case (e.g. splitting a strided axis): let NumPy decide on a fake array
    # that never touches memory.
    fake = np.lib.stride_tricks.as_strided(np.zeros(1, np.dtype((np.void, max(itemsize, 1)))),
                                           shape, strides)
    try:
        out = fake.reshape(newshape, order=order, copy=False)
    except ValueError:
        raise NotImplementedError(
            f"reshaping an array of shape {shape} and strides {strides} to {newshape} "
            f"(order {order!r}) needs a copy; copy it to a contiguous array first") from None
    return newshape, tuple(out.strides)


def squeeze(shape, strides, axis=None):
    """Drop length-1 axes (all, or those in ``axis``: int or tuple).  ValueError when a named
    axis is not of length 1, IndexError (AxisError) when out of range."""
    ndim = len(shape)
    if axis is None:
        keep = [i for i in range(ndim) if shape[i] != 1]
    else:
        axes = axis if isinstance(axis, tuple) else (axis,)
        norm = set()
        for a in axes:
            a = operator.index(a)
            if not -ndim <= a < ndim:
                raise np.exceptions.AxisError(a, ndim)
            a %= ndim
            if shape[a] != 1:
                raise ValueError(f"cannot select an axis to squeeze out which has size not "
                                 f"equal to one (axis {a} has size {shape[a]})")
            norm.add(a)
        keep = [i for i in range(ndim) if i not in norm]
    return tuple(shape[i] for i in keep), tuple(strides[i] for i in keep)


def transpose(shape, strides, axes=None):
    """Permute axes (reverse when ``axes`` is None).  ValueError when ``axes`` is not a
    permutation of ``range(ndim)``."""
    ndim = len(shape)
    if axes is None:
        perm = list(range(ndim - 1, -1, -1))
    else:
        try:
            perm = [operator.index(a) for a in axes]
        except TypeError:
            raise TypeError(f"axes {axes!r} must be a sequence of ints") from None
        # NumPy's checks, in its order and wording (code matches on these messages)
        if len(perm) != ndim:
            raise ValueError("axes don't match array")
        for a in perm:
            if not -ndim <= a < ndim:
                raise np.exceptions.AxisError(a, ndim)
        perm = [a + ndim if a < 0 else a for a in perm]
        if len(set(perm)) != ndim:
            raise ValueError("repeated axis in transpose")
    return tuple(shape[a] for a in perm), tuple(strides[a] for a in perm)


def view_dtype(shape, strides, old_itemsize, new_itemsize):
    """Shape and strides of ``a.view(new_dtype)`` by NumPy's rules: the last axis must be
    contiguous and divisible when the item size changes.  Raises ValueError otherwise."""
    if new_itemsize == old_itemsize:
        return shape, strides
    if not shape:
        raise ValueError("Changing the dtype of a 0d array is only supported if the itemsize "
                         "is unchanged")
    last = shape[-1]
    size = 1
    for n in shape:
        size *= n
    # NumPy's messages verbatim: code matches on them
    if last != 1 and size != 0 and strides[-1] != old_itemsize:
        raise ValueError("To change to a dtype of a different size, the last axis must be "
                         "contiguous")
    if new_itemsize < old_itemsize:
        if new_itemsize == 0 or old_itemsize % new_itemsize:
            raise ValueError("When changing to a smaller dtype, its size must be a divisor of "
                             "the size of original dtype")
        newlast = last * (old_itemsize // new_itemsize)
    else:
        nbytes = last * old_itemsize
        if nbytes % new_itemsize:
            raise ValueError("When changing to a larger dtype, its size must be a divisor of "
                             "the total size in bytes of the last axis of the array.")
        newlast = nbytes // new_itemsize
    return shape[:-1] + (newlast,), strides[:-1] + (new_itemsize,)
