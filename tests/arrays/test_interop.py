"""CUDA Array Interface and DLPack, with cujit on both sides (any backend)."""
import ctypes
import gc

import numpy as np
import pytest

import cujit
from cujit import types as T
from cujit.arrays import _runtime as _rt
from cujit.arrays import dlpack
from arrays_strategies import STRUCT, fill


class Foreign:
    """A minimal producer: exports a cujit array's interface under another type."""

    def __init__(self, arr, **override):
        self.arr = arr
        self.desc = dict(arr.__cuda_array_interface__, **override)

    @property
    def __cuda_array_interface__(self):
        return self.desc


@pytest.mark.parametrize("make", [
    lambda: np.arange(24.0).reshape(4, 6),
    lambda: np.asfortranarray(np.arange(24, dtype=np.int16).reshape(4, 6)),
    lambda: fill((5,), STRUCT),
    lambda: np.array(2.5),
])
def test_cai_roundtrip_zero_copy(make):
    h = make()
    d = cujit.to_device(h)
    f = Foreign(d)
    v = cujit.as_cuda_array(f)
    assert v._data_ptr == d._data_ptr and v.shape == d.shape and v.strides == d.strides
    assert v.dtype == d.dtype
    assert v.gpu_data.owner is f       # keeps the producer alive
    assert np.array_equal(v.copy_to_host(), h)
    v[...] = h[...] if h.ndim else h[()]
    assert np.array_equal(d.copy_to_host(), h)


def test_cai_of_negative_and_strided_views():
    h = np.arange(40).reshape(5, 8)
    d = cujit.to_device(h)
    for key in (np.s_[::-1], np.s_[:, ::-3], np.s_[1::2, 2:7]):
        v = cujit.as_cuda_array(Foreign(d[key]))
        assert np.array_equal(v.copy_to_host(), h[key])
        cai = d[key].__cuda_array_interface__
        assert cai["strides"] == h[key].strides


def test_cai_keeps_producer_alive():
    d = cujit.to_device(np.arange(8.0))
    f = Foreign(d)
    v = cujit.as_cuda_array(f)
    del f, d
    gc.collect()
    assert np.array_equal(v.copy_to_host(), np.arange(8.0))


def test_cai_readonly_descr_and_stream_keys():
    d = cujit.to_device(fill((3,), STRUCT))
    cai = d.__cuda_array_interface__
    assert cai["descr"] == STRUCT.descr and cai["typestr"] == STRUCT.str
    assert cai["data"] == (d._data_ptr, False)
    # version 2 producers have no stream key
    desc = {k: v for k, v in cai.items() if k != "stream"}
    desc["version"] = 2
    v = cujit.from_cuda_array_interface(desc)
    assert v.stream == 0 and v.dtype == STRUCT


def _live_count():
    return len(dlpack._live)


@pytest.mark.parametrize("max_version", [None, (0, 8), (1, 0), (1, 3)])
def test_dlpack_roundtrip(max_version):
    h = np.arange(12, dtype=np.float32).reshape(3, 4)
    d = cujit.to_device(h)
    before = _live_count()
    cap = d.__dlpack__(max_version=max_version)
    assert _live_count() == before + 1
    name = b"dltensor_versioned" if max_version and max_version[0] >= 1 else b"dltensor"
    assert dlpack._PyCapsule_IsValid(cap, name)
    v = cujit.from_dlpack(cap)
    assert dlpack._PyCapsule_IsValid(cap, b"used_" + name)
    assert v._data_ptr == d._data_ptr and v.shape == (3, 4) and v.strides == (16, 4)
    assert np.array_equal(v.copy_to_host(), h)
    del v
    gc.collect()
    assert _live_count() == before     # the consumer called the deleter
    del cap


def test_dlpack_protocol_objects_and_views():
    h = np.arange(30, dtype=np.int64).reshape(5, 6)
    d = cujit.to_device(h)
    for key in (np.s_[:, ::2], np.s_[::-1], np.s_[2]):
        v = cujit.from_dlpack(d[key])
        assert v._data_ptr == d[key]._data_ptr
        assert np.array_equal(v.copy_to_host(), h[key])
    assert d.__dlpack_device__() == (dlpack.kDLCUDA, cujit.current_context().device.id)
    b = cujit.from_dlpack(cujit.to_device(np.array([True, False])))
    assert b.dtype == np.bool_ and b.copy_to_host().tolist() == [True, False]


def test_unconsumed_capsule_frees_its_struct():
    d = cujit.to_device(np.arange(4.0))
    before = _live_count()
    cap = d.__dlpack__(max_version=(1, 0))
    assert _live_count() == before + 1
    del cap
    gc.collect()
    assert _live_count() == before


