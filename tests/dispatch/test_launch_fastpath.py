"""Argument packing (kernel ABI) and the generated fast launch path, against a recording
stand-in for cuda-bindings' cuLaunchKernel (no GPU needed)."""
import ctypes
import struct
import threading

import numpy as np
import pytest
from hypothesis import given, strategies as st

from cujit import types as ct
from cujit.runtime import devices
from cujit.dispatch import launcher as ln


class FakeArray:
    """The DeviceNDArray attributes the launcher reads (docs/interfaces.md)."""

    def __init__(self, ptr, shape, dtype=np.float32, layout="C", strides=None):
        self._data_ptr = ptr
        self.shape = tuple(shape)
        self.dtype = np.dtype(dtype)
        self.ndim = len(shape)
        self._layout = layout
        if strides is None:
            strides, acc = [], self.dtype.itemsize
            for n in reversed(shape):
                strides.insert(0, acc)
                acc *= n
        self.strides = tuple(strides)


def read_params(params, nparams, fmts):
    """Values the driver would read: follow each void* of the void*[] array."""
    arr = (ctypes.c_void_p * nparams).from_address(params)
    out = []
    for p, f in zip(arr, fmts):
        size = struct.calcsize("<" + f)
        out.append(struct.unpack("<" + f, ctypes.string_at(p, size))[0])
    return out


def test_array_abi_layout():
    a = FakeArray(0xABC000, (3, 5), np.float64)
    p = ln.ArgPacker((ct.float64[:, ::1],))
    p.pack((a,))
    assert p.nparams == 5
    assert read_params(p.params, 5, "Qqqqq") == [0xABC000, 3, 5, 40, 8]


def test_zero_d_array_is_pointer_only():
    p = ln.ArgPacker((ct.Array(ct.int32, 0, "C"),))
    p.pack((FakeArray(0x1000, (), np.int32),))
    assert p.nparams == 1 and p.values() == (0x1000,)


def test_scalars_slots_are_aligned():
    types = (ct.int8, ct.float64, ct.boolean, ct.int16, ct.complex64, ct.uint64, ct.float16,
             ct.complex128, ct.int32)
    p = ln.ArgPacker(types)
    vals = (-3, 2.5, True, -300, 1.5 - 2j, 2**64 - 1, 0.5, 3 + 4j, -(2**31))
    p.pack(vals)
    base = ctypes.addressof(p.buffer)
    slots = [x - base for x in (ctypes.c_void_p * p.nparams).from_address(p.params)]
    sizes = [1, 8, 1, 2, 4, 4, 8, 2, 8, 8, 4]
    assert len(slots) == len(sizes) == p.nparams
    for off, size in zip(slots, sizes):
        assert off % size == 0
    assert read_params(p.params, p.nparams, "bd?hffQeddi") == [
        -3, 2.5, True, -300, 1.5, -2.0, 2**64 - 1, 0.5, 3.0, 4.0, -(2**31)]


def test_tuple_and_record_args():
    rec_t = ct.Record(np.dtype([("a", np.int32), ("b", np.float64)]))

    class Rec:
        _data_ptr = 0x7000
        dtype = rec_t.dtype

    p = ln.ArgPacker((ct.UniTuple(ct.int32, 3), rec_t, ct.Tuple((ct.float32, ct.int64))))
    p.pack(((1, 2, 3), Rec(), (0.5, 9)))
    assert p.values() == (1, 2, 3, 0x7000, 0.5, 9)


def test_unsupported_param_type():
    # (void is none: a None argument, which packs nothing)
    with pytest.raises(TypeError, match="cannot be passed to a kernel"):
        ln.param_layout(ct.NestedArray(ct.float32, (3,)), "a0")


@given(st.integers(-(2**63), 2**63 - 1), st.floats(allow_nan=False, width=32),
       st.integers(0, 255), st.booleans())
def test_pack_roundtrip(i, f, u, b):
    p = ln.ArgPacker((ct.int64, ct.float32, ct.uint8, ct.boolean))
    p.pack((i, f, u, b))
    assert p.values() == (i, np.float32(f), u, b)


