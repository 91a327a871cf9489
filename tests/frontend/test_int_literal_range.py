"""An integer literal outside int64/uint64 in a kernel is a TypingError at its line (it was a
bare ValueError from the type of the constant, with no source location), as numba refuses
such a constant; literals at the edges of the ranges still compile
(cujit/frontend/typeinfer.py)."""
import numpy as np
import pytest

import cujit as cuda
from cujit.frontend.errors import TypingError


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


def _folded(a):
    a[0] = 2**63            # 9223372036854775808: a uint64 literal once folded, as in numba
    a[1] = -2**63           # int64's minimum
    a[2] = 1 << 40
    a[3] = 3 * 2**20 - 1


def test_int_literal_expressions_are_folded_as_cpython_does():
    """An expression of int literals is one constant (CPython folds it before Numba reads the
    bytecode): ``2**63`` stores 2**63, not the int64 wrap-around -2**63."""
    a = np.zeros(4, np.float64)
    cuda.jit(_folded)[1, 1](a)
    assert a.tolist() == [2.0**63, -2.0**63, float(1 << 40), float(3 * 2**20 - 1)]


def _folded_too_big(a):
    a[0] = 2**70


def test_folded_expression_beyond_uint64_is_typing_error():
    a = np.zeros(1)
    with pytest.raises(TypingError, match="1180591620717411303424.*does not fit in int64 or "
                                          "uint64"):
        cuda.jit(_folded_too_big)[1, 1](a)
    assert a[0] == 0.0


def test_folding_keeps_non_literal_operands():
    def k(a, n):
        a[0] = n * 2**10 + 1
    a = np.zeros(1, np.int64)
    cuda.jit(k)[1, 1](a, 3)
    assert a[0] == 3 * 1024 + 1


@pytest.mark.compile
def test_folded_constant_reaches_the_ptx():
    ptx, _ = cuda.compile_ptx(_folded, "void(uint64[::1])")
    assert "9223372036854775808" in ptx or "-9223372036854775808" in ptx or \
        "0d43E0000000000000" in ptx or "4890909195324358656" in ptx
