"""``Context.deallocations`` is the memory manager's pending-deallocations queue, as in
numba.cuda: numba-cuda's tests/cudadrv/test_deallocations.py patterns hold through
``current_context().deallocations``, and streams, events and modules are released through the
same queue.  EMM plugins keep their documented behaviour (their memory is theirs to free)."""
import gc
import warnings

import numpy as np
import pytest

import cujit
from cujit.config import config
from cujit.driver import get_driver
from cujit.memory import BaseCUDAMemoryManager, MemoryInfo, MemoryPointer, managers


def test_clear_frees_memory_dropped_by_the_user(ctx, count_calls):
    frees = count_calls("mem_free")
    d = cujit.device_array(1 << 20, np.float64)         # 8 MiB
    addr = d.gpu_data.device_pointer_value
    mm = ctx.memory_manager
    del d
    assert mm.get_stats().pending_bytes == 8 << 20 and ctx.deallocations.nbytes == 8 << 20
    ctx.deallocations.clear()
    assert frees == [(addr,)]
    st = mm.get_stats()
    assert (st.pending_frees, st.pending_bytes, st.reserved_bytes) == (0, 0, st.bytes_in_use)


def test_count_limit_flushes_through_the_context_queue(ctx):
    deallocs = cujit.current_context().deallocations
    deallocs.clear()
    assert len(deallocs) == 0
    for i in range(config.CUDA_DEALLOCS_COUNT):
        cujit.to_device(np.arange(1))
        assert len(deallocs) == i + 1
    cujit.to_device(np.arange(1))                       # one more: flushed
    assert len(deallocs) == 0


