"""docs/kernel-language.md stays true: every Python example on the page is written to a
module, imported and run (its asserts check the values), and every error quoted in the
"Not supported" table is the one a kernel doing that thing raises."""
import importlib.util
import pathlib
import re
import textwrap

import numpy as np
import pytest

import cujit as cuda

DOC = pathlib.Path(__file__).resolve().parents[2] / "docs" / "kernel-language.md"
TEXT = DOC.read_text()
# complete programs are the top-level blocks; indented ones inside list items are snippets
EXAMPLES = re.findall(r"^```python\n(.*?)^```", TEXT, re.S | re.M)


def _import(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_page_has_examples():
    assert len(EXAMPLES) >= 6


@pytest.mark.parametrize("k", range(len(EXAMPLES)))
def test_example_runs(k, tmp_path):
    path = tmp_path / f"kl_doc_example_{k}.py"
    path.write_text(EXAMPLES[k])
    _import(path, f"kl_doc_example_{k}")


# the kernel body that does each "Not supported" row's thing; args: (a float64[3], t (1, 2.5))
BODIES = {
    "`with` blocks": "with open('x'):\n    pass",
    "`try` / `except`": "try:\n    pass\nexcept Exception:\n    pass",
    "`x in array` (`in` works on tuples)": "a[0] = 1 if 1.0 in a else 0",
    "`a is b` of two arrays": "a[0] = a is a",
    "lists, dicts, sets": "x = [1, 2]",
    "generators (`yield`)": "x = (yield 1)",
    "f-strings": "print(f'{a[0]}')",
    "other NumPy array functions (`np.cumsum(a)`), array methods (`a.fill(0)`)":
        "a[0] = np.cumsum(a)[0]",
    "`sum`, other unlisted builtins": "a[0] = sum(a)",
    "iterating a tuple of mixed types": "for v in t:\n    a[0] += v",
    "`cuda.fp16` on complex values": "a[0] = cuda.fp16.hadd(a[0] * 1j, a[1])",
    "whole-record assignment between different dtypes": "a[0] = t",
    "a bfloat16 mixed with a complex number": "x = cuda.bfloat16(a[0]) + 1j",
    "a ufunc on arrays without an output (`np.sin(x)`)": "a[0] = np.sin(a)[0]",
    "`abs(x)`, `math.sin(x)` of an array": "a[0] = abs(a)[0]",
}


def _rows():
    table = TEXT.split("## Not supported", 1)[1]
    for line in table.splitlines():
        m = re.match(r"\| (.+?) \| `(.+?)`", line)
        if m and m.group(1) != "what":
            yield m.group(1), m.group(2)


def test_every_row_has_a_body():
    assert {w for w, _ in _rows()} == set(BODIES)


@pytest.mark.parametrize("what,msg", list(_rows()), ids=lambda v: v[:30])
def test_not_supported_error_is_as_documented(what, msg, tmp_path):
    name = "kl_doc_err_" + str(abs(hash(what)))
    path = tmp_path / f"{name}.py"
    path.write_text("import numpy as np\nimport cujit as cuda\n\n\ndef k(a, t):\n"
                    + textwrap.indent(BODIES[what], "    ") + "\n")
    mod = _import(path, name)
    args = (np.zeros(3), (1, 2.5))
    if what.startswith("whole-record"):
        def k(out, inp):
            out[0] = inp[0]
        mod.k = k
        args = (np.zeros(1, [("a", "f8")]), np.zeros(1, [("b", "i4")]))
    with pytest.raises(cuda.TypingError) as exc:
        cuda.jit(mod.k)[1, 1](*args)
    want = msg.split("(...)")[0].strip()
    assert want in str(exc.value)
