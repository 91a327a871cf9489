"""Compile-time constants through device-function calls, branches pruned at compile time and
``is`` / ``is not`` (numba's literal retry, dead-branch pruning and ``generic_is``; the
patterns of numba-cuda's test_atomics and test_ssa).  Values on the active backend (the
simulator without a GPU), PTX with the compile-only toolchain, typed errors."""
import re
import types

import numpy as np
import pytest

import cujit as cuda
from cujit import types as T
from cujit.frontend.errors import TypingError
from cujit.frontend.source import FunctionSource
from cujit.frontend.typecheck import typecheck
from cujit.simulator.kernel import simulate


@cuda.jit(device=True)
def _fill_shared(ary, dt, n, shape, wrap):
    sm = cuda.shared.array(n, dt)
    sm2 = cuda.shared.array(shape, dt)
    tid = cuda.threadIdx.x
    sm[tid] = tid
    sm2[0, tid] = 2 * tid
    cuda.syncthreads()
    v = sm[tid] + sm2[0, tid] + shape[1]
    if wrap:
        v = v % n
    ary[tid] = v


@cuda.jit
def _constants_kernel(a, b):
    _fill_shared(a, cuda.uint32, 32, (1, 32), False)
    _fill_shared(b, np.float64, 32, (1, 32), True)


def test_device_function_sized_by_call_site_constants():
    a = np.zeros(32, np.uint32)
    b = np.zeros(32, np.float64)
    _constants_kernel[1, 32](a, b)
    t = np.arange(32)
    np.testing.assert_array_equal(a, 3 * t + 32)
    np.testing.assert_array_equal(b, (3 * t + 32) % 32)


def test_each_constant_gives_its_own_specialisation():
    tf = typecheck(_constants_kernel.py_func, (T.uint32[::1], T.float64[::1]))
    callees = tf.callees
    assert len(callees) == 2
    assert [c.literal_args["n"] for c in callees] == [32, 32]
    assert [c.literal_args["shape"] for c in callees] == [(1, 32), (1, 32)]
    assert [c.literal_args["wrap"] for c in callees] == [False, True]
    assert [c.literal_args["dt"] for c in callees] == [T.uint32, T.float64]
    # passed at run time as their base types
    assert callees[0].argtypes[2] is T.int64 and callees[0].argtypes[4] is T.boolean
    assert str(T.IntegerLiteral(T.boolean, 0)) == "Literal[bool](False)"


def test_constant_params_are_found_by_their_uses():
    src = FunctionSource.from_pyfunc(_fill_shared.py_func)
    assert src.constant_params() == frozenset({"dt", "n", "shape", "wrap"})


@pytest.mark.compile
def test_compiled_shared_arrays_have_the_constant_sizes():
    ptx, _ = cuda.compile_ptx(_constants_kernel.py_func, "void(uint32[::1], float64[::1])")
    sizes = sorted(int(m) for m in re.findall(r"\.shared\s+\.align\s+\d+\s+\.b8\s+\S+\[(\d+)\]",
                                               ptx))
    assert sizes == [128, 128, 256, 256]      # 32 x 4 bytes twice, 32 x 8 bytes twice


@cuda.jit(device=True)
def _sized(ary, n):
    sm = cuda.local.array(n, cuda.int32)
    sm[0] = 1
    ary[0] = sm[0]


def _runtime_size(ary, m):
    _sized(ary, m)          # a kernel argument: not a constant at the call site


def test_non_constant_size_argument_is_a_typing_error_naming_it():
    with pytest.raises(TypingError) as e:
        typecheck(_runtime_size, (T.int32[::1], T.int64))
    msg = str(e.value)
    assert "the shape of local.array must be a compile-time constant" in msg
    assert "'n' is not" in msg and "RequireLiteralValue" in msg


@cuda.jit(device=True)
def _plain(ary, x):
    ary[0] = 1


_F32 = np.dtype("float32")


def _dtype_to_plain(ary):
    _plain(ary, _F32)


def test_a_compile_time_object_needs_a_constant_parameter():
    # (string constants pass: tests/frontend/test_device_string_arguments.py)
    with pytest.raises(TypingError, match="cannot pass .*dtype\\('float32'\\) to a "
                                          "device function"):
        typecheck(_dtype_to_plain, (T.int32[::1],))


@cuda.jit(device=True)
def _by_string(ary, dt):
    loc = cuda.local.array(2, dt)
    loc[0] = 1.5
    ary[0] = loc[0]


@cuda.jit
def _string_dtype_kernel(ary):
    _by_string(ary, "float32")


def test_a_dtype_string_reaches_a_constant_parameter():
    a = np.zeros(1, np.float64)
    _string_dtype_kernel[1, 1](a)
    assert a[0] == 1.5


# ---- pruned branches -------------------------------------------------------------------
DEBUG = False