def test_max_pending_bytes_follows_a_changed_ratio(ctx):
    deallocs = cujit.current_context().deallocations
    deallocs.clear()
    total = ctx.get_memory_info().total
    max_pending = 10 ** 6
    config.CUDA_DEALLOCS_RATIO = max_pending / total
    assert abs(deallocs._max_pending_bytes - max_pending) <= 1
    cujit.to_device(np.ones(max_pending // 2, dtype=np.int8))
    assert len(deallocs) == 1
    cujit.to_device(np.ones(deallocs._max_pending_bytes - deallocs._size, dtype=np.int8))
    assert len(deallocs) == 2
    cujit.to_device(np.ones(1, dtype=np.int8))          # one byte more: flushed
    assert len(deallocs) == 0


def test_defer_cleanup_holds_the_context_queue_nested_and_on_exceptions(ctx):
    harr = np.arange(5)
    darr1 = cujit.to_device(harr)
    deallocs = cujit.current_context().deallocations
    deallocs.clear()
    with cujit.defer_cleanup():
        with cujit.defer_cleanup():
            darr2 = cujit.to_device(harr)
            del darr1
            assert len(deallocs) == 1
            del darr2
            assert len(deallocs) == 2
            deallocs.clear()
            assert len(deallocs) == 2
        deallocs.clear()
        assert len(deallocs) == 2
    deallocs.clear()
    assert len(deallocs) == 0

    class CustomError(Exception):
        pass

    with pytest.raises(CustomError):
        with cujit.defer_cleanup():
            darr3 = cujit.to_device(harr)
            del darr3
            deallocs.clear()
            assert len(deallocs) == 1
            raise CustomError
    deallocs.clear()
    assert len(deallocs) == 0


@pytest.mark.parametrize("make", ["stream", "event", "module", "pinned", "mapped", "device",
                                  "managed"])
def test_resources_and_memory_share_the_one_queue(ctx, make, capfd):
    """numba's test_del_* patterns: each kind's release waits in ``ctx.deallocations`` and a
    ``clear()`` performs it without any error output."""
    if make == "stream":
        obj = ctx.create_stream()
    elif make == "event":
        obj = ctx.create_event()
    elif make == "module":
        if get_driver().is_simulator:
            pytest.skip("the simulated driver loads no module images")
        obj = ctx.load_module(b".version 7.0\n.target sm_50\n.address_size 64\n\0")
    elif make == "pinned":
        obj = ctx.memhostalloc(32)
    elif make == "mapped":
        obj = ctx.memhostalloc(32, mapped=True)
    elif make == "device":
        obj = ctx.memalloc(32)
    else:
        obj = ctx.memallocmanaged(32)
    q = ctx.deallocations
    assert q is ctx.memory_manager.deallocations
    failed = q.failed_count         # earlier tests of this process may have failed frees
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        del obj
        gc.collect()
        assert len(q) == 1
        ctx.deallocations.clear()
    assert len(q) == 0 and q.failed_count == failed
    assert capfd.readouterr().err == ""


def test_flush_on_a_stream_limit_frees_memory_too(ctx, count_calls):
    """Streams and memory count towards the same limit: the eleventh entry flushes both."""
    frees, destroys = count_calls("mem_free"), count_calls("stream_destroy")
    p = ctx.memalloc(64)
    del p
    streams = [ctx.create_stream() for _ in range(config.CUDA_DEALLOCS_COUNT)]
    assert len(ctx.deallocations) == 1
    del streams
    assert len(ctx.deallocations) == 0
    assert len(frees) == 1 and len(destroys) == config.CUDA_DEALLOCS_COUNT


def test_pinned_context_managers_repin_at_once(ctx):
    arr = np.zeros(1)
    ctx.deallocations.clear()
    with cujit.defer_cleanup():
        with cujit.pinned(arr):
            pass
        with cujit.pinned(arr):
            pass
        with cujit.mapped(arr):
            pass
        with cujit.mapped(arr):
            pass
    assert len(ctx.deallocations) == 0


class _QueuelessPlugin(BaseCUDAMemoryManager):
    """A bare plugin: no pending queue; its memory is freed by its own finalizers."""

    def memalloc(self, size):
        drv = get_driver()
        ptr = drv.mem_alloc(size)
        return MemoryPointer(self.context, ptr, size, finalizer=lambda: drv.mem_free(ptr))

    def memhostalloc(self, size, mapped=False, portable=False, wc=False):
        raise NotImplementedError("device-only plugin")

    def mempin(self, owner, pointer, size, mapped=False):
        raise NotImplementedError("device-only plugin")

    def initialize(self):
        pass

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


def test_plugin_without_a_queue_keeps_its_memory_and_the_context_queues_resources(
        count_calls):
    frees, destroys = count_calls("mem_free"), count_calls("stream_destroy")
    cujit.set_memory_manager(_QueuelessPlugin)
    try:
        cujit.close()
        ctx = cujit.current_context()
        assert type(ctx.memory_manager) is _QueuelessPlugin
        q = ctx.deallocations
        assert q is ctx.deallocations and hasattr(q, "add_item")
        p = ctx.memalloc(64)
        addr = p.device_pointer_value
        del p
        assert frees == [(addr,)] and len(q) == 0       # the plugin's to free, at once
        s = ctx.create_stream()
        h = s.handle
        del s
        # (a stream an earlier test dropped may be destroyed meanwhile: look for this one)
        assert len(q) == 1 and (h,) not in destroys
        with cujit.defer_cleanup():
            q.clear()
            assert len(q) == 1
        q.clear()
        assert len(q) == 0 and destroys.count((h,)) == 1
    finally:
        managers._override = None
        cujit.close()


def test_swapping_the_manager_flushes_the_old_queue_and_follows_the_new(ctx, count_calls):
    from cujit.memory import NumbaCUDAMemoryManager
    frees = count_calls("mem_free")
    saved = ctx.memory_manager
    p = ctx.memalloc(64)
    del p
    assert len(saved.deallocations) == 1
    mm = NumbaCUDAMemoryManager(context=ctx)
    ctx.memory_manager = mm
    try:
        assert len(frees) == 1 and len(saved.deallocations) == 0
        assert ctx.deallocations is mm.deallocations
        s = ctx.create_stream()
        del s
        assert len(mm.deallocations) == 1
    finally:
        ctx.memory_manager = saved
    assert ctx.deallocations is saved.deallocations and len(mm.deallocations) == 0
