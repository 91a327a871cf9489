"""Typing of the asynchronous-copy calls of :mod:`cujit.pipeline` (a cujit extension beyond
numba.cuda): ``memcpy_async(dst, dst_index, src, src_index, nbytes)``, ``commit()`` and
``wait_prior(n)``.  The arguments are checked here (kinds, dtypes, index shapes, the
compile-time ``nbytes`` and ``n``), so that a mistake is a TypingError naming the call
instead of a PTX assembler error.  Whether ``dst`` is in shared memory and ``src`` in
global memory is not in the array types; the simulator checks it.  Lowering:
``nvvm/lower_pipeline.py``; simulation: ``simulator/pipeline_sim.py``.
"""
import ast

from ... import pipeline as P
from ... import types as T
from .. import rules
from ..callkinds import Call, CallKind, PipelineCopy, PipelineWait

__all__ = ["table_entries", "type_pipeline_call"]

_NAMES = ("memcpy_async", "commit", "wait_prior")


def table_entries():
    """{id(callable): key} of the ``cujit.pipeline`` functions (merged into the typer's
    table of recognised callables)."""
    return {id(getattr(P, n)): "pipeline." + n for n in _NAMES}


def type_pipeline_call(typer, node, kind, args, kws):
    """Type call ``node`` of ``pipeline.<memcpy_async|commit|wait_prior>`` (``kind``) with
    argument types ``args``; records its :class:`~.callkinds.Call` and gives ``void``.
    TypingError for keyword arguments or a wrong argument count, and as the checkers
    below say."""
    what = kind.value
    names = {CallKind.PIPELINE_COPY: ("dst", "dst_index", "src", "src_index", "nbytes"),
             CallKind.PIPELINE_COMMIT: (), CallKind.PIPELINE_WAIT: ("n",)}[kind]
    if node.keywords:
        raise typer.error(f"{what}() takes positional arguments only ({', '.join(names)})",
                          node)
    if len(args) != len(names):
        raise typer.error(f"{what}() takes {len(names)} argument{'s' * (len(names) != 1)}"
                          f"{' (' + ', '.join(names) + ')' if names else ''}, got {len(args)}",
                          node)
    if kind is CallKind.PIPELINE_COPY:
        data = _t_copy(typer, node, what, args)
    elif kind is CallKind.PIPELINE_WAIT:
        n = _constant_int(typer, node.args[0], what, "n (the groups left in flight)")
        if n < 0:
            raise typer.error(f"{what}(): n must be >= 0, got {n}", node.args[0])
        data = PipelineWait(n)
    else:
        data = None
    typer.tf.info[node] = Call(kind, data)
    return T.void


def _constant_int(typer, arg, what, name):
    v = typer.const_eval(arg, f"{name} of {what}()")
    if isinstance(v, bool) or not isinstance(v, int):
        raise typer.error(f"{what}(): {name} must be an integer constant, got {v!r}", arg)
    return v


def _t_copy(typer, node, what, args):
    """``memcpy_async``: ``dst`` a writable array, ``src`` an array of the same integer or
    float dtype, indices of their dimensions, ``nbytes`` a constant 4, 8 or 16 and a
    multiple of the itemsize."""
    dst, di, src, si = args[:4]
    for label, arr, arg in (("dst", dst, node.args[0]), ("src", src, node.args[2])):
        if not isinstance(arr, T.Array):
            raise typer.error(f"{what}(): {label} '{ast.unparse(arg)}' must be an array "
                              f"({'in shared memory' if label == 'dst' else 'in global memory'}"
                              f"), got {_desc(arr)}", arg)
        if not isinstance(arr.dtype, (T.Integer, T.Float)):
            raise typer.error(f"{what}(): {label} must be an array of integers or floats, got "
                              f"{arr}", arg)
    if dst.readonly:
        raise typer.error(f"{what}(): dst '{ast.unparse(node.args[0])}' is read-only",
                          node.args[0])
    if dst.dtype is not src.dtype:
        raise typer.error(f"{what}(): dst and src must have one dtype, got {dst.dtype} and "
                          f"{src.dtype} (view one as the other's dtype with .view())", node)
    _index(typer, node.args[1], di, dst, what, "dst_index")
    _index(typer, node.args[3], si, src, what, "src_index")
    nbytes = _constant_int(typer, node.args[4], what, "nbytes")
    item = dst.dtype.bitwidth // 8
    if nbytes not in P.COPY_SIZES or nbytes % item:
        raise typer.error(f"{what}(): nbytes must be 4, 8 or 16 and a multiple of the "
                          f"{item}-byte itemsize of {dst.dtype}, got {nbytes}", node.args[4])
    return PipelineCopy(nbytes, "cg" if nbytes == 16 else "ca")


def _index(typer, arg, it, arr, what, name):
    if rules.is_int(it):
        if arr.ndim != 1:
            raise typer.error(f"{what}(): {name} of a {arr.ndim}-d array needs "
                              f"{arr.ndim} indices, got a scalar", arg)
    elif isinstance(it, (T.UniTuple, T.Tuple)) and all(rules.is_int(t) for t in it.types):
        if len(it.types) != arr.ndim:
            raise typer.error(f"{what}(): {name} of a {arr.ndim}-d array needs "
                              f"{arr.ndim} indices, got {len(it.types)}", arg)
    else:
        raise typer.error(f"{what}(): {name} must be an integer or a tuple of integers, got "
                          f"{_desc(it)}", arg)


def _desc(t):
    return f"a value of type {t}" if isinstance(t, T.Type) else str(t)
