"""Expressions of the vector executor's code generator (:mod:`.vectorgen`): the code of a
thread-varying expression as a NumPy lane array, a uniform one as the per-thread executor
writes it (:class:`~.typedast.Rewriter`), and the run-time mask helpers the generated code
calls.  See docs/design-simulator.md, "Vector executor"."""
import ast
import linecache
import os

import numpy as np

from .. import types as T
from ..frontend.callkinds import CallKind, call_of
from ..frontend.nodeinfo import ArrayIndex, IntIndex, SpecialRegister
from . import scalars, vecops
from .typedast import Rewriter, _OPNAMES, _numeric, _widens, compare_types
from .vecmem import gload, gstore, lload, lstore, vatomic
from .vectorize import Unsupported, is_varying, varying_locals

__all__ = ["ExprGen", "Unsupported"]

_CMPOPS = {ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=", ast.Eq: "==",
           ast.NotEq: "!="}
_SCALAR = (T.Integer, T.Float, T.Boolean)


def _mand(m, c):
    """Lanes of mask ``m`` (None: all) where ``c`` (bool array, Python bool, or None: all
    lanes) holds."""
    if c is None or c is True or c is np.True_:
        return m
    if c is False or c is np.False_:
        return np.zeros(_ZEROS.n, bool)
    return c if m is None else m & c


def _mandnot(m, c):
    """Lanes of mask ``m`` (None: all) where ``c`` does not hold."""
    if c is None or c is True or c is np.True_:
        return np.zeros(_ZEROS.n, bool)
    if c is False or c is np.False_:
        return m
    return ~c if m is None else m & ~c


def _any(m):
    return True if m is None else bool(m.any())


_ZEROS = vecops.LANES


def _chkdef(defined, m, name):
    """UnboundLocalError when a lane of mask ``m`` reads local ``name`` before assigning it
    (the block then reruns per thread, which raises it for that thread)."""
    if defined is None:
        return
    bad = ~defined if m is None else m & ~defined
    if bad.any():
        raise UnboundLocalError(f"cannot access local variable '{name}' where it is not "
                                "associated with a value")


def _defd(defined, m):
    """The defined-lanes mask after an assignment under mask ``m``."""
    if m is None or defined is None:
        return None
    return defined | m


def _devcall(fn, dtype, conv, m, n, args):
    """``fn`` (a per-thread typed device function) called for each lane of mask ``m`` with
    the lane's values as the per-thread executor holds them (Python ints for integers,
    NumPy scalars else)."""
    out = np.zeros(n, dtype)
    cols = [a.tolist() if isinstance(a, np.ndarray) and a.dtype.kind in "iu" else a
            for a in args]
    lanes = range(n) if m is None else np.flatnonzero(m).tolist()
    for lane in lanes:
        out[lane] = conv(fn(*[c[lane] if isinstance(c, (list, np.ndarray)) else c
                              for c in cols]))
    return out


def _truth(v):
    """A value's truth: bool array for lane arrays, Python bool for uniform values."""
    if isinstance(v, np.ndarray):
        return v if v.dtype == np.bool_ else v != 0
    return bool(v)


def _merge(m, new, old):
    """``new`` where mask ``m`` holds, else ``old`` (None mask: all lanes)."""
    if m is None:
        return new
    return np.where(m, new, old).astype(old.dtype, copy=False)


# Calls a uniform expression may not make once for the whole block: each thread's call has
# its own effect (a print line, an update, a device function's stores).
_NOT_UNIFORM = frozenset((CallKind.DEVICE, CallKind.KERNEL, CallKind.PRINT, CallKind.ATOMIC,
                          CallKind.OVERLOAD, CallKind.USER_INTRINSIC, CallKind.EXTERN))


