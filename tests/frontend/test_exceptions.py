"""``raise``/``assert`` in kernels and ``debug=True`` (issue 14): values on the active backend
(simulator here, the H200 for the integrator), PTX properties (compile-only), typing errors,
and the host side of a device exception with a stand-in driver."""
import ctypes

import numpy as np
import pytest

import cujit as cuda
from cujit import types as T
from cujit.frontend.errors import TypingError
from cujit.nvvm.lower_exceptions import EXC_GLOBAL, check_after_launch, format_exception
from cujit.nvvm.lowering import compile_to_llvm


class MyError(Exception):
    pass


def divide(r, a, b):
    i = cuda.grid(1)
    if i < r.size:
        r[i] = a[i] / b[i]


def int_floordiv(r, a, b):
    i = cuda.grid(1)
    if i < r.size:
        r[i] = a[i] // b[i]


def user_raise(x, out):
    if x == 1:
        raise MyError
    elif x == 2:
        raise MyError("foo")
    out[0] = 7


def raise_on_thread(out):
    i = cuda.threadIdx.x
    if i == 3:
        raise ValueError("thread three")
    out[i] = i + 1


def asserting(x, out):
    assert x < 5, "x too large"
    out[0] = x


@cuda.jit(device=True)
def dev_raises(x):
    if x > 10:
        raise MyError("from a device function")
    return x * 2


def calls_dev(x, out):
    out[0] = dev_raises(x)


def _where(on_gpu, tid):
    # numba's form on both backends (the simulator adds its own threadIdx=... prefix)
    return f"tid=[{tid}, 0, 0] ctaid=[0, 0, 0]"


# ---- values on the active backend -----------------------------------------------------------
@pytest.mark.filterwarnings("ignore:divide by zero:RuntimeWarning")
def test_handed_case_float_division_by_zero_without_debug_gives_inf():
    a = np.array([1.0, 42.0])
    b = np.array([0.0, 1.0])
    r = np.zeros(2)
    cuda.jit(divide)[1, 2](r, a, b)
    assert np.isinf(r[0]) and r[0] > 0
    assert r[1] == 42.0


def test_handed_case_debug_division_by_zero_raises_zero_division_error():
    a = np.array([1.0, 42.0])
    b = np.array([0.0, 1.0])
    r = np.zeros(2)
    with pytest.raises(ZeroDivisionError, match="division by zero"):
        cuda.jit(debug=True, opt=False)(divide)[1, 2](r, a, b)


@pytest.mark.filterwarnings("ignore:divide by zero:RuntimeWarning")
def test_debug_integer_floordiv_by_zero_raises_and_plain_gives_zero():
    a = np.array([7, 9], dtype=np.int64)
    b = np.array([2, 0], dtype=np.int64)
    r = np.full(2, -1, dtype=np.int64)
    cuda.jit(int_floordiv)[1, 2](r, a, b)
    assert r.tolist() == [3, 0]
    with pytest.raises(ZeroDivisionError):
        cuda.jit(debug=True, opt=False)(int_floordiv)[1, 2](r, a, b)


def test_debug_user_exception_class_and_message_reach_the_host(on_gpu):
    k = cuda.jit(debug=True, opt=False)(user_raise)
    out = np.zeros(1, dtype=np.int64)
    k[1, 1](0, out)
    assert out[0] == 7
    with pytest.raises(MyError) as ei:
        k[1, 1](1, out)
    assert _where(on_gpu, 0) in str(ei.value)
    with pytest.raises(MyError) as ei:
        k[1, 1](2, out)
    assert str(ei.value).endswith("tid=[0, 0, 0] ctaid=[0, 0, 0]: foo")
    assert _where(on_gpu, 0) in str(ei.value)
    # the record is reset: the next launch that does not raise is clean
    out[0] = 0
    k[1, 1](0, out)
    assert out[0] == 7


