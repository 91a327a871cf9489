"""Fields of packed records (NumPy's default ``align=False``) in kernels: a float64 at offset 4
is read and written with the alignment its offset guarantees (numba-cuda refuses to compile
the kernel, "type float64 is not aligned"; docs/requirements.md §10)."""
import numpy as np
import pytest

import cujit as cuda

from _kl_helpers import ptx_of


PACKED = np.dtype([("a", np.int32), ("b", np.float64)])


@cuda.jit
def copy_packed_field(recs):
    i = cuda.grid(1)
    if i < recs.shape[0]:
        recs[i].a = recs[i].b
        recs[i].b = recs[i].b * 2


def test_packed_record_fields_are_read_and_written():
    assert PACKED.fields["b"][1] == 4 and not PACKED.isalignedstruct
    recs = np.zeros(3, PACKED)
    recs["b"] = [123.0, 246.0, 369.5]
    copy_packed_field[1, 3](recs)
    np.testing.assert_array_equal(recs["a"], [123, 246, 369])
    np.testing.assert_array_equal(recs["b"], [246.0, 492.0, 739.0])


@pytest.mark.compile
def test_packed_float64_field_is_not_loaded_as_an_aligned_8_byte_word():
    ptx = ptx_of(copy_packed_field.py_func, np.zeros(3, PACKED))
    assert ".entry" in ptx
    assert not any(w in ptx for w in ("ld.global.f64", "ld.global.u64", "ld.global.v2"))
