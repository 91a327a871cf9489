"""CUDA C/C++ → PTX / LTO-IR through NVRTC (the ``nvidia-cuda-nvrtc`` wheel)."""
import pytest

from cujit.nvvm import nvrtc

pytestmark = [pytest.mark.compile,
              pytest.mark.skipif(not nvrtc.nvrtc_available(), reason="NVRTC not installed")]

SRC = 'extern "C" __device__ int twice(int* r, int x) { *r = 2 * x; return 0; }\n'


def test_ptx_for_the_target():
    ptx = nvrtc.compile_cuda(SRC, (9, 0), name="twice.cu").decode()
    assert ".target sm_90" in ptx and ".visible .func" in ptx and "twice" in ptx
    assert nvrtc.nvrtc_version()[0] >= 12


def test_ltoir_for_the_target():
    ltoir = nvrtc.compile_cuda(SRC, (9, 0), lto=True)
    assert isinstance(ltoir, bytes) and ltoir[:4] == b"\xedCN\x7f"     # NVVM's LTO-IR magic


def test_headers_are_found():
    # cuda_fp16.h is not one of NVRTC's built-in headers: the CUDA runtime's include
    # directory (wheel or toolkit) must be passed
    if not nvrtc.include_dirs():
        pytest.skip("no CUDA headers installed")
    src = "#include <cuda_fp16.h>\n#include <cuda/std/cmath>\n" + SRC
    assert b"twice" in nvrtc.compile_cuda(src)


def test_extra_search_paths_setting(tmp_path, monkeypatch):
    (tmp_path / "mine.cuh").write_text("#define SCALE 3\n")
    monkeypatch.setenv("CUJIT_CUDA_NVRTC_EXTRA_SEARCH_PATHS", str(tmp_path))
    assert str(tmp_path) in nvrtc.include_dirs()
    src = ('#include "mine.cuh"\n'
           'extern "C" __device__ int scaled(int* r, int x) { *r = SCALE * x; return 0; }\n')
    assert b"scaled" in nvrtc.compile_cuda(src)


def test_compile_error_has_the_log():
    with pytest.raises(nvrtc.NvrtcError) as ei:
        nvrtc.compile_cuda("this is not C++;", name="broken.cu")
    msg = str(ei.value)
    assert "NVRTC could not compile broken.cu" in msg and "NVRTC_ERROR_COMPILATION" in msg
    assert "broken.cu(1): error" in ei.value.log


def test_without_nvrtc(monkeypatch):
    monkeypatch.setattr(nvrtc, "_state", (None,))
    with pytest.raises(nvrtc.NvrtcError, match="nvidia-cuda-nvrtc"):
        nvrtc.compile_cuda(SRC, name="twice.cu")
    assert not nvrtc.nvrtc_available() and nvrtc.nvrtc_version() is None
