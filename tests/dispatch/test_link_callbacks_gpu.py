"""On the GPU: setup/teardown callbacks of linked code (numba-cuda's ``setup_callback=`` /
``teardown_callback=``) get a cuda.core ``ObjectCode`` whose ``handle`` is the kernel's
``CUlibrary``, once per module and context; a setup can initialise the linked code's globals
(cuLibraryGetGlobal) before the first launch; ``Context.create_module_ptx`` gives functions
that ``cuda.core.launch`` runs."""
import threading

import numpy as np
import pytest

import cujit as cuda

pytestmark = pytest.mark.gpu
core = pytest.importorskip("cuda.core")
drv_api = pytest.importorskip("cuda.bindings.driver")

GLOBAL_NUM = """
__device__ int num = 0;
extern "C" __device__ int get_num(int &retval) {
    retval = num;
    return 0;
}
"""


class Seen:
    """Counts live modules by their library handle, as a setup/teardown pair sees them."""

    def __init__(self):
        self.live, self.setups, self.teardowns, self.most = set(), [], [], 0
        self.lock = threading.Lock()

    def setup(self, oc):
        assert isinstance(oc, core.ObjectCode)
        with self.lock:
            self.live.add(int(oc.handle))
            self.setups.append(int(oc.handle))
            self.most = max(self.most, len(self.live))

    def teardown(self, oc):
        assert isinstance(oc, core.ObjectCode)
        with self.lock:
            self.live.remove(int(oc.handle))
            self.teardowns.append(int(oc.handle))

    def code(self, src=""):
        return cuda.CUSource(src, setup_callback=self.setup, teardown_callback=self.teardown)


def test_setup_once_per_module_and_teardown_at_reset():
    seen = Seen()

    @cuda.jit(link=[seen.code()])
    def k(x):
        pass

    k[1, 1](1)
    k[1, 1](2)                  # the same module
    assert len(seen.setups) == 1
    k[1, 1](1.5)                # a second specialisation: a second module
    assert len(seen.setups) == 2 and len(set(seen.setups)) == 2
    cuda.current_context().reset()
    assert seen.live == set() and sorted(seen.teardowns) == sorted(seen.setups)
    k[1, 1](3)                  # loaded again after the reset: set up again
    assert len(seen.setups) == 3
    cuda.current_context().reset()
    assert seen.live == set()


def test_two_kernels_linking_one_code_get_a_module_each():
    seen = Seen()
    lib = seen.code()

    @cuda.jit(link=[lib])
    def a():
        pass

    @cuda.jit(link=[lib])
    def b():
        pass

    a[1, 1]()
    b[1, 1]()
    assert len(set(seen.setups)) == 2
    cuda.current_context().reset()
    assert seen.live == set()


def test_threads_launching_one_kernel_share_one_module():
    seen = Seen()

    @cuda.jit(link=[seen.code()])
    def k(x):
        pass

    def run():
        k[1, 1](1)
        k[1, 1](2.5)

    threads = [threading.Thread(target=run) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(seen.setups) == 2 and seen.most == 2
    cuda.current_context().reset()
    assert seen.live == set()


def _set_forty_two(oc):
    err, ptr, size = drv_api.cuLibraryGetGlobal(oc.handle, b"num")
    assert err == drv_api.CUresult.CUDA_SUCCESS and size == 4
    value = np.array([42], np.int32)
    (err,) = drv_api.cuMemcpyHtoD(ptr, value.ctypes.data, size)
    assert err == drv_api.CUresult.CUDA_SUCCESS


@pytest.mark.parametrize("where", ["declare_device", "jit"])
def test_a_setup_initialises_the_linked_codes_global(where):
    lib = cuda.CUSource(GLOBAL_NUM, setup_callback=_set_forty_two)
    if where == "declare_device":
        get_num = cuda.declare_device("get_num", "int32()", link=[lib])
        opts = {}
    else:
        get_num = cuda.declare_device("get_num", "int32()")
        opts = {"link": [lib]}

    @cuda.jit(**opts)
    def k(out):
        out[0] = get_num()

    out = np.zeros(1, np.int32)
    k[1, 1](out)
    assert out[0] == 42


PTX = """
.version 8.0
.target sm_90
.address_size 64

.visible .entry store_tid(.param .u64 out)
{
    .reg .b32 %r<2>;
    .reg .b64 %rd<5>;
    ld.param.u64 %rd1, [out];
    cvta.to.global.u64 %rd2, %rd1;
    mov.u32 %r1, %tid.x;
    mul.wide.u32 %rd3, %r1, 4;
    add.s64 %rd4, %rd2, %rd3;
    st.global.u32 [%rd4], %r1;
    ret;
}
"""


def test_create_module_ptx_gives_functions_cuda_core_launches():
    ctx = cuda.current_context()
    module = ctx.create_module_ptx(PTX)
    fn = module.get_function("store_tid")
    assert isinstance(fn.kernel, core.Kernel) and fn.handle == int(fn) != 0
    out = cuda.device_array(64, np.uint32)
    cfg = core.LaunchConfig(grid=1, block=64)
    stream = core.Stream.from_handle(0)
    core.launch(stream, cfg, fn.kernel, np.uint64(out.__cuda_array_interface__["data"][0]))
    cuda.synchronize()
    assert out.copy_to_host().tolist() == list(range(64))
    module.unload()


def test_create_module_ptx_refuses_bad_ptx():
    # with CUDA's lazy loading (the default) the driver may take the image and report it at
    # the first kernel looked up in it
    with pytest.raises(cuda.CudaAPIError):
        library = cuda.current_context().create_module_ptx("this is not PTX")
        library.get_function("store_tid")
