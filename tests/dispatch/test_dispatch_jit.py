"""``@jit`` forms, launch-configuration syntax and launch-time argument errors (R-KER-1).
These run on whichever backend is active."""
import numpy as np
import pytest

import cujit
from cujit import types as ct
from cujit.dispatch.dispatcher import Dispatcher, DeviceFunction, jit


def add_one(a):
    i = cujit.grid(1)
    if i < a.size:
        a[i] += 1


def test_jit_forms():
    k1 = jit(add_one)
    k2 = jit()(add_one)
    k3 = cujit.jit(debug=False, opt=True, lineinfo=False)(add_one)
    for k in (k1, k2, k3):
        assert isinstance(k, Dispatcher) and k.py_func is add_one
        assert k.__name__ == "add_one" and k._cujit_kernel
    assert jit(k1).py_func is add_one          # re-jitting unwraps
    d = jit(device=True)(add_one)
    assert isinstance(d, DeviceFunction) and d._cujit_device_function and d.py_func is add_one
    assert jit(add_one, device=True).py_func is add_one


def test_jit_bad_options_and_signatures():
    with pytest.raises(TypeError, match="unknown option.*'fast'"):
        jit(fast=True)
    with pytest.raises(ValueError, match="cannot parse signature"):
        jit("void(float32[:]")
    with pytest.raises(TypeError, match="signature"):
        jit(3.5)
    with pytest.raises(TypeError, match="Python function"):
        jit("void()")(42)
    with pytest.raises(TypeError, match="2 argument"):
        jit("void(float32[:], int32)")(add_one)
    with pytest.raises(TypeError, match="must return void"):
        jit("int32(float32[:])")(add_one)


def test_calling_without_config():
    k = jit(add_one)
    with pytest.raises(ValueError, match=r"launch configuration was not specified.*kernel\[griddim, blockdim\]"):
        k(np.zeros(3))


@pytest.mark.parametrize("key", [1, (1,), (1, 2, 0, 0, 5), "x"])
def test_bad_config_forms(key):
    k = jit(add_one)
    with pytest.raises(ValueError, match=r"\[griddim, blockdim\]") as ei:
        k[key]
    assert repr(key) in str(ei.value)


def test_bad_config_values_name_the_config():
    k = jit(add_one)
    with pytest.raises(TypeError, match=r"griddim.*launch configuration \[1.5, 32"):
        k[1.5, 32]
    with pytest.raises(ValueError, match=r"MAX_THREADS_PER_BLOCK"):
        k[1, 2048]
    with pytest.raises(TypeError, match="stream"):
        k[1, 32, "s"]
    with pytest.raises(ValueError, match="dynamic shared memory of 10000000 bytes"):
        k[1, 32, 0, 10_000_000]


def test_configs_are_cached():
    k = jit(add_one)
    assert k[4, 32] is k[4, 32]
    assert k[4, 32] is not k[4, 64]
    c = k.configure(2, (8, 4), 0, 16)
    assert c.griddim == (2, 1, 1) and c.blockdim == (8, 4, 1) and c.sharedmem == 16


def test_cached_configurations_keep_no_dropped_stream_alive():
    import gc
    import weakref
    k = jit(add_one)
    d = cujit.to_device(np.zeros(4, np.int64))
    refs = []
    for _ in range(20):
        s = cujit.stream()
        k[1, 4, s](d)
        assert k[1, 4, s] is k[1, 4, s]         # cached while the stream lives
        s.synchronize()
        refs.append(weakref.ref(s))
        del s
    gc.collect()
    # the last configuration's stream stays until the kernel is configured again
    assert sum(r() is not None for r in refs) <= 1
    k[1, 4](d)
    gc.collect()
    assert all(r() is None for r in refs)
    assert len(k._configs) == 1                 # entries of dead streams are gone
    cujit.synchronize()
    assert d.copy_to_host().tolist() == [21] * 4


def test_a_temporary_stream_lives_through_its_launch():
    k = jit(add_one)
    # one array per launch: kernels on different streams are not ordered among themselves
    ds = [cujit.to_device(np.zeros(4, np.int64)) for _ in range(3)]
    for d in ds:
        k[1, 4, cujit.stream()](d)
    cujit.synchronize()
    assert [d.copy_to_host().tolist() for d in ds] == [[1] * 4] * 3


def test_launching_on_a_dropped_stream_is_an_error():
    import gc
    k = jit(add_one)
    d = cujit.to_device(np.zeros(4, np.int64))
    s = cujit.stream()
    held = k[1, 4, s]
    k[1, 4]                 # the kernel's last configuration no longer names ``s``
    del s
    gc.collect()
    with pytest.raises(ValueError, match=r"stream of launch configuration .* no longer exists"):
        held(d)
    assert d.copy_to_host().tolist() == [0] * 4


