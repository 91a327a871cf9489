"""Launch rows shared by the cujit and numba-cuda sides (same public API): foreign arrays,
many arguments, and compile + first launch of a chain of device functions.

``run(side, cuda)`` adds, each a median of host microseconds per asynchronous launch of an
empty 1-block kernel unless said otherwise:

- ``launch_{torch,cupy,cai}_1_us`` / ``..._5args_us``: 1 array, and 3 arrays + 2 scalars, as
  PyTorch tensors, CuPy arrays, or a fake CUDA Array Interface v3 exporter (pure Python, its
  dict built on every access as CuPy does, ``stream: 1``); ``launch_*_over_device_x``: the
  figure over the same launch with the side's own device arrays (``launch_1arg_us`` /
  ``launch_5args_us`` of :mod:`suite`);
- ``as_cuda_array_{torch,cai}_us``: ``cuda.as_cuda_array(obj)``; ``device_array_slice_us``:
  ``d[1:]`` of a device array; ``as_cuda_array_torch_over_slice_x``;
- ``launch_16_scalars_us``, ``launch_16_arrays_us``, ``launch_256_scalars_us``;
- ``compile_chain_{1,8,32}_s``: seconds to compile and launch (then synchronise) a kernel
  calling a chain of N device functions, a fresh source file each time (nothing cached).

A row whose library (PyTorch, CuPy) is missing is left out, not failed.
"""
import importlib.util
import os
import tempfile
import time

import numpy as np

from bench_common import host_us

__all__ = ["run", "FakeCAI"]


class FakeCAI:
    """A CUDA Array Interface v3 exporter over ``dev`` (a device array of the side), built
    anew on every access."""

    def __init__(self, dev):
        self.ptr = dev.device_ctypes_pointer.value
        self.shape = tuple(dev.shape)
        self.typestr = dev.dtype.str
        self.dev = dev          # keeps the memory alive

    @property
    def __cuda_array_interface__(self):
        return {"shape": self.shape, "typestr": self.typestr, "data": (self.ptr, False),
                "strides": None, "version": 3, "stream": 1}


def _load(src, tag, cuda, d):
    """Import generated kernel source from a file in folder ``d`` (kernels are compiled from
    their source file)."""
    path = os.path.join(d, f"{tag}.py")
    with open(path, "w") as f:
        f.write(src)
    spec = importlib.util.spec_from_file_location(f"cujit_bench_{tag}_{os.getpid()}", path)
    mod = importlib.util.module_from_spec(spec)
    mod.cuda = cuda
    spec.loader.exec_module(mod)
    return mod


def _many(cuda, n, kind, d):
    names = ", ".join(f"x{i}" for i in range(n))
    body = "    if cuda.grid(1) == -1:\n        x0[0] = 0.0\n" if kind == "arrays" else \
        "    if cuda.grid(1) == -1:\n        pass\n"
    src = f"@cuda.jit\ndef k({names}):\n{body}"
    return _load(src, f"many_{kind}_{n}", cuda, d).k


def _chain_src(n, salt):
    lines = [f"# chain of {n} device functions ({salt})",
             "@cuda.jit(device=True)", "def f0(x):", "    return x + 1.0"]
    for i in range(1, n):
        lines += ["@cuda.jit(device=True)", f"def f{i}(x):", f"    return f{i - 1}(x) * 0.5 + 1.0"]
    lines += ["@cuda.jit", "def k(a):", f"    a[0] = f{n - 1}(a[0])"]
    return "\n".join(lines) + "\n"


def _compile_chain_s(cuda, n, d):
    a = cuda.device_array(1, np.float32)
    mod = _load(_chain_src(n, time.time_ns()), f"chain_{n}_{time.time_ns()}", cuda, d)
    t0 = time.perf_counter()
    mod.k[1, 1](a)
    cuda.synchronize()
    return time.perf_counter() - t0


def _timed(side, cuda, key, launch, *args):
    launch(*args)
    cuda.synchronize()
    reps = side.reps(20000, 2000, 5)
    warm = side.reps(200, 200, 1)
    return side.measure(key, lambda: host_us(lambda: launch(*args), reps, warm, 500,
                                             cuda.synchronize))


def _ratio(side, key, num, den):
    f = side.doc["figures"]
    if f.get(num) and f.get(den):
        side.measure(key, lambda: f[num] / f[den])


def _foreign(side, cuda, ks, tag, make):
    e1, e5 = ks["empty1"][1, 32], ks["empty5"][1, 32]
    a, b, c = (make(1024) for _ in range(3))
    _timed(side, cuda, f"launch_{tag}_1_us", e1, a)
    _timed(side, cuda, f"launch_{tag}_5args_us", e5, a, b, c, np.float32(2.0), 1024)
    _ratio(side, f"launch_{tag}_1_over_device_x", f"launch_{tag}_1_us", "launch_1arg_us")
    _ratio(side, f"launch_{tag}_5args_over_device_x", f"launch_{tag}_5args_us",
           "launch_5args_us")


def run(side, cuda, ks):
    """Add the rows of the module docstring to ``side`` (kernels ``ks`` of :mod:`kernels`)."""
    with tempfile.TemporaryDirectory(prefix="cujit_bench_") as d:
        _run(side, cuda, ks, d)


def _run(side, cuda, ks, d):
    reps = side.reps(20000, 2000, 5)
    _foreign(side, cuda, ks, "cai",
             lambda n: FakeCAI(cuda.device_array(n, np.float32)))
    try:
        import torch
        has_torch = torch.cuda.is_available() and not side.smoke
    except ImportError:
        has_torch = False
    if has_torch:
        _foreign(side, cuda, ks, "torch",
                 lambda n: torch.zeros(n, dtype=torch.float32, device="cuda"))
        t = torch.zeros(1024, dtype=torch.float32, device="cuda")
        side.measure("as_cuda_array_torch_us",
                     lambda: host_us(lambda: cuda.as_cuda_array(t), reps))
    try:
        import cupy
        has_cupy = not side.smoke and cupy.cuda.runtime.getDeviceCount() > 0
    except Exception:       # not installed, or no usable device for it
        has_cupy = False
    if has_cupy:
        _foreign(side, cuda, ks, "cupy", lambda n: cupy.zeros(n, dtype=cupy.float32))
    fake = FakeCAI(cuda.device_array(1024, np.float32))
    side.measure("as_cuda_array_cai_us", lambda: host_us(lambda: cuda.as_cuda_array(fake), reps))
    dev = cuda.device_array(1024, np.float32)
    side.measure("device_array_slice_us", lambda: host_us(lambda: dev[1:], reps))
    _ratio(side, "as_cuda_array_torch_over_slice_x", "as_cuda_array_torch_us",
           "device_array_slice_us")
    try:
        k16s, k256 = _many(cuda, 16, "scalars", d), _many(cuda, 256, "scalars", d)
        k16a = _many(cuda, 16, "arrays", d)
    except Exception as exc:
        side.doc["errors"]["launch_16_scalars_us"] = f"{type(exc).__name__}: {exc}"
        return
    arrays = [cuda.device_array(16, np.float32) for _ in range(16)]
    _timed(side, cuda, "launch_16_scalars_us", k16s[1, 32], *range(16))
    _timed(side, cuda, "launch_16_arrays_us", k16a[1, 32], *arrays)
    _timed(side, cuda, "launch_256_scalars_us", k256[1, 32], *range(256))
    for n in (1, 8, 32):
        side.measure(f"compile_chain_{n}_s", lambda n=n: _compile_chain_s(cuda, n, d))
