"""A kernel's source file changed on disk: a reloaded module compiles its new source (Python's
linecache is re-read), and a function loaded before the edit compiles what Python runs (its
bytecode), not the edited text, once cujit has read the file before the edit."""
import importlib
import sys

import numpy as np
import pytest

import cujit as cuda

pytestmark = pytest.mark.sim

MODULE = '''
import cujit as cuda

@cuda.jit
def fill(r):
    r[0] = {value}


@cuda.jit
def fill_twice(r):
    r[0] = 2 * {value}
'''


@pytest.fixture
def module_file(tmp_path, monkeypatch):
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    monkeypatch.syspath_prepend(str(tmp_path))
    name = "cujit_source_change_fodder"
    path = tmp_path / f"{name}.py"

    def write(value):
        path.write_text(MODULE.format(value=value))

    def load():
        sys.modules.pop(name, None)
        return importlib.import_module(name)
    yield write, load
    sys.modules.pop(name, None)


def _run(kernel):
    r = np.zeros(1, np.int64)
    kernel[1, 1](r)
    return int(r[0])


def test_a_reloaded_module_compiles_its_new_source(module_file):
    write, load = module_file
    write(1)
    assert _run(load().fill) == 1
    write(4000)                      # another length and the same line numbers
    assert _run(load().fill) == 4000
    write(7)
    assert _run(load().fill) == 7


def test_a_function_loaded_before_an_edit_compiles_what_python_runs(module_file):
    write, load = module_file
    write(1)
    mod = load()
    assert _run(mod.fill) == 1        # cujit has read the file
    write(3)                          # edited on disk, not re-imported: Python runs 2 * 1
    assert _run(mod.fill_twice) == 2
    mod = load()
    assert (_run(mod.fill), _run(mod.fill_twice)) == (3, 6)
