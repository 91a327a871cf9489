"""cujit.random: numba.cuda.random's xoroshiro128+ API, numbers bit for bit numba-cuda's
(R-LIB-1).  Unmarked tests run on the simulator here and on the GPU on the device machine."""
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import cujit as cuda
from cujit import random as R
from cujit.random import (create_xoroshiro128p_states, init_xoroshiro128p_states,
                          xoroshiro128p_dtype, xoroshiro128p_jump, xoroshiro128p_next,
                          xoroshiro128p_normal_float32, xoroshiro128p_normal_float64,
                          xoroshiro128p_uniform_float32, xoroshiro128p_uniform_float64)

import _xoro_oracle as O

# numba-cuda 0.30.4 on an H200 (the reference point).
REF_STATE0 = (18120717997013640218, 1334926773409356421)
REF_UNIFORM32 = 0.05469261482357979


def _pairs(dev):
    h = dev.copy_to_host()
    return [(int(r["s0"]), int(r["s1"])) for r in h]


def test_reference_point_of_numba_cuda():
    states = create_xoroshiro128p_states(8, seed=1234, subsequence_start=3)
    assert states.dtype == xoroshiro128p_dtype and states.shape == (8,)
    assert _pairs(states)[0] == REF_STATE0

    @cuda.jit
    def first(states, out):
        i = cuda.grid(1)
        if i < states.shape[0]:
            out[i] = xoroshiro128p_uniform_float32(states, i)
    out = cuda.device_array(8, np.float32)
    first[1, 8](states, out)
    assert out.copy_to_host()[0] == np.float32(REF_UNIFORM32)


@pytest.mark.parametrize("n,seed,start", [(1, 0, 0), (5, 1, 0), (37, 2**64 - 1, 7),
                                          (3, -5, 130), (130, 42, 1)])
def test_states_equal_the_sequential_definition(n, seed, start):
    states = create_xoroshiro128p_states(n, seed=seed, subsequence_start=start)
    assert _pairs(states) == O.states(n, seed, start)


@pytest.mark.sim
def test_simulator_host_path_equals_the_kernel(monkeypatch):
    """Above R._SIM_KERNEL_MAX states the simulator fills them with vectorised NumPy; both
    ways give the sequential definition's states."""
    assert R._SIM_KERNEL_MAX < 70
    host = create_xoroshiro128p_states(70, seed=9, subsequence_start=2**63)
    monkeypatch.setattr(R, "_SIM_KERNEL_MAX", 10 ** 9)
    kern = create_xoroshiro128p_states(70, seed=9, subsequence_start=2**63)
    assert _pairs(host) == _pairs(kern)
    assert R._init_on_host(3, 5, 1).tolist() == [tuple(p) for p in O.states(3, 5, 1)]


def test_init_into_existing_array_on_a_stream():
    s = cuda.stream()
    states = cuda.device_array(4, dtype=xoroshiro128p_dtype)
    init_xoroshiro128p_states(states, 99, subsequence_start=2, stream=s)
    s.synchronize()
    assert _pairs(states) == O.states(4, 99, 2)


def test_zero_states():
    states = create_xoroshiro128p_states(0, seed=1)
    assert states.shape == (0,)


def test_draws_equal_the_definition():
    n, draws = 6, 5
    states = create_xoroshiro128p_states(n, seed=777)

    @cuda.jit
    def draw(states, u64, f32, f64, g32, g64):
        i = cuda.grid(1)
        if i < states.shape[0]:
            for j in range(u64.shape[1]):
                u64[i, j] = xoroshiro128p_next(states, i)
                f32[i, j] = xoroshiro128p_uniform_float32(states, i)
                f64[i, j] = xoroshiro128p_uniform_float64(states, i)
                g32[i, j] = xoroshiro128p_normal_float32(states, i)
                g64[i, j] = xoroshiro128p_normal_float64(states, i)
    outs = [cuda.device_array((n, draws), dt) for dt in
            (np.uint64, np.float32, np.float64, np.float32, np.float64)]
    draw[1, 32](states, *outs)
    u64, f32, f64, g32, g64 = (o.copy_to_host() for o in outs)
    for i, s in enumerate(O.states(n, 777)):
        for j in range(draws):
            x, s = O.nxt(s)
            assert u64[i, j] == x
            x, s = O.nxt(s)
            assert f32[i, j] == O.unit_f32(x)
            x, s = O.nxt(s)
            assert f64[i, j] == O.unit_f64(x)
            a, s = O.nxt(s)
            b, s = O.nxt(s)
            u1, u2 = O.unit_f32(a), O.unit_f32(b)
            # libdevice's logf/cosf vs NumPy's: a few ulp apart at most
            want32 = np.sqrt(np.float32(-2.0) * np.log(u1)) * np.cos(np.float32(2 * np.pi) * u2)
            assert g32[i, j] == pytest.approx(want32, rel=1e-5, abs=1e-6)
            a, s = O.nxt(s)
            b, s = O.nxt(s)
            u1, u2 = O.unit_f32(a), O.unit_f32(b)
            want64 = np.sqrt(-2.0 * np.float64(np.log(u1))) * np.cos(2 * np.pi * np.float64(u2))
            assert g64[i, j] == pytest.approx(want64, rel=1e-5, abs=1e-6)
    assert g64.dtype == np.float64 and g32.dtype == np.float32


