"""The package's structure, read from the source with ``ast`` (imports inside functions count).

Checks the rules of docs/design.md ("Layer order"): no import circles, no import of a higher
layer, no read of another layer's underscore attributes.  The ``*_known`` tests are ratchets:
they fail on a new breach and also when a listed one is gone (then drop it from the list), so
the lists only shrink (all are empty now).  ``test_no_import_circles``,
``test_layer_order_holds`` and ``test_no_private_reads_across_layers`` say each rule holds.
"""
import ast
import fnmatch
import pathlib
import re

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
PKG = ROOT / "cujit"
DESIGN = ROOT / "docs" / "design.md"


def _modules():
    mods = {}
    for path in sorted(PKG.rglob("*.py")):
        name = ".".join(path.relative_to(ROOT).with_suffix("").parts)
        if name.endswith(".__init__"):
            name = name[: -len(".__init__")]
        mods[name] = path
    return mods


MODULES = _modules()
TREES = {m: ast.parse(p.read_text(), str(p)) for m, p in MODULES.items()}


def _resolve(target):
    while target and target not in MODULES:
        target = target.rpartition(".")[0]
    return target


def _imports(mod):
    """(imported module, names imported from it) for every import statement in ``mod``."""
    is_pkg = MODULES[mod].name == "__init__.py"
    pkg = mod if is_pkg else mod.rpartition(".")[0]
    for node in ast.walk(TREES[mod]):
        if isinstance(node, ast.Import):
            for a in node.names:
                yield _resolve(a.name), ()
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = pkg.split(".")[: len(pkg.split(".")) - node.level + 1]
                base = ".".join(parts + ([base] if base else []))
            for a in node.names:
                sub = f"{base}.{a.name}"
                if sub in MODULES:
                    yield sub, ()
                else:
                    yield _resolve(base), (a.name,)


def _graph():
    g = {m: set() for m in MODULES}
    for m in MODULES:
        for t, _ in _imports(m):
            # ``from . import x`` in a submodule names its own package, already being imported.
            if t and t != m and not (MODULES[t].name == "__init__.py" and m.startswith(t + ".")):
                g[m].add(t)
    return g


GRAPH = _graph()


def _layers():
    block = re.search(r"```layers\n(.*?)```", DESIGN.read_text(), re.S)
    assert block, "docs/design.md has no ```layers block"
    layers = []
    for line in block.group(1).splitlines():
        if line.strip():
            name, _, pats = line.partition(":")
            layers.append((name.strip(), pats.split()))
    return layers


LAYERS = _layers()
RANK = {name: i for i, (name, _) in enumerate(LAYERS)}


def layer_of(mod):
    """The layer whose longest matching pattern matches ``mod`` (exact names beat globs)."""
    best = None
    for name, pats in LAYERS:
        for p in pats:
            if fnmatch.fnmatchcase(mod, p):
                key = (p == mod, len(p))
                if best is None or key > best[0]:
                    best = (key, name)
    assert best, f"module {mod} is in no layer of docs/design.md"
    return best[1]


def circles(graph):
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index, low, on, stack, out, counter = {}, {}, set(), [], [], [0]
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter[0]; counter[0] += 1
        stack.append(root); on.add(root)
        while work:
            v, it = work[-1]
            for w in it:
                if w not in index:
                    index[w] = low[w] = counter[0]; counter[0] += 1
                    stack.append(w); on.add(w)
                    work.append((w, iter(sorted(graph[w]))))
                    break
                if w in on:
                    low[v] = min(low[v], index[w])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[v])
                if low[v] == index[v]:
                    comp = []
                    while True:
                        w = stack.pop(); on.discard(w); comp.append(w)
                        if w == v:
                            break
                    if len(comp) > 1:
                        out.append(tuple(sorted(comp)))
    return sorted(out)


def upward_imports():
    """Imports of a module of a higher layer, as ``(importer, imported)``."""
    return {(m, t) for m, ts in GRAPH.items() for t in ts
            if RANK[layer_of(t)] > RANK[layer_of(m)]}


