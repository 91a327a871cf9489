"""numba's ways of making the CUDA driver's initialisation fail, through
``cujit.cudadrv.driver.driver`` (numba-cuda's test_init): a ``cuInit`` replaced before the
first CUDA call."""
import os
import subprocess
import sys

import pytest


def _run_without_simulator(code):
    env = {k: v for k, v in os.environ.items()
           if k not in ("CUJIT_ENABLE_CUDASIM", "NUMBA_ENABLE_CUDASIM", "CUJIT_DISABLE_CUDA",
                        "NUMBA_DISABLE_CUDA")}
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout


RAISING_CUINIT = """
import cujit
from cujit.cudadrv.driver import driver, CudaAPIError

def cuInit_raising(flags):
    raise CudaAPIError(999, "CUDA_ERROR_UNKNOWN")

driver.cuInit = cuInit_raising
for _ in range(2):      # the refusal stays: every CUDA call raises it
    try:
        cujit.device_array(1)
    except cujit.CudaSupportError as e:
        print("raised:", e.msg)
print("error:", cujit.cuda_error())
"""


def test_a_raising_cuinit_set_before_the_first_call_fails_the_initialisation():
    out = _run_without_simulator(RAISING_CUINIT)
    msg = "Error at driver init: CUDA_ERROR_UNKNOWN (999)"
    assert out.count(f"raised: {msg}") == 2 and f"error: {msg}" in out


def test_a_cuinit_that_succeeds_leaves_the_initialisation_alone():
    code = ("import cujit\n"
            "from cujit.cudadrv.driver import driver\n"
            "calls = []\n"
            "driver.cuInit = calls.append\n"
            "print('calls:', calls)\n"
            "print('error:', cujit.cuda_error() is None or 'Error at driver init' not in "
            "cujit.cuda_error())\n")
    out = _run_without_simulator(code)
    assert "calls: [0]" in out and "error: True" in out


def test_refuse_init_after_the_driver_exists_changes_nothing():
    from cujit import driver as drv_layer
    drv_layer.get_driver()          # the tests' backend (the simulator here, or the GPU)
    assert drv_layer.refuse_init("no") is False
    drv_layer.get_driver()
