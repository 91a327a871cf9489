"""``cuda.runtime`` (numba.cuda's runtime object): ``get_version()``,
``is_supported_version()``, ``supported_versions``, next to the ``cujit.runtime`` package
whose submodules must still import."""
import os
import subprocess
import sys

import pytest

import cujit as cuda
import cujit.runtime
from cujit.runtime import version

ON_SIM = os.environ.get("CUJIT_ENABLE_CUDASIM", "0") not in ("", "0")


def test_runtime_is_the_package_and_submodules_still_import():
    assert cuda.runtime is cujit.runtime
    from cujit.runtime import devices, streams   # noqa: F401 - the import is the test
    assert cuda.runtime.devices is devices
    with pytest.raises(AttributeError, match="has no attribute 'nope'"):
        cuda.runtime.nope


def test_get_version_is_the_drivers_cuda_version():
    major, minor = cuda.runtime.get_version()
    assert isinstance(major, int) and isinstance(minor, int)
    v = cujit.driver.get_driver().driver_version()
    assert (major, minor) == (v // 1000, v % 1000 // 10)
    assert cuda.runtime.is_supported_version() is True
    if ON_SIM:
        assert (major, minor) == (13, 0)     # the simulated driver's documented version


def test_supported_versions():
    assert cuda.runtime.supported_versions == ((12, 8), (12, 9), (13, 0))
    assert all(m in version.SUPPORTED_MAJOR_VERSIONS for m, _ in
               cuda.runtime.supported_versions)


class _Driver:
    def __init__(self, v):
        self.v = v

    def driver_version(self):
        return self.v


@pytest.mark.parametrize("v, want, ok", [(11080, (11, 8), False), (12040, (12, 4), True),
                                         (13010, (13, 1), True), (14000, (14, 0), False)])
def test_versions_from_the_driver_number(monkeypatch, v, want, ok):
    monkeypatch.setattr(version.driver, "get_driver", lambda: _Driver(v))
    assert cuda.runtime.get_version() == want
    assert cuda.runtime.is_supported_version() is ok


@pytest.mark.sim
def test_no_driver_is_a_cuda_support_error():
    env = {k: v for k, v in os.environ.items()
           if k not in ("CUJIT_ENABLE_CUDASIM", "NUMBA_ENABLE_CUDASIM")}
    env["CUDA_VISIBLE_DEVICES"] = ""        # no device even where a GPU is installed
    code = ("import cujit as cuda\n"
            "try:\n    cuda.runtime.get_version()\n"
            "except cuda.CudaSupportError:\n    print('CudaSupportError')\n")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                         text=True, timeout=120)
    assert out.stdout.strip() == "CudaSupportError", out.stderr
