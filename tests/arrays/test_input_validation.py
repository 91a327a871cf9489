"""Defects in the arrays layer (bad input accepted silently), now rejected with
typed errors; pinned/mapped arrays keep valid bytes after close() (docs/design-arrays.md)."""
import os
import subprocess
import sys

import numpy as np
import pytest

import cujit as cuda

ARRAYS = "arrays defect found in the user trial; cujit/arrays/ owner to fix"


def test_to_device_rejects_masked_array():
    # numba.cuda rejects masks in __cuda_array_interface__ (NotImplementedError); silently
    # copying the masked-out values would give a wrong result without a word.
    m = np.ma.masked_array(np.arange(3.0), mask=[0, 1, 0])
    with pytest.raises(NotImplementedError, match="mask"):
        cuda.to_device(m)


def test_copy_to_device_rejects_masked_array_and_keeps_data():
    d = cuda.to_device(np.arange(4.0))
    m = np.ma.masked_array(np.full(4, 9.0), mask=[1, 1, 1, 1])
    with pytest.raises(NotImplementedError, match="mask"):
        d.copy_to_device(m)
    assert (d.copy_to_host() == np.arange(4.0)).all()


@pytest.mark.parametrize("maker", ["device_array", "pinned_array", "mapped_array",
                                   "managed_array", "mapped_array_like", "pinned_array_like",
                                   "device_array_like"])
def test_object_dtype_rejected(maker):
    # to_device already refuses dtype object with a TypeError; the allocators must agree
    # (the memory is uninitialised, so its "objects" are wild pointers).  Run in a child
    # process: while the defect is there, touching such an array can crash the interpreter.
    call = (f"cuda.{maker}(np.array([None, 1, 'a'], dtype=object))" if maker.endswith("_like")
            else f"cuda.{maker}(3, dtype=object)")
    code = ("import sys, numpy as np, cujit as cuda\n"
            "try:\n"
            f"    {call}\n"
            "except TypeError as e:\n"
            "    sys.exit(0 if 'object' in str(e) else 3)\n"
            "sys.exit(1)\n")
    # the child inherits the backend choice (conftest sets CUJIT_ENABLE_CUDASIM without a GPU)
    r = subprocess.run([sys.executable, "-c", code], env=dict(os.environ), capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 0, (r.returncode, r.stderr[-2000:])


def test_cuda_array_interface_object_typestr_rejected():
    d = cuda.to_device(np.arange(10, dtype=np.float32))
    desc = dict(d.__cuda_array_interface__, typestr="|O8")

    class Foreign:
        __cuda_array_interface__ = desc
    with pytest.raises(ValueError, match="O8"):
        cuda.as_cuda_array(Foreign())


@pytest.mark.parametrize("bad", [None, [1, 2], "abc"])
def test_device_array_like_non_array_is_type_error(bad):
    with pytest.raises(TypeError, match="array"):
        cuda.device_array_like(bad)


_AFTER_CLOSE = """
import gc, sys
import numpy as np
import cujit as cuda
p = cuda.pinned_array(512, dtype=np.float64); p[:] = 7.0
m = cuda.mapped_array(512, dtype=np.float64); m[:] = 5.0
cuda.close()
gc.collect()
# fresh host allocations of about the same size reuse whatever close() freed
junk = [np.full(512 * 8 + 4096 + k, 0xAB, np.uint8) for k in range(0, 64, 8) for _ in range(20)]
sys.exit(0 if (p == 7.0).all() and (m == 5.0).all() else 1)
"""


def test_pinned_and_mapped_arrays_survive_close():
    # Child process: the outcome depends on malloc reusing the freed buffers, which a fresh
    # interpreter makes deterministic, and a GPU run may crash.
    r = subprocess.run([sys.executable, "-c", _AFTER_CLOSE], env=dict(os.environ),
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, (r.returncode, r.stderr[-2000:])