def _defined_underscore_names():
    """Per layer, the underscore names it defines as attributes: functions, methods and
    classes, module- and class-level assignments, ``obj._x = ...`` and ``__slots__``.  Local
    variables do not count."""
    out = {}

    def scope_names(body, names):
        for node in body:
            for sub in ast.walk(node) if not isinstance(
                    node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) else ():
                if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Store):
                    names.add(sub.id)
            if isinstance(node, ast.ClassDef):
                scope_names(node.body, names)

    for m, tree in TREES.items():
        names = out.setdefault(layer_of(m), set())
        scope_names(tree.body, names)
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                names.add(node.name)
            elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
                names.add(node.attr)
            elif isinstance(node, ast.Assign) and any(
                    isinstance(t, ast.Name) and t.id == "__slots__" for t in node.targets):
                names.update(c.value for c in ast.walk(node.value)
                             if isinstance(c, ast.Constant) and isinstance(c.value, str))
    return {k: {n for n in v if n.startswith("_") and not n.startswith("__")}
            for k, v in out.items()}


def private_reads():
    """``(module, name)`` for each read of an underscore name that its own layer does not
    define but another layer does: ``obj._x`` (``self``/``cls`` excluded) and
    ``getattr(obj, "_x")`` / ``hasattr`` and ``from other import _x``."""
    defined = _defined_underscore_names()
    everywhere = set().union(*defined.values())
    found = set()
    for m, tree in TREES.items():
        own = defined.get(layer_of(m), set())
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load):
                n = node.attr
                if isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"):
                    continue
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
                    and node.func.id in ("getattr", "hasattr") and len(node.args) >= 2 \
                    and isinstance(node.args[1], ast.Constant) \
                    and isinstance(node.args[1].value, str):
                n = node.args[1].value
            else:
                continue
            if n.startswith("_") and not n.startswith("__") and n not in own and n in everywhere:
                found.add((m, n))
        for t, names in _imports(m):
            for n in names:
                if t and n.startswith("_") and not n.startswith("__") \
                        and layer_of(t) != layer_of(m):
                    found.add((m, n))
    return found


# ---- breaches known today (issue 11); each entry says why it is still there ----------------
KNOWN_CIRCLES = set()
KNOWN_UPWARD = set()
# Underscore names other layers read on purpose, with the reason.
ALLOWED_PRIVATE = {
    "_data_ptr": "DeviceNDArray's device address: a plain attribute read by the launch hot "
                 "path and the simulator (docs/interfaces.md, arrays/)",
    "_layout": "DeviceNDArray's 'C'/'F'/'A', computed once for the launch hot path "
               "(docs/interfaces.md, arrays/)",
    "_readonly": "DeviceNDArray's read-only flag, typed into the kernel (docs/interfaces.md)",
    "_laneid": "cujit.laneid differs per simulated thread: the package __getattr__ computes "
               "it from kernelapi on each access",
    "_getframe": "sys._getframe (the standard library's), not a cujit name",
    "_C": "torch._C, PyTorch's C module (the launch fast path reads its current stream and "
          "device there, as Triton's launcher does), not a cujit name",
}
KNOWN_PRIVATE = set()


def test_every_module_is_in_a_layer():
    assert {m: layer_of(m) for m in MODULES}


def test_circles_known():
    assert set(circles(GRAPH)) == KNOWN_CIRCLES


def test_upward_imports_known():
    assert upward_imports() == KNOWN_UPWARD


def _unexplained_private_reads():
    return {(m, n) for m, n in private_reads() if n not in ALLOWED_PRIVATE}


def test_private_reads_known():
    assert _unexplained_private_reads() == KNOWN_PRIVATE


def test_no_import_circles():
    assert circles(GRAPH) == []


def test_layer_order_holds():
    assert upward_imports() == set()


def test_no_private_reads_across_layers():
    assert _unexplained_private_reads() == set()


