"""The real-driver launch path (slow path, module loading, limits, fast-path installation)
driven through a recording stand-in for CudaDriver, with kernels really compiled to cubin."""
import ctypes
import struct
import threading

import numpy as np
import pytest

import cujit
from cujit import types as ct
from cujit.nvvm import libnvvm as nvvm, linker
from cujit.dispatch.dispatcher import Dispatcher
from cujit.driver.sim import _ATTRIBUTES

pytestmark = [pytest.mark.compile, pytest.mark.sim,
              pytest.mark.skipif(not (nvvm.nvvm_available() and linker.nvjitlink_available()),
                                 reason="libNVVM / nvJitLink wheels not installed")]


class _Bindings:
    """What the launcher takes from ``cuda.bindings.driver``."""

    class CUfunction(int):
        pass

    class CUstream(int):
        pass


class RecordingDriver:
    """Enough of CudaDriver for launches; records every call."""
    is_simulator = False
    function_ref = _Bindings.CUfunction
    stream_ref = _Bindings.CUstream

    def __init__(self, static_shared=0, max_threads=1024):
        self.launches = []
        self.set_attrs = []
        self.static_shared = static_shared
        self.max_threads = max_threads

    def device_attribute(self, ordinal, name):
        return _ATTRIBUTES[name]

    def driver_version(self):
        return 13000

    def func_get_attribute(self, func, name):
        return {"SHARED_SIZE_BYTES": self.static_shared, "NUM_REGS": 17,
                "MAX_THREADS_PER_BLOCK": self.max_threads, "LOCAL_SIZE_BYTES": 0,
                "CONST_SIZE_BYTES": 12}[name]

    def func_set_attribute(self, func, name, value):
        self.set_attrs.append((func, name, value))

    def _params(self, params, n):
        arr = (ctypes.c_void_p * n).from_address(params)
        return [ctypes.string_at(p, 8) for p in arr]

    def launch_kernel(self, func, gx, gy, gz, bx, by, bz, sh, stream, params):
        self.launches.append(("slow", func, (gx, gy, gz), (bx, by, bz), sh, stream,
                              self._params(params, 3)))

    def raw_launch(self, func, gx, gy, gz, bx, by, bz, sh, stream, params, extra):
        self.launches.append(("fast", int(func), (gx, gy, gz), (bx, by, bz), sh, int(stream),
                              self._params(params, 3)))
        return (0,)

    def stream_synchronize(self, handle):
        self.launches.append(("sync", handle))


class FakeModule:
    def __init__(self, image):
        self.image = image

    def get_function(self, name):
        assert name.encode() in self.image
        return 0xF00D


class FakeDevice:
    id = 0
    compute_capability = (9, 0)


class FakeContext:
    device = FakeDevice()
    generation = 0
    closed = False

    def __init__(self):
        self.images = []

    def load_module(self, image):
        self.images.append(image)
        return FakeModule(image)


class FakeArray:
    def __init__(self, ptr, n, dtype=np.float32):
        self._data_ptr, self.shape, self.dtype = ptr, (n,), np.dtype(dtype)
        self.strides, self.ndim, self._layout, self.size = (self.dtype.itemsize,), 1, "C", n


@pytest.fixture
def env(monkeypatch):
    from cujit.runtime import devices
    from cujit import driver
    drv = RecordingDriver()
    ctx = FakeContext()
    monkeypatch.setattr(driver, "get_driver", lambda: drv)
    monkeypatch.setattr(devices, "current_context", lambda: ctx)
    monkeypatch.setattr(devices._tls, "ctx", ctx, raising=False)
    return drv, ctx


def fill(a, x):
    i = cujit.grid(1)
    if i < a.size:
        a[i] = x


def dyn(a):
    s = cujit.shared.array(0, dtype=cujit.float32)
    s[0] = 1.0
    a[0] = s[0]


def ptr_of(raw):
    return struct.unpack("<Q", raw)[0]


