"""cujit's public namespace against numba.cuda 0.30.4's (docs/numba-names.md): every name is
in cujit with numba's meaning, or in the doc's "Not yet in cujit" table with a reason."""
import os
import re
import struct

import numpy as np
import pytest

import cujit
import cujit as cuda

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REFERENCE = os.path.join(ROOT, "tests", "reference", "numba-cuda-0.30.4-names.txt")
SHARED_REFERENCE = os.path.join(os.path.dirname(ROOT), "shared", "reference",
                                "numba-cuda-0.30.4-names.txt")
DOC = os.path.join(ROOT, "docs", "numba-names.md")


def _names(path):
    with open(path) as f:
        return [ln.strip() for ln in f if ln.strip() and not ln.startswith("#")]


def _not_yet():
    """{name: reason} from the doc's 'Not yet in cujit' table."""
    text = open(DOC).read()
    table = text[text.index("## Not yet in cujit"):]
    out = {}
    for row in table.splitlines():
        cells = [c.strip() for c in row.strip().strip("|").split("|")]
        if len(cells) != 2 or set(cells[0]) <= {"-"} or cells[0] == "names":
            continue
        for name in re.findall(r"`([A-Za-z_]\w*)`", cells[0]):
            out[name] = cells[1]
    return out


NAMES = _names(REFERENCE)
NOT_YET = _not_yet()


def test_reference_list_is_numba_cudas_whole_list():
    assert len(NAMES) == len(set(NAMES)) == 275
    if os.path.exists(SHARED_REFERENCE):
        assert _names(SHARED_REFERENCE) == NAMES


def test_every_name_is_in_cujit_or_listed_with_a_reason():
    unexplained = [n for n in NAMES if not hasattr(cujit, n) and n not in NOT_YET]
    assert unexplained == []
    assert all(len(reason) > 20 for reason in NOT_YET.values())


def test_listed_names_are_really_missing_and_numbas():
    # a name that lands must leave the table; the table names only numba.cuda names
    assert sorted(n for n in NOT_YET if hasattr(cujit, n)) == []
    assert sorted(set(NOT_YET) - set(NAMES)) == []


def test_public_names_are_in_all_and_dir():
    present = [n for n in NAMES if n not in NOT_YET]
    assert sorted(set(present) - set(cujit.__all__)) == []
    assert sorted(set(present) - set(dir(cujit))) == []


def test_short_type_names_are_numbas():
    assert (cuda.b1, cuda.bool, cuda.byte) == (cuda.boolean,) * 2 + (cuda.uint8,)
    assert (cuda.i1, cuda.i2, cuda.i4, cuda.i8) == (cuda.int8, cuda.int16, cuda.int32, cuda.int64)
    assert (cuda.u1, cuda.u2, cuda.u4, cuda.u8) == (cuda.uint8, cuda.uint16, cuda.uint32,
                                                    cuda.uint64)
    assert cuda.f4 is cuda.float32 and cuda.f8 is cuda.float64 and cuda.double is cuda.float64
    assert cuda.c8 is cuda.complex64 and cuda.c16 is cuda.complex128
    assert cuda.none is cuda.void


def test_types_module_has_the_short_and_c_names_as_numba_cuda_types():
    import cujit.types as t
    assert (t.f2, t.i1, t.u8, t.c16) == (cuda.float16, cuda.int8, cuda.uint64, cuda.complex128)
    assert t.size_t is cuda.size_t and t.double is cuda.float64
    assert {"f2", "i4", "size_t"} <= set(t.__all__)


def test_types_module_has_numbas_signed_and_unsigned_domains():
    import cujit.types as t
    assert t.signed_domain == {cuda.int8, cuda.int16, cuda.int32, cuda.int64}
    assert t.unsigned_domain == {cuda.uint8, cuda.uint16, cuda.uint32, cuda.uint64}
    assert t.signed_domain | t.unsigned_domain == t.integer_domain


def test_c_type_names_follow_the_platforms_c_sizes():
    def signed(np_type):
        return {1: cuda.int8, 2: cuda.int16, 4: cuda.int32, 8: cuda.int64}[
            np.dtype(np_type).itemsize]
    assert (cuda.char, cuda.short, cuda.intc) == (cuda.int8, cuda.int16, signed(np.intc))
    assert cuda.int_ is cuda.long_ is signed(np.int_)
    assert cuda.longlong is signed(np.longlong)
    assert (cuda.uchar, cuda.ushort) == (cuda.uint8, cuda.uint16)
    assert cuda.uint is cuda.ulong and cuda.uint.dtype.kind == "u"
    assert cuda.uint.dtype.itemsize == np.dtype(np.int_).itemsize
    assert cuda.uintc.dtype.itemsize == struct.calcsize("I")
    assert cuda.ulonglong.dtype.kind == "u" and cuda.ulonglong.dtype.itemsize == 8
    assert cuda.ssize_t.dtype.itemsize == cuda.size_t.dtype.itemsize == struct.calcsize("n")
    assert cuda.ssize_t.dtype.kind == "i" and cuda.size_t.dtype.kind == "u"


