"""``to_device`` of something NumPy can only hold as Python objects (None, a list holding
None, a dict) is a TypeError naming what was given; an object-dtype array keeps its
own message (cujit/arrays/api.py)."""
import numpy as np
import pytest

import cujit as cuda


@pytest.mark.parametrize("obj,shown", [(None, "NoneType None"), ([None, 1], "list [None, 1]"),
                                       ({"a": 1}, "dict {'a': 1}")])
def test_to_device_of_non_array_names_the_value(obj, shown):
    with pytest.raises(TypeError) as ei:
        cuda.to_device(obj)
    msg = str(ei.value)
    assert msg.startswith("to_device needs an array or array-like")
    assert f"got {shown}," in msg and "dtype object" in msg


def test_to_device_of_object_array_keeps_its_message():
    with pytest.raises(TypeError, match=r"^to_device: arrays of Python objects \(dtype object\)"):
        cuda.to_device(np.array([None, 1], dtype=object))


def test_to_device_of_a_number_list_still_copies():
    assert (cuda.to_device([1.5, 2.5]).copy_to_host() == [1.5, 2.5]).all()
