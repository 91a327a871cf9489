"""Typing of calls of the extension API's functions (``cujit.extending``): overloaded
functions (``CallKind.OVERLOAD``) and intrinsics (``CallKind.USER_INTRINSIC``).

Behaviour reference: Numba's "High-level extension API".  One difference: typing functions
receive *cujit* types (``cujit.types``: ``cujit.int64``, ``cujit.float32[::1]``...), not
Numba's; a Python int constant is ``int64``, offered as a ``Literal[int]`` too (numba's
``prefer_literal`` order).
"""
import ast
import inspect
import types as pytypes

from ... import types as T
from ...numba_types import from_numba_signature
from .. import rules
from ..callkinds import Call, CallKind, OverloadCall, UserIntrinsic
from .device import bind_device_call
from ..extensions import Implementation, overloads

__all__ = ["type_overload_call", "type_user_intrinsic", "TypingContext"]


def _name(func):
    return getattr(func, "__qualname__", None) or getattr(func, "__name__", None) or repr(func)


def _types_text(args, kws):
    parts = [str(t) for t in args] + [f"{k}={t}" for k, t in kws.items()]
    return f"({', '.join(parts)})"


def _literal(arg, t):
    """``Literal[int](v)`` for an integer constant argument ``arg`` (an ast node) of type
    ``t``, else ``t``."""
    if isinstance(arg, ast.Constant) and type(arg.value) is int and rules.is_int(t):
        return T.IntegerLiteral(t, arg.value)
    return t


def _candidates(reg, node, args, kws):
    """The argument types to offer ``reg``'s typing function, in order: the plain ones and,
    when some argument is an integer constant, the literal ones (first with
    ``prefer_literal``), as numba's overload resolution."""
    lit_args = tuple(_literal(a, t) for a, t in zip(node.args, args))
    by_kw = {k.arg: k.value for k in node.keywords if k.arg is not None}
    lit_kws = {k: _literal(by_kw[k], t) if k in by_kw else t for k, t in kws.items()}
    plain = (tuple(args), dict(kws))
    if lit_args == plain[0] and lit_kws == plain[1]:
        return [plain]
    lit = (lit_args, lit_kws)
    return [lit, plain] if reg.prefer_literal else [plain, lit]


def _parts(fn):
    """(positional parameters without defaults, keyword parameters, the ``*args`` one or
    None) of ``fn``'s signature, or the text of numba's refusal of a ``**kwargs``."""
    pos, kw, star = [], [], None
    for p in inspect.signature(fn).parameters.values():
        if p.kind is p.VAR_KEYWORD:
            return f"The use of VAR_KEYWORD (e.g. **kwargs) is unsupported. (offending " \
                   f"argument name is '{p}')"
        if p.default is p.empty:
            pos.append(p)
            if p.kind is p.VAR_POSITIONAL:
                star = p
        else:
            kw.append(p)
    return pos, kw, star


def signature_mismatch(typing, impl):
    """Why implementation ``impl`` does not match typing function ``typing`` under numba's
    ``strict`` rule (text naming the difference, numba's words), or None when it does: the
    same positional parameters, the same keyword names and defaults, no ``**kwargs``; a
    ``*args`` of the typing function must be the implementation's too, and a ``*args`` of
    the implementation alone takes the rest of the typing function's parameters."""
    ty, im = _parts(typing), _parts(impl)
    for parts in (ty, im):
        if isinstance(parts, str):
            return parts
    (ty_pos, ty_kw, ty_star), (im_pos, im_kw, im_star) = ty, im
    sigs = (f"Typing signature:         {inspect.signature(typing)}\n"
            f"Implementation signature: {inspect.signature(impl)}")
    prefix = "Typing and implementation arguments differ in "
    a, b = ty_pos, im_pos
    if ty_star and not im_star:
        return (f"VAR_POSITIONAL (e.g. *args) argument kind (offending argument name is "
                f"'{ty_star}') found in the typing function signature, but is not in the "
                f"implementing function signature.\n{sigs}")
    if im_star and not ty_star:
        b = im_pos[:im_pos.index(im_star)]
        if b and b[-1] not in ty_pos:
            return f"{prefix}argument names.\n{sigs}\nFirst difference: '{b[-1]}'"
        a = ty_pos[:ty_pos.index(b[-1]) + 1] if b else []
    if a != b:
        return f"{prefix}argument names.\n{sigs}\nDifference: {set(a) ^ set(b)}"
    if [p.name for p in ty_kw] != [p.name for p in im_kw]:
        return f"{prefix}keyword argument names.\n{sigs}\nDifference: {set(ty_kw) ^ set(im_kw)}"
    if [p.default for p in ty_kw] != [p.default for p in im_kw]:
        return (f"{prefix}keyword argument default values.\n{sigs}\n"
                f"Difference: {set(ty_kw) ^ set(im_kw)}")
    return None


