"""Typing of the tensor-core calls of :mod:`cujit.wmma` (a cujit extension beyond
numba.cuda): ``fragment`` (compile-time arguments: it gives a ``types.Fragment``),
``fill_fragment``, ``load_matrix_sync``, ``mma_sync`` and ``store_matrix_sync``.  Each is
checked against the fragment's role, shape, precision and layout, so that a mismatch is a
TypingError naming the call instead of a PTX assembler error.  Lowering:
``lower_wmma.py``; simulation: ``simulator/wmma_sim.py``.
"""
import ast

from ... import types as T
from ... import wmma as W
from .. import rules
from .binding import TypedArgs, bind_arguments
from ..callkinds import Call, CallKind, WmmaFill, WmmaFragment, WmmaLoad, WmmaMma, WmmaStore

__all__ = ["table_entries", "type_fragment", "type_wmma_call"]

_NAMES = ("fragment", "fill_fragment", "load_matrix_sync", "mma_sync", "store_matrix_sync")


def table_entries():
    """{id(callable): key} of the ``cujit.wmma`` functions (merged into the typer's table of
    recognised callables)."""
    return {id(getattr(W, n)): "wmma." + n for n in _NAMES}


def type_fragment(typer, node, ft):
    """``wmma.fragment(role, m, n, k, dtype, layout=None)``: all arguments compile-time
    constants; gives the ``types.Fragment``.  TypingError for a combination the hardware
    does not offer."""
    what = "wmma.fragment"
    a = bind_arguments(typer, node, what, ("role", "m", "n", "k", "dtype", "layout"), ("layout",))
    v = {name: typer.const_eval(arg, f"the {name} of {what}()") for name, arg in a.items()}
    try:
        prec = W.precision_of(v["dtype"])
        for name in ("m", "n", "k"):
            if isinstance(v[name], bool) or not isinstance(v[name], int):
                raise ValueError(f"{name} must be an int, got {v[name]!r}")
        frag = T.Fragment(v["role"], v["m"], v["n"], v["k"], prec, v.get("layout"))
    except (ValueError, TypeError) as e:
        raise typer.error(f"{what}(): {e}", node) from None
    typer.tf.info[node] = Call(CallKind.WMMA_FRAGMENT, WmmaFragment(frag))
    typer.tf.shared_align = max(typer.tf.shared_align, 32)   # wmma tiles are 32-byte aligned
    return frag


def type_wmma_call(typer, node, kind, args, kws):
    """Type call ``node`` of ``wmma.<fill_fragment|load_matrix_sync|mma_sync|
    store_matrix_sync>`` (``kind``) with argument types ``args`` / keyword types ``kws``;
    records its :class:`~.callkinds.Call` and gives ``void``."""
    types = {id(a): t for a, t in zip(node.args, args)}
    types.update({id(kw.value): kws[kw.arg] for kw in node.keywords if kw.arg in kws})
    return _TYPERS[kind](TypedArgs(typer, types), node, "wmma." + kind.value[5:])


def _frag(typer, node, arg, what, roles):
    t = typer.expr(arg)
    if not isinstance(t, T.Fragment) or t.role not in roles:
        want = " or ".join(f"{'an' if r[0] in 'aeiou' else 'a'} {r} fragment" for r in roles)
        raise typer.error(f"{what}(): '{ast.unparse(arg)}' must be {want} (made by "
                          f"wmma.fragment), got {_desc(t)}", arg)
    return t


def _desc(t):
    return f"a value of type {t}" if isinstance(t, T.Type) else str(t)


def _layout(typer, arg, what):
    ok, v = typer._const(arg)
    if not ok or v not in ("row_major", "col_major"):
        raise typer.error(f"{what}(): the layout must be the constant 'row_major' or "
                          f"'col_major', got '{ast.unparse(arg)}'", arg)
    return v


def _memory(typer, arg, frag, what, write):
    t = typer.expr(arg)
    if not isinstance(t, T.Array) or t.ndim not in (1, 2):
        raise typer.error(f"{what}(): '{ast.unparse(arg)}' must be a 1-d or 2-d array or "
                          f"view whose first element is the tile's top-left element, got "
                          f"{_desc(t)}", arg)
    if t.dtype is not frag.storage:
        hint = " (bfloat16 tiles are uint16 arrays of bf16 bits: wmma.to_bfloat16)" \
            if frag.precision == "bfloat16" else ""
        raise typer.error(f"{what}(): a {frag.precision} {frag.role} fragment needs an array "
                          f"of {frag.storage}, got {t}{hint}", arg)
    if write and t.readonly:
        raise typer.error(f"{what}(): '{ast.unparse(arg)}' is read-only", arg)


