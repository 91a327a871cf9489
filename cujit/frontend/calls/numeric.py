"""Typing of the data-kind calls added for drop-in numba.cuda kernels (issue 13): ``cmath``,
``cuda.fp16`` intrinsics, ``math.modf`` / ``math.frexp`` / ``math.ldexp`` and
``int.bit_count()``.  Result types as numba-cuda's ``cudamath`` / ``cmathdecl`` /
``fp16`` typing: cmath on ``complex64`` stays ``complex64``, anything else computes in
``complex128``; ``frexp`` gives ``(float, int32)``; fp16 functions take and give ``float16``.
Lowering: ``lower_complex.py``, ``lower_fp16.py``, ``lower_scalars.py``.
"""
import ast
import cmath
import math

from ... import bf16, fp8
from ... import types as T
from .. import rules
from ..callkinds import Call, CallKind, FP8Conversion, MathFunc

__all__ = ["table_entries", "type_ext", "type_bf16", "type_bf16_math", "type_fp8", "type_fp8_cvt",
           "CMATH_UNARY",
           "FP16_UNARY",
           "FP16_BINARY", "FP16_COMPARE"]

CMATH_UNARY = ("exp", "log", "log10", "sqrt", "sin", "cos", "tan", "asin", "acos", "atan",
               "sinh", "cosh", "tanh", "asinh", "acosh", "atanh")
_CMATH_OTHER = ("phase", "polar", "rect", "isnan", "isinf", "isfinite")
FP16_BINARY = ("hadd", "hsub", "hmul", "hdiv", "hmax", "hmin")
FP16_COMPARE = ("heq", "hne", "hlt", "hle", "hgt", "hge")
FP16_UNARY = ("hneg", "habs", "hsqrt", "hrsqrt", "hrcp", "hexp", "hexp2", "hexp10", "hlog",
              "hlog2", "hlog10", "hsin", "hcos", "hceil", "hfloor", "htrunc", "hrint")


def table_entries():
    """{id(callable): key} of the functions typed here (merged into ``calls._table``)."""
    from ... import fp16
    t = {}
    for name in CMATH_UNARY + _CMATH_OTHER:
        t[id(getattr(cmath, name))] = "cmath." + name
    for name in ("modf", "frexp", "ldexp"):
        t[id(getattr(math, name))] = "math." + name
    for name in FP16_BINARY + FP16_COMPARE + FP16_UNARY + ("hfma",):
        t[id(getattr(fp16, name))] = "fp16." + name
    for name in bf16.INTRINSICS:
        t[id(getattr(bf16, name))] = "bf16." + name
    for name in (*fp8.KERNEL_FUNCTIONS, *fp8.CVT_FUNCTIONS):
        t[id(getattr(fp8, name))] = "fp8." + name
    return t


def _complex_of(t):
    return T.complex64 if t in (T.complex64, T.float32, T.float16) else T.complex128


