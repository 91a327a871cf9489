"""C pointers on the simulator (``cujit.simulator.pointers``): pointer kernel parameters
given device addresses, ``ffi.from_buffer``, arrays decaying to pointers for declared C
functions' ``sim=`` implementations, cache hints through pointers, and the bounds, null and
alignment checks of pointer accesses."""
import numpy as np
import pytest

import cujit as cuda
from cujit import types as T
from cujit.simulator.errors import OutOfBoundsError
from cujit.simulator.kernel import run_kernel
from cujit.simulator.pointers import SimPointer, from_address

cffi = pytest.importorskip("cffi")
ffi = cffi.FFI()

pytestmark = pytest.mark.sim

ADD_ONE_SIG = T.void(T.CPointer(T.uint8), T.uint32)


def _addr(d, element=0):
    return d.__cuda_array_interface__["data"][0] + element * d.dtype.itemsize


def test_pointer_parameter_indexes_the_device_memory_at_the_address():
    @cuda.jit(ADD_ONE_SIG)
    def add_one(x, n):
        i = cuda.grid(1)
        if i < n:
            x[i] += 1
    d = cuda.to_device(np.array([0, 1, 2, 255, 9], dtype=np.uint8))
    add_one[1, 32](_addr(d), len(d))
    # uint8 arithmetic wraps as on the GPU
    np.testing.assert_array_equal(d.copy_to_host(), [1, 2, 3, 0, 10])


def test_pointer_into_an_allocation_reaches_the_elements_before_it():
    @cuda.jit(T.void(T.CPointer(T.int32), T.CPointer(T.int32)))
    def k(p, out):
        out[0] = p[-2] + p[0] * 10

    d = cuda.to_device(np.array([1, 2, 3, 4], dtype=np.int32))
    out = cuda.device_array(1, np.int32)
    k[1, 1](_addr(d, 2), _addr(out))
    assert out.copy_to_host()[0] == 1 + 30


def test_pointer_index_outside_its_allocation_is_out_of_bounds():
    @cuda.jit(ADD_ONE_SIG)
    def k(x, n):
        x[n] = 1
    d = cuda.device_array(8, np.uint8)
    with pytest.raises(OutOfBoundsError, match=r"index \d+ is out of bounds for x \(uint8\*\)"):
        k[1, 1](_addr(d), 1 << 30)


def test_null_pointer_faults_only_when_dereferenced():
    @cuda.jit(ADD_ONE_SIG)
    def k(x, n):
        if n:
            x[0] = 1
    k[1, 1](0, 0)       # passed, never read: fine
    with pytest.raises(OutOfBoundsError, match=r"x \(uint8\*\) at address 0x0 does not point "
                                               r"into simulated device memory"):
        k[1, 1](0, 1)


def test_misaligned_pointer_parameter_is_the_gpu_fault():
    @cuda.jit(T.void(T.CPointer(T.float32)))
    def k(p):
        p[0] = 1.0
    d = cuda.device_array(4, np.float32)
    with pytest.raises(cuda.CudaAPIError, match=r"kernel argument 'p' is a float32\* pointer "
                                                r"at 0x[0-9a-f]+, which is not a multiple of 4") as e:
        k[1, 1](_addr(d) + 2)
    assert e.value.code == 716


def test_from_buffer_reads_and_writes_the_array():
    @cuda.jit
    def k(a, b):
        p = ffi.from_buffer(a)
        q = ffi.from_buffer(b)
        p[5] = q[0] + 0.5             # a is 2 x 3, C order: element 5 is a[1, 2]
        b[1] = p[5] * 2
    a = np.zeros((2, 3), np.float32)
    b = np.array([1.0, 0.0], np.float64)
    k[1, 1](a, b)
    assert a[1, 2] == 1.5 and b[1] == 3.0


