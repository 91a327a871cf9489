"""Compile errors (R-KER-9): unsupported constructs, type mismatches, non-constant shapes and
bad dtypes raise TypingError/CompileError naming the file, line and column and showing the
source line with a caret."""
import numpy as np
import pytest

import cujit as cuda
from cujit import types as T
from cujit.frontend.errors import CompileError, SourceLocation, TypingError
from cujit.frontend.typecheck import typecheck_kernel
from cujit.frontend.typeinfer import infer

THIS = __file__


def err_of(fn, argtypes, exc=TypingError):
    with pytest.raises(exc) as ei:
        infer(fn, argtypes)
    return ei.value


def line_of(fn, text):
    import inspect
    lines, first = inspect.getsourcelines(fn)
    for k, line in enumerate(lines):
        if text in line:
            return first + k, line
    raise AssertionError(text)


def k_with(a):
    with open("x") as f:
        a[0] = 1


def k_try(a):
    try:
        a[0] = 1
    except Exception:
        pass


def k_def(a):
    @staticmethod
    def inner():
        return 1
    a[0] = inner()


def k_str_arith(a):
    a[0] = a[1] + "x"


def k_unify(a, n):
    x = 1
    if n > 0:
        x = a
    a[0] = x


def k_undefined(a):
    a[0] = not_defined_anywhere


def k_nonconst_shape(a, n):
    s = cuda.shared.array(n, dtype=np.float32)
    s[0] = 1


def k_float_shape(a):
    s = cuda.local.array(2.5, dtype=np.float32)
    s[0] = 1


def k_return_value(a):
    return a[0]


def k_bad_attr(a):
    a[0] = a.foo


def k_too_many_idx(a):
    a[0, 1] = 1


def k_float_index(a):
    a[1.5] = 1


ZEROS = np.zeros(3)


def k_readonly(a):
    c = cuda.const.array_like(ZEROS)
    c[0] = 1


def k_const_call(a):
    c = cuda.const.array_like(np.zeros(3))
    a[0] = c[0]


def k_call_unknown(a):
    a[0] = np.linalg.norm(a)


def k_fstring(a):
    print(f"{a[0]}")


def k_kwargs(a, *rest):
    a[0] = 1


def k_bad_atomic(a):
    cuda.atomic.add(a, 0, 1)


def k_grid4(a):
    a[0] = cuda.grid(4)


def k_assign_tuple_mismatch(a):
    x, y, z = (1, 2)


def k_complex_cmp(a, z):
    if z < 1:
        a[0] = 1


def k_lambda(a):
    f = lambda x: x  # noqa: E731
    a[0] = f(1)


def k_raise(a):
    raise


def k_dim3(a):
    a[0] = cuda.threadIdx.w


def k_global_stmt(a):
    global GG
    a[0] = 1


