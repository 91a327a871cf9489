"""docs/kernel-language.md holds for kernels without a source file too: every example program
on the page, run through ``exec`` of its text (no file behind it, so every kernel and device
function is rebuilt from its bytecode), passes its own asserts, and every "Not supported"
row raises the documented error."""
import textwrap

import numpy as np
import pytest

import cujit as cuda
from cujit.frontend.source import FunctionSource

from test_kl_docs import BODIES, EXAMPLES, _rows


@pytest.mark.parametrize("k", range(len(EXAMPLES)))
def test_example_runs_without_a_source_file(k):
    name = f"<kernel-language example {k}>"
    ns = {"__name__": f"kl_bytecode_example_{k}"}
    exec(compile(EXAMPLES[k], name, "exec"), ns)
    kernels = [v for v in ns.values() if hasattr(v, "py_func")]
    assert kernels, "the example defines no kernel"
    assert all(FunctionSource.from_pyfunc(v.py_func).filename == name for v in kernels)


@pytest.mark.parametrize("what,msg", list(_rows()), ids=lambda v: v[:30])
def test_not_supported_error_is_as_documented_without_a_source_file(what, msg):
    src = ("import numpy as np\nimport cujit as cuda\n\n\ndef k(a, t):\n"
           + textwrap.indent(BODIES[what], "    ") + "\n")
    ns = {}
    exec(compile(src, "<not supported>", "exec"), ns)
    k, args = ns["k"], (np.zeros(3), (1, 2.5))
    if what.startswith("whole-record"):
        exec(compile("def k(out, inp):\n    out[0] = inp[0]\n", "<not supported>", "exec"), ns)
        k, args = ns["k"], (np.zeros(1, [("a", "f8")]), np.zeros(1, [("b", "i4")]))
    with pytest.raises(cuda.TypingError) as exc:
        cuda.jit(k)[1, 1](*args)
    assert msg.split("(...)")[0].strip() in str(exc.value)
    assert exc.value.loc.filename == "<not supported>"
