"""The block-vectorized executor's code generator: from a kernel's typed ``ast`` (the
compiler's typing, as :mod:`.typedexec` uses it) a Python function that runs ONE WHOLE BLOCK
per call, its threads as NumPy vectors (docs/design-simulator.md, "Vector executor").

Uniform values (:mod:`.vectorize`) are computed exactly as the per-thread typed executor
computes them (its :class:`~.typedast.Rewriter` writes them); varying values are 1-D arrays,
one element per thread in linear order, computed with :mod:`.vecops` (the array mirror of
:mod:`.scalars`) and read and written through :mod:`.vecmem`.  Varying control flow runs
under lane masks (``if``: both arms, each under its mask; ``for``/``while``: while any lane
is active; an early ``return`` removes lanes from the block's live mask).  Anything the
generator does not know raises :class:`~.vectorize.Unsupported`, and the kernel runs per
thread: never a different value.
"""
import ast
import linecache
import os

import numpy as np

from .. import types as T
from . import scalars, vecops
from .typedast import Rewriter, _OPNAMES, _numeric
from .typedast import _widens
from .vecmem import gload, gstore, vatomic
from .vectorize import Unsupported, is_varying, varying_locals

__all__ = ["vector_function", "Unsupported"]

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


class _Uniform(Rewriter):
    """The per-thread rewriter, for uniform expressions: block registers are locals of the
    generated function."""
    regs = ("blockIdx", "blockDim", "gridDim")

    def expr(self, node):
        info = self.tf.info.get(node)
        if info is not None and info[0] == "sreg":
            data = info[1]
            if isinstance(data, tuple) and data[0] in self.regs:
                return ast.copy_location(ast.Name(f"__{data[0]}_{data[1]}", ast.Load()), node)
            raise Unsupported(f"register {data}")
        if info is not None and info[0] == "gridsize":
            nd = info[1]
            names = [f"__gs_{a}" for a in "xyz"[:nd]]
            if nd == 1:
                return ast.copy_location(ast.Name(names[0], ast.Load()), node)
            return ast.copy_location(ast.Tuple([ast.Name(n, ast.Load()) for n in names],
                                               ast.Load()), node)
        if isinstance(node, ast.Call) and (info is None or not isinstance(info[0], str) or
                                           info[0] in ("device", "print") or
                                           info[0].startswith("atomic.")):
            raise Unsupported("call")
        return super().expr(node)


