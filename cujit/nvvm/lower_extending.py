"""Lowering of calls of the extension API's intrinsics (``cujit.extending.intrinsic``): the
intrinsic's ``codegen(context, builder, signature, args)`` emits the IR, as in Numba.

``context`` is a :class:`LoweringContext`, a small stand-in for Numba's target context:
cujit's lowering has no Numba context, so only the methods listed there exist.
"""
from .. import types as T
from .ltypes import cast, const, ltype

__all__ = ["LoweringContext", "lower_user_intrinsic"]


class LoweringContext:
    """The ``context`` an intrinsic's codegen receives: LLVM types and constants of cujit
    types, and conversions between them."""

    def get_value_type(self, t):
        """The ``llvmlite.ir`` type of values of cujit type ``t``."""
        return ltype(t)

    def get_constant(self, t, value):
        """The ``llvmlite.ir.Constant`` of Python number ``value`` as cujit type ``t``."""
        return const(t, value)

    def cast(self, builder, value, fromty, toty):
        """``value`` (of cujit type ``fromty``) converted to ``toty`` (NumPy's rules)."""
        return cast(builder, value, fromty, toty)


_CONTEXT = LoweringContext()


def lower_user_intrinsic(lw, node, c):
    """Lower call ``node`` of an intrinsic (``c.data``: a ``UserIntrinsic``): the arguments
    converted to the signature's parameter types, then its codegen.  CompileError when
    codegen raises, or returns None (or a value of another LLVM type) for a non-void
    signature."""
    b = lw.b
    sig, name = c.data.signature, c.data.intrinsic.__name__
    args = [cast(b, lw.expr(a), lw.ty(a), s) for a, s in zip(node.args, sig.args)]
    try:
        r = c.data.codegen(_CONTEXT, b, sig, args)
    except Exception as e:
        raise lw.error(f"the codegen of intrinsic {name}() raised {type(e).__name__}: {e}",
                       node) from e
    if sig.return_type is T.void:
        return None
    want = ltype(sig.return_type)
    if r is None or getattr(r, "type", None) != want:
        got = "None" if r is None else f"a value of LLVM type {getattr(r, 'type', r)}"
        raise lw.error(f"the codegen of intrinsic {name}() returned {got} for its "
                       f"non-void signature {sig} (expected an LLVM {want})", node)
    return r
