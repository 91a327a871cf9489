"""``print`` in a kernel showed Python's text on the simulator (``1.5``,
``(1+2j)``, ``3.14`` for a float32) but vprintf's on a GPU (``1.500000``,
``(1.000000+2.000000j)``, ``3.140000``, as numba.cuda), so a program's output changed with the
backend.  The simulator now writes the compiled kernel's text; this test runs on whichever
backend the process has (capfd: vprintf writes to file descriptor 1)."""
import re

import numpy as np
import pytest

import cujit as cuda


@cuda.jit
def _show(x, c, h):
    i = cuda.threadIdx.x
    print("thread", i, x[i], x[i] > 1, c, h, np.float32(3.14), -0.0, 2 ** 40, "50%")


@cuda.jit
def _show_uint(u):
    print(u, np.uint64(18446744073709551615))


def _lines(capfd):
    cuda.synchronize()
    return sorted(capfd.readouterr().out.splitlines())


def test_kernel_print_writes_vprintf_text(capfd):
    _show[1, 2](np.array([1.0, 2.5]), 1 + 2j, np.float16(1.5))
    assert _lines(capfd) == [
        "thread 0 1.000000 False (1.000000+2.000000j) 1.500000 3.140000 -0.000000 "
        "1099511627776 50%",
        "thread 1 2.500000 True (1.000000+2.000000j) 1.500000 3.140000 -0.000000 "
        "1099511627776 50%",
    ]


def test_kernel_print_of_unsigned_and_special_floats(capfd):
    _show_uint[1, 1](np.uint32(7))
    assert _lines(capfd) == ["7 18446744073709551615"]


@cuda.jit
def _show_special(x):
    print(x[0], x[1], x[2])


def test_kernel_print_nan_and_inf(capfd):
    _show_special[1, 1](np.array([np.nan, np.inf, -np.inf]))
    out = _lines(capfd)
    assert len(out) == 1
    # printf spells these "nan"/"inf" (a GPU may print "-nan" for a NaN with the sign set)
    assert out[0].split()[1:] == ["inf", "-inf"] and out[0].split()[0].lstrip("-") == "nan"


@pytest.mark.compile
def test_format_strings_live_in_constant_memory():
    from cujit.nvvm import libnvvm as nvvm
    from cujit.dispatch.dispatcher import compile_ptx
    if not nvvm.nvvm_available():
        pytest.skip("libNVVM not installed")

    def fmt(val, to_print):
        if to_print:
            print(val)
    ptx, _ = compile_ptx(fmt, "void(int64, boolean)")
    # numba's placement: the kernel's CONST_SIZE_BYTES counts them (b'%lld\n\0': 6 bytes)
    assert re.search(r"\.const \.align 1 \.b8 _cujit_str_\d+\[6\] = \{37, 108, 108, 100, 10\}", ptx)
    assert "cvta.const.u64" in ptx


@pytest.mark.gpu
def test_format_strings_count_in_the_kernels_constant_memory():
    @cuda.jit
    def fmt(val, to_print):
        if to_print:
            print(val)
    fmt[1, 1](1, False)
    fmt[1, 1](1.0, False)
    sizes = fmt.get_const_mem_size()
    assert min(sizes.values()) >= 4 and len(sizes) == 2
