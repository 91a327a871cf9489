"""Several devices (``CUJIT_SIM_DEVICES=2``, ``with cujit.gpus[i]:``).

On the simulator a kernel on device 1 read and wrote device 0's array without peer access (a
fault on a GPU), a kernel launched on a stream of the other device ran (a GPU refuses it, as
it refuses recording an event on another device's stream), and the simulated driver's
cuDevicePrimaryCtxReset of one device destroyed the other device's streams and events."""
import numpy as np
import pytest

import cujit
from cujit.driver import get_driver
from cujit.driver.errors import CudaAPIError


@pytest.fixture
def two_sim_devices(two_sim_devices):
    """The shared two simulated devices, with no peer access between them yet: device 1's
    context is reset (earlier tests' peer access from and to device 1 goes with it)."""
    ctxs = two_sim_devices
    ctxs[1].reset()
    get_driver().primary_ctx_reset(1)
    for c in ctxs:
        c.peer_access.clear()
    return ctxs


@cujit.jit
def _inc(a):
    i = cujit.grid(1)
    if i < a.size:
        a[i] += 1


@pytest.mark.sim
def test_kernel_on_one_device_reading_the_other_without_peer_access_raises(two_sim_devices):
    x = np.arange(10, dtype=np.float32)
    with cujit.gpus[0]:
        d0 = cujit.to_device(x)
    with cujit.gpus[1]:
        with pytest.raises(CudaAPIError, match=r"argument 'a' .* memory of device 0.*"
                                               r"device 1 without peer access") as ei:
            _inc[1, 32](d0)
        assert ei.value.code == 700
    np.testing.assert_array_equal(d0.copy_to_host(), x)      # untouched
    ctx0, ctx1 = two_sim_devices
    assert ctx1.enable_peer_access(ctx0) is True
    with cujit.gpus[1]:
        _inc[1, 32](d0)                     # with peer access: allowed, as on a GPU
    np.testing.assert_array_equal(d0.copy_to_host(), x + 1)


def test_kernel_on_a_stream_of_the_other_device_raises(two_devices):
    x = np.arange(10, dtype=np.float32)
    with cujit.gpus[0]:
        s0 = cujit.stream()
    with cujit.gpus[1]:
        d1 = cujit.to_device(x)
        with pytest.raises(CudaAPIError) as ei:
            _inc[1, 32, s0](d1)
            cujit.synchronize()
        if get_driver().is_simulator:
            assert ei.value.code == 400 and "belongs to device 0" in str(ei.value)
        s1 = cujit.stream()
        _inc[1, 32, s1](d1)
        s1.synchronize()
        np.testing.assert_array_equal(d1.copy_to_host(), x + 1)
        # copies may use any device's stream (CUDA programming guide, multi-device streams)
        out = np.zeros_like(x)
        d1.copy_to_host(out, stream=s0)
        s0.synchronize()
        np.testing.assert_array_equal(out, x + 1)


def test_event_recorded_on_a_stream_of_the_other_device_raises(two_devices):
    with cujit.gpus[0]:
        e0 = cujit.event()
        s0 = cujit.stream()
    with cujit.gpus[1]:
        s1 = cujit.stream()
        with pytest.raises(CudaAPIError) as ei:
            e0.record(s1)
        if get_driver().is_simulator:
            assert ei.value.code == 400 and "event" in str(ei.value)
    e0.record(s0)
    e0.synchronize()


@pytest.mark.sim
def test_driver_reset_of_one_device_keeps_the_other_devices_streams(two_sim_devices):
    """cuDevicePrimaryCtxReset of device 1 destroys device 1's streams and events only."""
    drv = get_driver()
    with cujit.gpus[0]:
        s0, e0 = drv.stream_create(), drv.event_create()
    with cujit.gpus[1]:
        s1, e1 = drv.stream_create(), drv.event_create()
    drv.primary_ctx_reset(1)
    with cujit.gpus[0]:
        drv.event_record(e0, s0)
        drv.stream_synchronize(s0)
        with pytest.raises(CudaAPIError, match="does not exist"):
            drv.stream_synchronize(s1)
        with pytest.raises(CudaAPIError, match="does not exist"):
            drv.event_query(e1)
        drv.event_destroy(e0)
        drv.stream_destroy(s0)


@pytest.mark.parametrize("i", [2, -3, 99])
def test_gpus_index_out_of_range_names_index_and_count(two_devices, i):
    with pytest.raises(IndexError, match=rf"gpus\[{i}\].*2 device\(s\) present"):
        cujit.gpus[i]
    assert cujit.gpus[-1] is not None and len(cujit.gpus[0:2]) == 2


@pytest.mark.parametrize("i", ["0", 1.0, None, True])
def test_gpus_index_of_wrong_type_is_type_error(i):
    with pytest.raises(TypeError, match=r"gpus\[.*\]: a device index must be an int"):
        cujit.gpus[i]


def test_elapsed_time_between_events_of_two_devices_raises(two_devices):
    evs = []
    for dev in (0, 1):
        with cujit.gpus[dev]:
            s, e = cujit.stream(), cujit.event()
            e.record(s)
            e.synchronize()
            evs.append(e)
    with pytest.raises(CudaAPIError) as ei:
        evs[0].elapsed_time(evs[1])
    if get_driver().is_simulator:
        assert ei.value.code == 400 and "devices 0 and 1" in str(ei.value)
    with cujit.gpus[1]:
        e2 = cujit.event()
        e2.record()
        e2.synchronize()
        assert evs[1].elapsed_time(e2) >= 0


@pytest.mark.sim
def test_a_device_made_while_two_were_present_is_out_of_range_with_one():
    import cujit
    from cujit.runtime.devices import device_of
    cujit.config.SIM_DEVICES = 2
    try:
        assert device_of(1).id == 1         # made (and kept in the device table) now
    finally:
        del cujit.config.SIM_DEVICES
        cujit.current_context()
    with pytest.raises(IndexError, match="device id 1 out of range: 1 device"):
        device_of(1)