CASES = [
    (k_with, (T.float32[::1],), "'with' statements are not supported", "with open"),
    (k_try, (T.float32[::1],), "'try' statements are not supported", "try:"),
    (k_def, (T.float32[::1],), "cannot have decorators", "def inner"),
    (k_str_arith, (T.float32[::1],), "unsupported operand types for +", 'a[1] + "x"'),
    (k_unify, (T.float32[::1], T.int64), "cannot be unified", "x = a"),
    (k_undefined, (T.float32[::1],), "name 'not_defined_anywhere' is not defined",
     "not_defined_anywhere"),
    (k_nonconst_shape, (T.float32[::1], T.int64), "must be a compile-time constant",
     "shared.array(n"),
    (k_float_shape, (T.float32[::1],), "must be a Python int or a tuple of ints",
     "local.array(2.5"),
    (k_return_value, (T.float32[::1],), "a kernel cannot return a value", "return a[0]"),
    (k_bad_attr, (T.float32[::1],), "arrays have no attribute 'foo'", "a.foo"),
    (k_too_many_idx, (T.float32[::1],), "too many indices (2) for a 1-d array", "a[0, 1]"),
    (k_float_index, (T.float32[::1],), "array index must be an integer or a slice",
     "a[1.5]"),
    (k_readonly, (T.float32[::1],), "read-only", "c[0] = 1"),
    (k_const_call, (T.float32[::1],), "const.array_like must be a compile-time constant",
     "np.zeros(3)"),
    (k_call_unknown, (T.float32[::1],), "cannot be called in a kernel", "np.linalg.norm"),
    (k_fstring, (T.float32[::1],), "f-strings are not supported", 'f"{a[0]}"'),
    (k_bad_atomic, (T.int8[::1],), "atomic.add() does not support arrays of int8",
     "atomic.add"),
    (k_grid4, (T.int64[::1],), "takes 1, 2 or 3", "grid(4)"),
    (k_assign_tuple_mismatch, (T.int64[::1],), "cannot unpack 2 values into 3 names",
     "x, y, z"),
    (k_complex_cmp, (T.int64[::1], T.complex128), "complex numbers can only be compared",
     "z < 1"),
    (k_lambda, (T.int64[::1],), "'Lambda' expressions are not supported", "lambda x"),
    (k_raise, (T.int64[::1],), "a bare 'raise' is not supported", "    raise"),
    (k_dim3, (T.int64[::1],), "has no attribute 'w'", "threadIdx.w"),
    (k_global_stmt, (T.int64[::1],), "'global' statements are not supported", "global GG"),
]


@pytest.mark.parametrize("fn,argtypes,msg,src", CASES, ids=[c[0].__name__ for c in CASES])
def test_error_names_file_line_column_and_source(fn, argtypes, msg, src):
    e = err_of(fn, argtypes)
    text = str(e)
    assert msg in text
    line, source = line_of(fn, src)
    assert f'File "{THIS}", line {line}, column ' in text
    assert source.strip() in text
    assert e.loc.line == line and e.loc.filename == THIS
    # the caret sits under the reported column
    caret_line = text.splitlines()[-1]
    col = e.loc.col - (len(source) - len(source.lstrip()))
    assert caret_line == "    " + " " * col + "^"


def test_varargs_rejected():
    e = err_of(k_kwargs, (T.float32[::1],))
    assert "*args" in str(e)


def test_wrong_arg_count():
    e = err_of(k_readonly, (T.float32[::1], T.int32))
    assert "takes 1 argument(s) (a) but 2 were given" in str(e)


def test_lambda_kernel_without_source_is_typed_from_its_bytecode():
    f = eval("lambda a: None")      # no file behind it: rebuilt from bytecode
    tf = infer(f, (T.int32,))
    assert tf.fsrc.filename == "<string>" and tf.fsrc.argnames == ["a"]


def test_lambda_kernel_returning_a_value_is_refused_from_bytecode_too():
    with pytest.raises(TypingError, match="return"):
        infer(eval("lambda a: a + 1"), (T.int32,))


def test_not_a_function():
    with pytest.raises(TypingError, match="must be a Python function"):
        infer(len, ())


def test_source_location_render():
    loc = SourceLocation("f.py", 3, 8, "    x = a + b\n")
    assert loc.render() == 'File "f.py", line 3, column 9\n    x = a + b\n        ^'
    assert repr(loc) == "f.py:3:9"
    assert str(TypingError("boom")) == "boom"
    e = TypingError("boom", loc)
    assert e.loc is loc and "line 3" in str(e)
    assert isinstance(CompileError("x"), Exception) and not isinstance(TypingError("x"),
                                                                          TypeError)


def recursive(a, n):
    if n > 0:
        rec_dev(a, n - 1)


class _Dev:
    _cujit_device_function = True

    def __init__(self, f):
        self.py_func = f


rec_dev = _Dev(recursive)


def test_kernel_calling_itself_is_a_typing_error():
    with pytest.raises(TypingError, match="kernel recursive calls itself"):
        infer(recursive, (T.float32[::1], T.int64))


