"""cujit types → llvmlite types, scalar casts and truth values (NVVM's LLVM-7 dialect).

Representation of values in registers (``ltype``) and in memory (``mtype``):
``boolean`` → i1 / i8; ``intN``/``uintN`` → iN; ``float16/32/64`` → half/float/double;
``bfloat16`` → i16 (its bits; conversions are inline PTX, ``bf16_ptx``); ``fp8_e4m3`` /
``fp8_e5m2`` / ``fp8_e8m0`` → i8 (their bits; conversions in ``fp8_ptx``);
``complex64/128`` → ``{float, float}`` / ``{double, double}``; ``Array(dtype, ndim)`` →
``{elem*, [ndim x i64] shape, [ndim x i64] strides (bytes)}`` with a generic-address-space
data pointer (NVVM infers shared/const/local from the ``addrspacecast``); ``Record`` → ``i8*``
(a reference to the record's bytes); ``UniTuple`` → ``[n x T]``; ``Tuple`` → ``{T0, T1 …}``;
``Fragment`` → ``[n x i32]*`` / ``[n x float]*`` (a lane's tensor-core registers);
``WarpgroupAccumulator`` → ``[n/2 x float]*``; ``WgmmaDescriptor`` → ``i64``;
``CPointer(dtype)`` → ``elem*`` (in its address space, generic when None); ``voidptr`` →
``i8*``.
"""
from llvmlite import ir

import numpy as np

from .. import fp8_scalar
from .. import types as T
from . import bf16_ptx, fp8_ptx
from ..frontend import rules

__all__ = ["ltype", "mtype", "cast", "NAT", "floordiv_i64", "time_unit_cast", "int_to_half", "half_asm", "truth", "const", "passes_param", "I1", "I8", "I32", "I64", "I8P",
           "int_const", "array_ltype", "alignment_of"]

I1, I8, I32, I64 = ir.IntType(1), ir.IntType(8), ir.IntType(32), ir.IntType(64)
I8P = I8.as_pointer()
_FLOATS = {16: ir.HalfType(), 32: ir.FloatType(), 64: ir.DoubleType()}
_cache = {}


