"""``cujit.args`` (numba.cuda.args: the argument hints and ``wrap_arg``) and ``cujit.api``
(numba.cuda.api: the host API module), whose names are cujit's own objects."""
import numpy as np
import pytest

import cujit
from cujit import api, args


def test_hints_are_cujits_and_wrap_arg_gives_a_default_direction():
    assert (args.In, args.Out, args.InOut) == (cujit.In, cujit.Out, cujit.InOut)
    h = np.zeros(3)
    wrapped = args.wrap_arg(h, default=cujit.In)
    assert isinstance(wrapped, cujit.In) and wrapped.value is h
    assert isinstance(args.wrap_arg(h), cujit.InOut)
    hint = cujit.Out(h)
    assert args.wrap_arg(hint, default=cujit.In) is hint
    assert all(issubclass(c, args.ArgHint) for c in (cujit.In, cujit.Out, cujit.InOut))


def test_wrap_arg_refuses_a_default_that_is_not_a_hint_class():
    with pytest.raises(TypeError, match="default must be cujit.In"):
        args.wrap_arg(np.zeros(2), default=list)


def test_api_module_names_are_cujits_objects():
    assert set(api.__all__) <= set(dir(cujit))
    for name in api.__all__:
        assert getattr(api, name) is getattr(cujit, name), name
    assert api.is_fp8_supported() == cujit.is_fp8_supported()
