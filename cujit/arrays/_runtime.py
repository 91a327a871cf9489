"""The arrays layer's doors to the layers below: the driver, the current context and stream
handles.  Imports are lazy (``cujit.runtime.devices`` / ``cujit.runtime.streams`` load the
driver) and the
resolved functions are cached in module globals, so the hot paths pay one global lookup."""

__all__ = ["driver", "bound_driver", "current_context", "stream_handle", "keep_alive_until", "as_stream"]

_driver = None
_current_context = None
_stream_handle = None
_bind_thread = None


def driver():
    """The process's driver backend (:func:`cujit.driver.get_driver`)."""
    global _driver
    drv = _driver
    if drv is None:
        from ..driver import get_driver
        drv = _driver = get_driver()
    return drv


def bound_driver():
    """:func:`driver`, with the calling thread's context current in it first (numba's
    ``require_context`` on its array methods): copies made from a thread that never used
    cujit (a ``ThreadPoolExecutor`` worker) bind the context there instead of failing with
    CUDA_ERROR_INVALID_CONTEXT; a thread bound already keeps its binding.  One call and a
    thread-local look-up once bound."""
    global _bind_thread
    fn = _bind_thread
    if fn is None:
        from ..runtime.devices import bind_thread as fn
        _bind_thread = fn
    fn()
    return driver()


def current_context():
    """``cujit.runtime.devices.current_context()``.

    The first call replaces this module's ``current_context`` by the runtime's function
    itself, so that ``_runtime.current_context()`` (every allocation makes one) costs one
    call from then on, not two."""
    global _current_context, current_context
    fn = _current_context
    if fn is None:
        from ..runtime.devices import current_context as fn
        _current_context = current_context = fn
    return fn()


def stream_handle(stream):
    """Driver handle (int) of a ``stream=`` argument: 0 for 0/None, a Stream's handle, an
    object with ``__cuda_stream__``; anything else → TypeError (``cujit.runtime.streams``)."""
    if stream is None or (type(stream) is int and stream == 0):
        return 0
    global _stream_handle
    fn = _stream_handle
    if fn is None:
        from ..runtime.streams import stream_handle as fn
        _stream_handle = fn
    return fn(stream)


def as_stream(handle):
    """A ``Stream`` object for a foreign handle (int); 0 → 0 (no stream); 1 and 2 (the
    interface's legacy and per-thread default streams) → the context's own objects for them,
    made once, rather than a new external stream per imported array."""
    if not handle:
        return 0
    if handle == 1:
        return current_context().get_legacy_default_stream()
    if handle == 2:
        return current_context().get_per_thread_default_stream()
    from ..runtime.api import external_stream
    return external_stream(handle)


def keep_alive_until(stream, obj):
    """Keep ``obj`` referenced until ``stream`` (handle) reaches this point of its work."""
    if not stream:
        return
    drv = driver()
    holder = [obj]
    drv.launch_host_func(stream, holder.clear)
