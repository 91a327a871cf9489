"""``def`` nested inside a kernel or a device function, closing over its local variables
(numba.cuda inlines such closures; cujit compiles each into an internal device function).

- Typing (``s_FunctionDef``): the name is bound to ``Func("closure", InnerDef)``; the body is
  typed at each call for the argument types given there, as a device function whose extra
  trailing parameters are the caller's locals that the closures of that function read:
  their values at the time of the call, as Python's closures see them.
- The closure is called by its name; it cannot assign to the enclosing function's variables
  (``nonlocal`` is a TypingError as every other unsupported statement).  Recursion is a
  TypingError.
- A closure that escapes (passed to a device function or kernel, as numba-cuda's
  ``MakeFunctionToJitFunction`` pass allows), or that has default values or ``*args``, or is
  called with keywords or ``*t``, is an :class:`EscapedClosure`: a device function whose
  free variables are the enclosing function's compile-time constants, baked in (numba-cuda's
  rule; a non-constant one is a TypingError with numba-cuda's words).  It is called as a
  device function (``calls.device``: ``CallKind.DEVICE``).
- Lowering: :func:`.lower_device.lower_closure_call`.
"""
import ast
import copy

from .callkinds import Call, CallKind, ClosureCall
from .errors import TypingError
from .source import SourceOwner
from .rules import Func
from .scopes import local_names

__all__ = ["InnerDef", "EscapedClosure", "define", "type_closure_call", "escape",
           "needs_escape"]


class InnerDef:
    """A ``def`` statement ``node`` nested in the function of source ``outer`` (FunctionSource)."""
    __slots__ = ("node", "outer")

    def __init__(self, node, outer):
        self.node = node
        self.outer = outer

    def __repr__(self):
        return f"<closure {self.node.name}>"


class EscapedClosure(SourceOwner):
    """A closure compiled as a device function on its own (see the module docstring):
    ``py_func`` is itself (what :func:`.calls.device.bind_device_call` reads: its
    ``__defaults__``, the constant values of the ``def``'s defaults) and :meth:`source` its
    FunctionSource, whose closure values hold the enclosing function's constants it reads.
    Made once per ``def`` by the typer of the function defining it."""

    def __init__(self, inner, fsrc, defaults):
        self.inner = inner
        self.py_func = self
        self.__defaults__ = defaults
        self.__dict__["_fsrc"] = fsrc

    def __repr__(self):
        return f"<closure {self.inner.node.name}>"


def needs_escape(inner, node):
    """True when call ``node`` of closure ``inner`` (an InnerDef) needs the closure compiled
    as an :class:`EscapedClosure`: the ``def`` has defaults or ``*args``, or the call passes
    keywords or ``*t``."""
    a = inner.node.args
    return bool(a.defaults or a.vararg or node.keywords or
                any(isinstance(x, ast.Starred) for x in node.args))


def escape(typer, inner, node):
    """The :class:`EscapedClosure` of closure ``inner`` defined in the function ``typer``
    types, at ``node`` (where it escapes or is called).  TypingError when ``typer`` is not the
    defining function's typer, or when the closure reads a variable of it that is not a
    compile-time constant (numba-cuda's "Cannot capture the non-constant value")."""
    if isinstance(inner, EscapedClosure):
        return inner
    if inner.outer is not typer.fsrc:
        raise typer.error(f"{inner.node.name}() (a function defined inside a kernel) can be "
                          "passed on only by the function that defines it", node)
    cache = typer.tf.__dict__.setdefault("escaped_defs", {})
    hit = cache.get(inner.node)
    if hit is not None:
        return hit
    own = set(local_names(inner.node))
    consts = {}
    for n in ast.walk(inner.node):
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load) and n.id not in own \
                and n.id in typer.locals and n.id not in consts:
            ok, v = typer._const(n)
            if not ok or isinstance(v, (Func, InnerDef)):
                raise typer.error(_not_constant(typer, inner, n.id), n)
            consts[n.id] = v
    defaults = tuple(typer.const_eval(d, f"a default value of {inner.node.name}()")
                     for d in inner.node.args.defaults)
    outer = inner.outer
    src = copy.copy(outer)
    src.node = inner.node
    src.argnames = [x.arg for x in inner.node.args.args]
    if inner.node.args.vararg is not None:
        src.argnames.append(inner.node.args.vararg.arg)
    src.name = inner.node.name
    src.qualname = f"{outer.qualname}.<locals>.{inner.node.name}"
    src.closure = dict(outer.closure, **consts)
    for cached in ("_sizing", "_constant"):     # facts of the outer function
        src.__dict__.pop(cached, None)
    esc = cache[inner.node] = EscapedClosure(inner, src, defaults)
    return esc


