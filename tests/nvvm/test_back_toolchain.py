"""libNVVM / llvmlite → PTX and nvJitLink → cubin on hand-written NVVM IR (no GPU needed)."""
import os

import pytest

from cujit.nvvm import libnvvm as nvvm, linker
from cujit.frontend.errors import CompileError

import _back_ir as ir

pytestmark = pytest.mark.compile

needs_nvvm = pytest.mark.skipif(not nvvm.nvvm_available(), reason="libNVVM not installed")
needs_link = pytest.mark.skipif(not linker.nvjitlink_available(), reason="nvJitLink not installed")


@needs_nvvm
def test_nvvm_ptx_has_entry_and_isa_9():
    ptx = nvvm.compile_ptx(ir.scale_kernel(), (9, 0))
    assert ".visible .entry scale(" in ptx
    assert ".target sm_90" in ptx
    assert ".version 9.0" in ptx           # libNVVM 13.0: PTX ISA 9.0, what driver 580 reads
    header = ptx.split(".entry scale(")[1].split(")")[0]
    assert header.count(".param") == 4       # data, shape[0], strides[0], a


@needs_nvvm
def test_nvvm_links_libdevice_only_when_used():
    plain = nvvm.compile_ptx(ir.scale_kernel(use_sin=False))
    with_sin = nvvm.compile_ptx(ir.scale_kernel(use_sin=True))
    assert "__nv_sinf" not in plain
    # sinf is inlined from libdevice: its range-reduction table appears, no call remains
    assert "__cudart_i2opi_f" in with_sin and "__cudart_i2opi_f" not in plain
    assert "__nv_sinf" not in with_sin


@needs_nvvm
def test_nvvm_shared_and_barrier():
    ptx = nvvm.compile_ptx(ir.shared_kernel(nbytes=4096))
    assert ".shared .align 4 .b8 smem_buf[4096]" in ptx
    assert "bar.sync" in ptx and "st.shared.f32" in ptx and "ld.shared.f32" in ptx


@needs_nvvm
def test_nvvm_error_has_log():
    with pytest.raises(nvvm.NvvmError) as ei:
        nvvm.compile_ptx(ir.HEADER + "define void @bad( {\n" + ir.VERSION)
    assert isinstance(ei.value, CompileError)
    assert "libNVVM could not compile" in str(ei.value)
    assert ei.value.log                        # the parser's message is kept


@needs_nvvm
def test_nvvm_options():
    assert nvvm._options("compute_90", 3, True, False, True) == [
        "-arch=compute_90", "-opt=3", "-ftz=1", "-prec-sqrt=0", "-prec-div=0", "-fma=1",
        "-generate-line-info"]
    assert nvvm._options("compute_80", False, False, True, True)[1:] == ["-opt=0", "-g"]
    fast = nvvm.compile_ptx(ir.scale_kernel(), (9, 0), fastmath=True)
    assert "mul.ftz.f32" in fast or "mul.rn.ftz.f32" in fast


def test_arch_names():
    assert nvvm.arch_option((9, 0)) == "compute_90"
    assert nvvm.arch_option("sm_86") == "compute_86"
    assert linker.sm_option((12, 0)) == "sm_120"
    assert linker.sm_option("compute_90") == "sm_90"


def test_llvmlite_fallback(monkeypatch):
    monkeypatch.setenv("CUJIT_NVVM_BACKEND", "llvmlite")
    monkeypatch.setattr(nvvm, "_nvvm_state", None)
    assert nvvm.backend_name() == "llvmlite"
    ptx = nvvm.compile_ptx(ir.scale_kernel(use_sin=True), (9, 0))
    assert ".visible .entry scale(" in ptx
    assert ".target sm_90" in ptx
    # libdevice was linked, internalised and inlined: no other function is left in the PTX
    assert "__nv_sinf" not in ptx and ".func" not in ptx and "__cudart_i2opi_f" in ptx
    ptx2 = nvvm.compile_ptx(ir.shared_kernel(), (9, 0))
    assert "bar.sync" in ptx2 and ".shared" in ptx2
    with pytest.raises(nvvm.NvvmError, match="llvmlite"):
        nvvm.compile_ptx(ir.HEADER + "define void @bad( {\n")
    monkeypatch.setattr(nvvm, "_nvvm_state", None)


