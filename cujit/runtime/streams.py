"""CUDA streams and events (numba.cuda's ``Stream``/``Event``; docs/requirements.md §5,
R-STR-1..4).

A :class:`Stream` wraps a driver stream handle (an ``int``): 0 is the default stream, 1 is
``CU_STREAM_LEGACY``, 2 is ``CU_STREAM_PER_THREAD``; other values are streams made by
``cuStreamCreateWithPriority`` (destroyed through the context's resource queue when the
``Stream`` dies) or external streams (never destroyed by cujit).

:func:`stream_handle` is the one place that turns a user's ``stream=`` argument into a handle;
every layer above uses it so that anything but ``0``/``None``/a stream is a ``TypeError``.
"""
import contextlib
import warnings
import weakref
from time import perf_counter_ns as _now

import numpy as np

from ..driver import get_driver
from ..driver.errors import CudaAPIError
from .events import synchronized

# The module-level constructors (stream(), event(), ...) are in runtime/api.py.
__all__ = ["Stream", "Event", "event_elapsed_time", "stream_handle", "CallbackWarning"]

# Stream kinds, for reprs and for deciding who destroys the handle.
_NEW, _DEFAULT, _LEGACY = "new", "default", "legacy"
_PER_THREAD, _EXTERNAL = "per-thread", "external"


class CallbackWarning(RuntimeWarning):
    """An exception raised by a stream callback (``Stream.add_callback``), reported as a warning
    because the callback runs on a driver thread where an exception cannot propagate."""


def _cuda_stream_protocol_handle(obj, proto):
    """Handle from a ``__cuda_stream__`` attribute: a method (CUDA stream protocol, returning
    ``(version, handle)``) or, leniently, a plain tuple/int attribute."""
    value = proto() if callable(proto) else proto
    if isinstance(value, tuple):
        if len(value) != 2:
            raise TypeError(f"{type(obj).__name__}.__cuda_stream__() returned {value!r}; "
                            "expected a (version, handle) tuple")
        value = value[1]
    # exact ints only: int() would turn 1.5, True or "12" into a handle
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{type(obj).__name__}.__cuda_stream__() gave handle {value!r}; "
                        "expected an int")
    value = int(value)
    if not 0 <= value < 1 << 64:
        # a stream handle is a pointer; the driver may dereference a wild one
        raise ValueError(f"{type(obj).__name__}.__cuda_stream__() gave handle {value}; "
                         "expected a pointer value in 0..2**64-1")
    return value


def stream_handle(stream):
    """Driver handle (int) of a ``stream=`` argument.

    ``0`` or ``None`` → 0 (the default stream; copies are synchronous; a NumPy integer 0 too,
    as numba.cuda takes any falsy stream for the default one); a :class:`Stream` →
    its ``handle``; any object with ``__cuda_stream__`` (CUDA stream protocol, e.g. a CuPy or
    cuda.core stream) → the handle it reports.  Anything else (other ints, floats, strings)
    raises ``TypeError`` naming the value (R-STR-4)."""
    if stream is None:
        return 0
    t = type(stream)
    if t is Stream or (t is not int and isinstance(stream, Stream)):
        g = stream.generation
        if g is not None and g != stream.context.generation:
            _stale(stream, "stream argument")
        return stream.handle
    if t is int:
        if stream == 0:
            return 0
    else:
        proto = getattr(stream, "__cuda_stream__", None)
        if proto is not None:
            return _cuda_stream_protocol_handle(stream, proto)
        if isinstance(stream, np.integer) and stream == 0:
            return 0
    raise TypeError(f"stream must be 0, None or a cujit Stream (or an object with "
                    f"__cuda_stream__), got {stream!r} of type {t.__name__}")


def _stale(obj, call):
    """CudaAPIError (CUDA_ERROR_INVALID_HANDLE) for a stream/event made before its context was
    reset: the reset destroyed it, and the driver may since have given its handle to a new
    stream or event, so the handle must not reach the driver."""
    raise CudaAPIError(400, f"{obj!r} was destroyed when its context was reset; create a new "
                            "one", call)


