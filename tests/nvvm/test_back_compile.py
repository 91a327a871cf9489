"""Python kernels → NVVM IR → PTX → sm_90 cubin through the dispatcher (no GPU needed)."""
import math
import struct

import numpy as np
import pytest

import cujit as cuda
from cujit import float32, int32
from cujit import types as ct
from cujit.nvvm import libnvvm as nvvm, linker
from cujit.frontend.errors import CompileError
from cujit.dispatch.dispatcher import Dispatcher

pytestmark = [pytest.mark.compile,
              pytest.mark.skipif(not (nvvm.nvvm_available() and linker.nvjitlink_available()),
                                 reason="libNVVM / nvJitLink wheels not installed")]


def axpy(out, a, x, y):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = a * x[i] + y[i]


def block_sum(x, out):
    buf = cuda.shared.array(128, dtype=float32)
    t = cuda.threadIdx.x
    buf[t] = x[cuda.grid(1)]
    cuda.syncthreads()
    if t == 0:
        s = float32(0)
        for j in range(128):
            s += buf[j]
        out[cuda.blockIdx.x] = s


W = np.array([1.0, 2.0, 3.0], dtype=np.float32)


def weighted(x, out):
    w = cuda.const.array_like(W)
    i = cuda.grid(1)
    if i < out.size:
        out[i] = w[i % 3] * x[i]


def sines(x):
    i = cuda.grid(1)
    if i < x.size:
        x[i] = math.sin(x[i])


def too_much_shared(out):
    s = cuda.shared.array((2, 7000), float32)
    s[0, 0] = 1.0
    out[0] = s[0, 0]


def dyn(out):
    f = cuda.shared.array(0, dtype=float32)
    f[0] = 1.0
    out[0] = f[0]


SIG_AXPY = "void(float32[::1], float32, float32[::1], float32[::1])"


def is_sm90_cubin(data):
    e_flags = struct.unpack_from("<I", data, 48)[0]
    return data[:4] == b"\x7fELF" and 90 in ((e_flags >> 8) & 0xFF, e_flags & 0xFF)


def test_compile_signature_to_ptx_and_cubin():
    k = Dispatcher(axpy, None, {})
    spec = k.compile(SIG_AXPY)
    assert spec.argtypes == (ct.float32[::1], ct.float32, ct.float32[::1], ct.float32[::1])
    assert is_sm90_cubin(spec.cubin)
    assert spec.name.encode() in spec.cubin
    ptx = k.inspect_asm(spec.argtypes)
    assert f".visible .entry {spec.name}(" in ptx
    header = ptx.split(f".entry {spec.name}(")[1].split(")")[0]
    assert header.count(".param") == 3 * 3 + 1     # 3 arrays × (data, shape, stride) + a
    assert "ld.global.f32" in ptx and "st.global.f32" in ptx
    assert k.inspect_asm(SIG_AXPY) == ptx
    assert list(k.inspect_asm()) == [spec.argtypes]
    llvm = k.inspect_llvm(spec.argtypes)
    assert "!nvvmir.version" in llvm and f'define void @"{spec.name}"(' in llvm
    assert k.signatures == [spec.argtypes]
    assert k.compile(SIG_AXPY) is spec                # in-memory cache per signature


def test_shared_memory_and_barrier_in_ptx():
    k = Dispatcher(block_sum, None, {})
    spec = k.compile("void(float32[::1], float32[::1])")
    ptx = spec.ptx
    assert "bar.sync" in ptx and "ld.shared.f32" in ptx and "st.shared.f32" in ptx
    assert spec.static_shared_bytes == 128 * 4
    assert is_sm90_cubin(spec.cubin)


def test_constant_array_in_ptx():
    k = Dispatcher(weighted, None, {})
    spec = k.compile("void(float32[::1], float32[::1])")
    assert ".const" in spec.ptx and "ld.const" in spec.ptx
    assert spec.const_bytes == W.nbytes


def test_math_uses_libdevice():
    k = Dispatcher(sines, None, {})
    ptx = k.compile("void(float64[::1])").ptx
    assert "__nv_sin" not in ptx            # linked from libdevice and inlined
    assert "__cudart_sin_cos_coeffs" in ptx  # libdevice's polynomial table came along
    assert "__nv_" not in Dispatcher(axpy, None, {}).compile(SIG_AXPY).ptx


def test_dynamic_shared_is_extern():
    k = Dispatcher(dyn, None, {})
    spec = k.compile("void(float32[::1])")
    assert spec.uses_dynamic_shared and spec.static_shared_bytes == 0
    assert ".extern .shared" in spec.ptx


def test_case5_static_shared_over_limit_at_compile():
    k = Dispatcher(too_much_shared, None, {})
    with pytest.raises(CompileError) as ei:
        k.compile("void(float32[::1])")
    msg = str(ei.value)
    assert "shared memory" in msg and "56000" in msg and "49152" in msg
    assert k.signatures == []


