"""GPU-only launch behaviour: asynchrony, foreign arrays, threads, inspect after launch."""
import threading

import numpy as np
import pytest

import cujit as cuda

pytestmark = pytest.mark.gpu

SPIN_MAX = 50_000_000


@cuda.jit
def wait_for_flag(flag, out):
    n = 0
    while cuda.atomic.add(flag, 0, 0) == 0 and n < SPIN_MAX:
        n += 1
    out[0] = n


def test_launch_returns_before_the_kernel_ends():
    """The kernel spins until the host sets a flag *after* the launch call returned; a
    synchronous launch would run out the bounded spin instead (no hang either way)."""
    flag = cuda.to_device(np.zeros(1, np.int32))
    out = cuda.to_device(np.zeros(1, np.int64))
    s_kernel, s_copy = cuda.stream(), cuda.stream()
    one = cuda.pinned_array(1, np.int32)       # pinned: the copy is truly asynchronous
    one[0] = 1
    wait_for_flag[1, 1, s_kernel](flag, out)
    flag.copy_to_device(one, stream=s_copy)
    s_copy.synchronize()
    s_kernel.synchronize()
    assert out.copy_to_host()[0] < SPIN_MAX


@cuda.jit
def incr(a):
    i = cuda.grid(1)
    if i < a.size:
        a[i] += 1


def test_cupy_array_in_place():
    cp = pytest.importorskip("cupy")
    a = cp.zeros(100, dtype=cp.int32)
    incr[1, 128](a)
    cp.cuda.runtime.deviceSynchronize()
    assert int(a.sum()) == 100


def test_torch_tensor_in_place():
    torch = pytest.importorskip("torch")
    t = torch.zeros(64, dtype=torch.float32, device="cuda")
    incr[1, 64](t)
    torch.cuda.synchronize()
    assert float(t.sum()) == 64.0


def test_launches_from_several_threads():
    arrays = [cuda.to_device(np.zeros(256, np.int32)) for _ in range(4)]
    errors = []

    def work(d):
        try:
            for _ in range(50):
                incr[2, 128](d)
            cuda.synchronize()
        except Exception as exc:     # reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(d,)) for d in arrays]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    for d in arrays:
        assert d.copy_to_host().tolist() == [50] * 256


def test_inspect_after_lazy_launch():
    @cuda.jit
    def double(a):
        i = cuda.grid(1)
        if i < a.size:
            a[i] *= 2

    d = cuda.to_device(np.ones(10, np.float32))
    double[1, 32](d)
    (sig,) = double.signatures
    assert ".entry" in double.inspect_asm(sig)
    assert "define void" in double.inspect_llvm(sig)
    assert d.copy_to_host().tolist() == [2.0] * 10


def test_kernel_after_context_reset():
    d = cuda.to_device(np.zeros(8, np.int32))
    incr[1, 8](d)
    assert d.copy_to_host().tolist() == [1] * 8
    cuda.current_context().reset()
    e = cuda.to_device(np.zeros(8, np.int32))
    incr[1, 8](e)                    # the module is loaded again in the new generation
    assert e.copy_to_host().tolist() == [1] * 8


def test_resource_queries_on_the_gpu():
    @cuda.jit
    def sm(out):
        s = cuda.shared.array(256, dtype=np.float32)
        s[cuda.threadIdx.x] = 1.0
        cuda.syncthreads()
        out[cuda.threadIdx.x] = s[255 - cuda.threadIdx.x]

    out = cuda.device_array(256, np.float32)
    sm[1, 256](out)
    (sig,) = sm.signatures
    assert sm.get_shared_mem_per_block(sig) == 1024
    assert 1 <= sm.get_regs_per_thread(sig) <= 255
    assert sm.get_max_threads_per_block(sig) == 1024
    assert out.copy_to_host().tolist() == [1.0] * 256
