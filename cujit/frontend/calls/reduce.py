"""Typing of NumPy reductions of whole arrays in kernels (``CallKind.REDUCE``): ``np.sum(a)``,
``a.sum()``, ``np.mean``, ``np.var``, ``np.std``, ``np.min``/``np.max`` (``amin``/``amax``),
``np.prod``, ``np.all``/``np.any``, ``np.nansum``/``nanprod``/``nanmean``/``nanmin``/
``nanmax`` and ``np.count_nonzero`` — numba-cuda's array reductions (its
``test_array_reductions.py``): the reduction runs over every element of the array, of any
dimension and layout, in the calling thread, and returns a scalar.

Values and result types are NumPy's for the whole array (no ``axis``): ``sum``/``prod`` of
booleans and integers in int64 (uint64 for unsigned), of floats and complex in their type;
``mean``/``var``/``std`` in float64 for integers (the float type otherwise; ``var``/``std``
of complex are real); ``min``/``max`` propagate NaN and ``nanmin``/``nanmax`` skip it (NaN
when every element is NaN), and of equal elements (0.0, -0.0) ``min``/``max`` give the
later one and ``nanmin``/``nanmax`` the earlier one, as NumPy's; ``nansum``/``nanprod`` count a NaN as 0 / 1, ``nanmean``
averages the numbers; ``mean`` of an empty array is NaN; ``min``/``max`` of an empty array
raise ValueError in the thread (NumPy's "zero-size array" error).  The sums are sequential in
C order (NumPy sums pairwise, so long float sums may differ in the last bits, as numba-cuda's
do).

The typer generates, per reduction and array type, a function in the kernel language (a
:class:`~.ufunc.UfuncLoopFunction`) and types it as a device function, so every
backend runs it as it runs any device function.
"""
import numpy as np

from ... import types as T
from .. import rules
from ..callkinds import ArrayReduction, Call, CallKind
from ..const_types import REDUCTION_METHODS, REDUCTIONS
from .device import bind_device_call
from .ufunc import UfuncLoopFunction

__all__ = ["type_reduction", "REDUCTIONS", "REDUCTION_METHODS"]

#: the NumPy functions, by the name their key carries (``'reduce.sum'``)
_ALIAS = {"amin": "min", "amax": "max"}


def _result(typer, node, name, dt):
    """The result type of reduction ``name`` of elements of type ``dt``."""
    real = rules.is_float(dt)
    cplx = rules.is_complex(dt)
    if name in ("all", "any"):
        return T.boolean
    if name == "count_nonzero":
        return T.int64
    if isinstance(dt, (T.BFloat16,)) or not (rules.is_number(dt) or
                                             isinstance(dt, T.Boolean)):
        raise typer.error(f"np.{name}() of an array of {dt} is not supported in kernels",
                          node)
    if name in ("sum", "prod", "nansum", "nanprod"):
        if real or cplx:
            return dt
        return T.uint64 if isinstance(dt, T.Integer) and not dt.signed else T.int64
    if name in ("mean", "nanmean"):
        return dt if real or cplx else T.float64
    if name in ("var", "std"):
        if cplx:
            return dt.underlying_float
        return dt if real else T.float64
    # min, max, nanmin, nanmax
    if cplx:
        raise typer.error(f"np.{name}() of a complex array is not supported in kernels",
                          node)
    return dt


