"""Calls of device functions: binding positional and keyword arguments, default values and
``*args`` to the callee's parameters (Python's rules, as numba.cuda applies them), and typing the
callee for the bound types (lowered by :mod:`.lower_device`).

- Keyword arguments name parameters; a parameter given twice, an unknown keyword, a missing
  argument or too many positional arguments (without ``*args``) are TypingErrors worded as
  Python's TypeErrors.
- A default value must be a number or bool constant (it is typed as the literal it is).
- ``*args`` collects the extra positional arguments into a tuple (``()`` when none), which
  the callee indexes, iterates, unpacks or passes on; ``f(*t)`` at a call site spreads tuple
  ``t`` into positional arguments.
- A device function declared with signatures (``jit(sigs, device=True)``) is typed for the
  one its arguments convert to best (:mod:`.overloads`), each argument converted to it;
  TypingError ("Invalid use of type ...") when none takes them.
- Functions and intrinsics may be passed as values (``Func`` pseudo-types): the callee is
  typed (and lowered) once per distinct function, which takes no parameter at run time.
"""
import ast

import numpy as np

from ... import types as T
from .. import rules
from ..callkinds import Call, CallKind, DeviceCall
from ..closures import escape
from ..const_types import const_type
from ..errors import TypingError
from ..source import DeviceFunctionLike, FunctionSource, SourceOwner
from ..jitoptions import inline_always
from ..linkable import same_entry
from ..overloads import best_overloads

__all__ = ["type_device_call", "bind_device_call", "type_starred_call"]


def _check_value(typer, anode, t, constant=False):
    """``t``, the type of argument ``anode``, as the callee gets it: a closure escapes (a
    device function of its own, :func:`.closures.escape`); ``constant``: the parameter is
    used as a compile-time constant (``FunctionSource.constant_params``), so a compile-time
    object (a dtype string, a NumPy dtype) is passed as a value the callee is typed for.
    TypingError for a pseudo-type that cannot be passed."""
    if isinstance(t, rules.Func) and t.kind is CallKind.CLOSURE:
        return rules.Func("device", escape(typer, t.data, anode))
    if constant and isinstance(t, rules.Global) and t.obj is not None:
        return t
    if isinstance(t, rules.PseudoType) and not isinstance(t, rules.Func):
        raise typer.error(f"cannot pass {t} to a device function", anode)
    return t


def _literal_type(value, t):
    """The type that specialises a callee on ``value``, an argument of type ``t`` known at
    compile time: ``IntegerLiteral`` for an int or a bool, a tuple of them for a tuple of
    ints; None for other values (functions and compile-time objects carry their value in
    their type already; floats are not specialised on)."""
    def lit(v, et):
        if isinstance(v, (bool, np.bool_)) and et is T.boolean:
            return T.IntegerLiteral(T.boolean, int(v))      # tested by an ``if``: pruned
        if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, np.integer)) or \
                not isinstance(et, T.Integer):
            return None
        return T.IntegerLiteral(et, int(v))
    if isinstance(value, tuple) and isinstance(t, (T.UniTuple, T.Tuple)) and \
            len(value) == len(t.types) and value:
        parts = [lit(v, et) for v, et in zip(value, t.types)]
        return None if None in parts else T.Tuple(tuple(parts))
    return lit(value, t)


def type_starred_call(typer, node, dev, kind=CallKind.DEVICE):
    """Type ``dev(a, *t, ...)``: each ``*t`` (a tuple) gives its elements as positional
    arguments, as in Python; ``kind``: the call's kind (``DEVICE``, or ``KERNEL`` for a
    kernel called as a device function).  Returns the call's type (None while an argument
    is untyped)."""
    positional = []
    for a in node.args:
        if isinstance(a, ast.Starred):
            t = typer.expr(a.value)
            if t is None:
                return None
            if not isinstance(t, (T.UniTuple, T.Tuple)):
                raise typer.error(f"*{ast.unparse(a.value)} in a call must be a tuple, got {t}",
                                  a)
            positional += [(("elt", a.value, i), et) for i, et in enumerate(t.types)]
        else:
            t = typer.expr(a)
            if t is None:
                return None
            positional.append((a, t))
    kws = {kw.arg: typer.expr(kw.value) for kw in node.keywords}
    if any(v is None for v in kws.values()):
        return None
    return type_device_call(typer, node, dev, [t for _, t in positional], kws, positional,
                            kind)


def type_device_call(typer, node, dev, args, kws, positional=None, kind=CallKind.DEVICE):
    """Type call ``node`` of device function ``dev`` with positional types ``args`` and
    keyword types ``kws`` ({name: type}); records its ``Call(kind, DeviceCall)`` (``kind``:
    ``DEVICE``, or ``KERNEL`` for a ``@jit`` kernel called from device code, which numba-cuda
    compiles as a device function for the call's types).
    ``positional``: ``(ast node or ("elt", tuple node, index), type)`` per positional
    argument when a ``*tuple`` was expanded (default: ``node.args``).  The function's
    ``link=`` entries join ``typer.env.linked``."""
    dc = bind_device_call(typer, node, dev, args, kws, positional)
    typer.tf.info[node] = Call(kind, dc)
    # jit(device=True, link=[...]): the code goes with every kernel calling the function
    link = (getattr(dev, "targetoptions", None) or {}).get("link")
    if link:
        for entry in link if isinstance(link, (list, tuple)) else (link,):
            if not any(same_entry(entry, x) for x in typer.env.linked):
                typer.env.linked.append(entry)
    return dc.callee.return_type


