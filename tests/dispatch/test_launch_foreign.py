"""Launches with foreign arrays (objects with ``__cuda_array_interface__``, v3 and v2 with
``__dlpack__``) on the real-driver path, driven through a recording stand-in for CudaDriver
with kernels really compiled: the values packed, the fast path taking them, the CUDA Array
Interface v3 stream rule, the DLPack handshake, and that no pointer outlives its launch."""
import ctypes
import struct

import numpy as np
import pytest

import cujit
from cujit import types as ct
from cujit.arrays import _runtime
from cujit.nvvm import libnvvm as nvvm, linker
from cujit.dispatch.dispatcher import Dispatcher
from cujit.config import config
from cujit.driver.sim import _ATTRIBUTES

pytestmark = [pytest.mark.compile, pytest.mark.sim,
              pytest.mark.skipif(not (nvvm.nvvm_available() and linker.nvjitlink_available()),
                                 reason="libNVVM / nvJitLink wheels not installed")]


class RecordingDriver:
    """Enough of CudaDriver for launches and stream waits; records them in ``calls``.  Other
    calls (device counts, external streams) are the simulated driver's."""
    is_simulator = False

    class function_ref(int):
        pass

    class stream_ref(int):
        pass

    def __init__(self, real, nparams):
        self.real, self.nparams, self.calls = real, nparams, []

    def __getattr__(self, name):
        return getattr(self.real, name)

    def device_attribute(self, ordinal, name):
        return _ATTRIBUTES[name]

    def driver_version(self):
        return 13000

    def func_get_attribute(self, func, name):
        return {"SHARED_SIZE_BYTES": 0, "MAX_THREADS_PER_BLOCK": 1024}[name]

    def func_set_attribute(self, func, name, value):
        pass

    def _params(self, params):
        arr = (ctypes.c_void_p * self.nparams).from_address(params)
        return [struct.unpack("<q", ctypes.string_at(p, 8))[0] for p in arr]

    def launch_kernel(self, func, gx, gy, gz, bx, by, bz, sh, stream, params):
        self.calls.append(("slow", int(stream), self._params(params)))

    def raw_launch(self, func, gx, gy, gz, bx, by, bz, sh, stream, params, extra):
        self.calls.append(("fast", int(stream), self._params(params)))
        return (0,)

    def stream_synchronize(self, handle):
        self.calls.append(("sync", handle))

    def event_create(self, timing=True, blocking=False, interprocess=False):
        return 77

    def event_record(self, event, stream=0):
        self.calls.append(("record", stream))

    def stream_wait_event(self, stream, event):
        self.calls.append(("wait", stream))

    def event_destroy(self, event):
        pass

    def launches(self):
        return [c for c in self.calls if c[0] in ("slow", "fast")]


class _Module:
    def get_function(self, name):
        return 0xF00D


class FakeContext:
    """Loads modules as nothing; memory bookkeeping is the simulator context's, and so is
    the generation (an earlier test of the process may have reset that context, and the
    arrays made here carry its generation)."""
    closed = False

    class device:
        id = 0
        compute_capability = (9, 0)

    def __init__(self, real):
        self._real = real

    def __getattr__(self, name):
        return getattr(self._real, name)

    def load_module(self, image):
        return _Module()


class Exporter:
    """A CAI v3 exporter (CuPy-like): the dict is built on every access from its fields,
    which a test changes between launches as a framework would after freeing and
    reallocating."""

    def __init__(self, ptr, shape, typestr="<f4", strides=None, stream=1, readonly=False,
                 version=3):
        self.ptr, self.shape, self.typestr, self.strides = ptr, shape, typestr, strides
        self.stream, self.readonly, self.version = stream, readonly, version
        self.reads = 0

    @property
    def __cuda_array_interface__(self):
        self.reads += 1
        d = {"shape": self.shape, "typestr": self.typestr, "data": (self.ptr, self.readonly),
             "strides": self.strides, "version": self.version}
        if self.version >= 3:
            d["stream"] = self.stream
        return d


class TorchLike(Exporter):
    """A CAI v2 exporter with DLPack (PyTorch-like): ``__dlpack__`` records the consumer
    stream it was asked to order its work for, and exports a real cujit array's capsule."""

    def __init__(self, dev, **kw):
        super().__init__(dev.device_ctypes_pointer.value, dev.shape, version=2, **kw)
        self.dev, self.handshakes = dev, []

    def __dlpack__(self, stream=None, max_version=None):
        self.handshakes.append(stream)
        return self.dev.__dlpack__(stream=-1, max_version=max_version)

    def __dlpack_device__(self):
        return self.dev.__dlpack_device__()