def test_eager_compile_is_deferred_on_the_simulator_only(on_gpu):
    k = cuda.jit(SIG_AXPY)(axpy)
    assert len(k._specs) == (1 if on_gpu else 0)
    assert len(k.signatures) == 1           # declared: listed either way, as numba does
    asm = k.inspect_asm()                   # compiles the declared signatures now
    assert len(asm) == 1 and ".entry" in next(iter(asm.values()))


def test_inspect_unknown_signature():
    k = Dispatcher(axpy, None, {})
    with pytest.raises(KeyError, match="no compiled signature"):
        k.inspect_llvm("void(float64[::1], float64, float64[::1], float64[::1])")


def test_options_reach_the_toolchain():
    plain = Dispatcher(axpy, None, {}).compile(SIG_AXPY)
    assert "fma.rn.f32" in plain.ptx and ".ftz" not in plain.ptx
    k = Dispatcher(axpy, None, {"fastmath": True, "max_registers": 32, "lineinfo": True})
    spec = k.compile(SIG_AXPY)
    assert "fma.rn.ftz.f32" in spec.ptx
    assert is_sm90_cubin(spec.cubin)


def test_specialize():
    k = Dispatcher(axpy, None, {})
    a = np.zeros(4, np.float32)
    s = k.specialize(a, np.float32(2), a, a)
    assert s._declared == [(ct.float32[::1], ct.float32, ct.float32[::1], ct.float32[::1])]


def test_llvmlite_backend_end_to_end(monkeypatch):
    monkeypatch.setenv("CUJIT_NVVM_BACKEND", "llvmlite")
    monkeypatch.setattr(nvvm, "_nvvm_state", None)
    try:
        k = Dispatcher(block_sum, None, {})
        spec = k.compile("void(float32[::1], float32[::1])")
        assert "Generated by LLVM NVPTX Back-End" in spec.ptx
        assert "bar.sync" in spec.ptx
        assert is_sm90_cubin(spec.cubin)
    finally:
        monkeypatch.setattr(nvvm, "_nvvm_state", None)


def test_disk_cache(tmp_path, monkeypatch):
    from cujit.nvvm import lowering
    monkeypatch.setenv("CUJIT_CACHE_DIR", str(tmp_path))
    k1 = Dispatcher(axpy, None, {"cache": True})
    s1 = k1.compile(SIG_AXPY)
    files = sorted((tmp_path / "cujit").rglob("*.cj?"), key=lambda f: f.suffix)
    assert [f.suffix for f in files] == [".cjc", ".cji"]     # one data file, one index

    def no_lowering(*a, **k):
        raise AssertionError("compiled again instead of loading the cache")

    monkeypatch.setattr(lowering, "compile_to_llvm", no_lowering)
    k2 = Dispatcher(axpy, None, {"cache": True})
    s2 = k2.compile(SIG_AXPY)
    assert s2.cubin == s1.cubin and s2.ptx == s1.ptx and s2.name == s1.name
    # other options or other types are other entries
    k3 = Dispatcher(axpy, None, {"cache": True, "fastmath": True})
    with pytest.raises(AssertionError, match="compiled again"):
        k3.compile(SIG_AXPY)
    with pytest.raises(AssertionError, match="compiled again"):
        k2.compile("void(float64[::1], float64, float64[::1], float64[::1])")


def test_disk_cache_ignores_corrupt_entries(tmp_path, monkeypatch):
    monkeypatch.setenv("CUJIT_CACHE_DIR", str(tmp_path))
    k1 = Dispatcher(axpy, None, {"cache": True})
    k1.compile(SIG_AXPY)
    (f,) = (tmp_path / "cujit").rglob("*.cjc")
    f.write_bytes(b"not a pickle")
    k2 = Dispatcher(axpy, None, {"cache": True})
    spec = k2.compile(SIG_AXPY)
    assert is_sm90_cubin(spec.cubin)
    assert f.read_bytes()[:1] != b"n"           # rewritten


def test_disk_cache_sees_changed_constant_arrays(tmp_path, monkeypatch):
    from cujit.dispatch import cache
    monkeypatch.setenv("CUJIT_CACHE_DIR", str(tmp_path))
    key1 = cache.cache_key(weighted, (ct.float32[::1],) * 2, {}, (9, 0))
    monkeypatch.setitem(weighted.__globals__, "W", W * 2)
    key2 = cache.cache_key(weighted, (ct.float32[::1],) * 2, {}, (9, 0))
    assert key1 != key2
    assert cache.cache_key(axpy, (), {}, (9, 0)) != cache.cache_key(axpy, (), {}, (8, 0))
    assert cache.cache_key(axpy, (), {"opt": 3}, (9, 0)) != cache.cache_key(axpy, (), {}, (9, 0))


def test_disk_cache_without_source_file():
    from cujit.dispatch import cache
    ns = {}
    exec("def k(a):\n    pass\n", ns)
    assert cache.cache_key(ns["k"], (), {}, (9, 0)) is None
    dc = cache.DiskCache(ns["k"])
    assert dc.load(None) is None and dc.save(None, {"x": 1}) is False