def test_debug_names_the_raising_thread(on_gpu):
    k = cuda.jit(debug=True, opt=False)(raise_on_thread)
    out = np.zeros(8, dtype=np.int64)
    with pytest.raises(ValueError, match="thread three") as ei:
        k[1, 8](out)
    assert _where(on_gpu, 3) in str(ei.value)


def test_debug_assert_raises_assertion_error_with_message():
    k = cuda.jit(debug=True, opt=False)(asserting)
    out = np.zeros(1, dtype=np.int64)
    k[1, 1](3, out)
    assert out[0] == 3
    with pytest.raises(AssertionError, match="x too large"):
        k[1, 1](9, out)


def test_debug_raise_in_device_function_reaches_the_host():
    k = cuda.jit(debug=True, opt=False)(calls_dev)
    out = np.zeros(1, dtype=np.int64)
    k[1, 1](4, out)
    assert out[0] == 8
    with pytest.raises(MyError, match="from a device function"):
        k[1, 1](11, out)


@pytest.mark.gpu
def test_without_debug_a_raise_ends_only_that_thread():
    # numba.cuda: without debug the exception is dropped; the raising thread stops and the
    # others finish (the simulator raises regardless, as numba's simulator does)
    out = np.zeros(8, dtype=np.int64)
    cuda.jit(raise_on_thread)[1, 8](out)
    assert out.tolist() == [1, 2, 3, 0, 5, 6, 7, 8]


@pytest.mark.gpu
def test_without_debug_assert_is_not_compiled():
    out = np.zeros(1, dtype=np.int64)
    cuda.jit(asserting)[1, 1](9, out)
    assert out[0] == 9


@pytest.mark.sim
def test_simulator_raises_regardless_of_debug():
    out = np.zeros(8, dtype=np.int64)
    with pytest.raises(ValueError, match="thread three"):
        cuda.jit(raise_on_thread)[1, 8](out)


# ---- PTX (compile-only) ---------------------------------------------------------------------
def _ptx(fn, argtypes, debug):
    from cujit.nvvm.libnvvm import compile_ptx
    lf = compile_to_llvm(fn, argtypes, debug=debug)
    return lf, compile_ptx(lf.llvm_ir, opt=0 if debug else 3, debug=debug)


@pytest.mark.compile
def test_debug_raise_records_first_thread_in_a_visible_global():
    lf, ptx = _ptx(user_raise, (T.int32, T.int64[::1]), True)
    assert f".visible .global .align 4 .b8 {EXC_GLOBAL}[28]" in ptx
    assert ptx.count("atom.global.cas.b32") == 2
    assert [(c, a) for c, a, _ in lf.exceptions] == [(MyError, ()), (MyError, ("foo",))]
    assert lf.exceptions[1][2].line == user_raise.__code__.co_firstlineno + 4


@pytest.mark.compile
def test_plain_raise_has_no_exception_record_and_ends_the_thread():
    lf, ptx = _ptx(user_raise, (T.int32, T.int64[::1]), False)
    assert EXC_GLOBAL not in ptx and lf.exceptions == []
    assert "atom" not in ptx


@pytest.mark.compile
def test_debug_division_checks_divisor_plain_does_not():
    lf, ptx = _ptx(divide, (T.float64[::1],) * 3, True)
    assert [(c, a) for c, a, _ in lf.exceptions] == [(ZeroDivisionError,
                                                      ("float division by zero",))]
    assert "setp.eq.f64" in ptx
    lf, ptx = _ptx(divide, (T.float64[::1],) * 3, False)
    assert EXC_GLOBAL not in ptx and "setp.eq.f64" not in ptx


@pytest.mark.compile
def test_assert_compiled_only_in_debug():
    lf, _ = _ptx(asserting, (T.int64, T.int64[::1]), False)
    assert lf.exceptions == []
    lf, _ = _ptx(asserting, (T.int64, T.int64[::1]), True)
    assert [(c, a) for c, a, _ in lf.exceptions] == [(AssertionError, ("x too large",))]


