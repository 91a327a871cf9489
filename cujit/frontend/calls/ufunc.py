"""Typing of NumPy ufunc calls on arrays in kernels (``CallKind.UFUNC``): ``np.sin(x, out)``,
``np.greater(a, b, out=r)``, and the ufuncs typed only through their NumPy loop on scalars
(``np.logical_and(a, b)``).

numba.cuda's behaviour ("Supported NumPy features" of its docs, its ``test_ufuncs.py``):
the loop over the elements runs in the calling thread; the output array is passed
positionally (``out=`` is accepted too, as NumPy spells it); a call on arrays without an
output would allocate the result inside the kernel, which neither numba.cuda nor cujit
does: a TypingError.  The loop is NumPy's (``ufunc_loops.find_loop``); inputs broadcast
against the output as NumPy broadcasts them (a dimension of size 1, or a missing leading
one, repeats), and an input whose shape does not broadcast raises ValueError in the thread
(numba.cuda reads past it).

The typer generates, per call's operand types, a loop function in the kernel language
(:class:`UfuncLoopFunction`, kept by the compile's ``CompileEnv``) and types it as a device
function, so every backend runs it as it runs any device function.
"""
import ast
import cmath
import math

import numpy as np

from ... import types as T
from .. import rules
from ..callkinds import Call, CallKind, UfuncCall
from .device import bind_device_call
from ..source import FunctionSource, SourceOwner
from ..ufunc_loops import element_source, find_loop

__all__ = ["type_ufunc_call", "is_array_call", "UfuncLoopFunction"]


def _spelled(node, ufunc):
    try:
        return ast.unparse(node.func)
    except Exception:       # a synthesised node without source
        return f"np.{ufunc.__name__}"


def _elementwise(t):
    """Whether NumPy loops take values of type ``t``: bool, integers, floats, complex
    (bfloat16 and records have no NumPy loop)."""
    return (rules.is_number(t) or isinstance(t, T.Boolean)) and not isinstance(t, T.BFloat16)


def is_array_call(ufunc, args, kws):
    """Whether a call of NumPy ufunc ``ufunc`` with argument types ``args`` / keyword types
    ``kws`` is a whole-array call (an array operand, an output argument or ``out=``)."""
    return "out" in kws or len(args) > ufunc.nin or any(isinstance(t, T.Array) for t in args)


class UfuncLoopFunction(SourceOwner):
    """A generated loop function: ``py_func`` (made from ``text``) and its parsed source,
    kept on this object as any device function keeps its own."""

    def __init__(self, name, text, casts):
        glb = {"np": np, "math": math, "cmath": cmath, "_u64": T.uint64,
               "__builtins__": __builtins__, **casts}
        self.text = text
        filename = f"<cujit loop of np.{name}>"
        exec(compile(text, filename, "exec"), glb)
        self.py_func = glb[f"np_{name}_loop"]
        tree = ast.parse(text)
        self._fsrc = FunctionSource(self.py_func, tree.body[0], filename, 1,
                                    text.splitlines(keepends=True), 0, 0)


