"""Host-side launch overhead without a GPU: cujit's launch path against a driver double
whose ``cuLaunchKernel`` returns success at once (kernels are really compiled to PTX by
libNVVM; nothing runs).  What it times is cujit's own Python per launch: the configuration
lookup, the fast path's guards, reading a foreign array's ``__cuda_array_interface__``, the
CUDA Array Interface v3 stream rule and packing.

    PYTHONPATH=. python benchmarks/host_launch.py [--reps N] [--json]

Rows: ``empty``, 1 device array, 1 / 3+2 foreign CAI v3 arrays (a fake exporter that builds
its dict per access, as CuPy does), 1 / 3+2 CAI v2 + ``__dlpack__`` arrays (a PyTorch-like
fake: the DLPack handshake orders the producer's stream), 1 DLPack-only array, 16 scalars,
16 arrays, 256 scalars; ``as_cuda_array`` of the fakes against a device-array slice.  Medians of
microseconds.  The driver double lives here, never in the package.
"""
import argparse
import ctypes
import json
import os
import sys
import time

os.environ.setdefault("CUJIT_ENABLE_CUDASIM", "1")

import numpy as np      # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_common import median     # noqa: E402

import cujit            # noqa: E402
from cujit.driver.sim import _ATTRIBUTES     # noqa: E402


class NullDriver:
    """The driver calls a launch makes succeed and do nothing; other calls (device counts,
    memory) are the simulated driver's."""
    is_simulator = False

    class function_ref(int):
        pass

    class stream_ref(int):
        pass

    def __init__(self, real):
        self._real = real
        self.waits = 0

    def __getattr__(self, name):
        return getattr(self._real, name)

    def device_attribute(self, ordinal, name):
        return _ATTRIBUTES[name]

    def driver_version(self):
        return 13000

    def func_get_attribute(self, func, name):
        return {"SHARED_SIZE_BYTES": 0, "MAX_THREADS_PER_BLOCK": 1024}[name]

    def func_set_attribute(self, func, name, value):
        pass

    def launch_kernel(self, *args):
        pass

    def raw_launch(self, *args):
        return (0,)

    def stream_synchronize(self, handle):
        pass

    def event_create(self, timing=True):
        return 1

    def event_record(self, ev, stream):
        pass

    def stream_wait_event(self, stream, ev):
        self.waits += 1

    def event_destroy(self, ev):
        pass


class _Module:
    def get_function(self, name):
        return 0xF00D


class _Device:
    id = 0
    compute_capability = (9, 0)


class NullContext:
    """Loads modules as nothing; anything else (external streams, memory bookkeeping) is the
    simulator's context's."""
    device = _Device()
    generation = 0
    closed = False

    def __init__(self, real):
        self._real = real

    def __getattr__(self, name):
        return getattr(self._real, name)

    def load_module(self, image):
        return _Module()


class CaiV3:
    """A CuPy-like exporter: CAI v3, its dict built on every access."""

    def __init__(self, ptr, n, stream=1):
        self.ptr, self.n, self.stream = ptr, n, stream

    @property
    def __cuda_array_interface__(self):
        return {"shape": (self.n,), "typestr": "<f4", "data": (self.ptr, False),
                "strides": None, "version": 3, "stream": self.stream}


class TorchLike:
    """A PyTorch-like exporter: CAI v2 (no ``stream``) plus ``__dlpack__``."""

    def __init__(self, dev):
        self.dev = dev

    @property
    def __cuda_array_interface__(self):
        return {"shape": (self.dev.shape[0],), "typestr": "<f4",
                "data": (self.dev.device_ctypes_pointer.value, False), "strides": None,
                "version": 2}

    def __dlpack__(self, stream=None, max_version=None):
        return self.dev.__dlpack__(stream=stream, max_version=max_version)

    def __dlpack_device__(self):
        return self.dev.__dlpack_device__()


class DLPackOnly:
    """A cuda.core-like exporter: ``__dlpack__`` only (cujit's own exporter underneath)."""

    def __init__(self, dev):
        self.dev = dev

    def __dlpack__(self, stream=None, max_version=None):
        return self.dev.__dlpack__(stream=stream, max_version=max_version)

    def __dlpack_device__(self):
        return self.dev.__dlpack_device__()


def empty0():
    pass


def empty1(a):
    pass


def empty5(a, b, c, x, n):
    pass


