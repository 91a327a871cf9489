"""Kernels and device functions without a source file (a plain REPL, ``python -c``, stdin,
``exec``-generated code) are rebuilt from their bytecode (``cujit/frontend/bytecode.py``):
they launch with the right values, closures, globals and defaults work as in a file, errors
name the line, and constructs outside the kernel language are refused by name."""
import os
import pathlib
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import cujit as cuda
from cujit.frontend.errors import TypingError
from cujit.frontend.source import FunctionSource
from cujit.frontend.typeinfer import infer
from cujit import types as T

_ROOT = pathlib.Path(__file__).resolve().parents[2]

_PROGRAM = textwrap.dedent("""\
    import numpy as np
    import cujit as cuda

    SCALE = 3.0

    @cuda.jit(device=True)
    def shifted(v, by=1.0):
        return v + by

    @cuda.jit
    def kernel(out, a):
        i = cuda.grid(1)
        if i < a.size:
            out[i] = shifted(a[i] * SCALE) if a[i] > 2 else shifted(a[i], by=-1.0)

    a = np.arange(6, dtype=np.float64)
    out = np.zeros_like(a)
    kernel[1, 8](out, a)
    print(out.tolist())
    """)
_EXPECTED = "[-1.0, 0.0, 1.0, 10.0, 13.0, 16.0]"


def _python(args, stdin=None, sim=True):
    env = dict(os.environ, PYTHONPATH=str(_ROOT))
    if sim:
        env["CUJIT_ENABLE_CUDASIM"] = "1"
    else:
        env.pop("CUJIT_ENABLE_CUDASIM", None)
        env.pop("NUMBA_ENABLE_CUDASIM", None)
    return subprocess.run([sys.executable, *args], input=stdin, capture_output=True, text=True,
                          env=env, timeout=300, cwd=str(_ROOT))


@pytest.mark.gpu
@pytest.mark.parametrize("how", ["-c", "stdin"])
def test_kernel_without_a_source_file_runs_on_the_gpu(how):
    args, stdin = (["-c", _PROGRAM], None) if how == "-c" else (["-"], _PROGRAM)
    r = _python(args, stdin=stdin, sim=False)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == _EXPECTED


def test_kernel_from_python_dash_c_runs_on_the_simulator():
    r = _python(["-c", _PROGRAM])
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == _EXPECTED


def test_kernel_from_stdin_runs_on_the_simulator():
    r = _python(["-"], stdin=_PROGRAM)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == _EXPECTED


def test_kernel_from_exec_of_a_template_runs_on_the_simulator():
    program = textwrap.dedent('''\
        import numpy as np
        import cujit as cuda
        TEMPLATE = """
        def {name}(out, a):
            i = cuda.grid(1)
            if i < out.size:
                out[i] = a[i] {op} {k}
        """
        ns = {"cuda": cuda}
        for name, op, k in (("add7", "+", 7), ("mul3", "*", 3)):
            exec(compile(TEMPLATE.format(name=name, op=op, k=k), "<template>", "exec"), ns)
        a = np.arange(4, dtype=np.int64)
        for name in ("add7", "mul3"):
            out = np.zeros_like(a)
            cuda.jit(ns[name])[1, 4](out, a)
            print(name, out.tolist())
        ''')
    r = _python(["-c", program])
    assert r.returncode == 0, r.stderr
    assert r.stdout.split("\n")[:2] == ["add7 [7, 8, 9, 10]", "mul3 [0, 3, 6, 9]"]


def test_typing_error_from_python_dash_c_names_the_line():
    program = textwrap.dedent("""\
        import numpy as np
        import cujit as cuda

        @cuda.jit
        def kernel(out):
            i = cuda.grid(1)
            out[i] = undefined_name + 1

        kernel[1, 1](np.zeros(1))
        """)
    r = _python(["-c", program])
    assert r.returncode != 0
    assert "TypingError" in r.stderr and "undefined_name" in r.stderr
    assert 'File "<string>", line 7' in r.stderr, r.stderr


def _define(source, name, namespace=None, filename="<generated>"):
    ns = {"cuda": cuda, "np": np} if namespace is None else namespace
    exec(compile(textwrap.dedent(source), filename, "exec"), ns)
    return ns[name]


def test_front_end_takes_the_bytecode_path_for_exec_code():
    f = _define("""
        def k(out):
            out[0] = 1
        """, "k")
    fsrc = FunctionSource.from_pyfunc(f)
    assert fsrc.filename == "<generated>"
    assert fsrc.location(fsrc.node.body[0]).line == 3


def test_error_in_exec_kernel_names_its_line():
    f = _define("""
        def k(out, n):
            i = cuda.grid(1)
            x = n + 1
            out[i] = x.no_such_attribute
        """, "k")
    with pytest.raises(TypingError) as ei:
        infer(f, (T.float64[::1], T.int64))
    assert ei.value.loc.filename == "<generated>"
    assert ei.value.loc.line == 5
    assert "no_such_attribute" in str(ei.value)


