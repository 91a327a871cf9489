"""Loop variables of separate for loops are separate variables (cujit/frontend/loopvars.py):
a name reused for loops over values of different types types and runs, as in numba; the
rename is refused where it could be observed."""
import ast
import textwrap

import numpy as np
import pytest

import cujit as cuda
from cujit.frontend.loopvars import split_loop_variables


def _split(src):
    node = ast.parse(textwrap.dedent(src)).body[0]
    return ast.unparse(split_loop_variables(node))


def test_one_name_over_tuples_of_different_types_runs():
    @cuda.jit
    def reuse(out):
        j = 0
        for v in (1, 2):
            out[j] = v
            j += 1
        for v in (2.5, 3.5):
            out[j] = v
            j += 1
        for v in (cuda.float32x2(1, 2), cuda.float32x2(3, 4)):
            out[j] = v.y
            j += 1

    out = np.zeros(6)
    reuse[1, 1](out)
    assert out.tolist() == [1, 2, 2.5, 3.5, 2, 4]


def test_the_rename_leaves_the_first_loop_its_name_and_avoids_taken_names():
    text = _split("""
        def f(out):
            v__loop1 = 0
            for v in a:
                out[0] = v
            for v in b:
                out[1] = v
        """)
    assert "for v in a" in text and "for v__loop1_ in b" in text and "out[1] = v__loop1_" \
        in text


@pytest.mark.parametrize("src", [
    # read after the loops: which loop assigned it last is observable
    "def f(out):\n for v in a:\n  pass\n for v in b:\n  pass\n out[0] = v\n",
    # nested loops of one name
    "def f(out):\n for v in a:\n  for v in b:\n   pass\n  out[0] = v\n",
    # read in an else clause (runs after an empty loop too)
    "def f(out):\n for v in a:\n  pass\n for v in b:\n  pass\n else:\n  out[0] = v\n",
    # a parameter, or referred to by a nested function
    "def f(v):\n for v in a:\n  pass\n for v in b:\n  pass\n",
    "def f(out):\n for v in a:\n  g = lambda: v\n for v in b:\n  pass\n",
])
def test_observable_renames_are_not_made(src):
    node = ast.parse(src).body[0]
    assert split_loop_variables(node) is node


def test_a_name_read_after_its_loops_keeps_one_type_and_its_error():
    def after(out):
        for v in (1, 2):
            out[0] = v
        for v in (cuda.float32x2(1, 2),):
            out[1] = v.x
        out[2] = v

    with pytest.raises(cuda.TypingError, match="variable 'v' is given values of types"):
        cuda.compile_ptx(after, "void(float64[::1])")