def _kernel_n(nargs, prefix, folder):
    # kernels are compiled from their source file, so the generated one gets a file
    names = ", ".join(f"{prefix}{i}" for i in range(nargs))
    src = f"def k({names}):\n    pass\n"
    path = os.path.join(folder, f"k_{prefix}_{nargs}.py")
    with open(path, "w") as f:
        f.write(src)
    ns = {}
    exec(compile(src, path, "exec"), ns)
    return ns["k"]


def us(fn, reps):
    for _ in range(min(reps, 200)):
        fn()
    clock = time.perf_counter_ns
    out = []
    for _ in range(reps):
        t0 = clock()
        fn()
        out.append(clock() - t0)
    return median(out) / 1e3


def measure(reps):
    """``{row: microseconds}`` of every row (see the module docstring)."""
    import tempfile
    with tempfile.TemporaryDirectory(prefix="cujit_host_launch_") as folder:
        return _measure(reps, folder)


def _measure(reps, folder):
    from cujit.dispatch.dispatcher import Dispatcher
    from cujit.runtime import devices
    from cujit import driver
    a = cujit.device_array(1024, np.float32)
    b = cujit.device_array(1024, np.float32)
    c = cujit.device_array(1024, np.float32)
    arrays16 = [cujit.device_array(16, np.float32) for _ in range(16)]
    ta, tb, tc = TorchLike(a), TorchLike(b), TorchLike(c)
    da = DLPackOnly(a)
    drv, ctx = NullDriver(driver.get_driver()), NullContext(devices.current_context())
    from cujit.arrays import _runtime
    from cujit.runtime import api  # noqa: F401  (binds current_context by name on import)
    saved = (driver.get_driver, devices.current_context, getattr(devices._tls, "ctx", None),
             _runtime._driver, _runtime._current_context)
    driver.get_driver = lambda: drv
    devices.current_context = lambda: ctx
    devices._tls.ctx = ctx
    # the arrays layer keeps the functions it resolved: point them at the doubles too
    _runtime._driver, _runtime._current_context = drv, lambda: ctx
    try:
        k0, k1, k5 = (Dispatcher(f, None, {}) for f in (empty0, empty1, empty5))
        k16s = Dispatcher(_kernel_n(16, "x", folder), None, {})
        k16a = Dispatcher(_kernel_n(16, "a", folder), None, {})
        k256 = Dispatcher(_kernel_n(256, "x", folder), None, {})
        f1, f5 = k1[1, 32], k5[1, 32]
        ca, cb, cc = CaiV3(0x1000, 1024), CaiV3(0x2000, 1024), CaiV3(0x3000, 1024)
        alpha, n = np.float32(2.0), 1024
        s16 = tuple(range(16))
        s256 = tuple(range(256))
        rows = {
            "empty": lambda: k0[1, 32](),
            "device_array_1": lambda: f1(a),
            "device_arrays_3_scalars_2": lambda: f5(a, b, c, alpha, n),
            "cai_v3_1": lambda: f1(ca),
            "cai_v3_3_scalars_2": lambda: f5(ca, cb, cc, alpha, n),
            "cai_v2_dlpack_1": lambda: f1(ta),
            "cai_v2_dlpack_3_scalars_2": lambda: f5(ta, tb, tc, alpha, n),
            "dlpack_only_1": lambda: f1(da),
            "scalars_16": lambda: k16s[1, 32](*s16),
            "arrays_16": lambda: k16a[1, 32](*arrays16),
            "scalars_256": lambda: k256[1, 32](*s256),
        }
        out = {name: us(fn, reps) for name, fn in rows.items()}
    finally:
        driver.get_driver, devices.current_context = saved[0], saved[1]
        devices._tls.ctx = saved[2]
        _runtime._driver, _runtime._current_context = saved[3], saved[4]
    out["as_cuda_array_cai_v3"] = us(lambda: cujit.as_cuda_array(ca), reps)
    out["as_cuda_array_cai_v2"] = us(lambda: cujit.as_cuda_array(ta), reps)
    out["device_array_slice"] = us(lambda: a[1:], reps)
    return out


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--reps", type=int, default=5000)
    p.add_argument("--json", action="store_true")
    ns = p.parse_args(argv)
    out = measure(ns.reps)
    if ns.json:
        print(json.dumps(out))
    else:
        for k, v in out.items():
            print(f"{k:32s} {v:8.2f} us")


if __name__ == "__main__":
    main()
