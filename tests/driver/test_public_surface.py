import subprocess
import sys

import cujit


def test_config_attribute_is_the_settings_object_after_submodule_imports():
    import cujit.config  # noqa: F401  (binds the submodule; must not replace the object)
    import cujit.driver.sim  # noqa: F401
    assert type(cujit.config).__name__ == "Config"
    cujit.config.CUDA_DEALLOCS_COUNT = 3
    try:
        from cujit.config import config
        assert config.CUDA_DEALLOCS_COUNT == 3
    finally:
        del cujit.config.CUDA_DEALLOCS_COUNT


def test_every_public_name_resolves():
    for name in cujit.__all__:
        if name != "laneid":
            assert getattr(cujit, name) is not None, name
    assert repr(cujit.laneid) == "cujit.laneid"


def test_unknown_name():
    import pytest
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        cujit.nope


def test_import_loads_no_driver_or_toolchain():
    code = ("import sys, cujit; heavy = [m for m in ('cuda.bindings.driver', 'llvmlite', "
            "'greenlet', 'cujit.frontend', 'cujit.nvvm', 'cujit.dispatch', 'cujit.arrays') "
            "if m in sys.modules]; print(heavy)")
    env = {"CUJIT_ENABLE_CUDASIM": "0", "PATH": ""}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, env=env)
    assert out.stdout.strip() == "[]"


def _type_checking_block():
    """The ``if TYPE_CHECKING:`` statement of cujit/__init__.py (ast)."""
    import ast
    with open(cujit.__file__) as f:
        tree = ast.parse(f.read())
    blocks = [n for n in tree.body if isinstance(n, ast.If)
              and isinstance(n.test, ast.Name) and n.test.id == "TYPE_CHECKING"]
    assert len(blocks) == 1
    return blocks[0]


def _typing_names():
    """``({module: [names]}, {submodules}, {annotated names})`` of the TYPE_CHECKING block."""
    import ast
    imports, submodules, annotated = {}, set(), set()
    for stmt in _type_checking_block().body:
        if isinstance(stmt, ast.ImportFrom):
            assert stmt.level == 1
            names = [a.name for a in stmt.names]
            if stmt.module is None:
                submodules.update(names)
            else:
                imports[f"cujit.{stmt.module}"] = names
        elif isinstance(stmt, ast.AnnAssign):
            annotated.add(stmt.target.id)
        else:
            raise AssertionError(f"unexpected statement at line {stmt.lineno}")
    return imports, submodules, annotated


def _bound_at_import():
    """Public names cujit/__init__.py binds itself (``config``, ``implementation``)."""
    import ast
    with open(cujit.__file__) as f:
        tree = ast.parse(f.read())
    names = set()
    for node in tree.body:
        if isinstance(node, ast.ImportFrom):
            names.update(a.asname or a.name for a in node.names)
        elif isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
    return {n for n in names if not n.startswith("_")}


def test_type_checking_block_and_lazy_table_agree():
    """IDEs read the block, Python the lazy table: same modules, names and order."""
    imports, submodules, annotated = _typing_names()
    assert imports == cujit._SOURCES
    assert submodules == set(cujit._SUBMODULES) | {"fp16"}
    listed = {n for names in imports.values() for n in names} | submodules | annotated
    eager = _bound_at_import() & set(cujit.__all__)
    assert eager >= {"config", "implementation"}
    assert listed | eager == set(cujit.__all__) and not listed & eager


def test_every_name_of_the_type_checking_block_resolves_to_its_module():
    import importlib
    imports, submodules, _ = _typing_names()
    for mod, names in imports.items():
        for name in names:
            assert getattr(cujit, name) is getattr(importlib.import_module(mod), name), name
    for name in submodules:
        assert getattr(cujit, name) is importlib.import_module(f"cujit.{name}"), name


def test_package_is_marked_typed():
    """PEP 561: ``py.typed`` ships in the package (pyproject's package-data)."""
    import os
    pkg = os.path.dirname(cujit.__file__)
    assert os.path.isfile(os.path.join(pkg, "py.typed"))
    with open(os.path.join(os.path.dirname(pkg), "pyproject.toml")) as f:
        assert 'cujit = ["py.typed"]' in f.read()
