"""External device functions (``cuda.declare_device``) linked from CUDA C/C++, PTX and
LTO-IR: typing, the two ABIs in the PTX, the link step (NVRTC + nvJitLink, compile-only
here), LTO, ``abi_info`` names, ``compile_all``, errors; and launches on a GPU."""
import numpy as np
import pytest

import cujit as cuda
from cujit import types as T
from cujit.nvvm import linker, nvrtc
from cujit.dispatch.build import build_kernel
from cujit.frontend.errors import ToolchainError, TypingError

needs_tools = pytest.mark.skipif(
    not (linker.nvjitlink_available() and nvrtc.nvrtc_available()),
    reason="nvJitLink or NVRTC not installed")

MUL_CU = r'''
extern "C" __device__ int mul_f32_f32(float* return_value, float x, float y)
{
    *return_value = x * y;
    return 0;
}
'''
ADD_CU = 'extern "C" __device__ float add_c(float x, float y) { return x + y; }\n'
FUNCS_CU = MUL_CU + ADD_CU

F32 = T.float32[::1]


def _build(kernel, argtypes):
    return build_kernel(kernel.py_func, tuple(argtypes), kernel.targetoptions)


@pytest.fixture
def funcs_cu(tmp_path):
    p = tmp_path / "functions.cu"
    p.write_text(FUNCS_CU)
    return str(p)


# ---- declarations ------------------------------------------------------------------------
@pytest.mark.parametrize("args, kw, exc, text", [
    (("not a name", "float32(float32)"), {}, ValueError, "C identifier"),
    (("f", "(float32,)"), {}, TypeError, "Return type must be given"),
    (("f", "float32(UniTuple(float32, 2))"), {}, TypeError, "parameter type UniTuple"),
    (("f", "float32[:](float32)"), {}, TypeError, "return type array"),
    (("f", "float32(float32)"), {"abi": "fortran"}, NotImplementedError, "unsupported ABI"),
    (("f", "float32(float32)"), {"link": [3]}, TypeError, "link entries must be"),
    (("f", "float32(float32)"), {"sim": 3}, TypeError, "sim must be a Python function"),
])
def test_declare_device_errors(args, kw, exc, text):
    with pytest.raises(exc, match=text.replace("[", r"\[")):
        cuda.declare_device(*args, **kw)


def test_declaration_holds_what_was_declared(funcs_cu):
    mul = cuda.declare_device("mul_f32_f32", "float32(float32, float32)", link=funcs_cu)
    assert mul.name == "mul_f32_f32" and mul.abi == "numba" and mul.link == (funcs_cu,)
    assert mul.sig.return_type is T.float32 and mul.sig.args == (T.float32, T.float32)
    with pytest.raises(NotImplementedError, match="mul_f32_f32 has no Python implementation"):
        mul(1.0, 2.0)
    mul.simulator(lambda x, y: x * y)
    assert mul(2.0, 3.0) == 6.0
    with pytest.raises(TypeError, match="simulator\\(\\) takes a function"):
        mul.simulator(None)


@pytest.mark.compile
def test_call_with_wrong_arguments_is_typing_error():
    f = cuda.declare_device("ext_f", "float32(float32, float32)")

    def few(r):
        r[0] = f(1.0)

    def array_arg(r):
        r[0] = f(r, 1.0)
    with pytest.raises(TypingError, match=r"takes 2 argument\(s\), the call passes 1"):
        cuda.compile_ptx(few, "void(float32[::1])")
    with pytest.raises(TypingError, match="cannot be passed as float32"):
        cuda.compile_ptx(array_arg, "void(float32[::1])")

    def keyword(r):
        r[0] = f(1.0, y=2.0)
    with pytest.raises(TypingError, match="takes no keyword arguments"):
        cuda.compile_ptx(keyword, "void(float32[::1])")


@pytest.mark.compile
def test_one_symbol_declared_with_two_signatures_is_compile_error():
    f32 = cuda.declare_device("same_name", "float32(float32)")
    i32 = cuda.declare_device("same_name", "int32(int32)")

    def k(r, s):
        r[0] = f32(r[0])
        s[0] = i32(s[0])
    with pytest.raises(cuda.CompileError, match="same_name is declared twice"):
        cuda.compile_ptx(k, "void(float32[::1], int32[::1])")


