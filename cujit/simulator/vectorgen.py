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

from .. import types as T
from ..frontend.callkinds import CallKind, call_of
from ..frontend.nodeinfo import AugAssign
from .typedast import _OPNAMES, _numeric
from .vecexpr import _SCALAR, ExprGen
from .vectorize import Unsupported

__all__ = ["VectorKernel", "vector_function", "Unsupported"]


class _Gen(ExprGen):
    """Statements and the whole function (expressions: :class:`~.vecexpr.ExprGen`)."""

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
                # lanes that returned (or left the loop's iteration) in a nested statement
                # leave this block's mask
                if m != "__live":
                    self.emit(f"{m} = __mand({m}, __live)")
                top = self.loops[-1] if self.loops else None
                if top is not None and m != top[1]:
                    self.emit(f"{m} = __mand({m}, {top[1]})")
                self.emit("if not __any(__live): return")
            ends = ends or bool(e)
        self.ctl = outer_ctl
        return ends

    def defined(self, name, m):
        """Lanes of mask ``m`` have assigned local ``name``."""
        if name in self.maybe_undef:
            self.emit(f"__d_{name} = __defd(__d_{name}, {m})")

    def s_Pass(self, s, m, ctl):
        self.emit("pass")

    def s_Expr(self, s, m, ctl):
        v = s.value
        if isinstance(v, ast.Constant) and isinstance(v.value, str):
            return
        c = call_of(self.tf, v)
        if c is not None and c.kind is CallKind.SYNCTHREADS and not v.args:
            if ctl or self.multi:
                raise Unsupported("barrier under varying control")
            site, _ = self.site(v)
            self.emit(f"__blk.syncthreads(__live, {site.split(': ', 1)[0]!r})")
            return
        if c is not None and c.kind is CallKind.ATOMIC:
            self.emit(self.atomic(v, c.data.op, m))
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
                self.defined(name, m)
            else:
                self.emit(f"{name} = {code}")
                self.defined(name, m)
        else:
            if ctl:
                raise Unsupported("uniform assignment under varying control")
            c = self.uex(value_node)
            self.emit(f"{name} = {self.uconv(c, self.ty(value_node), vt)}")

    def s_Assign(self, s, m, ctl):
        if len(s.targets) != 1:
            raise Unsupported("multiple targets")
        tgt, value = s.targets[0], s.value
        c = call_of(self.tf, value)
        kind = None if c is None else c.kind
        if isinstance(tgt, ast.Name):
            if kind is CallKind.SHARED_ARRAY:
                return self.shared_assign(tgt.id, value, c.data, ctl)
            if kind is CallKind.LOCAL_ARRAY:
                return self.local_assign(tgt.id, c.data)
            return self.assign_name(tgt.id, value, m, ctl)
        if isinstance(tgt, ast.Tuple) and kind in (CallKind.GRID, CallKind.GRIDSIZE) and \
                len(tgt.elts) == c.data.ndim and all(isinstance(e, ast.Name) for e in tgt.elts):
            grid = kind is CallKind.GRID
            for ax, e in enumerate(tgt.elts):
                code = f"__blk.grid_axis({ax})" if grid else f"__gs_{'xyz'[ax]}"
                if not grid or e.id not in self.varying:
                    if e.id in self.varying or ctl or grid:
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
        if isinstance(tgt, ast.Tuple) and not ctl and not self.isvar(value) and \
                all(isinstance(e, ast.Name) and e.id not in self.varying for e in tgt.elts):
            # a uniform unpacking (``h, w = a.shape``): the per-thread rewriter's statement
            new = self.u.s_Assign(s)
            for stmt in new if isinstance(new, list) else [new]:
                self.emit(ast.unparse(stmt))
            return
        raise Unsupported("assignment form")

    def store(self, tgt, code, m):
        name, kind, codes = self.index(tgt, m)
        tup = "(" + ", ".join(codes) + ",)" if codes else "()"
        site, line = self.site(tgt)
        if kind == "shared":
            self.emit(f"{name}.store({tup}, {code}, {m}, {site!r}, {line})")
        elif kind == "local":
            self.emit(f"__lstore(__blk, {name}, {tup}, {code}, {m}, {name!r}, {site!r})")
        else:
            self.emit(f"__gstore(__blk, __raw_{name}, {tup}, {code}, {m}, {name!r}, "
                      f"{site!r})")

    def shared_assign(self, name, call, spec, ctl):
        if self.multi:
            raise Unsupported("shared memory across blocks")
        shape, dtype = spec.shape, spec.dtype
        if ctl or shape is None or shape == 0 or shape == (0,) or self.arrays.get(name):
            raise Unsupported("shared array form")
        shape = shape if isinstance(shape, tuple) else (shape,)
        if not isinstance(dtype, _SCALAR):
            raise Unsupported("shared dtype")
        self.arrays[name] = "shared"
        key = self.helper(object(), "site")
        self.emit(f"{name} = __blk.shared({key}, {shape!r}, "
                  f"{self.helper(dtype.dtype, 'dt')}, {name!r}, {spec.alignment!r})")

    def local_assign(self, name, spec):
        shape, dtype = spec.shape, spec.dtype
        if shape is None or not isinstance(dtype, _SCALAR) or dtype is T.float16 or \
                self.arrays.get(name) not in (None, "local") or spec.alignment is not None:
            raise Unsupported("local array form")      # aligned: each lane's own, per thread
        shape = shape if isinstance(shape, tuple) else (shape,)
        self.arrays[name] = "local"
        key = self.helper(object(), "site")
        # one row per lane, made (zeroed) once per block, as each thread's array is
        self.emit(f"{name} = __blk.local({key}, {shape!r}, "
                  f"{self.helper(dtype.dtype, 'dt')})")

    def s_AugAssign(self, s, m, ctl):
        info = self.tf.info.get(s)
        op = _OPNAMES.get(type(s.op))
        if not isinstance(info, AugAssign) or op is None:
            raise Unsupported("augassign")
        cur, res = info.current, info.result
        tgt = s.target
        if not (isinstance(cur, _SCALAR) and isinstance(res, _SCALAR)):
            raise Unsupported("augassign types")
        if isinstance(tgt, ast.Name):
            if tgt.id not in self.varying:
                if ctl:
                    raise Unsupported("uniform augassign under varying control")
                self.emit(ast.unparse(self.u.s_AugAssign(s)))
                return
            load = self.v_Name(ast.Name(tgt.id, ast.Load()), m)
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
            self.defined(tgt.id, m)
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
        from ..frontend.rules import RangeType
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
            self.emit(f"__blk.spin({m})")
            if not isinstance(vt, T.Integer) or vt.bitwidth < 64:
                self.emit(f"{name} = {self.uconv(name, None, vt)}")
            self.loops.append(None)
            e = self.block(s.body, m, ctl)
            self.loops.pop()
            self.depth -= 1
            return e
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
        self.emit(f"__blk.spin({wm})")
        self.emit(f"{name} = __merge({wm}, {self.vconv(i, vt)}, {name})")
        self.defined(name, wm)
        self.loop_body(s.body, wm)
        self.emit(f"{i} = {i} + {st}")
        self.depth -= 1
        return _has_return(s.body)

    def loop_body(self, body, wm):
        """A varying loop's body under a fresh iteration mask (``continue`` removes lanes
        from it; ``break`` from it and from the loop's mask ``wm``)."""
        itm = self.new("it")
        self.emit(f"{itm} = {wm}")
        self.loops.append((wm, itm))
        self.block(body, itm, True)
        self.loops.pop()

    def s_While(self, s, m, ctl):
        if s.orelse:
            raise Unsupported("while-else")
        if not self.isvar(s.test):
            if ctl and _has_loop_exit(s.body, nested_ok=False):
                raise Unsupported("break under varying control")
            self.emit(f"while {self.uex_test(s.test)}:")
            self.depth += 1
            self.emit(f"__blk.spin({m})")
            self.loops.append(None)
            e = self.block(s.body, m, ctl)
            self.loops.pop()
            self.depth -= 1
            return e
        wm = self.new("m")
        self.emit(f"{wm} = {m}")
        self.emit("while True:")
        self.depth += 1
        self.emit(f"{wm} = __mand(__mand({wm}, __live), {self.test(s.test, wm)})")
        self.emit(f"if not __any({wm}): break")
        self.emit(f"__blk.spin({wm})")
        self.loop_body(s.body, wm)
        self.depth -= 1
        return _has_return(s.body)

    def s_Break(self, s, m, ctl):
        if not ctl:
            self.emit("break")
            return False
        top = self.loops[-1] if self.loops else None
        if top is None:
            raise Unsupported("varying break of a uniform loop")
        wm, itm = top
        self.emit(f"{wm} = __mandnot({wm}, {m})")
        self.emit(f"{itm} = __mandnot({itm}, {m})")
        return True

    def s_Continue(self, s, m, ctl):
        if not ctl:
            self.emit("continue")
            return False
        top = self.loops[-1] if self.loops else None
        if top is None:
            raise Unsupported("varying continue of a uniform loop")
        self.emit(f"{top[1]} = __mandnot({top[1]}, {m})")
        return True

    # ---- function -----------------------------------------------------------------------
    def function(self):
        tf = self.tf
        node = tf.fsrc.node
        a = node.args
        # defaults are filled in when the launch binds its arguments (Dispatcher._bind):
        # this function gets every value, positionally
        if a.vararg or a.kwarg or a.kwonlyargs or a.posonlyargs:
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
            elif t is not T.none:       # None: its ``is None`` tests were decided in typing
                raise Unsupported(f"parameter type {t}")
        for name in sorted(self.varying):
            t = tf.vartypes.get(name)
            if not isinstance(t, _SCALAR):
                raise Unsupported("varying local type")
            self.emit(f"{name} = np.zeros(__N, {self.helper(t.dtype, 'dt')})")
        self.maybe_undef = self.varying - _definite(node.body)
        for name in sorted(self.maybe_undef):
            self.emit(f"__d_{name} = np.zeros(__N, bool)")
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


