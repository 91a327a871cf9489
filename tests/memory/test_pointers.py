"""Memory pointers and their ownership model (R-EMM-1), and bad input to the allocators."""
import ctypes

import numpy as np
import pytest

import cujit
from cujit.driver import get_driver
from cujit.driver.errors import CudaAPIError
from cujit.memory import (AutoFreePointer, MemoryPointer, PinnedMemory, MappedMemory,
                          ManagedMemory, DeadMemoryError, OwnedPointer, MemoryInfo)


def _read(ptr, n):
    out = np.empty(n, np.uint8)
    get_driver().memcpy_dtoh(out.ctypes.data, ptr, n)
    return out


def test_memalloc_pointer_attributes(ctx):
    p = ctx.memalloc(1000)
    assert isinstance(p, AutoFreePointer) and isinstance(p, MemoryPointer)
    assert p.size == 1000 and p.device_pointer_value > 0
    assert isinstance(p.device_pointer, ctypes.c_void_p)
    assert p.device_pointer.value == p.device_pointer_value
    assert p.device_ctypes_pointer.value == p.device_pointer_value
    # int() of it, as of numba-cuda's CUdeviceptr: the address a CPointer parameter takes
    assert int(p.device_pointer) == p.device_pointer_value
    assert p.owner is p and p.context is ctx and p.alive
    assert int(p) == p.device_pointer_value


def test_memset_and_view(ctx):
    p = ctx.memalloc(256)
    p.memset(0)
    v = p.view(16, 48)
    assert v.device_pointer_value == p.device_pointer_value + 16 and v.size == 32
    v.memset(9)
    data = _read(p.device_pointer_value, 256)
    assert (data[16:48] == 9).all() and data[:16].sum() == 0 and data[48:].sum() == 0
    p.memset(3, count=8)
    assert (_read(p.device_pointer_value, 16) == [3] * 8 + [0] * 8).all()


def test_view_keeps_parent_alive(ctx):
    q = ctx.memory_manager.deallocations
    p = ctx.memalloc(128)
    v = p.view(64)
    assert v.owner is p
    del p
    assert len(q) == 0              # the view holds the allocation
    v.memset(5)
    assert (_read(v.device_pointer_value, 64) == 5).all()
    del v
    assert len(q) == 1


@pytest.mark.parametrize("start,stop,exc", [(-1, None, ValueError), (0, 129, IndexError),
                                            (100, 50, IndexError), (129, None, IndexError)])
def test_view_out_of_range(ctx, start, stop, exc):
    p = ctx.memalloc(128)
    with pytest.raises(exc) as ei:
        p.view(start, stop)
    assert ei.type is exc
    assert p.alive


def test_memset_bad_input(ctx):
    p = ctx.memalloc(16)
    with pytest.raises(ValueError, match="exceeds"):
        p.memset(0, count=17)
    with pytest.raises(ValueError, match="0..255"):
        p.memset(256)
    with pytest.raises(TypeError, match="stream"):
        p.memset(0, stream=3)


def test_free_twice_is_a_clear_error(ctx):
    q = ctx.memory_manager.deallocations
    p = ctx.memalloc(64)
    p.free()
    assert len(q) == 1 and not p.alive
    with pytest.raises(DeadMemoryError, match="already freed"):
        p.free()
    with pytest.raises(RuntimeError):           # numba.cuda's exception type too
        p.free()
    assert len(q) == 1
    with pytest.raises(DeadMemoryError):
        p.memset(0)


@pytest.mark.parametrize("size,exc", [(-1, ValueError), (2 ** 70, ValueError),
                                      (1.5, TypeError), ("8", TypeError), (None, TypeError),
                                      (True, TypeError)])
def test_bad_sizes(ctx, size, exc):
    keep = ctx.memalloc(32)
    keep.memset(1)
    with pytest.raises(exc, match="size"):
        ctx.memalloc(size)
    with pytest.raises(exc, match="size"):
        ctx.memhostalloc(size)
    assert (_read(keep.device_pointer_value, 32) == 1).all()


def test_absurd_size_is_out_of_memory_not_a_crash(ctx):
    with pytest.raises(CudaAPIError) as err:
        ctx.memalloc(1 << 60)
    assert err.value.name == "CUDA_ERROR_OUT_OF_MEMORY" and "cuMemAlloc" in str(err.value)
    assert ctx.memalloc(8).alive


def test_numpy_int_size_and_zero_size(ctx, count_calls):
    allocs = count_calls("mem_alloc")
    p = ctx.memalloc(np.int64(24))
    assert p.size == 24 and type(p.size) is int
    z = ctx.memalloc(0)
    assert z.size == 0 and z.device_pointer_value == 0
    assert len(allocs) == 1


def test_pinned_memory(ctx):
    m = ctx.memhostalloc(4096)
    assert isinstance(m, PinnedMemory) and not isinstance(m, MappedMemory)
    assert m.size == 4096 and m.host_pointer != 0
    arr = m.host_array()
    arr[:] = 7
    assert arr.nbytes == 4096 and (m.host_array() == 7).all()


def test_mapped_memory_has_device_address(ctx):
    m = ctx.memhostalloc(1024, mapped=True, portable=True, wc=False)
    assert isinstance(m, MappedMemory)
    assert m.device_pointer_value == get_driver().mem_host_get_device_pointer(m.host_pointer)
    m.host_array()[:] = 42
    assert (_read(m.device_pointer_value, 1024) == 42).all()


