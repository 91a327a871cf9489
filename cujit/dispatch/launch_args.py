"""Launch-value conversion of tuples and host record scalars (real driver path).

numba.cuda copies host arrays found inside tuple arguments to the device and back after the
launch, as it does for top-level host arrays, and passes a host record scalar (``np.void``,
``np.record``) through a device copy whose written fields come back to the host.  These
helpers extend ``launcher.convert_arg`` with that; top-level values keep its fast path.
"""
import numpy as np

from ..driver.errors import CudaAPIError, CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED
from ..memory.protocol import has_device_pointer, device_pointer, cuda_core_kind

__all__ = ["convert_tuple", "convert_host_record", "HostRecordBack", "wrap_declared_ints",
           "convert_declared_scalars", "check_alive", "In", "Out", "InOut", "unwrap_hints",
           "convert_hint", "refuse_host_copies_in_capture", "classify_arg", "ArgHint",
           "has_host_copies"]


class _ArgHint:
    """A kernel argument with its copy direction (numba.cuda's ``cuda.In``, ``cuda.Out``,
    ``cuda.InOut``): ``value`` is the argument.  For a host NumPy array the hint decides
    the copies around the launch (``copy_in``: host to device before it, ``copy_out``: device
    to host after it); any other value (device arrays, scalars) is passed as it is."""
    __slots__ = ("value",)
    copy_in = copy_out = True

    def __init__(self, value):
        self.value = value

    def __repr__(self):
        return f"{type(self).__name__}({self.value!r:.60})"


#: numba's public name of the base class (``numba.cuda.args.ArgHint``).
ArgHint = _ArgHint


class In(_ArgHint):
    """A host array the kernel only reads: copied to the device, never back."""
    __slots__ = ()
    copy_out = False


class Out(_ArgHint):
    """A host array the kernel only writes: not copied to the device (the kernel sees
    uninitialised memory on a GPU), copied back after the launch."""
    __slots__ = ()
    copy_in = False


class InOut(_ArgHint):
    """A host array copied both ways (what a plain host array gets)."""
    __slots__ = ()


def classify_arg(name, i, value):
    """The cujit type of launch value ``value`` (None for a DLPack-only object, typed once
    imported; a cuda.core Buffer or StridedMemoryView is typed from its attributes, as
    numba-cuda types it); TypeError naming argument ``i`` of kernel ``name`` when it cannot
    be a kernel argument (ValueError for a closed cuda.core Buffer or a view of host
    memory)."""
    from .. import types as ct
    if cuda_core_kind(value) is not None:
        try:
            return ct.typeof(value)
        except (TypeError, ValueError) as exc:     # closed, host memory: as the GPU path
            raise type(exc)(f"argument {i} of kernel {name}: {exc}") from None
    try:
        if hasattr(value, "__dlpack__") and not hasattr(value, "__cuda_array_interface__") \
                and not has_device_pointer(value) and not isinstance(value, np.ndarray):
            return None
        return ct.typeof(value)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"argument {i} of kernel {name}: {exc}") from None


def unwrap_hints(args, simulator):
    """``args`` with each ``In``/``Out``/``InOut`` replaced for the launch: on the simulator
    (which runs kernels on host arrays in place) by the array itself, or by a copy for
    ``In`` so that the kernel's writes stay away from the host array as on a GPU; on a GPU
    by the hint itself (``convert_hint`` makes the copies).  ``args`` itself when there is
    no hint."""
    if not any(isinstance(a, _ArgHint) for a in args):
        return args
    out = []
    for a in args:
        if isinstance(a, _ArgHint):
            v = a.value
            if simulator and isinstance(v, np.ndarray) and not a.copy_out and \
                    device_pointer(v) is None:
                v = v.copy()
                v.flags.writeable = a.value.flags.writeable     # typed as the original
            out.append(v if simulator else a)
        else:
            out.append(a)
    return out


def convert_hint(index, hint, stream, convert_arg):
    """``launcher.convert_arg`` for an ``In``/``Out``/``InOut`` hint: ``(device value, host
    array to copy back or None, False)``."""
    v = hint.value
    if not isinstance(v, np.ndarray) or device_pointer(v) is not None:
        value, back, _ = convert_arg(index, v, stream)
        return value, (back if hint.copy_out else None), False
    from ..arrays import device_array_like, to_device
    dev = to_device(v, stream=stream) if hint.copy_in else device_array_like(v, stream=stream)
    back = v if hint.copy_out and v.flags.writeable and v.size else None
    return dev, back, False


def check_alive(index, value, kernel_name):
    """Raise ``DeadMemoryError`` (a ValueError) when launch value ``value`` (argument
    ``index`` of ``kernel_name``) is an array whose memory was freed or whose context was
    reset or closed: on a GPU its address may already belong to a newer allocation, which
    the kernel would overwrite (user trial).  Tuples are checked member by member."""
    if isinstance(value, tuple):
        for v in value:
            check_alive(index, v, kernel_name)
        return
    mem = getattr(value, "gpu_data", None)
    if mem is None or getattr(mem, "alive", True):
        return
    from ..memory.pointers import DeadMemoryError
    raise DeadMemoryError(
        f"argument {index} of kernel {kernel_name}: the memory of this "
        f"{type(value).__name__} at {mem.device_pointer_value:#x} was freed, or its context "
        "was reset or closed; make the array again after a reset or close()")