def test_recursive_device_function_types():
    tf = infer(recursive, (T.float32[::1], T.int64), kernel=False)
    assert tf.recursive and tf.return_type is T.void and tf.callees == [tf]


def _bad_dev(x):
    return x + "s"


bad_dev = _Dev(_bad_dev)


def calls_bad_dev(a):
    a[0] = bad_dev(a[0])


def test_error_inside_device_function_points_there():
    e = err_of(calls_bad_dev, (T.float32[::1],))
    line, _ = line_of(_bad_dev, 'x + "s"')
    assert e.loc.line == line


def mixed_return(x):
    if x > 0:
        return 1


mixed_dev = _Dev(mixed_return)


def calls_mixed(a):
    a[0] = mixed_dev(a[0])


def test_device_function_must_return_on_all_paths():
    e = err_of(calls_mixed, (T.float32[::1],))
    assert "every path or on none" in str(e)


def dyn_tuple_shared(a):
    s = cuda.shared.array((0, 2), np.float32)
    s[0, 0] = 1


def test_typecheck_kernel_uses_launch_values():
    def_ok = typecheck_kernel(ok_kernel, (np.zeros(3, np.float32), 2))
    assert def_ok == (T.float32[::1], T.int64)
    with pytest.raises(TypingError, match="must be 1-D"):
        typecheck_kernel(dyn_tuple_shared, (np.zeros(3, np.float32),))
    with pytest.raises(TypeError, match="cannot pass a value of type str"):
        typecheck_kernel(ok_kernel, (np.zeros(3), "x"))


def ok_kernel(a, n):
    i = cuda.grid(1)
    if i < n:
        a[i] = n


def test_typecheck_does_not_import_llvmlite():
    import subprocess
    import sys
    # the first import of llvmlite records who made it, for the failure message
    code = ("import builtins, sys, traceback\n"
            "first = []\n"
            "real_import = builtins.__import__\n"
            "def watch(name, *a, **k):\n"
            "    if name.startswith('llvmlite') and not first:\n"
            "        first.append(''.join(traceback.format_stack(limit=30)))\n"
            "    return real_import(name, *a, **k)\n"
            "builtins.__import__ = watch\n"
            "import numpy as np\n"
            "sys.path.insert(0, %r)\n"
            "import test_front_errors as t\n"
            "from cujit.frontend.typecheck import typecheck_kernel\n"
            "typecheck_kernel(t.ok_kernel, (np.zeros(3, np.float32), 2))\n"
            "assert 'llvmlite' not in sys.modules, 'llvmlite imported by\\n' + ''.join(first)\n"
            "assert 'cuda.bindings.nvvm' not in sys.modules\n" % (str(__import__('os').path
                                                                     .dirname(THIS)),))
    # the toolchain prefetch (a thread the module's @cuda.jit decorators start on a machine
    # with a GPU) loads llvmlite on purpose; the claim is about the typer alone
    env = dict(__import__("os").environ, CUJIT_PREFETCH="0")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert r.returncode == 0, r.stderr


def k_is(a):
    if a is a:      # arrays have no identity in kernels (numba's generic_is: mutable)
        a[0] = 1


HUGE = 2 ** 70
BAD_ARR = np.array(["a", "b"])


def k_huge(a):
    a[0] = HUGE


def k_bad_global_array(a):
    a[0] = BAD_ARR[0]


@pytest.mark.parametrize("fn,msg", [(k_is, "'is' / 'is not' of two values of type array"),
                                    (k_huge, "does not fit in int64 or uint64"),
                                    (k_bad_global_array, "not supported in kernels")])
def test_more_errors_are_typing_errors(fn, msg):
    e = err_of(fn, (T.float32[::1],))
    assert msg in str(e) and e.loc is not None and e.loc.filename == THIS


