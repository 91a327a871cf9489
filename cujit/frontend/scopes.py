"""Scope and constant helpers of the typer: which names are local, which locals are bound
once to a constant expression, and the compile-time evaluation of constant expressions
(R-KER-3: a literal, a local variable bound to a constant expression, a global defined when
the kernel is compiled; tuples and arithmetic of those).
"""
import ast
import copy
import types

import numpy as np

from .. import types as T
from . import rules
from .errors import RequireLiteralValue
from .versions import source_text

__all__ = ["ConstEval", "local_names", "single_assignments", "stmt_name", "is_true_const",
           "has_break", "prune_constant_ifs", "stored_names", "none_test_operands"]

_TRUTH_VALUES = (bool, int, float, np.bool_, np.integer, np.floating, type(None))


class ConstEval:
    """Mixin of the typer: ``const_eval(node, what)`` / ``_const(node)`` /
    ``static_truth(test)``.  Needs ``locals``, ``const_locals``, ``stored``,
    ``_const_cache``, ``fsrc``, ``tf``, ``error`` and ``loc`` on the instance."""

    def const_eval(self, node, what):
        """The compile-time value of ``node`` (R-KER-3: a literal, a local bound once to a
        constant expression, a global/closure value, tuples and arithmetic of those).
        Raises RequireLiteralValue (a TypingError, numba's class for it) naming ``what``
        when it is not one."""
        ok, v = self._const(node)
        if not ok:
            raise RequireLiteralValue(
                f"{what} must be a compile-time constant: a literal, a local variable bound "
                "to a constant expression, or a global defined when the kernel is compiled; "
                f"'{source_text(node)}' is not (numba's RequireLiteralValue)", self.loc(node))
        return v

    def static_truth(self, test):
        """True/False when the ``if`` test ``test`` is decided at compile time, else None
        (numba's dead-branch pruning: a constant, a global or closure value, a parameter the
        function is specialised on, ``not``/``and``/``or``/comparisons of those, ``p is
        None`` / ``p is not None`` of a parameter whose type says which).  Local variables
        are not looked at: which assignment reaches the test depends on the control flow."""
        if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            v = self.static_truth(test.operand)
            return None if v is None else not v
        if isinstance(test, ast.BoolOp):
            vals = [self.static_truth(v) for v in test.values]
            if isinstance(test.op, ast.And):
                if False in vals:
                    return False
                return True if all(v is True for v in vals) else None
            if True in vals:
                return True
            return False if all(v is False for v in vals) else None
        if isinstance(test, ast.Compare) and len(test.ops) == 1 and \
                isinstance(test.ops[0], (ast.Is, ast.IsNot)):
            is_not = isinstance(test.ops[0], ast.IsNot)
            left, right = test.left, test.comparators[0]
            if _is_none(left):
                left, right = right, left
            if _is_none(right) and isinstance(left, ast.Name) and \
                    left.id in self.fsrc.argnames and left.id not in self.stored:
                t = self.tf.argtypes[self.fsrc.argnames.index(left.id)]
                if t is T.none:
                    return not is_not
                if isinstance(t, (T.Scalar, T.Array, T.UniTuple, T.Tuple, T.Record)):
                    return is_not
        decided = self._param_isinstance(test)
        if decided is not None:
            return decided
        if not self._fixed(test):
            return None
        ok, v = self._const(test)
        if not ok or not isinstance(v, _TRUTH_VALUES):
            return None
        return bool(v)

    def _param_isinstance(self, test):
        """``isinstance(p, classinfo)`` of a parameter ``p`` never assigned, with a constant
        ``classinfo``: its value from the parameter's type (Numba prunes the branch not
        taken, so it need not type); None for anything else, and for a refused
        ``isinstance``, which the typer then reports."""
        if not (isinstance(test, ast.Call) and isinstance(test.func, ast.Name) and
                test.func.id == "isinstance" and len(test.args) == 2 and not test.keywords
                and isinstance(test.args[0], ast.Name)):
            return None
        name = test.args[0].id
        if name not in self.fsrc.argnames or name in self.stored or \
                "isinstance" in self.locals or \
                self.fsrc.resolve_global("isinstance") != (True, isinstance):
            return None
        ok, classinfo = self._const(test.args[1])
        if not ok:
            return None
        try:
            return rules.isinstance_of(self.tf.argtypes[self.fsrc.argnames.index(name)],
                                       classinfo)
        except TypeError:
            return None

    def _fixed(self, node):
        """True when ``node`` reads no local variable other than a parameter specialised on
        its value or a tuple parameter whose length it takes (:meth:`_tuple_len`)."""
        lengths = {id(n.args[0]) for n in ast.walk(node) if self._tuple_len(n) is not None}
        for n in ast.walk(node):
            if isinstance(n, ast.Name) and n.id in self.locals and id(n) not in lengths and \
                    (n.id not in self.tf.literal_args or n.id in self.stored):
                return False
            if isinstance(n, ast.Attribute):
                ok, base = self._const(n.value)
                if ok and _kernel_api(base):
                    return False    # cuda.threadIdx.x: a value per thread, not a constant
        return True

    def _tuple_len(self, node):
        """``len(p)`` of a tuple parameter ``p`` never assigned (a device function's
        ``*args`` among them): its length, known from the parameter's type; else None."""
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and
                node.func.id == "len" and len(node.args) == 1 and not node.keywords and
                isinstance(node.args[0], ast.Name)):
            return None
        name = node.args[0].id
        if name not in self.fsrc.argnames or name in getattr(self, "stored", ()) or \
                "len" in self.locals or \
                self.fsrc.resolve_global("len") != (True, len):
            return None
        t = self.tf.argtypes[self.fsrc.argnames.index(name)]
        return len(t.types) if isinstance(t, (T.UniTuple, T.Tuple)) else None

    def _const(self, node):
        if isinstance(node, ast.Constant):
            return True, node.value
        n = self._tuple_len(node)
        if n is not None:
            return True, n
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
            except Exception:       # AttributeError; a kernel-API stub outside a kernel
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
        if isinstance(node, ast.Subscript):
            # SHAPE[0] of a constant tuple (numba folds getitem of a constant tuple)
            ok, base = self._const(node.value)
            ok2, key = self._const(node.slice) if ok else (False, None)
            if ok2 and isinstance(base, tuple) and isinstance(key, (int, np.integer)) and \
                    not isinstance(key, (bool, np.bool_)) and -len(base) <= key < len(base):
                return True, base[key]
        if isinstance(node, ast.Compare) and len(node.ops) == 1 and \
                type(node.ops[0]) in _CMPOPS:
            ok1, a = self._const(node.left)
            ok2, b = self._const(node.comparators[0])
            if ok1 and ok2 and isinstance(a, _TRUTH_VALUES) and isinstance(b, _TRUTH_VALUES):
                try:
                    return True, bool(_CMPOPS[type(node.ops[0])](a, b))
                except TypeError:
                    return False, None
        return False, None