def convert_tuple(index, value, stream, convert_arg):
    """``(converted tuple, [(host, device)] to copy back or None, False)`` for tuple ``value``;
    members are converted with ``convert_arg`` (recursively for nested tuples), a namedtuple
    keeps its class."""
    items, backs = [], []
    for v in value:
        cv, host, _ = convert_arg(index, v, stream)
        items.append(cv)
        if isinstance(host, list):
            backs.extend(host)
        elif host is not None:
            backs.append((host, cv))
    conv = type(value)(*items) if hasattr(value, "_fields") else tuple(items)
    return conv, backs or None, False


class HostRecordBack:
    """Copy-back target of a host record: ``copy_to_host`` of the device record lands in a
    0-d buffer whose fields are then written into the user's record, field by field (an
    ``np.void`` from ``arr[i]`` is a view of ``arr``, so ``arr`` sees them)."""

    def __init__(self, rec):
        self.rec = rec

    def copy_back(self, dev, stream):
        buf = np.empty((), self.rec.dtype)
        dev.copy_to_host(buf, stream=stream)
        if stream and hasattr(stream, "synchronize"):
            stream.synchronize()    # the copy may be asynchronous on the user's stream
        for name in self.rec.dtype.names:
            self.rec[name] = buf[name]


def convert_host_record(value, stream):
    """``(DeviceRecord, [(HostRecordBack, DeviceRecord)], False)`` for a host record."""
    from ..arrays import to_device
    dev = to_device(value, stream=stream)     # a structured scalar gives a DeviceRecord
    return dev, [(HostRecordBack(value), dev)], False


def wrap_declared_ints(argtypes, values):
    """``values`` with each Python/NumPy integer whose parameter is a narrower integer type
    converted to that type modulo 2**bits (numba.cuda marshals scalars through ctypes
    ``c_int8(300)`` etc., which wraps: 300 → 44 for int8), as NumPy scalars of the parameter
    dtype; values that fit are kept as they are; None when no value needed converting."""
    from .. import types as ct
    out, changed = list(values), False
    for i, (t, v) in enumerate(zip(argtypes, values)):
        if isinstance(t, ct.Integer) and isinstance(v, (int, np.integer)) \
                and not isinstance(v, (bool, np.bool_)):
            m = 1 << t.bitwidth
            w = int(v) % m
            if t.signed and w >= m >> 1:
                w -= m
            if w != int(v):
                out[i] = t.dtype.type(w)
                changed = True
    return tuple(out) if changed else None


def convert_declared_scalars(argtypes, values):
    """``values`` with every scalar argument converted to its declared parameter type, the
    value the compiled kernel receives (numba.cuda marshals scalars through ctypes of the
    parameter type): integers wrap as in :func:`wrap_declared_ints` and become NumPy scalars of
    the parameter's dtype (so they keep its width), a Python float for a
    ``float32`` parameter is rounded to ``np.float32`` (0.1 -> 0.10000000149011612), complex
    and bool parameters get ``np.complex64``/``np.complex128``/``np.bool_``.  Used by the
    simulator, so both backends compute with the same value; None when nothing changed."""
    from .. import types as ct
    wrapped = wrap_declared_ints(argtypes, values)
    out = list(values if wrapped is None else wrapped)
    changed = wrapped is not None
    scalar = (int, float, complex, bool, np.number, np.bool_)
    for i, (t, v) in enumerate(zip(argtypes, out)):
        if isinstance(t, ct.Integer) and isinstance(v, (int, np.integer)) \
                and not isinstance(v, (bool, np.bool_)) and type(v) is not t.dtype.type:
            # a value that fits still takes the parameter's width: clz/brev/popc of a uint32
            # parameter count 32 bits, not the 64 of a Python int
            out[i] = t.dtype.type(v)
            changed = True
            continue
        if isinstance(t, (ct.Float, ct.Complex, ct.Boolean)) and isinstance(v, scalar) \
                and type(v) is not t.dtype.type:
            if isinstance(t, ct.Float) and isinstance(v, (complex, np.complexfloating)):
                continue    # not convertible; the typecheck reports the mismatch
            out[i] = t.dtype.type(v)
            changed = True
    return tuple(out) if changed else None


def _host_copied(value):
    """True for a launch value that the launch copies between host and device: a host NumPy
    array (pinned too: only mapped and managed arrays have a device address), a host record
    scalar, an ``In``/``Out``/``InOut`` hint of one, or a tuple holding one."""
    if isinstance(value, _ArgHint):
        value = value.value
    if isinstance(value, tuple):
        return any(_host_copied(v) for v in value)
    if isinstance(value, np.ndarray):
        return device_pointer(value) is None
    return isinstance(value, np.generic) and value.dtype.fields is not None


def has_host_copies(args):
    """True when a launch with values ``args`` copies one of them between host and device
    (a host NumPy array or record, an ``In``/``Out``/``InOut`` hint of one, or a tuple
    holding one)."""
    return any(_host_copied(v) for v in args)


def refuse_host_copies_in_capture(args, kernel_name, stream_handle):
    """Raise ``CudaAPIError`` (CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED) when a launch on the
    captured stream ``stream_handle`` has an argument the launch would copy from and back to
    the host, before anything is recorded.  On a GPU those copies are refused by the capture
    (a copy from pageable memory, and the stream synchronisation after the copy back), and a
    copy a graph replayed would go through a temporary device array freed after the
    capture; the simulator, which runs kernels on host arrays in place, would record a graph
    writing into host memory on every replay."""
    for i, v in enumerate(args):
        if _host_copied(v):
            raise CudaAPIError(
                CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED,
                f"argument {i} of kernel {kernel_name} is a host {type(v).__name__}, which a "
                f"launch on stream {stream_handle:#x} during its graph capture would copy to "
                "the device and back (synchronous work a capture refuses); pass a device "
                "array (to_device before the capture), or a mapped or managed array",
                "cuLaunchKernel")