def _driver_api_imports(mod):
    """True when ``mod`` imports the CUDA driver API of cuda-bindings."""
    for node in ast.walk(TREES[mod]):
        if isinstance(node, ast.Import):
            if any(a.name.startswith("cuda.bindings.driver") for a in node.names):
                return True
        elif isinstance(node, ast.ImportFrom) and not node.level:
            m = node.module or ""
            if m.startswith("cuda.bindings.driver") or (
                    m == "cuda.bindings" and any(a.name == "driver" for a in node.names)):
                return True
    return False


def test_only_driver_layer_calls_cuda():
    # driver/ is the only code that talks to the CUDA driver (nvvm/nvJitLink are compiler
    # libraries, not the driver); the warm launch uses driver/api.py's raw_launch.
    callers = {m for m in MODULES if _driver_api_imports(m)}
    assert callers and all(layer_of(m) == "driver" for m in callers), callers


def _is_info(node):
    """True for ``X.info`` and ``X.info[...]`` (a ``TypedFunction.info`` read or write)."""
    if isinstance(node, ast.Subscript):
        node = node.value
    return isinstance(node, ast.Attribute) and node.attr == "info"


def string_keyed_records(trees):
    """``(module, line)`` of each string-keyed ``TypedFunction.info`` record in ``trees``
    ({module: ast}): an ``X.info[...] = (key, ...)`` tuple, and a ``....info...[0] == 'key'``
    (or ``in``) test.  The typer's records are typed: ``Call(kind, payload)`` for calls
    (frontend/callkinds.py), a ``frontend/nodeinfo.py`` class for anything else."""
    found = set()
    for m, tree in trees.items():
        for node in ast.walk(tree):
            if isinstance(node, ast.Assign) and any(_is_info(t) for t in node.targets) \
                    and isinstance(node.value, ast.Tuple):
                found.add((m, node.lineno))
            elif isinstance(node, ast.Compare) and isinstance(node.left, ast.Subscript) and \
                    isinstance(node.left.slice, ast.Constant) and node.left.slice.value == 0:
                base = node.left.value
                if not (_is_info(base) or isinstance(base, ast.Name) and "info" in base.id):
                    continue
                if any(isinstance(c, ast.Constant) and isinstance(c.value, str)
                       for c in ast.walk(ast.Tuple(node.comparators, ast.Load()))):
                    found.add((m, node.lineno))
    return found


def test_no_string_keyed_call_or_node_records():
    assert string_keyed_records(TREES) == set()


def test_string_keyed_record_checker_sees_a_write_and_a_read():
    tree = ast.parse("tf.info[node] = ('atomic', op)\n"
                     "tf.info[node] = Call(CallKind.ATOMIC, Atomic(op))\n"
                     "if info[0] == 'popc': pass\n"
                     "if info[0] in ('grid', 'gridsize'): pass\n"
                     "if isinstance(info, SpecialRegister): pass\n")
    assert string_keyed_records({"m": tree}) == {("m", 1), ("m", 3), ("m", 4)}


def test_checker_sees_a_circle_and_an_upward_import():
    # The checkers themselves: a made-up graph with a circle, and a known upward arrow.
    assert circles({"a": {"b"}, "b": {"a"}, "c": set()}) == [("a", "b")]
    assert layer_of("cujit.driver.cuda") == "driver"
    assert layer_of("cujit.dispatch.dispatcher") == "dispatcher"
    assert layer_of("cujit.nvvm.lower_ops") == "nvvm"
    assert RANK["driver"] < RANK["memory"] < RANK["runtime"] < RANK["arrays"]


def test_cited_requirement_ids_are_in_docs():
    # Comments and docs cite requirements by id (R-DEA-2); each must be in docs/requirements.md,
    # and nothing cites the SPEC file that is not in the repository.
    known = set(re.findall(r"R-[A-Z]{2,5}-\d+", (ROOT / "docs" / "requirements.md").read_text()))
    cited, spec = set(), []
    for path in list(PKG.rglob("*.py")) + list((ROOT / "docs").glob("*.md")):
        text = path.read_text()
        cited |= set(re.findall(r"R-[A-Z]{2,5}-\d+", text))
        if path.name != "requirements.md" and re.search(r"\bSPEC\b", text):
            spec.append(path.name)
    assert cited and cited <= known, sorted(cited - known)
    assert spec == []


