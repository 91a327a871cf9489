"""DLPack 1.x export and import (R-CAI-4), with ctypes only.

Export: :func:`to_dlpack_capsule` builds a ``DLManagedTensorVersioned`` (or, for consumers
that ask for ``max_version < (1, 0)``, a legacy ``DLManagedTensor``) in a ctypes structure,
wraps its address in a PyCapsule named ``"dltensor_versioned"`` / ``"dltensor"`` through
``ctypes.pythonapi``, and keeps the array, the shape/strides buffers and the struct itself in
a table until the consumer calls the deleter (or, when the capsule was never consumed, until
the capsule dies: its destructor calls the deleter; a small native shim around that
destructor keeps a consumer's pending exception, see :func:`_destructor_address`).  Strides in DLPack are in elements, so
an array whose byte strides are not multiples of its item size cannot be exported
(BufferError).

Import: :func:`from_dlpack` reads such a capsule (from ``obj.__dlpack__(...)`` or a capsule
passed directly), renames it ``used_...`` as the protocol requires, and returns a zero-copy
``DeviceNDArray`` whose allocation object calls the producer's deleter when it dies.
"""
import ctypes
import threading
import weakref

import numpy as np

from . import _runtime
from . import devicearray
from . import layout as L
from .devicearray import DeviceNDArray

__all__ = ["to_dlpack_capsule", "from_dlpack", "dlpack_device", "kDLCPU", "kDLCUDA",
           "kDLCUDAHost", "kDLCUDAManaged"]

kDLCPU, kDLCUDA, kDLCUDAHost, kDLCUDAManaged = 1, 2, 3, 13
_FLAG_READ_ONLY, _FLAG_IS_COPIED = 1, 2
DLPACK_VERSION = (1, 1)


class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", DLDevice), ("ndim", ctypes.c_int32),
                ("dtype", DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


class DLPackVersion(ctypes.Structure):
    _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32)]


_DELETER = ctypes.CFUNCTYPE(None, ctypes.c_void_p)


class DLManagedTensorVersioned(ctypes.Structure):
    _fields_ = [("version", DLPackVersion), ("manager_ctx", ctypes.c_void_p),
                ("deleter", _DELETER), ("flags", ctypes.c_uint64), ("dl_tensor", DLTensor)]


class DLManagedTensor(ctypes.Structure):
    _fields_ = [("dl_tensor", DLTensor), ("manager_ctx", ctypes.c_void_p),
                ("deleter", _DELETER)]


_NAME_V, _USED_V = b"dltensor_versioned", b"used_dltensor_versioned"
_NAME_L, _USED_L = b"dltensor", b"used_dltensor"

_api = ctypes.pythonapi
_PyCapsule_New = _api.PyCapsule_New
_PyCapsule_New.restype = ctypes.py_object
_PyCapsule_New.argtypes = (ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p)
_PyCapsule_IsValid = _api.PyCapsule_IsValid
_PyCapsule_IsValid.restype = ctypes.c_int
_PyCapsule_IsValid.argtypes = (ctypes.py_object, ctypes.c_char_p)
_PyCapsule_GetPointer = _api.PyCapsule_GetPointer
_PyCapsule_GetPointer.restype = ctypes.c_void_p
_PyCapsule_GetPointer.argtypes = (ctypes.py_object, ctypes.c_char_p)
_PyCapsule_SetName = _api.PyCapsule_SetName
_PyCapsule_SetName.restype = ctypes.c_int
_PyCapsule_SetName.argtypes = (ctypes.py_object, ctypes.c_char_p)
# The destructor gets the dying capsule as a raw pointer: no new reference may be taken.
_IsValidRaw = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_char_p)(
    ("PyCapsule_IsValid", _api))
_GetPointerRaw = ctypes.PYFUNCTYPE(ctypes.c_void_p, ctypes.c_void_p, ctypes.c_char_p)(
    ("PyCapsule_GetPointer", _api))

_lock = threading.Lock()
_live = {}      # struct address -> (struct, shape buf, strides buf, array)


def _deleter(addr):
    with _lock:
        _live.pop(addr, None)


_deleter_c = _DELETER(_deleter)