def _live_handle(obj, call):
    """``obj.handle`` of a stream or event (the ``_live`` method of both): CudaAPIError from
    :func:`_stale` when cujit made it in an earlier generation of its context."""
    g = obj.generation
    if g is not None and g != obj.context.generation:
        _stale(obj, call)
    return obj.handle


class Stream:
    """A CUDA stream on a context (numba.cuda ``Stream``).

    Made by :func:`stream`, :func:`default_stream`, :func:`external_stream` or the context's
    ``create_stream()``; do not construct directly.  ``handle`` is the driver handle (int);
    ``int(s)`` gives the same.  Streams made by cujit are destroyed (cuStreamDestroy, queued on
    ``context.deallocations``) when the object dies; default and external streams never are."""

    __slots__ = ("handle", "context", "_kind", "_finalizer", "generation", "__weakref__")

    def __init__(self, context, handle, kind=_NEW, finalizer=None):
        self.handle = int(handle)
        self.context = context
        self._kind = kind
        self._finalizer = finalizer
        self.generation = None  # context generation of a stream cujit created (None: external)

    _live = _live_handle

    # -- identity ------------------------------------------------------------------------
    def __int__(self):
        return self.handle

    __index__ = __int__

    def __cuda_stream__(self):
        """CUDA stream protocol: ``(0, handle)``."""
        return (0, self.handle)

    def __eq__(self, other):
        return isinstance(other, Stream) and other.handle == self.handle \
            and other.context is self.context

    def __hash__(self):
        return hash((self.handle, id(self.context)))

    def __repr__(self):
        ctx = self.context
        if self._kind == _DEFAULT:
            what = "Default CUDA stream"
        elif self._kind == _LEGACY:
            what = "Legacy default CUDA stream"
        elif self._kind == _PER_THREAD:
            what = "Per-thread default CUDA stream"
        elif self._kind == _EXTERNAL:
            what = f"External CUDA stream {self.handle:#x}"
        else:
            what = f"CUDA stream {self.handle:#x}"
        return f"<{what} on {ctx!r}>"

    @property
    def external(self):
        """True for a stream wrapped by :func:`external_stream` (never destroyed by cujit)."""
        return self._kind == _EXTERNAL

    # -- work ----------------------------------------------------------------------------
    def synchronize(self):
        """Wait until all work queued on this stream is done (cuStreamSynchronize; the GIL is
        released while waiting).  Raises CudaAPIError when earlier work failed."""
        h = self._live("cuStreamSynchronize")
        self.context.make_current()
        t0 = synchronized.listeners and _now()
        get_driver().stream_synchronize(h)
        if t0:
            synchronized.emit("stream", h, t0)

    def query(self):
        """True when all work on the stream is done (cuStreamQuery)."""
        h = self._live("cuStreamQuery")
        self.context.make_current()
        return get_driver().stream_query(h)

    @contextlib.contextmanager
    def auto_synchronize(self):
        """``with s.auto_synchronize():`` — yields the stream and synchronises it on exit
        (also when the block raises)."""
        try:
            yield self
        finally:
            self.synchronize()

    def add_callback(self, callback, arg=None):
        """Run ``callback(stream, status, arg)`` once all earlier work on this stream is done
        (cuLaunchHostFunc).  ``status`` is 0: cuLaunchHostFunc reports no status, and a stream
        in an error state surfaces its error at the next synchronize/query.  The callback runs
        on a driver thread and must not call CUDA; an exception it raises is reported as a
        :class:`CallbackWarning`, never propagated.  Later work on the stream waits until the
        callback returns.  No deadlock when the main thread waits on the stream: the driver
        wait releases the GIL."""
        if not callable(callback):
            raise TypeError(f"callback must be callable, got {callback!r}")

        def host_fn(stream=self):
            try:
                callback(stream, 0, arg)
            except BaseException as exc:  # never unwind into the driver thread
                try:
                    warnings.warn(f"exception in stream callback {callback!r} on {stream!r}: "
                                  f"{type(exc).__name__}: {exc}", CallbackWarning)
                except BaseException:
                    pass

        h = self._live("cuLaunchHostFunc")
        self.context.make_current()
        get_driver().launch_host_func(h, host_fn)

    def async_done(self):
        """An ``asyncio.Future`` (of the running event loop) resolved with this stream once all
        work queued so far is done; ``await s.async_done()``.  When the stream's work failed the
        future gets the ``CudaAPIError`` instead.  Must be called with an event loop running
        (``RuntimeError`` otherwise)."""
        import asyncio
        loop = asyncio.get_running_loop()
        future = loop.create_future()
        ctx = self.context

        def resolve(stream):
            if future.done():       # cancelled by the awaiting code
                return
            try:
                ctx.make_current()
                get_driver().stream_query(stream.handle)
            except CudaAPIError as exc:
                future.set_exception(exc)
                return
            except Exception as exc:  # pragma: no cover - context gone
                future.set_exception(exc)
                return
            future.set_result(stream)

        def callback(stream, status, _arg):
            try:
                loop.call_soon_threadsafe(resolve, stream)
            except RuntimeError:    # the loop was closed meanwhile
                pass

        self.add_callback(callback)
        return future


