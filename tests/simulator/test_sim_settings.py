"""The simulator's settings are read at every launch, so a malformed value is the launch's
ValueError naming the variable, even in a launch that would not have used it (a one-thread
launch never runs the vector executor; a short launch never shows a progress bar)."""
import numpy as np
import pytest

import cujit

pytestmark = pytest.mark.sim


@cujit.jit
def _set_one(x):
    x[0] = 1


@pytest.mark.parametrize("var", ["CUJIT_SIM_VECTOR", "CUJIT_SIM_PROGRESS"])
def test_a_malformed_simulator_setting_fails_the_launch(monkeypatch, var):
    d = cujit.device_array(1)
    monkeypatch.setenv(var, "maybe")
    with pytest.raises(ValueError, match=f"{var}='maybe'"):
        _set_one[1, 1](d)
    monkeypatch.setenv(var, "0")
    _set_one[1, 1](d)
    assert d.copy_to_host()[0] == 1
