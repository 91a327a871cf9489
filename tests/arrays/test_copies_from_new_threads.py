"""Device-array copies made from a thread that never used cujit (a ThreadPoolExecutor
worker, a threading.Thread) make the calling thread's context current first, as numba's
``require_context`` does (numba-cuda's test_multithreads ``test_invalid_context_error_with_*``):
on a GPU such a copy otherwise fails with CUDA_ERROR_INVALID_CONTEXT."""
import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np

import cujit as cuda
from cujit.driver import get_driver


def _in_new_thread(fn):
    box = {}

    def run():
        box["before"] = get_driver().ctx_get_current()
        try:
            box["value"] = fn()
        except BaseException as e:      # re-raised in the test's thread
            box["error"] = e
        box["after"] = get_driver().ctx_get_current()
    t = threading.Thread(target=run)
    t.start()
    t.join()
    if "error" in box:
        raise box["error"]
    return box


def test_copy_to_host_from_a_new_thread_binds_the_context():
    d = cuda.to_device(np.arange(1, 4))
    box = _in_new_thread(d.copy_to_host)
    assert box["before"] == 0
    assert box["after"] == cuda.current_context().handle
    np.testing.assert_array_equal(box["value"], [1, 2, 3])


def test_device_to_device_and_element_copies_from_a_new_thread():
    src = cuda.to_device(np.arange(100))
    dst = cuda.to_device(np.zeros(100, np.int64))

    def work():
        dst.copy_to_device(src)
        dst[3] = -1
        return int(dst[4])
    box = _in_new_thread(work)
    assert box["value"] == 4 and box["after"] == cuda.current_context().handle
    expected = np.arange(100)
    expected[3] = -1
    np.testing.assert_array_equal(dst.copy_to_host(), expected)


def test_copy_to_host_in_an_executor_worker():
    arr = np.arange(1, 4)
    out = np.zeros_like(arr)

    def d2h(a):
        out[:] = a.copy_to_host()
    with ThreadPoolExecutor() as exe:
        exe.submit(d2h, cuda.to_device(arr)).result()
    np.testing.assert_array_equal(out, arr)


def test_a_bound_thread_keeps_its_binding():
    ctx = cuda.current_context()
    d = cuda.to_device(np.arange(3))
    with ctx.as_current():
        before = get_driver().ctx_get_current()
        d.copy_to_host()
        assert get_driver().ctx_get_current() == before == ctx.handle
