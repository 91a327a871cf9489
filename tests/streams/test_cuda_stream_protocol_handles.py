"""Objects implementing __cuda_stream__ with bad handles.  A negative handle was
refused by external_stream() but passed straight to the driver by stream= arguments (a wild
pointer for a real driver); float, bool and string handles went through int()."""
import numpy as np
import pytest

import cujit as cuda


def _proto(handle):
    class Foreign:
        def __cuda_stream__(self):
            return (0, handle)
    return Foreign()


@pytest.mark.parametrize("handle", [-1, 1 << 64])
def test_out_of_range_protocol_handle_is_value_error_everywhere(handle):
    d = cuda.to_device(np.arange(3.0))
    with pytest.raises(ValueError, match=str(handle)):
        cuda.to_device(np.ones(3), stream=_proto(handle))
    with pytest.raises(ValueError, match=str(handle)):
        d.copy_to_host(stream=_proto(handle))
    with pytest.raises(ValueError, match=str(handle)):
        cuda.external_stream(_proto(handle))
    assert (d.copy_to_host() == np.arange(3.0)).all()


@pytest.mark.parametrize("handle", [1.5, True, "12", None])
def test_non_int_protocol_handle_is_type_error(handle):
    with pytest.raises(TypeError, match="expected an int"):
        cuda.to_device(np.ones(3), stream=_proto(handle))


def test_numpy_integer_protocol_handle_accepted():
    s = cuda.external_stream(_proto(np.uint64(0)))
    assert s.handle == 0


@pytest.mark.parametrize("handle", [(1 << 63) - 1, 1 << 63, (1 << 64) - 1])
def test_protocol_handle_range_ends_at_2_to_64(handle):
    # a handle is a 64-bit pointer: values with the top bit set are valid too (never used here)
    s = cuda.external_stream(_proto(handle))
    assert s.handle == handle
