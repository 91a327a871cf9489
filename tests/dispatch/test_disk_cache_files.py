"""The on-disk cache as numba lays it out and reports it (``cache=True``): one index and one
data file per specialisation in ``__pycache__``, ``kernel.stats`` hits and misses, entries
replaced when the source changes, closures and same-named functions kept apart,
``recompile()``, and kernels that refer to device arrays refused.  Compile-only: kernels are
compiled with ``kernel.compile(sig)``, no GPU needed."""
import importlib
import pickle
import sys

import numpy as np
import pytest

import cujit as cuda
from cujit.dispatch import cache
from cujit.nvvm import libnvvm as nvvm, linker

pytestmark = [pytest.mark.compile,
              pytest.mark.skipif(not (nvvm.nvvm_available() and linker.nvjitlink_available()),
                                 reason="libNVVM or nvJitLink not installed")]

SOURCE = '''
import cujit as cuda

Z = 1

@cuda.jit(cache=True)
def add(r, x):
    r[0] = x + Z

@cuda.jit(cache=True)
def other(r):
    r[0] = 7

def make_closure(c):
    @cuda.jit(cache=True)
    def closure(r):
        r[0] = c
    return closure

closures = [make_closure(v) for v in (3, 5, 7, 9)]

@cuda.jit(cache=True)
def same_name(r):
    r[0] = 2
first_same_name = same_name

@cuda.jit(cache=True)
def same_name(r):
    r[0] = 6
'''

MODNAME = "cujit_cache_files_fodder"
SIG_I = "void(int64[::1], int64)"
SIG_F = "void(float64[::1], float64)"


@pytest.fixture
def fodder(tmp_path, monkeypatch):
    """A function importing the module afresh from ``tmp_path`` (its kernels start with
    nothing compiled); the module's ``__pycache__`` is ``fodder.pycache``."""
    monkeypatch.delenv("CUJIT_CACHE_DIR", raising=False)
    monkeypatch.delenv("NUMBA_CACHE_DIR", raising=False)
    (tmp_path / f"{MODNAME}.py").write_text(SOURCE)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(sys, "dont_write_bytecode", True)

    def load():
        sys.modules.pop(MODNAME, None)
        return importlib.import_module(MODNAME)
    load.pycache = tmp_path / "__pycache__"
    load.path = tmp_path / f"{MODNAME}.py"
    yield load
    sys.modules.pop(MODNAME, None)


def _files(d):
    return sorted(p.name for p in d.glob("*.cj?")) if d.exists() else []


def _counts(d):
    names = _files(d)
    return sum(n.endswith(".cji") for n in names), sum(n.endswith(".cjc") for n in names)


def _total(counter):
    return sum(counter.values())


def test_one_index_per_kernel_one_data_file_per_specialisation(fodder):
    mod = fodder()
    assert _counts(fodder.pycache) == (0, 0)
    mod.add.compile(SIG_I)
    assert _counts(fodder.pycache) == (1, 1)
    mod.add.compile(SIG_F)
    mod.other.compile("void(int64[::1])")
    assert _counts(fodder.pycache) == (2, 3)
    st = mod.add.stats
    assert st.cache_path == str(fodder.pycache)
    assert (_total(st.cache_hits), _total(st.cache_misses)) == (0, 2)


def test_a_fresh_import_hits_and_writes_nothing(fodder):
    mod = fodder()
    ptx = mod.add.compile(SIG_I).ptx
    mod.add.compile(SIG_F)
    mtimes = {p: p.stat().st_mtime_ns for p in fodder.pycache.glob("*.cj?")}
    mod2 = fodder()
    assert mod2 is not mod
    assert mod2.add.compile(SIG_I).ptx == ptx
    assert (_total(mod2.add.stats.cache_hits), _total(mod2.add.stats.cache_misses)) == (1, 0)
    mod2.add.compile(SIG_F)
    assert _total(mod2.add.stats.cache_hits) == 2
    assert {p: p.stat().st_mtime_ns for p in fodder.pycache.glob("*.cj?")} == mtimes


def test_an_edited_source_replaces_the_entries_of_the_old_one(fodder):
    mod = fodder()
    before = mod.add.compile(SIG_I).llvm_ir
    mod.add.compile(SIG_F)
    old = {n for n in _files(fodder.pycache) if n.endswith(".cjc")}
    with open(fodder.path, "a") as f:
        f.write("\nZ = 10\n")
    mod2 = fodder()
    spec = mod2.add.compile(SIG_I)
    assert _total(mod2.add.stats.cache_misses) == 1 and spec.llvm_ir != before
    assert _counts(fodder.pycache) == (1, 1)       # the two old data files are gone
    assert not old & set(_files(fodder.pycache))


def test_closures_of_other_values_are_other_entries(fodder):
    mod = fodder()
    ptxs = [k.compile("void(int64[::1])").ptx for k in mod.closures]
    assert len(set(ptxs)) == 4
    assert _counts(fodder.pycache) == (1, 4)
    mod2 = fodder()
    assert [k.compile("void(int64[::1])").ptx for k in mod2.closures] == ptxs
    assert all(_total(k.stats.cache_hits) == 1 for k in mod2.closures)