def one(a):
    a[0] = 1.0


def two(a, b):
    b[0] = a[0]


@pytest.fixture
def env(monkeypatch):
    from cujit.runtime import devices
    from cujit import driver
    # modules that bind current_context by name when first imported must be imported now,
    # or they would keep the double below for the rest of the session
    from cujit.runtime import api               # noqa: F401
    from cujit.cudadrv import devices as _cd    # noqa: F401
    real_ctx = devices.current_context()
    drv = RecordingDriver(driver.get_driver(), 3)
    ctx = FakeContext(real_ctx)
    monkeypatch.setattr(driver, "get_driver", lambda: drv)
    monkeypatch.setattr(_runtime, "_driver", drv)
    # the arrays layer resolves current_context once and keeps it: give it the double now,
    # and the real one back afterwards
    monkeypatch.setattr(_runtime, "_current_context", lambda: ctx)
    monkeypatch.setattr(devices, "current_context", lambda: ctx)
    monkeypatch.setattr(devices._tls, "ctx", ctx, raising=False)
    return drv


def test_cai_v3_array_takes_the_fast_path_with_its_values(env):
    k = Dispatcher(one, None, {})
    x = Exporter(0x1000, (10,))
    k[1, 32](x)
    k[1, 32](x)
    assert [c[0] for c in env.launches()] == ["slow", "fast"]
    assert env.launches()[1][2] == [0x1000, 10, 4]
    assert k.signatures == [(ct.float32[::1],)]


def test_fast_path_reads_the_pointer_on_every_launch(env):
    # the exporter freed its memory and reallocated elsewhere, with another size: the next
    # launch must pack the new pointer, never one kept from the launch before
    k = Dispatcher(one, None, {})
    x = Exporter(0x1000, (10,))
    k[1, 32](x)
    k[1, 32](x)
    x.ptr, x.shape = 0x9000, (3,)
    k[1, 32](x)
    assert env.launches()[-1] == ("fast", 0, [0x9000, 3, 4])
    assert x.reads >= 3


def test_freed_exporter_makes_the_next_launch_fail_not_reuse_its_pointer(env):
    k = Dispatcher(one, None, {})
    x = Exporter(0x1000, (10,))
    k[1, 32](x)
    k[1, 32](x)
    x.ptr = None        # freed: a non-empty array with no memory is malformed
    with pytest.raises(ValueError, match="NULL data pointer"):
        k[1, 32](x)
    assert len(env.launches()) == 2


def test_cai_v2_array_without_dlpack_takes_the_fast_path(env):
    k = Dispatcher(one, None, {})
    x = Exporter(0x1000, (8,), version=2)
    k[1, 32](x)
    k[1, 32](x)
    assert [c[0] for c in env.launches()] == ["slow", "fast"]
    assert env.launches()[1][2] == [0x1000, 8, 4]


def test_strided_and_two_dimensional_arrays_pack_their_strides(env):
    env.nparams = 5

    def k2(a):
        a[0, 0] = 1.0
    k = Dispatcher(k2, None, {})
    x = Exporter(0x1000, (4, 6), strides=(48, 8))      # every other column: layout A
    k[1, 32](x)
    k[1, 32](x)
    assert env.launches()[1] == ("fast", 0, [0x1000, 4, 6, 48, 8])
    assert k.signatures == [(ct.float32[:, :],)]
    c = Exporter(0x2000, (4, 6))                        # no strides: C-contiguous
    k[1, 32](c)
    k[1, 32](c)
    assert env.launches()[-1] == ("fast", 0, [0x2000, 4, 6, 24, 4])
    assert (ct.float32[:, ::1],) in k.signatures


def test_typestr_other_than_the_specialisation_takes_the_slow_path(env):
    k = Dispatcher(one, None, {})
    k[1, 32](Exporter(0x1000, (10,)))
    k[1, 32](Exporter(0x1000, (10,)))
    k[1, 32](Exporter(0x1000, (10,), typestr="<f8"))
    assert [c[0] for c in env.launches()] == ["slow", "fast", "slow"]
    assert len(k.signatures) == 2 and (ct.float64[::1],) in k.signatures