def _definite(body):
    """Locals whose first use in source order is an unconditional assignment at the top
    level of ``body``: assigned before any read in every thread."""
    seen, definite = set(), set()
    for s in body:
        if isinstance(s, (ast.Assign, ast.AnnAssign)) and s.value is not None:
            for n in ast.walk(s.value):
                if isinstance(n, ast.Name):
                    seen.add(n.id)
            tgts = s.targets if isinstance(s, ast.Assign) else [s.target]
            for t in tgts:
                if isinstance(t, (ast.Name, ast.Tuple)):
                    for n in ast.walk(t):
                        if isinstance(n, ast.Name) and n.id not in seen:
                            definite.add(n.id)
                for n in ast.walk(t):
                    if isinstance(n, ast.Name):
                        seen.add(n.id)
        else:
            for n in ast.walk(s):
                if isinstance(n, ast.Name):
                    seen.add(n.id)
    return definite


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


class VectorKernel:
    """A kernel's whole-block vector function: ``fn(blk, *args)``, ``source`` (its generated
    code), ``filename`` (the kernel's file), ``multi`` (the VectorKernel running several
    blocks at once, for kernels without shared memory or barriers, or None).  Kept by the
    kernel's :class:`~.typedexec.TypedKernel`."""
    __slots__ = ("fn", "source", "filename", "multi")

    def __init__(self, fn, source, filename, multi=None):
        self.fn, self.source, self.filename, self.multi = fn, source, filename, multi

    def __call__(self, blk, *args):
        return self.fn(blk, *args)