# ---- PTX: the two ABIs ---------------------------------------------------------------------
@pytest.mark.compile
def test_ptx_declares_and_calls_both_abis():
    mul = cuda.declare_device("mul_f32_f32", "float32(float32, float32)")
    add = cuda.declare_device("add_c", "float32(float32, float32)", abi="c")

    def k(r, x, y):
        r[0] = mul(x[0], y[0]) + add(x[0], y[0])
    ptx, _ = cuda.compile_ptx(k, "void(float32[::1], float32[::1], float32[::1])")
    # numba ABI: an int status, a pointer to the result, then the arguments
    assert ".extern .func  (.param .b32 func_retval0) mul_f32_f32\n(\n\t.param .b64" in ptx
    # C ABI: the float result returned directly
    assert (".extern .func  (.param .b32 func_retval0) add_c\n(\n\t.param .b32 add_c_param_0,"
            in ptx)
    assert "call.uni" in ptx and ptx.count("mul_f32_f32") >= 2


# ---- linking ---------------------------------------------------------------------------------
@needs_tools
@pytest.mark.compile
def test_kernel_links_a_cu_file_of_the_declaration(funcs_cu):
    mul = cuda.declare_device("mul_f32_f32", "float32(float32, float32)", link=funcs_cu)

    @cuda.jit
    def k(r, x, y):
        i = cuda.grid(1)
        if i < len(r):
            r[i] = mul(x[i], y[i])
    spec = _build(k, (F32, F32, F32))
    assert spec.cubin[:4] == b"\x7fELF" and spec.needs_cubin
    assert spec.link_files == (funcs_cu,)


@needs_tools
@pytest.mark.compile
def test_kernel_link_option_gives_the_code_once(funcs_cu):
    mul = cuda.declare_device("mul_f32_f32", "float32(float32, float32)", link=funcs_cu)

    @cuda.jit(link=[funcs_cu])        # the same file from both places: linked once
    def k(r, x, y):
        r[0] = mul(x[0], y[0])
    spec = _build(k, (F32, F32, F32))
    assert spec.cubin[:4] == b"\x7fELF" and len(spec.link_files) == 1


@needs_tools
@pytest.mark.compile
def test_device_function_link_goes_with_its_callers(funcs_cu):
    mul = cuda.declare_device("mul_f32_f32", "float32(float32, float32)")

    @cuda.jit(device=True, link=[funcs_cu])
    def square(x):
        return mul(x, x)

    @cuda.jit(link=[funcs_cu])
    def k(r):
        r[0] = square(r[0]) + square(r[1])
    spec = _build(k, (F32,))
    assert spec.cubin[:4] == b"\x7fELF" and spec.link_files == (funcs_cu,)

    @cuda.jit
    def k2(r):
        r[0] = square(r[0])
    assert _build(k2, (F32,)).link_files == (funcs_cu,)


@needs_tools
@pytest.mark.compile
def test_kernel_links_a_cusource_object():
    add = cuda.declare_device("add_c", "float32(float32, float32)", abi="c",
                              link=cuda.CUSource(FUNCS_CU, name="funcs.cu"))

    @cuda.jit
    def k(r, x, y):
        r[0] = add(x[0], y[0])
    assert _build(k, (F32, F32, F32)).cubin[:4] == b"\x7fELF"


@needs_tools
@pytest.mark.compile
def test_kernel_links_ptx_text():
    ptx = nvrtc.compile_cuda(FUNCS_CU, (9, 0)).decode()
    mul = cuda.declare_device("mul_f32_f32", "float32(float32, float32)")

    @cuda.jit(link=[cuda.PTXSource(ptx, name="funcs.ptx")])
    def k(r, x, y):
        r[0] = mul(x[0], y[0])
    assert _build(k, (F32, F32, F32)).cubin[:4] == b"\x7fELF"


