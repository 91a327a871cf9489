"""``print`` of tuples (nested, one element), of ``cuda.threadIdx``-like indices and of
bfloat16 values, and a ``print`` of more values than vprintf takes (numba-cuda's
test_print.py): the same text on whichever backend the process has (capfd: vprintf writes to
file descriptor 1)."""
import re
import warnings

import numpy as np
import pytest

import cujit as cuda
from cujit.frontend.calls.printing import TOO_MANY_MESSAGE
from cujit.frontend.errors import NumbaPerformanceWarning, NumbaWarning, TypingError


def _lines(capfd):
    cuda.synchronize()
    return capfd.readouterr().out.splitlines()


@cuda.jit
def _show_tuples(tup, one):
    print(tup)
    print(one, "and", (one[0], 2.5, (True, 3 + 1j)))


def test_tuples_print_as_python_writes_them(capfd):
    _show_tuples[1, 1]((1, ((2, 4), 3.0), (4,), 5), (7,))
    assert _lines(capfd) == ["(1, ((2, 4), 3.000000), (4,), 5)",
                             "(7,) and (7, 2.500000, (True, (3.000000+1.000000j)))"]


@cuda.jit
def _show_indices():
    print(cuda.threadIdx, cuda.blockIdx, "of", cuda.blockDim, cuda.gridDim)


def test_thread_indices_print_as_tuples(capfd):
    _show_indices[(2, 1, 1), (1, 2, 1)]()
    assert sorted(_lines(capfd)) == sorted(
        f"(0, {ty}, 0) ({bx}, 0, 0) of (1, 2, 1) (2, 1, 1)"
        for bx in range(2) for ty in range(2))


@cuda.jit
def _show_bf16():
    a = cuda.bfloat16(0.9375)
    print(a, a)


def test_bfloat16_prints_as_its_float(capfd):
    _show_bf16[1, 1]()
    assert _lines(capfd) == ["0.937500 0.937500"]


@cuda.jit
def _too_many(r):
    print(r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7], r[8], r[9], r[10],
          r[11], r[12], r[13], r[14], r[15], r[16], r[17], r[18], r[19], r[20],
          r[21], r[22], r[23], r[24], r[25], r[26], r[27], r[28], r[29], r[30],
          r[31], r[32])


@cuda.jit
def _thirty_two(r):
    print((r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7], r[8], r[9], r[10],
           r[11], r[12], r[13], r[14], r[15]), "and", r[16], r[17], r[18], r[19], r[20],
          r[21], r[22], r[23], r[24], r[25], r[26], r[27], r[28], r[29], r[30], r[31])


def test_more_than_32_values_print_the_format_with_numbas_warning(capfd):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        _too_many[1, 1](np.arange(33))
        out = _lines(capfd)
    assert out == [" ".join(["%lld"] * 33)]
    assert [str(x.message) for x in w if issubclass(x.category, NumbaWarning)
            and not issubclass(x.category, NumbaPerformanceWarning)] == [TOO_MANY_MESSAGE]


def test_32_values_print_their_values(capfd):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        _thirty_two[1, 1](np.arange(32))
        out = _lines(capfd)
    assert out == ["(" + ", ".join(map(str, range(16))) + ") and " +
                   " ".join(map(str, range(16, 32)))]
    assert not [x for x in w if issubclass(x.category, NumbaWarning)
                and not issubclass(x.category, NumbaPerformanceWarning)]


def test_print_of_an_array_is_a_typing_error():
    @cuda.jit
    def show_array(a):
        print(a)
    with pytest.raises(TypingError, match=r"print\(\) in a kernel takes numbers, tuples"):
        show_array[1, 1](np.zeros(2))


@pytest.mark.compile
def test_thread_index_print_reads_the_special_registers():
    from cujit.dispatch.dispatcher import compile_ptx

    def show():
        print(cuda.threadIdx)
    ptx, _ = compile_ptx(show, "void()")
    for axis in "xyz":
        assert f"%tid.{axis}" in ptx
    # b'(%lld, %lld, %lld)\n\0'
    assert re.search(r"\.b8 _cujit_str_\d+\[20\] = \{40, 37, 108, 108, 100, 44,", ptx)