_FRONT_END_ONLY = r'''
import sys
import numpy as np
import cujit as cuda
from cujit import types as T
from cujit.frontend.typeinfer import infer

@cuda.jit(device=True)
def twice(x, k=2):
    return x * k

def kern(a):
    i = cuda.grid(1)
    def add(v):
        return v + a[0]
    g = cuda.cg.this_grid()
    if i < a.shape[0]:
        a[i] = add(twice(a[i])) + cuda.selp(i > 0, np.float32(1), np.float32(0))
    g.sync()

tf = infer(kern, (T.Array(T.float32, 1, "C"),))
names = {c.fsrc.name for c in tf.all_functions()}
assert names == {"kern", "twice", "add"}, names
loaded = sorted(m for m in sys.modules if m.startswith(("llvmlite", "cujit.simulator"))
                or m.startswith("cujit.nvvm.lower") or m == "cujit.nvvm.llvmgen")
print("LOADED", loaded)
'''


def test_front_end_types_without_a_backend(tmp_path):
    # The front end decides every type (device functions, closures, cooperative groups,
    # intrinsics included) and loads neither the NVVM backend nor the simulator.  A fresh
    # process, since this one has loaded both; a file, since kernels need their source.
    import os
    import subprocess
    import sys
    script = tmp_path / "front_end_only.py"
    script.write_text(_FRONT_END_ONLY)
    env = dict(os.environ, PYTHONPATH=str(ROOT), CUJIT_PREFETCH="0")
    out = subprocess.run([sys.executable, str(script)], env=env, cwd=str(ROOT),
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "LOADED []" in out.stdout, out.stdout


def _top_level_defs(tree):
    return {n.name for n in tree.body if isinstance(n, (ast.ClassDef, ast.FunctionDef))}


def _imported_cujit_objects(mod, trees):
    """Names ``mod`` binds by importing a cujit module, or a class or function defined at
    the top of one (what a monkeypatch would change), anywhere in it."""
    defs = {m: _top_level_defs(t) for m, t in trees.items()}
    names = set()
    is_pkg = MODULES[mod].name == "__init__.py" if mod in MODULES else False
    pkg = mod if is_pkg else mod.rpartition(".")[0]
    for node in ast.walk(trees[mod]):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name.split(".")[0] == "cujit":
                    names.add(a.asname or a.name.partition(".")[0])
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = pkg.split(".")[: len(pkg.split(".")) - node.level + 1]
                base = ".".join(parts + ([base] if base else []))
            if base.split(".")[0] != "cujit":
                continue
            for a in node.names:
                if f"{base}.{a.name}" in trees or a.name in defs.get(base, ()):
                    names.add(a.asname or a.name)
    return names


def _patched_name(target, imported):
    """The imported name whose attribute ``target`` rebinds, or None: ``mod.x = ...``,
    ``Cls.x = ...``, ``mod.__dict__[k] = ...``, ``vars(mod)[k] = ...``."""
    if isinstance(target, ast.Subscript):
        v = target.value
        if isinstance(v, ast.Attribute) and v.attr == "__dict__":
            target = v
        elif isinstance(v, ast.Call) and isinstance(v.func, ast.Name) and v.func.id == "vars" \
                and v.args:
            target = ast.Attribute(value=v.args[0], attr="?", ctx=ast.Store())
        else:
            return None
    if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) \
            and target.value.id in imported:
        return target.value.id
    return None


