"""Versions of a variable: a name rebound to values that never meet becomes separate variables.

A kernel variable has one type.  numba's SSA form gives every assignment its own version and
unifies only the versions that meet at a join (a phi), so Python code may rebind a name to a
value of another type when the uses are separate::

    for i in range(1):
        arr = arr.reshape(6)        # a 1-d version, read only by the next line
        arr = arr.reshape(3, 2)     # a 2-d version, which reaches the loop's head

cujit gets the same effect by renaming *webs* (the classic register-allocation notion): the
reaching definitions of every read are computed over the structured statements (``if``,
``while``, ``for`` with ``break``/``continue``/``else``, ``return``/``raise``); the
definitions reaching one read belong to one web (with an augmented assignment joined to the
definitions it reads); each web of a name but the one holding the parameter (or else the
first) is renamed ``<name>__v<k>``.  A read no definition reaches keeps the name (the typer
reports it).  Names a nested function reads, names declared ``global``/``nonlocal``, and
functions holding constructs this analysis does not follow (``with``, ``try``, ``del``,
``:=``, comprehensions, ``match``) are left alone.
"""
import ast
import copy

__all__ = ["split_versions", "source_name", "source_text"]


class _Unsupported(Exception):
    pass


_OPAQUE = (ast.With, ast.AsyncWith, ast.Try, ast.Delete, ast.NamedExpr, ast.ListComp,
           ast.SetComp, ast.DictComp, ast.GeneratorExp, ast.AsyncFor, ast.Lambda,
           getattr(ast, "Match", ast.With), getattr(ast, "TryStar", ast.Try))


class _Flow:
    """Reaching definitions over one function's statements.  A state maps a name to the
    frozenset of definition ids reaching that point (None: unreachable)."""

    def __init__(self, skip):
        self.skip = skip
        self.defs = []          # def id -> (name, node or None for a parameter)
        self.uses = []          # (Name node, frozenset of def ids)
        self.joined = []        # (def id, frozenset of def ids): must share a web
        self.loops = []         # [(breaks, continues)] of the enclosing loops
        self.ids = {}           # id(node) -> def id: a loop body walked again reuses them

    def new_def(self, name, node):
        if node is not None:
            got = self.ids.get(id(node))
            if got is not None:
                return got
            self.ids[id(node)] = len(self.defs)
        self.defs.append((name, node))
        return len(self.defs) - 1

    # ---- expressions ------------------------------------------------------------------
    def read(self, expr, st):
        if expr is None or st is None:
            return
        for n in ast.walk(expr):
            if isinstance(n, _OPAQUE):
                raise _Unsupported()
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load) and \
                    n.id not in self.skip:
                self.uses.append((n, st.get(n.id, frozenset())))

    def bind(self, target, st):
        """Definitions of the names in assignment target ``target``; the reads in it
        (``a[i] = …``, ``x.f = …``) first."""
        if st is None:
            return st
        if isinstance(target, ast.Name):
            if target.id in self.skip:
                return st
            st = dict(st)
            st[target.id] = frozenset({self.new_def(target.id, target)})
            return st
        if isinstance(target, (ast.Tuple, ast.List)):
            for e in target.elts:
                st = self.bind(e, st)
            return st
        if isinstance(target, ast.Starred):
            return self.bind(target.value, st)
        self.read(target, st)       # a subscript or attribute store reads its base
        return st

    # ---- statements -------------------------------------------------------------------
    def block(self, stmts, st):
        for s in stmts:
            if st is None:
                break               # unreachable statements: nothing reaches them
            st = self.stmt(s, st)
        return st

    def stmt(self, s, st):
        if isinstance(s, ast.Assign):
            self.read(s.value, st)
            for t in s.targets:
                st = self.bind(t, st)
            return st
        if isinstance(s, ast.AnnAssign):
            self.read(s.value, st)
            return self.bind(s.target, st) if s.value is not None else st
        if isinstance(s, ast.AugAssign):
            self.read(s.value, st)
            if isinstance(s.target, ast.Name) and s.target.id not in self.skip:
                before = st.get(s.target.id, frozenset())
                load = ast.Name(s.target.id, ast.Load())
                self.uses.append((load, before))
                st = self.bind(s.target, st)
                self.joined.append((next(iter(st[s.target.id])), before))
                return st
            self.read(s.target, st)
            return st
        if isinstance(s, ast.Expr):
            self.read(s.value, st)
            return st
        if isinstance(s, (ast.Return, ast.Raise)):
            self.read(getattr(s, "value", None) or getattr(s, "exc", None), st)
            if isinstance(s, ast.Raise):
                self.read(s.cause, st)
            return None
        if isinstance(s, ast.Assert):
            self.read(s.test, st)
            self.read(s.msg, st)
            return st
        if isinstance(s, ast.If):
            self.read(s.test, st)
            return _merge(self.block(s.body, st), self.block(s.orelse, st))
        if isinstance(s, ast.While):
            return self.loop(s, st, None)
        if isinstance(s, ast.For):
            self.read(s.iter, st)
            return self.loop(s, st, s.target)
        if isinstance(s, ast.Break):
            self.loops[-1][0].append(st)
            return None
        if isinstance(s, ast.Continue):
            self.loops[-1][1].append(st)
            return None
        if isinstance(s, (ast.Pass, ast.Global, ast.Nonlocal)):
            return st
        if isinstance(s, ast.FunctionDef):
            for d in s.decorator_list:
                self.read(d, st)
            return self.bind(ast.Name(s.name, ast.Store()), st)
        raise _Unsupported()

    def loop(self, s, st, target):
        """A ``while`` (``target`` None) or ``for`` loop: its head's state to a fixed point
        (the definitions only grow, so it ends), then the ``else`` and the breaks."""
        head = st
        while True:
            mark = (len(self.uses), len(self.joined))
            self.loops.append(([], []))
            if target is None:
                self.read(s.test, head)
                body_in = head
            else:
                body_in = self.bind(target, head)
            end = self.block(s.body, body_in)
            breaks, conts = self.loops.pop()
            new_head = head
            for x in [end] + conts:
                new_head = _merge(new_head, x)
            if new_head == head:
                break
            # another round from the wider head: drop this round's reads (definitions keep
            # their ids from one round to the next)
            del self.uses[mark[0]:]
            del self.joined[mark[1]:]
            head = new_head
        out = self.block(s.orelse, head)
        for b in breaks:
            out = _merge(out, b)
        return out