def _not_constant(typer, inner, name):
    """numba-cuda's words for free variable ``name`` of an escaping closure that is not a
    compile-time constant: assigned more than once, or of a value known only at run time."""
    stores = sum(1 for n in ast.walk(typer.fsrc.node)
                 if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store) and n.id == name)
    why = (f"{inner.node.name}() is compiled on its own: it can read only constants of the "
           "enclosing function")
    if stores > 1 and name not in typer.fsrc.argnames:
        return (f"Cannot capture a constant value for variable '{name}' as there are "
                f"multiple definitions present ({why})")
    return (f"Cannot capture the non-constant value associated with variable '{name}' in a "
            f"function that may escape ({why})")


def define(typer, s):
    """Type ``def`` statement ``s`` inside the function being typed: bind its name."""
    a = s.args
    if a.kwarg or a.kwonlyargs or getattr(a, "posonlyargs", None):
        raise typer.error("a function defined inside a kernel takes plain positional "
                          "parameters only (with defaults and *args; no keyword-only or "
                          "positional-only parameters, no **kwargs)", s)
    if s.decorator_list:
        raise typer.error("a function defined inside a kernel cannot have decorators", s)
    cache = typer.tf.__dict__.setdefault("inner_defs", {})
    inner = cache.get(s)
    if inner is None:
        inner = cache[s] = InnerDef(s, typer.fsrc)
    typer.set_var(s.name, Func("closure", inner), s)


def _free_vars(typer, inner):
    """The locals of the calling function (``typer``'s) that closure ``inner`` gets as extra
    parameters: every name read in any ``def`` of ``inner``'s defining function that is
    local to the caller and not bound by ``inner`` itself, in first-use order.  A superset
    of what ``inner`` reads, so that a closure calling a sibling closure passes on what the
    sibling reads (the extra parameters cost nothing once NVVM inlines)."""
    own = local_names(inner.node)
    out = []
    for d in ast.walk(inner.outer.node):
        if not isinstance(d, ast.FunctionDef) or d is inner.outer.node:
            continue
        for n in ast.walk(d):
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load) and n.id not in own \
                    and n.id in typer.locals and n.id not in out:
                out.append(n.id)
    return out


def _inner_source(inner, free):
    """A FunctionSource for the closure: the outer source with a synthetic def node whose
    parameters are the closure's own then ``free``."""
    outer = inner.outer
    node = inner.node
    args = copy.copy(node.args)
    args.args = list(node.args.args) + [ast.copy_location(ast.arg(arg=f), node) for f in free]
    fnode = copy.copy(node)
    fnode.args = args
    src = copy.copy(outer)
    src.node = fnode
    src.argnames = [x.arg for x in args.args]
    src.name = node.name
    src.qualname = f"{outer.qualname}.<locals>.{node.name}"
    return src


def type_closure_call(typer, node, inner, args, kws):
    """Type a call of closure ``inner`` with argument types ``args`` (a call that
    :func:`needs_escape`, one with keywords, is typed by the caller as a device call of
    :func:`escape`)."""
    want = len(inner.node.args.args)
    if len(args) != want:
        raise typer.error(f"{inner.node.name}() takes {want} argument(s) but {len(args)} "
                          "were given", node)
    free = _free_vars(typer, inner)
    ftypes = []
    for f in free:
        t = typer.tf.vartypes.get(f)
        if t is None:
            return None         # not typed yet in this pass
        ftypes.append(t)
    argtypes = tuple(args) + tuple(ftypes)
    env = typer.env
    key = (("closure", id(inner.node), inner.outer.pyfunc), argtypes)
    tf = env.typed.get(key)
    if tf is None:
        if key[0] in env.stack:
            raise TypingError(f"recursive call of {inner.node.name}() is not supported",
                              typer.loc(node))
        env.stack.append(key[0])
        try:
            tf = typer.type_function(_inner_source(inner, free), argtypes)
        finally:
            env.stack.pop()
        env.typed[key] = tf
    typer.tf.callees.append(tf)
    typer.tf.info[node] = Call(CallKind.CLOSURE, ClosureCall(tf, tuple(free)))
    return tf.return_type
