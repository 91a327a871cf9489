"""``jit(inline=...)`` and ``jit(forceinline=...)`` as numba-cuda gives them meaning:
``inline="always"`` (or True) inlines each call into the caller before LLVM, so the caller's
IR holds no call and no ``alwaysinline``; ``"never"`` (or False, the default) leaves a call;
``forceinline=True`` gives the callee's definition LLVM's ``alwaysinline`` attribute and
leaves the call to NVVM.  Compile-only checks of the IR, the inlined code run on the host
(MCJIT), values on the active backend, and the option errors."""
import re

import numpy as np
import pytest

import cujit as cuda
from cujit import types as T
from cujit.frontend.jitoptions import check_inline, inline_always
from cujit.nvvm.lowering import compile_to_llvm

_CALL = re.compile(r"call [a-zA-Z0-9]* @")
SIG = (T.int32[::1],)


def _caller(inline=None, forceinline=None, device=False):
    opts = {}
    if inline is not None:
        opts["inline"] = inline
    if forceinline is not None:
        opts["forceinline"] = forceinline

    @cuda.jit(device=device, **opts)
    def set_zero(a):
        a[0] = 0

    def call_set_zero(a):
        set_zero(a)
    return call_set_zero


@pytest.mark.compile
@pytest.mark.parametrize("inline, inlined", [("always", True), (True, True),
                                             ("never", False), (False, False)])
@pytest.mark.parametrize("device", [False, True])
def test_inline_option_decides_whether_a_call_is_left(inline, inlined, device):
    ir_text = compile_to_llvm(_caller(inline=inline, device=device), SIG).llvm_ir
    assert (_CALL.search(ir_text) is None) == inlined
    assert "alwaysinline" not in ir_text


@pytest.mark.compile
@pytest.mark.parametrize("force", [True, False])
def test_forceinline_marks_the_definition_and_keeps_the_call(force):
    ir_text = compile_to_llvm(_caller(forceinline=force), SIG).llvm_ir
    assert _CALL.search(ir_text) is not None
    callee = re.search(r"define.*[^_]set_zero.*", ir_text).group()
    assert ("alwaysinline" in callee) == force
    kernel = re.search(r"define.*call_set_zero.*", ir_text).group()
    assert "alwaysinline" not in kernel


@cuda.jit(inline="always")
def classify(x, limit):
    # several returns, one inside a loop: each leaves the inlined body
    for k in range(limit):
        if x < k:
            return k
    if x == limit:
        return -1
    return -2


@cuda.jit(device=True, inline="always")
def bump(a, i):
    a[i] += 1          # no return value


@cuda.jit(device=True, inline="always")
def twice(x):
    return classify(x, 3) * 2      # an inlined function inlining another


def k_inlined(r, a):
    for i in range(r.size):
        r[i] = classify(i - 1, 2) + twice(i)
        bump(a, i)


def _expected():
    def classify_py(x, limit):
        for k in range(limit):
            if x < k:
                return k
        return -1 if x == limit else -2
    r = [classify_py(i - 1, 2) + 2 * classify_py(i, 3) for i in range(5)]
    return r, [1] * 5


def test_inlined_functions_give_their_values():
    r, a = np.zeros(5, np.int64), np.zeros(5, np.int64)
    cuda.jit(k_inlined)[1, 1](r, a)
    want_r, want_a = _expected()
    assert r.tolist() == want_r and a.tolist() == want_a


@pytest.mark.compile
def test_compiled_inlined_functions_match_python():
    from test_lower_cpu import run
    r, a = np.zeros(5, np.int64), np.zeros(5, np.int64)
    run(k_inlined, (T.int64[::1], T.int64[::1]), r, a)
    want_r, want_a = _expected()
    assert r.tolist() == want_r and a.tolist() == want_a
    lf = compile_to_llvm(k_inlined, (T.int64[::1], T.int64[::1]))
    assert "define internal" not in lf.llvm_ir
    from cujit.nvvm.libnvvm import compile_ptx
    assert ".entry" in compile_ptx(lf.llvm_ir)


@cuda.jit(device=True, inline="always")
def checked_div(a, b):
    return a // b


def k_debug_inlined(r, b):
    r[0] = checked_div(7, b[0])


@pytest.mark.compile
def test_an_inlined_function_that_raises_in_debug_mode_compiles():
    lf = compile_to_llvm(k_debug_inlined, (T.int64[::1], T.int64[::1]), debug=True)
    assert "exit;" in lf.llvm_ir and "define internal" not in lf.llvm_ir
    from cujit.nvvm.libnvvm import compile_ptx
    assert ".entry" in compile_ptx(lf.llvm_ir, opt=0, debug=True)


@pytest.mark.parametrize("value", [None, "always", "never", True, False, 0, 1])
def test_inline_accepts_numba_cudas_values(value):
    check_inline(value)
    cuda.jit(inline=value)(lambda a: None)


def test_inline_always_reads_the_values():
    assert inline_always("always") and inline_always(True) and inline_always(1)
    assert not any(inline_always(v) for v in ("never", False, 0, None))


def test_inline_refuses_another_string_with_numba_cudas_error():
    with pytest.raises(ValueError, match="must be one of the strings 'always' or 'never'.*"
                                         "'sometimes'"):
        cuda.jit(inline="sometimes")


def test_inline_refuses_a_cost_model_function():
    def cost_model(expr, caller_info, callee_info):
        return True
    with pytest.raises(TypeError, match="cost-model function is not supported"):
        cuda.jit(inline=cost_model)


def test_inline_refuses_other_values():
    with pytest.raises(TypeError, match=r"inline=2\.5 must be 'always', 'never' or a bool"):
        cuda.jit(inline=2.5)


def test_forceinline_must_be_a_flag():
    with pytest.raises(TypeError, match="forceinline='yes' must be True or False"):
        cuda.jit(forceinline="yes")


# ---- compile(forceinline=...) ----------------------------------------------------------------
def set_zero(a):
    a[0] = 0


def test_compile_forceinline_needs_ltoir():
    with pytest.raises(ValueError, match="Can only designate forced inlining in LTO-IR"):
        cuda.compile(set_zero, (T.float32[::1],), device=True, forceinline=True)


@pytest.mark.compile
def test_compile_forceinline_changes_the_ltoir():
    args = (T.float32[::1],)
    plain, resty = cuda.compile(set_zero, args, device=True, output="ltoir")
    forced, _ = cuda.compile(set_zero, args, device=True, output="ltoir", forceinline=True)
    assert resty == T.void and isinstance(forced, bytes) and plain != forced


@pytest.mark.compile
def test_compile_forceinline_marks_the_function():
    lf = compile_to_llvm(set_zero, (T.float32[::1],), kernel=False, forceinline=True)
    assert re.search(r"define .*alwaysinline", lf.llvm_ir)
    lf = compile_to_llvm(set_zero, (T.float32[::1],), kernel=False)
    assert "alwaysinline" not in lf.llvm_ir