def type_ext(typer, node, key, args):
    """Result type of call ``key`` (``'cmath.exp'``, ``'fp16.hadd'``, ...) with argument
    types ``args``; records its :class:`~.callkinds.Call` in ``tf.info[node]``.  TypingError
    for a wrong count or kind."""
    mod, name = key.split(".", 1)
    if mod == "bf16":
        return type_bf16(typer, node, name, args)
    if mod == "fp8":
        return type_fp8(typer, node, name, args)
    kind = {"cmath": CallKind.CMATH, "fp16": CallKind.FP16, "math": CallKind.MATH_PARTS}[mod]
    typer.tf.info[node] = Call(kind, MathFunc(name))

    def need(n):
        if len(args) != n:
            raise typer.error(f"{key}() takes {n} argument(s), got {len(args)}", node)
        for a, t in zip(node.args, args):
            if not rules.is_number(t):
                raise typer.error(f"{key}() takes numbers, got a value of type {t}", a)

    if mod == "fp16":
        need(3 if name == "hfma" else 2 if name in FP16_BINARY + FP16_COMPARE else 1)
        for a, t in zip(node.args, args):
            # other real numbers convert to float16 first, as numba-cuda's typing converts
            # them (hmul(x, 2), hmul(x, 2.5))
            if not (t is T.float16 or rules.is_int(t) or isinstance(t, T.Boolean)
                    or t in (T.float32, T.float64)):
                raise typer.error(f"cuda.fp16.{name}() takes float16 values (or real "
                                  f"numbers, converted to float16), got {t}", a)
        return T.boolean if name in FP16_COMPARE else T.float16
    if mod == "cmath":
        if name == "rect":
            need(2)
            if any(rules.is_complex(t) for t in args):
                raise typer.error("cmath.rect(r, phi) takes real numbers", node)
            return T.complex64 if all(t in (T.float32, T.float16) for t in args) \
                else T.complex128
        if name == "log" and len(args) == 2:
            need(2)     # log(z, base): log z / log base, in complex64 when both are
            return T.complex64 if all(_complex_of(t) is T.complex64 for t in args) \
                else T.complex128
        if name == "log" and len(args) != 1:
            raise typer.error(f"cmath.log() takes 1 or 2 arguments (z, base), got "
                              f"{len(args)}", node)
        need(1)
        ct = _complex_of(args[0])
        if name in ("isnan", "isinf", "isfinite"):
            return T.boolean
        if name == "phase":
            return ct.underlying_float
        if name == "polar":
            return T.UniTuple(ct.underlying_float, 2)
        return ct
    # math.modf / frexp / ldexp
    if name == "ldexp":
        need(2)
        if not rules.is_int(args[1]):
            raise typer.error(f"math.ldexp(x, i): i must be an integer, got {args[1]}",
                              node.args[1])
    else:
        need(1)
    if rules.is_complex(args[0]):
        raise typer.error(f"math.{name} of a complex number is not supported", node)
    ft = args[0] if args[0] in (T.float32, T.float64) else T.float64
    if name == "modf":
        return T.UniTuple(ft, 2)
    if name == "frexp":
        return T.Tuple((ft, T.int32))
    return ft


def type_bf16(typer, node, name, args):
    """Result type of ``cuda.bf16.<name>(...)`` (numba-cuda's signatures, ``bf16.SIGNATURES``);
    records ``Call(BF16, MathFunc(<the function's own name>))`` (aliases such as
    ``float2bfloat16`` record the function they name).  A real argument to a bfloat16
    parameter is converted as ``bfloat16(x)``.  TypingError for a wrong count or an argument
    that is not a number (complex, arrays ...)."""
    params, result = bf16.SIGNATURES[name]
    if len(args) != len(params):
        raise typer.error(f"cuda.bf16.{name}() takes {len(params)} argument(s), got "
                          f"{len(args)}", node)
    for a, t, p in zip(node.args, args, params):
        if isinstance(p, T.BFloat16):
            # numba-cuda converts a real argument as bfloat16(x) does (its tests pass int16)
            if not (t is p or rules.is_int(t) or rules.is_float(t)
                    or isinstance(t, T.Boolean)):
                raise typer.error(f"cuda.bf16.{name}() takes bfloat16 values, got {t} "
                                  "(convert with bfloat16(x))", a)
        elif not (rules.is_int(t) or isinstance(t, T.Boolean)
                  or (rules.is_float(t) and rules.is_float(p))):
            raise typer.error(f"cuda.bf16.{name}() takes a {p} value, got {t}", a)
    typer.tf.info[node] = Call(CallKind.BF16, MathFunc(getattr(bf16, name).__name__))
    return result


def type_fp8(typer, node, name, args):
    """Result type of ``cuda.fp8.<name>(...)``: ``float32_to_e4m3`` / ``_e5m2`` take a real
    number (converted to float32) and give the bits as ``uint8``; ``e4m3_to_float32`` /
    ``e5m2_to_float32`` take an integer (its low 8 bits) and give ``float32``; the ``cvt_*``
    functions as :func:`type_fp8_cvt`.  TypingError for a wrong count or kind."""
    if name in fp8.CVT_FUNCTIONS:
        return type_fp8_cvt(typer, node, name, args)
    _, direction = fp8.KERNEL_FUNCTIONS[name]
    if len(args) != 1:
        raise typer.error(f"cuda.fp8.{name}() takes 1 argument, got {len(args)}", node)
    t = args[0]
    ok = (rules.is_int(t) or rules.is_float(t)) if direction == "to" else rules.is_int(t)
    if not ok:
        want = "a real number" if direction == "to" else "an integer (the FP8 bits)"
        raise typer.error(f"cuda.fp8.{name}() takes {want}, got {t}", node.args[0])
    typer.tf.info[node] = Call(CallKind.FP8, FP8Conversion(name))
    return T.uint8 if direction == "to" else T.float32