def test_from_buffer_of_a_slice_is_bounded_by_the_slice():
    @cuda.jit
    def k(a, i):
        p = ffi.from_buffer(a[i:])
        p[2] = 7
    a = np.zeros(5, np.int32)
    k[1, 1](a, 2)
    assert a[4] == 7
    with pytest.raises(OutOfBoundsError, match=r"index 2 is out of bounds for "
                                               r"ffi.from_buffer\(a\[i:\]\) \(int32\*\)"):
        k[1, 1](a, 3)


def test_from_buffer_of_shared_and_local_arrays():
    @cuda.jit
    def k(out):
        sm = cuda.shared.array(2, np.int32)
        lm = cuda.local.array(2, np.int32)
        ps = ffi.from_buffer(sm)
        pl = ffi.from_buffer(lm)
        ps[1] = 4
        pl[0] = 5
        out[0] = sm[1] + lm[0]
    out = np.zeros(1, np.int32)
    k[1, 1](out)
    assert out[0] == 9


def test_declared_function_gets_pointers_and_arrays_decay_to_them():
    seen = []

    def sum_impl(p, n):
        seen.append(type(p))
        return sum(float(p[i]) for i in range(n))
    sum_reduce = cuda.declare_device("sum_reduce", "float32(CPointer(float32), int32)",
                                     link=cuda.CUSource("/* not compiled on the simulator */"),
                                     sim=sum_impl)

    def mutate(p):
        p[0] = p[1]
    mutator = cuda.declare_device("array_mutator", T.void(T.CPointer(T.int32)), sim=mutate)

    @cuda.jit
    def k(r, x, y):
        r[0] = sum_reduce(ffi.from_buffer(x), len(x))
        r[1] = sum_reduce(x, 3)         # an array for the pointer: its data pointer
        mutator(y)
    r = np.zeros(2, np.float32)
    y = np.array([0, 1], np.int32)
    k[1, 1](r, np.arange(10, dtype=np.float32), y)
    assert list(r) == [45.0, 3.0] and seen == [SimPointer, SimPointer]
    assert list(y) == [1, 1]


def test_declared_function_without_implementation_still_names_itself():
    f = cuda.declare_device("use_ptr", "void(CPointer(int32))")

    @cuda.jit
    def k(a):
        f(ffi.from_buffer(a))
    with pytest.raises(NotImplementedError, match="use_ptr has no Python implementation"):
        k[1, 1](np.zeros(2, np.int32))


def test_cache_hints_through_pointers():
    @cuda.jit(T.void(T.CPointer(T.float32), T.CPointer(T.float32), T.int32))
    def k(dst, src, n):
        i = cuda.grid(1)
        if i < n:
            cuda.stcs(dst, i, cuda.ldcg(src, i) * 2)
    a = cuda.to_device(np.arange(40, dtype=np.float32))
    b = cuda.device_array(40, np.float32)
    k[2, 32](_addr(b), _addr(a), 40)
    np.testing.assert_array_equal(b.copy_to_host(), np.arange(40, dtype=np.float32) * 2)


def test_pointer_values_type_as_their_pointer_type():
    p = SimPointer(np.zeros(3, np.float32), 0, T.CPointer(T.float32))
    assert T.typeof(p) is T.CPointer(T.float32)
    with pytest.raises(TypeError, match="takes one integer index"):
        p["a"]
    v = SimPointer(None, 0, T.voidptr, 0x10, "v")
    with pytest.raises(TypeError, match="v is a void\\* pointer: it cannot be indexed"):
        v[0]


def test_each_pointer_type_is_typed_on_its_own():
    @cuda.jit
    def k(p, v):
        p[0] = v
    a = cuda.device_array(1, np.int32)
    b = cuda.device_array(1, np.float64)
    # the simulator's pointer values given directly, an int32* first, then a float64*: each
    # pointer type gets its own typing (an int32 typing would store 2.5 as 2)
    run_kernel(k.sim_kernel, (1, 1, 1), (1, 1, 1), 0, 0,
               [from_address(_addr(a), T.CPointer(T.int32), "p"), np.int32(3)])
    run_kernel(k.sim_kernel, (1, 1, 1), (1, 1, 1), 0, 0,
               [from_address(_addr(b), T.CPointer(T.float64), "p"), np.float64(2.5)])
    assert a.copy_to_host()[0] == 3 and b.copy_to_host()[0] == 2.5


