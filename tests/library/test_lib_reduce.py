"""cujit.reduce / cujit.Reduce: numba.cuda's reductions (R-LIB-3)."""
import numpy as np
import pytest

import cujit as cuda

sum_reduce = cuda.reduce(lambda a, b: a + b)


@cuda.reduce
def max_reduce(a, b):
    return max(a, b)


@cuda.jit(device=True)
def _mul(a, b):
    return a * b


@cuda.Reduce
def prod_reduce(a, b):
    return _mul(a, b)


@pytest.mark.parametrize("n", [1, 2, 31, 255, 256, 257, 1000, 4099])
def test_sum_of_host_and_device_arrays(n):
    a = np.arange(n, dtype=np.float64)
    got = sum_reduce(a)
    assert isinstance(got, np.float64) and got == a.sum()
    assert sum_reduce(cuda.to_device(a)) == a.sum()


def test_grid_stride_when_blocks_are_capped(monkeypatch):
    """With the block count capped (1024 on a GPU, 3 here), each thread folds many
    elements in its grid-stride loop."""
    from cujit import reduction
    monkeypatch.setattr(reduction, "_MAX_BLOCKS", 3)
    a = np.arange(5000, dtype=np.float64)
    assert sum_reduce(a) == a.sum()
    assert sum_reduce(a, init=2) == a.sum() + 2


def test_integer_and_float32_dtypes():
    a = np.arange(5000, dtype=np.int32)
    r = sum_reduce(a)
    assert r.dtype == np.int32 and r == a.sum()
    f = np.random.default_rng(1).random(3000).astype(np.float32)
    assert sum_reduce(f) == pytest.approx(float(f.sum(dtype=np.float64)), rel=1e-5)


def test_max_needs_no_identity():
    a = -np.arange(1, 3000, dtype=np.float64)       # all negative: init=0 must not win
    assert max_reduce(a, init=a[0]) == -1.0
    rng = np.random.default_rng(2)
    b = rng.standard_normal(1234)
    assert max_reduce(b, init=b[0]) == b.max()


def test_init_is_applied_once():
    a = np.ones(1000, dtype=np.int64)
    assert sum_reduce(a, init=5) == 1005
    assert prod_reduce(np.full(10, 2, np.int64), init=3) == 3 * 1024


def test_size_res_and_stream():
    a = np.arange(100, dtype=np.float64)
    assert sum_reduce(a, size=10) == 45.0
    res = cuda.device_array(3, np.float64)
    s = cuda.stream()
    assert sum_reduce(cuda.to_device(a), res=res, stream=s) is None
    s.synchronize()
    assert res.copy_to_host()[0] == a.sum()


def test_empty_gives_init():
    assert sum_reduce(np.zeros(0), init=7) == 7.0
    assert sum_reduce(np.arange(5.0), size=0, init=2) == 2.0
    res = cuda.device_array(1, np.float64)
    assert sum_reduce(np.zeros(0), res=res, init=3) is None
    assert res.copy_to_host()[0] == 3.0


def test_errors():
    with pytest.raises(TypeError, match="1-D"):
        sum_reduce(np.zeros((2, 2)))
    with pytest.raises(TypeError, match="size"):
        sum_reduce(np.zeros(3), size=1.5)
    with pytest.raises(ValueError, match="size"):
        sum_reduce(np.zeros(3), size=-1)
    with pytest.raises(TypeError, match="res"):
        sum_reduce(np.zeros(3), res=np.zeros(1))
    with pytest.raises(ValueError, match="res"):
        sum_reduce(np.zeros(3), res=cuda.device_array(0))
    with pytest.raises(TypeError):
        sum_reduce(np.zeros(3), stream="x")
    with pytest.raises(TypeError, match="Python function"):
        cuda.Reduce(3)
    assert cuda.reduce is cuda.Reduce


@pytest.mark.compile
def test_kernel_compiles_to_ptx():
    from cujit import types as ct
    from cujit.dispatch.dispatcher import compile_ptx
    k = sum_reduce._kernel(np.dtype(np.float32))
    ptx, _ = compile_ptx(k, (ct.float32[::1], ct.float32[::1], ct.float32, ct.boolean))
    assert "bar.sync" in ptx and ".shared" in ptx


@pytest.mark.gpu
@pytest.mark.parametrize("n", [15, 16, 17, 127, 128, 129, 1023, 1024, 1025, 1536, 34567,
                               1048576, 1049600, 1049728, 1 << 26])
def test_sum_sizes_around_block_and_grid_limits_on_the_gpu(n):
    """numba-cuda's test_sum_reduce sizes (exact in float64), and a 2^26 array (the 1024-block
    cap, each thread folding 256 elements)."""
    a = np.arange(n, dtype=np.float64) + 1
    assert sum_reduce(a) == a.sum()
    assert max_reduce(cuda.to_device(a), init=0) == n


def _allocs():
    return cuda.current_context().memory_manager.get_stats().alloc_count


def test_repeated_calls_reuse_their_scratch_arrays():
    # the partials and the result live in scratch arrays kept per stream: a second call on
    # a device array allocates nothing, and gives the same value
    r = cuda.reduce(lambda a, b: a + b)
    d = cuda.to_device(np.arange(5000, dtype=np.int64))
    assert r(d) == 5000 * 4999 // 2
    before = _allocs()
    assert r(d) == 5000 * 4999 // 2 and r(d[:100]) == 4950
    assert _allocs() == before


def test_scratch_is_per_stream_and_made_again_after_a_reset():
    r = cuda.reduce(lambda a, b: a + b)
    h = np.arange(3000, dtype=np.float64)
    s1, s2 = cuda.stream(), cuda.stream()
    d = cuda.to_device(h)
    assert r(d, stream=s1) == h.sum() and r(d, stream=s2) == h.sum()
    scratch = {id(v[2]) for t in r._scratch.values() for v in t.values()}
    assert len(scratch) == 2                     # one set of scratch arrays per stream
    cuda.current_context().reset()
    d = cuda.to_device(h)                        # the old arrays died with the reset
    assert r(d) == h.sum() and r(d, stream=cuda.stream()) == h.sum()


def test_a_dropped_stream_takes_its_scratch_with_it():
    # the scratch is keyed weakly by the stream: a Reduce that lives on (a module-level one)
    # keeps no stream alive, and a new stream gets fresh scratch
    import gc
    import weakref
    r = cuda.reduce(lambda a, b: a + b)
    d = cuda.to_device(np.ones(600, np.float32))
    s = cuda.stream()
    assert r(d, stream=s) == 600
    assert len(r._scratch) == 1
    ws = weakref.ref(s)
    del s
    # a kernel's cached launch configurations hold their streams weakly; its last one keeps
    # its stream until the kernel is configured again (here: a launch on stream 0)
    assert r(d) == 600
    gc.collect()
    assert ws() is None and len(r._scratch) == 0
    s2 = cuda.stream()
    assert r(d, stream=s2) == 600 and len(r._scratch) == 1
