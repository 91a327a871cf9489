"""A kernel (``@jit`` without ``device=True``) called from a kernel or device function is
compiled as a device function for the call's argument types and may return a value, as in
numba-cuda (``CUDADispatcher.compile_device``); launched, it still must return None.
Values on the active backend (the simulator here), the compiled IR run on the host through
MCJIT and checked as PTX (compile-only), and the typing errors, which name the function."""
import numpy as np
import pytest

import cujit as cuda
from cujit import types as T
from cujit.frontend.callkinds import CallKind, call_of
from cujit.frontend.errors import TypingError
from cujit.nvvm.lowering import compile_to_llvm
from cujit.frontend.typeinfer import infer


@cuda.jit
def add(a, b):
    return a + b


@cuda.jit
def fill(x, v):
    for i in range(x.size):
        x[i] = v


@cuda.jit("void(int64[::1], int64)")
def eager_fill(x, v):
    x[0] = v


@cuda.jit
def apply(func, *args):
    return func(*args)


@cuda.jit
def pair(a):
    return a, a * 2


def k_calls(r, x, y):
    r[0] = add(2, 3)                  # int64 + int64
    r[1] = add(1.5, 2)                # typed again for (float64, int64)
    r[2] = apply(add, 4.0, 0.5)       # a kernel passed as a value, called with *args
    r[3], r[4] = pair(3)
    fill(x, 7)
    eager_fill(y, 9)


def _run_calls():
    r = np.zeros(5)
    x = np.zeros(3, np.int64)
    y = np.zeros(2, np.int64)
    return r, x, y


CALLS = [5.0, 3.5, 4.5, 3.0, 6.0]
SIG = (T.float64[::1], T.int64[::1], T.int64[::1])


def test_kernels_called_from_a_kernel_give_their_values():
    r, x, y = _run_calls()
    cuda.jit(k_calls)[1, 1](r, x, y)
    assert r.tolist() == CALLS
    assert x.tolist() == [7, 7, 7] and y.tolist() == [9, 0]


def test_every_thread_of_a_block_calls_a_kernel():
    @cuda.jit
    def k(r):
        i = cuda.threadIdx.x
        r[i] = add(i, 0.5)
    r = np.zeros(64)
    k[1, 64](r)
    assert r.tolist() == [i + 0.5 for i in range(64)]


def test_a_called_kernel_still_launches_as_a_kernel():
    x = np.zeros(4, np.int64)
    fill[1, 1](x, 5)
    assert x.tolist() == [5] * 4
    y = np.zeros(2, np.int64)
    eager_fill[1, 1](y, 3)
    assert y.tolist() == [3, 0]


def test_a_kernel_returning_a_value_cannot_be_launched():
    with pytest.raises(TypingError, match="kernel cannot return a value"):
        add[1, 1](1, 2)


def test_a_called_kernel_reads_a_captured_device_array():
    """Captured device arrays make the simulator call the callee as written: the kernel
    object itself, inside the simulated thread (compiled code bakes the address in)."""
    captured = cuda.to_device(np.arange(4, dtype=np.float64))

    @cuda.jit
    def read(i):
        return captured[i] * 10

    @cuda.jit
    def k(r):
        i = cuda.threadIdx.x
        r[i] = read(i)
    r = np.zeros(4)
    k[1, 4](r)
    assert r.tolist() == [0.0, 10.0, 20.0, 30.0]


def test_a_kernel_object_outside_a_kernel_needs_a_launch_configuration():
    with pytest.raises(ValueError, match="launch configuration was not specified"):
        add(1, 2)


def test_the_call_is_recorded_as_a_kernel_call():
    tf = infer(k_calls, SIG)
    kinds = {call_of(tf, n).kind for n in tf.info if call_of(tf, n) is not None}
    assert CallKind.KERNEL in kinds and CallKind.DEVICE not in kinds


# ---- compiled: the IR run on the host, PTX ---------------------------------------------------
@pytest.mark.compile
def test_compiled_kernel_calls_match_python():
    from test_lower_cpu import run
    r, x, y = _run_calls()
    run(k_calls, SIG, r, x, y)
    assert r.tolist() == CALLS
    assert x.tolist() == [7, 7, 7] and y.tolist() == [9, 0]


@pytest.mark.compile
def test_called_kernel_is_an_internal_device_function_in_the_ptx():
    lf = compile_to_llvm(k_calls, SIG)
    defs = [ln for ln in lf.llvm_ir.splitlines() if ln.startswith("define")]
    assert sum(d.startswith("define internal") for d in defs) >= 4
    assert any("_cujit_dev_4fill_" in d for d in defs)
    from cujit.nvvm.libnvvm import compile_ptx
    ptx = compile_ptx(lf.llvm_ir)
    assert ptx.count(".entry") == 1


# ---- errors ----------------------------------------------------------------------------------
@cuda.jit
def recurse(n):
    return recurse(n - 1)


def k_recursive(r):
    r[0] = recurse(3)


def k_too_many(r):
    r[0] = add(1, 2, 3)


def k_missing(r):
    r[0] = add(1)


def k_unknown_keyword(r):
    r[0] = add(1, c=2)


def k_void_result(r):
    r[0] = fill(r, 1.0)


@pytest.mark.parametrize("fn, msg", [
    (k_recursive, "cannot type infer runaway recursion: no return of recurse"),
    (k_too_many, r"add\(\) takes 2 positional argument\(s\) but 3 were given"),
    (k_missing, r"add\(\) missing required argument 'b'"),
    (k_unknown_keyword, r"add\(\) got an unexpected keyword argument 'c'"),
    (k_void_result, "cannot store a value of type none"),
])
def test_kernel_call_errors_name_the_function(fn, msg):
    with pytest.raises(TypingError, match=msg):
        compile_to_llvm(fn, (T.float64[::1],))


@pytest.mark.parametrize("fn, msg", [
    (k_recursive, "cannot type infer runaway recursion"),
    (k_too_many, r"add\(\) takes 2 positional argument\(s\)"),
])
def test_kernel_call_errors_are_raised_at_launch(fn, msg):
    with pytest.raises(TypingError, match=msg):
        cuda.jit(fn)[1, 1](np.zeros(1))


def test_a_kernel_keeps_the_kernel_it_calls_alive_not_the_reverse():
    import gc
    import weakref

    def make():
        @cuda.jit
        def twice(x):
            return 2 * x

        @cuda.jit
        def k(out):
            out[0] = twice(out[0])
        return k, twice

    k, callee = make()
    out = np.array([3.0])
    k[1, 1](out)
    assert out[0] == 6.0
    kref, cref = weakref.ref(k), weakref.ref(callee)
    del callee
    gc.collect()
    assert cref() is not None           # the caller names it
    callee = cref()
    del k
    gc.collect()
    assert kref() is None and cref() is callee      # the callee outlives its caller
    del callee
    gc.collect()
    assert cref() is None