@cuda.jit(device=True)
def _first(b):
    if not isinstance_flag:
        return b
    b = b[0]        # types only for a tuple: pruned for an int
    return b


isinstance_flag = False


@cuda.jit
def _pruned_kernel(out, x):
    out[0] = _first(x)
    if DEBUG:
        out[1] = out.no_such_attribute     # never typed: DEBUG is False
    else:
        out[1] = 2


def test_branches_decided_at_compile_time_are_pruned():
    out = np.zeros(2, np.int64)
    _pruned_kernel[1, 1](out, 7)
    assert out.tolist() == [7, 2]


def _unpruned(out):
    flag = False        # a local: never decides a branch at compile time
    if flag:
        out[0] = out.no_such_attribute
    out[0] = 1


def test_local_variables_do_not_prune():
    with pytest.raises(TypingError, match="no_such_attribute"):
        typecheck(_unpruned, (T.int64[::1],))


@cuda.jit(device=True)
def _none_or_value(a, b):
    if b is None:
        return a[0]
    return a[0] + b


@cuda.jit
def _identity_kernel(out, a, pred):
    out[0] = _none_or_value(a, None)
    out[1] = _none_or_value(a, 2.0)
    out[2] = 1 if pred is True else 0
    out[3] = 1 if a is not None else 0
    out[4] = 1 if pred is not False else 0
    out[5] = 1 if cuda.threadIdx.x is not None else 0


@pytest.mark.parametrize("pred", [True, False])
def test_is_and_is_not_as_numba(pred):
    out = np.zeros(6)
    _identity_kernel[1, 1](out, np.ones(3), pred)
    assert out.tolist() == [1.0, 3.0, float(pred), 1.0, float(pred), 1.0]


@pytest.mark.compile
def test_is_compiles():
    ptx, _ = cuda.compile_ptx(_identity_kernel.py_func,
                              "void(float64[::1], float64[::1], boolean)")
    assert ".entry" in ptx


def _chained_is(a, b):
    a[0] = 1 if a[0] is b is None else 0


def test_chained_is_is_a_typing_error():
    with pytest.raises(TypingError, match="cannot be chained"):
        typecheck(_chained_is, (T.float64[::1], T.float64))


# ---- atomics with a tuple of mixed integer types ---------------------------------------
@cuda.jit
def _mixed_index(a):
    cuda.atomic.add(a, (cuda.threadIdx.x, np.uint64(cuda.threadIdx.y)), 1)


def test_atomic_index_of_mixed_integer_types():
    a = np.zeros((2, 3), np.int32)
    _mixed_index[1, (2, 3)](a)
    assert a.tolist() == [[1, 1, 1], [1, 1, 1]]


@pytest.mark.compile
def test_atomic_index_of_mixed_integer_types_compiles():
    ptx, _ = cuda.compile_ptx(_mixed_index.py_func, "void(int32[:, ::1])")
    assert re.search(r"(red|atom)\.global\.add", ptx)


def _float_index(a, x):
    cuda.atomic.add(a, (0, x), 1)


def test_atomic_index_with_a_float_is_a_typing_error():
    with pytest.raises(TypingError, match=r"the index must be an integer or a tuple of "
                                          r"integers, got Tuple\(int64, float64\)"):
        typecheck(_float_index, (T.int32[:, ::1], T.float64))


def _bad_dtype_string(x):
    s = cuda.shared.array(10, dtype="int33")
    s[0] = x[0]


def test_an_unknown_dtype_string_is_named_as_numba_names_it():
    with pytest.raises(TypingError, match=r"Invalid NumPy dtype specified: 'int33' \(bad "
                                          r"dtype for shared.array"):
        typecheck(_bad_dtype_string, (T.int32[::1],))


# ---- constants through nested device functions -----------------------------------------
@cuda.jit(device=True)
def _sum_first(n, row):
    buf = cuda.local.array(n, cuda.float64)
    s = 0.0
    for j in range(n):
        buf[j] = row[j]
        s += buf[j]
    return s


@cuda.jit(device=True)
def _pass_on(n, row):
    return _sum_first(n, row)


@cuda.jit(device=True)
def _pass_on_again(m, row):
    return _pass_on(m, row) + _pass_on(n=m + 1, row=row)


@cuda.jit(device=True)
def _tuple_sized(shape, out):
    loc = cuda.local.array(shape, cuda.int32)
    for i in range(shape[0]):
        for j in range(shape[1]):
            loc[i, j] = i * 10 + j
    out[0] = loc[shape[0] - 1, shape[1] - 1]
    out[1] = loc.size


@cuda.jit(device=True)
def _tuple_pass_on(shape, out):
    _tuple_sized(shape, out)


@cuda.jit(device=True)
def _typed_as(dt, out):
    loc = cuda.local.array(1, dt)
    loc[0] = 2.75
    out[0] = loc[0]