class _Gen:
    def __init__(self, tf, ns, multi=False):
        self.tf = tf
        self.ns = ns
        self.multi = multi      # several blocks as one vector: blockIdx varies
        self.u = _Uniform(tf, ns, self._no_device)
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
        ns.update(np=np, __gload=gload, __gstore=gstore, __vatomic=vatomic, __mand=_mand, __mandnot=_mandnot,
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
        return node.id

    def v_Attribute(self, node, m):
        info = self.tf.info.get(node)
        if info and info[0] == "sreg" and info[1][0] == "threadIdx":
            ax = "xyz".index(info[1][1])
            return f"__blk.tid({ax}, {self.helper(self.ty(node).dtype, 'dt')})"
        if info and info[0] == "sreg" and info[1][0] == "blockIdx" and self.multi:
            ax = "xyz".index(info[1][1])
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
        elif isinstance(rt, T.Float) and op in ("//", "%"):
            fn = vecops.vfloat_floordiv if op == "//" else vecops.vfloat_mod
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
        from ..compiler import rules
        codes = []
        for n, t in zip(operands, ts):
            c, var = self.val(n, m)
            x = self.new()
            self.emit(f"{x} = {c}")
            codes.append((x, t))
        parts = []
        for (a, at), (b, bt), op in zip(codes, codes[1:], node.ops):
            o = _CMPOPS.get(type(op))
            if o is None:
                raise Unsupported("cmpop")
            if at is not bt and not (isinstance(at, T.Integer) and isinstance(bt, T.Integer)):
                ct = T.boolean if isinstance(at, T.Boolean) and isinstance(bt, T.Boolean) \
                    else rules.unify(at, bt)
                if ct is None or not isinstance(ct, _SCALAR):
                    raise Unsupported("compare types")
                a, b = self.conv_any(a, at, ct), self.conv_any(b, bt, ct)
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
        if not info or info[0] != "index" or len(info[1]) != at.ndim or \
                any(k[0] != "int" for k in info[1]) or not isinstance(at.dtype, _SCALAR):
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
        return f"__gload(__blk, __raw_{name}, {tup}, {m}, {name!r}, {site!r})"

    def v_Call(self, node, m):
        info = self.tf.info.get(node)
        if info is None or node.keywords:
            raise Unsupported("call")
        key, data = info
        rt = self.ty(node)
        if key == "cast" and len(node.args) == 1 and isinstance(data, _SCALAR):
            return self.val(node.args[0], m, data)[0]
        if key == "grid" and data == 1:
            return "__blk.grid_axis(0)"
        if key == "atomic" and isinstance(data, str):
            return self.atomic(node, data, m)
        if key in ("syncthreads_count", "syncthreads_and", "syncthreads_or") and \
                len(node.args) == 1:
            if self.ctl or self.multi:
                raise Unsupported("barrier under varying control")
            site, _ = self.site(node)
            c = self.new("c")
            self.emit(f"{c} = __truth({self.arr(*self.val(node.args[0], '__live'), self.ty(node.args[0]))})")
            self.emit(f"__blk.syncthreads(__live, {site.split(': ', 1)[0]!r})")
            kind = key[len("syncthreads_"):]
            return (f"__full(__N, __blk.reduce_pred({kind!r}, {c}, __live), "
                    f"{self.helper(rt.dtype, 'dt')})")
        if key in ("min", "max") and len(node.args) >= 2 and isinstance(rt, _SCALAR):
            ts = [self.ty(a) for a in node.args]
            if not all(t is rt or _widens(t, rt) for t in ts):
                raise Unsupported("min/max types")
            codes = [self.arr(*self.val(a, m, rt), rt) for a in node.args]
            acc = self.new()
            self.emit(f"{acc} = {codes[0]}")
            for c in codes[1:]:
                x = self.new()
                self.emit(f"{x} = {c}")
                cmp = "<" if key == "min" else ">"
                # Python's min/max: the first extreme argument (NaN and -0.0 included)
                self.emit(f"{acc} = np.where({x} {cmp} {acc}, {x}, {acc})")
            return acc
        # abs of an integer: the per-thread executor gives abs(INT_MIN) unwrapped
        if key == "abs" and len(node.args) == 1 and isinstance(rt, T.Float) \
                and self.ty(node.args[0]) is rt:
            return f"np.abs({self.val(node.args[0], m)[0]})"
        if isinstance(key, str) and (key.startswith("math.") or
                                     key in ("npfloor", "npceil", "nptrunc")):
            name = key[5:] if key.startswith("math.") else key
            argtypes = [self.ty(a) for a in node.args]
            if not all(isinstance(t, _SCALAR) for t in argtypes) or \
                    not isinstance(rt, _SCALAR):
                raise Unsupported("math types")
            fn = vecops.vmath(name, argtypes, rt)
            if fn is None:
                raise Unsupported("math " + name)
            args = [self.val(a, m)[0] for a in node.args]
            return f"{self.helper(fn, 'vm_' + name + '_')}({', '.join(args)})"
        raise Unsupported(f"call {key}")

    def atomic(self, node, op, m):
        if len(node.args) < 3 or node.keywords:
            raise Unsupported("atomic form")
        arr, idx = node.args[0], node.args[1]
        at = self.ty(arr)
        if not (isinstance(arr, ast.Name) and self.arrays.get(arr.id) == "param" and
                isinstance(at, T.Array) and isinstance(at.dtype, (T.Integer, T.Float))):
            raise Unsupported("atomic target")
        elts = idx.elts if isinstance(idx, ast.Tuple) else [idx]
        if len(elts) != at.ndim or not all(isinstance(self.ty(e), T.Integer) for e in elts):
            raise Unsupported("atomic index")
        codes = [self.val(e, m)[0] for e in elts]
        vals = [self.val(v, m, at.dtype)[0] for v in node.args[2:]]
        site, _ = self.site(node)
        return (f"__vatomic(__blk, {op!r}, __raw_{arr.id}, ({', '.join(codes)},), "
                f"({', '.join(vals)},), {m}, {arr.id!r}, {site!r})")

    # ---- statements -------------------------------------------------------------------
    def block(self, stmts, m, ctl):
        """Statements under mask variable ``m`` ('__live' at uniform control) and ``ctl``
        (True under varying control flow).  Returns True when a statement may end lanes."""
        ends = False
        outer_ctl, self.ctl = self.ctl, ctl
        for s in stmts:
            meth = getattr(self, "s_" + type(s).__name__, None)
            if meth is None:
                raise Unsupported(type(s).__name__)
            e = meth(s, m, ctl)
            if e and ctl:
                # lanes that returned in a nested statement leave this block's mask
                if m != "__live":
                    self.emit(f"{m} = __mand({m}, __live)")
                self.emit("if not __any(__live): return")
            ends = ends or bool(e)
        self.ctl = outer_ctl
        return ends

    def s_Pass(self, s, m, ctl):
        self.emit("pass")

    def s_Expr(self, s, m, ctl):
        v = s.value
        if isinstance(v, ast.Constant) and isinstance(v.value, str):
            return
        info = self.tf.info.get(v) if isinstance(v, ast.Call) else None
        if info and info[0] == "syncthreads" and not v.args:
            if ctl or self.multi:
                raise Unsupported("barrier under varying control")
            site, _ = self.site(v)
            self.emit(f"__blk.syncthreads(__live, {site.split(': ', 1)[0]!r})")
            return
        if info and info[0] == "atomic" and isinstance(info[1], str):
            self.emit(self.atomic(v, info[1], m))
            return
        raise Unsupported(f"expression statement {ast.unparse(v)[:40]}")

    def assign_name(self, name, value_node, m, ctl, code=None):
        vt = self.tf.vartypes.get(name)
        if not isinstance(vt, _SCALAR):
            raise Unsupported(f"assignment type {vt}")
        if name in self.varying:
            if code is None:
                c, var = self.val(value_node, m, vt)
                code = self.arr(c, var, vt)
            if ctl:
                self.emit(f"{name} = __merge({m}, {code}, {name})")
            else:
                self.emit(f"{name} = {code}")
        else:
            if ctl:
                raise Unsupported("uniform assignment under varying control")
            c = self.uex(value_node)
            self.emit(f"{name} = {self.uconv(c, self.ty(value_node), vt)}")

    def s_Assign(self, s, m, ctl):
        if len(s.targets) != 1:
            raise Unsupported("multiple targets")
        tgt, value = s.targets[0], s.value
        info = self.tf.info.get(value) if isinstance(value, ast.Call) else None
        if isinstance(tgt, ast.Name):
            if info and info[0] == "shared.array":
                return self.shared_assign(tgt.id, value, info, ctl)
            return self.assign_name(tgt.id, value, m, ctl)
        if isinstance(tgt, ast.Tuple) and info and info[0] in ("grid", "gridsize") and \
                len(tgt.elts) == info[1] and all(isinstance(e, ast.Name) for e in tgt.elts):
            for ax, e in enumerate(tgt.elts):
                code = f"__blk.grid_axis({ax})" if info[0] == "grid" else f"__gs_{'xyz'[ax]}"
                if info[0] == "gridsize" or e.id not in self.varying:
                    if e.id in self.varying or ctl or info[0] == "grid":
                        raise Unsupported("gridsize into a varying local")
                    self.emit(f"{e.id} = {code}")
                    continue
                self.assign_name(e.id, None, m, ctl, code=self.vconv(code, self.tf.vartypes[e.id]))
            return
        if isinstance(tgt, ast.Subscript):
            st = self.ty(tgt.value)
            if not isinstance(st, T.Array):
                raise Unsupported("store target")
            c, var = self.val(value, m, st.dtype)
            return self.store(tgt, c, m)
        raise Unsupported("assignment form")

    def store(self, tgt, code, m):
        name, kind, codes = self.index(tgt, m)
        tup = "(" + ", ".join(codes) + ",)" if codes else "()"
        site, line = self.site(tgt)
        if kind == "shared":
            self.emit(f"{name}.store({tup}, {code}, {m}, {site!r}, {line})")
        else:
            self.emit(f"__gstore(__blk, __raw_{name}, {tup}, {code}, {m}, {name!r}, "
                      f"{site!r})")

    def shared_assign(self, name, call, info, ctl):
        if self.multi:
            raise Unsupported("shared memory across blocks")
        shape, dtype, _ = info[1] if isinstance(info[1], tuple) and len(info[1]) == 3 \
            else (None, None, None)
        if ctl or shape is None or shape == 0 or shape == (0,) or self.arrays.get(name):
            raise Unsupported("shared array form")
        shape = shape if isinstance(shape, tuple) else (shape,)
        if not isinstance(dtype, _SCALAR):
            raise Unsupported("shared dtype")
        self.arrays[name] = "shared"
        key = self.helper(object(), "site")
        self.emit(f"{name} = __blk.shared({key}, {shape!r}, "
                  f"{self.helper(dtype.dtype, 'dt')}, {name!r})")

    def s_AugAssign(self, s, m, ctl):
        info = self.tf.info.get(s)
        op = _OPNAMES.get(type(s.op))
        if info is None or info[0] != "augassign" or op is None:
            raise Unsupported("augassign")
        cur, res = info[1]
        tgt = s.target
        if not (isinstance(cur, _SCALAR) and isinstance(res, _SCALAR)):
            raise Unsupported("augassign types")
        if isinstance(tgt, ast.Name):
            if tgt.id not in self.varying:
                if ctl:
                    raise Unsupported("uniform augassign under varying control")
                self.emit(ast.unparse(self.u.s_AugAssign(s)))
                return
            load = tgt.id
        else:
            load = self.load(tgt, m)
        lc = self.vconv(load, res) if cur is not res else load
        x = self.new()
        self.emit(f"{x} = {lc}")
        code = self.binop(op, None, s.value, res, m, left_code=x)
        if isinstance(tgt, ast.Name):
            vt = self.tf.vartypes[tgt.id]
            code = self.vconv(code, vt)
            if ctl:
                self.emit(f"{tgt.id} = __merge({m}, {code}, {tgt.id})")
            else:
                self.emit(f"{tgt.id} = {code}")
        else:
            st = self.ty(tgt.value).dtype
            self.store(tgt, self.vconv(code, st), m)

    def s_If(self, s, m, ctl):
        if not self.isvar(s.test):
            self.emit(f"if {self.uex_test(s.test)}:")
            self.depth += 1
            self.emit("pass")
            e1 = self.block(s.body, m, ctl)
            self.depth -= 1
            e2 = False
            if s.orelse:
                self.emit("else:")
                self.depth += 1
                self.emit("pass")
                e2 = self.block(s.orelse, m, ctl)
                self.depth -= 1
            return e1 or e2
        c = self.new("c")
        self.emit(f"{c} = {self.test(s.test, m)}")
        m1 = self.new("m")
        self.emit(f"{m1} = __mand({m}, {c})")
        self.emit(f"if __any({m1}):")
        self.depth += 1
        e1 = self.block(s.body, m1, True)
        self.depth -= 1
        e2 = False
        if s.orelse:
            m2 = self.new("m")
            self.emit(f"{m2} = __mandnot({m}, {c})")
            if e1:
                self.emit(f"{m2} = __mand({m2}, __live)")
            self.emit(f"if __any({m2}):")
            self.depth += 1
            e2 = self.block(s.orelse, m2, True)
            self.depth -= 1
        return e1 or e2

    def uex_test(self, node):
        return ast.unparse(self.u.test(node))

    def s_Return(self, s, m, ctl):
        if s.value is not None and not (isinstance(s.value, ast.Constant) and
                                        s.value.value is None):
            raise Unsupported("return value")
        if not ctl:
            self.emit("return")
            return False
        self.emit(f"__live = __mandnot(__live, {m})")
        self.emit("if not __any(__live): return")
        return True

    def s_For(self, s, m, ctl):
        from ..compiler.rules import RangeType
        it = s.iter
        if s.orelse or not isinstance(s.target, ast.Name) or \
                not isinstance(self.ty(it), RangeType) or not isinstance(it, ast.Call) or \
                it.keywords or not 1 <= len(it.args) <= 3:
            raise Unsupported("for form")
        name = s.target.id
        vt = self.tf.vartypes.get(name)
        if name not in self.varying:
            if _has_loop_exit(s.body, nested_ok=False) and ctl:
                raise Unsupported("break under varying control")
            self.emit(f"for {name} in {self.uex(it)}:")
            self.depth += 1
            if not isinstance(vt, T.Integer) or vt.bitwidth < 64:
                self.emit(f"{name} = {self.uconv(name, None, vt)}")
            e = self.block(s.body, m, ctl)
            self.depth -= 1
            return e
        if _has_loop_exit(s.body):
            raise Unsupported("break/continue in a varying loop")
        rtype = self.ty(it).dtype
        args = it.args
        vals = [self.val(a, m, rtype) for a in args]
        start, stop, step = (("0", False), vals[0], ("1", False)) if len(args) == 1 else \
            (vals[0], vals[1], ("1", False)) if len(args) == 2 else tuple(vals)
        if step[1]:
            raise Unsupported("varying range step")
        i, e, st, wm = self.new("i"), self.new("e"), self.new("st"), self.new("m")
        self.emit(f"{st} = {step[0]}")
        self.emit(f"if {st} == 0: raise ValueError('range() arg 3 must not be zero')")
        self.emit(f"{i} = {self.arr(start[0], start[1], rtype)}")
        self.emit(f"{e} = {stop[0]}")
        self.emit(f"{wm} = {m}")
        self.emit("while True:")
        self.depth += 1
        self.emit(f"{wm} = __mand(__mand({wm}, __live), ({i} < {e}) if {st} > 0 else "
                  f"({i} > {e}))")
        self.emit(f"if not __any({wm}): break")
        self.emit(f"{name} = __merge({wm}, {self.vconv(i, vt)}, {name})")
        self.block(s.body, wm, True)
        self.emit(f"{i} = {i} + {st}")
        self.depth -= 1
        return _has_return(s.body)

    def s_While(self, s, m, ctl):
        if s.orelse:
            raise Unsupported("while-else")
        if not self.isvar(s.test):
            if ctl and _has_loop_exit(s.body, nested_ok=False):
                raise Unsupported("break under varying control")
            self.emit(f"while {self.uex_test(s.test)}:")
            self.depth += 1
            self.emit("pass")
            e = self.block(s.body, m, ctl)
            self.depth -= 1
            return e
        if _has_loop_exit(s.body):
            raise Unsupported("break/continue in a varying loop")
        wm = self.new("m")
        self.emit(f"{wm} = {m}")
        self.emit("while True:")
        self.depth += 1
        self.emit(f"{wm} = __mand(__mand({wm}, __live), {self.test(s.test, wm)})")
        self.emit(f"if not __any({wm}): break")
        self.block(s.body, wm, True)
        self.depth -= 1
        return _has_return(s.body)

    def s_Break(self, s, m, ctl):
        if ctl:
            raise Unsupported("varying break")
        self.emit("break")

    def s_Continue(self, s, m, ctl):
        if ctl:
            raise Unsupported("varying continue")
        self.emit("continue")

    # ---- function -----------------------------------------------------------------------
    def function(self):
        tf = self.tf
        node = tf.fsrc.node
        a = node.args
        if a.vararg or a.kwarg or a.kwonlyargs or a.posonlyargs or a.defaults:
            raise Unsupported("signature")
        params = list(tf.fsrc.argnames)
        for p, t in zip(params, tf.argtypes):
            if isinstance(t, T.Array):
                if not isinstance(t.dtype, _SCALAR):
                    raise Unsupported("array dtype")
                self.arrays[p] = "param"
                self.emit(f"__raw_{p} = __unwrap({p})")
            elif _numeric(t):
                if not isinstance(t, _SCALAR):
                    raise Unsupported("complex parameter")
                if p in self.varying:
                    raise Unsupported("parameter reassigned under varying control")
                self.emit(f"{p} = {self.uconv(p, None, t)}")
            else:
                raise Unsupported(f"parameter type {t}")
        for name in sorted(self.varying):
            t = tf.vartypes.get(name)
            if not isinstance(t, _SCALAR):
                raise Unsupported("varying local type")
            self.emit(f"{name} = np.zeros(__N, {self.helper(t.dtype, 'dt')})")
        self.block(node.body, "__live", False)
        for name, t in tf.vartypes.items():
            if isinstance(t, T.Array) and name not in self.arrays:
                raise Unsupported("array local")      # views, local arrays
        header = [f"def __cj_vblock(__blk, {', '.join(params)}):",
                  "    __N = __blk.n",
                  "    __live = None",
                  "    __blockIdx_x, __blockIdx_y, __blockIdx_z = __blk.bid" if not self.multi
                  else "    pass",
                  "    __blockDim_x, __blockDim_y, __blockDim_z = __blk.launch.blockdim",
                  "    __gridDim_x, __gridDim_y, __gridDim_z = __blk.launch.griddim",
                  "    __gs_x = __gridDim_x * __blockDim_x",
                  "    __gs_y = __gridDim_y * __blockDim_y",
                  "    __gs_z = __gridDim_z * __blockDim_z"]
        return "\n".join(header + self.lines) + "\n"


def _as_load(t):
    new = ast.Subscript(t.value, t.slice, ast.Load())
    ast.copy_location(new, t)
    return new


def _has_return(stmts):
    return any(isinstance(n, ast.Return) for s in stmts for n in ast.walk(s))


def _has_loop_exit(stmts, nested_ok=True):
    """True when ``stmts`` hold a break/continue of this loop (not of a nested loop)."""
    for s in stmts:
        if isinstance(s, (ast.Break, ast.Continue)):
            return True
        if isinstance(s, (ast.For, ast.While)):
            continue
        for f in ("body", "orelse"):
            if _has_loop_exit(getattr(s, f, []) or []):
                return True
    return False


_anyconvs = {}


def _anyconv(t):
    c = _anyconvs.get(t)
    if c is None:
        sc, vc = scalars.caster(t), vecops.vcaster(t)

        def c(x):
            return vc(x) if isinstance(x, np.ndarray) else sc(x)
        _anyconvs[t] = c
    return c


#: qualname -> why the last kernel of that name runs per thread (for diagnosing; bounded)
why_not = {}


def vector_function(tf, ns, multi=False):
    """The block function of kernel ``tf`` (a ``TypedFunction``), generated in namespace
    ``ns`` (the per-thread typed function's globals and helpers), or None when the kernel
    uses something the vector executor does not handle (it then runs per thread).
    ``multi``: the function of several blocks at once (kernels without shared memory or
    barriers), or None."""
    from .checked import unwrap
    if not tf.kernel:
        return None
    ns = dict(ns)
    try:
        gen = _Gen(tf, ns, multi)
        src = gen.function()
    except Unsupported as e:
        if len(why_not) < 256 and not multi:
            why_not[tf.fsrc.qualname] = str(e)
        return None
    ns["__unwrap"] = unwrap
    code = compile(src, f"<cujit vector block {tf.fsrc.qualname}>", "exec")
    exec(code, ns)
    fn = ns["__cj_vblock"]
    fn._cj_source = src
    fn._cj_filename = tf.fsrc.filename
    fn._cj_multi = vector_function(tf, ns, True) if not multi else None
    return fn