def _merge(a, b):
    if a is None:
        return b
    if b is None:
        return a
    out = dict(a)
    for k, v in b.items():
        out[k] = out[k] | v if k in out else v
    return out


def _skipped(fnode):
    """Names this analysis leaves alone: read by nested functions, declared global or
    nonlocal."""
    out = set()
    todo = list(fnode.body)
    while todo:
        n = todo.pop()
        if isinstance(n, (ast.Global, ast.Nonlocal)):
            out.update(n.names)
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            out.update(m.id for m in ast.walk(n) if isinstance(m, ast.Name))
            out.update(a.arg for m in ast.walk(n) if isinstance(m, ast.arguments)
                       for a in m.args)
            continue
        todo.extend(ast.iter_child_nodes(n))
    return out


def split_versions(fnode):
    """``fnode`` (an ``ast.FunctionDef``), or a renamed copy of it when some name has more
    than one web (module docstring); the given tree is never changed (it may be shared)."""
    flow = _Flow(_skipped(fnode))
    params = [a.arg for a in fnode.args.args]
    if fnode.args.vararg is not None:
        params.append(fnode.args.vararg.arg)
    st = {p: frozenset({flow.new_def(p, None)}) for p in params if p not in flow.skip}
    try:
        flow.block(fnode.body, st)
    except (_Unsupported, IndexError):
        return fnode
    parent = list(range(len(flow.defs)))

    def find(x):
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    def union(ids):
        ids = list(ids)
        for other in ids[1:]:
            a, b = find(ids[0]), find(other)
            if a != b:
                parent[max(a, b)] = min(a, b)
    for _, reach in flow.uses:
        union(reach)
    for d, reach in flow.joined:
        union([d, *reach])
    webs = {}
    for d, (name, _) in enumerate(flow.defs):
        webs.setdefault(name, {}).setdefault(find(d), []).append(d)
    rename = {}         # id(node) -> new name
    taken = {n.id for n in ast.walk(fnode) if isinstance(n, ast.Name)} | set(params)
    for name, by_root in webs.items():
        if len(by_root) < 2:
            continue
        roots = sorted(by_root)     # the parameter's definition (or the first) keeps the name
        for k, root in enumerate(roots[1:], start=1):
            new = f"{name}__v{k}"
            while new in taken:
                new += "_"
            taken.add(new)
            for d in by_root[root]:
                node = flow.defs[d][1]
                if node is not None:
                    rename[id(node)] = new
            for use, reach in flow.uses:
                if reach and find(next(iter(reach))) == root and use.id == name:
                    rename[id(use)] = new
    if not rename:
        return fnode
    return _renamed(fnode, rename)


def source_name(name):
    """The name as written of a variable this module may have renamed (``arr__v1``)."""
    head, sep, tail = name.rpartition("__v")
    return head if sep and head and tail.rstrip("_").isdigit() else name


def source_text(node):
    """``ast.unparse(node)`` with the variables this module renamed spelled as written (for
    messages: ``n + 1``, never ``n__v1 + 1``)."""
    names = [m for m in ast.walk(node) if isinstance(m, ast.Name) and source_name(m.id) != m.id]
    if not names:
        return ast.unparse(node)
    copy_ = copy.deepcopy(node)
    for m in ast.walk(copy_):
        if isinstance(m, ast.Name):
            m.id = source_name(m.id)
    return ast.unparse(copy_)


def _renamed(fnode, rename):
    """A deep copy of ``fnode`` with the Name nodes of ``rename`` (by id in the original)
    given their new names; an augmented assignment's target follows its definition."""
    memo = {}
    out = copy.deepcopy(fnode, memo)
    for old_id, new in rename.items():
        node = memo.get(old_id)
        if isinstance(node, ast.Name):
            node.id = new
    return out