@needs_tools
@pytest.mark.compile
def test_kernel_links_a_cubin_object_and_becomes_cooperative():
    from cuda.bindings import nvrtc as nv
    err, prog = nv.nvrtcCreateProgram(FUNCS_CU.encode(), b"funcs.cu", 0, [], [])
    assert not int(nv.nvrtcCompileProgram(prog, 2, [b"-arch=sm_90", b"-rdc=true"])[0])
    _, n = nv.nvrtcGetCUBINSize(prog)
    cubin = b" " * n
    nv.nvrtcGetCUBIN(prog, cubin)
    nv.nvrtcDestroyProgram(prog)
    mul = cuda.declare_device("mul_f32_f32", "float32(float32, float32)",
                              link=cuda.Cubin(cubin, name="funcs.cubin"), use_cooperative=True)

    @cuda.jit
    def k(r, x, y):
        r[0] = mul(x[0], y[0])
    spec = _build(k, (F32, F32, F32))
    assert spec.cubin[:4] == b"\x7fELF" and spec.cooperative


@needs_tools
@pytest.mark.compile
def test_missing_function_is_linker_error_with_log():
    absent = cuda.declare_device("not_defined_anywhere", "int32(int32)")

    @cuda.jit
    def k(r):
        r[0] = absent(r[0])
    with pytest.raises(linker.LinkerError) as ei:
        _build(k, (T.int32[::1],))
    assert "nvJitLink could not link" in str(ei.value)
    assert "not_defined_anywhere" in ei.value.log


@needs_tools
@pytest.mark.compile
def test_cuda_compile_error_names_the_source():
    bad = cuda.declare_device("f", "int32(int32)", link=cuda.CUSource("int f( {", name="bad.cu"))

    @cuda.jit
    def k(r):
        r[0] = bad(r[0])
    with pytest.raises(nvrtc.NvrtcError, match="NVRTC could not compile bad.cu") as ei:
        _build(k, (T.int32[::1],))
    assert "bad.cu(1): error" in ei.value.log


# ---- LTO ---------------------------------------------------------------------------------------
@needs_tools
@pytest.mark.compile
def test_lto_links_ltoir_and_shows_the_optimised_ptx(funcs_cu):
    mul = cuda.declare_device("mul_f32_f32", "float32(float32, float32)", link=funcs_cu)

    @cuda.jit(lto=True)
    def k(r, x, y):
        r[0] = mul(x[0], y[0])
    spec = _build(k, (F32, F32, F32))
    assert spec.ltoir[:4] == b"\xedCN\x7f" and spec.cubin[:4] == b"\x7fELF"
    ptx = linker.link_cubin(spec.ltoir, (9, 0), files=spec.link_files, ltoir=True,
                            output="ptx")
    # optimised across the two modules: the C++ function is inlined into the kernel
    assert ".entry" in ptx and "mul.f32" in ptx and "call" not in ptx.split(".entry")[1]


@needs_tools
@pytest.mark.compile
def test_lto_with_an_ltoir_object():
    ltoir = nvrtc.compile_cuda(FUNCS_CU, (9, 0), lto=True)
    add = cuda.declare_device("add_c", "float32(float32, float32)", abi="c",
                              link=cuda.LTOIR(ltoir, name="funcs.ltoir"))

    @cuda.jit(lto=True)
    def k(r, x, y):
        r[0] = add(x[0], y[0])
    assert _build(k, (F32, F32, F32)).cubin[:4] == b"\x7fELF"


@needs_tools
@pytest.mark.compile
def test_inspect_lto_ptx_of_a_compiled_signature(funcs_cu):
    mul = cuda.declare_device("mul_f32_f32", "float32(float32, float32)", link=funcs_cu)

    @cuda.jit(lto=True)
    def k(r, x, y):
        r[0] = mul(x[0], y[0])
    k.compile((F32, F32, F32))
    ptx = k.inspect_lto_ptx((F32, F32, F32))
    assert ".entry" in ptx and "mul.f32" in ptx
    assert list(k.inspect_lto_ptx()) == [(F32, F32, F32)]
    with pytest.raises(KeyError, match="no compiled signature"):
        k.inspect_lto_ptx((T.float64[::1],) * 3)


def test_inspect_lto_ptx_needs_lto():
    @cuda.jit
    def k(r):
        r[0] = 1
    with pytest.raises(ValueError, match="lto=True"):
        k.inspect_lto_ptx()