def _kernel_api(obj):
    """True for cujit's modules and the objects its kernel API is made of (their
    attributes are per-thread values or compiler stubs, never constants to fold)."""
    if isinstance(obj, types.ModuleType):
        return obj.__name__.split(".")[0] == "cujit"
    return getattr(type(obj), "__module__", "").split(".")[0] == "cujit"


_JUMPS = (ast.Return, ast.Raise, ast.Break, ast.Continue)


def _is_none(node):
    return isinstance(node, ast.Constant) and node.value is None


_CMPOPS = {ast.Eq: lambda a, b: a == b, ast.NotEq: lambda a, b: a != b,
           ast.Lt: lambda a, b: a < b, ast.LtE: lambda a, b: a <= b,
           ast.Gt: lambda a, b: a > b, ast.GtE: lambda a, b: a >= b,
           ast.Is: lambda a, b: a is b, ast.IsNot: lambda a, b: a is not b}


def prune_constant_ifs(fnode, truth):
    """``fnode`` (an ``ast.FunctionDef``) with each ``if`` whose test ``truth(test)`` decides
    (True/False; None: not decided) replaced by the branch taken, as numba prunes dead
    branches before typing, and each decided conditional expression (``a if test else b``) by
    its branch taken; the same object when nothing is decided.  The tree is shared (the parsed
    file), so only the statements on the way to a pruned ``if`` are copied (the whole function
    when a conditional expression is pruned)."""
    def block(stmts):
        out, changed = [], False
        for s in stmts:
            if isinstance(s, ast.If):
                v = truth(s.test)
                if v is not None:
                    taken, _ = block(s.body if v else s.orelse)
                    out.extend(taken)
                    changed = True
                    if taken and isinstance(taken[-1], _JUMPS):
                        break       # what follows the branch taken is never reached
                    continue
            fields = [f for f in ("body", "orelse", "finalbody") if isinstance(
                getattr(s, f, None), list)] if not isinstance(s, ast.FunctionDef) else []
            new = {}
            for f in fields:
                b, c = block(getattr(s, f))
                if c:
                    new[f] = b or ([_at(ast.Pass(), s)] if f == "body" else [])
            if new:
                s = copy.copy(s)
                for f, b in new.items():
                    setattr(s, f, b)
                changed = True
            out.append(s)
        return out, changed
    body, changed = block(fnode.body)
    if changed:
        fnode = copy.copy(fnode)
        fnode.body = body or [_at(ast.Pass(), fnode)]
    return _prune_constant_ifexps(fnode, truth)