def _capsule_destructor(capsule):
    # Called when an unconsumed capsule dies: free what the producer kept.
    for name in (_NAME_V, _NAME_L):
        if _IsValidRaw(capsule, name):
            _deleter(_GetPointerRaw(capsule, name))
            return


_capsule_destructor_c = ctypes.CFUNCTYPE(None, ctypes.c_void_p)(_capsule_destructor)
_native_destructor = None   # (address, engine) once built


def _destructor_address():
    """Address of the capsule destructor to install.

    A consumer may drop the capsule while its own exception is pending (NumPy does, after
    "Unsupported device in DLTensor"); Python code must not run then, or ctypes reports the
    callback as failed, the deleter never runs (the array leaks) and the pending exception is
    lost (``SystemError: ... returned NULL without setting an exception``).  The DLPack spec's
    reference destructor therefore saves and restores the error indicator in C; this builds
    that three-call shim with llvmlite (already a dependency) around the Python destructor."""
    global _native_destructor
    if _native_destructor is None:
        with _lock:     # built once: capsules keep its address, so the engine must live on
            if _native_destructor is None:
                try:
                    _native_destructor = _build_native_destructor()
                except Exception:   # noqa: BLE001 - no native JIT: the Python destructor
                    _native_destructor = (
                        ctypes.cast(_capsule_destructor_c, ctypes.c_void_p).value, None)
    return _native_destructor[0]


def _build_native_destructor():
    """``(address, engine)`` of the native shim (the engine keeps the code alive)."""
    import llvmlite.binding as llvm
    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()

    def addr(fn):
        return ctypes.cast(fn, ctypes.c_void_p).value
    ir = f"""
define void @cujit_dlpack_capsule_destructor(ptr %capsule) {{
  %t = alloca ptr
  %v = alloca ptr
  %tb = alloca ptr
  call void inttoptr (i64 {addr(_api.PyErr_Fetch)} to ptr)(ptr %t, ptr %v, ptr %tb)
  call void inttoptr (i64 {addr(_capsule_destructor_c)} to ptr)(ptr %capsule)
  %t1 = load ptr, ptr %t
  %v1 = load ptr, ptr %v
  %tb1 = load ptr, ptr %tb
  call void inttoptr (i64 {addr(_api.PyErr_Restore)} to ptr)(ptr %t1, ptr %v1, ptr %tb1)
  ret void
}}
"""
    mod = llvm.parse_assembly(ir)
    mod.verify()
    tm = llvm.Target.from_default_triple().create_target_machine()
    engine = llvm.create_mcjit_compiler(mod, tm)
    engine.finalize_object()
    return (engine.get_function_address("cujit_dlpack_capsule_destructor"), engine)


def _dl_dtype(dtype):
    kind = dtype.kind
    bits = dtype.itemsize * 8
    code = {"i": 0, "u": 1, "f": 2, "c": 5, "b": 6}.get(kind)
    if code is None or dtype.fields is not None or dtype.subdtype is not None:
        raise BufferError(f"dtype {dtype} cannot be exported through DLPack (only bool, "
                          "integer, floating and complex dtypes)")
    return DLDataType(code, bits, 1)


def _np_dtype(dt):
    if dt.lanes != 1:
        raise TypeError(f"DLPack dtype with {dt.lanes} lanes is not supported")
    kind = {0: "i", 1: "u", 2: "f", 5: "c", 6: "b"}.get(dt.code)
    if kind is None:
        raise TypeError(f"DLPack dtype code {dt.code} (bits {dt.bits}) has no NumPy dtype "
                        "(bfloat16 and opaque handles are not supported)")
    if kind == "b":
        return np.dtype(np.bool_)
    return np.dtype(f"{kind}{dt.bits // 8}")


def dlpack_device(ary):
    """``(device_type, device_id)`` of a cujit array: (kDLCUDA, current device id)."""
    return (kDLCUDA, _runtime.current_context().device.id)