def test_link_cubin_output_must_be_cubin_or_ptx():
    with pytest.raises(ValueError, match="output must be 'cubin' or 'ptx'"):
        linker.link_cubin("", output="sass")


# ---- compile(): abi_info, LTO-IR, compile_all -------------------------------------------------
@pytest.mark.compile
def test_abi_info_names_the_c_function():
    def scale(x):
        return 2.0 * x
    ptx, rt = cuda.compile(scale, "float32(float32)", device=True, abi="c",
                           abi_info={"abi_name": "my_scale"})
    assert rt is T.float32 and ".visible .func  (.param .b32 func_retval0) my_scale(" in ptx


@needs_tools
@pytest.mark.compile
def test_python_device_function_links_into_cuda_cpp():
    def scale(x):
        return 2.0 * x
    ptx, _ = cuda.compile(scale, "float32(float32)", device=True, abi="c",
                          abi_info={"abi_name": "py_scale"})
    caller = cuda.CUSource('extern "C" __device__ float py_scale(float);\n'
                           'extern "C" __device__ float scale_twice(float x)'
                           ' { return py_scale(py_scale(x)); }\n', name="caller.cu")
    twice = cuda.declare_device("scale_twice", "float32(float32)", abi="c", link=caller)

    @cuda.jit(link=[cuda.PTXSource(ptx, name="py_scale.ptx")])
    def k(r):
        r[0] = twice(r[0])
    assert _build(k, (F32,)).cubin[:4] == b"\x7fELF"


def test_ltoir_output_needs_libnvvm(monkeypatch):
    from cujit.nvvm import libnvvm as nvvm
    monkeypatch.setattr(nvvm, "_nvvm_state", (None, "libNVVM is not available: test"))
    with pytest.raises(nvvm.NvvmError, match="LTO-IR for m needs libNVVM"):
        nvvm.compile_ptx("", (9, 0), lto=True, name="m")


@pytest.mark.compile
def test_compile_ltoir_output():
    def add(x, y):
        return x + y
    ltoir, rt = cuda.compile(add, "float32(float32, float32)", output="ltoir")
    assert rt is T.float32 and isinstance(ltoir, bytes) and ltoir[:4] == b"\xedCN\x7f"


@needs_tools
@pytest.mark.compile
def test_compile_all_returns_the_linked_code(funcs_cu):
    mul = cuda.declare_device("mul_f32_f32", "float32(float32, float32)", link=funcs_cu)
    raw = cuda.PTXSource("// some ptx", name="extra.ptx")
    add = cuda.declare_device("add_c", "float32(float32, float32)", abi="c", link=raw)

    def f(x, y):
        return mul(x, y) + add(x, y)
    codes, rt = cuda.compile_all(f, "float32(float32, float32)", device=True)
    assert rt is T.float32 and len(codes) == 3
    assert all(c[:4] == b"\xedCN\x7f" for c in codes[:2]) and codes[2] == "// some ptx"
    codes, _ = cuda.compile_all(f, "float32(float32, float32)", device=True, output="ptx")
    assert ".visible .func" in codes[0] and "mul_f32_f32" in codes[1]


# ---- on a GPU --------------------------------------------------------------------------------
@pytest.mark.gpu
def test_gpu_kernel_calls_cuda_cpp(tmp_path):
    mul_cu = tmp_path / "mul.cu"
    mul_cu.write_text(MUL_CU)
    mul = cuda.declare_device("mul_f32_f32", "float32(float32, float32)", link=str(mul_cu))
    add = cuda.declare_device("add_c", "float32(float32, float32)", abi="c",
                              link=cuda.CUSource(ADD_CU, name="add.cu"))

    @cuda.jit
    def k(r, x, y):
        i = cuda.grid(1)
        if i < len(r):
            r[i] = mul(x[i], y[i]) + add(x[i], y[i])
    rng = np.random.default_rng(1)
    x, y = rng.random(64, dtype=np.float32), rng.random(64, dtype=np.float32)
    r = np.zeros_like(x)
    k[2, 32](r, x, y)
    np.testing.assert_allclose(r, x * y + (x + y), rtol=1e-6)


