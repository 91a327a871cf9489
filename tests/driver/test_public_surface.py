import subprocess
import sys

import cujit


def test_config_attribute_is_the_settings_object_after_submodule_imports():
    import cujit.config  # noqa: F401  (binds the submodule; must not replace the object)
    import cujit.driver.sim  # noqa: F401
    assert type(cujit.config).__name__ == "Config"
    cujit.config.CUDA_DEALLOCS_COUNT = 3
    try:
        from cujit.config import config
        assert config.CUDA_DEALLOCS_COUNT == 3
    finally:
        del cujit.config.CUDA_DEALLOCS_COUNT


def test_every_public_name_resolves():
    for name in cujit.__all__:
        if name != "laneid":
            assert getattr(cujit, name) is not None, name
    assert repr(cujit.laneid) == "cujit.laneid"


def test_unknown_name():
    import pytest
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        cujit.nope


def test_import_loads_no_driver_or_toolchain():
    code = ("import sys, cujit; heavy = [m for m in ('cuda.bindings.driver', 'llvmlite', "
            "'greenlet', 'cujit.compiler', 'cujit.arrays') if m in sys.modules]; print(heavy)")
    env = {"CUJIT_ENABLE_CUDASIM": "0", "PATH": ""}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, env=env)
    assert out.stdout.strip() == "[]"
