"""Differential tests: every device-array operation gives exactly what NumPy gives on the same
data (generated shapes incl. 0-d and size 0, dtypes incl. structured, C/F orders, slices with
negative steps).  Backend-agnostic: the simulator here, the GPU on the device machine."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st, HealthCheck

import cujit
from cujit.arrays.record import DeviceRecord
from cujit.arrays import _runtime as _rt
from arrays_strategies import host_arrays, basic_keys, fill, DTYPES

SETTINGS = settings(max_examples=120, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def same(a, b):
    a, b = np.asarray(a), np.asarray(b)
    assert a.shape == b.shape
    assert a.dtype == b.dtype
    assert a.tobytes() == np.ascontiguousarray(b).tobytes() or np.array_equal(a, b)
    assert np.ascontiguousarray(a).tobytes() == np.ascontiguousarray(b).tobytes()


@SETTINGS
@given(st.data())
def test_roundtrip_and_views(data):
    a = data.draw(host_arrays())
    d = cujit.to_device(a)
    assert d.shape == a.shape and d.dtype == a.dtype
    if a.size and all(n > 1 for n in a.shape):
        assert d.strides == a.strides
    same(d.copy_to_host(), a)
    key = data.draw(basic_keys(a.shape))
    want = a[key]
    got = d[key]
    if isinstance(want, np.ndarray):
        assert isinstance(got, cujit.DeviceNDArray)
        assert got.shape == want.shape
        if want.size:
            assert got.strides == want.strides
        same(got.copy_to_host(), want)
        assert got.gpu_data is d.gpu_data or got.size == 0
    else:
        # a record element is a DeviceRecord view that writes through (issue 10)
        assert type(got) is (DeviceRecord if a.dtype.fields else type(want))
        assert np.asarray(got).tobytes() == np.asarray(want).tobytes()


@SETTINGS
@given(st.data())
def test_to_device_of_views(data):
    a = data.draw(host_arrays())
    key = data.draw(basic_keys(a.shape, allow_int=True))
    v = a[key]
    if not isinstance(v, np.ndarray):
        return
    if v.ndim and data.draw(st.booleans()):
        v = v.transpose(data.draw(st.permutations(range(v.ndim))))
    d = cujit.to_device(v)
    same(d.copy_to_host(), v)
    # a packed layout in the host view's axis order
    assert d.is_c_contiguous() or d.is_f_contiguous() or d._layout == "A"
    assert d.nbytes == v.nbytes


@SETTINGS
@given(st.data())
def test_copy_to_host_into_strided_destination(data):
    a = data.draw(host_arrays())
    key = data.draw(basic_keys(a.shape, allow_none=False))
    src = a[key]
    if not isinstance(src, np.ndarray):
        return
    d = cujit.to_device(a)
    # a destination view of the same shape inside a bigger, sentinel-filled array
    step = data.draw(st.sampled_from([1, 2, -1]))
    big = fill(tuple(n * 2 + 1 for n in src.shape), a.dtype, seed=5)
    dst_key = tuple(slice(None, None, step) if step > 0 else slice(None, None, -2)
                    for _ in src.shape) + (Ellipsis,)
    sub = tuple(slice(0, n) for n in src.shape) + (Ellipsis,)
    dst = big[dst_key][sub]
    assert dst.shape == src.shape
    want = big.copy()
    want[dst_key][sub] = src
    d[key].copy_to_host(dst)
    same(big, want)


@SETTINGS
@given(st.data())
def test_copy_to_device_from_strided_source_into_view(data):
    a = data.draw(host_arrays())
    key = data.draw(basic_keys(a.shape, allow_none=False))
    view = a[key]
    if not isinstance(view, np.ndarray):
        return
    src_big = fill(tuple(n * 3 for n in view.shape), a.dtype, seed=7)
    src = src_big[tuple(slice(None, None, -3) for _ in view.shape)]
    assert src.shape == view.shape
    d = cujit.to_device(a)
    d[key].copy_to_device(src)
    want = a.copy()
    want[key] = src
    same(d.copy_to_host(), want)


def _value_for(data, shape, dtype):
    kind = data.draw(st.sampled_from(["scalar", "full", "bcast", "device", "device_bcast"]))
    if kind == "scalar" or not shape:
        v = fill((), dtype, seed=data.draw(st.integers(0, 9)))
        return v[()] if dtype.fields is None else v
    if kind in ("full", "device"):
        v = fill(shape, dtype, seed=3)
    else:
        k = data.draw(st.integers(0, len(shape)))
        sub = tuple(1 if data.draw(st.booleans()) else n for n in shape[k:])
        v = fill(sub, dtype, seed=4)
    return cujit.to_device(v) if kind.startswith("device") else v


@SETTINGS
@given(st.data())
def test_setitem_broadcasting(data):
    a = data.draw(host_arrays())
    key = data.draw(basic_keys(a.shape))
    target = a[key]
    shape = target.shape if isinstance(target, np.ndarray) else ()
    value = _value_for(data, shape, a.dtype)
    d = cujit.to_device(a)
    want = a.copy()
    want[key] = value.copy_to_host() if isinstance(value, cujit.DeviceNDArray) else value
    d[key] = value
    same(d.copy_to_host(), want)


@SETTINGS
@given(st.data())
def test_setitem_casts_like_numpy(data):
    a = fill((4, 3), np.dtype(data.draw(st.sampled_from(["i4", "f4", "u1", "c8"]))))
    value = data.draw(st.one_of(st.integers(0, 200), st.floats(-100, 100, width=32),
                                st.lists(st.floats(0, 100, width=32), min_size=3, max_size=3)))
    d = cujit.to_device(a)
    want = a.copy()
    try:
        want[1:3] = value
    except (ValueError, TypeError, OverflowError) as exc:
        with pytest.raises(type(exc)):
            d[1:3] = value
        same(d.copy_to_host(), a)   # destination untouched
        return
    d[1:3] = value
    same(d.copy_to_host(), want)


@SETTINGS
@given(st.data())
def test_device_to_device_between_views(data):
    a = data.draw(host_arrays())
    key = data.draw(basic_keys(a.shape, allow_none=False))
    view = a[key]
    if not isinstance(view, np.ndarray):
        return
    b = fill(tuple(n * 2 for n in view.shape), a.dtype, seed=8)
    bkey = tuple(slice(None, None, data.draw(st.sampled_from([2, -2]))) for _ in view.shape)
    src_host = b[bkey]
    d, e = cujit.to_device(a), cujit.to_device(b)
    d[key] = e[bkey]
    want = a.copy()
    want[key] = src_host
    same(d.copy_to_host(), want)
    f = cujit.device_array_like(view)
    f.copy_to_device(e[bkey])
    same(f.copy_to_host(), src_host)


@SETTINGS
@given(st.data())
def test_reshape_ravel_transpose_squeeze_view(data):
    a = data.draw(host_arrays())
    d = cujit.to_device(a)
    same(d.T.copy_to_host(), a.T)
    if a.ndim:
        perm = data.draw(st.permutations(range(a.ndim)))
        same(d.transpose(perm).copy_to_host(), a.transpose(perm))
    same(d.squeeze().copy_to_host(), a.squeeze())
    order = "F" if a.flags.f_contiguous and not a.flags.c_contiguous else "C"
    same(d.ravel(order=order).copy_to_host(), a.ravel(order=order))
    same(d.T.ravel().copy_to_host(), a.T.ravel())
    same(d.reshape(-1, order=order).copy_to_host(), a.reshape(-1, order=order))
    if a.size and a.dtype.fields is None and a.ndim:
        if a.flags.c_contiguous:
            same(d.view(np.uint8).copy_to_host(), a.view(np.uint8))
        k = data.draw(basic_keys(a.shape, allow_int=False, allow_none=False))
        same(d[k].T.copy_to_host(), a[k].T)


@given(st.integers(0, 40), st.integers(1, 9))
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_split(n, section):
    a = np.arange(n, dtype=np.int32)
    d = cujit.to_device(a)
    parts = d.split(section)
    want = [a[i:i + section] for i in range(0, n, section)]
    assert len(parts) == len(want)
    for p, w in zip(parts, want):
        same(p.copy_to_host(), w)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_element_get_set_every_dtype(dtype):
    a = fill((3, 2), dtype, seed=2)
    d = cujit.to_device(a)
    for i in range(3):
        for j in range(-2, 2):
            got, want = d[i, j], a[i, j]
            # a record element is a DeviceRecord view that writes through (issue 10)
            assert type(got) is (DeviceRecord if a.dtype.fields else type(want))
            assert np.asarray(got).tobytes() == np.asarray(want).tobytes()
    d[1, 1] = a[0, 0]
    a[1, 1] = a[0, 0]
    same(d.copy_to_host(), a)


def test_np_asarray_and_len():
    a = np.arange(6.0).reshape(2, 3)
    d = cujit.to_device(a)
    same(np.asarray(d), a)
    assert np.asarray(d, dtype=np.float32).dtype == np.float32
    assert len(d) == 2
    with pytest.raises(TypeError, match="unsized"):
        len(cujit.device_array(()))


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(st.data())
def test_stream_ordered_copies_of_views(data):
    """The same operations queued on a stream (asynchronous on a GPU) give NumPy's result
    once the stream is synchronised."""
    s = cujit.stream()
    a = data.draw(host_arrays())
    key = data.draw(basic_keys(a.shape, allow_none=False))
    d = cujit.to_device(a, stream=s)
    view = a[key]
    if isinstance(view, np.ndarray):
        value = fill(view.shape, a.dtype, seed=6)
        d.setitem(key, value, stream=s)
        want = a.copy()
        want[key] = value
        out = np.empty_like(want, order="F")
        d.copy_to_host(out, stream=s)
        part = d[key].copy_to_host(stream=s)
        s.synchronize()
        same(out, want)
        same(part, value)
    else:
        got = d.getitem(key, stream=s)
        assert np.asarray(got).tobytes() == np.asarray(view).tobytes()


def _no_overlapping_driver_copies(monkeypatch):
    drv = _rt.driver()
    real_1d, real_2d = drv.memcpy, drv.memcpy_2d

    def check(d, dspan, s, sspan):
        assert not (d < s + sspan and s < d + dspan), "overlapping driver copy"

    def memcpy(d, s, n, stream=0):
        check(d, n, s, n)
        return real_1d(d, s, n, stream)

    def memcpy_2d(d, dp, s, sp, w, h, stream=0):
        check(d, dp * (h - 1) + w, s, sp * (h - 1) + w)
        return real_2d(d, dp, s, sp, w, h, stream)

    monkeypatch.setattr(drv, "memcpy", memcpy)
    monkeypatch.setattr(drv, "memcpy_2d", memcpy_2d)


@pytest.mark.parametrize("dst, src", [
    (np.s_[1:], np.s_[:-1]), (np.s_[:-1], np.s_[1:]), (np.s_[::-1], np.s_[:]),
    (np.s_[2:, 1:], np.s_[:-2, :-1]), (np.s_[:, ::2], np.s_[:, 1::2]), (np.s_[...], np.s_[...]),
])
def test_overlapping_device_assignment_is_as_numpy(monkeypatch, dst, src):
    _no_overlapping_driver_copies(monkeypatch)
    h = np.arange(48, dtype=np.int32).reshape(6, 8)
    if isinstance(dst, slice) and dst == np.s_[::-1]:
        h = h[0].copy()
    d = cujit.to_device(h)
    want = h.copy()
    want[dst] = want[src].copy()
    d[dst] = d[src]
    same(d.copy_to_host(), want)


def test_pickle_by_value():
    import pickle
    h = np.arange(24.0).reshape(4, 6)
    d = cujit.to_device(h)
    e = pickle.loads(pickle.dumps(d[1:, ::2]))
    assert isinstance(e, cujit.DeviceNDArray) and e._data_ptr != d._data_ptr
    same(e.copy_to_host(), h[1:, ::2])


@pytest.mark.parametrize("fill_min", [0, 1 << 30])
@pytest.mark.parametrize("shape, key, value", [
    ((1000,), np.s_[:], 0), ((1000,), np.s_[:], -1), ((1000,), np.s_[:], 3.25),
    ((37, 5), np.s_[...], np.arange(5.0)), ((37, 5), np.s_[3:], np.arange(5.0)),
    ((6, 7, 3), np.s_[2], np.array([[1.0, 2.0, 3.0]])), ((6, 7, 3), np.s_[:, 1:], 7.5),
    ((33, 4), np.s_[:, 1], 9.0), ((8, 4), np.s_[:], np.arange(8.0).reshape(8, 1)),
])
def test_broadcast_fill_paths(monkeypatch, fill_min, shape, key, value):
    import cujit.arrays.devicearray as da
    monkeypatch.setattr(da, "_FILL_MIN", fill_min)
    h = np.arange(np.prod(shape), dtype=np.float64).reshape(shape)
    d = cujit.to_device(h)
    d[key] = value
    h[key] = value
    same(d.copy_to_host(), h)


def test_zero_fill_is_one_memset(monkeypatch):
    drv = _rt.driver()
    calls = []
    for name in ("memset_d8", "memcpy_htod", "memcpy", "memcpy_2d", "memcpy_dtod"):
        real = getattr(drv, name)
        monkeypatch.setattr(drv, name, lambda *a, _r=real, _n=name, **k:
                            calls.append(_n) or _r(*a, **k))
    d = cujit.device_array((300, 40), np.float32)
    d[:] = 0
    assert calls == ["memset_d8"]
    assert not d.copy_to_host().any()