def monkeypatches(trees):
    """``(module, name)`` for each place a module rebinds an attribute of another cujit
    module, or of a class or function it imported from one: ``mod.f = ...``,
    ``Cls.method = ...``, ``mod.__dict__[k] = ...``, ``vars(mod)[k] = ...``, and
    ``setattr``/``delattr`` on such a name.  (Writing the attributes of an object, such as
    a state or thread-local instance, is that object's interface and is not counted.)"""
    found = set()
    for m, tree in trees.items():
        imported = _imported_cujit_objects(m, trees)
        for fn in ast.walk(tree):
            if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                continue
            # a helper that patches whatever it is handed: it reads attribute N of a
            # parameter P (getattr(P, N) or P.__dict__[N]) and sets it (setattr(P, N, ...))
            params = {a.arg for a in fn.args.args + fn.args.kwonlyargs} - {"self", "cls"}
            read, written = set(), set()
            for node in ast.walk(fn):
                if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
                        and len(node.args) >= 2 and isinstance(node.args[0], ast.Name) \
                        and node.args[0].id in params:
                    key = (node.args[0].id, ast.dump(node.args[1]))
                    if node.func.id == "getattr":
                        read.add(key)
                    elif node.func.id in ("setattr", "delattr"):
                        written.add(key)
                elif isinstance(node, ast.Subscript) and isinstance(node.value, ast.Attribute) \
                        and node.value.attr == "__dict__" \
                        and isinstance(node.value.value, ast.Name) \
                        and node.value.value.id in params:
                    read.add((node.value.value.id, ast.dump(node.slice)))
            found.update((m, p) for p, _ in read & written)
        for node in ast.walk(tree):
            if isinstance(node, (ast.Assign, ast.AugAssign)):
                for t in node.targets if isinstance(node, ast.Assign) else [node.target]:
                    # obj.__dict__[k] = ...: an instance's methods replaced from outside
                    if isinstance(t, ast.Subscript) and isinstance(t.value, ast.Attribute) \
                            and t.value.attr == "__dict__" and not (
                                isinstance(t.value.value, ast.Name)
                                and t.value.value.id in ("self", "cls")):
                        found.add((m, "__dict__"))
            targets = []
            if isinstance(node, (ast.Assign, ast.Delete)):
                targets = node.targets
            elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
                targets = [node.target]
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
                    and node.func.id in ("setattr", "delattr") and node.args:
                targets = [ast.Attribute(value=node.args[0], attr="?", ctx=ast.Store())]
            for t in targets:
                name = _patched_name(t, imported)
                if name is not None:
                    found.add((m, name))
    return found


def test_no_monkeypatching():
    # Observers subscribe to hook points (cujit/hooks.py); nothing replaces another
    # module's functions or methods, so what runs is what the source of its owner says.
    assert monkeypatches(TREES) == set()


def test_monkeypatch_checker_sees_patches():
    trees = {"cujit.a": ast.parse("class Stream:\n    pass\nstate = object()\n"),
             "cujit.m": ast.parse(
                 "from . import a\nfrom .a import Stream, state\nimport cujit.a\n"
                 "a.memalloc = None\nsetattr(Stream, 'synchronize', None)\n"
                 "vars(a)['x'] = 1\nstate.current = 3\ncujit.y = 2\n"
                 "class Own:\n    pass\nsetattr(Own, 'y', 1)\n"
                 "def patch(owner, name):\n    f = getattr(owner, name)\n"
                 "    setattr(owner, name, f)\n"
                 "def copy(new, old, n):\n    setattr(new, n, getattr(old, n))\n"
                 "def own(self, x):\n    self.__dict__['f'] = x\n    x.__dict__['g'] = 1\n")}
    found = monkeypatches(trees)
    assert found == {("cujit.m", "a"), ("cujit.m", "Stream"), ("cujit.m", "cujit"),
                     ("cujit.m", "owner"), ("cujit.m", "__dict__")}


def _environ_reads(trees):
    """``(module, what)`` for each use of the process environment outside cujit/config.py:
    ``os.environ`` (any use), ``os.getenv``/``os.putenv``/``os.unsetenv``, ``environ``
    imported from os, and reads of config's private state (``_overrides``, ``_data``)."""
    found = set()
    for m, tree in trees.items():
        if m == "cujit.config":
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute):
                if node.attr in ("environ", "getenv", "putenv", "unsetenv", "environb") \
                        and isinstance(node.value, ast.Name) and node.value.id == "os":
                    found.add((m, f"os.{node.attr}"))
                elif node.attr in ("_overrides", "_data") and not (
                        isinstance(node.value, ast.Name) and node.value.id == "self"):
                    found.add((m, node.attr))
            elif isinstance(node, ast.ImportFrom) and node.module == "os":
                found.update((m, f"from os import {a.name}") for a in node.names
                             if a.name in ("environ", "getenv", "environb"))
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
                    and node.func.id in ("getattr", "hasattr") and len(node.args) >= 2 \
                    and isinstance(node.args[1], ast.Constant) \
                    and node.args[1].value in ("_data", "_overrides", "environ"):
                found.add((m, node.args[1].value))
    return found


