"""The extension API (cujit/extending.py; numba.cuda.extending under the alias): overloads
chosen by argument type, register_jitable helpers, intrinsics (codegen on the GPU, a Python
implementation on the simulator), and the errors of each."""
import math

import numpy as np
import pytest
from llvmlite import ir

import cujit as cuda
from cujit import extending, types
from cujit.frontend.errors import TypingError
from cujit.frontend.extensions import OverloadRegistry


# ---- overload ------------------------------------------------------------------------------
def area(x):
    """Overloaded below for integers and floats; never called on the host here."""
    raise NotImplementedError


@extending.overload(area)
def _area_of_integer(x):
    if isinstance(x, types.Integer):
        def impl(x):
            return x * x
        return impl
    return None     # not this overload: the float one is tried next


@extending.overload(area, jit_options={"fastmath": False})
def _area_of_float(x):
    if isinstance(x, types.Float):
        def impl(x):
            return math.pi * x * x
        return impl


def k_area(out, n, r):
    i = cuda.grid(1)
    if i < out.shape[0]:
        out[i, 0] = area(n[i])
        out[i, 1] = area(r[i])


def test_overload_is_chosen_by_argument_type():
    n = np.arange(5, dtype=np.int32)
    r = np.linspace(0.5, 2.5, 5)
    out = np.zeros((5, 2))
    cuda.jit(k_area)[1, 8](out, n, r)
    np.testing.assert_array_equal(out[:, 0], n * n)
    np.testing.assert_allclose(out[:, 1], math.pi * r * r, rtol=1e-15)


def scale(x, factor=2):
    raise NotImplementedError


@extending.overload(scale)
def _scale(x, factor=2):
    def impl(x, factor=2):
        return x * factor
    return impl


def k_scale(out, x):
    i = cuda.grid(1)
    if i < x.shape[0]:
        out[i, 0] = scale(x[i])
        out[i, 1] = scale(x[i], factor=3)


def test_overload_takes_keyword_arguments_and_defaults():
    x = np.arange(4, dtype=np.int64)
    out = np.zeros((4, 2), np.int64)
    cuda.jit(k_scale)[1, 4](out, x)
    assert out.tolist() == [[2 * v, 3 * v] for v in range(4)]


def cube(x):
    raise NotImplementedError


@extending.overload(cube)
def _cube(x):
    return lambda x: x * x * x       # Numba's usual spelling of an implementation


def k_cube(out, x):
    out[0] = cube(x[0])


def test_overload_implementation_may_be_a_lambda():
    out = np.zeros(1, np.int64)
    cuda.jit(k_cube)[1, 1](out, np.array([3], np.int64))
    assert out[0] == 27


def k_area_of_tuple(out, x):
    out[0] = area((x[0], x[1]))


def test_no_overload_accepting_the_types_is_a_typing_error_naming_function_and_types():
    with pytest.raises(TypingError, match=r"no overload of area\(\) accepts argument types "
                                          r"\(UniTuple\(float64, 2\)\)"):
        cuda.jit(k_area_of_tuple)[1, 1](np.zeros(1), np.zeros(2))


def broken(x):
    raise NotImplementedError


@extending.overload(broken)
def _broken_typing(x):
    raise KeyError("no table entry")


def not_a_function(x):
    raise NotImplementedError


@extending.overload(not_a_function)
def _returns_a_number(x):
    return 42


def k_broken(out, x):
    out[0] = broken(x[0])


def k_not_a_function(out, x):
    out[0] = not_a_function(x[0])


def test_overload_typing_function_raising_is_a_typing_error():
    with pytest.raises(TypingError) as ei:
        cuda.jit(k_broken)[1, 1](np.zeros(1), np.zeros(1))
    msg = str(ei.value)
    assert "_broken_typing of broken()" in msg and "KeyError" in msg
    assert "no table entry" in msg and "(float64)" in msg


def test_overload_returning_a_non_function_is_a_typing_error():
    with pytest.raises(TypingError, match=r"_returns_a_number of not_a_function\(\) returned "
                                          r"42 for argument types \(int32\); expected a "
                                          r"Python function"):
        cuda.jit(k_not_a_function)[1, 1](np.zeros(1), np.zeros(1, np.int32))