@pytest.mark.compile
def test_raise_in_device_function_exits_the_thread():
    lf, ptx = _ptx(calls_dev, (T.int64, T.int64[::1]), False)
    assert "exit;" in ptx


# ---- typing errors --------------------------------------------------------------------------
def k_bad_class(a):
    raise a


def k_not_exception(a):
    raise int


def k_from(a):
    raise ValueError("x") from KeyError


def k_kwargs(a):
    raise ValueError(msg="x")


def k_runtime_arg(a):
    raise ValueError(a[0])


def k_assert_runtime_msg(a):
    assert a[0] > 0, a[1]


@pytest.mark.parametrize("fn,msg,debug", [
    (k_bad_class, "the raised exception must be a compile-time constant", False),
    (k_not_exception, "exceptions must derive from BaseException", False),
    (k_from, "'raise ... from ...' is not supported", False),
    (k_kwargs, "keyword arguments of a raised exception are not supported", False),
    (k_runtime_arg, "an argument of a raised exception must be a compile-time constant", False),
    (k_assert_runtime_msg, "the message of an assert statement must be a compile-time "
     "constant", True),
])
def test_raise_typing_errors(fn, msg, debug):
    with pytest.raises(TypingError, match=msg.replace("(", r"\(").replace(")", r"\)")
                       .replace(".", r"\.")):
        compile_to_llvm(fn, (T.int64[::1],), debug=debug)


# ---- host side with a stand-in driver -------------------------------------------------------
class _FakeModule:
    def __init__(self, ptr):
        self.ptr = ptr

    def get_global(self, name):
        assert name == EXC_GLOBAL
        return self.ptr, 28


class _FakeDriver:
    def __init__(self):
        self.synced = []

    def stream_synchronize(self, s):
        self.synced.append(s)

    def memcpy_dtoh(self, dst, src, n, stream=0):
        ctypes.memmove(dst, src, n)

    def memset_d8(self, ptr, v, n, stream=0):
        ctypes.memset(ptr, v, n)


class _Obj:
    pass


def _host_case(words, excs):
    state = (ctypes.c_int32 * 7)(*words)
    lk, compiled = _Obj(), _Obj()
    lk.module = _FakeModule(ctypes.addressof(state))
    compiled.exceptions = excs
    return state, lk, compiled


def test_check_after_launch_raises_recorded_exception_and_resets():
    from cujit.frontend.errors import SourceLocation
    loc = SourceLocation("k.py", 12)
    state, lk, compiled = _host_case([2, 5, 1, 0, 3, 0, 0],
                                     [(KeyError, (), loc), (MyError, ("boom",), loc)])
    drv = _FakeDriver()
    with pytest.raises(MyError) as ei:
        check_after_launch(compiled, lk, drv, "kern", 7)
    assert str(ei.value) == ("In function 'kern', file k.py, line 12, tid=[5, 1, 0] "
                             "ctaid=[3, 0, 0]: boom")
    assert drv.synced == [7] and list(state) == [0] * 7
    check_after_launch(compiled, lk, drv, "kern", 7)        # clean now: no raise


def test_check_after_launch_unknown_code_is_runtime_error():
    from cujit.frontend.errors import SourceLocation
    state, lk, compiled = _host_case([9, 0, 0, 0, 0, 0, 0],
                                     [(KeyError, (), SourceLocation("k.py", 1))])
    with pytest.raises(RuntimeError, match="unknown exception code 9"):
        check_after_launch(compiled, lk, _FakeDriver(), "kern")


def test_format_exception_without_args_and_odd_constructor():
    from cujit.frontend.errors import SourceLocation

    class Odd(Exception):
        def __init__(self, a, b):
            super().__init__(a, b)

    e = format_exception(Odd, (), SourceLocation("f.py", 3), "k", (0, 0, 0), (1, 0, 0))
    assert isinstance(e, Odd)
    assert e.args == ("In function 'k', file f.py, line 3, tid=[0, 0, 0] ctaid=[1, 0, 0]",)