def test_only_config_reads_the_environment():
    # Every environment variable cujit reads is declared, validated and shown (python -m
    # cujit info) by cujit/config.py; nothing else looks at os.environ.
    assert _environ_reads(TREES) == set()


def test_environ_checker_sees_reads():
    src = ("import os\nfrom os import getenv\nx = os.environ.get('A')\n"
           "y = getattr(os.environ, '_data', None)\nz = config._overrides\n")
    found = _environ_reads({"m": ast.parse(src)})
    assert found == {("m", "os.environ"), ("m", "from os import getenv"), ("m", "_data"),
                     ("m", "_overrides")}


# ---- a kernel's state lives on its kernel (issue 25) ----------------------------------------
_MAPPING_CALLS = {"dict", "defaultdict", "OrderedDict", "WeakKeyDictionary",
                  "WeakValueDictionary", "Counter"}
_MEMO_DECORATORS = {"lru_cache", "cache"}


def _call_name(node):
    f = node.func if isinstance(node, ast.Call) else node
    if isinstance(f, ast.Attribute):
        return f.attr
    if isinstance(f, ast.Name):
        return f.id
    return None


def _mutated_in_functions(tree):
    """Module-level names a function body writes into: ``NAME[k] = v`` / ``NAME[k] += v``,
    ``del NAME[k]``, ``NAME.setdefault/update/pop/popitem/clear(...)``."""
    out = set()
    for fn in ast.walk(tree):
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            continue
        for node in ast.walk(fn):
            if isinstance(node, ast.Subscript) and isinstance(node.ctx, (ast.Store, ast.Del)) \
                    and isinstance(node.value, ast.Name):
                out.add(node.value.id)
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                    and isinstance(node.func.value, ast.Name) and node.func.attr in (
                        "setdefault", "update", "pop", "popitem", "clear", "__setitem__"):
                out.add(node.func.value.id)
    return out


def module_caches(prefixes=("cujit.frontend", "cujit.nvvm", "cujit.dispatch", "cujit.simulator")):
    """``(module, name)`` of every module-level mapping the code fills at run time (a dict,
    defaultdict, WeakKeyDictionary … that a function writes into; weak dictionaries always
    count) and every ``lru_cache``/``functools.cache`` function or method, in the modules
    under ``prefixes``: the places where state could outlive the kernel it belongs to."""
    found = set()
    for m, tree in TREES.items():
        if not m.startswith(prefixes):
            continue
        written = _mutated_in_functions(tree)
        for node in tree.body:
            if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                v = node.value
                mapping = isinstance(v, (ast.Dict, ast.DictComp)) or (
                    isinstance(v, ast.Call) and _call_name(v) in _MAPPING_CALLS)
                weak = isinstance(v, ast.Call) and _call_name(v) in (
                    "WeakKeyDictionary", "WeakValueDictionary")
                for t in targets:
                    if isinstance(t, ast.Name) and mapping and (weak or t.id in written):
                        found.add((m, t.id))
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                for d in node.decorator_list:
                    if _call_name(d) in _MEMO_DECORATORS:
                        found.add((m, node.name))
    return found