def test_short_names_work_in_signatures_and_kernels():
    from cujit.types import parse_signature
    want = cuda.void(cuda.float64[:], cuda.uint64, cuda.float32, cuda.boolean)
    assert parse_signature("void(double[:], size_t, f4, bool)") == want
    assert parse_signature(cuda.void(cuda.f8[:], cuda.size_t, cuda.f4, cuda.b1)) == want
    with pytest.raises(ValueError, match="cannot parse signature 'void\\(doubel"):
        parse_signature("void(doubel[:])")

    @cuda.jit(cuda.void(cuda.f8[::1], cuda.i4))
    def scale(a, k):
        i = cuda.grid(1)
        if i < a.shape[0]:
            a[i] = a[i] * cuda.f8(k) + cuda.f4(0.5)

    a = np.arange(4.0)
    scale[1, 4](a, 3)
    assert a.tolist() == [0.5, 3.5, 6.5, 9.5]


def test_cache_hinted_loads_and_stores_move_numbas_values():
    @cuda.jit
    def hinted(out, a, b):
        i = cuda.grid(1)
        if i < a.shape[0]:
            v = cuda.ldca(a, i) + cuda.ldcg(b, (i, 1)) + cuda.ldcs(a, -1)
            v += cuda.ldlu(a, i) + cuda.ldcv(a, i)
            cuda.stcg(out, i, v)
            cuda.stcs(out, i + 4, v)
            cuda.stwb(out, i + 8, v)
            cuda.stwt(out, i + 12, v)

    a = np.arange(4, dtype=np.float32)
    b = np.arange(8, dtype=np.float32).reshape(4, 2)
    out = np.zeros(16, np.float32)
    hinted[1, 4](out, a, b)
    want = 3 * a + b[:, 1] + a[-1]
    assert out.tolist() == np.tile(want, 4).tolist()


def test_cache_hinted_load_out_of_bounds_is_caught_on_the_simulator():
    if not cuda.config.ENABLE_CUDASIM:
        pytest.skip("bounds checks are the simulator's")
    from cujit.simulator.errors import OutOfBoundsError

    @cuda.jit
    def past_the_end(out, a):
        out[0] = cuda.ldcg(a, 4)

    with pytest.raises(OutOfBoundsError):
        past_the_end[1, 1](np.zeros(1, np.float32), np.zeros(4, np.float32))


@pytest.mark.compile
def test_cache_hinted_kernel_compiles_to_ptx():
    def copy(out, a):
        i = cuda.grid(1)
        cuda.stcg(out, i, cuda.ldcg(a, i))
    ptx, restype = cuda.compile_ptx(copy, "void(float32[::1], float32[::1])")
    assert restype == cuda.void
    assert "ld.global.cg.b32" in ptx and "st.global.cg.b32" in ptx


@pytest.mark.compile
def test_compile_all_gives_a_list_of_one_without_linked_code():
    def add(x, y):
        return x + y
    codes, restype = cuda.compile_all(add, "f4(f4, f4)", output="ptx")
    assert restype == cuda.float32 and len(codes) == 1 and ".visible .func" in codes[0]
    codes, _ = cuda.compile_all(add, "f4(f4, f4)")     # numba's default output: LTO-IR
    assert len(codes) == 1 and isinstance(codes[0], bytes) and codes[0][:4] == b"\xedCN\x7f"
    with pytest.raises(ValueError, match="output must be 'ptx' or 'ltoir'"):
        cuda.compile_all(add, "f4(f4, f4)", output="cubin")


def test_default_cc_names_are_cujits_default_target():
    assert cuda.config_default_cc == cuda.numba_cuda_default_ptx_cc == (9, 0)


def test_kernel_runtime_error_is_numbas():
    e = cuda.KernelRuntimeError("boom", tid=[1, 0, 0], ctaid=[2, 0, 0])
    assert isinstance(e, RuntimeError)
    assert (e.msg, e.tid, e.ctaid) == ("boom", [1, 0, 0], [2, 0, 0])
    assert str(e) == "An exception was raised in thread=[1, 0, 0] block=[2, 0, 0]\n\tboom"


