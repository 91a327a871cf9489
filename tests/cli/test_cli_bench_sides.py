"""The benchmark sides' code paths, without a GPU: the cujit side end to end on the
simulator (a smoke run), and the bare side against a fake ``cuda.bindings.driver``."""
import ctypes
import types
import json
import os
import subprocess
import sys

import numpy as np
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BENCH = os.path.join(ROOT, "benchmarks")


@pytest.mark.sim
def test_cujit_side_smoke_run_measures_everything():
    env = dict(os.environ, CUJIT_ENABLE_CUDASIM="1",
               PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    p = subprocess.run([sys.executable, os.path.join(BENCH, "side_cujit.py"), "--quick"],
                       capture_output=True, text=True, env=env, timeout=300, cwd=ROOT)
    assert p.returncode == 0, p.stderr
    doc = json.loads(p.stdout.strip().splitlines()[-1])
    assert doc["smoke"] is True and doc["skipped"] is None
    assert doc["errors"] == {}
    # rows of PyTorch and CuPy arrays are measured on a GPU only (skipped in a smoke run)
    runner_rows = {k for k in _runner().ROWS if "torch" not in k and "cupy" not in k}
    assert set(doc["figures"]) == runner_rows
    assert all(v > 0 for v in doc["figures"].values())


def _runner():
    from cujit.cli import load_bench_runner
    return load_bench_runner()


class _FakeDriver:
    """Just enough of cuda.bindings.driver for side_bare: every call succeeds."""

    class CUmemPool_attribute:
        CU_MEMPOOL_ATTR_RELEASE_THRESHOLD = 1

    def __init__(self):
        self.calls = {}
        self._host = []

    def cuuint64_t(self, v):
        return v

    def __getattr__(self, name):
        if not name.startswith("cu"):
            raise AttributeError(name)

        def call(*args):
            self.calls[name] = self.calls.get(name, 0) + 1
            if name == "cuMemHostAlloc":            # real memory: the side writes to it
                buf = np.zeros(args[0], np.uint8)
                self._host.append(buf)
                return (0, buf.ctypes.data)
            if name == "cuDeviceGetName":
                return (0, b"Fake GPU\x00\x00")
            if name == "cuEventElapsedTime":
                return (0, 0.5)
            if name in ("cuInit", "cuCtxSetCurrent", "cuCtxSynchronize", "cuMemFree",
                        "cuLaunchKernel", "cuMemPoolSetAttribute", "cuMemFreeAsync",
                        "cuStreamSynchronize", "cuStreamDestroy", "cuMemcpyHtoD",
                        "cuMemcpyDtoH", "cuMemFreeHost", "cuEventRecord",
                        "cuEventSynchronize", "cuMemcpyDtoD"):
                return (0,)
            return (0, 0x1000)
        return call


def test_bare_side_runs_every_floor_against_a_fake_driver(monkeypatch):
    monkeypatch.setenv("CUJIT_ENABLE_CUDASIM", "1")          # smoke sizes
    monkeypatch.syspath_prepend(BENCH)
    import side_bare
    from bench_common import Side
    fake = _FakeDriver()
    side = Side("bare", quick=True)
    side_bare.run(side, fake)
    assert side.doc["errors"] == {}
    assert side.doc["device"] == "Fake GPU"
    assert set(side.doc["figures"]) == {
        "launch_1arg_us", "launch_5args_us", "alloc_free_us", "pool_alloc_free_us",
        "to_device_4k_us", "copy_to_host_4k_us", "pinned_array_4k_us",
        "htod_pageable_256m_gbps", "htod_pinned_256m_gbps", "dtoh_pageable_256m_gbps",
        "dtoh_pinned_256m_gbps", "dtod_256m_gbps"}
    assert fake.calls["cuLaunchKernel"] > 0 and fake.calls["cuMemAllocFromPoolAsync"] > 0


def test_bare_kernel_params_point_at_the_values():
    sys.path.insert(0, BENCH)
    try:
        import side_bare
    finally:
        sys.path.remove(BENCH)
    p = side_bare._Params([ctypes.c_uint64(7), ctypes.c_float(2.5)])
    ptrs = (ctypes.c_void_p * 2).from_address(p.address)
    assert ctypes.c_uint64.from_address(ptrs[0]).value == 7
    assert ctypes.c_float.from_address(ptrs[1]).value == 2.5
    assert b".entry empty5" in side_bare.PTX and side_bare.PTX.endswith(b"\x00")


@pytest.mark.compile
def test_bare_ptx_assembles_for_sm90():
    from cujit.nvvm.linker import link_cubin, nvjitlink_available
    assert nvjitlink_available()          # a base dependency: its absence is a failure
    sys.path.insert(0, BENCH)
    try:
        import side_bare
    finally:
        sys.path.remove(BENCH)
    cubin = link_cubin(side_bare.PTX.rstrip(b"\x00").decode(), (9, 0))
    assert cubin[:4] == b"\x7fELF"


class _FakeCupyArray:
    def __init__(self, n, dtype):
        self.host = np.zeros(n, dtype)
        self.data = types.SimpleNamespace(copy_from_device=lambda src, nbytes: None)

    def set(self, src):
        self.host[...] = src

    def get(self, out=None):
        out[...] = self.host
        return out

    def sum(self):
        return self.host.sum()


def _fake_cupy():
    launches = []

    class _Event:
        def record(self):
            pass

        def synchronize(self):
            pass

    class _Module:
        def __init__(self, code):
            assert "empty1" in code and "empty5" in code

        def get_function(self, name):
            return lambda grid, block, args: launches.append((name, len(args)))

    dev = types.SimpleNamespace(id=0, synchronize=lambda: None)
    cuda = types.SimpleNamespace(
        Device=lambda: dev, Event=_Event, get_elapsed_time=lambda a, b: 0.25,
        runtime=types.SimpleNamespace(getDeviceProperties=lambda i: {"name": b"Fake GPU"},
                                      getDeviceCount=lambda: 1))
    cp = types.SimpleNamespace(
        cuda=cuda, float32=np.float32, float16=np.float16, uint8=np.uint8, RawModule=_Module,
        zeros=lambda n, dt: _FakeCupyArray(n, dt), empty=lambda n, dt: _FakeCupyArray(n, dt),
        asarray=lambda h: _FakeCupyArray(h.shape, h.dtype),
        matmul=lambda a, b, out=None: out)
    cupyx = types.SimpleNamespace(empty_pinned=lambda n, dt: np.zeros(n, dt))
    return cp, cupyx, launches


def test_cupy_side_runs_every_figure_against_a_fake_cupy(monkeypatch):
    monkeypatch.setenv("CUJIT_ENABLE_CUDASIM", "1")          # smoke sizes
    monkeypatch.syspath_prepend(BENCH)
    import side_cupy
    from bench_common import Side
    cp, cupyx, launches = _fake_cupy()
    side = Side("cupy", quick=True)
    side_cupy.run(side, cp, cupyx)
    assert side.doc["errors"] == {}
    assert side.doc["device"] == "Fake GPU"
    assert set(side.doc["figures"]) == {
        "launch_1arg_us", "launch_5args_us", "alloc_free_us", "pool_alloc_free_us",
        "to_device_4k_us", "copy_to_host_4k_us", "pinned_array_4k_us", "htod_pageable_256m_gbps",
        "htod_pinned_256m_gbps", "dtoh_pageable_256m_gbps", "dtoh_pinned_256m_gbps",
        "dtod_256m_gbps", "lib_reduce_sum_us", "gemm_wmma_tflops", "gemm_wgmma_tflops"}
    assert ("empty1", 1) in launches and ("empty5", 5) in launches
