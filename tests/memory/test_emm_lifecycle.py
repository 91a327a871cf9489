"""EMM plugin life cycle as numba.cuda's (issue 10): initialize() before the first memalloc in
every way a plugin becomes a context's manager; reset / get_memory_info / get_ipc_handle
delegate to it; the pending queue's documented attributes."""
import ctypes
import sys
import textwrap
import weakref

import numpy as np
import pytest

import cujit
from cujit.config import config
from cujit.memory import managers


class RecordingPlugin(cujit.HostOnlyCUDAMemoryManager):
    """Hands out fake device addresses (never dereferenced) and records every call."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.allocations = {}
        self.count = 0
        self.calls = []

    def memalloc(self, size):
        if "initialize" not in self.calls:
            raise RuntimeError("memalloc called before initialize")
        self.calls.append("memalloc")
        self.count += 1
        key = self.count
        self.allocations[key] = size
        allocs = self.allocations

        def finalizer():
            del allocs[key]
        return cujit.AutoFreePointer(weakref.proxy(self.context), ctypes.c_void_p(key), size,
                                     finalizer=finalizer)

    def initialize(self):
        self.calls.append("initialize")

    def reset(self):
        self.calls.append("reset")

    def get_memory_info(self):
        self.calls.append("get_memory_info")
        return cujit.MemoryInfo(free=32, total=64)

    def get_ipc_handle(self, memory):
        self.calls.append("get_ipc_handle")
        return f"plugin handle of {memory.device_pointer_value}"

    @property
    def interface_version(self):
        return 1


class FailingInitPlugin(RecordingPlugin):
    def initialize(self):
        raise RuntimeError("no pool for you")


@pytest.fixture
def plugin_ctx():
    ctx = cujit.current_context()
    ctx.reset()
    saved = ctx.memory_manager
    plugin = RecordingPlugin(context=ctx)
    ctx.memory_manager = plugin
    try:
        yield ctx, plugin
    finally:
        ctx.reset()
        ctx.memory_manager = saved


def test_assigned_plugin_is_initialized_before_memalloc(plugin_ctx):
    ctx, plugin = plugin_ctx
    assert plugin.calls == ["initialize"]
    d1 = cujit.device_array_like(np.arange(10))
    assert plugin.calls == ["initialize", "memalloc"]
    assert plugin.allocations == {1: 80}
    d2 = cujit.device_array_like(np.arange(5))
    assert plugin.allocations == {1: 80, 2: 40}
    del d1
    assert plugin.allocations == {2: 40}
    del d2
    assert plugin.allocations == {}


def test_reset_reaches_the_plugin(plugin_ctx):
    ctx, plugin = plugin_ctx
    ctx.reset()
    assert plugin.calls.count("reset") == 1


def test_get_memory_info_delegates(plugin_ctx):
    ctx, plugin = plugin_ctx
    assert ctx.get_memory_info() == (32, 64)
    assert cujit.current_context().get_memory_info().total == 64
    assert "get_memory_info" in plugin.calls


def test_get_ipc_handle_keeps_the_plugins_handle_object(plugin_ctx):
    ctx, plugin = plugin_ctx
    d = cujit.device_array(2, dtype=np.int64)
    ipch = d.get_ipc_handle()
    assert "get_ipc_handle" in plugin.calls
    assert ipch._ipc_handle == "plugin handle of 1"
    assert ipch.ipc_handle is ipch._ipc_handle
    assert ctx.get_ipc_handle(d.gpu_data) == "plugin handle of 1"


def test_failing_initialize_keeps_the_previous_manager():
    ctx = cujit.current_context()
    saved = ctx.memory_manager
    with pytest.raises(RuntimeError, match="no pool for you"):
        ctx.memory_manager = FailingInitPlugin(context=ctx)
    assert ctx.memory_manager is saved
    assert ctx.memalloc(8).size == 8


@pytest.fixture
def fresh_contexts():
    cujit.close()
    yield
    managers._override = None
    cujit.close()


def test_set_memory_manager_initializes_before_memalloc(fresh_contexts):
    cujit.set_memory_manager(RecordingPlugin)
    ctx = cujit.current_context()
    plugin = ctx.memory_manager
    assert type(plugin) is RecordingPlugin and plugin.calls == ["initialize"]
    cujit.device_array(4)
    assert plugin.calls == ["initialize", "memalloc"]


def test_env_var_plugin_initializes_before_memalloc(fresh_contexts, tmp_path, monkeypatch):
    (tmp_path / "cujit_test_emm_life.py").write_text(textwrap.dedent("""
        import cujit
        from cujit.driver import get_driver
        calls = []

        class Plugin(cujit.HostOnlyCUDAMemoryManager):
            def initialize(self):
                calls.append("initialize")

            def memalloc(self, size):
                if "initialize" not in calls:
                    raise RuntimeError("memalloc called before initialize")
                calls.append("memalloc")
                drv = get_driver()
                ptr = drv.mem_alloc(size)
                return cujit.MemoryPointer(self.context, ptr, size,
                                           finalizer=lambda: drv.mem_free(ptr))

        _numba_memory_manager = Plugin
    """))
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv("NUMBA_CUDA_MEMORY_MANAGER", "cujit_test_emm_life")
    try:
        ctx = cujit.current_context()
        module = sys.modules["cujit_test_emm_life"]
        assert type(ctx.memory_manager) is module.Plugin and module.calls == ["initialize"]
        d = cujit.to_device(np.arange(4))
        assert module.calls == ["initialize", "memalloc"]
        assert d.copy_to_host().tolist() == [0, 1, 2, 3]
    finally:
        monkeypatch.delenv("NUMBA_CUDA_MEMORY_MANAGER")
        sys.modules.pop("cujit_test_emm_life", None)


def test_bad_version_message_uses_numbas_wording():
    class Bad(RecordingPlugin):
        @property
        def interface_version(self):
            return 2
    with pytest.raises(RuntimeError, match="version 1 required"):
        cujit.set_memory_manager(Bad)


# -- the pending queue's documented attributes ---------------------------------------------

def test_pending_queue_attributes_have_numbas_meaning():
    ctx = cujit.current_context()
    q = ctx.memory_manager.deallocations
    total = ctx.device.total_memory
    assert q.memory_capacity == total == q._memory_capacity
    assert q._max_pending_bytes == int(total * config.CUDA_DEALLOCS_RATIO)
    assert q._max_pending_count == config.CUDA_DEALLOCS_COUNT
    assert q._size == q.nbytes and len(q._cons) == len(q)
    assert q._disable_count == 0 and not q.is_disabled


def test_pending_queue_public_contract_for_other_layers():
    # what cujit.trace reads: the owning context and the count limit, read at each access
    from cujit.memory import PendingDeallocs
    from cujit.runtime.devices import contexts
    ctx = cujit.current_context()
    q = ctx.memory_manager.deallocations
    assert q.context is ctx and PendingDeallocs(None, 0).context is None
    assert ctx in contexts() and len(contexts()) == len({c.device.id for c in contexts()})
    saved = config.CUDA_DEALLOCS_COUNT
    try:
        config.CUDA_DEALLOCS_COUNT = 7
        assert q.max_pending_count == 7 == q._max_pending_count
    finally:
        config.CUDA_DEALLOCS_COUNT = saved
    with pytest.raises(AttributeError):
        q.context = None                      # read-only


def test_max_pending_bytes_follows_capacity_and_ratio():
    from cujit.memory import PendingDeallocs
    q = PendingDeallocs(None, 1000)
    saved = config.CUDA_DEALLOCS_RATIO
    try:
        config.CUDA_DEALLOCS_RATIO = 0.5
        assert q._max_pending_bytes == 500
        q.memory_capacity = 3000
        assert q._max_pending_bytes == 1500
        freed = []
        q.add_item(freed.append, 1, 1500)        # at the limit: stays queued
        assert freed == [] and len(q) == 1
        q.add_item(freed.append, 2, 1)           # over it: flushed
        assert freed == [1, 2] and len(q) == 0
    finally:
        config.CUDA_DEALLOCS_RATIO = saved


def test_max_pending_bytes_drives_the_flush_of_dropped_arrays():
    """numba's test_deallocations.test_max_pending_bytes, through real allocations."""
    ctx = cujit.current_context()
    q = ctx.memory_manager.deallocations
    q.clear()
    assert len(q) == 0
    max_pending = 10 ** 6
    total = ctx.get_memory_info().total
    saved = config.CUDA_DEALLOCS_RATIO
    try:
        config.CUDA_DEALLOCS_RATIO = max_pending / total
        assert abs(q._max_pending_bytes - max_pending) <= 1
        cujit.to_device(np.ones(max_pending // 8 // 2))        # half: stays queued
        assert len(q) == 1
        cujit.to_device(np.ones(q._max_pending_bytes - q._size, dtype=np.int8))
        assert len(q) == 2                                      # exactly at the limit
        cujit.to_device(np.ones(1, dtype=np.int8))              # one byte more: flushed
        assert len(q) == 0
    finally:
        config.CUDA_DEALLOCS_RATIO = saved
