"""Versions of a variable (frontend/versions.py): a name rebound to values that never meet
is split into separate variables, so each may have its own type (numba's SSA; the patterns
of numba-cuda's test_ssa)."""
import ast

import numpy as np
import pytest

import cujit as cuda
from cujit import types as T
from cujit.frontend.errors import RequireLiteralValue, TypingError
from cujit.frontend.source import FunctionSource
from cujit.frontend.typecheck import typecheck
from cujit.frontend.versions import source_name, split_versions


@cuda.jit
def _reshaped(result, arr):
    for i in range(1):
        arr = arr.reshape(3 * 2)        # a 1-d version read only by the next line
        arr = arr.reshape(3, 2)
    for i in range(arr.shape[0]):
        for j in range(arr.shape[1]):
            result[i, j] = arr[i, j]


def test_a_rebound_array_of_another_ndim():
    r = np.zeros((3, 2))
    _reshaped[1, 1](r, np.arange(6.0).reshape(3, 2))
    assert r.tolist() == [[0.0, 1.0], [2.0, 3.0], [4.0, 5.0]]


@pytest.mark.compile
def test_a_rebound_array_of_another_ndim_compiles():
    ptx, _ = cuda.compile_ptx(_reshaped.py_func, "void(float64[:, ::1], float64[:, ::1])")
    assert ".entry" in ptx


B = np.ones(1)


@cuda.jit
def _loop_var_rebound(res, m, n):
    for t in range(1, m):
        for idx in range(n):
            t = B               # an array where the loop gave an int: separate webs
            res[0] += t[0]


def test_a_loop_variable_rebound_to_an_array():
    res = np.zeros(1)
    _loop_var_rebound[1, 1](res, 3, 4)
    assert res[0] == 8.0


@cuda.jit
def _carried(result, x, v, n):
    for i in range(n):
        if i == 0:
            if i != x:
                acc = v
        else:
            if i != x:
                acc = acc + v       # reached by both definitions: one variable
    result[0] = acc


def test_definitions_that_meet_stay_one_variable():
    r = np.zeros(1, np.int64)
    _carried[1, 1](r, 1, 5, 3)
    assert r[0] == 10


def _meet(a, flag):
    x = 1
    if flag:
        x = a           # an array and an int reach the same read
    a[0] = x[0]


def test_values_that_meet_must_unify_and_the_error_names_the_variable():
    with pytest.raises(TypingError, match="variable 'x' is given values of types"):
        typecheck(_meet, (T.int64[::1], T.boolean))


def _names(fnode):
    return sorted({n.id for n in ast.walk(fnode) if isinstance(n, ast.Name)})


def test_the_parsed_tree_is_not_changed_and_only_separate_webs_are_renamed():
    src = FunctionSource.from_pyfunc(_reshaped.py_func)
    before = ast.dump(src.node)
    out = split_versions(src.node)
    assert ast.dump(src.node) == before and out is not src.node
    assert "arr__v1" in _names(out) and "arr__v2" not in _names(out)
    carried = FunctionSource.from_pyfunc(_carried.py_func).node
    assert split_versions(carried) is carried   # acc's definitions meet: one web
    same = FunctionSource.from_pyfunc(_meet).node
    assert split_versions(same) is same         # one web per name: nothing to rename


def _closure_reads(a):
    x = 1
    a[0] = x
    x = 2.5

    def g():
        return x
    a[1] = g()


def test_names_read_by_nested_functions_are_left_alone():
    node = FunctionSource.from_pyfunc(_closure_reads).node
    assert split_versions(node) is node


def test_source_name():
    assert source_name("arr__v1") == "arr"
    assert source_name("arr__v12_") == "arr"
    assert source_name("my__var") == "my__var"
    assert source_name("__v1") == "__v1"


def test_messages_spell_renamed_variables_as_written():
    def k(out, n):
        n = n + 1                   # a second version of n: renamed n__v1 inside
        a = cuda.local.array(n, np.float32)
        a[0] = 1.0
        out[0] = a[0]
    with pytest.raises(RequireLiteralValue) as e:
        cuda.compile_ptx(cuda.jit(k), "void(float32[:], int64)", cc=(9, 0))
    assert "'n' is not" in str(e.value) and "__v" not in str(e.value)