def k_object_arg(a):
    raise ValueError(np)


def test_raise_argument_must_be_string_or_number():
    with pytest.raises(TypingError, match="must be a string or number constant"):
        compile_to_llvm(k_object_arg, (T.int64[::1],))


def test_debug_wrapper_keeps_other_floating_point_errors():
    from cujit.simulator.debugmode import debug_kernel

    def f():
        raise FloatingPointError("overflow encountered")

    def g(x):
        return np.float64(1.0) / x
    with pytest.raises(FloatingPointError, match="overflow"):
        debug_kernel(f)()
    with pytest.raises(ZeroDivisionError, match="^division by zero$"):
        debug_kernel(g)(np.float64(0.0))      # outside a simulated thread: plain message
    assert debug_kernel(g)(np.float64(2.0)) == 0.5


def test_debug_kernel_with_local_exception_class_is_not_cached(tmp_path):
    from cujit.dispatch.cache import DiskCache

    class Local(Exception):
        pass
    d = DiskCache(user_raise)
    d.directory = str(tmp_path)
    assert d.save("k" * 40, {"exceptions": [(Local, (), None)]}) is False
    assert list(tmp_path.iterdir()) == []           # no stray temporary file
    assert d.save("k" * 40, {"exceptions": [(MyError, ("x",), None)]}) is True
    assert d.load("k" * 40)["exceptions"][0][0] is MyError


def out_of_bounds(a):
    a[cuda.threadIdx.x + 10] = 1


@pytest.mark.sim
def test_simulator_debug_keeps_its_own_error_reports():
    from cujit.simulator.errors import OutOfBoundsError
    with pytest.raises(OutOfBoundsError) as ei:
        cuda.jit(debug=True, opt=False)(out_of_bounds)[1, 1](np.zeros(4))
    assert "tid=[" not in str(ei.value)


def k_assert_dynamic_message(a):
    assert a[0] > 0, f"bad {a[0]}"


def test_debug_kernel_assert_message_must_be_constant_on_every_backend():
    """The simulator types a debug kernel as the GPU compiles it: a non-constant assert
    message is the same TypingError on both (without debug the assert is not compiled)."""
    a = np.ones(1)
    k = cuda.jit(debug=True)(k_assert_dynamic_message)
    with pytest.raises(TypingError, match="message of an assert statement"):
        k[1, 1](a)
    cuda.jit(k_assert_dynamic_message)[1, 1](a)        # no debug: accepted, nothing raised


def test_typecheck_kernel_debug_option():
    from cujit.frontend.typecheck import typecheck_kernel
    a = np.ones(1)
    assert typecheck_kernel(k_assert_dynamic_message, (a,)) == (T.float64[::1],)
    with pytest.raises(TypingError, match="message of an assert statement"):
        typecheck_kernel(k_assert_dynamic_message, (a,), debug=True)


def shape_at(ary):
    x = cuda.threadIdx.x
    if x == 2:
        ary.shape[-x]


@pytest.mark.compile
def test_debug_checks_a_run_time_tuple_index_plain_does_not():
    lf, ptx = _ptx(shape_at, (T.int64[::1],), True)
    assert [(c, a) for c, a, _ in lf.exceptions] == [(IndexError,
                                                      ("tuple index out of range",))]
    lf, ptx = _ptx(shape_at, (T.int64[::1],), False)
    assert lf.exceptions == [] and EXC_GLOBAL not in ptx


@pytest.mark.gpu
def test_debug_run_time_tuple_index_out_of_range_raises_index_error():
    k = cuda.jit(debug=True, opt=False)(shape_at)
    with pytest.raises(IndexError, match="tuple index out of range"):
        k[1, 3](np.array([0, 1]))
    cuda.jit(shape_at)[1, 3](np.array([0, 1]))      # unchecked without debug
