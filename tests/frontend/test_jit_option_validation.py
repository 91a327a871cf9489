"""Jit() options of the wrong type or range were accepted silently (and, for a
kernel never compiled on the simulator, never reported); launch configurations given a bool
for a dimension were taken as 1."""
import numpy as np
import pytest

import cujit as cuda


def _body(x):
    if cuda.grid(1) == 0:       # one writer: no race on the simulator
        x[0] = 1


@pytest.mark.parametrize("opts,exc,word", [
    ({"device": "x"}, TypeError, "device"),
    ({"debug": "yes"}, TypeError, "debug"),
    ({"lineinfo": 2.5}, TypeError, "lineinfo"),
    ({"cache": "on"}, TypeError, "cache"),
    ({"fastmath": "x"}, TypeError, "fastmath"),
    ({"fastmath": {"fast", "turbo"}}, ValueError, "turbo"),
    ({"max_registers": -1}, ValueError, "max_registers"),
    ({"max_registers": 0}, ValueError, "max_registers"),
    ({"max_registers": 32.0}, TypeError, "max_registers"),
    ({"opt": 7}, ValueError, "opt"),
    ({"opt": "O3"}, TypeError, "opt"),
])
def test_bad_jit_option_values_are_rejected(opts, exc, word):
    with pytest.raises(exc, match=word):
        cuda.jit(**opts)(_body)


@pytest.mark.parametrize("opts", [
    {"device": True}, {"device": False}, {"debug": True, "opt": False}, {"opt": 0},
    {"opt": 3}, {"opt": True}, {"lineinfo": True}, {"cache": False},
    {"fastmath": True}, {"fastmath": False}, {"fastmath": {"nsz", "arcp", "contract"}},
    {"fastmath": ["afn", "reassoc"]}, {"max_registers": 32}, {"max_registers": None},
])
def test_good_jit_option_values_are_accepted(opts):
    assert cuda.jit(**opts)(_body) is not None


@pytest.mark.parametrize("good,bad,word", [
    ((1, 1), (True, 1), "bool"), ((1, 1), (1, True), "bool"),
    (((1, 1), 1), ((1, True), 1), "bool"), ((1, 32), (1.0, 32), "float"),
    ((1, 32), (1, 32.0), "float"), ((1, 1, 0, 8), (1, 1, 0, 8.0), "float"),
    ((1, 1, 0, 1), (1, 1, 0, True), "bool"), ((1, 1, 0), (1, 1, 0.0), "float"),
])
def test_cached_launch_configuration_does_not_admit_equal_float_or_bool(good, bad, word):
    # The configuration cache was keyed on the tuple, and 1.0 == True == 1 hash alike: after
    # k[1, 32] had run, k[1.0, 32] was accepted.  Without the cached entry it is a TypeError.
    k = cuda.jit(_body)
    x = np.zeros(1)
    k[good](x)
    x[0] = 0
    with pytest.raises(TypeError, match=word):
        k[bad](x)
    assert x[0] == 0
    k[good](x)                      # the good configuration still launches
    assert x[0] == 1