def type_ufunc_call(typer, node, ufunc, args, kws):
    """Type call ``node`` of NumPy ufunc ``ufunc`` (one of ``ufunc_loops.SUPPORTED``, which
    ``const_types`` recognises; each has one output) with argument types ``args`` and keyword
    types ``kws``; records ``Call(UFUNC, UfuncCall)`` and returns the output array's type
    (the loop's output type for a call on scalars without an output).  TypingError for a
    ufunc or loop kernels do not support, a wrong argument count, an output that is not a
    writable array, an input of more dimensions than the output, keywords other than
    ``out``, and a call on arrays without an output (it would allocate)."""
    name = _spelled(node, ufunc)
    nin, nout = ufunc.nin, ufunc.nout
    for k in kws:
        if k != "out":
            raise typer.error(f"{name}(): keyword '{k}' is not supported in kernels (only "
                              f"out=)", node)
    kwnode = {kw.arg: kw.value for kw in node.keywords}
    if len(args) < nin:
        raise typer.error(f"{name}() takes {nin} input(s), got {len(args)}", node)
    if len(args) > nin + nout:
        raise typer.error(f"{name}() takes {nin} input(s) and {nout} output, got "
                          f"{len(args)} arguments", node)
    if "out" in kws and len(args) > nin:
        raise typer.error(f"{name}(): the output is given twice (positionally and as out=)",
                          kwnode["out"])
    ins = list(zip(node.args[:nin], args[:nin]))
    outs = list(zip(node.args[nin:], args[nin:]))
    if "out" in kws:
        outs = [(kwnode["out"], kws["out"])]
    for a, t in ins:
        if not _elementwise(t.dtype if isinstance(t, T.Array) else t):
            raise typer.error(f"{name}(): an input of type {t} is not supported (numbers and "
                              f"arrays of numbers)", a)
    for a, t in outs:
        if not isinstance(t, T.Array):
            raise typer.error(f"{name}(): the output must be an array, got a value of type "
                              f"{t}", a)
        if t.readonly:
            raise typer.error(f"{name}(): the output array is read-only", a)
        if not _elementwise(t.dtype):
            raise typer.error(f"{name}(): an output array of {t.dtype} is not supported", a)
    in_types = [t.dtype if isinstance(t, T.Array) else t for _, t in ins]
    loop = find_loop(ufunc, in_types, [t.dtype for _, t in outs])
    if loop is None:
        have = ", ".join(str(t) for t in args[:nin] + [t for _, t in outs])
        raise typer.error(f"{name}(): NumPy has no loop for operands ({have}) (the output "
                          f"must hold the result's kind: loops {', '.join(ufunc.types)})",
                          node)
    element = element_source(ufunc, loop)
    if element is None:
        raise typer.error(f"{name}(): the loop '{loop.letters}' its operands select is not "
                          f"supported in kernels", node)
    in_ndims = [t.ndim if isinstance(t, T.Array) else 0 for _, t in ins]
    if outs:
        out_t = outs[0][1]
        for (a, t), nd in zip(ins, in_ndims):
            if nd > out_t.ndim:
                raise typer.error(f"{name}(): an input of {nd} dimensions does not broadcast "
                                  f"to the {out_t.ndim}-d output", a)
    elif any(in_ndims):
        raise typer.error(f"{name}() of an array returns a new array, which a kernel cannot "
                          f"allocate (numba.cuda neither): pass the output array, e.g. "
                          f"`{name}({', '.join(ast.unparse(a) for a, _ in ins)}, out)`", node)
    key = (ufunc.__name__, loop.letters, tuple(args[:nin]),
           tuple(t for _, t in outs))
    fn = typer.env.generated.get(key)
    if fn is None:
        text, casts = _loop_text(ufunc, loop, element, [t for _, t in ins],
                                 outs[0][1] if outs else None)
        fn = typer.env.generated[key] = UfuncLoopFunction(ufunc.__name__, text, casts)
    positional = list(zip(node.args[:nin], args[:nin]))
    if outs:
        positional.append(outs[0])
    dc = bind_device_call(typer, node, fn, args, {}, positional=positional)
    typer.tf.info[node] = Call(CallKind.UFUNC, UfuncCall(ufunc, loop, dc))
    return dc.callee.return_type


def _loop_text(ufunc, loop, element, in_types, out_t):
    """``(source, casts)`` of the loop function of ``ufunc`` for inputs of ``in_types`` and
    the output array type ``out_t`` (None: a call on scalars, which returns the element);
    ``casts``: {global name: cujit type} of the conversions the source calls."""
    name = ufunc.__name__
    params = [f"x{k}" for k in range(ufunc.nin)]
    lines = []
    casts = {}

    def cast(target, expr):
        casts[f"_t{target.name}"] = target
        return f"_t{target.name}({expr})"

    def element_of(values, indent):
        # the operands converted to the loop's input types, the element in the loop's type
        for k, (v, t) in enumerate(values):
            v = v if t is loop.inputs[k] else cast(loop.inputs[k], v)
            lines.append(f"{indent}{'ab'[k]} = {v}")
        return cast(loop.outputs[0], f"({element})")

    if out_t is None:
        lines.append(f"def np_{name}_loop({', '.join(params)}):")
        lines.append(f"    return {element_of(list(zip(params, in_types)), '    ')}")
        return "\n".join(lines) + "\n", casts
    lines.append(f"def np_{name}_loop({', '.join(params)}, out):")
    n = out_t.ndim
    values = []
    for k, (p, t) in enumerate(zip(params, in_types)):
        if not isinstance(t, T.Array):
            values.append((p, t))
            continue
        idx = []
        for j in range(t.ndim):
            od = n - t.ndim + j
            # NumPy broadcasting: a dimension of 1 repeats; any other size must match
            lines.append(f"    if {p}.shape[{j}] != 1 and {p}.shape[{j}] != out.shape[{od}]:")
            lines.append(f"        raise ValueError(\"np.{name}(): input {k} does not "
                         f"broadcast to the output's shape (its dimension {j})\")")
            lines.append(f"    s{k}_{j} = 0 if {p}.shape[{j}] == 1 else 1")
            idx.append(f"i{od} * s{k}_{j}")
        values.append((f"{p}[{', '.join(idx)}]" if idx else f"{p}[()]", t.dtype))
    indent = "    "
    for d in range(n):
        lines.append(f"{indent}for i{d} in range(out.shape[{d}]):")
        indent += "    "
    r = element_of(values, indent)
    if loop.outputs[0] is not out_t.dtype:
        r = cast(out_t.dtype, r)
    oidx = ", ".join(f"i{d}" for d in range(n)) if n else "()"
    lines.append(f"{indent}out[{oidx}] = {r}")
    lines.append("    return out")
    return "\n".join(lines) + "\n", casts