def test_an_address_for_two_declared_pointer_types_is_ambiguous():
    @cuda.jit([T.void(T.CPointer(T.int32)), T.void(T.CPointer(T.float64))])
    def k(p):
        p[0] = 1
    with pytest.raises(TypeError, match="Ambiguous overloading"):
        k[1, 1](_addr(cuda.device_array(1, np.int32)))


def test_carray_and_farray_view_the_pointer_memory():
    @cuda.jit(T.void(T.CPointer(T.int32), T.int32, T.int32, T.int64[::1]))
    def k(p, n, m, strides):
        c = cuda.carray(p, (n, m))
        f = cuda.farray(p, (n, m))
        c[1, 0] = 5          # element 1 * m
        f[1, 0] += 7          # element 1
        strides[0] = c.strides[0]
        strides[1] = f.strides[1]
    d = cuda.to_device(np.zeros(6, np.int32))
    s = np.zeros(2, np.int64)
    k[1, 1](int(d.gpu_data.device_pointer), 2, 3, s)
    np.testing.assert_array_equal(d.copy_to_host(), [0, 7, 0, 5, 0, 0])
    assert list(s) == [12, 8]
    with pytest.raises(OutOfBoundsError, match=r"an array of shape \(3, 3\) \(9 elements\) "
                                               r"over p \(int32\*\) is out of bounds: the "
                                               r"pointer reaches 6 element"):
        k[1, 1](int(d.gpu_data.device_pointer), 3, 3, s)


def test_carray_of_a_void_pointer_takes_the_dtype_given():
    @cuda.jit(T.void(T.voidptr, T.int32))
    def k(p, n):
        x = cuda.carray(p, n, dtype=np.float32)
        x[n - 1] = 2.5
    d = cuda.to_device(np.zeros(4, np.float32))
    k[1, 1](_addr(d), 4)
    assert d.copy_to_host()[3] == 2.5


def test_carray_elements_are_bounds_checked():
    @cuda.jit(T.void(T.CPointer(T.float32), T.int32))
    def k(p, i):
        x = cuda.carray(p, 2)
        x[i] = 1.0
    d = cuda.to_device(np.zeros(4, np.float32))
    with pytest.raises(OutOfBoundsError):
        k[1, 1](_addr(d), 2)


def test_carray_outside_a_kernel_needs_a_pointer():
    with pytest.raises(TypeError, match=r"carray\(\) takes a C pointer"):
        cuda.carray(np.zeros(2), 2)


def test_accesses_through_from_buffer_are_race_checked():
    from cujit.simulator.errors import DataRaceError

    @cuda.jit
    def k(a):
        p = ffi.from_buffer(a)
        p[0] = cuda.threadIdx.x         # every thread writes element 0: a race
    with pytest.raises(DataRaceError):
        k[1, 4](np.zeros(4, np.int32))


def test_shared_memory_races_through_a_pointer_are_reported():
    from cujit.simulator.errors import DataRaceError

    @cuda.jit
    def k(out):
        sm = cuda.shared.array(4, np.int32)
        p = ffi.from_buffer(sm)
        p[cuda.threadIdx.x] = 1
        out[cuda.threadIdx.x] = p[(cuda.threadIdx.x + 1) % 4]   # no barrier between
    with pytest.raises(DataRaceError):
        k[1, 4](np.zeros(4, np.int32))


def test_accesses_through_a_pointer_parameter_are_race_checked():
    from cujit.simulator.errors import DataRaceError

    @cuda.jit(T.void(T.CPointer(T.int32)))
    def k(p):
        p[0] = cuda.threadIdx.x + cuda.blockIdx.x * 4      # every thread writes element 0
    d = cuda.device_array(4, np.int32)
    with pytest.raises(DataRaceError):
        k[2, 4](_addr(d))