def test_functions_of_one_name_are_kept_apart(fodder):
    mod = fodder()
    a = mod.first_same_name.compile("void(int64[::1])").ptx
    b = mod.same_name.compile("void(int64[::1])").ptx
    assert a != b
    assert _counts(fodder.pycache) == (2, 2)
    mod2 = fodder()
    assert mod2.same_name.compile("void(int64[::1])").ptx == b
    assert mod2.first_same_name.compile("void(int64[::1])").ptx == a


def test_recompile_uses_the_globals_now_and_overwrites_the_entry(fodder):
    mod = fodder()
    first = mod.add.compile(SIG_I)
    mod.Z = 10
    assert mod.add.compile(SIG_I) is first          # compiled already: Z is frozen in it
    mod.add.recompile()
    again = mod.add.compile(SIG_I)
    assert again is not first and again.llvm_ir != first.llvm_ir
    assert _counts(fodder.pycache) == (1, 1)
    mod2 = fodder()                                 # Z = 1 in the source again
    assert mod2.add.compile(SIG_I).llvm_ir == again.llvm_ir
    assert _total(mod2.add.stats.cache_hits) == 1


def test_a_kernel_without_cache_has_no_cache_path_and_counts_nothing():
    @cuda.jit
    def k(r):
        r[0] = 1
    k.compile("void(int64[::1])")
    st = k.stats
    assert st.cache_path is None and _total(st.cache_hits) == _total(st.cache_misses) == 0


def test_a_kernel_capturing_a_device_array_cannot_be_cached():
    captured = cuda.to_device(np.arange(3.0))

    @cuda.jit(cache=True)
    def k(out):
        out[0] = captured[0]
    with pytest.raises(pickle.PicklingError, match="global device arrays"):
        k.compile("void(float64[::1])")


def test_the_contents_of_link_files_are_in_the_key(tmp_path):
    f = tmp_path / "lib.ptx"
    f.write_text("// one")

    def kern(r):
        r[0] = 1
    k1 = cache.cache_key(kern, (), {}, (9, 0), (str(f),))
    assert k1 == cache.cache_key(kern, (), {}, (9, 0), (str(f),))
    f.write_text("// two")
    assert cache.cache_key(kern, (), {}, (9, 0), (str(f),)) != k1


def test_a_shared_cache_dir_keeps_same_named_modules_of_two_folders_apart(tmp_path,
                                                                         monkeypatch):
    monkeypatch.setenv("CUJIT_CACHE_DIR", str(tmp_path / "shared"))
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    kernels = []
    for folder, value in (("a", 2), ("b", 3)):
        d = tmp_path / folder
        d.mkdir()
        (d / "samename_fodder.py").write_text(
            f"import cujit as cuda\n\n@cuda.jit(cache=True)\ndef k(r):\n    r[0] = {value}\n")
        monkeypatch.syspath_prepend(str(d))
        sys.modules.pop("samename_fodder", None)
        mod = importlib.import_module("samename_fodder")
        sys.path.remove(str(d))
        kernels.append((d, mod.k.compile("void(int64[::1])").llvm_ir, mod.k.stats.cache_path))
    (da, ir_a, path_a), (db, ir_b, path_b) = kernels
    assert ir_a != ir_b and path_a != path_b
    monkeypatch.syspath_prepend(str(da))           # folder a again: its entry is still there
    sys.modules.pop("samename_fodder", None)
    mod = importlib.import_module("samename_fodder")
    try:
        assert mod.k.compile("void(int64[::1])").llvm_ir == ir_a
        assert _total(mod.k.stats.cache_hits) == 1
    finally:
        sys.modules.pop("samename_fodder", None)


CALLEE = '''
import cujit as cuda

@cuda.jit(device=True)
def inner(x):
    return x + {value}

@cuda.jit(device=True)
def outer(x):
    return inner(x) * 2
'''

CALLER = '''
import cujit as cuda
import cujit_cache_callee_fodder as lib
from cujit_cache_callee_fodder import outer

@cuda.jit(cache=True)
def by_name(r, x):
    r[0] = outer(x)

@cuda.jit(cache=True)
def by_attribute(r, x):
    r[0] = lib.inner(x)
'''


@pytest.mark.parametrize("kernel", ["by_name", "by_attribute"])
def test_an_edited_device_function_in_another_module_is_recompiled(tmp_path, monkeypatch,
                                                                   kernel):
    monkeypatch.delenv("CUJIT_CACHE_DIR", raising=False)
    monkeypatch.delenv("NUMBA_CACHE_DIR", raising=False)
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    monkeypatch.syspath_prepend(str(tmp_path))
    (tmp_path / "cujit_cache_caller_fodder.py").write_text(CALLER)
    names = ("cujit_cache_caller_fodder", "cujit_cache_callee_fodder")

    def load(value):
        # by_name reaches inner through outer: a callee of a callee keys its file too
        (tmp_path / "cujit_cache_callee_fodder.py").write_text(CALLEE.format(value=value))
        for n in names:
            sys.modules.pop(n, None)
        return getattr(importlib.import_module(names[0]), kernel)
    try:
        k1 = load(1)
        ptx1 = k1.compile(SIG_I).ptx
        k2 = load(1)
        assert k2.compile(SIG_I).ptx == ptx1 and _total(k2.stats.cache_hits) == 1
        k3 = load(40)
        ptx3 = k3.compile(SIG_I).ptx
        assert _total(k3.stats.cache_misses) == 1 and _total(k3.stats.cache_hits) == 0
        assert ptx3 != ptx1
    finally:
        for n in names:
            sys.modules.pop(n, None)