def test_pack_out_of_range_raises_struct_error():
    p = ln.ArgPacker((ct.int32,))
    with pytest.raises(struct.error):
        p.pack((2**31,))


def test_pack_error_names_argument():
    err = ln._pack_error("k", (ct.float32, ct.int32), (1.0, 2**40), struct.error("x"))
    assert isinstance(err, TypeError)
    assert "argument 1" in str(err) and "int32" in str(err) and str(2**40) in str(err)


# -- the generated fast path ---------------------------------------------------------------
class FakeDriver:
    is_simulator = False

    def __init__(self, err=0):
        self.calls = []
        self.err = err

    def raw_launch(self, fn, gx, gy, gz, bx, by, bz, sh, stream, params, extra):
        self.calls.append(((fn, gx, gy, gz, bx, by, bz, sh, stream, extra),
                           ctypes.string_at(ctypes.cast(params, ctypes.POINTER(ctypes.c_void_p))[0], 8)))
        return (self.err,)


class FakeDev:
    id = 0


class FakeCtx:
    device = FakeDev()
    generation = 0
    closed = False


@pytest.fixture
def fake_ctx(monkeypatch):
    ctx = FakeCtx()
    monkeypatch.setattr(devices._tls, "ctx", ctx, raising=False)
    return ctx


def make(argtypes, args, ctx, drv, max_threads=1024):
    lk = ln.LoadedKernel()
    lk.context, lk.generation, lk.lock, lk.cu_func = ctx, ctx.generation, threading.Lock(), "FN"
    lk.info = ln.FunctionInfo(1, "k", max_threads, 0, 49152, 232448)
    lk.packer = ln.ArgPacker(argtypes)
    return lk, ln.make_fast(lk, args, drv)


def ok_cfg(info, g=2, b=64, sh=0):
    c = ln.make_config(g, b, 0, sh, 0)
    ln.check_function_limits(c, info, None)
    return c


def test_fast_path_launches_with_new_values(fake_ctx):
    drv = FakeDriver()
    a = FakeArray(0x1000, (100,))
    lk, fast = make((ct.float32[::1], ct.float32, ct.int64), (a, 1.5, 3), fake_ctx, drv)
    c = ok_cfg(lk.info)
    assert fast(c, (a, 1.5, 3))
    b = FakeArray(0x2000, (50,))
    assert fast(c, (b, 2.0, 7))
    assert len(drv.calls) == 2
    assert drv.calls[1][0] == ("FN", 2, 1, 1, 64, 1, 1, 0, 0, 0)
    assert fast.packer.values() == (0x2000, 50, 4, 2.0, 7)
    assert struct.unpack("<Q", drv.calls[1][1])[0] == 0x2000
    assert lk.packer.values() == (0, 0, 0, 0.0, 0)   # the slow path's buffer is untouched


def test_fast_path_declines_other_shapes_of_arguments(fake_ctx):
    drv = FakeDriver()
    a = FakeArray(0x1000, (100,))
    lk, fast = make((ct.float32[::1], ct.int64), (a, 3), fake_ctx, drv)
    c = ok_cfg(lk.info)
    declined = [
        (a,),                                           # too few
        (a, 3, 4),                                      # too many
        (FakeArray(0x1000, (10,), np.float64), 3),      # dtype
        (FakeArray(0x1000, (2, 5)), 3),                 # ndim
        (FakeArray(0x1000, (10,), layout="A", strides=(8,)), 3),   # layout
        (a, 3.0),                                       # scalar type
        (a, np.int64(3)),                               # NumPy scalar is another type
        (a, 2**63),                                     # does not fit int64
    ]
    for args in declined:
        assert fast(c, args) is False, args
    assert drv.calls == []