class _Uniform(Rewriter):
    """The per-thread rewriter, for uniform expressions: block registers are locals of the
    generated function."""
    regs = ("blockIdx", "blockDim", "gridDim")

    def expr(self, node):
        info = self.tf.info.get(node)
        if isinstance(info, SpecialRegister):
            if info.register in self.regs:
                return ast.copy_location(ast.Name(f"__{info.register}_{info.axis}",
                                                  ast.Load()), node)
            raise Unsupported(f"register {(info.register, info.axis)}")
        c = call_of(self.tf, node)
        if c is not None and c.kind is CallKind.GRIDSIZE:
            nd = c.data.ndim
            names = [f"__gs_{a}" for a in "xyz"[:nd]]
            if nd == 1:
                return ast.copy_location(ast.Name(names[0], ast.Load()), node)
            return ast.copy_location(ast.Tuple([ast.Name(n, ast.Load()) for n in names],
                                               ast.Load()), node)
        if isinstance(node, ast.Call) and (c is None or c.kind in _NOT_UNIFORM):
            raise Unsupported("call")
        return super().expr(node)


class ExprGen:
    """State of one generated function and the code of its expressions."""

    def __init__(self, tf, ns, multi=False, build=None):
        self.tf = tf
        self.ns = ns
        self.multi = multi      # several blocks as one vector: blockIdx varies
        self.maybe_undef = set()    # varying locals some lanes may read unassigned
        self.loops = []         # enclosing loops: (loop mask, iteration mask), None: uniform
        self.u = _Uniform(tf, ns, self._no_device)
        self.build = build      # TypedFunction of a device function -> its typed function
        if multi:
            self.u.regs = ("blockDim", "gridDim")
        self.varying = varying_locals(tf, multi)
        self.lines = []
        self.depth = 1
        self.tmp = 0
        self.arrays = {}        # array local -> "param" | "shared"
        self.fsrc = tf.fsrc
        self.line_offset = tf.fsrc.line_offset or 0
        self.ctl = False
        ns.update(np=np, __gload=gload, __gstore=gstore, __vatomic=vatomic, __lload=lload, __lstore=lstore, __mand=_mand, __mandnot=_mandnot, __chkdef=_chkdef, __defd=_defd, __devcall=_devcall,
                  __any=_any, __truth=_truth, __merge=_merge, __full=np.full)

    @staticmethod
    def _no_device(callee):
        raise Unsupported("device function")

    # ---- helpers ----------------------------------------------------------------------
    def emit(self, line):
        self.lines.append("    " * self.depth + line)

    def new(self, hint="t"):
        self.tmp += 1
        return f"__{hint}{self.tmp}"

    def helper(self, obj, hint):
        return self.u.helper(obj, hint)

    def ty(self, node):
        return self.tf.typemap.get(node)

    def isvar(self, node):
        return is_varying(self.tf, node, self.varying, self.multi)

    def site(self, node):
        line = node.lineno + self.line_offset
        fname = self.fsrc.filename
        text = linecache.getline(fname, line).strip()
        s = f"{os.path.basename(fname)}:{line}"
        return (s + f": {text}") if text else s, line

    def uex(self, node):
        """Code of uniform expression ``node`` (the per-thread executor's value)."""
        return ast.unparse(self.u.expr(node))

    def uconv(self, code, from_t, to_t):
        if not _numeric(to_t) or from_t is to_t:
            return code
        if not isinstance(to_t, _SCALAR):
            raise Unsupported("complex")
        return f"{self.helper(scalars.caster(to_t), 'to_')}({code})"

    def vconv(self, code, to_t):
        if not isinstance(to_t, _SCALAR) or to_t is T.float16:
            raise Unsupported(f"type {to_t}")
        return f"{self.helper(vecops.vcaster(to_t), 'vc_')}({code})"

    def val(self, node, m, to_t=None):
        """(code, varying) of ``node`` converted to ``to_t`` (default: its own type)."""
        t = self.ty(node)
        if to_t is None:
            to_t = t
        if not self.isvar(node):
            if _numeric(t) and not isinstance(t, _SCALAR):
                raise Unsupported("complex")
            return self.uconv(self.uex(node), t, to_t), False
        code = self.vex(node, m)
        if to_t is not t and _numeric(to_t):
            code = self.vconv(code, to_t)
        return code, True

    def arr(self, code, varying, t):
        """Code of a lane array of type ``t`` from a (code, varying) value."""
        if varying:
            return code
        return f"__full(__N, {code}, {self.helper(t.dtype, 'dt')})"

    # ---- varying expressions ----------------------------------------------------------
    def vex(self, node, m):
        meth = getattr(self, "v_" + type(node).__name__, None)
        if meth is None:
            raise Unsupported(type(node).__name__)
        if not isinstance(self.ty(node), _SCALAR) or self.ty(node) is T.float16:
            # float16 lane arithmetic is not checked against the scalar path
            raise Unsupported(f"value of type {self.ty(node)}")
        return meth(node, m)

    def v_Name(self, node, m):
        if node.id not in self.varying:
            raise Unsupported("name")
        if node.id in self.maybe_undef:
            # a lane reading a local it never assigned: the per-thread run raises
            self.emit(f"__chkdef(__d_{node.id}, {m}, {node.id!r})")
        return node.id

    def v_Attribute(self, node, m):
        info = self.tf.info.get(node)
        reg = info.register if isinstance(info, SpecialRegister) else None
        if reg == "threadIdx":
            ax = "xyz".index(info.axis)
            return f"__blk.tid({ax}, {self.helper(self.ty(node).dtype, 'dt')})"
        if reg == "blockIdx" and self.multi:
            ax = "xyz".index(info.axis)
            return f"__blk.bidx({ax}, {self.helper(self.ty(node).dtype, 'dt')})"
        raise Unsupported("attribute")

    def v_BinOp(self, node, m):
        rt = self.ty(node)
        op = _OPNAMES.get(type(node.op))
        lt, rtt = self.ty(node.left), self.ty(node.right)
        if op is None or not (isinstance(lt, _SCALAR) and isinstance(rtt, _SCALAR)):
            raise Unsupported("binop")
        return self.binop(op, node.left, node.right, rt, m)

    def binop(self, op, left, right, rt, m, left_code=None):
        if isinstance(rt, T.Boolean):
            if op not in ("&", "|", "^"):
                raise Unsupported("bool op")
        if op == "**":
            if isinstance(rt, T.Float) and isinstance(right, ast.Constant) and \
                    right.value in (2, 3) and not isinstance(right.value, bool):
                a = left_code if left_code is not None else self.val(left, m, rt)[0]
                x = self.new()
                self.emit(f"{x} = {a}")
                return f"({x} * {x})" if right.value == 2 else f"({x} * {x} * {x})"
            raise Unsupported("pow")
        a = left_code if left_code is not None else self.val(left, m, rt)[0]
        b = self.val(right, m, rt)[0]
        if isinstance(rt, T.Integer):
            if op == "<<":
                return (f"{self.helper(vecops.vshl, 'vshl')}({a}, {b}, {rt.bitwidth}, "
                        f"{self.helper(rt.dtype, 'dt')})")
            if op == ">>":
                return (f"{self.helper(vecops.vshr, 'vshr')}({a}, {b}, {rt.bitwidth}, "
                        f"{self.helper(rt.dtype, 'dt')})")
            if op == "/":
                raise Unsupported("int /")
            if op in ("//", "%"):
                fn = scalars.int_floordiv if op == "//" else scalars.int_mod
                return f"{self.helper(fn, 'vi')}({a}, {b})"
        elif isinstance(rt, T.Float) and op in ("//", "%"):
            fn = scalars.float_floordiv if op == "//" else scalars.float_mod
            return f"{self.helper(fn, 'vf')}({a}, {b})"
        if isinstance(rt, T.Float) and op in ("+", "*"):
            fn = vecops.vadd if op == "+" else vecops.vmul
            return f"{self.helper(fn, 'vf')}({a}, {b})"
        # a lane array and a same-typed operand: NumPy computes at the type's width
        return f"np.asarray(({a}) {op} ({b}))"

    def v_UnaryOp(self, node, m):
        rt = self.ty(node)
        if isinstance(node.op, ast.Not):
            return f"(~__truth({self.vex(node.operand, m)}))"
        op = {ast.USub: "-", ast.UAdd: "+", ast.Invert: "~"}[type(node.op)]
        if isinstance(rt, T.Boolean):
            raise Unsupported("bool unary")
        a = self.val(node.operand, m, rt)[0]
        return f"({op}({a}))"

    def v_Compare(self, node, m):
        operands = [node.left] + list(node.comparators)
        ts = [self.ty(n) for n in operands]
        if not all(isinstance(t, _SCALAR) for t in ts):
            raise Unsupported("compare")
        for n in operands[2:]:
            if self.isvar(n) and any(isinstance(x, ast.Call) or (
                    isinstance(x, ast.Subscript) and isinstance(self.ty(x.value), T.Array))
                    for x in ast.walk(n)):
                raise Unsupported("lazy chained compare")
        # the per-thread rewriter's rule (typedast.compare_types)
        targets = compare_types(ts)
        if targets is None or not all(t is None or isinstance(t, _SCALAR) for t in targets):
            raise Unsupported("compare types")
        codes = []
        for n, t, tg in zip(operands, ts, targets):
            c, var = self.val(n, m)
            x = self.new()
            self.emit(f"{x} = {self.conv_any(c, t, tg) if tg is not None else c}")
            codes.append(x)
        parts = []
        for a, b, op in zip(codes, codes[1:], node.ops):
            o = _CMPOPS.get(type(op))
            if o is None:
                raise Unsupported("cmpop")
            parts.append(f"{self.helper(vecops.vcompare, 'vcmp')}({o!r}, {a}, {b})")
        return "(" + " & ".join(parts) + ")"

    def conv_any(self, code, from_t, to_t):
        """Conversion of a value that may be a lane array or a uniform scalar."""
        if from_t is to_t:
            return code
        return f"{self.helper(_anyconv(to_t), 'ac_')}({code})"

    def v_BoolOp(self, node, m):
        if not isinstance(self.ty(node), T.Boolean):
            raise Unsupported("boolop value")
        return self.test(node, m)

    def test(self, node, m):
        """Code of ``node``'s truth (bool lane array or Python bool), the right operands of
        ``and``/``or`` evaluated under the narrowed mask (Python's short circuit)."""
        if isinstance(node, ast.BoolOp):
            acc = self.new("c")
            self.emit(f"{acc} = {self.test(node.values[0], m)}")
            is_and = isinstance(node.op, ast.And)
            for v in node.values[1:]:
                sub = self.new("m")
                self.emit(f"{sub} = {'__mand' if is_and else '__mandnot'}({m}, {acc})")
                c = self.test(v, sub)
                self.emit(f"{acc} = ({acc} {'&' if is_and else '|'} {c})")
            return acc
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            c = self.new("c")
            self.emit(f"{c} = {self.test(node.operand, m)}")
            return f"(not {c} if not isinstance({c}, np.ndarray) else ~{c})"
        if not self.isvar(node):
            return f"bool({self.uex(node)})"
        return f"__truth({self.vex(node, m)})"

    def v_IfExp(self, node, m):
        rt = self.ty(node)
        c = self.new("c")
        self.emit(f"{c} = {self.test(node.test, m)}")
        m1, m2 = self.new("m"), self.new("m")
        self.emit(f"{m1} = __mand({m}, {c})")
        self.emit(f"{m2} = __mandnot({m}, {c})")
        a = self.arr(*self.val(node.body, m1, rt), rt)
        x = self.new()
        self.emit(f"{x} = {a}")
        b = self.arr(*self.val(node.orelse, m2, rt), rt)
        return f"np.where({c}, {x}, {b})"

    def index(self, node, m):
        """(array variable, kind, index codes) of subscript ``node``."""
        if not isinstance(node.value, ast.Name) or node.value.id not in self.arrays:
            raise Unsupported("array expression")
        info = self.tf.info.get(node)
        at = self.ty(node.value)
        if not isinstance(info, ArrayIndex) or len(info.parts) != at.ndim or \
                not all(isinstance(k, IntIndex) for k in info.parts) or \
                not isinstance(at.dtype, _SCALAR):
            raise Unsupported("index form")
        idx = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        codes = []
        for i in idx:
            if not isinstance(self.ty(i), T.Integer):
                raise Unsupported("index type")
            c, var = self.val(i, m)
            codes.append(c)
        return node.value.id, self.arrays[node.value.id], codes

    def v_Subscript(self, node, m):
        return self.load(node, m)

    def load(self, node, m):
        name, kind, codes = self.index(node, m)
        tup = "(" + ", ".join(codes) + ",)" if codes else "()"
        site, line = self.site(node)
        if kind == "shared":
            return f"{name}.load({tup}, {m}, {site!r}, {line})"
        if kind == "local":
            return f"__lload(__blk, {name}, {tup}, {m}, {name!r}, {site!r})"
        return f"__gload(__blk, __raw_{name}, {tup}, {m}, {name!r}, {site!r})"

    def v_Call(self, node, m):
        c = call_of(self.tf, node)
        if c is None or node.keywords:
            raise Unsupported("call")
        return _VCALLS[c.kind](self, node, c, m)

    # ---- calls: one method per CallKind (``_VCALLS``) -----------------------------------
    def vc_per_thread(self, node, c, m):
        raise Unsupported(f"call {c.kind.value}")

    def vc_cast(self, node, c, m):
        if len(node.args) == 1 and isinstance(c.data.target, _SCALAR):
            return self.val(node.args[0], m, c.data.target)[0]
        return self.vc_per_thread(node, c, m)

    def vc_grid(self, node, c, m):
        if c.data.ndim == 1:
            return "__blk.grid_axis(0)"
        return self.vc_per_thread(node, c, m)

    def vc_device(self, node, c, m):
        return self.device_call(node, c.data.callee, self.ty(node), m)

    def vc_overload(self, node, c, m):
        if node.keywords:
            return self.vc_per_thread(node, c, m)
        return self.device_call(node, c.data.call.callee, self.ty(node), m)

    def vc_fma(self, node, c, m):
        rt = self.ty(node)
        if not (isinstance(rt, T.Float) and rt is not T.float16 and len(node.args) == 3):
            return self.vc_per_thread(node, c, m)
        # the per-thread helper (exact rational rounding), lane by lane
        args = [self.val(a, m, rt)[0] for a in node.args]
        return (f"__devcall({self.helper(scalars.fma, 'fma')}, "
                f"{self.helper(rt.dtype, 'dt')}, {self.helper(scalars.caster(rt), 'to_')}, "
                f"{m}, __N, ({', '.join(args)},))")

    def vc_atomic(self, node, c, m):
        return self.atomic(node, c.data.op, m)

    def vc_sync_pred(self, node, c, m):
        if len(node.args) != 1:
            return self.vc_per_thread(node, c, m)
        if self.ctl or self.multi:
            raise Unsupported("barrier under varying control")
        rt = self.ty(node)
        site, _ = self.site(node)
        v = self.new("c")
        pred = self.arr(*self.val(node.args[0], '__live'), self.ty(node.args[0]))
        self.emit(f"{v} = __truth({pred})")
        self.emit(f"__blk.syncthreads(__live, {site.split(': ', 1)[0]!r})")
        kind = c.kind.value[len("syncthreads_"):]
        return (f"__full(__N, __blk.reduce_pred({kind!r}, {v}, __live), "
                f"{self.helper(rt.dtype, 'dt')})")

    def vc_extremum(self, node, c, m):
        rt = self.ty(node)
        if not (len(node.args) >= 2 and isinstance(rt, _SCALAR)):
            return self.vc_per_thread(node, c, m)
        ts = [self.ty(a) for a in node.args]
        if not all(t is rt or _widens(t, rt) for t in ts):
            raise Unsupported("min/max types")
        codes = [self.arr(*self.val(a, m, rt), rt) for a in node.args]
        if c.data.nan_ignoring:
            # libdevice fmax/fmin, as the compiled kernel (a NaN loses to a number)
            fn = "np.fmax" if c.kind is CallKind.MAX else "np.fmin"
            acc = self.new()
            self.emit(f"{acc} = {fn}({codes[0]}, {codes[1]})")
            return acc
        acc = self.new()
        self.emit(f"{acc} = {codes[0]}")
        for code in codes[1:]:
            x = self.new()
            self.emit(f"{x} = {code}")
            cmp = "<" if c.kind is CallKind.MIN else ">"
            # Python's min/max: the first extreme argument (NaN and -0.0 included)
            self.emit(f"{acc} = np.where({x} {cmp} {acc}, {x}, {acc})")
        return acc

    def vc_abs(self, node, c, m):
        # abs of an integer lane array wraps at its width (abs(INT_MIN) is INT_MIN), as on
        # the GPU and in the per-thread rewriter
        rt = self.ty(node)
        if len(node.args) == 1 and isinstance(rt, (T.Float, T.Integer)) \
                and self.ty(node.args[0]) is rt:
            return f"np.abs({self.val(node.args[0], m)[0]})"
        return self.vc_per_thread(node, c, m)

    def vc_math(self, node, c, m):
        name = "np" + c.data.name if c.kind is CallKind.NP_ROUNDING else c.data.name
        rt = self.ty(node)
        argtypes = [self.ty(a) for a in node.args]
        if not all(isinstance(t, _SCALAR) for t in argtypes) or \
                not isinstance(rt, _SCALAR):
            raise Unsupported("math types")
        fn = vecops.vmath(name, argtypes, rt)
        if fn is None:
            raise Unsupported("math " + name)
        args = [self.val(a, m)[0] for a in node.args]
        return f"{self.helper(fn, 'vm_' + name + '_')}({', '.join(args)})"

    def device_call(self, node, callee, rt, m):
        """A device function of scalars called lane by lane: its per-thread typed function
        (exactly the per-thread values); anything else is not handled."""
        from .typedast import _captures_device_arrays
        argtypes = [self.ty(a) for a in node.args]
        if self.build is None or not isinstance(rt, _SCALAR) or rt is T.float16 or \
                not all(isinstance(t, _SCALAR) for t in argtypes) or \
                not all(isinstance(t, _SCALAR) for t in callee.argtypes) or \
                _captures_device_arrays(callee.fsrc.pyfunc) or \
                any(isinstance(a, ast.Starred) for a in node.args):
            raise Unsupported("device function")
        fn = self.build(callee)
        args = [self.val(a, m)[0] for a in node.args]
        return (f"__devcall({self.helper(fn, 'dev')}, {self.helper(rt.dtype, 'dt')}, "
                f"{self.helper(scalars.caster(rt), 'to_')}, {m}, __N, "
                f"({', '.join(args)}{',' if args else ''}))")

    def atomic(self, node, op, m):
        if len(node.args) < 3 or node.keywords:
            raise Unsupported("atomic form")
        arr, idx = node.args[0], node.args[1]
        at = self.ty(arr)
        kind = self.arrays.get(arr.id) if isinstance(arr, ast.Name) else None
        if kind not in ("param", "shared") or not isinstance(at, T.Array) or \
                not isinstance(at.dtype, (T.Integer, T.Float)) or at.dtype is T.float16:
            raise Unsupported("atomic target")
        elts = idx.elts if isinstance(idx, ast.Tuple) else [idx]
        if len(elts) != at.ndim or not all(isinstance(self.ty(e), T.Integer) for e in elts):
            raise Unsupported("atomic index")
        codes = [self.val(e, m)[0] for e in elts]
        vals = [self.val(v, m, at.dtype)[0] for v in node.args[2:]]
        site, _ = self.site(node)
        if kind == "shared":
            return (f"{arr.id}.atomic({op!r}, ({', '.join(codes)},), "
                    f"({', '.join(vals)},), {m}, {site!r})")
        return (f"__vatomic(__blk, {op!r}, __raw_{arr.id}, ({', '.join(codes)},), "
                f"({', '.join(vals)},), {m}, {arr.id!r}, {site!r})")

    # ---- statements -------------------------------------------------------------------

