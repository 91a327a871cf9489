"""The NVVM lowering of datetime64/timedelta64 (nvvm/lower_datetime.py) against NumPy: the
kernel's LLVM IR (no GPU intrinsics in it) is compiled for the host CPU with llvmlite's
MCJIT and run on host arrays, so the GPU's arithmetic, NaT rules and unit conversions are
checked without a GPU."""
import ctypes
import re

import numpy as np
import pytest

from cujit import types as T

pytestmark = pytest.mark.compile


def timedeltas(d, e, k, f, out, outf, outi):
    for i in range(d.size):
        out[i, 0] = d[i] * k
        out[i, 1] = f * d[i]
        out[i, 2] = d[i] / k
        out[i, 3] = d[i] % e[i]
        out[i, 4] = -d[i]
        out[i, 5] = d[i] // k
        out[i, 6] = d[i] // f
        outf[i] = d[i] / e[i]
        outi[i] = d[i] // e[i]


def datetimes(dates, dates2, d, cmp, diff, shifted, coarse):
    for i in range(dates.size):
        cmp[i, 0] = dates[i] == dates2[i]
        cmp[i, 1] = dates[i] != dates2[i]
        cmp[i, 2] = dates[i] < dates2[i]
        cmp[i, 3] = dates[i] >= dates2[i]
        cmp[i, 4] = (dates[i] - dates2[i]) > d[i]
        diff[i] = dates[i] - dates2[i]
        shifted[i] = dates[i] + d[i]
        coarse[i] = dates2[i]            # hours stored as days: floored


def _run_on_host(fn, *args):
    llvm = pytest.importorskip("llvmlite.binding")
    from cujit.nvvm.lowering import compile_to_llvm
    sig = tuple(T.typeof(a) for a in args)
    lf = compile_to_llvm(fn, sig)
    text = re.sub(r'target (triple|datalayout) = ".*"', "", lf.llvm_ir)
    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    mod = llvm.parse_assembly(text)
    ee = llvm.create_mcjit_compiler(mod, llvm.Target.from_default_triple()
                                    .create_target_machine())
    ee.finalize_object()
    flat, ctys = [], []
    for a, t in zip(args, sig):
        if isinstance(t, T.Array):
            flat += [a.ctypes.data, *a.shape, *a.strides]
            ctys += [ctypes.c_void_p] + [ctypes.c_int64] * (2 * a.ndim)
        else:
            flat.append(a)
            ctys.append(ctypes.c_double if isinstance(t, T.Float) else ctypes.c_int64)
    ctypes.CFUNCTYPE(None, *ctys)(ee.get_function_address(lf.name))(*flat)
    return ee        # kept alive by the caller until the results are read


def test_timedelta_arithmetic_lowers_as_numpy():
    d = np.array([7, -7, 0, 5, -9, 12], "m8[h]")
    d[3] = np.timedelta64("NaT")
    e = np.array([2, 2, 3, 4, 0, -5], "m8[h]")
    n = d.size
    out, outf, outi = np.zeros((n, 7), "m8[h]"), np.zeros(n), np.zeros(n, np.int64)
    ee = _run_on_host(timedeltas, d, e, 3, 1.5, out, outf, outi)
    with np.errstate(all="ignore"):
        expect = np.stack([d * 3, 1.5 * d, d / 3, d % e, -d, d // 3, d // 1.5], axis=1)
        np.testing.assert_array_equal(out.view("i8"), expect.view("i8"))
        np.testing.assert_array_equal(outf, d / e)
        np.testing.assert_array_equal(outi, d // e)
    del ee


def test_datetime_comparisons_differences_and_units_lower_as_numpy():
    dates = np.array(["2005-02-01", "NaT", "2005-02-03", "2005-01-01", "2005-02-01",
                      "2005-03-01"], "M8[D]")
    dates2 = np.array(["2005-02-01T05", "2005-02-01T00", "2005-02-02T23", "NaT",
                       "2005-02-01T00", "1969-12-31T23"], "M8[h]")
    d = np.array([-5, 1, 0, 3, 0, 48], "m8[h]")
    n = dates.size
    cmp, diff = np.zeros((n, 5), np.bool_), np.zeros(n, "m8[h]")
    shifted, coarse = np.zeros(n, "M8[h]"), np.zeros(n, "M8[D]")
    ee = _run_on_host(datetimes, dates, dates2, d, cmp, diff, shifted, coarse)
    expect = np.stack([dates == dates2, dates != dates2, dates < dates2, dates >= dates2,
                       (dates - dates2) > d], axis=1)
    np.testing.assert_array_equal(cmp, expect)
    np.testing.assert_array_equal(diff.view("i8"), (dates - dates2).view("i8"))
    np.testing.assert_array_equal(shifted.view("i8"), (dates + d).view("i8"))
    np.testing.assert_array_equal(coarse.view("i8"), dates2.astype("M8[D]").view("i8"))
    del ee