def test_read_only_array_is_its_own_specialisation(env):
    def reader(a, b):
        b[0] = a[0]
    env.nparams = 6
    k = Dispatcher(reader, None, {})
    ro = Exporter(0x1000, (4,), readonly=True)
    out = Exporter(0x2000, (4,))
    k[1, 32](ro, out)
    k[1, 32](ro, out)
    assert [c[0] for c in env.launches()] == ["slow", "fast"]
    assert k.signatures[0][0].readonly
    k[1, 32](out, out)      # a writable array does not pass the read-only guard
    assert env.launches()[-1][0] == "slow"


def test_zero_size_array_launches_with_a_null_pointer(env):
    k = Dispatcher(one, None, {})
    z = Exporter(0, (0,))
    k[1, 32](z)
    k[1, 32](z)
    assert [c[2] for c in env.launches()] == [[0, 0, 4], [0, 0, 4]]


def test_exporter_on_another_stream_is_waited_for_on_the_launch_stream(env):
    k = Dispatcher(one, None, {})
    x = Exporter(0x1000, (10,), stream=0xABC)
    k[1, 32](x)
    k[1, 32](x)
    # each launch: an event recorded on the exporter's stream, the launch stream (the legacy
    # default, 1 in the interface's words) waiting for it, then the launch
    kinds = [c[:2] for c in env.calls]
    assert kinds == [("record", 0xABC), ("wait", 1), ("slow", 0),
                     ("record", 0xABC), ("wait", 1), ("fast", 0)]


def test_exporter_on_the_launch_stream_is_not_waited_for(env):
    s = cujit.stream()
    k = Dispatcher(one, None, {})
    x = Exporter(0x1000, (10,), stream=s.handle)
    k[1, 32, s](x)
    k[1, 32, s](x)
    x.stream = None             # None: no synchronisation needed
    k[1, 32, s](x)
    x.stream = 1                # the default stream is another stream than ``s``
    k[1, 32, s](x)
    assert [c[0] for c in env.calls] == ["slow", "fast", "fast", "record", "wait", "fast"]
    assert env.calls[3:5] == [("record", 1), ("wait", s.handle)]


def test_exporter_default_stream_matches_a_default_stream_launch(env):
    k = Dispatcher(one, None, {})
    x = Exporter(0x1000, (10,), stream=1)
    k[1, 32](x)
    k[1, 32](x)
    assert [c[0] for c in env.calls] == ["slow", "fast"]


def test_sync_setting_off_skips_the_wait(env, monkeypatch):
    monkeypatch.setattr(config, "CUDA_ARRAY_INTERFACE_SYNC", False)
    k = Dispatcher(one, None, {})
    x = Exporter(0x1000, (10,), stream=0xABC)
    k[1, 32](x)
    k[1, 32](x)
    assert [c[0] for c in env.calls] == ["slow", "fast"]


def test_stream_zero_is_refused_on_both_paths(env):
    k = Dispatcher(one, None, {})
    with pytest.raises(ValueError, match="forbids"):
        k[1, 32](Exporter(0x1000, (10,), stream=0))
    x = Exporter(0x1000, (10,), stream=5)
    k[1, 32](x)
    k[1, 32](x)
    x.stream = 0
    with pytest.raises(ValueError, match="forbids"):
        k[1, 32](x)
    assert [c[0] for c in env.launches()] == ["slow", "fast"]


def test_malformed_interface_after_the_fast_path_gets_the_slow_paths_error(env):
    k = Dispatcher(one, None, {})
    x = Exporter(0x1000, (10,))
    k[1, 32](x)
    k[1, 32](x)
    x.shape = "ten"
    with pytest.raises(ValueError, match="malformed __cuda_array_interface__"):
        k[1, 32](x)


def test_negative_extent_after_the_fast_path_is_refused_not_packed(env):
    k = Dispatcher(one, None, {})
    x = Exporter(0x1000, (10,))
    k[1, 32](x)
    k[1, 32](x)
    x.shape = (-3,)
    with pytest.raises(ValueError, match="negative"):
        k[1, 32](x)
    assert len(env.launches()) == 2


def test_v2_array_with_dlpack_gets_the_handshake_on_the_launch_stream(env):
    dev = cujit.device_array(10, np.float32)
    t = TorchLike(dev)
    s = cujit.stream()
    k = Dispatcher(one, None, {})
    k[1, 32](t)
    k[1, 32](t)
    k[1, 32, s](t)
    k[1, 32, s](t)
    # a new configuration reuses the fast path made for these arguments
    assert [c[0] for c in env.launches()] == ["slow", "fast", "fast", "fast"]
    assert t.handshakes == [1, 1, s.handle, s.handle]
    assert env.launches()[1][2] == [dev.device_ctypes_pointer.value, 10, 4]


