"""Named hook points: where cujit announces an event (an allocation, a copy, a launch...) to
whoever listens (``cujit.trace``, a profiler of the user's own).

A :class:`HookPoint` is owned by the module where its event happens (memory events in
``memory/events.py``, copies in ``arrays/transfer.py``, launches in
``dispatch/launcher.py``, graph replays and synchronisations in ``runtime/``), so that a
lower layer never imports a higher one to be observed.  The event site pays one attribute
test when nobody listens, as CuPy's memory hooks do::

    if allocated.listeners:
        allocated.emit(kind, mem, nbytes)

``listeners`` is a tuple replaced (never changed in place) under a lock, so an emitting
thread iterates a consistent snapshot.  A listener that raises propagates to the code that
caused the event, after the event's own work is done (each site emits once its state is
consistent); listeners are meant not to raise.

Not in numba.cuda (CuPy has ``cupy.cuda.memory_hook``; numba has none).
"""
import contextlib
import threading

__all__ = ["HookPoint"]


class HookPoint:
    """One named event that listeners can subscribe to.

    ``name``: the event's name (str, e.g. ``"memory.allocated"``); ``args``: the names of
    the positional arguments each listener is called with (a tuple of str, for
    documentation and ``repr``).  TypeError when either has the wrong type."""

    __slots__ = ("name", "args", "listeners", "_lock")

    def __init__(self, name, args):
        if not isinstance(name, str):
            raise TypeError(f"HookPoint name must be a str, got {name!r}")
        args = tuple(args)
        if not all(isinstance(a, str) for a in args):
            raise TypeError(f"HookPoint args must be names (str), got {args!r}")
        self.name = name
        self.args = args
        self.listeners = ()
        self._lock = threading.Lock()

    def subscribe(self, listener):
        """Call ``listener(*args)`` at every event from now on; returns ``listener``.
        TypeError when it is not callable; subscribing one listener twice calls it twice."""
        if not callable(listener):
            raise TypeError(f"{self.name}: a listener must be callable, got {listener!r}")
        with self._lock:
            self.listeners = self.listeners + (listener,)
        return listener

    def unsubscribe(self, listener):
        """Stop calling ``listener`` (its most recent subscription).  ValueError when it
        is not subscribed."""
        with self._lock:
            ls = list(self.listeners)
            for i in range(len(ls) - 1, -1, -1):
                if ls[i] is listener or ls[i] == listener:
                    del ls[i]
                    break
            else:
                raise ValueError(f"{self.name}: {listener!r} is not subscribed")
            self.listeners = tuple(ls)

    @contextlib.contextmanager
    def listening(self, listener):
        """``with point.listening(fn):`` subscribes ``fn`` for the block."""
        self.subscribe(listener)
        try:
            yield listener
        finally:
            self.unsubscribe(listener)

    def emit(self, *args):
        """Call every listener with ``args`` (the event sites test ``listeners`` first)."""
        for fn in self.listeners:
            fn(*args)

    def __repr__(self):
        return (f"<HookPoint {self.name}({', '.join(self.args)}): "
                f"{len(self.listeners)} listener(s)>")
