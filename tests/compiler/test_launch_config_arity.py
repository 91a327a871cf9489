"""A launch configuration of the wrong length (``k[1]``, ``k[1, 32, 0, 0, 1]``) is a
ValueError that shows the values as written and how many there were
(cujit/compiler/dispatcher.py)."""
import numpy as np
import pytest

import cujit as cuda


@cuda.jit
def _fill(a):
    i = cuda.grid(1)
    if i < a.size:
        a[i] = 1


def test_five_value_launch_configuration_is_shown_as_written():
    a = np.zeros(4)
    with pytest.raises(ValueError) as ei:
        _fill[1, 32, 0, 0, 1](a)
    assert str(ei.value).endswith("got [1, 32, 0, 0, 1] (5 value(s))")
    assert (a == 0).all()


def test_one_value_launch_configuration_is_value_error():
    with pytest.raises(ValueError, match=r"\[griddim, blockdim\].*got \[4\] \(1 value\(s\)\)"):
        _fill[4](np.zeros(4))