def test_closure_globals_and_defaults_from_exec():
    ns = {"cuda": cuda, "np": np, "OFFSET": 100}
    make = _define("""
        def make(factor):
            @cuda.jit(device=True)
            def weight(v, w=2, bias=0):
                return v * w + bias

            def k(out, a):
                i = cuda.grid(1)
                if i < a.size:
                    out[i] = weight(a[i], bias=OFFSET) + weight(a[i]) * factor
            return k
        """, "make", ns)
    k = cuda.jit(make(10))
    a = np.arange(5, dtype=np.int64)
    out = np.zeros_like(a)
    k[1, 8](out, a)
    assert out.tolist() == [int(v * 2 + 100 + v * 2 * 10) for v in range(5)]
    closure = FunctionSource.from_pyfunc(k.py_func).closure
    assert closure["factor"] == 10 and sorted(closure) == ["factor", "weight"]


def test_loops_and_conditions_from_exec_match_python():
    src = """
        def k(out, n):
            t = 0
            i = 0
            while i < n:
                if i % 3 == 0 or i == 4:
                    i += 1
                    continue
                t += i if i < 5 else -i
                i += 1
            else:
                t += 1000
            out[0] = t
            for j in range(n - 1, -1, -2):
                if 1 < j < 5 and not j == 3:
                    break
                out[1] += j
            out[2] = j
        """
    py = _define(src, "k")
    want = np.zeros(3, np.int64)
    py(want, 9)
    got = np.zeros(3, np.int64)
    cuda.jit(_define(src, "k"))[1, 1](got, 9)
    assert got.tolist() == want.tolist()


def test_nested_def_in_exec_kernel():
    k = _define("""
        def k(out, a):
            scale = 3
            def f(v):
                return v * scale - 1
            i = cuda.grid(1)
            if i < a.size:
                out[i] = f(a[i])
        """, "k")
    a = np.arange(4, dtype=np.int64)
    out = np.zeros_like(a)
    cuda.jit(k)[1, 4](out, a)
    assert out.tolist() == [-1, 2, 5, 8]


def test_lambda_in_exec_kernel_is_refused_as_in_a_file():
    k = _define("""
        def k(out):
            g = lambda v: v - 1
            out[0] = g(1)
        """, "k")
    with pytest.raises(TypingError) as ei:
        infer(k, (T.int64[::1],))
    assert "'Lambda' expressions are not supported" in str(ei.value)
    assert ei.value.loc.line == 3


def test_assert_in_exec_kernel_is_an_assert():
    k = _define("""
        def k(out, x):
            assert x > 0, "x must be positive"
            out[0] = x
        """, "k")
    tree = FunctionSource.from_pyfunc(k).node
    import ast
    assert isinstance(tree.body[0], ast.Assert)
    assert tree.body[0].msg.value == "x must be positive"


@pytest.mark.parametrize("body,what,line", [
    ("    with open('x') as f:\n        out[0] = 1\n", "'with' statements are not supported", 3),
    ("    try:\n        out[0] = 1\n    except Exception:\n        pass\n",
     "'try' statements are not supported", 3),
    ("    yield out\n", "'Yield' expressions are not supported", 1),
    ("    del x\n", "'del' statements are not supported", 3),
    ("    y = {1: x}\n", "'Dict' expressions are not supported", 3),
    ("    import math\n", "'import' statements are not supported", 3),
], ids=["with", "try", "generator", "del", "dict", "import"])
def test_construct_outside_the_kernel_language_is_refused_as_from_source(body, what, line):
    f = _define("def bad(out):\n    x = 1\n" + body, "bad")
    with pytest.raises(TypingError) as ei:
        FunctionSource.from_pyfunc(f)
    msg = str(ei.value)
    assert what + " in kernels (bad, compiled from its bytecode" in msg
    assert ei.value.loc.filename == "<generated>" and ei.value.loc.line == line


def test_comprehension_in_exec_kernel_is_refused():
    f = _define("def bad(out):\n    x = [v for v in out]\n", "bad")
    with pytest.raises(TypingError) as ei:
        FunctionSource.from_pyfunc(f)
    assert "not supported in kernels" in str(ei.value)
    assert ei.value.loc.line == 2


def test_unrecognised_bytecode_is_refused_with_the_instruction_and_line():
    f = _define("def bad(out):\n    out[0] = 1\n    match out:\n        case [a]:\n"
                "            pass\n", "bad")
    with pytest.raises(TypingError) as ei:
        FunctionSource.from_pyfunc(f)
    msg = str(ei.value)
    assert msg.startswith("cannot compile bad from its bytecode: ")
    assert "instruction MATCH_SEQUENCE" in msg and ei.value.loc.line == 4


