"""Typing of calls of the extension API's functions (``cujit.extending``): overloaded
functions (``CallKind.OVERLOAD``) and intrinsics (``CallKind.USER_INTRINSIC``).

Behaviour reference: Numba's "High-level extension API".  One difference: typing functions
receive *cujit* types (``cujit.types``: ``cujit.int64``, ``cujit.float32[::1]``...), not
Numba's; a Python int constant is ``int64``, never a ``Literal[int]``.
"""
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


def type_overload_call(typer, node, func, args, kws):
    """Type call ``node`` of ``func`` (a function with overloads in
    :data:`~.extensions.overloads`) with argument types ``args`` and keyword types ``kws``:
    each overload's typing function is called with those types in registration order; the
    first that returns a Python function (or ``(signature, function)``, as Numba allows)
    gives the implementation, typed as a device function for the call's arguments.  Records
    ``Call(OVERLOAD, OverloadCall)``.  TypingError naming the function and the argument
    types when a typing function raises, returns something that is not a function, or none
    accepts the types."""
    name = _name(func)
    for reg in overloads.overloads_of(func):
        try:
            impl = reg.typing(*args, **kws)
        except Exception as e:
            raise typer.error(f"the overload {_name(reg.typing)} of {name}() raised "
                              f"{type(e).__name__}: {e} when typed for argument types "
                              f"{_types_text(args, kws)}", node) from e
        if impl is None:
            continue
        if isinstance(impl, tuple) and len(impl) == 2:
            impl = impl[1]
        if not isinstance(impl, pytypes.FunctionType):
            raise typer.error(f"the overload {_name(reg.typing)} of {name}() returned "
                              f"{impl!r:.80} for argument types {_types_text(args, kws)}; "
                              f"expected a Python function implementing {name}() for them, "
                              f"or None", node)
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