def test_compile_only_without_a_driver(monkeypatch):
    """No usable driver (CudaSupportError): compile for sm_90 with the 48 KiB shared limit."""
    from cujit.runtime import devices
    from cujit.dispatch import dispatcher
    from cujit.driver.errors import CudaSupportError

    def no_driver():
        raise CudaSupportError("no driver here")

    monkeypatch.setattr(devices, "current_context", no_driver)
    assert dispatcher._target() == ((9, 0), None)
    spec = Dispatcher(axpy, None, {}).compile(SIG_AXPY)
    assert spec.cc == (9, 0) and is_sm90_cubin(spec.cubin)
    with pytest.raises(CompileError, match="49152"):
        Dispatcher(too_much_shared, None, {}).compile("void(float32[::1])")


def scale_dev(x, f):
    return x * f


def test_compile_ptx_like_numba():
    from cujit.dispatch import compile_ptx, compile_ptx_for_current_device
    ptx, resty = compile_ptx(axpy, SIG_AXPY)
    assert ".visible .entry" in ptx and ".target sm_90" in ptx and resty is ct.void
    ptx80, _ = compile_ptx(axpy, SIG_AXPY, cc=(8, 0))
    assert ".target sm_80" in ptx80
    dptx, dres = compile_ptx(scale_dev, "float32(float32, float32)", device=True)
    assert ".visible .entry" not in dptx and ".func" in dptx and dres is ct.float32
    cur, _ = compile_ptx_for_current_device(cuda.jit(axpy), SIG_AXPY)
    assert ".visible .entry" in cur


_HIT_SCRIPT = '''
import json, sys
sys.path.insert(0, {src!r})
import cujit as cuda
from kmod import axpy
spec = axpy.compile("void(float32[::1], float32, float32[::1], float32[::1])")
from cujit.nvvm import libnvvm as nvvm, linker
print(json.dumps({{"llvmlite": any(m.startswith("llvmlite") for m in sys.modules),
                  "lowering": "cujit.nvvm.lowering" in sys.modules,
                  "nvvm_loaded": nvvm._nvvm_state is not None,
                  "nvjitlink_loaded": linker._state is not None,
                  "ptx": spec.ptx}}))
'''


def _run_fresh(tmp_path, code):
    import json
    import os
    import subprocess
    import sys
    env = dict(os.environ, CUJIT_CACHE_DIR=str(tmp_path / "cache"))
    env.pop("CUJIT_PREFETCH", None)
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                       timeout=120)
    assert p.returncode == 0, p.stderr[-2000:]
    return json.loads(p.stdout.strip().splitlines()[-1])


def test_disk_cache_hit_in_a_fresh_process_loads_no_compiler(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    (src / "kmod.py").write_text(
        "import cujit as cuda\n\n@cuda.jit(cache=True)\ndef axpy(out, a, x, y):\n"
        "    i = cuda.grid(1)\n    if i < out.size:\n        out[i] = a * x[i] + y[i]\n")
    code = _HIT_SCRIPT.format(src=str(src))
    first = _run_fresh(tmp_path, code)          # compiles and stores
    assert first["lowering"] and first["nvvm_loaded"]
    hit = _run_fresh(tmp_path, code)
    assert hit["ptx"] == first["ptx"]
    assert not hit["llvmlite"] and not hit["lowering"]
    assert not hit["nvvm_loaded"] and not hit["nvjitlink_loaded"]


def test_disk_cache_entry_of_another_toolchain_is_rebuilt(tmp_path, monkeypatch):
    import pickle
    from cujit.dispatch import cache
    from cujit.nvvm import lowering
    monkeypatch.setenv("CUJIT_CACHE_DIR", str(tmp_path))
    Dispatcher(axpy, None, {"cache": True}).compile(SIG_AXPY)
    (f,) = (tmp_path / "cujit").rglob("*.cjc")
    entry = pickle.loads(f.read_bytes())
    assert tuple(entry["toolchain"]) == cache.toolchain()
    entry["toolchain"] = ("nvvm", (1, 0), (12, 0))
    f.write_bytes(pickle.dumps(entry))
    calls = []
    real = lowering.compile_to_llvm
    monkeypatch.setattr(lowering, "compile_to_llvm", lambda *a, **k: calls.append(1) or real(*a, **k))
    Dispatcher(axpy, None, {"cache": True}).compile(SIG_AXPY)
    assert calls == [1]                         # the loaded compiler differs: rebuilt
    assert tuple(pickle.loads(f.read_bytes())["toolchain"]) == cache.toolchain()


def test_disk_cache_has_entries(tmp_path, monkeypatch):
    from cujit.dispatch import cache
    monkeypatch.setenv("CUJIT_CACHE_DIR", str(tmp_path))
    dc = cache.DiskCache(axpy)
    assert not dc.has_entries()
    Dispatcher(axpy, None, {"cache": True}).compile(SIG_AXPY)
    assert dc.has_entries()
    assert not cache.DiskCache(block_sum).has_entries()