def k_unbound(a, n):
    for i in range(n):
        if i > 0:
            s = s + prev  # noqa: F821
        prev = a[i]
    a[0] = 1


def test_use_before_assignment():
    e = err_of(k_unbound, (T.float32[::1], T.int64))
    assert "variable 's' is used before it is assigned" in str(e)
    assert "s = s + prev" in str(e)


def k_enum_bad(a, n):
    for i, v in enumerate(n):
        a[i] = v


def test_enumerate_of_a_number():
    e = err_of(k_enum_bad, (T.float32[::1], T.int64))
    assert "enumerate() in a kernel takes ranges, arrays or homogeneous tuples" in str(e)
    assert "enumerate(n)" in str(e)


REC = np.dtype([("a", np.int64), ("b", np.int64)])


def k_field_item_store(x):
    x[0]["a"] = 5


def k_field_attr_store(x):
    x[0].a = 5


def k_field_reads(x, out):
    out[0] = x[0].a + x[1]["b"]


def _record_array_type(writable):
    a = np.zeros(4, REC)
    a.flags.writeable = writable
    return T.typeof(a)


@pytest.mark.parametrize("fn", [k_field_item_store, k_field_attr_store])
def test_record_field_store_through_a_read_only_array_is_rejected(fn):
    e = err_of(fn, (_record_array_type(False),))
    assert "read-only" in str(e) and "fields cannot be written" in str(e)
    infer(fn, (_record_array_type(True),))      # a writable array's fields can be


def test_record_fields_of_a_read_only_array_can_be_read():
    infer(k_field_reads, (_record_array_type(False), T.int64[::1]))


def k_shared_object_dtype():
    arr = cuda.shared.array(10, dtype=np.dtype("O"))  # noqa: F841


def k_local_dtype_in_expression(x):
    x[0] = cuda.local.array(4, dtype=np.dtype("f4"))[0]


def test_uninferable_array_assigned_names_the_variable():
    # numba's words ("Cannot infer the type of variable"), then why
    e = err_of(k_shared_object_dtype, ())
    assert e.msg.startswith("Cannot infer the type of variable 'arr': the dtype of "
                            "shared.array must be a compile-time constant")
    assert "'np.dtype('O')' is not known when the kernel is compiled" in e.msg
    line, _ = line_of(k_shared_object_dtype, "np.dtype(\"O\")")
    assert e.loc.line == line


def test_uninferable_array_in_an_expression_is_the_plain_reason():
    e = err_of(k_local_dtype_in_expression, (T.float32[::1],))
    assert e.msg.startswith("the dtype of local.array must be a compile-time constant")


@cuda.jit(device=True)
def dev_uses_undefined(x):
    return floor(x)  # noqa: F821


@cuda.jit(device=True)
def dev_calls_dev(x):
    return dev_uses_undefined(x)


def k_calls_dev_chain(a):
    a[0] = dev_calls_dev(a[0])


def test_error_in_a_device_function_names_the_calls_that_led_there():
    e = err_of(k_calls_dev_chain, (T.float64[::1],))
    text = str(e)
    assert e.msg == "NameError: name 'floor' is not defined"
    assert text.startswith("NameError: name 'floor' is not defined\nFile ")
    inner_call, _ = line_of(dev_calls_dev, "return dev_uses_undefined(x)")
    outer_call, _ = line_of(k_calls_dev_chain, "a[0] = dev_calls_dev(a[0])")
    # innermost first, as numba's "During:" lines
    assert text.split("\nDuring: ")[1:] == [
        f"resolving callee type: type(CUDADispatcher({dev_uses_undefined.py_func!r}))",
        f'typing of call at File "{THIS}", line {inner_call}',
        f"resolving callee type: type(CUDADispatcher({dev_calls_dev.py_func!r}))",
        f'typing of call at File "{THIS}", line {outer_call}']
    assert e.loc.line == line_of(dev_uses_undefined, "floor(x)")[0]