def test_managed_memory(ctx):
    m = ctx.memallocmanaged(512)
    assert isinstance(m, ManagedMemory)
    assert m.device_pointer_value == m.host_pointer != 0
    m.memset(11)
    assert (m.host_array() == 11).all()
    q = ctx.memory_manager.deallocations
    del m
    assert len(q) == 1 and q.nbytes == 512


def test_mempin_keeps_owner_and_maps(ctx):
    host = np.arange(256, dtype=np.uint8)
    m = ctx.mempin(host, host.ctypes.data, host.nbytes, mapped=True)
    assert isinstance(m, MappedMemory) and m.owner is host
    assert (_read(m.device_pointer_value, 256) == host).all()
    with pytest.raises(CudaAPIError) as err:
        ctx.mempin(host, host.ctypes.data, host.nbytes)
    assert err.value.name == "CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED"


def test_memory_pointer_accepts_foreign_pointer_types(ctx):
    class CUdeviceptrLike:
        def __int__(self):
            return 0x1234

    for ptr in (0x1234, ctypes.c_uint64(0x1234), ctypes.c_void_p(0x1234), CUdeviceptrLike()):
        assert MemoryPointer(ctx, ptr, 8).device_pointer_value == 0x1234
    with pytest.raises(TypeError, match="pointer"):
        MemoryPointer(ctx, "0x1234", 8)


def test_user_finalizer_runs_once(ctx):
    calls = []
    p = MemoryPointer(ctx, 0x10, 8, finalizer=lambda: calls.append(1))
    p.free()
    assert calls == [1]
    with pytest.raises(DeadMemoryError):
        p.free()
    del p
    assert calls == [1]


def test_owned_pointer_forwards(ctx):
    p = ctx.memalloc(64)
    o = p.own()
    assert isinstance(o, OwnedPointer)
    assert o.device_pointer_value == p.device_pointer_value and o.size == 64 and int(o) == int(p)


def test_memory_info(ctx):
    info = ctx.get_memory_info()
    assert isinstance(info, MemoryInfo)
    assert 0 < info.free <= info.total == ctx.device.total_memory


def test_public_names_resolve():
    for name in ("MemoryPointer", "AutoFreePointer", "OwnedPointer", "MappedMemory",
                 "PinnedMemory", "ManagedMemory", "MemoryInfo", "IpcHandle",
                 "BaseCUDAMemoryManager", "HostOnlyCUDAMemoryManager", "GetIpcHandleMixin",
                 "NumbaCUDAMemoryManager", "PoolMemoryManager", "set_memory_manager"):
        assert getattr(cujit, name) is getattr(cujit.memory, name)


@pytest.mark.parametrize("size,exc", [(-8, ValueError), (2.0, TypeError), ("1", TypeError)])
def test_bad_sizes_managed_and_pinned(ctx, size, exc):
    host = np.zeros(64, np.uint8)
    with pytest.raises(exc, match="size"):
        ctx.memallocmanaged(size)
    with pytest.raises(exc, match="size"):
        ctx.mempin(host, host.ctypes.data, size)
    with pytest.raises(TypeError, match="pointer"):
        ctx.mempin(host, "not a pointer", 64)
    # nothing was left pinned by the failed calls
    ctx.mempin(host, host.ctypes.data, 64)


def test_zero_size_host_allocations_are_null(ctx, count_calls):
    calls = count_calls("mem_host_alloc")
    m = ctx.memhostalloc(0)
    assert m.size == 0 and m.host_pointer == 0 and calls == []
    assert ctx.memallocmanaged(0).size == 0


def test_pointer_in_a_garbage_cycle_is_still_freed(ctx):
    import gc
    q = ctx.memory_manager.deallocations
    p = ctx.memalloc(64)
    p.cycle = [p]                   # a reference cycle through the pointer's __dict__
    del p
    assert len(q) == 0              # refcounting cannot free it
    gc.collect()
    assert len(q) == 1 and q.nbytes == 64


def test_finalizer_detach_and_call_once():
    from cujit.memory.pointers import _Finalizer

    class Obj:
        pass

    calls = []
    o = Obj()
    f = _Finalizer(o, calls.append, 1)
    assert f.alive
    assert f.detach()[0] is o and not f.alive
    del o
    assert calls == []
    o2 = Obj()
    g = _Finalizer(o2, calls.append, 2)
    g()
    g()
    del o2
    assert calls == [2] and not g.alive


def test_pointer_ctypes_type_and_handle_are_numba_cudas(ctx):
    for mem in (ctx.memalloc(64), ctx.memalloc(64).view(8), ctx.memallocmanaged(64),
                ctx.memhostalloc(64, mapped=True)):
        assert isinstance(mem.device_ctypes_pointer, ctypes.c_size_t)
        assert mem.device_ctypes_pointer.value == mem.device_pointer_value
    for mem in (ctx.memalloc(64), ctx.memalloc(64).view(8)):
        assert int(mem.handle) == mem.device_pointer_value
    d = cujit.device_array(4)
    assert isinstance(d.device_ctypes_pointer, ctypes.c_size_t)
    assert cujit.device_array(0).device_ctypes_pointer.value is None


def test_views_count_in_the_allocations_refct_while_they_live(ctx):
    m = ctx.memalloc(1024)
    v1 = m.view(1)
    assert m.refct == 2 and int(v1.owner.handle) == int(m.handle)
    assert int(v1.handle) - 1 == int(m.handle)
    v2 = v1.view(1)
    assert m.refct == 3 and int(v2.handle) - 2 == int(m.handle)
    del v2
    assert m.refct == 2
    o = m.own()
    assert m.refct == 3
    del v1, o
    assert m.refct == 1 and m.alive        # counted, never freed by the count
