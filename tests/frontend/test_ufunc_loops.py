"""The NumPy loop a kernel's ufunc call runs (numba-cuda's ufunc_find_matching_loop)."""
import numpy as np
import pytest

from cujit import types as T
from cujit.frontend.ufunc_loops import element_source, find_loop


@pytest.mark.parametrize("ufunc,ins,outs,letters", [
    (np.sin, (T.float32,), (), "f->f"),
    (np.sin, (T.int8,), (), "f->f"),          # float16 loops are skipped, as numba does
    (np.sin, (T.int32,), (), "d->d"),
    (np.sin, (T.float32,), (T.float64,), "f->f"),
    (np.power, (T.float32, T.int32), (), "ff->f"),   # integers mix into the float's loop
    (np.greater, (T.int64, T.uint64), (), "qQ->?"),
    (np.logical_and, (T.int32, T.int32), (T.int32,), "ii->?"),
    (np.absolute, (T.complex64,), (), "F->f"),
])
def test_loop_is_numbas_choice(ufunc, ins, outs, letters):
    loop = find_loop(ufunc, ins, outs)
    assert loop.letters == letters
    assert loop.inputs == tuple(T.from_dtype(np.dtype(c)) for c in letters.split("->")[0])


def test_no_loop_when_the_output_cannot_hold_the_result_kind():
    assert find_loop(np.sin, (T.float64,), (T.int32,)) is None


def test_integer_fmod_loop_has_no_element_implementation():
    loop = find_loop(np.fmod, (T.int32, T.int32), ())
    assert loop.letters == "ii->i" and element_source(np.fmod, loop) is None