def test_fast_path_needs_checked_config_and_same_context(fake_ctx, monkeypatch):
    drv = FakeDriver()
    a = FakeArray(0x1000, (8,))
    lk, fast = make((ct.float32[::1],), (a,), fake_ctx, drv)
    unchecked = ln.make_config(1, 32, 0, 0, 0)
    assert fast(unchecked, (a,)) is False
    c = ok_cfg(lk.info)
    fake_ctx.generation = 1                        # the context was reset
    assert fast(c, (a,)) is False
    fake_ctx.generation = 0
    monkeypatch.setattr(devices._tls, "ctx", FakeCtx())
    assert fast(c, (a,)) is False
    monkeypatch.delattr(devices._tls, "ctx")
    assert fast(c, (a,)) is False
    assert drv.calls == []


def test_fast_path_is_per_thread(fake_ctx):
    drv = FakeDriver()
    a = FakeArray(0x1000, (8,))
    lk, fast = make((ct.float32[::1],), (a,), fake_ctx, drv)
    c = ok_cfg(lk.info)
    out = []

    def other():
        devices._tls.ctx = fake_ctx
        out.append(fast(c, (a,)))

    t = threading.Thread(target=other)
    t.start()
    t.join()
    assert out == [False] and drv.calls == []
    assert fast(c, (a,)) is True


def test_fast_path_driver_error(fake_ctx):
    from cujit.driver.errors import CudaAPIError
    drv = FakeDriver(err=701)
    a = FakeArray(0x1000, (8,))
    lk, fast = make((ct.float32[::1],), (a,), fake_ctx, drv)
    with pytest.raises(CudaAPIError) as ei:
        fast(ok_cfg(lk.info), (a,))
    assert ei.value.code == 701 and ei.value.call == "cuLaunchKernel"
    assert "launch configuration" in str(ei.value)


def test_fast_path_without_arguments(fake_ctx):
    drv = FakeDriver()
    lk = ln.LoadedKernel()
    lk.context, lk.generation, lk.lock, lk.cu_func = fake_ctx, 0, threading.Lock(), "FN"
    lk.info = ln.FunctionInfo(1, "k", 1024, 0, 49152, 232448)
    lk.packer = ln.ArgPacker(())
    fast = ln.make_fast(lk, (), drv)
    assert fast(ok_cfg(lk.info), ()) is True
    assert fast(ok_cfg(lk.info), (1,)) is False
    assert len(drv.calls) == 1


def test_convert_arg_kinds():
    a = FakeArray(0x1000, (4,))
    assert ln.convert_arg(0, a, 0) == (a, None, True)
    assert ln.convert_arg(0, 3, 0) == (3, None, True)
    assert ln.convert_arg(0, np.float32(2), 0)[2] is True
    assert ln.convert_arg(0, (1, 2), 0) == ((1, 2), None, False)
    obj = object()
    assert ln.convert_arg(0, obj, 0) == (obj, None, False)


def test_convert_arg_mapped_like_ndarray_passes_in_place():
    class Mapped(np.ndarray):
        pass

    m = np.zeros(4, np.float32).view(Mapped)
    m._data_ptr = 0x5000
    v, back, fast_ok = ln.convert_arg(0, m, 0)
    assert v is m and back is None and fast_ok is False


_ABI_TYPES = [ct.boolean, ct.int8, ct.uint16, ct.int32, ct.uint64, ct.float16, ct.float32,
              ct.float64, ct.complex64, ct.complex128, ct.float32[::1], ct.int64[:, :],
              ct.Array(ct.float64, 0, "C"), ct.Array(ct.uint8, 3, "F"),
              ct.UniTuple(ct.int32, 2), ct.Tuple((ct.float64, ct.int8)),
              ct.Record(np.dtype([("a", np.int32), ("b", np.float64)]))]


