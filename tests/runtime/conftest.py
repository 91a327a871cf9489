"""Fixtures for the runtime-layer tests (memory, runtime, streams)."""
import pytest


@pytest.fixture
def ctx():
    """The current context, with both pending queues flushed so counts start at 0 (after a
    garbage collection, so objects of earlier tests caught in cycles cannot land in the
    queues during this test)."""
    import gc
    import cujit
    gc.collect()
    c = cujit.current_context()
    c.memory_manager.deallocations.clear()
    c.deallocations.clear()
    return c


@pytest.fixture(autouse=True)
def _restore_config():
    """Drop any ``cujit.config`` attribute override a test set."""
    yield
    from cujit.config import config
    config.reset()


@pytest.fixture
def count_calls(monkeypatch):
    """``count_calls(name)`` wraps driver method ``name``; returns a list that records the
    arguments of each call (the wrapper is an instance attribute, so code that looks the
    method up after this sees it)."""
    from cujit.driver import get_driver
    drv = get_driver()

    def wrap(name):
        calls = []
        real = getattr(drv, name)

        def wrapper(*args, **kwargs):
            calls.append(args)
            return real(*args, **kwargs)
        monkeypatch.setattr(drv, name, wrapper)
        return calls
    return wrap