class _TakenBranch(ast.NodeTransformer):
    """Each ``a if test else b`` whose test ``truth`` decides replaced by its branch taken
    (``v = y[i] if y is not None else 0.0`` with ``y`` None never types ``y[i]``)."""

    def __init__(self, truth):
        self.truth = truth
        self.top = True

    def visit_FunctionDef(self, node):
        if not self.top:
            return node     # a nested function is typed with its own parameters
        self.top = False
        return self.generic_visit(node)

    def visit_Lambda(self, node):
        return node

    def visit_IfExp(self, node):
        v = self.truth(node.test)
        if v is None:
            return self.generic_visit(node)
        return self.visit(node.body if v else node.orelse)


def _prune_constant_ifexps(fnode, truth):
    """``fnode`` with its decided conditional expressions pruned (:class:`_TakenBranch`);
    the same object when none is decided, else a copy (the parsed tree is shared)."""
    if not any(isinstance(n, ast.IfExp) and truth(n.test) is not None
               for n in ast.walk(fnode)):
        return fnode
    return _TakenBranch(truth).visit(copy.deepcopy(fnode))


def _at(node, where):
    return ast.copy_location(node, where)


def stored_names(fnode):
    """Names the function's own body assigns (parameters rebound included)."""
    out = set()
    for n in _walk_own(fnode):
        if isinstance(n, ast.Name) and isinstance(n.ctx, (ast.Store, ast.Del)):
            out.add(n.id)
    return out


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


def none_test_operands(node):
    """The ids of the ``ast.Name`` nodes under ``node`` that a parameter given None may be:
    an operand of a comparison with the constant None (``y is None``, ``y is not None``) or
    an argument of a call (a device function takes None as its parameter).  Any other read of
    such a parameter is a TypingError (the typer's ``e_Name``)."""
    ok = set()
    for n in ast.walk(node):
        if isinstance(n, ast.Compare) and len(n.ops) == 1:
            left, right = n.left, n.comparators[0]
            if _is_none(left):
                left, right = right, left
            if _is_none(right) and isinstance(left, ast.Name):
                ok.add(id(left))
        elif isinstance(n, ast.Call):
            ok.update(id(a) for a in list(n.args) + [k.value for k in n.keywords]
                      if isinstance(a, ast.Name))
    return ok
