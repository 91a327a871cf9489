"""``for x in literal_unroll(tup): body`` as one copy of ``body`` per element of ``tup``.

numba's ``literal_unroll`` lets the loop variable take a different type in each iteration
(a tuple of arrays of different dtypes, shapes and layouts).  A kernel variable has one
type, so the loop over a compile-time tuple (a global or closure variable) is written out
before typing (a tuple written in the call, ``literal_unroll((a, b))``, the same way)::

    x = tup[0]          # tup[i]: the element itself, a compile-time constant
    body
    x = tup[1]
    body
    ...
    orelse

and ``frontend/versions.py`` then makes each ``x`` its own variable.  Both backends read
the one typing of the written-out loop.  ``break`` and ``continue`` in the body (outside
loops nested in it) have no written-out form here: a TypingError.
"""
import ast
import copy

from .. import kernelapi
from .errors import TypingError

__all__ = ["unroll_literal_loops"]


def _is_literal_unroll(value):
    if value is kernelapi.literal_unroll:
        return True
    # numba's own (numba.misc.special / numba.cuda.misc.special), when user code imports it
    return getattr(value, "__name__", None) == "literal_unroll" and \
        str(getattr(value, "__module__", "")).startswith("numba.")


def _callee(fsrc, func, local_names):
    if isinstance(func, ast.Name) and func.id not in local_names:
        return fsrc.resolve_global(func.id)
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and \
            func.value.id not in local_names:
        found, mod = fsrc.resolve_global(func.value.id)
        if found and hasattr(mod, func.attr):
            return True, getattr(mod, func.attr)
    return False, None


def _unrolled_tuple(fsrc, loop, local_names):
    """The compile-time tuple (or the element nodes of a tuple display) a ``for`` loop
    iterates through ``literal_unroll``, else None.  TypingError for a ``literal_unroll`` of anything else."""
    it = loop.iter
    if not (isinstance(it, ast.Call) and len(it.args) == 1 and not it.keywords):
        return None
    found, fn = _callee(fsrc, it.func, local_names)
    if not (found and _is_literal_unroll(fn)):
        return None
    arg = it.args[0]
    if isinstance(arg, ast.Tuple) and not any(isinstance(e, ast.Starred) for e in arg.elts):
        return tuple(arg.elts)      # a tuple display: its elements are known
    value = None
    if isinstance(arg, ast.Name) and arg.id not in local_names:
        found, value = fsrc.resolve_global(arg.id)
    if not isinstance(value, tuple):
        raise TypingError("literal_unroll() in a kernel takes a tuple written in the call or "
                          "held by a global or closure variable (its length is known when "
                          f"compiling), got '{ast.unparse(arg)}'", fsrc.location(arg))
    return value


class _Jumps(ast.NodeVisitor):
    """Finds a ``break``/``continue`` of the loop itself (not of a loop nested in it)."""

    def __init__(self):
        self.found = None

    def visit_Break(self, node):
        self.found = self.found or node

    visit_Continue = visit_Break

    def visit_For(self, node):
        for s in node.orelse:
            self.visit(s)

    visit_While = visit_For

    def visit_FunctionDef(self, node):
        pass


class _Unroll(ast.NodeTransformer):
    def __init__(self, fsrc, local_names):
        self.fsrc = fsrc
        self.local_names = local_names

    def visit_For(self, node):
        self.generic_visit(node)
        tup = _unrolled_tuple(self.fsrc, node, self.local_names)
        if tup is None:
            return node
        jumps = _Jumps()
        for s in node.body:
            jumps.visit(s)
        if jumps.found is not None:
            raise TypingError("break/continue in a literal_unroll loop is not supported in "
                              "kernels (the loop is written out once per element)",
                              self.fsrc.location(jumps.found))
        out = []
        for i in range(len(tup)):
            elem = ast.Subscript(copy.deepcopy(node.iter.args[0]), ast.Constant(i), ast.Load())
            assign = ast.Assign([copy.deepcopy(node.target)], elem)
            for n in ast.walk(assign):
                ast.copy_location(n, node.target)
            out.append(assign)
            out.extend(copy.deepcopy(node.body))
        out.extend(node.orelse)
        return out or [ast.copy_location(ast.Pass(), node)]


def unroll_literal_loops(fsrc, node):
    """``node`` (a function's ast), or a copy of it with its ``literal_unroll`` loops
    written out (the parsed file is shared, so the original is never changed)."""
    if not any(isinstance(n, ast.For) and isinstance(n.iter, ast.Call)
               for n in ast.walk(node)):
        return node
    local_names = {a.arg for a in ast.walk(node.args) if isinstance(a, ast.arg)}
    for n in ast.walk(node):
        if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load):
            local_names.add(n.id)
    if not any(isinstance(n, ast.For) and _unrolled_tuple(fsrc, n, local_names) is not None
               for n in ast.walk(node)):
        return node
    return _Unroll(fsrc, local_names).visit(copy.deepcopy(node))