class Event:
    """A CUDA event (numba.cuda ``Event``); made by :func:`event` or
    ``context.create_event(timing=True)``.  Destroyed through ``context.deallocations``."""

    __slots__ = ("handle", "context", "timing", "_finalizer", "generation", "__weakref__")

    def __init__(self, context, handle, timing=True, finalizer=None):
        self.handle = int(handle)
        self.context = context
        self.timing = bool(timing)
        self._finalizer = finalizer
        self.generation = None  # the context generation it was created in (set by cujit)

    _live = _live_handle

    def __int__(self):
        return self.handle

    def __repr__(self):
        return f"<CUDA event {self.handle:#x} on {self.context!r}>"

    def record(self, stream=0):
        """Record the event on ``stream`` (0 = default stream; cuEventRecord)."""
        h = stream_handle(stream)
        e = self._live("cuEventRecord")
        self.context.make_current()
        get_driver().event_record(e, h)

    def wait(self, stream=0):
        """Make later work on ``stream`` wait for this event (cuStreamWaitEvent)."""
        h = stream_handle(stream)
        e = self._live("cuStreamWaitEvent")
        self.context.make_current()
        get_driver().stream_wait_event(h, e)

    def synchronize(self):
        """Block the host until the event has completed (cuEventSynchronize)."""
        e = self._live("cuEventSynchronize")
        self.context.make_current()
        t0 = synchronized.listeners and _now()
        get_driver().event_synchronize(e)
        if t0:
            synchronized.emit("event", 0, t0)

    def query(self):
        """True when the event has completed (cuEventQuery)."""
        e = self._live("cuEventQuery")
        self.context.make_current()
        return get_driver().event_query(e)

    def elapsed_time(self, evtend):
        """Milliseconds (float) from this event to ``evtend`` (cuEventElapsedTime); both must be
        recorded and created with ``timing=True`` (CudaAPIError otherwise)."""
        return event_elapsed_time(self, evtend)


def event_elapsed_time(evtstart, evtend):
    """Milliseconds (float) between two recorded :class:`Event` objects (cuEventElapsedTime).

    TypeError when either is not an Event."""
    for name, ev in (("evtstart", evtstart), ("evtend", evtend)):
        if not isinstance(ev, Event):
            raise TypeError(f"{name} must be a cujit Event, got {ev!r}")
    evtstart.context.make_current()
    return get_driver().event_elapsed_time(evtstart._live("cuEventElapsedTime"),
                                           evtend._live("cuEventElapsedTime"))


# -- constructors used by Context (devices.py) --------------------------------------------

def _destroy_stream(handle):
    get_driver().stream_destroy(handle)


def _destroy_event(handle):
    get_driver().event_destroy(handle)


def _new_stream(context, handle):
    s = Stream(context, handle, _NEW)
    s.generation = context.generation
    s._finalizer = weakref.finalize(s, context._queue_resource, _destroy_stream, handle,
                                    context.generation)
    return s


def _new_event(context, handle, timing):
    e = Event(context, handle, timing)
    e.generation = context.generation
    e._finalizer = weakref.finalize(e, context._queue_resource, _destroy_event, handle,
                                    context.generation)
    return e