def bind_device_call(typer, node, dev, args, kws, positional=None):
    """The :class:`DeviceCall` of call ``node`` of ``dev`` (an object with ``py_func`` and
    optionally ``targetoptions``), its callee typed for the bound argument types; records
    nothing (the caller records the call's kind).  Arguments as :func:`type_device_call`."""
    pyfunc = getattr(dev, "py_func", None)
    if pyfunc is None:
        raise typer.error(f"device function {dev!r} has no .py_func", node)
    # a device function object keeps its parsed source (it dies with the object)
    fsrc = dev.source() if isinstance(dev, SourceOwner) else FunctionSource.from_pyfunc(pyfunc)
    a = fsrc.node.args
    params = [p.arg for p in a.args]
    name = fsrc.name
    defaults = pyfunc.__defaults__ or ()
    nreq = len(params) - len(defaults)
    bound = [None] * len(params)
    extra = []
    if positional is None:
        positional = list(zip(node.args, args))
    constant = fsrc.constant_params()
    for i, (anode, t) in enumerate(positional):
        t = _check_value(typer, anode[1] if isinstance(anode, tuple) else anode, t,
                         i < len(params) and params[i] in constant)
        if i < len(params):
            bound[i] = ("node", anode, t)
        else:
            extra.append((anode, t))
    if extra and a.vararg is None:
        raise typer.error(f"{name}() takes {len(params)} positional argument(s) but "
                          f"{len(args)} were given", node)
    kwnodes = {kw.arg: kw.value for kw in node.keywords}
    for k, t in kws.items():
        if k not in params:
            raise typer.error(f"{name}() got an unexpected keyword argument '{k}'",
                              kwnodes[k])
        idx = params.index(k)
        if bound[idx] is not None:
            raise typer.error(f"{name}() got multiple values for argument '{k}'", kwnodes[k])
        t = _check_value(typer, kwnodes[k], t, k in constant)
        bound[idx] = ("node", kwnodes[k], t)
    for idx, b in enumerate(bound):
        if b is not None:
            continue
        if idx < nreq:
            raise typer.error(f"{name}() missing required argument '{params[idx]}'", node)
        value = defaults[idx - nreq]
        t, info = const_type(value)
        if not isinstance(t, T.Scalar) or info is not None:
            raise typer.error(f"default value {value!r} of parameter '{params[idx]}' of "
                              f"{name}() is not supported in kernels (use a number or bool)",
                              node)
        bound[idx] = ("const", value, t)
    argtypes = [b[2] for b in bound]
    declared_return = None
    declared = getattr(dev, "sigs", None) if isinstance(dev, DeviceFunctionLike) else None
    if declared and a.vararg is None:
        # jit(sigs, device=True): typed for the declared signature the arguments convert to
        # best, unsafe conversions included, the first of equals (numba's resolution); the
        # lowering converts each argument to it
        best = best_overloads(tuple(argtypes), [sig.args for sig in declared])
        if not best:
            raise typer.error(
                f"Invalid use of type {dev!r} with parameters "
                f"({', '.join(map(str, argtypes))}): no declared signature of {name}() takes "
                f"them; declared: "
                f"{'; '.join('(' + ', '.join(map(str, sig.args)) + ')' for sig in declared)}",
                node)
        argtypes = list(best[0])
        # a recursive call of a function being typed takes its declared return type
        declared_return = next((sig.return_type for sig in declared
                               if tuple(sig.args) == tuple(best[0])), None)
        constant = ()
    for idx, b in enumerate(bound):
        if params[idx] in constant and b[0] == "node" and not isinstance(b[1], tuple):
            ok, v = typer._const(b[1])
            lt = _literal_type(v, b[2]) if ok else None
            if lt is not None:
                argtypes[idx] = lt      # the callee is typed for this value
    if a.vararg is not None:
        for anode, t in extra:
            if isinstance(t, rules.PseudoType):
                raise typer.error(f"cannot pass {t} in *{a.vararg.arg}",
                                  anode[1] if isinstance(anode, tuple) else anode)
        tt = T.Tuple(tuple(t for _, t in extra))
        bound.append(("star", [n for n, _ in extra], tt))
        argtypes.append(tt)
    try:
        callee = typer.infer_device(pyfunc, tuple(argtypes), source=fsrc,
                                    return_type=declared_return)
    except TypingError as e:
        # the error is in the callee's source; say which call led there (numba's words)
        loc = typer.loc(node)
        e.add_context(f"resolving callee type: type(CUDADispatcher({pyfunc!r}))")
        e.add_context(f'typing of call at File "{loc.filename}", line {loc.line}')
        raise
    opts = getattr(dev, "targetoptions", None) or {}
    # numba-cuda: inline="always" inlines the call before LLVM (none is left in the IR),
    # forceinline=True gives the function LLVM's alwaysinline attribute
    callee.inline = inline_always(opts.get("inline"))
    if callee.inline and callee.recursive:
        raise typer.error(f"{name}() is recursive and cannot be inlined (jit(inline="
                          f"'always') copies its body into each call)", node)
    callee.force_inline = bool(opts.get("forceinline"))
    typer.tf.callees.append(callee)
    return DeviceCall(callee, bound)