def test_uniform_range_and_moments():
    states = create_xoroshiro128p_states(64, seed=5)

    @cuda.jit
    def fill(states, out):
        i = cuda.grid(1)
        if i < states.shape[0]:
            for j in range(out.shape[1]):
                out[i, j] = xoroshiro128p_uniform_float64(states, i)
    out = cuda.device_array((64, 32), np.float64)
    fill[2, 32](states, out)
    h = out.copy_to_host()
    assert h.min() >= 0.0 and h.max() < 1.0
    assert abs(h.mean() - 0.5) < 0.03          # 2048 samples: sd of the mean is 0.0064


def test_device_jump_equals_definition():
    states = create_xoroshiro128p_states(3, seed=11)

    @cuda.jit
    def jump(states):
        i = cuda.grid(1)
        if i < states.shape[0]:
            xoroshiro128p_jump(states, i)
    jump[1, 3](states)
    assert _pairs(states) == [O.jump(s) for s in O.states(3, 11)]
    # a jump of state i lands on state i + 1's subsequence
    assert _pairs(states)[:2] == O.states(3, 11)[1:]


def test_jump_table_reproduces_the_published_jump():
    table = R._jump_table()
    assert table.shape == (64, 2) and table.dtype == np.uint64
    assert tuple(int(v) for v in table[0]) == O.JUMP
    # row 1 jumps two subsequences
    s = O.states(1, 3)[0]
    a0 = a1 = 0
    t = s
    for word in table[1]:
        for b in range(64):
            if (int(word) >> b) & 1:
                a0 ^= t[0]
                a1 ^= t[1]
            t = O.step(t)
    assert (a0, a1) == O.jump(O.jump(s))


@pytest.mark.parametrize("n,exc", [(2.0, TypeError), ("3", TypeError), (True, TypeError),
                                   (-1, ValueError)])
def test_create_rejects_bad_n(n, exc):
    with pytest.raises(exc, match="n must be"):
        create_xoroshiro128p_states(n, seed=1)


@pytest.mark.parametrize("seed,start,name", [(1.5, 0, "seed"), (None, 0, "seed"),
                                             (1, 2.0, "subsequence_start")])
def test_rejects_bad_seed_or_start(seed, start, name):
    with pytest.raises(TypeError, match=name):
        create_xoroshiro128p_states(2, seed=seed, subsequence_start=start)


def test_init_rejects_wrong_states():
    with pytest.raises(TypeError, match="xoroshiro128p_dtype"):
        init_xoroshiro128p_states(cuda.device_array(4, np.uint64), 1)
    with pytest.raises(TypeError, match="xoroshiro128p_dtype"):
        init_xoroshiro128p_states(np.zeros(4, xoroshiro128p_dtype), 1)
    with pytest.raises(TypeError, match="xoroshiro128p_dtype"):
        init_xoroshiro128p_states(cuda.device_array((2, 2), xoroshiro128p_dtype), 1)


def test_public_names():
    assert cuda.random is R
    from cujit.random import xoroshiro128p_type
    assert xoroshiro128p_type is not None


@pytest.mark.compile
def test_kernels_compile_to_ptx():
    from cujit import types as ct
    from cujit.dispatch.dispatcher import compile_ptx
    st = ct.typeof(np.zeros(1, xoroshiro128p_dtype))
    ptx, _ = compile_ptx(R._init_states_kernel, (st, ct.uint64, ct.uint64, ct.uint64[:, ::1]))
    assert ".entry" in ptx

    def k(states, out):
        i = cuda.grid(1)
        out[i] = xoroshiro128p_normal_float32(states, i) + xoroshiro128p_uniform_float32(states, i)
    ptx, _ = compile_ptx(k, (st, ct.float32[:]))
    assert "sqrt.rn.f32" in ptx


_PEER = """
import numpy as np
from numba import cuda
from numba.cuda.random import create_xoroshiro128p_states, xoroshiro128p_uniform_float32
from numba.cuda.random import xoroshiro128p_normal_float64
s = create_xoroshiro128p_states(1000, seed=4321, subsequence_start=5)
@cuda.jit
def k(s, u, g):
    i = cuda.grid(1)
    if i < s.shape[0]:
        for j in range(u.shape[1]):
            u[i, j] = xoroshiro128p_uniform_float32(s, i)
            g[i, j] = xoroshiro128p_normal_float64(s, i)
u = cuda.device_array((1000, 16), np.float32); g = cuda.device_array((1000, 16), np.float64)
st = s.copy_to_host()
k[8, 128](s, u, g)
np.savez(OUT, s0=st['s0'], s1=st['s1'], u=u.copy_to_host(), g=g.copy_to_host())
"""


