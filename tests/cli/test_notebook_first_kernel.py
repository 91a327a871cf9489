"""examples/notebooks/first_kernel.ipynb runs: kernels defined in notebook cells, on the
simulator where there is no GPU.

What this covers: Jupyter's way of giving cells a source.  IPython compiles each cell under a
made-up file name (``<ipython-input-N-HASH>`` in the terminal, ``/tmp/ipykernel_PID/HASH.py``
under ipykernel) and registers the cell's text in ``linecache`` under that name, which is
where cujit's front end (``inspect.getsource``) reads a kernel's source.  The executor below
does exactly that for each code cell, in one namespace; it is not Jupyter itself (nbclient
and ipykernel run the notebook for real in the last test, where they are installed).
Kernels whose text is in no file and not in ``linecache`` (``exec`` of a bare string,
``python -c``) are rebuilt from their bytecode instead, a path of its own with its own tests.
"""
import hashlib
import json
import linecache
import os

import numpy as np
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
NOTEBOOK = os.path.join(ROOT, "examples", "notebooks", "first_kernel.ipynb")


def _code_cells():
    with open(NOTEBOOK) as f:
        nb = json.load(f)
    assert nb["nbformat"] == 4
    return ["".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code"]


def _cell_name(style, number, source):
    digest = hashlib.sha1(source.encode()).hexdigest()[:12]
    if style == "terminal":
        return f"<ipython-input-{number}-{digest}>"
    return f"/tmp/ipykernel_4242/{digest}.py"       # ipykernel: a file that does not exist


def _run_notebook(style):
    """Run the code cells in one namespace as IPython does; returns the namespace."""
    ns = {"__name__": "__main__"}
    names = []
    try:
        for number, source in enumerate(_code_cells(), start=1):
            name = _cell_name(style, number, source)
            names.append(name)
            linecache.cache[name] = (len(source), None, source.splitlines(True), name)
            exec(compile(source, name, "exec"), ns)
    finally:
        for name in names:
            linecache.cache.pop(name, None)
    return ns, names


@pytest.mark.parametrize("style", ["terminal", "ipykernel"])
def test_notebook_kernels_defined_in_cells_run(style):
    ns, names = _run_notebook(style)
    assert np.array_equal(ns["scaled"], 2 * np.arange(1000, dtype=np.float32))
    assert np.isclose(ns["total"], ns["x"].sum(), rtol=1e-5)
    if ns["on_simulator"]:
        # the unguarded read is caught and placed in its cell, on the cell's own line
        cell = next(n for n, src in zip(names, _code_cells()) if "def unguarded" in src)
        assert isinstance(ns["caught"], IndexError)
        assert f"{os.path.basename(cell)}:4" in str(ns["caught"])
        assert "x[i] += 1.0" in str(ns["caught"])


def test_notebook_runs_under_jupyter(tmp_path, monkeypatch):
    """The real thing, where nbclient and ipykernel are installed (not in cujit's [test])."""
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    pytest.importorskip("ipykernel")
    nb = nbformat.read(NOTEBOOK, as_version=4)
    # the kernel process inherits this one's environment: this checkout's cujit
    monkeypatch.setenv("PYTHONPATH", ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    nbclient.NotebookClient(nb, timeout=300, kernel_name="python3",
                            resources={"metadata": {"path": str(tmp_path)}}).execute()
    printed = "".join(o.get("text", "") for c in nb.cells if c.cell_type == "code"
                      for o in c.outputs)
    assert "[0. 2. 4. 6.]" in printed
