"""The ``ast`` rewrite behind :mod:`.typedexec`: a new function body in which every
numeric expression computes with the type the compiler's type inference gave it (see that
module's docstring for the rules).  The typed ``ast`` is never modified (its nodes key
``typemap``); nodes this module does not handle are copied with their children rewritten.
"""
import ast

import numpy as np

from .. import bf16 as B
from .. import bf16_scalar, fp8, fp8_scalar
from .. import types as T
from ..kernelstate import state as _state
from ..frontend.callkinds import CallKind, call_of
from ..frontend.calls.numeric import CMATH_UNARY
from ..frontend.nodeinfo import AugAssign, SpecialRegister
from . import libdevice_sim, pointers, scalars

__all__ = ["Rewriter", "compare_types"]


def _numeric(t):
    return isinstance(t, (T.Integer, T.Float, T.Boolean, T.Complex))


def _captures_device_arrays(pyfunc):
    """True when ``pyfunc`` names a device array (or CUDA-array-interface object) as a
    global or closure variable (see :mod:`.captured`)."""
    from .captured import _is_device_array
    code = pyfunc.__code__
    g = pyfunc.__globals__
    if any(_is_device_array(g.get(n)) for n in code.co_names if g.get(n) is not None):
        return True
    for cell in pyfunc.__closure__ or ():
        try:
            if _is_device_array(cell.cell_contents):
                return True
        except ValueError:
            pass
    return False


def _in_launch(pyfunc):
    """``pyfunc`` called as a simulated device function is: its captured device arrays seen
    as the launch's simulated views (``SimLaunch.rebound``)."""
    def call(*args, **kwargs):
        return _state.current.block.launch.rebound(pyfunc)(*args, **kwargs)
    return call


def _no_sim(intr):
    """The simulator's stand-in for an intrinsic without a Python implementation."""
    def call(*args):
        raise NotImplementedError(
            f"intrinsic {intr.__name__}() has no simulator implementation: give one with "
            f"@intrinsic(sim=python_function) or @{intr.__name__}.simulator")
    return call


def _widens(src, dst, same=False):
    """True when every value of integer type ``src`` is a value of integer type ``dst``
    (integers are Python ints, so such a conversion changes nothing)."""
    if not (isinstance(src, T.Integer) and isinstance(dst, T.Integer)):
        return same and src is dst and src is not None
    lo, hi = scalars.int_range(src)
    dlo, dhi = scalars.int_range(dst)
    return dlo <= lo and hi <= dhi


def _loc(new, old):
    return ast.copy_location(new, old)


def _c_copy(a):
    return np.array(a, order="C", copy=True)


def _fp8_conversion(src, dst):
    """The simulator's conversion of a value of type ``src`` to type ``dst``, one of them an
    FP8 type, as the compiled cast (``ltypes._cast_fp8``; rules in ``fp8_scalar``)."""
    if isinstance(dst, T.FP8):
        fmt = dst.fmt
        if isinstance(src, T.BFloat16):
            return lambda v: fp8_scalar.FP8(fmt, bf16_scalar.from_storage(v))
        to_src = scalars.caster(src)
        return lambda v: fp8_scalar.FP8(fmt, to_src(v))
    if isinstance(dst, T.Boolean):
        return lambda v: np.bool_(bool(v))
    if isinstance(dst, T.BFloat16):
        return fp8_scalar.FP8.to_bfloat16
    if isinstance(dst, T.Integer):
        signed, width = dst.signed, dst.bitwidth
        return lambda v: v.to_int(signed, width)
    return {16: fp8_scalar.FP8.to_float16, 32: fp8_scalar.FP8.to_float32,
            64: fp8_scalar.FP8.to_float64}[dst.bitwidth]


def _fp8_cvt(data):
    """The simulator's ``cuda.fp8.cvt_*`` call of ``data`` (a ``FP8Conversion``): the host
    function with the call's constant arguments, the bits as ``np.uint8``."""
    fn = getattr(fp8, data.name)
    sat = fp8.saturation_t.SATFINITE if data.saturate else fp8.saturation_t.NOSAT
    if data.fmt:
        interp = fp8.fp8_interpretation_t.E4M3 if data.fmt == "e4m3" else \
            fp8.fp8_interpretation_t.E5M2
        return lambda x: np.uint8(fn(x, sat, interp))
    if data.mode:
        return lambda x: np.uint8(fn(x, sat, data.mode))
    return fn


def _mark(node):
    node._cj_exact = True
    return node


_DIRECT_BINOPS = {"+": ast.Add, "-": ast.Sub, "*": ast.Mult, "/": ast.Div, "//": ast.FloorDiv,
                  "%": ast.Mod, "**": ast.Pow, "&": ast.BitAnd, "|": ast.BitOr,
                  "^": ast.BitXor, "<<": ast.LShift, ">>": ast.RShift}
_OPNAMES = {v: k for k, v in _DIRECT_BINOPS.items()}


def _kind(tf, node):
    """The :class:`CallKind` of call ``node`` (None: not a recorded call)."""
    c = call_of(tf, node)
    return None if c is None else c.kind


_IDENTITY = {ast.Is: ast.Eq, ast.IsNot: ast.NotEq}