@pytest.mark.gpu
def test_same_numbers_as_numba_cuda_on_the_gpu(tmp_path):
    """numba-cuda in a subprocess (its path in CUJIT_PEER_PYTHONPATH) draws the same
    numbers as cujit on the GPU."""
    peer = os.environ.get("CUJIT_PEER_PYTHONPATH")
    if not peer:
        pytest.skip("CUJIT_PEER_PYTHONPATH (numba-cuda's site) is not set")
    out = tmp_path / "peer.npz"
    env = dict(os.environ, PYTHONPATH=peer)
    env.pop("CUJIT_ENABLE_CUDASIM", None)
    env.pop("NUMBA_ENABLE_CUDASIM", None)
    subprocess.run([sys.executable, "-c", f"OUT={str(out)!r}\n" + textwrap.dedent(_PEER)],
                   env=env, check=True, timeout=300)
    ref = np.load(out)
    s = create_xoroshiro128p_states(1000, seed=4321, subsequence_start=5)
    st = s.copy_to_host()
    assert np.array_equal(st["s0"], ref["s0"]) and np.array_equal(st["s1"], ref["s1"])

    @cuda.jit
    def k(s, u, g):
        i = cuda.grid(1)
        if i < s.shape[0]:
            for j in range(u.shape[1]):
                u[i, j] = xoroshiro128p_uniform_float32(s, i)
                g[i, j] = xoroshiro128p_normal_float64(s, i)
    u = cuda.device_array((1000, 16), np.float32)
    g = cuda.device_array((1000, 16), np.float64)
    k[8, 128](s, u, g)
    assert np.array_equal(u.copy_to_host(), ref["u"])
    # libdevice log/cos/sqrt on both sides; allow the last bits should instruction
    # selection differ (no fused multiply-add is possible in Box-Muller's products)
    np.testing.assert_allclose(g.copy_to_host(), ref["g"], rtol=1e-12, atol=1e-14)


def _cpu_harness():
    """tests/nvvm/test_lower_cpu.py's ``run``: the compiler's LLVM IR executed on the host
    (one thread), so the GPU code path's values are checked without a GPU.  The module is
    shared with pytest's own import of it (``sys.modules['test_lower_cpu']``): its MCJIT
    engines must live for the whole process and their symbol tags must not repeat."""
    import importlib.util
    mod = sys.modules.get("test_lower_cpu")
    if mod is None:
        path = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                            "nvvm", "test_lower_cpu.py")
        spec = importlib.util.spec_from_file_location("test_lower_cpu", path)
        mod = importlib.util.module_from_spec(spec)
        sys.modules["test_lower_cpu"] = mod
        spec.loader.exec_module(mod)
    return mod.run


def _first_uniform(states, out):
    out[0] = xoroshiro128p_uniform_float32(states, 0)


def _draw_all(states, u64, f32, f64):
    for i in range(states.shape[0]):
        u64[i] = xoroshiro128p_next(states, i)
        f32[i] = xoroshiro128p_uniform_float32(states, i)
        f64[i] = xoroshiro128p_uniform_float64(states, i)
        xoroshiro128p_jump(states, i)


@pytest.mark.compile
def test_compiled_code_gives_the_reference_numbers():
    """The init kernel and the device functions as lowered for the GPU, run on the host:
    thread 0 of the init kernel makes the reference state, and the draws and jump equal the
    definition (uint64 shifts, rotations, record stores and float conversions of the real
    code path)."""
    pytest.importorskip("llvmlite.binding")
    from cujit import types as ct
    run = _cpu_harness()
    st = ct.Array(ct.Record(xoroshiro128p_dtype), 1, "C")
    states = np.zeros(8, xoroshiro128p_dtype)
    run(R._init_states_kernel, (st, ct.uint64, ct.uint64, ct.uint64[:, ::1]),
        states, np.uint64(1234), np.uint64(3), R._jump_table())
    assert (int(states[0]["s0"]), int(states[0]["s1"])) == REF_STATE0
    first = np.zeros(1, np.float32)
    run(_first_uniform, (st, ct.float32[::1]), states, first)
    assert first[0] == np.float32(REF_UNIFORM32)
    ref = O.states(4, 77, 5)
    states = np.array(ref, dtype=xoroshiro128p_dtype)
    u64, f32, f64 = np.zeros(4, np.uint64), np.zeros(4, np.float32), np.zeros(4, np.float64)
    run(_draw_all, (st, ct.uint64[::1], ct.float32[::1], ct.float64[::1]),
        states, u64, f32, f64)
    for i, s in enumerate(ref):
        a, s = O.nxt(s)
        b, s = O.nxt(s)
        c, s = O.nxt(s)
        assert (u64[i], f32[i], f64[i]) == (a, O.unit_f32(b), O.unit_f64(c))
        assert (int(states[i]["s0"]), int(states[i]["s1"])) == O.jump(s)
    assert f32[0] != 0.0
