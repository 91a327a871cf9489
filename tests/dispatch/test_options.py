"""jit options of issue 14 reach the compiled code and the cache key: ``lineinfo``/``debug``
give ``.loc`` line directives in the PTX, ``inline="always"`` inlines device functions and
``forceinline`` marks them ``alwaysinline``, and each option changes the on-disk cache key."""
import re

import numpy as np
import pytest

import cujit as cuda
from cujit import types as T
from cujit.dispatch.dispatcher import Dispatcher
from cujit.nvvm.lowering import compile_to_llvm

pytestmark = pytest.mark.compile


def divide(r, a, b):
    i = cuda.grid(1)
    if i < r.size:
        r[i] = a[i] / b[i]


SIG = (T.float64[::1],) * 3
DIV_LINE = divide.__code__.co_firstlineno + 3


def _loc_lines(ptx):
    return {int(m.group(1)) for m in re.finditer(r"\.loc\s+\d+\s+(\d+)\s+\d+", ptx)}


@pytest.mark.parametrize("opts", [{"lineinfo": True}, {"debug": True, "opt": False}])
def test_line_directives_name_the_source_lines(opts):
    spec = Dispatcher(divide, None, dict(opts)).compile(SIG)
    assert ".file" in spec.ptx
    assert DIV_LINE in _loc_lines(spec.ptx)
    assert f"line: {DIV_LINE}, scope" in spec.llvm_ir


def test_no_line_directives_by_default():
    spec = Dispatcher(divide, None, {}).compile(SIG)
    assert ".loc" not in spec.ptx and "DILocation" not in spec.llvm_ir


def test_lineinfo_is_directives_only_and_debug_full():
    assert "DebugDirectivesOnly" in compile_to_llvm(divide, SIG, lineinfo=True).llvm_ir
    assert "FullDebug" in compile_to_llvm(divide, SIG, debug=True).llvm_ir


def test_lineinfo_has_no_dwarf_sections():
    ptx = Dispatcher(divide, None, {"lineinfo": True}).compile(SIG).ptx
    assert ".loc" in ptx and not re.search(r"\.section\s+\.debug_info", ptx)


@cuda.jit(lineinfo=True)
def bump_first(x):
    x[0] += 1


def bumps(x):
    x[0] = 1
    bump_first(x)


def test_lineinfo_marks_inlined_device_function_code():
    """numba-cuda's test_lineinfo_in_device_function: the callee's lines appear in the
    kernel as ``.loc ... inlined_at`` and no device function is left in the PTX."""
    ptx = Dispatcher(bumps, None, {"lineinfo": True}).compile((T.int32[::1],)).ptx
    line = bump_first.py_func.__code__.co_firstlineno + 2     # decorator, def, body
    assert re.search(rf"\.loc\s+\d+\s+{line}\s+\d+, function_name .*, inlined_at", ptx)
    assert not re.search(r"^\.weak\s+\.func", ptx, re.M)


@cuda.jit(device=True, inline="always")
def inc_always(x):
    return x + 1


@cuda.jit(device=True, forceinline=True)
def inc_force(x):
    return x + 1


@cuda.jit(device=True)
def inc_plain(x):
    return x + 1


def uses_inline(r):
    r[0] = inc_always(r[0]) + inc_force(r[1]) + inc_plain(r[2])


def test_inline_options_reach_the_ir():
    """inline="always" lowers the callee into the caller (no definition of its own);
    forceinline marks its definition alwaysinline (tests/nvvm/test_inline_options.py)."""
    ir_text = compile_to_llvm(uses_inline, (T.float64[::1],)).llvm_ir
    defs = [ln for ln in ir_text.splitlines() if ln.startswith("define internal")]
    marked = [d for d in defs if "alwaysinline" in d]
    assert len(defs) == 2 and len(marked) == 1
    assert "inc_force" in marked[0] and not any("inc_always" in d for d in defs)


@pytest.mark.parametrize("opt", ["debug", "lineinfo", "fastmath", "inline", "max_registers"])
def test_options_change_the_cache_key(opt):
    from cujit.dispatch.cache import cache_key
    base = {"debug": None, "opt": None, "lineinfo": None, "fastmath": None,
            "max_registers": None, "inline": None, "link": ()}
    other = dict(base, **{opt: 32 if opt == "max_registers" else True})
    k1 = cache_key(divide, SIG, base, (9, 0))
    k2 = cache_key(divide, SIG, other, (9, 0))
    assert k1 is not None and k1 != k2


def test_dispatcher_cache_key_options_include_inline(monkeypatch):
    from cujit.dispatch import cache as cache_mod
    seen = []
    real = cache_mod.cache_key

    def spy(pyfunc, argtypes, options, cc, links=()):
        seen.append(dict(options))
        return real(pyfunc, argtypes, options, cc, links)
    monkeypatch.setattr(cache_mod, "cache_key", spy)
    d = Dispatcher(divide, None, {"cache": True, "inline": "always", "lineinfo": True})
    d._disk.load = lambda key: None
    d._disk.save = lambda key, entry: True
    d.compile(SIG)
    assert seen and seen[0]["inline"] == "always" and seen[0]["lineinfo"] is True


def test_a_specialisation_gives_its_llvm_and_ptx():
    """numba-cuda's ``kernel.overloads[sig].inspect_asm(cc)`` (test_lineinfo)."""
    d = Dispatcher(divide, None, {"lineinfo": True})
    spec = d.compile(SIG)
    assert spec.inspect_llvm() == spec.llvm_ir and "define" in spec.llvm_ir
    assert spec.inspect_asm() == spec.inspect_asm(spec.cc) == spec.ptx
    assert f".target sm_{spec.cc[0]}{spec.cc[1]}" in spec.inspect_asm(spec.cc)
    with pytest.raises(ValueError, match=r"compiled for compute capability .* not \(5, 2\)"):
        spec.inspect_asm((5, 2))


@pytest.mark.compile
def test_dump_settings_print_the_ir_and_ptx_of_a_compiled_kernel(capsys):
    from cujit.nvvm import libnvvm as nvvm
    if not nvvm.nvvm_available():
        pytest.skip("libNVVM not installed")

    def dumped(**settings):
        def simple_dump(a, b):
            i = cuda.grid(1)
            b[i] = a[i] + 1.5
        for k, v in settings.items():
            setattr(cuda.config, k, v)
        try:
            cuda.jit(simple_dump).compile("void(float64[::1], float64[::1])")
        finally:
            for k in settings:
                delattr(cuda.config, k)
        return capsys.readouterr().out
    out = dumped(DUMP_LLVM=True)
    assert "LLVM DUMP simple_dump" in out and '!"kernel", i32 1' in out
    assert "ASSEMBLY" not in out
    out = dumped(DUMP_ASSEMBLY=True)
    assert "ASSEMBLY simple_dump" in out and ".visible .entry" in out and "LLVM DUMP" not in out
    assert dumped() == ""