def test_first_launch_compiles_loads_and_installs_fast_path(env):
    drv, ctx = env
    k = Dispatcher(fill, None, {})
    a = FakeArray(0x1000, 10)
    k[1, 32](a, 2.0)
    # the driver reads this PTX's ISA, so its JIT compiles it (faster code than the cubin)
    assert len(ctx.images) == 1 and b".entry" in ctx.images[0] and ctx.images[0].endswith(b"\0")
    (kind, func, g, b, sh, stream, params), = drv.launches
    assert (kind, func, g, b, sh, stream) == ("slow", 0xF00D, (1, 1, 1), (32, 1, 1), 0, 0)
    assert [ptr_of(p) for p in params] == [0x1000, 10, 4]
    assert k.signatures == [(ct.float32[::1], ct.float64)]
    assert k._fast is not None
    b2 = FakeArray(0x2000, 20)
    k[1, 32](b2, 3.0)                                   # the fast path now
    assert drv.launches[-1][0] == "fast"
    assert [ptr_of(p) for p in drv.launches[-1][-1]] == [0x2000, 20, 4]
    assert len(ctx.images) == 1                          # loaded once


def test_other_types_take_the_slow_path_and_get_their_own_fast_path(env):
    drv, ctx = env
    k = Dispatcher(fill, None, {})
    k[1, 32](FakeArray(0x1000, 10), 2.0)
    k[1, 32](FakeArray(0x1000, 10, np.float64), 2.0)
    assert [l[0] for l in drv.launches] == ["slow", "slow"]
    assert len(k.signatures) == 2 and len(ctx.images) == 2
    k[1, 32](FakeArray(0x3000, 10), 2.0)                 # back to the first signature
    k[1, 32](FakeArray(0x3000, 10, np.float64), 2.0)
    assert [l[0] for l in drv.launches[2:]] == ["fast", "fast"]
    assert len(k._fasts) == 2


def test_stream_object_reaches_the_driver(env):
    drv, ctx = env

    class Foreign:
        def __cuda_stream__(self):
            return (0, 0xABC)

    k = Dispatcher(fill, None, {})
    s = Foreign()
    a = FakeArray(0x1000, 10)
    k[2, 64, s](a, 1.0)
    k[2, 64, s](a, 1.0)
    assert drv.launches[0][5] == 0xABC and drv.launches[1][5] == 0xABC
    assert drv.launches[1][0] == "fast"


def test_dynamic_shared_over_48k_raises_function_attribute_once(env):
    drv, ctx = env
    k = Dispatcher(dyn, None, {})
    a = FakeArray(0x1000, 1)
    k[1, 1, 0, 100_000](a)
    k[1, 1, 0, 100_000](a)
    k[1, 1, 0, 1000](a)
    assert drv.set_attrs == [(0xF00D, "MAX_DYNAMIC_SHARED_SIZE_BYTES", 100_000)]
    assert [l[4] for l in drv.launches] == [100_000, 100_000, 1000]


def test_kernel_thread_limit_is_checked_before_the_driver(env):
    drv, ctx = env
    drv.max_threads = 256
    k = Dispatcher(fill, None, {})
    with pytest.raises(ValueError, match="at most 256 threads"):
        k[1, 512](FakeArray(0x1000, 10), 1.0)
    assert drv.launches == []
    k[1, 256](FakeArray(0x1000, 10), 1.0)
    assert len(drv.launches) == 1


def test_static_plus_dynamic_over_optin(env):
    drv, ctx = env
    drv.static_shared = 40_000
    k = Dispatcher(dyn, None, {})
    optin = _ATTRIBUTES["MAX_SHARED_MEMORY_PER_BLOCK_OPTIN"]
    with pytest.raises(ValueError, match=f"40000 static.*MAX_SHARED_MEMORY_PER_BLOCK_OPTIN = {optin}"):
        k[1, 1, 0, optin - 1000](FakeArray(0x1000, 1))
    assert drv.launches == [] and drv.set_attrs == []


def test_int_that_does_not_fit_a_declared_parameter_wraps(env):
    # numba.cuda marshals an integer scalar through ctypes (c_int32(2**40 + 5) == 5): the
    # value wraps modulo 2**bits instead of failing (issue 13)
    drv, ctx = env
    k = Dispatcher(fill, None, {})
    k.compile("void(float32[::1], int32)")
    k._declared = [(ct.float32[::1], ct.int32)]
    k[1, 32](FakeArray(0x1000, 10), 2**40 + 5)     # the wrapped value: test_kl_scalars
    assert [c[0] for c in drv.launches] == ["slow"]
    k[1, 32](FakeArray(0x1000, 10), 7)
    assert len(drv.launches) == 2