def _vcall_table():
    K, E = CallKind, ExprGen
    # kinds the vector executor leaves to the per-thread executor (the block reruns there)
    table = dict.fromkeys((
        K.COMPLEX, K.ROUND, K.POW, K.LEN, K.ISINSTANCE, K.TUPLE, K.RANGE, K.ENUMERATE, K.ZIP, K.PRINT, K.CMATH,
        K.REDUCE, K.ARRAY_VIEW, K.ARRAY_COPY,
        K.FP16, K.BF16, K.FP8, K.MATH_PARTS, K.BIT_COUNT, K.CONJUGATE, K.SHARED_ARRAY, K.LOCAL_ARRAY,
        K.CONST_ARRAY, K.RESHAPE, K.GRIDSIZE, K.SYNCTHREADS, K.SYNCWARP, K.THREADFENCE,
        K.THREADFENCE_BLOCK, K.THREADFENCE_SYSTEM, K.THIS_GRID, K.GRID_SYNC, K.SHFL_SYNC,
        K.SHFL_UP_SYNC, K.SHFL_DOWN_SYNC, K.SHFL_XOR_SYNC, K.BALLOT_SYNC, K.ALL_SYNC,
        K.ANY_SYNC, K.EQ_SYNC, K.MATCH_ANY_SYNC, K.MATCH_ALL_SYNC, K.ACTIVEMASK,
        K.LANEMASK_LT, K.POPC, K.BREV, K.CLZ, K.FFS, K.CBRT, K.SELP, K.MULHI, K.NANOSLEEP,
        K.LIBDEVICE, K.CLOSURE, K.USER_INTRINSIC, K.EXTERN, K.WMMA_FRAGMENT, K.WMMA_FILL,
        K.WMMA_LOAD, K.WMMA_MMA, K.WMMA_STORE, K.PIPELINE_COPY, K.PIPELINE_COMMIT,
        K.PIPELINE_WAIT, K.WGMMA_ACCUMULATOR, K.WGMMA_FILL, K.WGMMA_DESCRIPTOR, K.WGMMA_FENCE,
        K.WGMMA_FENCE_PROXY, K.WGMMA_MMA, K.WGMMA_COMMIT, K.WGMMA_WAIT, K.WGMMA_STORE,
        K.VECTOR, K.CACHE_LOAD, K.CACHE_STORE,
        K.UFUNC, K.FROM_BUFFER, K.CARRAY, K.FARRAY),
       E.vc_per_thread)
    table.update({K.CAST: E.vc_cast, K.GRID: E.vc_grid, K.DEVICE: E.vc_device,
                  K.KERNEL: E.vc_device,
                  K.OVERLOAD: E.vc_overload,
                  K.FMA: E.vc_fma, K.ATOMIC: E.vc_atomic, K.SYNCTHREADS_COUNT: E.vc_sync_pred,
                  K.SYNCTHREADS_AND: E.vc_sync_pred, K.SYNCTHREADS_OR: E.vc_sync_pred,
                  K.MIN: E.vc_extremum, K.MAX: E.vc_extremum, K.ABS: E.vc_abs,
                  K.MATH: E.vc_math, K.NP_ROUNDING: E.vc_math})
    return table


#: The vector code of each call kind in an expression (tests/frontend/test_call_contract.py:
#: one per kind); ``vc_per_thread`` refuses it, and the block runs per thread.
_VCALLS = _vcall_table()


_anyconvs = {}


def _anyconv(t):
    c = _anyconvs.get(t)
    if c is None:
        sc, vc = scalars.caster(t), vecops.vcaster(t)

        def c(x):
            return vc(x) if isinstance(x, np.ndarray) else sc(x)
        _anyconvs[t] = c
    return c