def _ldm(typer, arg, what):
    t = typer.expr(arg)
    if not rules.is_int(t):
        raise typer.error(f"{what}(): ldm (the leading dimension, in elements) must be an "
                          f"integer, got {_desc(t)}", arg)


def _t_fill(typer, node, what):
    a = bind_arguments(typer, node, what, ("frag", "value"))
    frag = _frag(typer, node, a["frag"], what, ("matrix_a", "matrix_b", "accumulator"))
    vt = typer.expr(a["value"])
    if not rules.is_number(vt) or rules.is_complex(vt):
        raise typer.error(f"{what}(): the value must be a real number, got {_desc(vt)}",
                          a["value"])
    typer.tf.info[node] = Call(CallKind.WMMA_FILL, WmmaFill(frag))
    return T.void


def _t_load(typer, node, what):
    a = bind_arguments(typer, node, what, ("frag", "src", "ldm", "layout", "offset"),
              ("layout", "offset"))
    frag = _frag(typer, node, a["frag"], what, ("matrix_a", "matrix_b", "accumulator"))
    _memory(typer, a["src"], frag, what, False)
    _ldm(typer, a["ldm"], what)
    if "offset" in a and not rules.is_int(typer.expr(a["offset"])):
        raise typer.error(f"{what}(): offset (elements from src's first to the tile's "
                          f"top-left) must be an integer, got "
                          f"{_desc(typer.expr(a['offset']))}", a["offset"])
    if frag.role == "accumulator":
        if "layout" not in a:
            raise typer.error(f"{what}(): loading an accumulator fragment needs the layout "
                              "('row_major' or 'col_major')", node)
        layout = _layout(typer, a["layout"], what)
    else:
        layout = frag.layout
        if "layout" in a and _layout(typer, a["layout"], what) != layout:
            raise typer.error(f"{what}(): the layout of a {frag.role} fragment is its own "
                              f"({layout}); got '{ast.unparse(a['layout'])}'", a["layout"])
    typer.tf.info[node] = Call(CallKind.WMMA_LOAD, WmmaLoad(frag, layout))
    return T.void


def _t_mma(typer, node, what):
    a = bind_arguments(typer, node, what, ("d", "a", "b", "c"))
    d = _frag(typer, node, a["d"], what, ("accumulator",))
    fa = _frag(typer, node, a["a"], what, ("matrix_a",))
    fb = _frag(typer, node, a["b"], what, ("matrix_b",))
    c = _frag(typer, node, a["c"], what, ("accumulator",))
    if fa.precision != fb.precision:
        raise typer.error(f"{what}(): a is {fa.precision} and b is {fb.precision}; both "
                          "inputs must have one precision", node)
    shapes = {f.shape for f in (d, fa, fb, c)}
    if len(shapes) > 1:
        raise typer.error(f"{what}(): the fragments have different shapes (" + ", ".join(
            f"{n}: m{f.m}n{f.n}k{f.k}" for n, f in zip("dabc", (d, fa, fb, c))) + ")", node)
    typer.tf.info[node] = Call(CallKind.WMMA_MMA, WmmaMma(fa, fb))
    return T.void


def _t_store(typer, node, what):
    a = bind_arguments(typer, node, what, ("dst", "frag", "ldm", "layout"))
    frag = _frag(typer, node, a["frag"], what, ("accumulator",))
    _memory(typer, a["dst"], frag, what, True)
    _ldm(typer, a["ldm"], what)
    layout = _layout(typer, a["layout"], what)
    typer.tf.info[node] = Call(CallKind.WMMA_STORE, WmmaStore(frag, layout))
    return T.void


_TYPERS = {CallKind.WMMA_FILL: _t_fill, CallKind.WMMA_LOAD: _t_load,
           CallKind.WMMA_MMA: _t_mma, CallKind.WMMA_STORE: _t_store}
