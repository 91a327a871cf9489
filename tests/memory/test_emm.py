"""EMM plugins (R-EMM-1..3, numba bug case 36) and the built-in managers' statistics."""
import ctypes
import sys
import textwrap

import numpy as np
import pytest

import cujit
from cujit.driver import get_driver
from cujit.memory import managers
from cujit.memory import (BaseCUDAMemoryManager, HostOnlyCUDAMemoryManager, GetIpcHandleMixin,
                          MemoryPointer, MemoryInfo, NumbaCUDAMemoryManager, PoolMemoryManager,
                          PinnedMemory, MemoryManagerError)


# -- a third-party-style plugin, written only against cujit's public names -----------------

class _DeviceBuffer:
    """Stands in for a library's own device buffer (RMM's DeviceBuffer)."""

    def __init__(self, size):
        self.ptr = get_driver().mem_alloc(size)
        self.size = size

    def release(self):
        get_driver().mem_free(self.ptr)


def _make_plugin_finalizer(handle, allocations):
    def finalizer():
        buf = allocations.pop(handle, None)
        if buf is not None:
            buf.release()
    return finalizer


class ThirdPartyManager(GetIpcHandleMixin, cujit.HostOnlyCUDAMemoryManager):
    """Allocates through its own buffers, frees them at once (no pending queue)."""
    memalloc_calls = 0
    defer_calls = 0

    def memalloc(self, size):
        type(self).memalloc_calls += 1
        buf = _DeviceBuffer(size)
        ptr = ctypes.c_uint64(int(buf.ptr))
        self.allocations[int(buf.ptr)] = buf
        return cujit.MemoryPointer(self.context, ptr, size,
                                   finalizer=_make_plugin_finalizer(int(buf.ptr),
                                                                    self.allocations))

    def defer_cleanup(self):
        type(self).defer_calls += 1
        return super().defer_cleanup()

    def get_memory_info(self):
        free, total = get_driver().mem_get_info()
        return cujit.MemoryInfo(free=free, total=total)

    @property
    def interface_version(self):
        return 1


@pytest.fixture
def restore_manager():
    """Close contexts made with a test's plugin and return to the default manager."""
    yield
    managers._override = None
    cujit.close()


def _check_plugin_in_use(ctx, count_calls):
    frees = count_calls("mem_free")
    q = ctx.memory_manager.deallocations
    before = ThirdPartyManager.memalloc_calls
    p = ctx.memalloc(256)
    assert ThirdPartyManager.memalloc_calls == before + 1
    p.memset(3)
    out = np.empty(256, np.uint8)
    get_driver().memcpy_dtoh(out.ctypes.data, p.device_pointer_value, 256)
    assert (out == 3).all()
    addr = p.device_pointer_value
    del p
    # the plugin freed it at once; the built-in queue was not used for its device memory
    assert frees == [(addr,)] and len(q) == 0
    # pinned memory uses the inherited host path (and its queue)
    h = ctx.memhostalloc(64)
    assert isinstance(h, PinnedMemory)
    del h
    assert len(q) == 1 and q.nbytes == 64
    # defer_cleanup reaches the plugin
    d0 = ThirdPartyManager.defer_calls
    with cujit.defer_cleanup():
        pass
    assert ThirdPartyManager.defer_calls == d0 + 1


def test_case36_plugin_replacing_context_attribute(ctx, count_calls):
    saved = ctx.memory_manager
    ctx.memory_manager = ThirdPartyManager(context=ctx)
    try:
        ctx.memory_manager.initialize()
        _check_plugin_in_use(ctx, count_calls)
        assert ctx.get_memory_info().total == ctx.device.total_memory
    finally:
        ctx.memory_manager.deallocations.clear()
        ctx.memory_manager = saved


def test_set_memory_manager_applies_to_new_contexts(restore_manager, count_calls):
    old = cujit.current_context()
    cujit.set_memory_manager(ThirdPartyManager)
    assert type(cujit.current_context().memory_manager) is NumbaCUDAMemoryManager
    cujit.close()
    ctx = cujit.current_context()
    assert type(ctx.memory_manager) is ThirdPartyManager
    _check_plugin_in_use(ctx, count_calls)


def test_env_var_names_plugin_module(restore_manager, tmp_path, monkeypatch):
    (tmp_path / "cujit_test_emm_plugin.py").write_text(textwrap.dedent("""
        import cujit
        class Plugin(cujit.HostOnlyCUDAMemoryManager):
            def memalloc(self, size):
                from cujit.driver import get_driver
                drv = get_driver()
                ptr = drv.mem_alloc(size)
                return cujit.MemoryPointer(self.context, ptr, size,
                                           finalizer=lambda: drv.mem_free(ptr))
        _numba_memory_manager = Plugin
    """))
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv("NUMBA_CUDA_MEMORY_MANAGER", "cujit_test_emm_plugin")
    cujit.close()
    ctx = cujit.current_context()
    assert type(ctx.memory_manager).__name__ == "Plugin"
    assert ctx.memalloc(16).size == 16
    monkeypatch.delenv("NUMBA_CUDA_MEMORY_MANAGER")
    sys.modules.pop("cujit_test_emm_plugin", None)


def test_env_var_bad_module_is_a_clear_error(restore_manager, monkeypatch):
    monkeypatch.setenv("CUJIT_CUDA_MEMORY_MANAGER", "no_such_cujit_plugin_module")
    cujit.close()
    with pytest.raises(ImportError, match="no_such_cujit_plugin_module"):
        cujit.current_context()
    monkeypatch.setenv("CUJIT_CUDA_MEMORY_MANAGER", "numpy")
    with pytest.raises(MemoryManagerError, match="_numba_memory_manager"):
        cujit.current_context()
    monkeypatch.delenv("CUJIT_CUDA_MEMORY_MANAGER")
    assert type(cujit.current_context().memory_manager) is NumbaCUDAMemoryManager