def test_v2_array_with_dlpack_and_sync_off_skips_the_handshake(env, monkeypatch):
    monkeypatch.setattr(config, "CUDA_ARRAY_INTERFACE_SYNC", False)
    dev = cujit.device_array(10, np.float32)
    t = TorchLike(dev)
    k = Dispatcher(one, None, {})
    k[1, 32](t)
    k[1, 32](t)
    assert t.handshakes == [-1]         # the slow path's import asks for no ordering
    assert [c[0] for c in env.launches()] == ["slow", "fast"]


def test_foreign_and_device_arrays_mix_with_scalars(env):
    env.nparams = 7

    def axpy(a, b, x, n):
        b[0] = a[0] * x + n
    k = Dispatcher(axpy, None, {})
    d = cujit.device_array(4, np.float32)
    x = Exporter(0x1000, (4,))
    k[1, 32](x, d, 2.0, 3)
    k[1, 32](x, d, 2.0, 3)
    last = env.launches()[-1]
    assert last[0] == "fast"
    assert last[2][:6] == [0x1000, 4, 4, d.device_ctypes_pointer.value, 4, 4]


def test_foreign_arrays_give_their_values_on_the_simulator():
    # no driver double: the simulator runs the kernel on the exporter's memory
    src = cujit.to_device(np.arange(6, dtype=np.float32))
    dst = cujit.device_array(6, np.float32)

    class View:
        def __init__(self, dev):
            self.dev = dev

        @property
        def __cuda_array_interface__(self):
            return self.dev.__cuda_array_interface__

    def copy(a, b):
        i = cujit.grid(1)
        if i < a.size:
            b[i] = a[i] * 2
    k = cujit.jit(copy)
    for _ in range(2):
        k[1, 8](View(src), View(dst))
    np.testing.assert_array_equal(dst.copy_to_host(), np.arange(6, dtype=np.float32) * 2)


def test_per_thread_default_stream_launch_matches_an_exporter_on_stream_2(env, monkeypatch):
    monkeypatch.setattr(config, "CUDA_PER_THREAD_DEFAULT_STREAM", True)
    k = Dispatcher(one, None, {})
    x = Exporter(0x1000, (10,), stream=2)
    k[1, 32](x)
    k[1, 32](x)
    x.stream = 1            # the legacy default stream is another stream then
    k[1, 32](x)
    assert [c[:2] for c in env.calls] == [("slow", 0), ("fast", 0), ("record", 1),
                                          ("wait", 2), ("fast", 0)]


class DLPackOnly:
    """A cuda.core-like exporter: ``__dlpack__`` only; records the consumer streams."""

    def __init__(self, dev):
        self.dev, self.handshakes = dev, []

    def __dlpack__(self, stream=None, max_version=None):
        self.handshakes.append(stream)
        return self.dev.__dlpack__(stream=-1, max_version=max_version)

    def __dlpack_device__(self):
        return self.dev.__dlpack_device__()


def test_dlpack_only_exporter_takes_the_fast_path_with_a_fresh_import(env):
    s = cujit.stream()
    k = Dispatcher(one, None, {})
    a, b = cujit.device_array(10, np.float32), cujit.device_array(5, np.float32)
    x = DLPackOnly(a)
    k[1, 32](x)
    k[1, 32, s](x)
    x.dev = b                       # the exporter now holds other memory
    k[1, 32](x)
    assert [c[0] for c in env.launches()] == ["slow", "fast", "fast"]
    assert env.launches()[2][2] == [b.device_ctypes_pointer.value, 5, 4]
    assert x.handshakes == [1, s.handle, 1]


def test_dlpack_only_exporter_of_another_dtype_takes_the_slow_path(env):
    k = Dispatcher(one, None, {})
    k[1, 32](DLPackOnly(cujit.device_array(4, np.float32)))
    k[1, 32](DLPackOnly(cujit.device_array(4, np.float64)))
    assert [c[0] for c in env.launches()] == ["slow", "slow"]
    assert len(k.signatures) == 2


