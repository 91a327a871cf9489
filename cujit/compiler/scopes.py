"""Scope and constant helpers of the typer: which names are local, which locals are bound
once to a constant expression, and the compile-time evaluation of constant expressions
(R-KER-3: a literal, a local variable bound to a constant expression, a global defined when
the kernel is compiled; tuples and arithmetic of those).
"""
import ast

import numpy as np

__all__ = ["ConstEval", "local_names", "single_assignments", "stmt_name", "is_true_const",
           "has_break"]


class ConstEval:
    """Mixin of the typer: ``const_eval(node, what)`` / ``_const(node)``.  Needs ``locals``,
    ``const_locals``, ``_const_cache``, ``fsrc`` and ``error`` on the instance."""

    def const_eval(self, node, what):
        """The compile-time value of ``node`` (R-KER-3: a literal, a local bound once to a
        constant expression, a global/closure value, tuples and arithmetic of those).
        Raises TypingError naming ``what`` when it is not one."""
        ok, v = self._const(node)
        if not ok:
            raise self.error(f"{what} must be a compile-time constant: a literal, a local "
                             "variable bound to a constant expression, or a global defined "
                             f"when the kernel is compiled; '{ast.unparse(node)}' is not",
                             node)
        return v

    def _const(self, node):
        if isinstance(node, ast.Constant):
            return True, node.value
        if isinstance(node, ast.Name):
            name = node.id
            if name in self.locals:
                src = self.const_locals.get(name)
                if src is None:
                    lit = self.tf.literal_args
                    if name in lit and name in self.tf.fsrc.argnames:
                        return True, lit[name]      # a parameter specialised on its value
                    return False, None
                key = id(src)
                if key in self._const_cache:
                    return self._const_cache[key]
                self._const_cache[key] = (False, None)    # guards self-reference
                r = self._const(src)
                self._const_cache[key] = r
                return r
            return self.fsrc.resolve_global(name)
        if isinstance(node, ast.Attribute):
            ok, base = self._const(node.value)
            if not ok:
                return False, None
            try:
                if node.attr == "laneid" and getattr(base, "__name__", "") == "cujit":
                    return False, None
                return True, getattr(base, node.attr)
            except AttributeError:
                return False, None
        if isinstance(node, (ast.Tuple, ast.List)):
            vals = []
            for e in node.elts:
                ok, v = self._const(e)
                if not ok:
                    return False, None
                vals.append(v)
            return True, tuple(vals)
        if isinstance(node, ast.BinOp) and type(node.op) in _BINOPS:
            ok1, a = self._const(node.left)
            ok2, b = self._const(node.right)
            if ok1 and ok2:
                try:
                    return True, _PYOPS[type(node.op)](a, b)
                except Exception:
                    return False, None
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
            ok, a = self._const(node.operand)
            if ok and isinstance(a, (int, float, np.number)):
                return True, (-a if isinstance(node.op, ast.USub) else a)
        return False, None


_BINOPS = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.FloorDiv: "//",
           ast.Mod: "%", ast.Pow: "**", ast.BitAnd: "&", ast.BitOr: "|", ast.BitXor: "^",
           ast.LShift: "<<", ast.RShift: ">>"}
_PYOPS = {ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b,
          ast.Mult: lambda a, b: a * b, ast.FloorDiv: lambda a, b: a // b,
          ast.Mod: lambda a, b: a % b, ast.Pow: lambda a, b: a ** b,
          ast.Div: lambda a, b: a / b, ast.BitAnd: lambda a, b: a & b,
          ast.BitOr: lambda a, b: a | b, ast.BitXor: lambda a, b: a ^ b,
          ast.LShift: lambda a, b: a << b, ast.RShift: lambda a, b: a >> b}


def stmt_name(s):
    return {"FunctionDef": "def", "ClassDef": "class", "With": "with", "Try": "try",
            "Raise": "raise", "Global": "global", "Nonlocal": "nonlocal", "Delete": "del",
            "Import": "import", "ImportFrom": "import", "AsyncFunctionDef": "async def",
            "Lambda": "lambda", "Match": "match", "TryStar": "try"}.get(
        type(s).__name__, type(s).__name__)


def _targets(t, out):
    if isinstance(t, ast.Name):
        out.append(t.id)
    elif isinstance(t, (ast.Tuple, ast.List)):
        for e in t.elts:
            _targets(e, out)
    elif isinstance(t, ast.Starred):
        _targets(t.value, out)


def _walk_own(fnode):
    """``ast.walk`` of ``fnode`` that does not enter nested functions' bodies."""
    todo = [fnode]
    while todo:
        n = todo.pop()
        yield n
        if n is not fnode and isinstance(n, (ast.FunctionDef, ast.Lambda)):
            continue
        todo.extend(ast.iter_child_nodes(n))


def local_names(fnode):
    """Names bound in the function (arguments and assignment/loop targets) — Python's rule
    for what is local."""
    out = [a.arg for a in fnode.args.args]
    if fnode.args.vararg is not None:
        out.append(fnode.args.vararg.arg)
    for n in _walk_own(fnode):
        if isinstance(n, ast.FunctionDef) and n is not fnode:
            out.append(n.name)      # a nested def binds its name; its body is its own scope
        elif isinstance(n, ast.Assign):
            for t in n.targets:
                _targets(t, out)
        elif isinstance(n, (ast.AugAssign, ast.AnnAssign, ast.For)):
            _targets(n.target, out)
        elif isinstance(n, ast.NamedExpr):
            _targets(n.target, out)
    return set(out)


def single_assignments(fnode, local_names):
    """{name: rhs ast} for locals assigned exactly once by ``name = expr`` (candidates for
    R-KER-3's "local variable bound to a constant expression")."""
    counts, rhs = {}, {}
    for a in fnode.args.args:
        counts[a.arg] = 2
    if fnode.args.vararg is not None:
        counts[fnode.args.vararg.arg] = 2
    for n in _walk_own(fnode):
        if isinstance(n, ast.FunctionDef) and n is not fnode:
            counts[n.name] = counts.get(n.name, 0) + 2
            continue
        if isinstance(n, ast.Assign):
            for t in n.targets:
                names = []
                _targets(t, names)
                for nm in names:
                    counts[nm] = counts.get(nm, 0) + 1
                    rhs[nm] = n.value if isinstance(t, ast.Name) else None
        elif isinstance(n, (ast.AugAssign, ast.AnnAssign, ast.For, ast.NamedExpr)):
            names = []
            _targets(n.target, names)
            for nm in names:
                counts[nm] = counts.get(nm, 0) + 2
    return {nm: rhs[nm] for nm, c in counts.items() if c == 1 and rhs.get(nm) is not None}


def is_true_const(node):
    return isinstance(node, ast.Constant) and bool(node.value) is True


def has_break(loop):
    for n in ast.walk(loop):
        if isinstance(n, ast.Break):
            return True
    return False