def test_context_reset_reloads_the_module(env):
    drv, ctx = env
    k = Dispatcher(fill, None, {})
    a = FakeArray(0x1000, 10)
    k[1, 32](a, 1.0)
    ctx.generation = 1
    k[1, 32](a, 1.0)
    assert [l[0] for l in drv.launches] == ["slow", "slow"] and len(ctx.images) == 2
    k[1, 32](a, 1.0)
    assert drv.launches[-1][0] == "fast"


def test_other_thread_uses_the_slow_path(env):
    drv, ctx = env
    k = Dispatcher(fill, None, {})
    a = FakeArray(0x1000, 10)
    k[1, 32](a, 1.0)
    k[1, 32](a, 1.0)
    from cujit.runtime import devices

    def run():
        devices._tls.ctx = ctx
        k[1, 32](a, 1.0)

    t = threading.Thread(target=run)
    t.start()
    t.join()
    assert [l[0] for l in drv.launches] == ["slow", "fast", "slow"]


def test_new_configuration_reuses_the_fast_path(env):
    drv, ctx = env
    k = Dispatcher(fill, None, {})
    a = FakeArray(0x1000, 10)
    k[1, 32](a, 1.0)
    k[3, 64](a, 1.0)                    # a new configuration, same argument shapes
    assert [l[0] for l in drv.launches] == ["slow", "fast"]
    assert drv.launches[-1][2:4] == ((3, 1, 1), (64, 1, 1))
    drv.max_threads = 128
    k2 = Dispatcher(fill, None, {})
    k2[1, 32](a, 1.0)
    with pytest.raises(ValueError, match="at most 128 threads"):
        k2[1, 256](a, 1.0)               # the fast path is skipped, the full path reports
    assert len(drv.launches) == 3


def test_resource_queries(env):
    drv, ctx = env
    drv.static_shared = 512
    k = Dispatcher(fill, None, {})
    k[1, 32](FakeArray(0x1000, 10), 1.0)
    (sig,) = k.signatures
    assert k.get_regs_per_thread(sig) == 17
    assert k.get_regs_per_thread() == {sig: 17}
    assert k.get_shared_mem_per_block(sig) == 512
    assert k.get_max_threads_per_block("void(float32[::1], float64)") == 1024
    assert k.get_local_mem_per_thread(sig) == 0 and k.get_const_mem_size(sig) == 12
    with pytest.raises(KeyError, match="no compiled signature"):
        k.get_regs_per_thread("void(float64[::1], float64)")


def test_cubin_when_the_driver_cannot_read_the_ptx(env):
    drv, ctx = env
    drv.driver_version = lambda: 12000          # reads PTX ISA <= 8.0; NVVM 13 writes 9.0
    k = Dispatcher(fill, None, {})
    k[1, 32](FakeArray(0x1000, 10), 2.0)
    assert len(ctx.images) == 1 and ctx.images[0][:4] == b"\x7fELF"


def test_cubin_fallback_when_the_ptx_load_fails(env):
    from cujit.driver.errors import CudaAPIError
    drv, ctx = env
    real = ctx.load_module

    def load(image):
        if image[:4] != b"\x7fELF":
            ctx.images.append(image)
            raise CudaAPIError(222, "PTX JIT failed", "cuModuleLoadData")
        return real(image)
    ctx.load_module = load
    k = Dispatcher(fill, None, {})
    k[1, 32](FakeArray(0x1000, 10), 2.0)
    assert [img[:4] == b"\x7fELF" for img in ctx.images] == [False, True]
    assert drv.launches[0][0] == "slow"


def test_readonly_host_array_types_readonly_on_the_driver_path(env, monkeypatch):
    """The device copy of a read-only host array is writable; the kernel must still be typed
    read-only so a write is a TypingError (it was silently dropped on the GPU)."""
    from cujit.dispatch import launcher
    from cujit.frontend.errors import TypingError
    drv, ctx = env
    host = np.arange(10, dtype=np.float32)
    host.flags.writeable = False

    class Copied(FakeArray):
        def copy_to_host(self, ary, stream=0):
            pass

    def convert(i, a, stream):
        if isinstance(a, np.ndarray):
            return Copied(0x1000, a.size), a, False
        return a, None, True
    monkeypatch.setattr(launcher, "convert_arg", convert)
    k = Dispatcher(fill, None, {})
    with pytest.raises(TypingError, match="read-only"):
        k[1, 32](host, 2.0)
    assert drv.launches == [] and ctx.images == []
    k[1, 32](np.zeros(10, np.float32), 2.0)       # a writable one still compiles and launches
    assert len(drv.launches) == 1
