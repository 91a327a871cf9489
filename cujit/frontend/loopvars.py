"""Loop variables of separate ``for`` loops as separate variables.

A kernel variable has one type (the typer unifies every value a name is given).  Python code
often reuses one loop-variable name for loops over values of different types::

    for v in (a2, b2):      # float32x2 values
        ...
    for v in (a3, b3):      # float32x3 values
        ...

numba accepts this: its SSA form gives each loop its own version of ``v``.  cujit gets the
same effect by renaming: when every use of a name lies inside ``for`` loops that have that
name as their target, none of those loops nested in another and none reading the name in
its ``else`` clause, each loop's name is its own variable (the first keeps the name, the
others are ``<name>__loop<k>``).  The rename is unobservable: no code outside the loops reads
the name, so which loop assigned it last does not matter.  Nested functions (closures)
referring to the name keep it unsplit.
"""
import ast
import copy

__all__ = ["split_loop_variables"]


def split_loop_variables(node):
    """``node`` (an ``ast.FunctionDef``), or a renamed copy of it (the parsed file may be
    shared by other functions) when some loop-variable name qualifies (module docstring)."""
    plan = _plan(node)
    if not plan:
        return node
    node = copy.deepcopy(node)
    loops = {}
    for stmt in _walk_own(node):
        if isinstance(stmt, (ast.For, ast.AsyncFor)) and isinstance(stmt.target, ast.Name) \
                and stmt.target.id in plan:
            loops.setdefault(stmt.target.id, []).append(stmt)
    used = {n.id for n in ast.walk(node) if isinstance(n, ast.Name)} | \
        {a.arg for a in ast.walk(node.args) if isinstance(a, ast.arg)}
    for name, fors in loops.items():
        fors.sort(key=lambda f: (getattr(f, "lineno", 0), getattr(f, "col_offset", 0)))
        for k, loop in enumerate(fors[1:], start=1):
            new = f"{name}__loop{k}"
            while new in used:
                new += "_"
            used.add(new)
            for n in ast.walk(loop):
                if isinstance(n, ast.Name) and n.id == name:
                    n.id = new
    return node


def _walk_own(node):
    """The nodes of function ``node``'s body, not descending into nested functions,
    lambdas or classes."""
    todo = list(node.body)
    while todo:
        n = todo.pop()
        yield n
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            continue
        todo.extend(ast.iter_child_nodes(n))


def _plan(node):
    """The names whose loops may be split."""
    params = {a.arg for a in ast.walk(node.args) if isinstance(a, ast.arg)}
    fors = {}
    for n in _walk_own(node):
        if isinstance(n, (ast.For, ast.AsyncFor)) and isinstance(n.target, ast.Name):
            fors.setdefault(n.target.id, []).append(n)
    candidates = {name for name, loops in fors.items() if len(loops) > 1} - params
    if not candidates:
        return set()
    declared = set()
    nested_refs = set()
    for n in _walk_own(node):
        if isinstance(n, (ast.Global, ast.Nonlocal)):
            declared.update(n.names)
        elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            nested_refs.update(m.id for m in ast.walk(n) if isinstance(m, ast.Name))
    candidates -= declared | nested_refs
    out = set()
    for name in candidates:
        loops = fors[name]
        inside = set()
        ok = True
        for loop in loops:
            if any(isinstance(m, ast.Name) and m.id == name
                   for e in loop.orelse for m in ast.walk(e)):
                ok = False
            for other in loops:
                if other is not loop and any(m is other for m in ast.walk(loop)):
                    ok = False          # nested loops of one name: the outer reads it after
            inside.update(id(m) for m in ast.walk(loop))
        total = [m for m in _walk_own(node) if isinstance(m, ast.Name) and m.id == name]
        if ok and all(id(m) in inside for m in total):
            out.add(name)
    return out