@cuda.jit(device=True)
def _dtype_pass_on(dt, out):
    _typed_as(dt, out)


@cuda.jit
def _nested_kernel(x, out, shape_out, f32_out, i64_out):
    out[0] = _pass_on(3, x)
    out[1] = _pass_on_again(2, x)
    _tuple_pass_on((2, 3), shape_out)
    _dtype_pass_on(cuda.float32, f32_out)
    _dtype_pass_on(np.int64, i64_out)


def _run_nested(launch):
    x = np.arange(1.0, 7.0)
    out = np.zeros(2)
    shape_out = np.zeros(2, np.int32)
    f32_out, i64_out = np.zeros(1), np.zeros(1)
    launch(x, out, shape_out, f32_out, i64_out)
    assert out.tolist() == [6.0, 3.0 + 6.0]       # 1+2+3; (1+2) + (1+2+3)
    assert shape_out.tolist() == [12, 6]
    assert f32_out[0] == 2.75                      # float32 keeps 2.75 exactly
    assert i64_out[0] == 2.0                       # stored through int64: truncated


def test_constants_reach_nested_device_functions():
    _run_nested(lambda *a: _nested_kernel[1, 1](*a))


@pytest.mark.parametrize("vector", ["1", "0"])
def test_constants_reach_nested_device_functions_on_both_executors(monkeypatch, vector):
    monkeypatch.setenv("CUJIT_SIM_VECTOR", vector)
    _run_nested(lambda *a: simulate(_nested_kernel.py_func, 1, 1, *a))


_helpers = types.SimpleNamespace(sum_first=_sum_first)


@cuda.jit(device=True)
def _via_attribute(k, row):
    return _helpers.sum_first(k, row)


def _attribute_kernel(x, out):
    out[0] = _via_attribute(4, x)


def test_a_callee_named_by_attribute_passes_the_constant_on():
    assert FunctionSource.from_pyfunc(_via_attribute.py_func).constant_params() == {"k"}
    tf = typecheck(_attribute_kernel, (T.float64[::1], T.float64[::1]))
    assert tf.callees[0].literal_args == {"k": 4}
    assert tf.callees[0].callees[0].literal_args == {"n": 4}


def test_passed_on_parameters_are_constant_parameters():
    assert FunctionSource.from_pyfunc(_pass_on.py_func).constant_params() == {"n"}
    assert FunctionSource.from_pyfunc(_pass_on_again.py_func).constant_params() == {"m"}
    assert FunctionSource.from_pyfunc(_dtype_pass_on.py_func).constant_params() == {"dt"}
    assert FunctionSource.from_pyfunc(_tuple_pass_on.py_func).constant_params() == \
        {"shape"}


def test_each_level_is_specialised_on_its_value():
    tf = typecheck(_nested_kernel.py_func, (T.float64[::1], T.float64[::1], T.int32[::1],
                                            T.float64[::1], T.float64[::1]))
    outer, again = tf.callees[0], tf.callees[1]
    assert outer.literal_args == {"n": 3}
    assert [c.literal_args for c in outer.callees] == [{"n": 3}]
    assert again.literal_args == {"m": 2}
    assert [c.literal_args for c in again.callees] == [{"n": 2}, {"n": 3}]
    assert [c.callees[0].literal_args for c in again.callees] == [{"n": 2}, {"n": 3}]


@pytest.mark.compile
def test_nested_constant_sizes_compile():
    ptx, _ = cuda.compile_ptx(_nested_kernel.py_func,
                              "void(float64[::1], float64[::1], int32[::1], float64[::1], "
                              "float64[::1])")
    assert ".visible .entry" in ptx


def _runtime_outer(x, out, m):
    out[0] = _pass_on(m, x)     # a kernel argument: not a constant at the outer call site


def test_non_constant_value_through_nested_calls_is_a_typing_error():
    with pytest.raises(TypingError) as e:
        typecheck(_runtime_outer, (T.float64[::1], T.float64[::1], T.int64))
    msg = str(e.value)
    assert "the shape of local.array must be a compile-time constant" in msg
    assert "'n' is not" in msg


@cuda.jit(device=True)
def _recurse_sized(n, out):
    loc = cuda.local.array(n, cuda.int32)
    loc[0] = n
    out[0] = loc[0]
    _recurse_sized(n, out)


def _recursion_kernel(out):
    _recurse_sized(2, out)


def test_recursion_with_a_constant_parameter_types_the_callee_for_the_constant():
    assert FunctionSource.from_pyfunc(_recurse_sized.py_func).constant_params() == {"n"}
    tf = typecheck(_recursion_kernel, (T.int32[::1],))
    (callee,) = tf.callees
    assert callee.recursive and callee.literal_args == {"n": 2}
    assert callee.callees == [callee]
