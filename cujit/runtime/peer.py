"""Peer access between the primary contexts of two devices (CUDA Driver API "Peer Context
Memory Access"); numba.cuda has no peer API.

:func:`enable_peer_access` is :meth:`cujit.runtime.devices.Context.enable_peer_access`.  The
result is remembered per (context, peer) pair in ``Context.peer_access``, so the driver is
asked once: cuDeviceCanAccessPeer, then cuCtxEnablePeerAccess with the context made current
for the call and the thread's binding put back afterwards (an allocation after it must still
land on the thread's own device).  Peer access lasts as long as the primary context; cujit
never resets that in the driver, and :func:`cujit.close` makes new Context objects, whose
table starts empty.
"""
import threading

from ..driver import get_driver

__all__ = ["enable_peer_access"]

_lock = threading.Lock()


def enable_peer_access(ctx, peer, binding):
    """Let context ``ctx`` access device memory of context ``peer`` directly (kernels on
    ``ctx``'s device dereferencing ``peer``'s pointers; copies over the devices' link).

    Returns True when access is enabled (now or before) and False when the two devices cannot
    access each other (cuDeviceCanAccessPeer is 0): copies between them still work, staged
    through the host by the driver.  Idempotent; the driver is asked once per pair.
    ``binding``: the thread-local context binding of runtime/devices.py (``.bound``), put
    back after the call (this module cannot import devices.py: it imports this one).
    TypeError when ``peer`` is not a Context, ValueError when it is ``ctx`` itself (a context
    always reaches its own memory); CudaAPIError from the driver (e.g. a closed context)."""
    if not isinstance(peer, type(ctx)):
        raise TypeError(f"enable_peer_access expects a cujit Context, got {peer!r} of type "
                        f"{type(peer).__name__}")
    if peer is ctx or peer.device.id == ctx.device.id:
        raise ValueError(f"enable_peer_access: {peer!r} is the context itself; peer access "
                         "is between the contexts of two different devices")
    table = ctx.peer_access
    state = table.get(peer)
    if state is not None:
        return state
    with _lock:
        state = table.get(peer)
        if state is None:
            drv = get_driver()
            state = bool(drv.device_can_access_peer(ctx.device.id, peer.device.id))
            if state:
                if peer.closed:
                    peer.make_current()         # raises the closed-context CudaAPIError
                prev = getattr(binding, "bound", None)
                ctx.make_current()
                try:
                    drv.ctx_enable_peer_access(peer.handle)
                finally:
                    if prev is not None and prev is not ctx and not prev.closed:
                        prev.make_current()
            table[peer] = state
    return state