def compare_types(ts):
    """The type each operand of a comparison chain of operand types ``ts`` is converted to
    before comparing (None: compared as it is), as Numba types the chain: each adjacent pair
    at its unified type (int64 with uint64 is float64), but integers of two integer types
    compare exactly by value.  Returns a list, or None when a pair has no common type or a
    middle operand would be compared at two types."""
    from ..frontend import rules
    targets = [set() for _ in ts]
    for i, (a, b) in enumerate(zip(ts, ts[1:])):
        if a is b:
            continue
        ct = T.boolean if isinstance(a, T.Boolean) and isinstance(b, T.Boolean) \
            else rules.unify(a, b)
        if ct is None:
            return None
        if isinstance(ct, T.Integer) and isinstance(a, T.Integer) and isinstance(b, T.Integer):
            continue
        targets[i].add(ct)
        targets[i + 1].add(ct)
    if any(len(t) > 1 for t in targets):
        return None
    return [next(iter(t)) if t else None for t in targets]


class Rewriter:
    """Builds a new ``ast`` (the typed one is never modified: its nodes key ``typemap``)."""

    def __init__(self, tf, ns, build):
        self.tf = tf
        self.ns = ns
        self.build = build      # TypedFunction of a device function -> its function
        self.names = {}
        self.counter = 0

    # ---- namespace ----------------------------------------------------------------------
    def helper(self, obj, hint):
        key = (hint, id(obj))
        name = self.names.get(key)
        if name is None:
            self.counter += 1
            name = f"__cj_{hint}{self.counter}"
            self.names[key] = name
            self.ns[name] = obj
        return name

    def call(self, obj, hint, args, like):
        return _loc(ast.Call(ast.Name(self.helper(obj, hint), ast.Load()), list(args), []),
                    like)

    def print_call(self, node, pf):
        """``print(...)`` written as the compiled kernel's vprintf writes it (``pf``: the
        call's PrintFormat)."""
        return self.call(scalars.printer(pf), "print_", [self.expr(a) for a in node.args],
                         node)

    def ty(self, node):
        return self.tf.typemap.get(node)

    def conv(self, new, old_type, target, like):
        """``new`` (the rewritten node of a value of type ``old_type``) as a ``target``."""
        if not _numeric(target):
            return new
        if getattr(new, "_cj_exact", False) and (old_type is target
                                                  or _widens(old_type, target)):
            return new
        return _mark(self.call(scalars.caster(target), "to_", [new], like))

    def wrap(self, expr, t, like):
        """``expr`` (a Python int expression) wrapped to integer type ``t``: a range test
        inline, the wrap-around call only when it is out of range."""
        lo, hi = scalars.int_range(t)
        tmp = "__cj_t"
        test = ast.Compare(ast.Constant(lo), [ast.LtE(), ast.LtE()],
                           [ast.NamedExpr(ast.Name(tmp, ast.Store()), expr), ast.Constant(hi)])
        slow = ast.Call(ast.Name(self.helper(scalars.wrapper(t), "wrap"), ast.Load()),
                        [ast.Name(tmp, ast.Load())], [])
        return _mark(_loc(ast.IfExp(test, ast.Name(tmp, ast.Load()), slow), like))

    # ---- statements ---------------------------------------------------------------------
    def function(self):
        node = self.tf.fsrc.node
        body = []
        for a, t in zip(self.tf.fsrc.argnames, self.tf.argtypes):
            if _numeric(t):
                body.append(self.cast_name(a, t, node))
            elif isinstance(t, T.BFloat16):     # a bfloat16 argument may come as its storage
                value = self.call(bf16_scalar.from_storage, "bf16_load",
                                  [_loc(ast.Name(a, ast.Load()), node)], node)
                body.append(_loc(ast.Assign([_loc(ast.Name(a, ast.Store()), node)], value),
                                 node))
        body += self.block(node.body)
        if not body:
            body = [_loc(ast.Pass(), node)]
        args = node.args    # as written: defaults, *args (device functions)
        extra = {"type_params": []} if "type_params" in ast.FunctionDef._fields else {}
        return _loc(ast.FunctionDef(name=node.name, args=args, body=body, decorator_list=[],
                                    returns=None, **extra), node)

    def cast_name(self, name, t, like):
        value = self.call(scalars.caster(t), "to_", [_loc(ast.Name(name, ast.Load()), like)],
                          like)
        return _loc(ast.Assign([_loc(ast.Name(name, ast.Store()), like)], value), like)

    def block(self, stmts):
        out = []
        for s in stmts:
            m = getattr(self, "s_" + type(s).__name__, None)
            r = m(s) if m is not None else self.generic(s)
            out.extend(r if isinstance(r, list) else [r])
        return out

    def name_casts(self, target, like):
        """Conversions of every local bound by ``target`` to its one type."""
        out = []
        for n in ast.walk(target):
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
                t = self.tf.vartypes.get(n.id)
                if _numeric(t):
                    out.append(self.cast_name(n.id, t, like))
        return out

    def store_type(self, target):
        """The type a value stored to ``target`` (an original target node) takes."""
        if isinstance(target, ast.Name):
            return self.tf.vartypes.get(target.id)
        if isinstance(target, ast.Subscript):
            at = self.ty(target.value)
            if isinstance(at, (T.Array, T.CPointer)):
                t = self.ty(target)
                return at.dtype if t is None or _numeric(t) or \
                    isinstance(t, T.BFloat16) else None
            return None
        if isinstance(target, ast.Attribute):
            return self.ty(target)
        return None

    def s_Assign(self, s):
        value = self.expr(s.value)
        vt = self.ty(s.value)
        if len(s.targets) == 1 and isinstance(s.targets[0], ast.Tuple) and \
                isinstance(s.value, ast.Call) and \
                _kind(self.tf, s.value) in (CallKind.GRID, CallKind.GRIDSIZE) and \
                all(isinstance(e, ast.Name) and self.tf.vartypes.get(e.id) is T.int64
                    for e in s.targets[0].elts):
            # grid(n) / gridsize(n): a tuple of Python ints, already int64 values
            return _loc(ast.Assign([self.target(s.targets[0])], value), s)
        if len(s.targets) == 1 and not isinstance(s.targets[0], (ast.Tuple, ast.List)):
            st = self.store_type(s.targets[0])
            if _numeric(st) and _numeric(vt):
                value = self.conv(value, vt, st, s.value)
            elif _numeric(st) and isinstance(vt, T.BFloat16):
                value = self.conv(self.bf16_to_f32(value, s.value), T.float32, st, s.value)
            elif isinstance(st, T.BFloat16) and isinstance(s.targets[0], ast.Subscript):
                if not isinstance(vt, T.BFloat16):
                    value = self.call(bf16_scalar.BF16, "bf16_", [value], s.value)
                value = self.bf16_store(value, s.value)
            return _loc(ast.Assign([self.target(s.targets[0])], value), s)
        new = _loc(ast.Assign([self.target(t) for t in s.targets], value), s)
        casts = []
        for t in s.targets:
            casts += self.name_casts(t, s)
        return [new] + casts

    def s_AnnAssign(self, s):
        if s.value is None:
            return s
        return self.s_Assign(_loc(ast.Assign([s.target], s.value), s))

    def target(self, t):
        """A store target with its index / base expressions rewritten."""
        if isinstance(t, ast.Name):
            return t
        return self.generic(t)

    def bf16_to_f32(self, value, like):
        """``value`` (a BF16) as its exact np.float32."""
        return self.call(bf16_scalar.BF16.to_float32, "bf16_f32_", [value], like)

    def bf16_store(self, value, like):
        """``value`` (a BF16) as an element of a bfloat16 array (its storage dtype)."""
        return self.call(bf16_scalar.to_storage, "bf16_store", [value], like)

    def s_AugAssign(self, s):
        info = self.tf.info.get(s)
        op = _OPNAMES.get(type(s.op))
        st = self.store_type(s.target)
        if isinstance(st, T.BFloat16) and isinstance(s.target, ast.Subscript) and op:
            load = _loc(ast.Subscript(s.target.value, s.target.slice, ast.Load()), s.target)
            cur = self.call(bf16_scalar.from_storage, "bf16_load", [self.generic(load)], s)
            value = _loc(ast.BinOp(cur, type(s.op)(), self.expr(s.value)), s)
            return _loc(ast.Assign([self.target(s.target)], self.bf16_store(value, s)), s)
        if not isinstance(info, AugAssign) or not _numeric(st):
            return self.generic(s)
        cur, res = info.current, info.result
        rhs_t = self.ty(s.value)
        if not (_numeric(cur) and _numeric(res) and _numeric(rhs_t)):
            return self.generic(s)
        tgt = s.target
        if isinstance(tgt, ast.Name):
            load = _loc(ast.Name(tgt.id, ast.Load()), tgt)
            if _numeric(self.tf.vartypes.get(tgt.id)):
                _mark(load)
        elif isinstance(tgt, (ast.Subscript, ast.Attribute)):
            load = self.generic(tgt)
            load.ctx = ast.Load()
            if isinstance(tgt, ast.Subscript) and isinstance(self.ty(tgt.value),
                                                              (T.Array, T.CPointer)) \
                    and not isinstance(cur, T.Integer):
                _mark(load)
        else:
            return self.generic(s)
        value = self.binop(op, load, cur, self.expr(s.value), rhs_t, res, s.value, s)
        if value is None:
            return self.generic(s)
        value = self.conv(value, res, st, s)
        return _loc(ast.Assign([self.target(tgt)], value), s)

    def s_For(self, s):
        it = self.expr(s.iter)
        itype = self.ty(s.iter)
        from ..frontend.rules import RangeType
        if isinstance(itype, RangeType) and isinstance(s.target, ast.Name) and \
                _widens(itype.dtype, self.tf.vartypes.get(s.target.id), same=True):
            casts = []      # range() yields Python ints within its integer type
        else:
            casts = self.name_casts(s.target, s)
        body = casts + self.block(s.body)
        return _loc(ast.For(self.target(s.target), it, body, self.block(s.orelse)), s)

    def s_If(self, s):
        return _loc(ast.If(self.test(s.test), self.block(s.body) or [ast.Pass()],
                           self.block(s.orelse)), s)

    def s_While(self, s):
        return _loc(ast.While(self.test(s.test), self.block(s.body) or [ast.Pass()],
                              self.block(s.orelse)), s)

    def s_Return(self, s):
        if s.value is None:
            return s
        value = self.expr(s.value)
        rt = self.tf.return_type
        if not self.tf.kernel and _numeric(rt):
            value = self.conv(value, self.ty(s.value), rt, s.value)
        return _loc(ast.Return(value), s)

    # ---- generic copy -------------------------------------------------------------------
    def generic(self, node):
        """A shallow copy of ``node`` with its children rewritten."""
        new = type(node)()
        for field, value in ast.iter_fields(node):
            if isinstance(value, list):
                if value and isinstance(value[0], ast.stmt):
                    value = self.block(value)
                else:
                    value = [self.expr(v) if isinstance(v, ast.expr) else
                             (self.generic(v) if isinstance(v, ast.AST) else v)
                             for v in value]
            elif isinstance(value, ast.expr):
                value = self.expr(value)
            elif isinstance(value, ast.AST) and not isinstance(value, (ast.expr_context,
                                                                       ast.operator,
                                                                       ast.unaryop,
                                                                       ast.cmpop,
                                                                       ast.boolop)):
                value = self.generic(value)
            setattr(new, field, value)
        for a in ("lineno", "col_offset", "end_lineno", "end_col_offset"):
            if hasattr(node, a):
                setattr(new, a, getattr(node, a))
        return new

    # ---- expressions --------------------------------------------------------------------
    def expr(self, node):
        m = getattr(self, "e_" + type(node).__name__, None)
        if m is not None:
            r = m(node)
            if r is not None:
                return r
        new = self.generic(node)
        if isinstance(node, ast.Subscript) and isinstance(self.ty(node.value),
                                                          (T.Array, T.CPointer)) \
                and _numeric(self.ty(node)) and not isinstance(self.ty(node), T.Integer):
            _mark(new)
        elif isinstance(node, ast.Subscript) and isinstance(self.ty(node), T.BFloat16) and \
                isinstance(self.ty(node.value), T.Array) and isinstance(node.ctx, ast.Load):
            return self.call(bf16_scalar.from_storage, "bf16_load", [new], node)
        elif self._python_int(node):
            _mark(new)
        return new

    def _python_int(self, node):
        """True for integer nodes the simulator gives as Python ints of their type already:
        thread indices (``threadIdx.x`` …), ``arr.size``/``arr.ndim``, ``arr.shape[k]``."""
        t = self.ty(node)
        if not isinstance(t, T.Integer):
            return False
        info = self.tf.info.get(node)
        if isinstance(info, SpecialRegister):
            return True
        if isinstance(node, ast.Attribute) and node.attr in ("size", "ndim") and \
                isinstance(self.ty(node.value), T.Array):
            return True
        if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Attribute) and \
                node.value.attr in ("shape", "strides") and \
                isinstance(self.ty(node.value.value), T.Array):
            return True
        return False

    def test(self, node):
        """A condition (if/while/conditional expression): its truth is all that matters, so
        and/or operands are not converted to the combined type."""
        if isinstance(node, ast.BoolOp):
            return _loc(ast.BoolOp(type(node.op)(), [self.test(v) for v in node.values]),
                        node)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            return _loc(ast.UnaryOp(ast.Not(), self.test(node.operand)), node)
        return self.expr(node)

    def e_Constant(self, node):
        t = self.ty(node)
        if not _numeric(t) or node not in self.tf.constvals:
            return None
        return self.constant(node.value, t, node)

    def constant(self, value, t, like):
        v = scalars.caster(t)(value)
        if v.__class__ is int:
            return _mark(_loc(ast.Constant(v), like))
        name = self.helper(v, "k")
        return _mark(_loc(ast.Name(name, ast.Load()), like))

    def e_Name(self, node):
        t = self.ty(node)
        if not isinstance(node.ctx, ast.Load):
            return node
        if node.id in self.tf.vartypes:
            new = _loc(ast.Name(node.id, ast.Load()), node)
            return _mark(new) if _numeric(t) else new
        if _numeric(t) and node in self.tf.constvals and node not in self.tf.info:
            return self.constant(self.tf.constvals[node], t, node)
        return None

    def e_Attribute(self, node):
        if node.attr == "value" and isinstance(self.ty(node.value), T.IntEnumMember):
            return self.expr(node.value)        # an IntEnum member is its value here
        t = self.ty(node)
        if _numeric(t) and node in self.tf.constvals and node not in self.tf.info:
            return self.constant(self.tf.constvals[node], t, node)
        return None

    def e_BinOp(self, node):
        rt = self.ty(node)
        if isinstance(rt, T.BFloat16):
            return self.bf16_binop(node, rt)
        if not _numeric(rt):
            return None
        op = _OPNAMES.get(type(node.op))
        lt, rtt = self.ty(node.left), self.ty(node.right)
        left, right = None, None
        if isinstance(lt, T.BFloat16) or isinstance(rtt, T.BFloat16):
            # a bfloat16 mixed with a float or a 16/32-bit integer: both converted to the
            # float type the operator computes in (rules.bf16_mix_type), as the lowering does
            left, right = self.expr(node.left), self.expr(node.right)
            if isinstance(lt, T.BFloat16):
                left, lt = self.conv(left, lt, rt, node.left), rt
            if isinstance(rtt, T.BFloat16):
                right, rtt = self.conv(right, rtt, rt, node.right), rt
        if op is None or not (_numeric(lt) and _numeric(rtt)):
            return None
        if left is None:
            left, right = self.expr(node.left), self.expr(node.right)
        return self.binop(op, left, lt, right, rtt, rt, node.right, node)

    def bf16_binop(self, node, rt):
        """A bfloat16 operator: a mixed operand (an int64, an 8-bit integer) converted as
        ``bfloat16(x)`` first, as the lowering does; None (run as written) for two
        bfloat16 operands."""
        if all(isinstance(self.ty(o), T.BFloat16) for o in (node.left, node.right)):
            return None
        parts = []
        for operand in (node.left, node.right):
            new = self.expr(operand)
            if not isinstance(self.ty(operand), T.BFloat16):
                new = self.call(bf16_scalar.BF16, "bf16_", [new], operand)
            parts.append(new)
        return _loc(ast.BinOp(parts[0], node.op, parts[1]), node)

    def binop(self, op, left, lt, right, rtt, rt, right_old, like):
        """``left <op> right`` (rewritten operands of types ``lt``/``rtt``) computed as the
        lowering does for result type ``rt``; None when not handled."""
        if isinstance(rt, T.Boolean):
            if op in ("&", "|", "^"):
                left = self.conv(left, lt, T.boolean, like)
                right = self.conv(right, rtt, T.boolean, like)
                return _mark(_loc(ast.BinOp(left, _DIRECT_BINOPS[op](), right), like))
            return None
        if op == "**" and isinstance(rt, T.Float) and isinstance(right_old, ast.Constant) \
                and not isinstance(right_old.value, bool) and right_old.value in (2, 3):
            fn = scalars.square if right_old.value == 2 else scalars.cube
            return _mark(self.call(fn, "pow", [self.conv(left, lt, rt, like)], like))
        left = self.conv(left, lt, rt, like)
        right = self.conv(right, rtt, rt, like)
        if isinstance(rt, T.Integer):
            return self.int_binop(op, left, right, rt, like)
        if isinstance(rt, T.Float) and op in ("//", "%"):
            fn = scalars.float_floordiv if op == "//" else scalars.float_mod
            return _mark(self.call(fn, "fdiv", [left, right], like))
        if isinstance(rt, T.Complex) and op == "**":
            return _mark(self.call(scalars.complex_pow, "cpow", [left, right], like))
        return _mark(_loc(ast.BinOp(left, _DIRECT_BINOPS[op](), right), like))

    def int_binop(self, op, left, right, rt, like):
        """Integer ``left <op> right`` on Python ints of type ``rt``, wrapped to its width."""
        if op in ("&", "|", "^"):
            # in-range operands give an in-range result
            return _mark(_loc(ast.BinOp(left, _DIRECT_BINOPS[op](), right), like))
        if op in ("+", "-", "*"):
            return self.wrap(_loc(ast.BinOp(left, _DIRECT_BINOPS[op](), right), like), rt,
                             like)
        c = right.value if isinstance(right, ast.Constant) and \
            right.value.__class__ is int else None
        if c is not None and c > 0 and op in ("//", "%"):
            # a positive constant divisor: Python's floor semantics, never out of range
            return _mark(_loc(ast.BinOp(left, _DIRECT_BINOPS[op](), right), like))
        if c is not None and 0 <= c < rt.bitwidth and op in ("<<", ">>"):
            out = _loc(ast.BinOp(left, _DIRECT_BINOPS[op](), right), like)
            return _mark(out) if op == ">>" else self.wrap(out, rt, like)
        fn = {"//": scalars.int_floordiv, "%": scalars.int_mod, "<<": scalars.int_shl,
              ">>": scalars.int_shr, "**": scalars.int_pow}.get(op)
        if fn is None:
            return None
        args = [left, right]
        if op in ("<<", ">>") and rt.bitwidth != 64:
            args.append(ast.Constant(rt.bitwidth))
        call = self.call(fn, "i" + fn.__name__, args, like)
        if op == ">>" or (op in ("//", "%") and not rt.signed):
            return _mark(call)      # stays in range
        return self.wrap(call, rt, like)

    def e_UnaryOp(self, node):
        rt = self.ty(node)
        at = self.ty(node.operand)
        if not (_numeric(rt) and _numeric(at)) or isinstance(node.op, ast.Not):
            return None
        operand = self.conv(self.expr(node.operand), at, rt, node)
        out = _loc(ast.UnaryOp(type(node.op)(), operand), node)
        if isinstance(rt, T.Integer) and not isinstance(node.op, ast.UAdd):
            return self.wrap(out, rt, node)
        return _mark(out)

    def e_Compare(self, node):
        if isinstance(node.ops[0], (ast.Is, ast.IsNot)) and len(node.ops) == 1 and \
                isinstance(self.ty(node.left), T.IntEnumMember):
            # IntEnum members are plain ints here: 'is' is the compiled one (same Enum and
            # value; members of different Enums never)
            lt, rt = self.ty(node.left), self.ty(node.comparators[0])
            if lt is not rt:
                return _loc(ast.Constant(isinstance(node.ops[0], ast.IsNot)), node)
            op = ast.Eq() if isinstance(node.ops[0], ast.Is) else ast.NotEq()
            return _loc(ast.Compare(self.expr(node.left), [op],
                                    [self.expr(node.comparators[0])]), node)
        if node in self.tf.constvals:
            # 'is' of values of different types (x is None of an array): decided by the typer
            return _loc(ast.Constant(bool(self.tf.constvals[node])), node)
        operands = [node.left] + list(node.comparators)
        ts = [self.ty(n) for n in operands]
        if not all(_numeric(t) for t in ts):
            return None
        targets = compare_types(ts)
        if targets is None:
            return None     # no common type, or a middle operand compared at two: as written
        new = [self.expr(n) for n in operands]
        new = [self.conv(v, t, tg, v) if tg is not None else v
               for v, t, tg in zip(new, ts, targets)]
        # 'is' of two scalars of one type is '==' (numba's generic_is): the values here may
        # be NumPy scalars, which Python's 'is' tells apart
        ops = [_IDENTITY.get(type(o), type(o))() for o in node.ops]
        return _loc(ast.Compare(new[0], ops, new[1:]), node)

    def e_BoolOp(self, node):
        rt = self.ty(node)
        if not _numeric(rt):
            return None
        values = [self.conv(self.expr(v), self.ty(v), rt, v) for v in node.values]
        return _mark(_loc(ast.BoolOp(type(node.op)(), values), node))

    def e_IfExp(self, node):
        rt = self.ty(node)
        if not _numeric(rt):
            return None
        return _mark(_loc(ast.IfExp(self.test(node.test),
                                    self.conv(self.expr(node.body), self.ty(node.body), rt,
                                              node.body),
                                    self.conv(self.expr(node.orelse), self.ty(node.orelse), rt,
                                              node.orelse)), node))

    def e_Call(self, node):
        c = call_of(self.tf, node)
        if c is None:
            return None
        return _CALLS[c.kind](self, node, c)

    # ---- calls: one method per CallKind (``_CALLS``); None runs the call as written -------
    def c_as_written(self, node, c):
        return None

    def c_isinstance(self, node, c):
        return _loc(ast.Constant(c.data.value), node)      # decided by the typer

    def c_untouched(self, node, c):
        return node

    def c_vector(self, node, c):
        # scalars converted by the simulator's casts (the GPU's float-to-integer rules), so
        # the vector class receives members of its base type and converts nothing itself
        base = c.data.type.base_type
        args = [self.expr(a) if width else self.conv(self.expr(a), self.ty(a), base, a)
                for a, width in zip(node.args, c.data.parts)]
        return _loc(ast.Call(self.expr(node.func), args, []), node)

    def c_cast(self, node, c):
        target = c.data.target
        if len(node.args) == 1 and (isinstance(target, T.FP8)
                                    or isinstance(self.ty(node.args[0]), T.FP8)):
            fn = _fp8_conversion(self.ty(node.args[0]), target)
            out = self.call(fn, "fp8cvt_", [self.expr(node.args[0])], node)
            return _mark(out) if _numeric(target) else out
        if len(node.args) == 1 and isinstance(target, T.BFloat16):
            return self.call(bf16_scalar.BF16, "bf16_", [self.expr(node.args[0])], node)
        if len(node.args) == 1 and isinstance(self.ty(node.args[0]), T.BFloat16) \
                and _numeric(target):
            return self.conv(self.bf16_to_f32(self.expr(node.args[0]), node), T.float32,
                             target, node)
        if not (_numeric(target) and len(node.args) == 1 and not node.keywords):
            return None
        arg = node.args[0]
        if arg in self.tf.constvals and _numeric(self.ty(arg)) and arg not in self.tf.info:
            # a cast of a compile-time constant is a constant (np.float32(0.25))
            return self.constant(scalars.caster(self.ty(arg))(self.tf.constvals[arg]),
                                 target, node)
        return _mark(self.call(scalars.caster(target), "to_", [self.expr(arg)], node))

    def c_device(self, node, c):
        callee = c.data.callee
        if _captures_device_arrays(callee.fsrc.pyfunc):
            return None     # called as written: the launch rebinds its captured arrays
        fn = self.build(callee)
        call = _loc(ast.Call(ast.Name(self.helper(fn, "dev"), ast.Load()),
                             [self.expr(a) for a in node.args],
                             [self.generic(k) for k in node.keywords]), node)
        return _mark(call) if _numeric(callee.return_type) else call

    def c_overload(self, node, c):
        callee = c.data.call.callee
        if _captures_device_arrays(callee.fsrc.pyfunc):
            fn = _in_launch(c.data.implementation)
        else:
            fn = self.build(callee)
        args = [self.expr(a) for a in node.args]
        call = _loc(ast.Call(ast.Name(self.helper(fn, "ovl"), ast.Load()), args,
                             [self.generic(k) for k in node.keywords]), node)
        return _mark(call) if _numeric(callee.return_type) else call

    def c_ufunc(self, node, c):
        # the generated loop function, run as any device function (out= binds by name)
        callee = c.data.call.callee
        call = _loc(ast.Call(ast.Name(self.helper(self.build(callee), "ufn"), ast.Load()),
                             [self.expr(a) for a in node.args],
                             [self.generic(k) for k in node.keywords]), node)
        return _mark(call) if _numeric(callee.return_type) else call

    def c_array_view(self, node, c):
        # NumPy's view on the simulated array, with the dtype as NumPy's (the argument may
        # be a cujit or Numba type); NumPy raises its ValueError for a view it refuses
        dt = self.helper(c.data.dtype.dtype, "dt")
        return _loc(ast.Call(self.expr(node.func), [ast.Name(dt, ast.Load())], []), node)

    def c_array_copy(self, node, c):
        # a writable C-order copy of the captured array, as the compiled kernel's local one
        return self.call(_c_copy, "copy", [self.expr(node.func.value)], node)

    def c_reduce(self, node, c):
        # the generated reduction function, run as any device function, on the array its
        # call binds (np.sum(a): the argument; a.sum(): the receiver)
        callee = c.data.call.callee
        args = [self.expr(payload) for _, payload, _ in c.data.call.bound]
        call = _loc(ast.Call(ast.Name(self.helper(self.build(callee), "red"), ast.Load()),
                             args, []), node)
        return _mark(call) if _numeric(callee.return_type) else call

    def c_user_intrinsic(self, node, c):
        # the Python implementation gets each argument as the signature's type and its
        # result is converted to the return type, as the compiled call converts them
        sig = c.data.signature
        sim = c.data.intrinsic.sim or _no_sim(c.data.intrinsic)
        args = [self.conv(self.expr(a), self.ty(a), t, a) for a, t in zip(node.args, sig.args)]
        call = self.call(sim, "intr", args, node)
        if not _numeric(sig.return_type):
            return call
        return self.conv(call, None, sig.return_type, node)

    def c_extern(self, node, c):
        # as an intrinsic: the arguments as the declared types, the result converted back
        fn = c.data.function
        args = [self.extern_arg(a, t) for a, t in zip(node.args, fn.sig.args)]
        call = self.call(fn, "ext", args, node)     # runs fn.sim, or raises naming fn
        if not _numeric(fn.sig.return_type):
            return call
        return self.conv(call, None, fn.sig.return_type, node)

    def extern_arg(self, a, t):
        """Argument ``a`` of a declared C function as its parameter type ``t``: an array
        passed for a pointer decays to a pointer to its data (a SimPointer)."""
        if isinstance(t, (T.CPointer, T.RawPointer)) and isinstance(self.ty(a), T.Array):
            return self.call(pointers.from_buffer, "ffi_fb",
                             [self.expr(a), _loc(ast.Constant(ast.unparse(a)), a)], a)
        return self.conv(self.expr(a), self.ty(a), t, a)

    def c_from_buffer(self, node, c):
        return self.call(pointers.from_buffer, "ffi_fb",
                         [self.expr(node.args[0]), _loc(ast.Constant(ast.unparse(node)), node)],
                         node)

    def c_print(self, node, c):
        if node.keywords or any(isinstance(a, ast.Starred) for a in node.args):
            return None
        return self.print_call(node, c.data)

    def c_pow(self, node, c):
        rt = self.ty(node)
        if len(node.args) == 2 and _numeric(rt):
            a, b = node.args
            return self.binop("**", self.expr(a), self.ty(a), self.expr(b), self.ty(b), rt, b,
                              node)
        return None

    def c_libdevice(self, node, c):
        if node.keywords:
            return self.c_intrinsic(node, c)
        fn = c.data.function
        rt = self.ty(node)
        args = [self.conv(self.expr(a), self.ty(a), t, a) for a, t in zip(node.args, fn.params)]
        call = self.call(libdevice_sim.function(fn), "ld_" + fn.name + "_", args, node)
        return _mark(call) if _numeric(rt) else call

    def c_abs(self, node, c):
        rt = self.ty(node)
        if len(node.args) == 1 and not node.keywords and \
                isinstance(rt, T.Integer) and isinstance(self.ty(node.args[0]), T.Integer):
            # abs of the type's minimum wraps to itself on the GPU; Python's abs does not
            arg = node.args[0]
            value = self.conv(self.expr(arg), self.ty(arg), rt, arg)
            return self.wrap(self.call(abs, "abs", [value], node), rt, node)
        return None

    def c_extremum(self, node, c):
        if not c.data.nan_ignoring or node.keywords:
            return None     # Python's min/max as written: what the GPU computes for these
        # two floats: libdevice fmax/fmin (a NaN loses to a number), as the compiled kernel
        rt = self.ty(node)
        args = [self.conv(self.expr(a), self.ty(a), rt, a) for a in node.args]
        name = "fmax" if c.kind is CallKind.MAX else "fmin"
        return _mark(self.call(getattr(scalars, name), name, args, node))

    def c_math(self, node, c):
        name = "np" + c.data.name if c.kind is CallKind.NP_ROUNDING else c.data.name
        argtypes = [self.ty(a) for a in node.args]
        if node.keywords or not all(_numeric(t) for t in argtypes):
            return None
        fn = scalars.math_func(name, argtypes, self.ty(node))
        if fn is None:
            return None
        return _mark(self.call(fn, "m_" + name + "_", [self.expr(a) for a in node.args], node))

    def c_atomic(self, node, c):
        if node.keywords:
            return None
        # the compiled atomic converts its values to the array's dtype (lower_atomics):
        # a float32 sum of float64 values rounds at every update
        at = self.ty(node.args[0])
        if isinstance(at, T.Array) and _numeric(at.dtype):
            first = 1 if c.data.op == "cas0" else 2
            args = [self.expr(a) for a in node.args[:first]]
            args += [self.conv(self.expr(a), self.ty(a), at.dtype, a)
                     for a in node.args[first:]]
            return _loc(ast.Call(self.expr(node.func), args, []), node)
        return None

    def c_intrinsic(self, node, c):
        # kernel intrinsics (popc, brev, mulhi, selp ...) take an integer's width from
        # its NumPy type: integer arguments go in as NumPy scalars of their type
        if not any(isinstance(self.ty(a), T.Integer) for a in node.args):
            return None
        args = []
        for a in node.args:
            at = self.ty(a)
            new = self.expr(a)
            if isinstance(at, T.Integer):
                new = self.call(at.dtype.type, "np_", [self.conv(new, at, at, a)], a)
            args.append(new)
        return _loc(ast.Call(self.expr(node.func), args,
                             [self.generic(k) for k in node.keywords]), node)

    def c_fp16(self, node, c):
        # the arguments as float16, as the compiled call converts them
        args = [self.conv(self.expr(a), self.ty(a), T.float16, a) for a in node.args]
        return _loc(ast.Call(self.expr(node.func), args,
                             [self.generic(k) for k in node.keywords]), node)

    def c_cmath(self, node, c):
        # cmath raises at its poles where the GPU gives C99's values (scalars.cmath_func)
        if c.data.name == "log" and len(node.args) == 2 and not node.keywords:
            fn = self.helper(scalars.cmath_log_base, "cm")
            rt = self.ty(node)
            args = [self.conv(self.expr(a), self.ty(a), rt, a) for a in node.args]
            return self.conv(_loc(ast.Call(ast.Name(fn, ast.Load()), args, []), node), None,
                             rt, node)
        if c.data.name not in CMATH_UNARY or node.keywords or len(node.args) != 1:
            return self.c_intrinsic(node, c)
        fn = self.helper(scalars.cmath_func(c.data.name), "cm")
        return _loc(ast.Call(ast.Name(fn, ast.Load()), [self.expr(node.args[0])], []), node)

    def c_bf16(self, node, c):
        # cuda.bf16 functions (and math.* of a bfloat16) by their own name, the arguments
        # converted to the parameter types as the compiled call converts them
        params, _ = B.SIGNATURES[c.data.name]
        args = []
        for a, p in zip(node.args, params):
            new = self.expr(a)
            if not isinstance(p, T.BFloat16):
                new = self.conv(new, self.ty(a), p, a)
            elif not isinstance(self.ty(a), T.BFloat16):
                new = self.call(bf16_scalar.BF16, "bf16_", [new], a)
            args.append(new)
        return self.call(getattr(B, c.data.name), "bf16_" + c.data.name + "_", args, node)

    def c_fp8(self, node, c):
        # cuda.fp8 conversions: the argument as the compiled call converts it (to float32,
        # or the integer as uint8), the result as its type
        a = node.args[0]
        if c.data.name in fp8.CVT_FUNCTIONS:
            source, _ = fp8.CVT_FUNCTIONS[c.data.name]
            arg = self.expr(a)
            if source != "bf16raw":
                to = {"float32": T.float32, "float64": T.float64, "e8m0": T.uint8}[source]
                arg = self.conv(arg, self.ty(a), to, a)
            out = self.call(_fp8_cvt(c.data), "fp8_" + c.data.name + "_", [arg], node)
            return _mark(out) if _numeric(self.ty(node)) else out
        fmt, direction = fp8.KERNEL_FUNCTIONS[c.data.name]
        arg = self.conv(self.expr(a), self.ty(a), T.float32 if direction == "to" else T.uint8,
                        a)
        out = self.call(getattr(fp8, c.data.name), "fp8_" + c.data.name + "_", [arg], node)
        return _mark(out)

    def c_fma(self, node, c):
        rt = self.ty(node)
        if isinstance(rt, T.Float) and rt is not T.float16 and len(node.args) == 3 \
                and not node.keywords:
            args = [self.conv(self.expr(a), self.ty(a), rt, a) for a in node.args]
            return _mark(self.call(scalars.fma, "fma", args, node))
        return self.c_cbrt(node, c)

    def c_cbrt(self, node, c):
        rt = self.ty(node)
        if _numeric(rt) and not node.keywords:
            args = [self.conv(self.expr(a), self.ty(a), rt, a) for a in node.args]
            return self.conv(_loc(ast.Call(self.expr(node.func), args, []), node), None, rt,
                             node)
        return None



