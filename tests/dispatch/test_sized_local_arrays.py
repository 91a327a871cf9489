"""Local and shared arrays sized by a kernel argument (a cujit extension, numba #6549): the
kernel is specialised on that argument's value, compiled once per value."""
import re

import numpy as np
import pytest

import cujit as cuda
from cujit.frontend.calls.recognised import LOCAL_LIMIT


@cuda.jit
def prefix_sums(out, n):
    tmp = cuda.local.array(n, cuda.float32)
    i = cuda.grid(1)
    for j in range(n):
        tmp[j] = j * i
    s = 0.0
    for j in range(n):
        s += tmp[j]
    out[i] = s


def _expected(n, threads=4):
    return np.array([sum(j * i for j in range(n)) for i in range(threads)], np.float32)


def test_each_value_gets_its_own_specialisation():
    d = cuda.to_device(np.zeros(4, np.float32))
    for n in (3, 5, 3, 1):
        prefix_sums[1, 4](d, n)
        np.testing.assert_array_equal(d.copy_to_host(), _expected(n))
    sizes = sorted(sig[1].value for sig in prefix_sums.signatures)
    assert sizes == [1, 3, 5]
    assert all(str(sig[1]) == f"Literal[int]({sig[1].value})" for sig in prefix_sums.signatures)


def test_numpy_integer_values_size_too():
    d = cuda.to_device(np.zeros(4, np.float32))
    prefix_sums[1, 4](d, np.int32(4))
    np.testing.assert_array_equal(d.copy_to_host(), _expected(4))


@cuda.jit
def block_reverse(x, n):
    buf = cuda.shared.array((n, 2), cuda.int64)
    t = cuda.threadIdx.x
    buf[t, 0] = x[t]
    cuda.syncthreads()
    x[t] = buf[n - 1 - t, 0]


def test_shared_array_with_a_tuple_shape_from_an_argument():
    for n in (8, 16):
        d = cuda.to_device(np.arange(n, dtype=np.int64))
        block_reverse[1, n](d, n)
        np.testing.assert_array_equal(d.copy_to_host(), np.arange(n)[::-1])


@pytest.mark.parametrize("bad", [2.5, True, np.float64(3.0)])
def test_non_integer_size_is_typeerror_naming_the_parameter(bad):
    d = cuda.to_device(np.zeros(4, np.float32))
    with pytest.raises(TypeError, match=r"argument 1 \('n'\) of kernel prefix_sums gives the "
                                        r"shape of a local or shared array, so it must be an "
                                        r"integer"):
        prefix_sums[1, 4](d, bad)
    np.testing.assert_array_equal(d.copy_to_host(), np.zeros(4))


def test_size_over_the_local_memory_limit_is_compileerror_naming_the_value():
    n = LOCAL_LIMIT // 4 + 1
    d = cuda.to_device(np.zeros(4, np.float32))
    with pytest.raises(cuda.CompileError, match=rf"from kernel argument\(s\) n={n}.*more "
                                                r"than the device's local memory per thread "
                                                rf"\({LOCAL_LIMIT} bytes, 512 KiB\)"):
        prefix_sums[1, 4](d, n)
    assert all(sig[1].value != n for sig in prefix_sums.signatures)


def test_a_reassigned_parameter_does_not_size_arrays():
    @cuda.jit
    def k(out, n):
        n = n + 1
        tmp = cuda.local.array(n, cuda.float32)
        out[0] = tmp.size
    with pytest.raises(cuda.TypingError, match="compile-time constant"):
        k[1, 1](cuda.to_device(np.zeros(1, np.float32)), 3)


def test_declared_signature_compiles_per_value_at_launch():
    @cuda.jit("void(float32[:], int64)")
    def k(out, n):
        tmp = cuda.local.array(n, cuda.float32)
        tmp[n - 1] = n
        out[0] = tmp[n - 1]
    d = cuda.to_device(np.zeros(1, np.float32))
    k[1, 1](d, 6)
    assert d.copy_to_host()[0] == 6


def test_sizing_parameters_are_found_in_the_source():
    from cujit.frontend.source import FunctionSource

    def k(a, n, m, unused):
        x = cuda.local.array((n, 3), cuda.float32)
        y = cuda.shared.array(shape=m, dtype=cuda.int32)
        a[0] = x[0, 0] + y[0]
    assert FunctionSource.from_pyfunc(k).sizing_params() == frozenset({1, 2})


def test_an_array_read_through_an_attribute_does_not_size_arrays():
    from cujit.frontend.source import FunctionSource

    def k(a, x, n):
        t = cuda.local.array((x.shape[0], n), cuda.float32)
        s = cuda.shared.array(x.size, cuda.float32)
        a[0] = t[0, 0] + s[0]
    assert FunctionSource.from_pyfunc(k).sizing_params() == frozenset({2})


def _shape_from_first_dim(x):
    s = cuda.shared.array(x.shape[0], cuda.float32)
    s[0] = 1
    x[0, 0] = s[0]


def _shape_from_size(x):
    s = cuda.local.array(x.size, cuda.float32)
    s[0] = 1
    x[0, 0] = s[0]


def _shape_from_a_tuple_with_a_dim(x):
    s = cuda.shared.array((2, x.shape[1]), cuda.float32)
    s[0, 0] = 1
    x[0, 0] = s[0, 0]


@pytest.mark.parametrize("pyfunc, what, read", [
    (_shape_from_first_dim, "shared", r"x\.shape\[0\]"),
    (_shape_from_size, "local", r"x\.size"),
    (_shape_from_a_tuple_with_a_dim, "shared", r"x\.shape\[1\]")])
def test_shape_from_an_array_attribute_is_typingerror_at_the_call(pyfunc, what, read):
    k = cuda.jit(pyfunc)
    d = cuda.to_device(np.full((4, 3), 12345.0, np.float32))
    with pytest.raises(cuda.TypingError) as ei:
        k[1, 1](d)
    msg = str(ei.value)
    assert re.search(rf"the shape of {what}\.array must be a compile-time constant or an "
                     rf"integer argument; .* '{read}' is an attribute of the array 'x', read at "
                     r"run time", msg), msg
    assert "cuda." + what + ".array(" in msg     # the source line of the call
    assert "12345" not in msg and "ndarray" not in msg
    np.testing.assert_array_equal(d.copy_to_host(), np.full((4, 3), 12345.0))


@pytest.mark.compile
def test_each_value_compiles_its_own_local_depot():
    d = cuda.to_device(np.zeros(4, np.float32))
    src = cuda.to_device(np.arange(40, dtype=np.float32))

    @cuda.jit
    def k(out, src, n):
        tmp = cuda.local.array(n, cuda.float32)
        i = cuda.grid(1)
        for j in range(n):
            tmp[j] = src[j] + i
        out[i] = tmp[(i * 7) % n]
    k[1, 4](d, src, 3)
    k[1, 4](d, src, 40)
    ptx = {sig[2].value: text for sig, text in k.inspect_asm().items()}
    depots = {n: re.findall(r"__local_depot\d+\[(\d+)\]", text) for n, text in ptx.items()}
    assert depots[3] == ["12"] and depots[40] == ["160"]


@pytest.mark.gpu
def test_fast_path_tells_the_values_apart():
    """Warm launches alternate between two values: each must run its own specialisation
    (the fast path guards the value, not only the type)."""
    d = cuda.to_device(np.zeros(4, np.float32))
    for _ in range(5):
        for n in (2, 6):
            prefix_sums[1, 4](d, n)
            np.testing.assert_array_equal(d.copy_to_host(), _expected(n))