# Module-level caches that hold no kernel state, with the reason.  Anything per kernel (its
# source, typings, generated code, compiled or loaded code, configurations, reports) lives on
# the dispatcher (docs/design.md "Where a kernel's state lives").
ALLOWED_CACHES = {
    ("cujit.frontend.source", "_modules"): "one parse per source file (its syntax tree and "
        "lines), shared by every function in it; no function, globals or typing",
    ("cujit.dispatch.launcher", "_limits_cache"): "launch limits per device ordinal",
    ("cujit.nvvm.ltypes", "_cache"): "LLVM type per cujit type",
    ("cujit.simulator.checked", "_offset_tables"): "element offsets per (shape, strides, "
        "offset) of a shared view, bounded",
    ("cujit.simulator.libdevice_sim", "_CACHE"): "NumPy implementation per libdevice function",
    ("cujit.simulator.memory", "_dtype_cache"): "NumPy dtype per dtype-like",
    ("cujit.simulator.scalars", "_casters"): "conversion function per scalar type",
    ("cujit.simulator.scalars", "_wrappers"): "wrap-around function per integer type",
    ("cujit.simulator.thread", "_names"): "array name per (file, line, kind) of the source",
    ("cujit.simulator.vecexpr", "_anyconvs"): "vector conversion per scalar type",
    ("cujit.simulator.vecops", "_vcasters"): "vector conversion per scalar type",
    ("cujit.simulator.vecblock", "launches"): "launch counts per executor (tests read them)",
}
# Module-level caches that still hold per-kernel state (may only shrink).
KNOWN_KERNEL_CACHES = set()


def test_checker_finds_module_caches():
    tree = ast.parse("import functools, weakref\n_c = {}\n_w = weakref.WeakKeyDictionary()\n"
                     "_TABLE = {1: 2}\n@functools.lru_cache(None)\ndef f(x):\n    return x\n"
                     "def g(k, v):\n    _c[k] = v\n")
    TREES["cujit.dispatch._made_up"] = tree
    try:
        found = {n for m, n in module_caches() if m == "cujit.dispatch._made_up"}
    finally:
        del TREES["cujit.dispatch._made_up"]
    assert found == {"_c", "_w", "f"}


def test_module_caches_known():
    assert module_caches() - set(ALLOWED_CACHES) == KNOWN_KERNEL_CACHES


def test_allowed_caches_exist():
    # an allowed cache that is gone is dropped from the list, so the list stays true
    assert set(ALLOWED_CACHES) <= module_caches()


def cj_attribute_stores():
    """``(module, attribute)`` for each ``x._cj_name = ...`` or ``setattr(x, "_cj_name",
    ...)`` in the package: state hung on functions (the user's or generated ones) instead of
    on the object that owns it."""
    found = set()
    for m, tree in TREES.items():
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store) \
                    and node.attr.startswith("_cj_"):
                found.add((m, node.attr))
            elif isinstance(node, ast.Call) and _call_name(node) == "setattr" \
                    and len(node.args) >= 2:
                a = node.args[1]
                if not (isinstance(a, ast.Constant) and isinstance(a.value, str)):
                    continue
                if a.value.startswith("_cj_"):
                    found.add((m, a.value))
    return found


ALLOWED_CJ_ATTRIBUTES = {
    ("cujit.simulator.typedast", "_cj_exact"): "marks a syntax node the rewriter generated "
                                                "(no function, no kernel state)",
}
KNOWN_CJ_ATTRIBUTES = set()


def test_no_state_set_on_functions():
    assert cj_attribute_stores() - set(ALLOWED_CJ_ATTRIBUTES) == KNOWN_CJ_ATTRIBUTES
    assert set(ALLOWED_CJ_ATTRIBUTES) <= cj_attribute_stores()


def test_checker_finds_function_attributes():
    TREES["cujit.simulator._made_up"] = ast.parse(
        "def f(fn):\n    fn._cj_waits = True\n    setattr(fn, '_cj_coop', False)\n")
    try:
        found = {n for m, n in cj_attribute_stores() if m == "cujit.simulator._made_up"}
    finally:
        del TREES["cujit.simulator._made_up"]
    assert found == {"_cj_waits", "_cj_coop"}


# ---- one place chooses the backend (issue 25) -----------------------------------------------
_BACKEND_NAMES = ("is_simulator", "simulator_enabled")
_CAPABILITIES = ("raw_launch", "function_ref", "stream_ref")