def vector_function(tf, ns, multi=False, build=None):
    """The :class:`VectorKernel` of kernel ``tf`` (a ``TypedFunction``), generated in
    namespace ``ns`` (the per-thread typed function's globals and helpers), or None for a
    device function.  Raises :class:`Unsupported` (saying why) when the kernel uses something
    the vector executor does not handle: it then runs per thread.  ``multi``: the function of
    several blocks at once (kernels without shared memory or barriers; None when not
    possible, never raises).  ``build``:
    device function ``TypedFunction`` -> its per-thread typed function (device functions of
    scalars run lane by lane)."""
    from .checked import unwrap
    if not tf.kernel:
        return None
    if any(isinstance(t, (T.CPointer, T.RawPointer)) for t in tf.typemap.values()):
        # pointer accesses index a SimPointer per thread (pointers.py); no lane-array form
        if multi:
            return None
        raise Unsupported("C pointers")
    ns = dict(ns)
    try:
        gen = _Gen(tf, ns, multi, build)
        src = gen.function()
    except Unsupported:
        if multi:
            return None
        raise
    ns["__unwrap"] = unwrap
    code = compile(src, f"<cujit vector block {tf.fsrc.qualname}>", "exec")
    exec(code, ns)
    return VectorKernel(ns["__cj_vblock"], src, tf.fsrc.filename,
                        vector_function(tf, ns, True, build) if not multi else None)
