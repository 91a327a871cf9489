"""The devices as a list (numba.cuda's ``gpus``, ``list_devices``, ``detect``,
``is_available``): ``with cujit.gpus[i]:`` selects device ``i`` for a block.  Contexts and the
per-thread binding live in :mod:`cujit.runtime.devices`; this module only enumerates devices
over it."""
from ..driver import get_driver
from ..driver.errors import CudaSupportError, CudaAPIError
from .devices import _device, _context_for, _tls, select_device, forget_binding

__all__ = ["gpus", "list_devices", "is_available", "detect", "cuda_error"]


class _DeviceContextManager:
    """``gpus[i]``: the device; ``with cujit.gpus[i]:`` selects it for the block, then
    restores the thread's previous device."""

    def __init__(self, ordinal):
        self._ordinal = ordinal
        self._saved = []

    @property
    def _device(self):
        return _device(self._ordinal)

    def __getattr__(self, name):
        return getattr(self._device, name)

    def get_primary_context(self):
        return _context_for(self._ordinal)

    def __enter__(self):
        # the block's end gives the thread back the context it has now, as numba's push and
        # pop do: cujit's, another library's, or none
        self._saved.append((getattr(_tls, "own", None), get_driver().ctx_get_current()))
        select_device(self._ordinal)
        return self

    def __exit__(self, *exc):
        prev, handle = self._saved.pop()
        if prev is not None and not prev.closed and handle == prev.handle:
            prev.make_current()
            _tls.own = _tls.ctx = prev
            return
        try:
            get_driver().ctx_set_current(handle)
        except CudaAPIError:        # that context was destroyed inside the block
            get_driver().ctx_set_current(0)
        forget_binding()            # cujit binds its context again at its next use
        _tls.own = prev if prev is not None and not prev.closed else None

    def __repr__(self):
        return f"<Managed Device {self._ordinal}>"


class _DeviceList:
    """``cujit.gpus``: indexable, iterable list of devices (numba.cuda ``gpus``)."""

    def _list(self):
        return [_DeviceContextManager(i) for i in range(get_driver().get_device_count())]

    def __getitem__(self, i):
        """``gpus[i]``: device ``i`` (negative counts from the end; slices give lists).
        TypeError for an index that is not an int or slice, IndexError naming ``i`` and the
        device count when out of range."""
        devs = self._list()
        if isinstance(i, bool) or not (isinstance(i, slice) or hasattr(i, "__index__")):
            raise TypeError(f"gpus[{i!r}]: a device index must be an int, got "
                            f"{type(i).__name__}")
        try:
            return devs[i]
        except IndexError:
            raise IndexError(f"gpus[{i!r}]: device index out of range: {len(devs)} "
                             f"device(s) present") from None

    @property
    def lst(self):
        """The devices as a list (numba.cuda's ``gpus.lst``)."""
        return self._list()

    def __len__(self):
        return get_driver().get_device_count()

    def __iter__(self):
        return iter(self._list())

    @property
    def current(self):
        """The current thread's device, or None when no context is attached."""
        ctx = getattr(_tls, "own", None)
        return None if ctx is None or ctx.closed else self[ctx.device.id]

    def __repr__(self):
        return ", ".join(repr(d) for d in self._list())


gpus = _DeviceList()


def list_devices():
    """All devices (``cujit.gpus``)."""
    return gpus


def is_available():
    """True when a CUDA driver (or the simulator) and at least one device can be used."""
    try:
        return get_driver().get_device_count() > 0
    except (CudaSupportError, CudaAPIError):
        return False


def cuda_error():
    """None when the CUDA driver (or the simulator) initialises, else the message (str) of
    the error that stops it, as numba.cuda's ``cuda_error()``; never raises for that."""
    try:
        get_driver().get_device_count()
    except (CudaSupportError, CudaAPIError) as exc:
        return str(exc)
    return None


def detect():
    """Print the devices found and whether each is supported; return True when any is."""
    try:
        n = get_driver().get_device_count()
    except CudaSupportError as exc:
        print(f"CUDA is not available: {exc}")
        return False
    print(f"Found {n} CUDA devices")
    supported = 0
    for i in range(n):
        dev = _device(i)
        ok = dev.compute_capability >= (3, 5)
        supported += ok
        print(f"id {i}    {dev.name!r:>40}    {'[SUPPORTED]' if ok else '[NOT SUPPORTED]'}")
        major, minor = dev.compute_capability
        print(f"{'Compute Capability:':>40} {major}.{minor}")
        print(f"{'UUID:':>40} {dev.uuid}")
    print(f"Summary:\n\t{supported}/{n} devices are supported")
    return supported > 0