def test_overload_refuses_bad_registrations():
    with pytest.raises(ValueError, match="target='cpu'"):
        extending.overload(area, target="cpu")
    with pytest.raises(ValueError, match="`inline` should be passed as a separate argument"):
        extending.overload(area, jit_options={"inline": "always"})
    with pytest.raises(ValueError, match="inline='sometimes'"):
        extending.overload(area, inline="sometimes")
    with pytest.raises(ValueError, match="unexpected keyword arguments: \\['colour'\\]"):
        extending.overload(area, colour=1)
    with pytest.raises(TypeError, match="jit_options=...\\) takes a dict"):
        extending.overload(area, jit_options=["fastmath"])
    with pytest.raises(TypeError, match="takes the function to overload, got 3"):
        extending.overload(3)(_area_of_float)
    with pytest.raises(TypeError, match="decorates a typing function, got 'x'"):
        extending.overload(area)("x")


def test_registry_keeps_overloads_in_order_and_drops_them():
    reg = OverloadRegistry()

    def f():
        pass
    first = reg.register(f, lambda: None)
    second = reg.register(f, lambda: None, {"fastmath": True})
    assert reg.overloads_of(f) == (first, second) and f in reg
    assert second.jit_options == {"fastmath": True}
    assert reg.overloads_of([1]) == () and [1] not in reg      # unhashable: no overloads
    with pytest.raises(TypeError, match="not hashable"):
        reg.register(type("Unhashable", (), {"__hash__": None,
                                             "__call__": lambda s: 0})(), lambda: None)
    reg.unregister(f)
    assert f not in reg
    with pytest.raises(KeyError, match="has no overloads"):
        reg.unregister(f)
    with pytest.raises(TypeError, match="jit_options must be a dict"):
        reg.register(f, lambda: None, "fast")


def test_registry_tries_cuda_overloads_before_generic_ones():
    reg = OverloadRegistry()

    def f():
        pass
    generic = reg.register(f, lambda: None, target="generic")
    gpu = reg.register(f, lambda: None, target="gpu")
    cuda_one = reg.register(f, lambda: None)
    cuda_two = reg.register(f, lambda: None, target="cuda")
    assert reg.overloads_of(f) == (cuda_one, cuda_two, gpu, generic)
    assert [r.target for r in reg.overloads_of(f)] == ["cuda", "cuda", "gpu", "generic"]
    with pytest.raises(ValueError, match="overload target must be one of .* got 'cpu'"):
        reg.register(f, lambda: None, target="cpu")


def picked():
    raise NotImplementedError


@extending.overload(picked, target="generic")
def _picked_generic(x):
    def impl(x):
        x[0] *= 23
    return impl


@extending.overload(picked, target="cuda")
def _picked_cuda(x):
    def impl(x):
        x[0] *= 29
    return impl


def test_a_cuda_overload_wins_over_a_generic_one_registered_first():
    @cuda.jit
    def k(x):
        picked(x)
    x = np.ones(1, np.int32)
    k[1, 1](x)
    assert x[0] == 29


# ---- register_jitable ----------------------------------------------------------------------
@extending.register_jitable
def clamp(x, lo, hi):
    return min(max(x, lo), hi)


@extending.register_jitable(inline="always")
def clamp_unit(x):
    return clamp(x, 0.0, 1.0)       # a jitable calling a jitable


def k_clamp(out, x):
    i = cuda.grid(1)
    if i < x.shape[0]:
        out[i, 0] = clamp(x[i], -1.0, 1.0)
        out[i, 1] = clamp_unit(x[i])


def test_register_jitable_function_runs_in_kernels_and_on_the_host():
    x = np.array([-3.0, -0.5, 0.25, 0.75, 4.0])
    out = np.zeros((5, 2))
    cuda.jit(k_clamp)[1, 8](out, x)
    np.testing.assert_array_equal(out[:, 0], np.clip(x, -1, 1))
    np.testing.assert_array_equal(out[:, 1], np.clip(x, 0, 1))
    assert clamp(5, 0, 3) == 3 and clamp_unit(-2.0) == 0.0     # still plain host functions


def test_register_jitable_refuses_what_is_not_a_function():
    with pytest.raises(TypeError, match="decorates a Python function, got 3"):
        extending.register_jitable(3)
    with pytest.raises(TypeError, match="takes a function, or keyword options only"):
        extending.register_jitable(clamp, clamp)