@given(st.lists(st.sampled_from(_ABI_TYPES), max_size=6))
def test_packer_matches_the_lowered_kernel_parameters(argtypes):
    """The launcher and the front end agree on the flattened parameter list (count and size
    of each parameter)."""
    from cujit.nvvm.lowering import flatten_argtypes
    params = flatten_argtypes(tuple(argtypes))
    p = ln.ArgPacker(tuple(argtypes))
    assert p.nparams == len(params)
    fmts = [c for t in argtypes for c, _ in ln.param_layout(t, "x")]
    for f, lt in zip(fmts, params):
        s = str(lt)
        want = 8 if s.endswith("*") else {"i1": 1, "i8": 1, "i16": 2, "i32": 4, "i64": 8,
                                          "half": 2, "float": 4, "double": 8}[s]
        assert struct.calcsize("<" + f) == want, (f, s)


def test_fast_path_declines_an_array_of_other_writability(fake_ctx):
    """A read-only CUDA-array-interface import types as a readonly array, so a fast path
    made for a writable array of the same dtype/ndim/layout must not take it (the kernel
    could write through it without the readonly TypingError)."""
    drv = FakeDriver()
    a = FakeArray(0x1000, (100,))
    a._readonly = False
    lk, fast = make((ct.float32[::1],), (a,), fake_ctx, drv)
    c = ok_cfg(lk.info)
    ro = FakeArray(0x2000, (100,))
    ro._readonly = True
    assert fast(c, (ro,)) is False
    assert fast(c, (a,)) is True
    assert len(drv.calls) == 1


class _Alloc:
    readonly = False     # as MemoryPointer: imports set it True on the instance


def test_fast_path_reads_writability_off_the_allocation(fake_ctx):
    """With MemoryPointer-like allocations the guard reads ``gpu_data.readonly`` (no
    property call): a read-only import, an array without an allocation (size 0) and one whose
    allocation lacks the attribute all decline, the writable array launches."""
    drv = FakeDriver()
    a = FakeArray(0x1000, (100,))
    a.gpu_data, a._readonly = _Alloc(), False
    lk, fast = make((ct.float32[::1],), (a,), fake_ctx, drv)
    c = ok_cfg(lk.info)
    ro = FakeArray(0x2000, (100,))
    ro.gpu_data, ro._readonly = _Alloc(), True
    ro.gpu_data.readonly = True
    empty = FakeArray(0x3000, (100,))
    empty.gpu_data, empty._readonly = None, False
    other = FakeArray(0x4000, (100,))
    other.gpu_data, other._readonly = object(), False
    assert fast(c, (ro,)) is False
    assert fast(c, (empty,)) is False
    assert fast(c, (other,)) is False
    assert len(drv.calls) == 0
    assert fast(c, (a,)) is True
    assert len(drv.calls) == 1


def test_dispatcher_installs_fast_paths_most_recent_first_and_bounded():
    # launcher.launch_converted returns the fast path; only the dispatcher keeps it.
    import cujit
    from cujit.dispatch import dispatcher as dp

    @cujit.jit
    def k(a):
        a[0] = 1

    fs = [object() for _ in range(dp._MAX_FAST + 2)]
    for f in fs:
        k._install_fast(f)
    assert k._fast is fs[-1] and len(k._fasts) == dp._MAX_FAST
    k._install_fast(fs[3])
    assert k._fast is fs[3] and k._fasts[:2] == [fs[3], fs[-1]]
    assert len(k._fasts) == dp._MAX_FAST and fs[0] not in k._fasts


def test_fast_path_with_many_scalars_packs_each_and_checks_each_type(fake_ctx):
    drv = FakeDriver()
    types = (ct.int64,) * 200 + (ct.float64,) * 56
    vals = tuple(range(200)) + tuple(float(i) for i in range(56))
    lk, fast = make(types, vals, fake_ctx, drv)
    c = ok_cfg(lk.info)
    assert fast(c, vals)
    assert fast.packer.values() == vals
    bad = list(vals)
    bad[199] = 1.5                      # a float where an int64 was specialised
    assert fast(c, tuple(bad)) is False
    bad = list(vals)
    bad[255] = 3                        # an int where a float64 was: another specialisation
    assert fast(c, tuple(bad)) is False
    assert fast(c, vals[:-1]) is False
    assert fast(c, vals + (1,)) is False
    assert len(drv.calls) == 1