def test_dlpack_copy_flag_and_errors():
    d = cujit.to_device(np.arange(4.0))
    cap = d.__dlpack__(max_version=(1, 0), copy=True)
    st = dlpack.DLManagedTensorVersioned.from_address(
        dlpack._PyCapsule_GetPointer(cap, b"dltensor_versioned"))
    assert st.flags & 2 and st.dl_tensor.data != d._data_ptr
    v = cujit.from_dlpack(cap)
    assert np.array_equal(v.copy_to_host(), np.arange(4.0))
    with pytest.raises(BufferError, match="device"):
        d.__dlpack__(dl_device=(1, 0))
    with pytest.raises(ValueError, match="stream=0"):
        d.__dlpack__(stream=0)
    with pytest.raises(BufferError, match="dtype"):
        cujit.to_device(fill((2,), STRUCT)).__dlpack__()
    odd = cujit.device_array(8, np.int8).view(np.int8)
    odd = cujit.DeviceNDArray((3,), (3,), np.int16, gpu_data=odd.gpu_data)
    with pytest.raises(BufferError, match="multiples"):
        odd.__dlpack__()
    with pytest.raises(TypeError, match="not CUDA"):
        cujit.from_dlpack(np.arange(3))
    with pytest.raises(TypeError, match="capsule"):
        cujit.from_dlpack(object())
    used = d.__dlpack__()
    cujit.from_dlpack(used)
    with pytest.raises(TypeError, match="unused"):
        cujit.from_dlpack(used)


def test_dlpack_stream_ordering(monkeypatch):
    drv = _rt.driver()
    waits = []
    real = drv.stream_wait_event
    monkeypatch.setattr(drv, "stream_wait_event", lambda s, e: waits.append(s) or real(s, e))
    s1, s2 = cujit.stream(), cujit.stream()
    d = cujit.device_array(4).bind(s1)
    d.__dlpack__(stream=s2.handle)
    assert waits == [s2.handle]
    waits.clear()
    d.__dlpack__(stream=s1.handle)
    d.__dlpack__(stream=-1)
    assert waits == []
    cujit.device_array(4).__dlpack__(stream=1)
    assert waits == []


def test_device_record():
    rec = fill((1,), STRUCT, seed=3)[0]
    dr = cujit.to_device(rec)
    assert isinstance(dr, cujit.DeviceRecord)
    back = dr.copy_to_host()
    assert back.tobytes() == rec.tobytes()
    assert dr["a"] == rec["a"] and dr["b"] == rec["b"]
    assert np.array_equal(dr["c"].copy_to_host(), rec["c"])
    dr["a"] = 77
    assert dr.copy_to_host()["a"] == 77
    with pytest.raises(KeyError, match="no field 'zz'"):
        dr["zz"]
    with pytest.raises(TypeError, match="incompatible dtype"):
        dr.copy_to_device(np.zeros((), np.int32))
    assert ctypes.c_void_p(dr._data_ptr).value == dr.device_ctypes_pointer.value


def _open_in_child(handle, q):
    import numpy as _np  # noqa: F401
    import cujit as _cujit  # noqa: F401
    try:
        with handle as arr:
            q.put(arr.copy_to_host().tolist())
    except Exception as exc:  # pragma: no cover - reported to the parent
        q.put(repr(exc))


@pytest.mark.gpu
def test_ipc_handle_opens_in_another_process():
    import multiprocessing as mp
    import pickle
    d = cujit.to_device(np.arange(10, dtype=np.int32))
    h = d[2:].get_ipc_handle()
    pickle.loads(pickle.dumps(h))
    ctx = mp.get_context("spawn")
    q = ctx.Queue()
    p = ctx.Process(target=_open_in_child, args=(h, q))
    p.start()
    got = q.get(timeout=120)
    p.join(60)
    assert got == list(range(2, 10))


@pytest.mark.sim
def test_ipc_handle_on_the_simulator_is_a_clear_error():
    d = cujit.to_device(np.arange(4))
    with pytest.raises(cujit.CudaAPIError, match="cuIpcGetMemHandle.*CUDA_ERROR_NOT_SUPPORTED"):
        d.get_ipc_handle()


def test_cai_default_stream_imports_share_the_contexts_stream_object():
    a = cujit.device_array(8, np.float32)
    ctx = cujit.current_context()
    one = cujit.as_cuda_array(Foreign(a, stream=1), sync=False)
    two = cujit.as_cuda_array(Foreign(a, stream=2), sync=False)
    assert one.stream is ctx.get_legacy_default_stream() and one.stream.handle == 1
    assert two.stream is ctx.get_per_thread_default_stream() and two.stream.handle == 2
    assert cujit.as_cuda_array(Foreign(a, stream=1), sync=False).stream is one.stream