@pytest.mark.compile
def test_exec_kernel_compiles_to_the_ptx_of_the_same_source_in_a_file(tmp_path):
    import importlib.util
    import re
    from cujit.nvvm import libnvvm as nvvm
    from cujit.dispatch.dispatcher import compile_ptx
    if not nvvm.nvvm_available():
        pytest.skip("libNVVM is not available")
    src = textwrap.dedent("""\
        import cujit as cuda

        def axpy(out, a, x, y):
            i = cuda.grid(1)
            if i < out.size:
                out[i] = a * x[i] + y[i]
        """)
    path = tmp_path / "axpy_file.py"
    path.write_text(src)
    spec = importlib.util.spec_from_file_location("axpy_file", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    from_exec = _define(src, "axpy", {})
    sig = "void(float32[:], float32, float32[:], float32[:])"
    want, _ = compile_ptx(mod.axpy, sig)
    got, _ = compile_ptx(from_exec, sig)
    unnamed = lambda p: re.sub(r"_cujit_(\w+?)_[0-9a-f]{12}", r"_cujit_\1", p)  # noqa: E731
    assert ".entry" in got and unnamed(got) == unnamed(want)


def test_kernel_defaults_and_keyword_launch_from_exec():
    k = cuda.jit(_define("""
        def k(a, v=3.0, w=1.0):
            a[0] = v * w
        """, "k"))
    a = np.zeros(1)
    k[1, 1](a)
    assert a[0] == 3.0
    k[1, 1](a, w=2.0)
    assert a[0] == 6.0
    assert [d.value for d in FunctionSource.from_pyfunc(k.py_func).node.args.defaults] == \
        [3.0, 1.0]


def test_lambda_in_a_file_is_typed_from_its_bytecode():
    # the file has no 'def' for it: the front end takes its bytecode, positions in this file
    f = lambda a: cuda.atomic.add(a, 0, undefined_here)  # noqa: E731, F821
    with pytest.raises(TypingError) as ei:
        infer(f, (T.float64[::1],))
    assert "undefined_here" in str(ei.value)
    assert ei.value.loc.filename == __file__
    assert "lambda a: cuda.atomic.add" in str(ei.value)      # the file's line is shown


def test_inspect_types_of_a_kernel_without_source_lists_its_rebuilt_tree():
    import io
    k = cuda.jit(_define("""
        def k(a, n):
            x = n * 2
            a[0] = x
        """, "k"))
    k[1, 1](np.zeros(1), 3)
    buf = io.StringIO()
    k.inspect_types(file=buf)
    text = buf.getvalue()
    assert "x = n * 2" in text and "x: int64" in text


@pytest.mark.sim
def test_simulator_error_in_a_kernel_without_source_names_its_line():
    from cujit.simulator.errors import OutOfBoundsError
    k = cuda.jit(_define("""
        def k(a):
            i = cuda.grid(1)
            a[i + 10] = 1
        """, "k", filename="<template>"))
    with pytest.raises(OutOfBoundsError) as ei:
        k[1, 2](np.zeros(4))
    assert "<template>:4" in str(ei.value)


@pytest.mark.parametrize("body,msg", [
    ("    lambda: 0\n", "a function expression used as a statement"),
    ("    out[0] = g(**kw)\n", "not supported"),
], ids=["lambda-statement", "star-star-call"])
def test_bytecode_constructs_without_a_kernel_form_are_refused(body, msg):
    f = _define("def bad(out, kw):\n" + body, "bad")
    with pytest.raises(TypingError) as ei:
        FunctionSource.from_pyfunc(f)
    assert msg in str(ei.value) and "bad" in str(ei.value)
    assert ei.value.loc.filename == "<generated>" and ei.value.loc.line >= 2


def test_nested_def_with_keyword_only_default_is_refused_as_from_source():
    f = _define("""
        def bad(out):
            def inner(*, k=1):
                return k
            out[0] = inner()
        """, "bad")
    inner = FunctionSource.from_pyfunc(f).node.body[0]
    assert [a.arg for a in inner.args.kwonlyargs] == ["k"]
    assert inner.args.kw_defaults[0].value == 1
    with pytest.raises(TypingError, match="plain positional parameters only"):
        infer(f, (T.int64[::1],))


def test_hand_made_bytecode_is_refused_not_miscompiled():
    import dis
    f = _define("def made(a):\n    return a\n", "made")
    ops = ([dis.opmap["RESUME"], 0] if "RESUME" in dis.opmap else []) + \
        [dis.opmap["RETURN_VALUE"], 0]          # returns a value it never pushed
    f.__code__ = f.__code__.replace(co_code=bytes(ops))
    with pytest.raises(TypingError, match="cannot compile made from its bytecode: stack "
                                          "underflow"):
        FunctionSource.from_pyfunc(f)