def test_nvvm_forced_but_absent(monkeypatch):
    monkeypatch.setenv("CUJIT_NVVM_BACKEND", "nvvm")
    monkeypatch.setattr(nvvm, "_nvvm_state", (None, "libNVVM is not available: test"))
    with pytest.raises(nvvm.NvvmError, match="forbids llvmlite"):
        nvvm.compile_ptx(ir.scale_kernel())
    monkeypatch.setattr(nvvm, "_nvvm_state", None)


def test_libdevice_found():
    path = nvvm.libdevice_path()
    assert path.endswith(".bc") and os.path.getsize(path) > 100_000


@needs_nvvm
@needs_link
def test_cubin_is_sm90_elf():
    ptx = nvvm.compile_ptx(ir.scale_kernel(use_sin=True), (9, 0))
    cubin = linker.link_cubin(ptx, (9, 0))
    assert cubin[:4] == b"\x7fELF"
    assert b"scale" in cubin
    # e_flags of a CUDA ELF carry the SM number (0x5a = 90): bits 8-15 in the CUDA 12.8+ ELF
    # ABI, the low byte in the older one
    import struct
    e_flags = struct.unpack_from("<I", cubin, 48)[0]
    assert 90 in ((e_flags >> 8) & 0xFF, e_flags & 0xFF)
    assert struct.unpack_from("<H", cubin, 18)[0] == 190     # e_machine EM_CUDA


@needs_link
def test_link_error_has_log():
    with pytest.raises(linker.LinkerError) as ei:
        linker.link_cubin(".version 9.0\n.target sm_90\n.address_size 64\nnot ptx at all\n")
    assert isinstance(ei.value, CompileError)
    assert "nvJitLink could not link" in str(ei.value)


@needs_link
def test_link_rejects_unknown_file_kind(tmp_path):
    with pytest.raises(ValueError, match="extension"):
        linker.link_cubin(".version 9.0\n", files=[str(tmp_path / "x.txt")])


@needs_nvvm
@needs_link
def test_link_extra_ptx_file(tmp_path):
    extra = tmp_path / "extra.ptx"
    extra.write_text(nvvm.compile_ptx(ir.scale_kernel("other")))
    cubin = linker.link_cubin(nvvm.compile_ptx(ir.scale_kernel()), (9, 0), files=[str(extra)])
    assert b"other" in cubin and b"scale" in cubin


def test_link_without_nvjitlink(monkeypatch):
    monkeypatch.setattr(linker, "_state", (None,))
    assert not linker.nvjitlink_available()
    with pytest.raises(linker.LinkerError, match="not available"):
        linker.link_cubin("x")
    monkeypatch.setattr(linker, "_state", None)


@pytest.mark.parametrize("drv, isa", [(13000, (9, 0)), (12080, (8, 8)), (12040, (8, 4)),
                                      (11080, (7, 8)), (13010, (9, 1))])
def test_driver_ptx_isa(drv, isa):
    assert linker.driver_ptx_isa(drv) == isa


def test_fit_ptx_version():
    ptx = "//\n.version 9.1\n.target sm_90\n"
    assert linker.fit_ptx_version(ptx, 13000).startswith(b"//\n.version 9.0\n")
    assert linker.fit_ptx_version(ptx, 12040) == b"//\n.version 8.4\n.target sm_90\n"
    old = b".version 8.0\n.target sm_90\n"
    assert linker.fit_ptx_version(old, 13000) == old
    assert linker.fit_ptx_version(b"no version", 13000) == b"no version"


def test_nvvm_and_linker_errors_are_one_compile_error_class_with_log():
    from cujit.frontend.errors import CompileError
    assert nvvm.NvvmError is linker.LinkerError
    e = linker.LinkerError("could not link k", log="ptxas: error")
    assert isinstance(e, CompileError) and e.log == "ptxas: error"
    assert str(e) == "could not link k\nptxas: error"


def test_a_malformed_nvvm_backend_fails_the_compile(monkeypatch):
    # read at every compile (was: anything but "llvmlite"/"nvvm" silently meant the default)
    monkeypatch.setenv("CUJIT_NVVM_BACKEND", "garbage")
    with pytest.raises(ValueError, match="CUJIT_NVVM_BACKEND='garbage'.*llvmlite or nvvm"):
        nvvm.compile_ptx(ir.scale_kernel(), (9, 0))