def test_wrong_interface_version_rejected():
    class V2(NumbaCUDAMemoryManager):
        @property
        def interface_version(self):
            return 2

    before = managers._override
    with pytest.raises(MemoryManagerError, match="version 2"):
        cujit.set_memory_manager(V2)
    with pytest.raises(RuntimeError):       # numba.cuda's type as well
        cujit.set_memory_manager(V2)
    assert managers._override is before


def test_missing_methods_rejected():
    class Partial(BaseCUDAMemoryManager):
        def memalloc(self, size):
            raise AssertionError

    class Duck:
        def memalloc(self, size):
            pass

    with pytest.raises(TypeError, match="abstract|memhostalloc"):
        cujit.set_memory_manager(Partial)
    with pytest.raises(TypeError, match="memhostalloc"):
        cujit.set_memory_manager(Duck)
    with pytest.raises(TypeError, match="class"):
        cujit.set_memory_manager(NumbaCUDAMemoryManager(context=None))
    with pytest.raises(TypeError, match="context"):
        NumbaCUDAMemoryManager()


def test_host_only_manager_has_no_device_memalloc():
    with pytest.raises(TypeError, match="memalloc"):
        HostOnlyCUDAMemoryManager(context=None)


# -- statistics (R-EMM-3) -------------------------------------------------------------------

@pytest.mark.parametrize("cls", [NumbaCUDAMemoryManager])
def test_manager_statistics(ctx, cls, count_calls):
    mm = cls(context=ctx)
    mm.initialize()
    saved = ctx.memory_manager
    ctx.memory_manager = mm
    try:
        st0 = mm.get_stats()
        assert st0.bytes_in_use == 0 and st0.alloc_count == 0
        a = ctx.memalloc(1000)
        b = ctx.memalloc(3000)
        st = mm.get_stats()
        assert (st.bytes_in_use, st.peak_bytes_in_use, st.alloc_count, st.live_allocations) \
            == (4000, 4000, 2, 2)
        del b
        st = mm.get_stats()
        assert (st.bytes_in_use, st.peak_bytes_in_use, st.pending_frees, st.pending_bytes,
                st.reserved_bytes) == (1000, 4000, 1, 3000, 4000)
        flushes = st.flushes
        mm.deallocations.clear()
        st = mm.get_stats()
        assert st.flushes == flushes + 1 and st.pending_frees == 0 and st.reserved_bytes == 1000
        a.memset(1)
        del a
        h = ctx.memhostalloc(512)
        assert mm.get_stats().host_bytes_in_use == 512
        del h
        assert mm.get_stats().host_bytes_in_use == 0
        assert mm.get_stats().live_allocations == 0
    finally:
        mm.deallocations.clear()
        ctx.memory_manager = saved


def test_pool_manager_via_env_module(restore_manager, monkeypatch):
    monkeypatch.setenv("CUJIT_CUDA_MEMORY_MANAGER", "cujit.memory.pool")
    cujit.close()
    ctx = cujit.current_context()
    assert type(ctx.memory_manager) is PoolMemoryManager
    p = ctx.memalloc(100)
    p.memset(1)
    monkeypatch.delenv("CUJIT_CUDA_MEMORY_MANAGER")


def test_memory_info_namedtuple():
    assert MemoryInfo(free=1, total=2) == (1, 2)
    assert issubclass(NumbaCUDAMemoryManager, GetIpcHandleMixin)
    assert MemoryPointer is cujit.MemoryPointer


class DeviceOnlyManager(BaseCUDAMemoryManager):
    """Implements the bare interface: device memory only; host kinds unsupported."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.count = 0
        self.initialized = False

    def memalloc(self, size):
        self.count += 1
        drv = get_driver()
        ptr = drv.mem_alloc(size)
        return MemoryPointer(self.context, ptr, size, finalizer=lambda: drv.mem_free(ptr))

    def memhostalloc(self, size, mapped=False, portable=False, wc=False):
        raise NotImplementedError("device-only plugin")

    def mempin(self, owner, pointer, size, mapped=False):
        raise NotImplementedError("device-only plugin")

    def initialize(self):
        self.initialized = True

    def get_ipc_handle(self, memory):
        raise NotImplementedError

    def get_memory_info(self):
        return MemoryInfo(*get_driver().mem_get_info())

    def reset(self):
        pass

    def defer_cleanup(self):
        import contextlib
        return contextlib.nullcontext()

    @property
    def interface_version(self):
        return 1


def test_base_derived_device_only_plugin(restore_manager, count_calls):
    frees = count_calls("mem_free")
    cujit.set_memory_manager(DeviceOnlyManager)
    cujit.close()
    ctx = cujit.current_context()
    mm = ctx.memory_manager
    assert type(mm) is DeviceOnlyManager and mm.initialized
    p = ctx.memalloc(64)
    addr = p.device_pointer_value
    assert mm.count == 1
    del p
    assert frees == [(addr,)]                       # the plugin's own finalizer, at once
    with pytest.raises(NotImplementedError):
        ctx.memhostalloc(64)
    m = ctx.memallocmanaged(64)                     # built-in fallback, context queue
    assert m.size == 64 and m.host_pointer == m.device_pointer_value
    del m
    assert len(ctx.deallocations) == 1
    with cujit.defer_cleanup():                     # plugin's defer_cleanup + context queue
        pass
    assert ctx.get_memory_info().total == ctx.device.total_memory