def ltype(t):
    """The register type of cujit type ``t`` (None for pseudo-types and void)."""
    r = _cache.get(t)
    if r is not None:
        return r
    if isinstance(t, T.Boolean):
        r = I1
    elif isinstance(t, T.Integer):
        r = ir.IntType(t.bitwidth)
    elif isinstance(t, T.Float):
        r = _FLOATS[t.bitwidth]
    elif isinstance(t, (T.NPDatetime, T.NPTimedelta)):
        r = ir.IntType(64)      # a count of the unit; NaT is the smallest int64
    elif isinstance(t, T.BFloat16):
        r = bf16_ptx.I16
    elif isinstance(t, T.FP8):
        r = fp8_ptx.I8
    elif isinstance(t, T.Complex):
        f = _FLOATS[t.bitwidth // 2]
        r = ir.LiteralStructType([f, f])
    elif isinstance(t, T.Array):
        r = array_ltype(t)
    elif isinstance(t, T.Record):
        r = I8P
    elif isinstance(t, T.CPointer):
        r = mtype(t.dtype).as_pointer(t.addrspace or 0)
    elif isinstance(t, T.RawPointer):
        r = I8P
    elif isinstance(t, T.UniTuple):
        r = ir.ArrayType(ltype(t.dtype), t.count)
    elif isinstance(t, T.Tuple):
        r = ir.LiteralStructType([ltype(x) for x in t.types])
    elif isinstance(t, T.NoneType):
        r = ir.VoidType()
    elif isinstance(t, T.EnumMember):
        r = ltype(t.dtype)             # a member is its value on the device
    elif isinstance(t, T.CharSeq):
        r = ir.ArrayType(I8, t.size)   # its bytes (UTF-32 code points for a U string)
    elif isinstance(t, T.Fragment):
        # a reference to the lane's registers (an entry-block alloca that SROA promotes):
        # wmma calls update a fragment in place, as CUDA's fragment objects
        n, kind = t.registers
        r = ir.ArrayType(_FLOATS[32] if kind == "f32" else I32, n).as_pointer()
    elif isinstance(t, T.WarpgroupAccumulator):
        r = ir.ArrayType(_FLOATS[32], t.registers).as_pointer()   # as Fragment
    elif isinstance(t, T.WgmmaDescriptor):
        r = I64                         # the 64-bit PTX matrix descriptor
    else:
        return None
    _cache[t] = r
    return r


def mtype(t):
    """The in-memory type of one element of dtype ``t`` (bool is a byte; a record is its
    bytes)."""
    if isinstance(t, T.Boolean):
        return I8
    if isinstance(t, T.Record):
        return ir.ArrayType(I8, t.size)
    return ltype(t)


def array_ltype(t):
    ptr = mtype(t.dtype).as_pointer()
    if t.ndim == 0:
        return ir.LiteralStructType([ptr])
    dims = ir.ArrayType(I64, t.ndim)
    return ir.LiteralStructType([ptr, dims, dims])


def alignment_of(t):
    """Natural alignment (bytes) of dtype ``t``."""
    if isinstance(t, T.Record):
        return t.alignment
    if isinstance(t, T.Complex):
        return t.bitwidth // 16
    if isinstance(t, T.CharSeq):
        return 1 if t.kind == "S" else 4
    return max(t.bitwidth // 8, 1)


def int_const(v, ty=I64):
    return ir.Constant(ty, v)


def const(t, v):
    """The LLVM constant of Python/NumPy value ``v`` as type ``t``."""
    if isinstance(t, T.Boolean):
        return ir.Constant(I1, 1 if v else 0)
    if isinstance(t, T.Integer):
        v = int(v)
        return ir.Constant(ltype(t), v & ((1 << t.bitwidth) - 1) if v < 0 and not t.signed
                           else v)
    if isinstance(t, T.Float):
        return ir.Constant(ltype(t), float(v))
    if isinstance(t, T.BFloat16):
        return bf16_ptx.bits_const(t(v).bits)
    if isinstance(t, T.FP8):
        return ir.Constant(fp8_ptx.I8, (v if isinstance(v, fp8_scalar.FP8) else t(v)).bits)
    if isinstance(t, T.Complex):
        f = _FLOATS[t.bitwidth // 2]
        c = complex(v)
        return ir.Constant(ltype(t), [ir.Constant(f, c.real), ir.Constant(f, c.imag)])
    if isinstance(t, (T.UniTuple, T.Tuple)):
        return ir.Constant(ltype(t), [const(et, ev) for et, ev in zip(t.types, v)])
    if isinstance(t, T.EnumMember):
        return const(t.dtype, v.value)
    raise TypeError(f"no constant of type {t}")


def truth(b, val, t):
    """i1: the truth value of ``val`` (type ``t``) — nonzero / not 0.0."""
    if isinstance(t, T.Boolean):
        return val
    if isinstance(t, T.Integer):
        return b.icmp_unsigned("!=", val, ir.Constant(val.type, 0))
    if isinstance(t, T.Float):
        return b.fcmp_unordered("!=", val, ir.Constant(val.type, 0.0))
    if isinstance(t, T.BFloat16):
        return bf16_ptx.truth(b, val)
    if isinstance(t, T.FP8):
        return fp8_ptx.truth(b, val, t.fmt)
    if isinstance(t, T.Complex):
        re = b.extract_value(val, 0)
        im = b.extract_value(val, 1)
        z = ir.Constant(re.type, 0.0)
        return b.or_(b.fcmp_unordered("!=", re, z), b.fcmp_unordered("!=", im, z))
    raise TypeError(f"no truth value for {t}")


_INT_REG = {8: "c", 16: "h", 32: "r", 64: "l"}


def int_to_half(b, val, src):
    """float16 of integer ``val`` (type ``src``), rounded to nearest: the GPU's
    ``cvt.rn.f16.{s,u}N`` from the integer's own width, as numba-cuda converts (the value
    is LLVM's ``sitofp``/``uitofp``, which NVVM would widen to 16 bits first)."""
    sign = "s" if src.signed else "u"
    bits = b.asm(ir.FunctionType(ir.IntType(16), [val.type]),
                 f"cvt.rn.f16.{sign}{src.bitwidth} $0, $1;",
                 f"=h,{_INT_REG[src.bitwidth]}", [val], side_effect=False)
    return b.bitcast(bits, ir.HalfType())


def half_asm(b, text, *vals):
    """A float16 result of the one-instruction PTX ``text`` on float16 ``vals`` (as their
    ``i16`` bits, the ``h`` registers): ``neg.f16``, ``abs.f16``, ``fma.rn.f16``."""
    i16 = ir.IntType(16)
    args = [b.bitcast(v, i16) for v in vals]
    cons = ",".join(["=h"] + ["h"] * len(args))
    out = b.asm(ir.FunctionType(i16, [i16] * len(args)), text, cons, args, side_effect=False)
    return b.bitcast(out, ir.HalfType())


#: NaT, the int64 of "not a time" in datetime64/timedelta64 values
NAT = -(1 << 63)


def _factor(src_unit, dst_unit):
    """``(k, multiply)``: a count in ``src_unit`` is ``k`` times (``multiply``) or a k-th
    (floored) of a count in ``dst_unit``."""
    if src_unit == dst_unit or not src_unit or not dst_unit:
        return 1, True
    ratio = np.timedelta64(1, src_unit) / np.timedelta64(1, dst_unit)
    if ratio >= 1:
        return int(round(ratio)), True
    return int(round(1 / ratio)), False


def floordiv_i64(b, x, y):
    """Python's floor division of two i64 values (``y`` not 0)."""
    q = b.sdiv(x, y)
    r = b.srem(x, y)
    fix = b.and_(b.icmp_signed("!=", r, ir.Constant(ir.IntType(64), 0)),
                 b.icmp_signed("!=", b.icmp_signed("<", r, ir.Constant(ir.IntType(64), 0)),
                               b.icmp_signed("<", y, ir.Constant(ir.IntType(64), 0))))
    return b.select(fix, b.sub(q, ir.Constant(ir.IntType(64), 1)), q)


def time_unit_cast(b, v, src_unit, dst_unit):
    """An int64 count ``v`` of datetime/timedelta unit ``src_unit`` as a count of
    ``dst_unit``: multiplied up to a finer unit, floored to a coarser one (NumPy's casts);
    NaT kept."""
    k, multiply = _factor(src_unit, dst_unit)
    if k == 1:
        return v
    i64 = ir.IntType(64)
    scaled = b.mul(v, ir.Constant(i64, k)) if multiply else floordiv_i64(b, v, ir.Constant(i64, k))
    return b.select(b.icmp_signed("==", v, ir.Constant(i64, NAT)), ir.Constant(i64, NAT), scaled)


def cast(b, val, src, dst):
    """Convert ``val`` of cujit scalar type ``src`` to ``dst`` (NumPy's conversion rules;
    float → int truncates toward zero)."""
    if src is dst or dst is None:
        return val
    if isinstance(dst, T.CharSeq):
        # a str/bytes constant (typed as the constant, checked by the typer): its bytes as
        # NumPy stores them in the element, zero-padded or cut
        return ir.Constant(ltype(dst), bytearray(dst.encode(src.obj)))
    if isinstance(src, T.FP8) or isinstance(dst, T.FP8):
        return _cast_fp8(b, val, src, dst)
    if isinstance(src, T.BFloat16) or isinstance(dst, T.BFloat16):
        return _cast_bf16(b, val, src, dst)
    if isinstance(src, (T.NPDatetime, T.NPTimedelta)) and type(dst) is type(src):
        return time_unit_cast(b, val, src.unit, dst.unit)
    if isinstance(dst, T.Boolean):
        return truth(b, val, src)
    if isinstance(src, T.Boolean):
        if isinstance(dst, T.Integer):
            return b.zext(val, ltype(dst))
        if isinstance(dst, T.Float):
            return b.uitofp(val, ltype(dst))
        if isinstance(dst, T.Complex):
            return _to_complex(b, b.uitofp(val, _FLOATS[dst.bitwidth // 2]), dst)
    if isinstance(src, T.Integer):
        if isinstance(dst, T.Integer):
            if dst.bitwidth > src.bitwidth:
                return (b.sext if src.signed else b.zext)(val, ltype(dst))
            if dst.bitwidth < src.bitwidth:
                return b.trunc(val, ltype(dst))
            return val
        if dst is T.float16:
            return int_to_half(b, val, src)
        if isinstance(dst, T.Float):
            return (b.sitofp if src.signed else b.uitofp)(val, ltype(dst))
        if isinstance(dst, T.Complex):
            f = _FLOATS[dst.bitwidth // 2]
            return _to_complex(b, (b.sitofp if src.signed else b.uitofp)(val, f), dst)
    if isinstance(src, T.Float):
        if isinstance(dst, T.Integer):
            return (b.fptosi if dst.signed else b.fptoui)(val, ltype(dst))
        if isinstance(dst, T.Float):
            if dst.bitwidth > src.bitwidth:
                return b.fpext(val, ltype(dst))
            return b.fptrunc(val, ltype(dst))
        if isinstance(dst, T.Complex):
            return _to_complex(b, cast(b, val, src, dst.underlying_float), dst)
    if isinstance(src, T.Complex) and isinstance(dst, T.Complex):
        re = cast(b, b.extract_value(val, 0), src.underlying_float, dst.underlying_float)
        im = cast(b, b.extract_value(val, 1), src.underlying_float, dst.underlying_float)
        out = b.insert_value(ir.Constant(ltype(dst), ir.Undefined), re, 0)
        return b.insert_value(out, im, 1)
    if isinstance(src, T.Array) and isinstance(dst, T.Array) and src.ndim == dst.ndim:
        return val          # same LLVM struct; only the layout/readonly flag differ
    if isinstance(src, (T.CPointer, T.RawPointer)) and isinstance(dst, (T.CPointer,
                                                                       T.RawPointer)):
        return b.bitcast(val, ltype(dst)) if val.type != ltype(dst) else val
    if isinstance(src, (T.UniTuple, T.Tuple)) and isinstance(dst, (T.UniTuple, T.Tuple)):
        out = ir.Constant(ltype(dst), ir.Undefined)
        for i, (s, d) in enumerate(zip(src.types, dst.types)):
            out = b.insert_value(out, cast(b, b.extract_value(val, i), s, d), i)
        return out
    if src == dst:
        return val
    raise TypeError(f"cannot convert {src} to {dst}")


def _cast_bf16(b, val, src, dst):
    """Conversions to and from bfloat16: from it through its exact float32; to it rounded
    once to nearest even by the PTX conversion of the source type (``bf16_ptx``)."""
    if isinstance(src, T.BFloat16):
        if isinstance(dst, T.Boolean):
            return bf16_ptx.truth(b, val)
        return cast(b, bf16_ptx.to_f32(b, val), T.float32, dst)
    if isinstance(src, T.Boolean):
        return bf16_ptx.from_int(b, val, False)
    if isinstance(src, T.Integer):
        return bf16_ptx.from_int(b, val, src.signed)
    if isinstance(src, T.Float):
        if src.bitwidth == 64:
            return bf16_ptx.from_f64(b, val)
        return bf16_ptx.from_f32(b, val if src.bitwidth == 32 else b.fpext(val, _FLOATS[32]))
    raise TypeError(f"cannot convert {src} to {dst}")


def _cast_fp8(b, val, src, dst):
    """Conversions to and from the FP8 types, as ``cuda_fp8.hpp``'s constructors and
    conversion operators (``fp8_ptx``): from an FP8 value float16 / bfloat16 exactly,
    float32 / float64 through the float16 (E8M0: the bfloat16), integers truncated and
    clamped through the bfloat16 (``cvt.rzi``); to one from the source type's conversion
    (float16 and bfloat16 through their exact float32), saturating."""
    if isinstance(src, T.FP8):
        if isinstance(dst, T.FP8):
            raise TypeError(f"cannot convert {src} to {dst}")
        if isinstance(dst, T.Boolean):
            return fp8_ptx.truth(b, val, src.fmt)
        if isinstance(dst, T.BFloat16):
            return fp8_ptx.to_bf16(b, val, src.fmt)
        if isinstance(dst, T.Integer):
            return bf16_ptx.to_int(b, fp8_ptx.to_bf16(b, val, src.fmt), dst.signed,
                                   dst.bitwidth, "rz")
        if dst is T.float16 and src.fmt != "e8m0":
            return fp8_ptx.to_f16(b, val, src.fmt)
        f = fp8_ptx.to_f32(b, val, src.fmt)
        if dst is T.float16:
            # E8M0 to half rounds the float32 to nearest; a NaN is the canonical one
            h = b.bitcast(b.fptrunc(f, _FLOATS[16]), ir.IntType(16))
            nan = b.fcmp_unordered("uno", f, f)
            return b.bitcast(b.select(nan, ir.Constant(ir.IntType(16), 0x7FFF), h),
                             _FLOATS[16])
        return cast(b, f, T.float32, dst)
    fmt = dst.fmt
    if isinstance(src, T.BFloat16):
        src, val = T.float32, bf16_ptx.to_f32(b, val)
    if isinstance(src, T.Boolean):
        src, val = T.uint8, b.zext(val, ir.IntType(8))
    if isinstance(src, T.Integer):
        return fp8_ptx.from_int(b, val, src.signed, fmt)
    if isinstance(src, T.Float):
        if src.bitwidth == 16:
            src, val = T.float32, b.fpext(val, _FLOATS[32])
        if src.bitwidth == 64:
            return (fp8_ptx.e8m0_from_f64(b, val, "ru") if fmt == "e8m0"
                    else fp8_ptx.from_f64(b, val, fmt))
        return (fp8_ptx.e8m0_from_f32(b, val, "ru") if fmt == "e8m0"
                else fp8_ptx.from_f32(b, val, fmt))
    raise TypeError(f"cannot convert {src} to {dst}")


def _to_complex(b, re, dst):
    f = re.type
    out = b.insert_value(ir.Constant(ltype(dst), ir.Undefined), re, 0)
    return b.insert_value(out, ir.Constant(f, 0.0), 1)


def is_scalar(t):
    return rules.is_number(t)


def passes_param(t):
    """True when a device-function parameter of type ``t`` exists at run time (not a
    function passed as a value, not an empty tuple, not None)."""
    if isinstance(t, rules.PseudoType) or t is T.none:
        return False
    return not (isinstance(t, (T.Tuple, T.UniTuple)) and not t.types)
