"""An integer literal outside int64/uint64 in a kernel is a TypingError at its line (it was a
bare ValueError from the type of the constant, with no source location), as numba refuses
such a constant; literals at the edges of the ranges still compile
(cujit/compiler/typeinfer.py)."""
import numpy as np
import pytest

import cujit as cuda
from cujit.compiler.errors import TypingError


def _store_too_big(a):
    a[0] = 1180591620717411303424


def _store_u64_max(a):
    a[0] = 18446744073709551615


def test_int_literal_beyond_uint64_is_typing_error_at_its_line():
    k = cuda.jit(_store_too_big)
    a = np.zeros(1)
    with pytest.raises(TypingError) as ei:
        k[1, 1](a)
    msg = str(ei.value)
    assert "1180591620717411303424" in msg and "does not fit in int64 or uint64" in msg
    assert "test_int_literal_range.py" in msg and "a[0] = 1180591620717411303424" in msg
    assert a[0] == 0.0


def test_int_literal_at_uint64_max_still_compiles():
    k = cuda.jit(_store_u64_max)
    a = np.zeros(1)
    k[1, 1](a)
    assert a[0] == float(2**64 - 1)
