"""Typing of the Hopper warpgroup-MMA calls of :mod:`cujit.wgmma` (a cujit extension beyond
numba.cuda): ``accumulator`` (compile-time arguments: it gives a
``types.WarpgroupAccumulator``), ``fill_accumulator``, ``make_descriptor`` (gives a
``types.WgmmaDescriptor``), ``fence``, ``fence_proxy_async``, ``mma_async``,
``commit_group``, ``wait_group`` and ``store_accumulator``.  Each is checked against the
accumulator's shape, the descriptors, the constant precision and layouts, so that a mistake
is a TypingError naming the call instead of a PTX assembler error.  Whether an array is in
shared memory is not in its type; the simulator checks it.  Lowering: ``lower_wgmma.py``;
simulation: ``simulator/wgmma_sim.py``.
"""
import ast

from ... import types as T
from ... import wgmma as G
from ... import wmma as W
from .. import rules
from .binding import TypedArgs, bind_arguments
from ..callkinds import (Call, CallKind, WgmmaAccumulator, WgmmaDescriptor, WgmmaMma,
                         WgmmaStore, WgmmaWait)

__all__ = ["table_entries", "type_accumulator", "type_wgmma_call"]

_NAMES = ("accumulator", "fill_accumulator", "make_descriptor", "fence", "fence_proxy_async",
          "mma_async", "commit_group", "wait_group", "store_accumulator")
#: The alignment (bytes) of the shared memory of a kernel using wgmma: a 128-byte swizzle
#: repeats every 1024 bytes, and the tensor cores swizzle by the shared address itself.
SHARED_ALIGN = 1024


def table_entries():
    """{id(callable): key} of the ``cujit.wgmma`` functions (merged into the typer's table of
    recognised callables)."""
    return {id(getattr(G, n)): "wgmma." + n for n in _NAMES}


def _uses_wgmma(typer):
    typer.tf.shared_align = max(typer.tf.shared_align, SHARED_ALIGN)
    typer.tf.uses_wgmma = True


def type_accumulator(typer, node, ft):
    """``wgmma.accumulator(m, n)``: both compile-time ints; gives the
    ``types.WarpgroupAccumulator``.  TypingError for a shape the hardware does not offer."""
    what = "wgmma.accumulator"
    a = bind_arguments(typer, node, what, ("m", "n"))
    v = {name: typer.const_eval(arg, f"the {name} of {what}()") for name, arg in a.items()}
    try:
        acc = T.WarpgroupAccumulator(v["m"], v["n"])
    except ValueError as e:
        raise typer.error(f"{what}(): {e}", node) from None
    typer.tf.info[node] = Call(CallKind.WGMMA_ACCUMULATOR, WgmmaAccumulator(acc))
    _uses_wgmma(typer)
    return acc


def type_wgmma_call(typer, node, kind, args, kws):
    """Type call ``node`` of ``wgmma.<name>`` (``kind``, not ``accumulator``) with argument
    types ``args`` / keyword types ``kws``; records its :class:`~.callkinds.Call` and gives
    its type (``WgmmaDescriptor`` for ``make_descriptor``, else ``void``)."""
    types = {id(a): t for a, t in zip(node.args, args)}
    types.update({id(kw.value): kws[kw.arg] for kw in node.keywords if kw.arg in kws})
    _uses_wgmma(typer)
    return _TYPERS[kind](TypedArgs(typer, types), node, kind.value)


def _desc(t):
    return f"a value of type {t}" if isinstance(t, T.Type) else str(t)


def _acc(typer, arg, what):
    t = typer.expr(arg)
    if not isinstance(t, T.WarpgroupAccumulator):
        raise typer.error(f"{what}(): '{ast.unparse(arg)}' must be a wgmma accumulator (made "
                          f"by wgmma.accumulator), got {_desc(t)}", arg)
    return t


def _int(typer, arg, what, name):
    t = typer.expr(arg)
    if not rules.is_int(t):
        raise typer.error(f"{what}(): {name} must be an integer, got {_desc(t)}", arg)


def _constant(typer, arg, what, name, allowed):
    v = typer.const_eval(arg, f"the {name} of {what}()")
    if isinstance(v, bool) or v not in allowed:
        raise typer.error(f"{what}(): {name} must be one of "
                          f"{', '.join(repr(a) for a in allowed)}, got {v!r}", arg)
    return v


def _no_args(what):
    def check(typer, node, _what):
        bind_arguments(typer, node, what, ())
        typer.tf.info[node] = Call(CallKind(what), None)
        return T.void
    return check


def _t_fill(typer, node, what):
    a = bind_arguments(typer, node, what, ("acc", "value"))
    acc = _acc(typer, a["acc"], what)
    vt = typer.expr(a["value"])
    if not rules.is_number(vt) or rules.is_complex(vt):
        raise typer.error(f"{what}(): the value must be a real number, got {_desc(vt)}",
                          a["value"])
    typer.tf.info[node] = Call(CallKind.WGMMA_FILL, WgmmaAccumulator(acc))
    return T.void