def type_overload_call(typer, node, func, args, kws):
    """Type call ``node`` of ``func`` (a function with overloads in
    :data:`~.extensions.overloads`) with argument types ``args`` and keyword types ``kws``:
    each overload's typing function is called with those types in registration order (and
    with ``Literal[int]`` types for integer constants, before or after the plain ones as
    the overload's ``prefer_literal`` says); the first that returns a Python function (or
    ``(signature, function)``, as Numba allows) gives the implementation, typed as a device
    function for the call's arguments.  Records ``Call(OVERLOAD, OverloadCall)``.
    TypingError naming the function and the argument types when a typing function raises
    (for its last candidate types), returns something that is not a function, returns an
    implementation whose parameters differ from its own (``strict``, numba's words), or
    none accepts the types."""
    name = _name(func)
    for reg in overloads.overloads_of(func):
        impl = None
        cands = _candidates(reg, node, args, kws)
        for i, (cargs, ckws) in enumerate(cands):
            try:
                impl = reg.typing(*cargs, **ckws)
            except Exception as e:
                if i + 1 < len(cands):
                    continue        # numba: a refused literal typing falls back, and back
                raise typer.error(f"the overload {_name(reg.typing)} of {name}() raised "
                                  f"{type(e).__name__}: {e} when typed for argument types "
                                  f"{_types_text(cargs, ckws)}", node) from e
            if impl is not None:
                break
        if impl is None:
            continue
        if isinstance(impl, tuple) and len(impl) == 2:
            impl = impl[1]
        if not isinstance(impl, pytypes.FunctionType):
            raise typer.error(f"the overload {_name(reg.typing)} of {name}() returned "
                              f"{impl!r:.80} for argument types {_types_text(args, kws)}; "
                              f"expected a Python function implementing {name}() for them, "
                              f"or None", node)
        why = signature_mismatch(reg.typing, impl) if reg.strict else None
        if why is not None:
            raise typer.error(f"the overload {_name(reg.typing)} of {name}() returned an "
                              f"implementation that does not match it: {why}", node)
        dc = bind_device_call(typer, node, Implementation(impl, reg.jit_options), args, kws)
        typer.tf.info[node] = Call(CallKind.OVERLOAD, OverloadCall(func, impl, dc))
        return dc.callee.return_type
    raise typer.error(f"no overload of {name}() accepts argument types "
                      f"{_types_text(args, kws)}", node)


class TypingContext:
    """What an intrinsic's typing function gets as ``typingctx`` (Numba passes its typing
    context): :meth:`unify_types` only."""

    def unify_types(self, *types):
        """The one type values of ``types`` (cujit types) share, or None."""
        r = None
        for t in types:
            r = rules.unify(r, t)
            if r is None:
                return None
        return r


_TYPINGCTX = TypingContext()


def type_user_intrinsic(typer, node, intr, args, kws):
    """Type call ``node`` of intrinsic ``intr`` (an :class:`~.extensions.Intrinsic`) with
    argument types ``args``: ``intr.typing(typingctx, *args)`` gives ``(signature,
    codegen)``.  Records ``Call(USER_INTRINSIC, UserIntrinsic)``; returns the signature's
    return type.  TypingError naming the intrinsic and the argument types for keyword
    arguments, a typing function that raises, returns None or not ``(signature, codegen)``,
    or a signature whose parameters do not match the arguments."""
    name = intr.__name__
    where = f"intrinsic {name}() for argument types {_types_text(args, kws)}"
    if kws:
        raise typer.error(f"{where}: intrinsics take no keyword arguments", node)
    for a, t in zip(node.args, args):
        if isinstance(t, rules.PseudoType):
            raise typer.error(f"cannot pass {t} to intrinsic {name}()", a)
    try:
        res = intr.typing(_TYPINGCTX, *args)
    except Exception as e:
        raise typer.error(f"{where}: its typing function raised {type(e).__name__}: {e}",
                          node) from e
    if res is None:
        raise typer.error(f"{where}: not accepted (its typing function returned None)", node)
    if not (isinstance(res, tuple) and len(res) == 2 and callable(res[1])):
        raise typer.error(f"{where}: its typing function returned {res!r:.80}; expected "
                          f"(signature, codegen)", node)
    sig, codegen = res
    nsig = from_numba_signature(sig)
    sig = nsig if nsig is not None else sig
    if not isinstance(sig, T.Signature):
        raise typer.error(f"{where}: {sig!r:.60} is not a signature (build one as "
                          f"cujit.int32(cujit.int32, ...))", node)
    if len(sig.args) != len(args):
        raise typer.error(f"{where}: its signature {sig} takes {len(sig.args)} argument(s), "
                          f"the call passes {len(args)}", node)
    for a, t, s in zip(node.args, args, sig.args):
        if t is not s and not (rules.is_number(t) and rules.is_number(s)):
            raise typer.error(f"{where}: argument of type {t} cannot be passed as {s}", a)
    rt = T.void if sig.return_type is None else sig.return_type
    typer.tf.info[node] = Call(CallKind.USER_INTRINSIC,
                               UserIntrinsic(intr, T.Signature(rt, sig.args), codegen))
    return rt