def test_a_stream_object_without_weak_references_is_cached_by_handle_not_kept():
    s = cujit.stream()

    class Foreign:
        __slots__ = ()

        def __cuda_stream__(self):
            return (0, s.handle)

    k = jit(add_one)
    f = Foreign()
    conf = k[1, 4, f]
    assert k[1, 4, f] is conf
    # neither the cache's key nor the configuration refers to the object (it would keep it
    # alive): the configuration holds a cujit Stream of its handle
    assert not any(v is f for key in k._configs for v in key)
    assert conf.stream is not f and conf.stream.handle == s.handle
    d = cujit.to_device(np.zeros(4, np.int64))
    k[1, 4, f](d)
    s.synchronize()
    assert d.copy_to_host().tolist() == [1] * 4


def test_unhashable_stream_object_is_accepted():
    s = cujit.stream()

    class Unhashable:
        __hash__ = None

        def __cuda_stream__(self):
            return (0, s.handle)

    k = jit(add_one)
    c = k[1, 32, Unhashable()]
    assert c.stream_handle == s.handle
    d = cujit.to_device(np.zeros(4, np.int64))
    c(d)
    s.synchronize()
    assert d.copy_to_host().tolist() == [1, 1, 1, 1]


def test_wrong_argument_count():
    k = jit(add_one)
    d = cujit.to_device(np.zeros(4))
    with pytest.raises(TypeError, match="takes 1 argument.*2 were given"):
        k[1, 4](d, d)
    with pytest.raises(TypeError, match="0 were given"):
        k[1, 4]()
    assert d.copy_to_host().tolist() == [0, 0, 0, 0]


@pytest.mark.parametrize("bad", ["text", {"a": 1}, [1, 2], object()])
def test_wrong_argument_type(bad):
    k = jit(add_one)
    with pytest.raises(TypeError, match="argument 0 of kernel add_one"):
        k[1, 4](bad)


def test_none_for_an_array_parameter_is_typingerror_naming_it():
    """None is a kernel argument (typed none); indexing it is what fails, at typing."""
    k = jit(add_one)
    with pytest.raises(cujit.TypingError, match="parameter 'a' of add_one is None here"):
        k[1, 4](None)


def test_device_function_outside_kernel():
    d = jit(device=True)(add_one)
    with pytest.raises(TypeError, match="can only be called from a kernel"):
        d(np.zeros(3))


def test_eager_signature_rejects_other_types():
    k = jit("void(float32[::1])")(add_one)
    assert k._declared == [(ct.float32[::1],)]
    with pytest.raises(TypeError, match=r"No matching definition.*float64.*declared"):
        k[1, 4](cujit.to_device(np.zeros(4, np.float64)))


def test_eager_signature_launch():
    k = jit(["void(int64[::1])", "void(float32[::1])"])(add_one)
    a = np.zeros(5, np.float32)
    k[1, 8](a)
    assert a.tolist() == [1.0] * 5
    b = cujit.to_device(np.arange(3, dtype=np.int64))
    k[1, 8](b)
    assert b.copy_to_host().tolist() == [1, 2, 3]


def test_signature_objects_and_device_signatures():
    from cujit import void, float32, int32
    k = jit(void(float32[::1]))(add_one)
    assert k._declared == [(ct.float32[::1],)]
    k2 = jit((float32[::1],))(add_one)
    assert k2._declared == [(ct.float32[::1],)]
    d = jit("float32(float32)", device=True)(add_one)
    assert isinstance(d, DeviceFunction) and d.sigs[0].return_type is float32
    assert jit([void(int32[::1])])(add_one)._declared == [(ct.int32[::1],)]


def test_kernel_metadata():
    k = jit(add_one)
    assert k.__wrapped__ is add_one and k.__doc__ == add_one.__doc__
    assert "add_one" in repr(k) and "add_one" in repr(k[1, 1])
    assert k.inspect_llvm() == {} and k.overloads == {}


@pytest.mark.sim
def test_resource_queries_need_a_gpu():
    k = jit(add_one)
    with pytest.raises(RuntimeError, match="simulator"):
        k.get_regs_per_thread()


def test_eager_signature_type_errors_surface_at_decoration():
    """docs/guide.md §2: a kernel with an explicit signature is typed when it is decorated, on
    the simulator as on a GPU, so its error does not wait for the first launch."""
    from cujit.frontend.errors import TypingError
    with pytest.raises(TypingError, match="no_such_name") as ei:
        @jit("void(float32[:], float32)")
        def broken(a, x):
            a[0] = x + no_such_name  # noqa: F821
    assert ei.type is TypingError
    with pytest.raises(TypingError, match="nope"):
        @jit("void(float32[:], float32)")
        def broken_attr(a, x):
            a[0] = x.nope


def test_device_function_cannot_be_launched_or_show_sass():
    d = jit(device=True)(add_one)
    with pytest.raises(RuntimeError, match="Cannot compile a device function as a kernel"):
        d[1, 1]
    with pytest.raises(RuntimeError, match="Cannot inspect SASS of a device function"):
        d.inspect_sass((ct.int32,))