def _t_descriptor(typer, node, what):
    a = bind_arguments(typer, node, what, ("smem", "offset", "swizzle", "leading_bytes",
                                  "stride_bytes"))
    t = typer.expr(a["smem"])
    if not isinstance(t, T.Array):
        raise typer.error(f"{what}(): smem '{ast.unparse(a['smem'])}' must be an array in "
                          f"shared memory, got {_desc(t)}", a["smem"])
    for name in ("offset", "leading_bytes", "stride_bytes"):
        _int(typer, a[name], what, name)
    swizzle = _constant(typer, a["swizzle"], what, "swizzle (bytes)", G.SWIZZLES)
    typer.tf.info[node] = Call(CallKind.WGMMA_DESCRIPTOR, WgmmaDescriptor(swizzle))
    return T.wgmma_descriptor


def _t_mma(typer, node, what):
    a = bind_arguments(typer, node, what, ("acc", "a_desc", "b_desc", "dtype", "a_layout", "b_layout",
                                  "accumulate"), ("accumulate",))
    acc = _acc(typer, a["acc"], what)
    for name in ("a_desc", "b_desc"):
        t = typer.expr(a[name])
        if not isinstance(t, T.WgmmaDescriptor):
            raise typer.error(f"{what}(): {name} '{ast.unparse(a[name])}' must be a matrix "
                              f"descriptor (made by wgmma.make_descriptor), got {_desc(t)}",
                              a[name])
    dt = typer.const_eval(a["dtype"], f"the dtype of {what}()")
    try:
        prec = W.precision_of(dt)
    except ValueError:
        prec = None
    if prec not in ("float16", "bfloat16", "tf32"):
        raise typer.error(f"{what}(): dtype must be float16, 'bfloat16' or 'tf32' (the "
                          f"inputs' precision), got {dt!r}", a["dtype"])
    lay = [_constant(typer, a[n], what, n, ("row_major", "col_major"))
           for n in ("a_layout", "b_layout")]
    if prec == "tf32" and lay != ["row_major", "col_major"]:
        raise typer.error(f"{what}(): tf32 inputs must be K-major: a_layout 'row_major' and "
                          f"b_layout 'col_major', got {lay[0]!r} and {lay[1]!r}", node)
    accumulate = None
    if "accumulate" in a:
        t = typer.expr(a["accumulate"])
        if not isinstance(t, T.Boolean) and not rules.is_int(t):
            raise typer.error(f"{what}(): accumulate must be a bool, got {_desc(t)}",
                              a["accumulate"])
        ok, v = typer._const(a["accumulate"])
        if ok:
            accumulate = bool(v)
    else:
        accumulate = True
    typer.tf.info[node] = Call(CallKind.WGMMA_MMA, WgmmaMma(acc, prec, lay[0], lay[1],
                                                            accumulate))
    return T.void


def _t_wait(typer, node, what):
    a = bind_arguments(typer, node, what, ("n",))
    n = typer.const_eval(a["n"], f"n (the groups left in flight) of {what}()")
    if isinstance(n, bool) or not isinstance(n, int) or n < 0:
        raise typer.error(f"{what}(): n must be an integer constant >= 0, got {n!r}",
                          a["n"])
    typer.tf.info[node] = Call(CallKind.WGMMA_WAIT, WgmmaWait(n))
    return T.void


def _t_store(typer, node, what):
    a = bind_arguments(typer, node, what, ("dst", "acc"))
    acc = _acc(typer, a["acc"], what)
    t = typer.expr(a["dst"])
    if not isinstance(t, T.Array) or t.ndim != 2 or t.dtype not in (T.float32, T.float16):
        raise typer.error(f"{what}(): dst '{ast.unparse(a['dst'])}' must be a 2-d float32 "
                          f"or float16 array or view, got {_desc(t)}", a["dst"])
    if t.readonly:
        raise typer.error(f"{what}(): '{ast.unparse(a['dst'])}' is read-only", a["dst"])
    typer.tf.info[node] = Call(CallKind.WGMMA_STORE, WgmmaStore(acc, t.dtype))
    return T.void


_TYPERS = {CallKind.WGMMA_FILL: _t_fill, CallKind.WGMMA_DESCRIPTOR: _t_descriptor,
           CallKind.WGMMA_FENCE: _no_args("wgmma.fence"),
           CallKind.WGMMA_FENCE_PROXY: _no_args("wgmma.fence_proxy_async"),
           CallKind.WGMMA_MMA: _t_mma,
           CallKind.WGMMA_COMMIT: _no_args("wgmma.commit_group"),
           CallKind.WGMMA_WAIT: _t_wait, CallKind.WGMMA_STORE: _t_store}
