"""Host memory objects are host buffers (issue 10; numba.cuda's ``PinnedMemory``,
``MappedMemory`` and ``ManagedMemory``): ``np.ndarray(shape, dtype, buffer=mem)``,
``memoryview(mem)`` and ``np.frombuffer(mem)`` view the host bytes without copying."""
import gc
import weakref

import numpy as np
import pytest

import cujit
from cujit.memory import AutoFreePointer, MemoryPointer, PinnedMemory, MappedMemory, \
    ManagedMemory


def _kinds(ctx, n):
    return {"pinned": ctx.memhostalloc(n), "mapped": ctx.memhostalloc(n, mapped=True),
            "managed": ctx.memallocmanaged(n)}


@pytest.mark.parametrize("kind", ["pinned", "mapped", "managed"])
def test_ndarray_over_host_memory_shares_its_bytes(kind):
    ctx = cujit.current_context()
    mem = _kinds(ctx, 80)[kind]
    a = np.ndarray((10,), np.float64, buffer=mem)
    a[:] = np.arange(10.0)
    mv = memoryview(mem)
    assert mv.nbytes == 80 and not mv.readonly and len(mem) == 80
    assert np.frombuffer(mem, np.float64)[4] == 4.0
    assert mem.host_array().view(np.float64)[9] == 9.0
    assert np.ndarray((2, 5), np.float64, buffer=mem)[1, 0] == 5.0
    # a transfer from it sees what was written through the buffer
    assert cujit.to_device(a).copy_to_host().tolist() == list(range(10))


def test_buffer_keeps_the_memory_object_alive():
    mem = cujit.current_context().memhostalloc(32)
    died = []
    weakref.finalize(mem, died.append, 1)
    a = np.ndarray((4,), np.int64, buffer=mem)
    del mem
    gc.collect()
    assert died == []
    a[:] = 7
    del a
    gc.collect()
    assert died == [1]


def test_buffer_too_small_for_the_shape_is_numpys_type_error():
    mem = cujit.current_context().memhostalloc(16)
    with pytest.raises(TypeError, match="buffer is too small"):
        np.ndarray((3,), np.float64, buffer=mem)


def test_classes_and_identity_stay_numbas():
    ctx = cujit.current_context()
    k = _kinds(ctx, 16)
    assert isinstance(k["pinned"], PinnedMemory) and isinstance(k["pinned"], MemoryPointer)
    assert not isinstance(k["pinned"], AutoFreePointer)
    assert isinstance(k["mapped"], MappedMemory) and isinstance(k["mapped"], AutoFreePointer)
    assert isinstance(k["managed"], ManagedMemory) and isinstance(k["managed"], AutoFreePointer)
    assert not isinstance(k["mapped"], PinnedMemory)
    assert type(k["pinned"]).__name__ == "PinnedMemory"
    assert len({k["pinned"], k["mapped"], k["managed"]}) == 3        # hashable
    z = ctx.memhostalloc(0)
    assert bool(z) and memoryview(z).nbytes == 0
    assert np.ndarray((0,), np.float32, buffer=z).shape == (0,)


def test_mempin_result_is_a_buffer_over_the_pinned_array():
    ctx = cujit.current_context()
    host = np.arange(16, dtype=np.int32)
    mem = ctx.mempin(host, host.ctypes.data, host.nbytes, mapped=True)
    v = np.ndarray((16,), np.int32, buffer=mem)
    v[3] = -1
    assert host[3] == -1 and memoryview(mem).nbytes == 64


def test_plugin_constructed_host_memory_is_a_buffer():
    """EMM plugins build these classes themselves (numba's EMM guide)."""
    ctx = cujit.current_context()
    backing = np.zeros(8, np.uint8)
    mem = PinnedMemory(ctx, backing.ctypes.data, 8, owner=backing)
    np.frombuffer(mem, np.uint8)[:] = 5
    assert backing.tolist() == [5] * 8 and mem.owner is backing


@cujit.jit
def _add_one(x):
    i = cujit.grid(1)
    if i < x.size:
        x[i] += 1


@pytest.mark.parametrize("kind", ["mapped", "managed"])
def test_kernel_writes_reach_the_host_buffer(kind):
    ctx = cujit.current_context()
    mem = _kinds(ctx, 64)[kind]
    a = np.ndarray((16,), np.int32, buffer=mem)
    a[:] = 1
    desc = {"shape": (16,), "typestr": "<i4", "data": (mem.device_pointer_value, False),
            "version": 3, "strides": None}
    _add_one[1, 16](cujit.from_cuda_array_interface(desc, owner=mem))
    cujit.synchronize()
    assert a.tolist() == [2] * 16


@pytest.mark.parametrize("kind", ["mapped", "managed"])
def test_device_memset_is_seen_through_the_buffer(kind):
    """numba's test_host_alloc / test_managed_alloc intent: the device writes the memory,
    the host reads it through np.ndarray(buffer=mem), and the reverse."""
    ctx = cujit.current_context()
    mem = _kinds(ctx, 32)[kind]
    ary = np.ndarray(shape=32, dtype=np.uint8, buffer=mem)
    mem.memset(0xAB)
    ctx.synchronize()
    assert (ary == 0xAB).all()
    ary.fill(7)
    recv = np.empty_like(ary)
    cujit.arrays._runtime.driver().memcpy_dtoh(recv.ctypes.data, mem.device_pointer_value, 32)
    assert (recv == 7).all()