def _call_table():
    K, R = CallKind, Rewriter
    table = dict.fromkeys((K.SHARED_ARRAY, K.LOCAL_ARRAY, K.CONST_ARRAY, K.GRID, K.GRIDSIZE),
                          R.c_untouched)
    table[K.ISINSTANCE] = R.c_isinstance
    # integer arguments as NumPy scalars of their type
    table.update(dict.fromkeys((K.SHFL_SYNC, K.SHFL_UP_SYNC, K.SHFL_DOWN_SYNC,
                                K.SHFL_XOR_SYNC, K.POPC, K.BREV, K.CLZ, K.FFS, K.SELP,
                                K.MULHI, K.NANOSLEEP, K.MATCH_ANY_SYNC, K.MATCH_ALL_SYNC,
                                K.THIS_GRID, K.GRID_SYNC, K.BIT_COUNT,
                                K.CLOSURE), R.c_intrinsic))
    # run as written: Python's builtins and the kernel API's simulator functions take
    # Python ints and give what the GPU gives
    table.update(dict.fromkeys((K.COMPLEX, K.ROUND, K.LEN, K.TUPLE, K.RANGE,
                                K.ENUMERATE, K.ZIP, K.CONJUGATE, K.RESHAPE, K.SYNCTHREADS,
                                K.SYNCTHREADS_COUNT, K.SYNCTHREADS_AND, K.SYNCTHREADS_OR,
                                K.SYNCWARP, K.THREADFENCE, K.THREADFENCE_BLOCK,
                                K.THREADFENCE_SYSTEM, K.BALLOT_SYNC, K.ALL_SYNC, K.ANY_SYNC,
                                K.EQ_SYNC, K.ACTIVEMASK, K.LANEMASK_LT, K.MATH_PARTS,
                                # a cache hint indexes the simulated array (its checks)
                                K.CACHE_LOAD, K.CACHE_STORE,
                                # carray/farray: the pointer's as_array (pointers.py)
                                K.CARRAY, K.FARRAY,
                                K.WMMA_FRAGMENT, K.WMMA_FILL, K.WMMA_LOAD, K.WMMA_MMA,
                                K.WMMA_STORE, K.PIPELINE_COPY, K.PIPELINE_COMMIT,
                                K.PIPELINE_WAIT, K.WGMMA_ACCUMULATOR, K.WGMMA_FILL,
                                K.WGMMA_DESCRIPTOR, K.WGMMA_FENCE, K.WGMMA_FENCE_PROXY,
                                K.WGMMA_MMA, K.WGMMA_COMMIT, K.WGMMA_WAIT, K.WGMMA_STORE),
                               R.c_as_written))
    table.update({K.CAST: R.c_cast, K.DEVICE: R.c_device, K.KERNEL: R.c_device, K.PRINT: R.c_print,
                  K.VECTOR: R.c_vector,
                  K.OVERLOAD: R.c_overload, K.USER_INTRINSIC: R.c_user_intrinsic,
                  K.UFUNC: R.c_ufunc, K.REDUCE: R.c_reduce, K.ARRAY_VIEW: R.c_array_view,
                  K.ARRAY_COPY: R.c_array_copy, K.CMATH: R.c_cmath,
                  K.MIN: R.c_extremum, K.MAX: R.c_extremum, K.FP16: R.c_fp16,
                  K.EXTERN: R.c_extern, K.FROM_BUFFER: R.c_from_buffer,
                  K.POW: R.c_pow, K.LIBDEVICE: R.c_libdevice, K.ABS: R.c_abs,
                  K.MATH: R.c_math, K.NP_ROUNDING: R.c_math,
                  K.ATOMIC: R.c_atomic, K.FMA: R.c_fma, K.CBRT: R.c_cbrt,
                  K.BF16: R.c_bf16, K.FP8: R.c_fp8})
    return table


#: The per-thread rewrite of each call kind (tests/frontend/test_call_contract.py: one per
#: kind).
_CALLS = _call_table()
