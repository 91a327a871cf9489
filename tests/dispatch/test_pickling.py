"""Pickling kernels, device functions and launch configurations (numba-cuda pickles its
dispatchers): by name when their module binds them, else with the function by value; the
unpickled kernel compiles afresh and runs."""
import multiprocessing
import pickle
import sys
import textwrap

import numpy as np
import pytest

import cujit as cuda
from cujit.dispatch.serialize import find_by_name, reduce_function


@cuda.jit
def module_kernel(a):
    a[0] += 1


def _local_kernel(step):
    @cuda.jit(device=True)
    def inner(a):
        return a + step

    @cuda.jit
    def foo(arr):
        arr[0] = inner(arr[0]) + np.int64(0)
    return foo


def test_a_local_kernel_round_trips_by_value_twice():
    foo = _local_kernel(2)
    arr = np.array([100])
    foo[1, 1](arr)
    again = pickle.loads(pickle.dumps(foo))
    assert again is not foo and again.py_func is not foo.py_func
    again[1, 1](arr)
    twice = pickle.loads(pickle.dumps(again))
    twice[1, 1](arr)
    assert arr[0] == 106
    assert twice.__qualname__ == foo.__qualname__


def test_declared_signatures_and_specialisation_survive_pickling():
    k = cuda.jit("void(int64[:])")(_local_kernel(1).py_func)
    back = pickle.loads(pickle.dumps(k))
    assert back.signatures == k.signatures and back.specialized
    arr = np.array([5])
    back[1, 1](arr)
    assert arr[0] == 6


def test_a_module_level_kernel_pickles_by_name():
    assert pickle.loads(pickle.dumps(module_kernel)) is module_kernel


def test_a_launch_configuration_round_trips_with_its_dimensions():
    foo = _local_kernel(1)
    cfg = pickle.loads(pickle.dumps(foo[(5, 2), 8]))
    assert (cfg.griddim, cfg.blockdim) == ((5, 2, 1), (8, 1, 1))
    arr = np.array([0])
    pickle.loads(pickle.dumps(foo[1, 1]))(arr)
    assert arr[0] == 1


def test_a_launch_configuration_on_a_stream_is_refused():
    with pytest.raises(pickle.PicklingError, match="its stream belongs to this process"):
        pickle.dumps(module_kernel[1, 1, cuda.stream()])


def test_a_capture_not_yet_assigned_is_a_pickling_error():
    def make():
        @cuda.jit
        def k(a):
            a[0] = later
        with pytest.raises(pickle.PicklingError, match="not assigned yet"):
            pickle.dumps(k)
        later = 1
        return later
    make()


def test_functions_found_by_name_go_by_reference_others_by_value():
    assert reduce_function(textwrap.dedent) is textwrap.dedent
    fn, args = reduce_function(module_kernel.py_func)      # its name is bound to the kernel
    rebuilt = fn(*args)
    assert rebuilt.__code__ == module_kernel.py_func.__code__
    assert find_by_name(__name__, "module_kernel") is module_kernel
    assert find_by_name(__name__, "_local_kernel.<locals>.foo") is None
    assert find_by_name("no_such_module_here", "x") is None


MODULE = '''
import cujit as cuda

@cuda.jit
def add_one(a):
    a[0] += 1

def run(x):
    return launch(add_one, x)

def launch(kernel, x):
    import numpy as np
    a = np.array([x])
    kernel[1, 1](a)
    return int(a[0])
'''


def test_a_kernel_goes_to_spawned_worker_processes(tmp_path, monkeypatch):
    (tmp_path / "pickled_kernel_fodder.py").write_text(MODULE)
    monkeypatch.syspath_prepend(str(tmp_path))
    import pickled_kernel_fodder as mod
    try:
        with multiprocessing.get_context("spawn").Pool(1) as pool:
            assert pool.map(mod.run, [1, 2]) == [2, 3]
            # the kernel itself as an argument: by name, the worker imports its module
            assert pool.apply(mod.launch, (mod.add_one, 4)) == 5
    finally:
        sys.modules.pop("pickled_kernel_fodder", None)


def test_a_local_cuda_ufunc_round_trips_by_value():
    @cuda.vectorize(["int64(int64)", "float64(float64)"], target="cuda")
    def twice(x):
        return x * 2
    ary = np.arange(10, dtype=np.int64)
    back = pickle.loads(pickle.dumps(pickle.loads(pickle.dumps(twice))))
    np.testing.assert_equal(back(ary), ary * 2)
    assert back.types == twice.types