def test_record_dtype_foreign_array_always_takes_the_slow_path(env):
    def noop(a):
        pass
    rec = np.dtype([("a", np.int32), ("b", np.float32)])
    k = Dispatcher(noop, None, {})

    class RecordExporter(Exporter):
        @property
        def __cuda_array_interface__(self):
            return dict(Exporter.__cuda_array_interface__.fget(self), descr=rec.descr)
    r = RecordExporter(0x1000, (4,), typestr=rec.str)
    k[1, 32](r)
    k[1, 32](r)
    assert [c[0] for c in env.launches()] == ["slow", "slow"]
    assert env.launches()[1][2] == [0x1000, 4, 8]


def sized(a, n):
    tmp = cujit.local.array(n, cujit.float32)
    for j in range(n):
        tmp[j] = j
    a[0] = tmp[n - 1]


def test_foreign_array_with_a_launch_sized_local_array_guards_the_value(env):
    env.nparams = 4
    k = Dispatcher(sized, None, {})
    x = Exporter(0x1000, (10,))
    for n in (2, 2, 3, 3, 2):
        k[1, 32](x, n)
    assert [c[0] for c in env.launches()] == ["slow", "fast", "slow", "fast", "fast"]
    assert [c[2][3] for c in env.launches()] == [2, 2, 3, 3, 2]


def optional_copy(a, b=None):
    if b is not None:
        a[0] = b[0]
    else:
        a[0] = 2.0


def test_none_argument_packs_nothing_and_the_fast_path_guards_its_type(env):
    k = Dispatcher(optional_copy, None, {})
    x, y = Exporter(0x1000, (10,)), Exporter(0x2000, (5,))
    for args in ((x,), (x, None), (x, y), (x, y), (x,)):
        env.nparams = 3 if len(args) == 1 or args[1] is None else 6
        k[1, 32](*args)
    assert [c[0] for c in env.launches()] == ["slow", "fast", "slow", "fast", "fast"]
    assert [c[2] for c in env.launches()] == [[0x1000, 10, 4]] * 2 + \
        [[0x1000, 10, 4, 0x2000, 5, 4]] * 2 + [[0x1000, 10, 4]]
    assert sorted(str(s[1]) for s in k.signatures) == ["array(float32, 1d, C)", "none"]


# ---- PyTorch tensors: read through their own attributes on the fast path ----------------------
class _FakeTorchC:
    """The two C calls of ``torch._C`` the fast path reads."""

    def __init__(self):
        self.raw_stream, self.device, self.stream_reads = 0, 0, 0

    def _cuda_getCurrentRawStream(self, device):
        self.stream_reads += 1
        return self.raw_stream

    def _cuda_getDevice(self):
        return self.device


class _Dtype:
    def __init__(self, name):
        self.name, self.is_complex = name, name.startswith("complex")