def plain_helper(x):
    return x + 1


def k_plain(out):
    out[0] = plain_helper(1)


def test_plain_python_function_is_refused_with_the_decorators_that_work():
    # numba-cuda refuses it too ("Untyped global name")
    with pytest.raises(TypingError, match=r"cannot be called in a kernel; .*"
                                          r"cuda.jit\(device=True\).*register_jitable"):
        cuda.jit(k_plain)[1, 1](np.zeros(1, np.int64))


# ---- intrinsic -----------------------------------------------------------------------------
@extending.intrinsic(sim=lambda a, b: (a * b) >> 32)
def umulhi(typingctx, a, b):
    sig = types.uint32(types.uint32, types.uint32)

    def codegen(context, builder, signature, args):
        i32 = context.get_value_type(types.uint32)
        asm = ir.InlineAsm(ir.FunctionType(i32, [i32, i32]), "mul.hi.u32 $0, $1, $2;",
                           "=r,r,r")
        return builder.call(asm, args)
    return sig, codegen


@extending.intrinsic
def add_one(typingctx, a):
    if not isinstance(a, types.Integer):
        return None
    sig = extending.signature(types.int64, types.int64)

    def codegen(context, builder, signature, args):
        return builder.add(args[0], context.get_constant(types.int64, 1))
    return sig, codegen


@add_one.simulator
def _add_one_sim(a):
    return a + 1


def k_intrinsics(out, a, b):
    i = cuda.grid(1)
    if i < a.shape[0]:
        out[i, 0] = umulhi(a[i], b[i])
        out[i, 1] = add_one(a[i])


def test_intrinsic_computes_on_either_backend():
    a = np.array([1, 0xFFFFFFFF, 0x80000000, 12345], np.uint32)
    b = np.array([7, 0xFFFFFFFF, 4, 99999], np.uint32)
    out = np.zeros((4, 2), np.int64)
    cuda.jit(k_intrinsics)[1, 4](out, a, b)
    want = (a.astype(np.uint64) * b.astype(np.uint64)) >> np.uint64(32)
    assert out[:, 0].tolist() == want.tolist()
    assert out[:, 1].tolist() == (a.astype(np.int64) + 1).tolist()


def test_intrinsic_called_on_the_host_is_a_type_error():
    with pytest.raises(TypeError, match="intrinsic umulhi can only be called from a kernel"):
        umulhi(1, 2)


def k_add_one_float(out, x):
    out[0] = add_one(x[0])


def test_intrinsic_typing_errors_name_the_intrinsic_and_the_types():
    with pytest.raises(TypingError, match=r"intrinsic add_one\(\) for argument types "
                                          r"\(float64\): not accepted"):
        cuda.jit(k_add_one_float)[1, 1](np.zeros(1), np.zeros(1))


@extending.intrinsic
def wrong_arity(typingctx, a):
    return types.int64(types.int64, types.int64), lambda c, b, s, a: a[0]


@extending.intrinsic
def no_codegen(typingctx, a):
    return types.int64(types.int64)


@extending.intrinsic
def not_a_signature(typingctx, a):
    return "int64(int64)", lambda c, b, s, a: a[0]


@extending.intrinsic
def raising(typingctx, a):
    raise ValueError("bad width")


@extending.intrinsic
def wants_an_array(typingctx, a):
    return types.int64(types.float64[:]), lambda c, b, s, a: a[0]


@pytest.mark.parametrize("intr, match", [
    (wrong_arity, r"signature int64\(int64, int64\) takes 2 argument\(s\), the call passes 1"),
    (no_codegen, r"returned int64\(int64\); expected \(signature, codegen\)"),
    (not_a_signature, r"'int64\(int64\)' is not a signature"),
    (raising, r"its typing function raised ValueError: bad width"),
    (wants_an_array, r"argument of type float64 cannot be passed as array\(float64"),
])
def test_bad_intrinsic_typing_is_a_typing_error(intr, match):
    def k(out, x):
        out[0] = intr(x[0])
    with pytest.raises(TypingError, match=match):
        cuda.jit(k)[1, 1](np.zeros(1, np.int64), np.zeros(1))


