"""``def`` nested inside a kernel or a device function, closing over its local variables
(numba.cuda inlines such closures; cujit compiles each into an internal device function).

- Typing (``s_FunctionDef``): the name is bound to ``Func("closure", InnerDef)``; the body is
  typed at each call for the argument types given there, as a device function whose extra
  trailing parameters are the caller's locals that the closures of that function read:
  their values at the time of the call, as Python's closures see them.
- The closure is called by its name; it cannot be passed to another device function, have
  default values or ``*args``, or assign to the enclosing function's variables (``nonlocal``
  is a TypingError as every other unsupported statement).  Recursion is a TypingError.
- Lowering: :func:`.lower_device.lower_closure_call`.
"""
import ast
import copy

from .callkinds import Call, CallKind, ClosureCall
from .errors import TypingError
from .rules import Func
from .scopes import local_names

__all__ = ["InnerDef", "define", "type_closure_call"]


class InnerDef:
    """A ``def`` statement ``node`` nested in the function of source ``outer`` (FunctionSource)."""
    __slots__ = ("node", "outer")

    def __init__(self, node, outer):
        self.node = node
        self.outer = outer

    def __repr__(self):
        return f"<closure {self.node.name}>"


def define(typer, s):
    """Type ``def`` statement ``s`` inside the function being typed: bind its name."""
    a = s.args
    if a.vararg or a.kwarg or a.kwonlyargs or a.defaults or getattr(a, "posonlyargs", None):
        raise typer.error("a function defined inside a kernel takes plain positional "
                          "parameters only (no defaults, *args or keyword-only parameters)", s)
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
    """Type a call of closure ``inner`` with argument types ``args``."""
    if kws:
        raise typer.error(f"keyword arguments to {inner.node.name}() (a function defined in "
                          "the kernel) are not supported", node)
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