def backend_branches(trees):
    """``(module, what)`` for each read of ``is_simulator`` or ``simulator_enabled`` (as an
    attribute, a name or a ``getattr`` string) and each ``getattr``/``hasattr`` probe of a
    driver capability the contract declares (``raw_launch``, ``function_ref``,
    ``stream_ref``), outside ``cujit.driver`` and ``cujit.dispatch.backends``: the places
    that decide between the GPU and the simulator themselves instead of asking the backend."""
    found = set()
    for m, tree in trees.items():
        if m == "cujit.driver" or m.startswith("cujit.driver.") \
                or m == "cujit.dispatch.backends":
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load) \
                    and node.attr in _BACKEND_NAMES:
                found.add((m, node.attr))
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) \
                    and node.id in _BACKEND_NAMES:
                found.add((m, node.id))
            elif isinstance(node, ast.alias) and node.name in _BACKEND_NAMES:
                found.add((m, node.name))
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
                    and node.func.id in ("getattr", "hasattr") and len(node.args) >= 2 \
                    and isinstance(node.args[1], ast.Constant) \
                    and node.args[1].value in _BACKEND_NAMES + _CAPABILITIES:
                found.add((m, f"{node.func.id}({node.args[1].value!r})"))
    return found


# Reads of the backend choice outside the driver and the dispatch layer's backends, with the
# reason (may only shrink; a listed one that is gone fails too).
ALLOWED_BACKEND_BRANCHES = {
    ("cujit.cli", "is_simulator"): "`python -m cujit info` reports which driver is in use",
    ("cujit.access_cli", "is_simulator"): "`python -m cujit access-report` refuses to run "
        "when a GPU driver is already in use (the report needs the simulator)",
    ("cujit.random", "is_simulator"): "on the simulator more than 64 generator states are "
        "seeded vectorised in NumPy instead of by the seeding kernel (~10 ms a thread)",
    ("cujit.runtime.api", "is_simulator"): "with config.NUMBA_COMPAT (the numba alias) "
        "is_bfloat16_supported() / is_fp8_supported() answer False on the simulator, as "
        "numba.cuda's simulator does; a GPU's answers stay its compute capability's",
}


def test_backend_is_chosen_in_one_place():
    assert backend_branches(TREES) == set(ALLOWED_BACKEND_BRANCHES)


def test_backend_branch_checker_sees_reads():
    src = ("from .driver import get_driver, simulator_enabled\n"
           "a = get_driver().is_simulator\nb = simulator_enabled()\n"
           "c = getattr(drv, 'raw_launch', None)\nd = hasattr(drv, 'stream_ref')\n"
           "e = drv.raw_launch\n")
    assert backend_branches({"cujit.m": ast.parse(src)}) == {
        ("cujit.m", "is_simulator"), ("cujit.m", "simulator_enabled"),
        ("cujit.m", "getattr('raw_launch')"), ("cujit.m", "hasattr('stream_ref')")}
    assert backend_branches({"cujit.dispatch.backends": ast.parse(src),
                             "cujit.driver.sim": ast.parse(src)}) == set()


def device_pointer_probes(trees):
    """``(module, call)`` for each ``hasattr``/``getattr`` probe of ``"_data_ptr"`` outside
    ``cujit.memory.protocol``, whose ``has_device_pointer``/``device_pointer`` are the one
    "is this cujit device memory" test (docs/interfaces.md)."""
    found = set()
    for m, tree in trees.items():
        if m == "cujit.memory.protocol":
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
                    and node.func.id in ("getattr", "hasattr") and len(node.args) >= 2 \
                    and isinstance(node.args[1], ast.Constant) \
                    and node.args[1].value == "_data_ptr":
                found.add((m, node.func.id))
    return found


def test_device_memory_is_tested_through_the_protocol():
    assert device_pointer_probes(TREES) == set()


def test_device_pointer_probe_checker_sees_probes():
    src = "a = hasattr(x, '_data_ptr')\nb = getattr(x, '_data_ptr', None)\nc = x._data_ptr\n"
    assert device_pointer_probes({"cujit.m": ast.parse(src)}) == {
        ("cujit.m", "hasattr"), ("cujit.m", "getattr")}
    assert device_pointer_probes({"cujit.memory.protocol": ast.parse(src)}) == set()