class Tensor:
    """Enough of a CUDA ``torch.Tensor`` over a cujit device array: its attributes, a v2
    interface and ``__dlpack__`` (which records the streams it was asked to order for and
    raises BufferError where PyTorch's does); counts interface reads."""

    def __init__(self, dev, dtype="float32"):
        self.dev, self.handshakes, self.cai_reads = dev, [], 0
        self.dtype, self.requires_grad, self.layout = _DTYPES[dtype], False, _STRIDED
        self.device_index, self.conj = 0, False

    def data_ptr(self):
        if self.layout is not _STRIDED:         # as torch's sparse tensors
            raise RuntimeError("Cannot access data pointer of Tensor that doesn't have storage")
        return self.dev.device_ctypes_pointer.value

    @property
    def shape(self):
        return tuple(self.dev.shape)

    def stride(self):
        return tuple(s // self.dev.dtype.itemsize for s in self.dev.strides)

    def element_size(self):
        return self.dev.dtype.itemsize

    def get_device(self):
        return self.device_index

    def is_contiguous(self):
        return self.dev.is_c_contiguous()

    def is_conj(self):
        return self.conj

    @property
    def __cuda_array_interface__(self):
        self.cai_reads += 1
        d = dict(self.dev.__cuda_array_interface__)
        d.pop("stream", None)
        d["version"] = 2
        return d

    def __dlpack__(self, stream=None, max_version=None):
        if self.requires_grad:
            raise BufferError("Can't export tensors that require gradient")
        self.handshakes.append(stream)
        return self.dev.__dlpack__(stream=-1, max_version=max_version)

    def __dlpack_device__(self):
        return self.dev.__dlpack_device__()


Tensor.__module__ = "torch"
_DTYPES = {n: _Dtype(n) for n in ("float32", "float64", "complex64")}
_STRIDED = object()


@pytest.fixture
def torch(env, monkeypatch):
    import sys
    import types
    mod = types.ModuleType("torch")
    mod.Tensor, mod.strided, mod._C = Tensor, _STRIDED, _FakeTorchC()
    monkeypatch.setitem(sys.modules, "torch", mod)
    return mod


def test_torch_tensor_fast_path_reads_no_interface_and_makes_no_capsule(env, torch):
    dev = cujit.device_array(10, np.float32)
    t = Tensor(dev)
    k = Dispatcher(one, None, {})
    k[1, 32](t)
    reads, shakes = t.cai_reads, list(t.handshakes)
    for _ in range(3):
        k[1, 32](t)
    assert [c[0] for c in env.launches()] == ["slow", "fast", "fast", "fast"]
    assert env.launches()[-1][2] == [dev.device_ctypes_pointer.value, 10, 4]
    assert (t.cai_reads, t.handshakes) == (reads, shakes)
    # torch's current stream is the legacy default, as the launch's: nothing to order
    assert not [c for c in env.calls if c[0] in ("record", "wait")]
    assert torch._C.stream_reads == 3


def test_torch_tensor_on_another_current_stream_is_waited_for(env, torch):
    t = Tensor(cujit.device_array(10, np.float32))
    s = cujit.stream()
    k = Dispatcher(one, None, {})
    k[1, 32](t)
    env.calls.clear()
    torch._C.raw_stream = 0xBEE            # torch.cuda.set_stream(...) elsewhere
    k[1, 32](t)
    torch._C.raw_stream = s.handle          # the launch's own stream: no wait
    k[1, 32, s](t)
    torch._C.raw_stream = 0                 # torch's default stream vs a launch on ``s``
    k[1, 32, s](t)
    assert [c[:2] for c in env.calls] == [
        ("record", 0xBEE), ("wait", 1), ("fast", 0), ("fast", s.handle),
        ("record", 1), ("wait", s.handle), ("fast", s.handle)]


def test_torch_tensor_with_sync_off_orders_nothing(env, torch, monkeypatch):
    monkeypatch.setattr(config, "CUDA_ARRAY_INTERFACE_SYNC", False)
    t = Tensor(cujit.device_array(10, np.float32))
    torch._C.raw_stream = 0xBEE
    k = Dispatcher(one, None, {})
    k[1, 32](t)
    k[1, 32](t)
    assert [c[0] for c in env.calls] == ["slow", "fast"] and torch._C.stream_reads == 0


def test_torch_tensor_strides_are_packed_in_bytes(env, torch):
    env.nparams = 5

    def k2(a):
        a[0, 0] = 1.0
    k = Dispatcher(k2, None, {})
    base = cujit.device_array((4, 12), np.float32)
    t = Tensor(base[:, ::2])
    k[1, 32](t)
    k[1, 32](t)
    assert env.launches()[-1] == ("fast", 0, [base.device_ctypes_pointer.value, 4, 6, 48, 8])
    assert k.signatures == [(ct.float32[:, :],)]


@pytest.mark.parametrize("change", ["requires_grad", "conj", "device", "dtype", "layout",
                                    "contiguity"])
def test_torch_tensor_the_slow_path_would_treat_otherwise_leaves_the_fast_path(
        env, torch, change):
    env.nparams = 5

    def k2(a):
        a[0, 0] = 1.0
    k = Dispatcher(k2, None, {})
    kind = "complex64" if change == "conj" else "float32"    # only complex tensors conjugate
    t = Tensor(cujit.device_array((4, 6), kind), kind)
    k[1, 32](t)
    k[1, 32](t)
    if change == "requires_grad":
        t.requires_grad = True
    elif change == "conj":
        t.conj = True
    elif change == "device":
        t.device_index = 1
    elif change == "dtype":
        t.dtype = _DTYPES["float64"]
    elif change == "layout":
        t.layout = object()                 # torch.sparse_coo
    else:
        t.dev = cujit.device_array((4, 12), np.float32)[:, ::2]
    if change == "requires_grad":
        with pytest.raises(BufferError):    # the slow path's import refuses it, as torch's
            k[1, 32](t)
    else:
        k[1, 32](t)
    want = [] if change == "requires_grad" else ["slow"]
    assert [c[0] for c in env.launches()] == ["slow", "fast"] + want


def test_torch_tensors_of_one_launch_share_one_wait(env, torch):
    a, b = (Tensor(cujit.device_array(10, np.float32)) for _ in range(2))
    k = Dispatcher(two, None, {})
    k[1, 32](a, b)
    env.calls.clear()
    torch._C.raw_stream = 0xBEE
    k[1, 32](a, b)
    assert [c[:2] for c in env.calls] == [("record", 0xBEE), ("wait", 1), ("fast", 0)]
    assert torch._C.stream_reads == 1


# -- cuda.core objects (stand-ins: tests/cuda_core_standins.py) ------------------------------
def test_cuda_core_buffer_takes_the_fast_path_with_its_bytes(env):
    from cuda_core_standins import Buffer

    def poke(b):
        b[0] = 255
    k = Dispatcher(poke, None, {})
    a, b = cujit.device_array(10, np.float32), cujit.device_array(3, np.uint8)
    k[1, 32](Buffer.over(a))
    k[1, 32](Buffer.over(a))
    k[1, 32](Buffer.over(b))        # another Buffer of the same class: read afresh
    assert [c[0] for c in env.launches()] == ["slow", "fast", "fast"]
    assert env.launches()[1][2] == [a.device_ctypes_pointer.value, 40, 1]
    assert env.launches()[2][2] == [b.device_ctypes_pointer.value, 3, 1]
    assert k.signatures == [(ct.uint8[::1],)]
    assert not [c for c in env.calls if c[0] in ("record", "wait", "sync")]


def test_cuda_core_view_takes_the_fast_path_and_packs_byte_strides(env):
    from cuda_core_standins import StridedMemoryView as SMV
    k = Dispatcher(one, None, {})
    a = cujit.device_array((4, 6), np.float32)
    k[1, 32](SMV.from_cuda_array_interface(a[:, ::2]))
    k[1, 32](SMV.from_cuda_array_interface(a[1:, 1::2]))
    assert [c[0] for c in env.launches()] == ["slow", "fast"]
    base = a.device_ctypes_pointer.value
    assert env.launches()[1][2][:1] == [base + 24 + 4]
    assert k.signatures == [(ct.float32[:, :],)]


def test_cuda_core_view_of_another_layout_or_dtype_takes_the_slow_path(env):
    from cuda_core_standins import StridedMemoryView as SMV
    k = Dispatcher(one, None, {})
    a = cujit.device_array(8, np.float32)
    k[1, 32](SMV.from_cuda_array_interface(a))
    k[1, 32](SMV.from_cuda_array_interface(a[::2]))
    k[1, 32](SMV.from_cuda_array_interface(cujit.device_array(8, np.float64)))
    ro = SMV.from_cuda_array_interface(a)
    ro.readonly = True
    with pytest.raises(cujit.TypingError):     # typed read-only: the write is refused
        k[1, 32](ro)
    assert [c[0] for c in env.launches()] == ["slow", "slow", "slow"]
    assert len(k.signatures) == 3


def test_closed_cuda_core_buffer_fails_the_fast_path_and_is_refused(env):
    from cuda_core_standins import Buffer

    def poke(b):
        b[0] = 1
    k = Dispatcher(poke, None, {})
    buf = Buffer.over(cujit.device_array(4, np.uint8))
    k[1, 32](buf)
    buf.close()
    with pytest.raises(ValueError, match="argument 0: .*closed"):
        k[1, 32](buf)
    assert [c[0] for c in env.launches()] == ["slow"]


def test_cuda_core_stream_configuration_is_cached_by_handle_and_keeps_no_stream(env):
    import gc
    import weakref
    from cuda_core_standins import Stream
    k = Dispatcher(one, None, {})
    a = cujit.device_array(4, np.float32)
    inner = cujit.stream()
    s = Stream(inner)
    for _ in range(3):
        k[1, 32, s](a)
    again = Stream(inner)                   # another object for the same CUDA stream
    k[1, 32, again](a)
    assert [c[:2] for c in env.launches()] == [("slow", inner.handle)] + \
        [("fast", inner.handle)] * 3
    assert k[1, 32, s] is k[1, 32, again]
    gone = weakref.ref(inner)
    del s, again, inner
    k[1, 32](a)                             # the kernel's last key no longer names them
    gc.collect()
    assert gone() is None                   # the cache kept neither object nor its stream