def _source(name, aty, rt):
    """``(text, casts)``: the function ``np_<name>_reduce_loop(a)`` for arrays of ``aty``."""
    dt = aty.dtype
    casts = {"_tR": rt}
    isfloat = rules.is_float(dt) or rules.is_complex(dt)
    lines = [f"def np_{name}_reduce_loop(a):"]
    body = []       # the loop body, one element ``v`` of the array

    def loop(inner):
        ind = "    "
        out = []
        for d in range(aty.ndim):
            out.append(f"{ind}for i{d} in range(a.shape[{d}]):")
            ind += "    "
        idx = ", ".join(f"i{d}" for d in range(aty.ndim)) if aty.ndim else "()"
        out.append(f"{ind}v = a[{idx}]")
        out += [ind + s for s in inner]
        return out

    isnan = "v != v" if isfloat else "False"
    if name in ("all", "any"):
        want = "not v" if name == "all" else "v"
        lines += loop([f"if {want}:", f"    return {name == 'any'}"])
        lines.append(f"    return {name == 'all'}")
    elif name == "count_nonzero":
        lines.append("    n = 0")
        lines += loop(["if v:", "    n += 1"])
        lines.append("    return n")
    elif name in ("sum", "nansum", "prod", "nanprod"):
        # a float sum starts from -0.0, the additive identity (so a sum of -0.0 is -0.0);
        # NumPy's nan* functions count a NaN as +0.0 / 1.0
        one = name.endswith("prod")
        start = "1" if one else ("-0.0" if rules.is_float(dt) else "0")
        lines.append(f"    acc = _tR({start})")
        op = "*" if one else "+"
        if name.startswith("nan"):
            body = [f"if not ({isnan}):", f"    acc = acc {op} _tR(v)"]
            if not one and isfloat:
                body += ["else:", "    acc = acc + _tR(0.0)"]
        else:
            body = [f"acc = acc {op} _tR(v)"]
        lines += loop(body)
        if not one and rules.is_float(dt):
            lines.append("    if a.size == 0:")
            lines.append("        return _tR(0.0)")
        lines.append("    return acc")
    elif name in ("mean", "nanmean", "var", "std"):
        acc_t = rt if name in ("mean", "nanmean") else (
            dt if rules.is_complex(dt) else rt)
        casts["_tA"] = acc_t
        lines.append("    acc = _tA(-0.0)")
        lines.append("    n = 0")
        if name == "nanmean":
            # NumPy: the sum with each NaN as +0.0, over the count of numbers
            lines += loop([f"if {isnan}:", "    acc = acc + _tA(0.0)", "else:",
                           "    acc = acc + _tA(v)", "    n += 1"])
        else:
            lines += loop(["acc = acc + _tA(v)"])
            lines.append("    n = a.size")
        if name == "nanmean":
            lines.append("    if n == 0:")
            lines.append("        return _tR(np.nan)")
            lines.append("    return _tR(acc / _tA(n))")
        else:
            lines.append("    if n == 0:")
            lines.append("        return _tR(np.nan)")
            lines.append("    m = acc / _tA(n)")
            if name == "mean":
                lines.append("    return _tR(m)")
            else:
                lines.append("    sq = _tR(-0.0)")
                d = "d = _tA(v) - m"
                sq = ("sq = sq + _tR(d.real * d.real + d.imag * d.imag)"
                      if rules.is_complex(dt) else "sq = sq + d * d")
                lines += loop([d, sq])
                res = "sq / _tR(n)"
                lines.append(f"    return math.sqrt({res})" if name == "std"
                             else f"    return {res}")
    else:
        # min / max / nanmin / nanmax
        cmp = "<" if name.endswith("min") else ">"
        nan_skip = name.startswith("nan")
        lines.append("    if a.size == 0:")
        lines.append(f"        raise ValueError(\"zero-size array to reduction operation "
                     f"{name} which has no identity\")")
        lines.append("    first = True")
        lines.append("    acc = _tR(0)")
        # NumPy's minimum/maximum (min, max) keep the accumulated value only when it is
        # strictly smaller/larger, so of equals (0.0 and -0.0) the later element wins; its
        # fmin/fmax (nanmin, nanmax) keep the earlier one
        if nan_skip:
            body = [f"if {isnan}:", "    pass",
                    f"elif first or v {cmp} acc:", "    acc = v", "    first = False"]
        else:
            body = [f"if {isnan}:", "    return v",
                    f"if first or not (acc {cmp} v):", "    acc = v", "    first = False"]
        lines += loop(body)
        if nan_skip and isfloat:
            lines.append("    if first:")
            lines.append("        return _tR(np.nan)")
        lines.append("    return acc")
    return "\n".join(lines) + "\n", casts


def type_reduction(typer, node, name, aty, arg_node, kws):
    """Type reduction ``name`` (one of ``const_types.REDUCTIONS``) of the array ``arg_node`` of type
    ``aty`` at call ``node``; records ``Call(REDUCE, ArrayReduction)`` and returns the
    result's scalar type.  TypingError for keywords (``axis=``, ``dtype=`` …), a non-array
    argument, and element types NumPy's reduction has no kernel form for here."""
    name = _ALIAS.get(name, name)
    if kws:
        raise typer.error(f"np.{name}() takes no keyword arguments in kernels (the whole "
                          f"array is reduced; axis= and dtype= are not supported)", node)
    if not isinstance(aty, T.Array):
        raise typer.error(f"np.{name}() in a kernel reduces an array, got a value of type "
                          f"{aty}", arg_node)
    rt = _result(typer, node, name, aty.dtype)
    key = ("reduce", name, aty)
    fn = typer.env.generated.get(key)
    if fn is None:
        text, casts = _source(name, aty, rt)
        fn = typer.env.generated[key] = UfuncLoopFunction(f"{name}_reduce", text, casts)
    dc = bind_device_call(typer, node, fn, [aty], {}, positional=[(arg_node, aty)])
    typer.tf.info[node] = Call(CallKind.REDUCE, ArrayReduction(name, dc))
    return dc.callee.return_type