def test_cai_plain_and_full_parse_agree():
    from cujit.arrays import interop
    a = cujit.to_device(np.arange(12, dtype=np.int32).reshape(3, 4))
    desc = a.__cuda_array_interface__
    plain = interop._parse_plain(desc)
    assert plain is not None
    full = interop._parse(dict(desc, strides=(16, 4)))     # explicit strides: the full parse
    assert plain[:5] == full[:5] and plain[5] == "C" and full[5] is None
    v = cujit.as_cuda_array(Foreign(a))
    np.testing.assert_array_equal(v.copy_to_host(), np.arange(12).reshape(3, 4))


@pytest.mark.parametrize("override, err", [
    ({"shape": (3, -4)}, ValueError), ({"typestr": "|O8"}, ValueError),
    ({"data": (None, False)}, ValueError), ({"version": -1}, ValueError),
    ({"shape": (3.0, 4)}, ValueError)])
def test_cai_plain_parse_leaves_bad_interfaces_to_the_full_checks(override, err):
    a = cujit.device_array((3, 4), np.int32)
    with pytest.raises(err, match="malformed __cuda_array_interface__"):
        cujit.as_cuda_array(Foreign(a, **override))


def test_dlpack_import_refuses_a_device_no_process_device_has():
    a = cujit.device_array(4, np.float32)

    class Elsewhere:
        def __dlpack__(self, stream=None, max_version=None):
            return a.__dlpack__(stream=stream, max_version=max_version)

        def __dlpack_device__(self):
            return (dlpack.kDLCUDA, 99)
    with pytest.raises(ValueError, match="reports CUDA device 99"):
        cujit.from_dlpack(Elsewhere())
    assert cujit.from_dlpack(a).shape == (4,)       # the current device's: imported


def test_import_synchronises_the_exporters_stream_through_its_stream_object():
    from cujit.runtime.events import synchronized
    s = cujit.stream()
    f = Foreign(cujit.device_array(10, stream=s))
    seen = []
    with synchronized.listening(lambda what, handle, t0: seen.append((what, handle))):
        cujit.as_cuda_array(f)
        cujit.as_cuda_array(Foreign(cujit.device_array(10)))       # no stream: no wait
    assert seen == [("stream", s.handle)]


def test_view_of_import_and_import_of_view_span_the_same_bytes():
    c = cujit.to_device(np.arange(10.0))
    whole = cujit.as_cuda_array(c)
    strided = cujit.as_cuda_array(c[::2])
    assert whole.alloc_size == c.alloc_size == 80
    assert whole[::2].alloc_size == strided.alloc_size == 72
    assert c[2:5].alloc_size == 24 and c[::-1].alloc_size == 80
    assert cujit.device_array(0).alloc_size == 0


class ForeignWithDtype(Foreign):
    """A producer like CuPy 14 with a bfloat16 array: the interface says ``<V2`` (NumPy
    extension dtypes have no typestr), the object's ``dtype`` says what it holds."""

    def __init__(self, arr, dtype, **override):
        super().__init__(arr, **override)
        self.dtype = dtype


def test_cai_opaque_void_takes_the_exporters_dtype():
    ml_dtypes = pytest.importorskip("ml_dtypes")
    bf16 = np.dtype(ml_dtypes.bfloat16)
    h = np.asarray([1, 2, 3], dtype=bf16)
    f = ForeignWithDtype(cujit.to_device(h), bf16)
    assert f.__cuda_array_interface__["typestr"][1:] == "V2"
    v = cujit.as_cuda_array(f)
    assert v.dtype == bf16
    assert T.typeof(f) is T.Array(T.bfloat16, 1, "C")
    np.testing.assert_array_equal(v.copy_to_host(), h)


@pytest.mark.parametrize("dtype", [None, np.dtype("f4"), "not a dtype",
                                   np.dtype([("a", "u1"), ("b", "u1")])])
def test_cai_opaque_void_keeps_its_dtype_without_a_same_sized_plain_one(dtype):
    h = np.zeros(3, np.dtype("V2"))
    f = ForeignWithDtype(cujit.to_device(h), dtype)
    assert cujit.as_cuda_array(f).dtype == np.dtype("V2")
    with pytest.raises(TypeError, match="V2"):
        T.typeof(f)      # an opaque void is no kernel dtype


def test_cupy_like_bfloat16_array_in_a_kernel():
    ml_dtypes = pytest.importorskip("ml_dtypes")
    bf16 = np.dtype(ml_dtypes.bfloat16)

    @cujit.jit
    def k(out, a):
        i = cujit.grid(1)
        if i < a.size:
            out[i] = 2 * a[i] + ml_dtypes.bfloat16(3.0)

    a = ForeignWithDtype(cujit.to_device(np.asarray([1, 2, 3], dtype=bf16)), bf16)
    out = ForeignWithDtype(cujit.to_device(np.zeros(3, bf16)), bf16)
    k[1, 4](out, a)
    np.testing.assert_array_equal(out.arr.copy_to_host().astype(np.float32), [5, 7, 9])
