"""``cujit.hooks.HookPoint``: subscribe, emit, unsubscribe, and the errors of each."""
import pytest

from cujit.hooks import HookPoint


def test_listeners_are_called_in_order_with_the_event_arguments():
    p = HookPoint("test.event", ("a", "b"))
    seen = []
    first = p.subscribe(lambda a, b: seen.append(("first", a, b)))
    p.subscribe(lambda a, b: seen.append(("second", a, b)))
    assert len(p.listeners) == 2 and callable(first)
    p.emit(1, "x")
    assert seen == [("first", 1, "x"), ("second", 1, "x")]


def test_unsubscribe_removes_one_subscription_and_listening_is_scoped():
    p = HookPoint("test.event", ("n",))
    seen = []
    fn = seen.append
    p.subscribe(fn)
    p.subscribe(fn)
    p.unsubscribe(fn)
    p.emit(1)
    assert seen == [1]                  # the other subscription still listens
    p.unsubscribe(fn)
    assert p.listeners == ()
    with p.listening(fn):
        p.emit(2)
    p.emit(3)
    assert seen == [1, 2]


def test_listening_unsubscribes_when_the_block_raises():
    p = HookPoint("test.event", ())
    with pytest.raises(ZeroDivisionError):
        with p.listening(lambda: None):
            1 / 0
    assert p.listeners == ()


def test_a_listener_error_reaches_the_emitter():
    p = HookPoint("test.event", ())

    def bad():
        raise KeyError("listener")
    with p.listening(bad):
        with pytest.raises(KeyError, match="listener"):
            p.emit()


def test_errors_name_the_bad_value():
    with pytest.raises(TypeError, match="name must be a str"):
        HookPoint(3, ())
    with pytest.raises(TypeError, match="args must be names"):
        HookPoint("x", (1,))
    p = HookPoint("test.event", ("n",))
    with pytest.raises(TypeError, match="test.event: a listener must be callable, got 5"):
        p.subscribe(5)
    with pytest.raises(ValueError, match="is not subscribed"):
        p.unsubscribe(print)
    assert "test.event(n): 0 listener(s)" in repr(p)