def test_intrinsic_refuses_keyword_arguments():
    def k(out, x):
        out[0] = add_one(a=x[0])
    with pytest.raises(TypingError, match="intrinsics take no keyword arguments"):
        cuda.jit(k)[1, 1](np.zeros(1, np.int64), np.zeros(1, np.int64))


def test_intrinsic_refuses_bad_construction():
    with pytest.raises(TypeError, match="decorates a typing function, got 3"):
        extending.intrinsic(sim=None)(3)
    with pytest.raises(TypeError, match="sim must be a Python function"):
        extending.intrinsic(sim=5)(lambda ctx, a: None)
    with pytest.raises(TypeError, match="simulator\\(\\) takes a function"):
        add_one.simulator("x")
    with pytest.raises(TypeError, match="takes a typing function, or keyword options only"):
        extending.intrinsic(1, 2)


@extending.intrinsic
def gpu_only(typingctx, a):
    return types.int64(types.int64), lambda c, b, s, args: args[0]


@pytest.mark.sim
def test_intrinsic_without_simulator_implementation_fails_on_the_simulator():
    def k(out, x):
        out[0] = gpu_only(x[0])
    with pytest.raises(NotImplementedError, match=r"gpu_only\(\) has no simulator "
                                                  r"implementation.*sim=python_function"):
        cuda.jit(k)[1, 1](np.zeros(1, np.int64), np.zeros(1, np.int64))


def test_extending_is_reachable_as_an_attribute():
    assert cuda.extending is extending
    assert extending.overload_registry.overloads_of(area)[0].typing is _area_of_integer


# ---- overloads registered with Numba's own numba.extending.overload -----------------------
def _numba_registry_with(monkeypatch, *entries):
    """A stand-in for Numba's ``numba.core.typing.templates`` (CI has no Numba): its
    ``builtin_registry.globals`` holds ``(function, Function(template))`` pairs, the
    templates with the attributes Numba's ``make_overload_template`` gives them."""
    import sys
    import types as pytypes

    class InlineOptions:
        def __init__(self, value):
            self.is_always_inline = value == "always"

    globs = []
    for func, typing, target, inline in entries:
        meta = {} if target is None else {"target": target}
        tmpl = type("OverloadTemplate", (), {"_overload_func": staticmethod(typing),
                                             "_jit_options": {}, "metadata": meta,
                                             "_inline": InlineOptions(inline)})
        globs.append((func, pytypes.SimpleNamespace(templates=(tmpl,))))
    mod = pytypes.ModuleType("numba.core.typing.templates")
    mod.builtin_registry = pytypes.SimpleNamespace(globals=globs)
    monkeypatch.setitem(sys.modules, "numba.core.typing.templates", mod)
    return globs


def numba_overloaded():
    raise NotImplementedError


def numba_cpu_overloaded():
    raise NotImplementedError


def test_overloads_made_with_numbas_extending_api_for_cuda_are_used(monkeypatch):
    def typing():
        def impl():
            a = cuda.local.array(1, dtype=np.float32)
            a[0] = 42.0
            return a[0]
        return impl

    def cpu_typing():
        return lambda: 1
    globs = _numba_registry_with(monkeypatch, (numba_overloaded, typing, "cuda", "always"),
                                 (numba_cpu_overloaded, cpu_typing, None, "never"))

    @cuda.jit
    def k(a):
        a[0] = numba_overloaded()
    a = np.zeros(1, np.float32)
    k[1, 1](a)
    assert a[0] == 42.0
    (reg,) = extending.overload_registry.overloads_of(numba_overloaded)
    assert reg.target == "cuda" and reg.jit_options == {"inline": "always"}
    # Numba's default target is the CPU: not a CUDA overload
    assert extending.overload_registry.overloads_of(numba_cpu_overloaded) == ()

    @cuda.jit
    def k_cpu(a):
        a[0] = numba_cpu_overloaded()
    with pytest.raises(TypingError, match="cannot be called in a kernel"):
        k_cpu[1, 1](a)
    # registrations made after the first look-up are seen
    globs.append((numba_cpu_overloaded, type("F", (), {"templates": (type(
        "T", (), {"_overload_func": staticmethod(cpu_typing), "metadata": {"target": "generic"},
                  "_jit_options": {}}),)})()))
    assert [r.target for r in extending.overload_registry.overloads_of(
        numba_cpu_overloaded)] == ["generic"]