def _fp8_const(typer, node, name, arg, what, convert):
    """The compile-time argument ``arg`` of ``cuda.fp8.<name>()`` converted by ``convert``
    (ValueError for a bad value); TypingError when it is not a constant or not valid."""
    if arg not in typer.tf.constvals:
        raise typer.error(f"cuda.fp8.{name}(): the {what} argument must be a compile-time "
                          f"constant (an enum member), got '{ast.unparse(arg)}'", arg)
    try:
        return convert(typer.tf.constvals[arg])
    except ValueError as e:
        raise typer.error(f"cuda.fp8.{name}(): {e}", arg) from None


def type_fp8_cvt(typer, node, name, args):
    """Result type of ``cuda.fp8.cvt_*(x, ...)`` (``fp8.CVT_FUNCTIONS``): the first argument
    a real number (converted to float32 / float64), the bfloat16 bits (a ``ushort1``) or the
    E8M0 bits (an integer, its low 8 bits); then the constant ``saturate`` and ``interp``
    (to FP8) or ``mode`` (to E8M0).  The result is the bits: ``uint8``, or a ``ushort1`` for
    ``cvt_e8m0_to_bf16raw``.  TypingError for a wrong count, kind or constant."""
    source, target = fp8.CVT_FUNCTIONS[name]
    nargs = 1 if target == "bf16raw" else 3
    if len(args) != nargs or len(node.args) != nargs:
        raise typer.error(f"cuda.fp8.{name}() takes {nargs} positional argument"
                          f"{'s' if nargs > 1 else ''}, got {len(args)}", node)
    t = args[0]
    if source in ("float32", "float64"):
        ok, want = rules.is_int(t) or rules.is_float(t), "a real number"
    elif source == "bf16raw":
        ok = getattr(t, "pyclass", None) is fp8.BF16RAW
        want = "the bfloat16 bits as a ushort1 (cvt_e8m0_to_bf16raw's result)"
    else:
        ok, want = rules.is_int(t), "an integer (the E8M0 bits)"
    if not ok:
        raise typer.error(f"cuda.fp8.{name}() takes {want}, got {t}", node.args[0])
    if target == "bf16raw":
        typer.tf.info[node] = Call(CallKind.FP8, FP8Conversion(name))
        return fp8.BF16RAW.vector_type
    saturate = _fp8_const(typer, node, name, node.args[1], "saturate",
                          lambda v: fp8.saturation_t(v) is fp8.saturation_t.SATFINITE)
    if target == "fp8":
        fmt = _fp8_const(typer, node, name, node.args[2], "interp", fp8.interpretation_name)
        data = FP8Conversion(name, saturate, fmt=fmt)
    else:
        mode = _fp8_const(typer, node, name, node.args[2], "mode", fp8.round_mode)
        data = FP8Conversion(name, saturate, mode=mode)
    typer.tf.info[node] = Call(CallKind.FP8, data)
    return T.uint8


def type_bf16_math(typer, node, name, args):
    """``math.<name>(x)`` of a bfloat16 ``x``: the ``cuda.bf16`` function numba-cuda binds to
    it (``math.sqrt`` → ``hsqrt``), typed and recorded as that call.  TypingError for a math
    function with no bfloat16 version."""
    h = bf16.MATH_FUNCTIONS.get(name)
    if h is None or len(args) != 1:
        raise typer.error(f"math.{name}() of a bfloat16 is not supported (bfloat16 has "
                          f"{', '.join('math.' + n for n in bf16.MATH_FUNCTIONS)})", node)
    return type_bf16(typer, node, h, args)


def type_bit_count(typer, node, recv, args):
    """``i.bit_count()`` of an integer: the number of one bits of ``abs(i)`` (Python's
    ``int.bit_count``), as int64."""
    if args:
        raise typer.error("bit_count() takes no arguments", node)
    typer.tf.info[node] = Call(CallKind.BIT_COUNT)
    return T.int64