def _sync_for_consumer(ary, stream):
    """Order the consumer's ``stream`` after the producer's pending work on this array."""
    if stream == -1:
        return
    if stream is None:
        stream = 1
    if type(stream) is not int:
        raise TypeError(f"__dlpack__ stream must be an int or None, got {stream!r}")
    if stream == 0:
        raise ValueError("__dlpack__(stream=0) is ambiguous for CUDA and not allowed; use 1 "
                         "(legacy default), 2 (per-thread default) or a stream handle")
    producer = _runtime.stream_handle(ary.stream) if ary.stream else 0
    if producer == stream or (producer == 0 and stream == 1):
        return
    drv = _runtime.driver()
    ev = drv.event_create(timing=False)
    try:
        drv.event_record(ev, producer if producer else 1)
        drv.stream_wait_event(stream, ev)
    finally:
        drv.event_destroy(ev)


def to_dlpack_capsule(ary, stream=None, max_version=None, dl_device=None, copy=None):
    """The ``__dlpack__`` protocol for a cujit device array (DLPack ≥ 1.0 semantics).

    ``stream``: consumer's stream handle (None → legacy default, -1 → no synchronisation,
    0 → ValueError); ``max_version``: (major, minor) the consumer understands (None or
    < (1, 0) → legacy capsule); ``dl_device``: must be this CUDA device when given
    (BufferError otherwise); ``copy``: True → export a fresh device copy, False/None → the
    array itself.  Raises BufferError for dtypes or strides DLPack cannot express."""
    if dl_device is not None and tuple(dl_device) != dlpack_device(ary):
        raise BufferError(f"cannot export a CUDA array to DLPack device {tuple(dl_device)}; "
                          f"it lives on {dlpack_device(ary)}")
    _sync_for_consumer(ary, stream)
    flags = 0
    if copy:
        # api.device_array_like's allocation (api is above this module)
        new = DeviceNDArray(ary.shape, L.packed_strides_like(ary.shape, ary.strides,
                                                             ary.dtype.itemsize), ary.dtype)
        new.copy_to_device(ary)
        ary = new
        flags |= _FLAG_IS_COPIED
    itemsize = ary.dtype.itemsize
    dt = _dl_dtype(ary.dtype)
    if any(s % itemsize for s in ary.strides):
        raise BufferError(f"strides {ary.strides} are not multiples of the item size "
                          f"{itemsize}; DLPack strides count elements")
    ndim = ary.ndim
    shape = (ctypes.c_int64 * max(ndim, 1))(*ary.shape)
    strides = (ctypes.c_int64 * max(ndim, 1))(*(s // itemsize for s in ary.strides))
    versioned = max_version is not None and tuple(max_version)[0] >= 1
    st = DLManagedTensorVersioned() if versioned else DLManagedTensor()
    t = st.dl_tensor
    t.data = ary._data_ptr or None
    t.device = DLDevice(*dlpack_device(ary))
    t.ndim = ndim
    t.dtype = dt
    t.shape = ctypes.cast(shape, ctypes.POINTER(ctypes.c_int64))
    t.strides = ctypes.cast(strides, ctypes.POINTER(ctypes.c_int64))
    t.byte_offset = 0
    st.deleter = _deleter_c
    if versioned:
        st.version = DLPackVersion(*DLPACK_VERSION)
        st.flags = flags
    addr = ctypes.addressof(st)
    with _lock:
        _live[addr] = (st, shape, strides, ary)
    name = _NAME_V if versioned else _NAME_L
    return _PyCapsule_New(addr, name, _destructor_address())


class _DLPackOwner:
    """Allocation object of an imported array: calls the producer's deleter when it dies."""
    __slots__ = ("device_pointer_value", "size", "producer", "_fin", "__weakref__")

    def __init__(self, ptr, size, deleter, addr, producer):
        self.device_pointer_value = ptr
        self.size = size
        self.producer = producer
        self._fin = weakref.finalize(self, _call_deleter, deleter, addr) if deleter else None

    @property
    def device_ctypes_pointer(self):
        p = self.device_pointer_value
        return ctypes.c_size_t(p) if p else ctypes.c_void_p(None)


def _call_deleter(deleter, addr):
    _DELETER(deleter)(addr)


def _check_device_id(device_id, device_type):
    """Refuse memory that is not the current device's: an id no device has (ValueError, as
    no context could ever use it) or another device's (ValueError: its pointers mean nothing,
    or something else, in the current context).  Managed memory is usable from any device."""
    if device_type == kDLCUDAManaged:
        return
    current = _runtime.current_context().device.id
    if device_id == current:        # the usual case: no device count needed
        return
    n = _runtime.driver().get_device_count()
    if not 0 <= device_id < n:
        raise ValueError(f"from_dlpack: the tensor reports CUDA device {device_id}, but this "
                         f"process has {n} device(s) (ids 0..{n - 1})")
    if device_id != current:
        raise ValueError(f"from_dlpack: the tensor lives on CUDA device {device_id}, but the "
                         f"current device is {current}; import it inside "
                         f"`with cuda.gpus[{device_id}]:`")


def from_dlpack(obj, *, stream=1):
    """Zero-copy ``DeviceNDArray`` of a CUDA array exported through DLPack: ``obj`` has
    ``__dlpack__``/``__dlpack_device__`` (CuPy, PyTorch, JAX, cujit) or is a DLPack capsule.
    ``stream``: the consumer's stream as ``__dlpack__`` takes it (1: the legacy default
    stream, 2: the per-thread one, a handle, -1: no synchronisation); the producer orders
    its pending work on the array before work queued next on it.  TypeError for host (CPU)
    arrays and unsupported dtypes."""
    producer = obj
    if hasattr(obj, "__dlpack__"):
        if hasattr(obj, "__dlpack_device__"):
            dev = obj.__dlpack_device__()
            if not (isinstance(dev, tuple) and len(dev) == 2
                    and all(isinstance(x, (int, np.integer)) for x in dev)):
                raise ValueError(f"from_dlpack: {type(obj).__name__}.__dlpack_device__() "
                                 f"returned {dev!r}; expected a (device_type, device_id) "
                                 "tuple of two ints")
            dev_type = dev[0]
            if dev_type not in (kDLCUDA, kDLCUDAManaged):
                raise TypeError(f"from_dlpack: {type(obj).__name__} lives on DLPack device type "
                                f"{dev_type}, not CUDA; use numpy.from_dlpack for host arrays")
            _check_device_id(int(dev[1]), dev_type)
        try:
            capsule = obj.__dlpack__(stream=stream, max_version=DLPACK_VERSION)
        except TypeError:
            capsule = obj.__dlpack__(stream=stream)
    else:
        capsule = obj
    if _PyCapsule_IsValid(capsule, _NAME_V):
        addr = _PyCapsule_GetPointer(capsule, _NAME_V)
        st = DLManagedTensorVersioned.from_address(addr)
        if st.version.major > 1:
            raise TypeError(f"DLPack version {st.version.major}.{st.version.minor} is newer "
                            "than this consumer (1.x)")
        used = _USED_V
    elif _PyCapsule_IsValid(capsule, _NAME_L):
        addr = _PyCapsule_GetPointer(capsule, _NAME_L)
        st = DLManagedTensor.from_address(addr)
        used = _USED_L
    else:
        raise TypeError(f"from_dlpack needs an object with __dlpack__ or an unused DLPack "
                        f"capsule, got {type(obj).__name__}")
    t = st.dl_tensor
    if t.device.device_type not in (kDLCUDA, kDLCUDAManaged):
        raise TypeError(f"from_dlpack: the tensor lives on DLPack device type "
                        f"{t.device.device_type}, not CUDA")
    _check_device_id(t.device.device_id, t.device.device_type)
    dtype = _np_dtype(t.dtype)
    ndim = t.ndim
    shape = tuple(int(t.shape[i]) for i in range(ndim))
    if t.strides:
        strides = tuple(int(t.strides[i]) * dtype.itemsize for i in range(ndim))
    else:
        strides = L.contiguous_strides(shape, dtype.itemsize)
    ptr = (t.data or 0) + t.byte_offset
    deleter = ctypes.cast(st.deleter, ctypes.c_void_p).value
    _PyCapsule_SetName(capsule, used)
    size = 1
    for n in shape:
        size *= n
    lo, hi = L.extent(shape, strides, dtype.itemsize)
    owner = _DLPackOwner(ptr + lo, hi - lo, deleter, addr, producer)
    return DeviceNDArray._make(shape, strides, dtype, ptr if size else 0, owner, 0)


devicearray.provide(to_dlpack_capsule=to_dlpack_capsule, dlpack_device=dlpack_device)