# ---- strict signatures and literal arguments (numba's overload rules) -------------------------
def _kernel_calling(fn):
    def k(out, x):
        out[0] = fn(x[0], 2, kw=3)
    return cuda.jit(k)


@pytest.mark.parametrize("typing_src, impl_src, words", [
    ("def t(a, b, kw=None)", "def impl(a, b, kw=12)", "keyword argument default values"),
    ("def t(a, b, kw=None)", "def impl(a, c, kw=None)", "argument names"),
    ("def t(a, b, kw=None)", "def impl(a, b, other=None)", "keyword argument names"),
    ("def t(a, b, kw=None, **kws)", "def impl(a, b, kw=None)",
     "VAR_KEYWORD (e.g. **kwargs) is unsupported. (offending argument name is '**kws')"),
    ("def t(a, b, kw=None)", "def impl(a, b, kw=None, **kws)", "VAR_KEYWORD"),
    ("def t(a, *star, kw=None)", "def impl(a, b, kw=None)",
     "VAR_POSITIONAL (e.g. *args) argument kind (offending argument name is '*star')"),
    ("def t(a, b, kw=None)", "def impl(a, z, *rest, kw=None)", "First difference: 'z'"),
])
def test_strict_overload_whose_implementation_differs_is_a_typing_error(typing_src, impl_src,
                                                                        words):
    def target(a, b, kw=None):
        raise NotImplementedError
    ns = {}
    exec(f"{impl_src}:\n    return a\n", ns)
    exec(f"{typing_src}:\n    return impl\n", {"impl": ns["impl"]}, ns)
    extending.overload(target)(ns["t"])
    with pytest.raises(TypingError, match="Typing and implementation arguments differ in|"
                                          "VAR_KEYWORD|VAR_POSITIONAL") as ei:
        _kernel_calling(target)[1, 1](np.zeros(1), np.ones(1))
    assert words in str(ei.value) and "does not match it" in str(ei.value)


def test_matching_or_not_strict_overloads_are_accepted():
    def exact(a, b, kw=None):
        raise NotImplementedError

    def loose(a, b, kw=None):
        raise NotImplementedError

    def star(a, b, c):
        raise NotImplementedError

    @extending.overload(exact)
    def _exact(a, b, kw=None):
        def impl(a, b, kw=None):
            return a + b + kw
        return impl

    @extending.overload(loose, strict=False)
    def _loose(a, b, kw=None, **kws):
        def impl(a, b, kw=5):
            return a + b + kw
        return impl

    @extending.overload(star)
    def _star(a, b, c):
        def impl(a, *rest):         # *args in the implementation takes the rest
            return a + rest[0] + rest[1]
        return impl
    for fn in (exact, loose):
        out = np.zeros(1)
        _kernel_calling(fn)[1, 1](out, np.ones(1))
        assert out[0] == 6

    @cuda.jit
    def k(out, x):
        out[0] = star(x[0], 2, 3)
    out = np.zeros(1)
    k[1, 1](out, np.ones(1))
    assert out[0] == 6


def by_literal(x):
    raise NotImplementedError


def by_plain(x):
    raise NotImplementedError


def _by_value(x):
    if isinstance(x, types.IntegerLiteral):
        if x.literal_value == 1:
            return lambda x: 0xCAFE
        raise TypingError(f"no literal {x.literal_value}")     # refused: plain types next
    return lambda x: x * 100


extending.overload(by_literal, prefer_literal=True)(_by_value)
extending.overload(by_plain)(_by_value)


def only_literal(x):
    raise NotImplementedError


@extending.overload(only_literal)
def _only_literal(x):
    if isinstance(x, types.IntegerLiteral):
        return lambda x: x + 1000


def k_literals(res, x):
    res[0] = by_literal(1)
    res[1] = by_literal(2)
    res[2] = by_literal(x)
    res[3] = by_plain(1)
    res[4] = by_plain(x)
    res[5] = only_literal(7)


def test_prefer_literal_offers_integer_constants_as_literals_first():
    # numba-cuda's TestOverloadPreferLiteral: literal types first with prefer_literal, after
    # the plain ones without it
    res = np.zeros(6)
    cuda.jit(k_literals)[1, 1](res, 3)
    assert res.tolist() == [0xCAFE, 200, 300, 100, 300, 1007]