@pytest.mark.gpu
def test_gpu_lto_kernel_gives_the_same_values(funcs_cu):
    mul = cuda.declare_device("mul_f32_f32", "float32(float32, float32)", link=funcs_cu)

    @cuda.jit(lto=True)
    def k(r, x, y):
        i = cuda.grid(1)
        if i < len(r):
            r[i] = mul(x[i], y[i])
    x = np.arange(32, dtype=np.float32)
    r = np.zeros_like(x)
    k[1, 32](r, x, x)
    np.testing.assert_array_equal(r, x * x)
    (ptx,) = k.inspect_lto_ptx().values()
    assert ".entry" in ptx


@pytest.mark.gpu
def test_gpu_python_device_function_called_from_cuda_cpp():
    def scale(x):
        return 2.0 * x
    ptx, _ = cuda.compile(scale, "float32(float32)", device=True, abi="c",
                          abi_info={"abi_name": "py_scale_gpu"})
    caller = cuda.CUSource('extern "C" __device__ float py_scale_gpu(float);\n'
                           'extern "C" __device__ float scale4(float x)'
                           ' { return py_scale_gpu(py_scale_gpu(x)); }\n')
    four = cuda.declare_device("scale4", "float32(float32)", abi="c", link=caller)

    @cuda.jit(link=[cuda.PTXSource(ptx)])
    def k(r):
        r[0] = four(r[0])
    r = np.array([1.5], dtype=np.float32)
    k[1, 1](r)
    assert r[0] == 6.0



# numba-cuda's test_device_arch_specific: CUDA C using an instruction of sm_90a only
TENSORMAP_CU = r'''
extern "C" __device__
int set_descriptor(int *out, int* smem) {
    unsigned usmem = __cvta_generic_to_shared(smem);
    asm volatile("tensormap.replace.tile.rank.shared::cta.b1024.b32 [%0], 2;" :: "r"(usmem));
    return 0;
}
'''


def _tensormap_kernel():
    set_descriptor = cuda.declare_device("set_descriptor", "int32(CPointer(int32))",
                                         link=[cuda.CUSource(TENSORMAP_CU)])

    @cuda.jit
    def k(a):
        sm = cuda.shared.array(1, dtype=np.int32)
        set_descriptor(sm)
        sm[0] = 2
        cuda.syncthreads()
        a[0] = sm[0]
    return k


@needs_tools
@pytest.mark.compile
def test_kernels_for_a_device_of_cc_9_or_more_use_its_arch_specific_target():
    from cujit.dispatch.build import target
    cc, ordinal = target()
    if ordinal is None or cc < (9, 0):
        pytest.skip("needs a (simulated) device of compute capability 9.0 or higher")
    spec = _build(_tensormap_kernel(), (T.int32[::1],))
    assert spec.cc == cc[:2] + ("a",)
    assert f".target sm_{cc[0]}{cc[1]}a" in spec.ptx
    assert spec.cubin[:4] == b"\x7fELF"


@needs_tools
@pytest.mark.compile
def test_force_cuda_cc_sets_the_target_of_kernels():
    from cujit.config import config
    try:
        config.FORCE_CUDA_CC = (8, 0)
        spec = _build(_kernel_plain(), (T.int32[::1],))
        assert spec.cc == (8, 0) and ".target sm_80" in spec.ptx
        with pytest.raises(ToolchainError, match="'tensormap.replace' not supported on "
                                                 ".target 'sm_80'"):
            _build(_tensormap_kernel(), (T.int32[::1],))
    finally:
        del config.FORCE_CUDA_CC


def _kernel_plain():
    @cuda.jit
    def k(a):
        a[0] = 2
    return k


@pytest.mark.compile
def test_force_cuda_cc_is_the_default_cc_of_compile_ptx_and_an_explicit_cc_wins():
    from cujit.config import config

    def k(a):
        a[0] = 2
    try:
        config.FORCE_CUDA_CC = (8, 6)
        assert ".target sm_86" in cuda.compile_ptx(k, "void(int32[::1])")[0]
        assert ".target sm_90a" in cuda.compile_ptx(k, "void(int32[::1])", cc=(9, 0, "a"))[0]
    finally:
        del config.FORCE_CUDA_CC
    assert ".target sm_90\n" in cuda.compile_ptx(k, "void(int32[::1])")[0]