def test_dim3_and_grid_group_are_the_classes_of_the_kernel_objects():
    assert isinstance(cuda.threadIdx, cuda.Dim3) and isinstance(cuda.gridDim, cuda.Dim3)

    @cuda.jit
    def kind(out):
        g = cuda.cg.this_grid()
        out[0] = 1
        g.sync()

    out = np.zeros(1, np.int32)
    kind[1, 1](out)
    assert out[0] == 1
    assert cuda.GridGroup.__name__ == "GridGroup"
    from cujit.kernelapi import this_grid
    with pytest.raises(RuntimeError):
        this_grid()         # only inside a kernel, as the class's one instance


def test_literal_unroll_is_the_identity_on_the_host_and_unrolls_in_kernels():
    t = (1, 2.5)
    assert cuda.literal_unroll(t) is t

    @cuda.jit
    def unrolled(out):
        acc = 0.0
        for v in cuda.literal_unroll((1, 2.5)):
            acc += v
        out[0] = acc

    out = np.zeros(1)
    unrolled[1, 1](out)
    assert out[0] == 3.5


def test_support_queries():
    cc = cuda.get_current_device().compute_capability
    assert cuda.is_fp8_supported() is (cc >= (8, 9))
    assert cuda.cuda_error() is None         # the simulator or a working GPU initialises
    assert cuda.is_supported_version() in (True, False)
    assert cuda.implementation == "cujit"
    import importlib.util
    assert cuda.HAS_NUMBA is (importlib.util.find_spec("numba") is not None)


def test_cuda_error_reports_a_driver_that_fails(monkeypatch):
    from cujit.runtime import device_list

    class NoDriver:
        def get_device_count(self):
            raise cuda.CudaSupportError("no usable CUDA GPU: test")
    monkeypatch.setattr(device_list, "get_driver", lambda: NoDriver())
    assert device_list.cuda_error() == "no usable CUDA GPU: test"


def test_prepare_shape_strides_dtype_is_numbas():
    p = cuda.prepare_shape_strides_dtype
    assert p(5, None, "f4", "C") == ((5,), (4,), np.dtype(np.float32))
    assert p((2, 3), None, np.float64, "F") == ((2, 3), (8, 16), np.dtype(np.float64))
    assert p((2, 3), (), np.float64, "C") == ((2, 3), (24, 8), np.dtype(np.float64))
    assert p((2, 0, 3), None, "i2", "C") == ((2, 0, 3), (0, 6, 2), np.dtype(np.int16))
    assert p(3, 8, "f8", "X") == ((3,), (8,), np.dtype(np.float64))   # strides given
    assert p([2, 2], [16, 8], "f8", "C") == ((2, 2), (16, 8), np.dtype(np.float64))


@pytest.mark.parametrize("args, error, match", [
    ((2.0, None, "f4", "C"), TypeError, "not an integer"),
    ((-1, None, "f4", "C"), ValueError, "negative dimension"),
    (((2, 2), (8,), "f4", "C"), ValueError, "has 1 entries but the shape has 2"),
    (((2, 2), None, "f4", "K"), ValueError, "order must be 'C' or 'F'"),
    ((2, 1.5, "f4", "C"), TypeError, "must be a tuple of ints"),
    ((2, None, "notatype", "C"), TypeError, "not a data type"),
])
def test_prepare_shape_strides_dtype_refuses_bad_input(args, error, match):
    with pytest.raises(error, match=match):
        cuda.prepare_shape_strides_dtype(*args)


def test_private_driver_reaches_raise_numbas_errors():
    from cujit.cudadrv import driver
    with pytest.raises(cuda.CudaSupportError, match="CUDA driver library cannot be found"):
        driver._raise_driver_not_found()
    with pytest.raises(cuda.CudaSupportError, match="error occurred during load:\nlibcuda.so"):
        driver._raise_driver_error("libcuda.so: cannot open")


def test_private_have_nvjitlink_says_whether_nvjitlink_loads():
    from cujit.cudadrv import driver
    from cujit.nvvm.linker import nvjitlink_version
    assert driver._have_nvjitlink() is (nvjitlink_version() is not None)


def test_cudadrv_devices_module():
    from cujit.cudadrv import devices
    assert devices.gpus is cuda.gpus and devices.require_context is cuda.require_context
    ctx = devices.get_context()
    assert ctx is cuda.current_context() and devices.get_context(0) is ctx
    devices.reset()
    assert cuda.current_context() is not ctx
    with pytest.raises((ValueError, IndexError, cuda.CudaSupportError)):
        devices.get_context(99)


def test_short_type_names_are_in_the_types_module_too():
    """``numba.cuda.types.f4`` as well as ``numba.cuda.f4`` (numba.types has both)."""
    import cujit.types as t
    for short, long in [("f4", "float32"), ("f8", "float64"), ("i4", "int32"), ("u1", "uint8"),
                        ("b1", "boolean"), ("c8", "complex64"), ("double", "float64")]:
        assert getattr(t, short) is getattr(cuda, long)
