"""Typed ``ast`` → LLVM IR (llvmlite.ir) for one function: statements and scalar expressions.

Every local variable is an ``alloca`` in the entry block (the optimiser promotes them; no
hand-built SSA — ARCHITECTURE.md).  Python semantics kept: ``//`` and ``%`` floor toward −∞,
``int / int`` is float64, ``and``/``or`` short-circuit, chained comparisons evaluate the middle
operand once, ``range`` with negative or runtime steps, loop ``else`` clauses.
Arrays and calls are lowered by :mod:`.lower_arrays` and :mod:`.lower_calls`.
"""
import ast

import numpy as np
from llvmlite import ir

from .. import types as T
from . import lower_arrays as LA
from . import lower_globals as LG
from . import lower_calls as LC
from . import lower_exceptions as LX
from . import lower_ops as LO
from ..frontend import rules
from ..frontend.callkinds import CallKind
from ..frontend.errors import CompileError
from ..frontend.nodeinfo import SpecialRegister
from .ltypes import I1, I64, cast, const, ltype, truth
from ..frontend.rules import PseudoType

__all__ = ["FunctionLowerer"]


class FunctionLowerer:
    """Lowers one ``TypedFunction`` into ``func`` (an ``ir.Function`` whose arguments are
    already turned into values by the caller — see :mod:`.lowering`)."""

    def __init__(self, mctx, tf, func):
        self.m = mctx
        self.tf = tf
        self.func = func
        self.entry = func.append_basic_block("entry")
        self.b = ir.IRBuilder(self.entry)
        self.vars = {}
        self.loops = []        # (continue block, break block)
        self.ret_block = None
        self.wgmma_accumulators = []   # (slot, registers) of its cujit.wgmma accumulators

    # ---- set-up -------------------------------------------------------------------------
    def alloca(self, lty, name=""):
        """An alloca in the entry block (so that mem2reg/SROA promote it)."""
        with self.b.goto_entry_block():
            if self.entry.instructions:
                self.b.position_before(self.entry.instructions[0])
            return self.b.alloca(lty, name=name)

    def lower(self, argvals):
        tf = self.tf
        di = self.m.debuginfo
        if di is not None:
            di.enter(self)
        for name, t in tf.vartypes.items():
            if t is None or t is T.none or isinstance(t, PseudoType):
                continue
            self.vars[name] = self.alloca(ltype(t), name=name)
        for name, t, v in zip(tf.fsrc.argnames, tf.argtypes, argvals):
            if isinstance(t, PseudoType) or t is T.none:
                continue        # a function or None passed as a value: nothing to store
            self.b.store(cast(self.b, v, t, tf.vartypes[name]), self.vars[name])
        body = self.func.append_basic_block("body")
        self.b.branch(body)
        self.b.position_at_end(body)
        self.block(tf.fsrc.node.body)
        if not self.b.block.is_terminated:
            if tf.return_type is T.void:
                self.emit_return(None)
            else:
                self.b.unreachable()

    def emit_return(self, value):
        """Return ``value`` (an LLVM value of the function's return type, None for void)
        from the function being lowered."""
        if value is None:
            self.b.ret_void()
        else:
            self.b.ret(value)

    def lower_inline(self, tf, argvals):
        """Lower device function ``tf`` into this function at the builder's position (a
        call of a function jitted with ``inline="always"``: numba-cuda inlines it before
        LLVM, so no call is left); ``argvals`` as :meth:`lower`'s.  Returns the result's
        value (None for void)."""
        return _Inlined(self, tf).run(argvals)

    def loc(self, node):
        return self.tf.fsrc.location(node)

    def error(self, msg, node):
        return CompileError(msg, self.loc(node))

    def ty(self, node):
        return self.tf.typemap.get(node)

    # ---- statements ---------------------------------------------------------------------
    def block(self, stmts):
        di = self.m.debuginfo
        for s in stmts:
            if self.b.block.is_terminated:
                return      # code after break/continue/return is dead
            if di is not None:
                di.at(self, s)
            getattr(self, "s_" + type(s).__name__)(s)

    def s_Pass(self, s):
        pass

    def s_Assert(self, s):
        LX.lower_assert(self, s)

    def s_Raise(self, s):
        LX.lower_raise(self, s)

    def s_FunctionDef(self, s):
        pass        # a closure: compiled at its calls (closures.py)

    def s_Expr(self, s):
        if isinstance(s.value, ast.Constant) and isinstance(s.value.value, str):
            return
        self.expr(s.value)

    def s_Assign(self, s):
        v = self.expr(s.value)
        vt = self.ty(s.value)
        for t in s.targets:
            self.assign(t, v, vt)

    def s_AnnAssign(self, s):
        if s.value is not None:
            self.assign(s.target, self.expr(s.value), self.ty(s.value))

    def assign(self, target, v, vt):
        if isinstance(target, ast.Name):
            dst = self.tf.vartypes.get(target.id)
            if isinstance(dst, PseudoType) or dst is None:
                return
            self.b.store(cast(self.b, v, vt, dst), self.vars[target.id])
        elif isinstance(target, (ast.Tuple, ast.List)):
            for i, (elt, et) in enumerate(zip(target.elts, vt.types)):
                self.assign(elt, self.b.extract_value(v, i), et)
        elif isinstance(target, ast.Subscript):
            LA.store_subscript(self, target, v, vt)
        elif isinstance(target, ast.Attribute):
            LA.store_field(self, target, v, vt)

    def s_AugAssign(self, s):
        aug = self.tf.info[s]
        cur_t, res_t = aug.current, aug.result
        op = LO.BINOPS[type(s.op)]
        if isinstance(s.target, ast.Subscript):
            # evaluate the array and index once: a[i] += x
            ptr, elt_t = LA.subscript_pointer(self, s.target)
            cur = LA.load_elem(self, ptr, elt_t)
            rhs = self.expr(s.value)
            res = LO.binop(self, op, cur, cur_t, rhs, self.ty(s.value), res_t, s)
            LA.store_elem(self, ptr, cast(self.b, res, res_t, elt_t), elt_t)
            return
        if isinstance(s.target, ast.Name):
            cur = self.b.load(self.vars[s.target.id])
            cur_t = self.tf.vartypes[s.target.id]
        else:
            cur = self.expr(s.target)
        rhs = self.expr(s.value)
        res = LO.binop(self, op, cur, cur_t, rhs, self.ty(s.value), res_t, s)
        self.assign(s.target, res, res_t)

    def cond(self, node):
        return truth(self.b, self.expr(node), self.ty(node))

    def s_If(self, s):
        c = self.cond(s.test)
        then = self.func.append_basic_block("if.then")
        end = self.func.append_basic_block("if.end")
        other = self.func.append_basic_block("if.else") if s.orelse else end
        self.b.cbranch(c, then, other)
        self.b.position_at_end(then)
        self.block(s.body)
        if not self.b.block.is_terminated:
            self.b.branch(end)
        if s.orelse:
            self.b.position_at_end(other)
            self.block(s.orelse)
            if not self.b.block.is_terminated:
                self.b.branch(end)
        self.b.position_at_end(end)

    def s_While(self, s):
        head = self.func.append_basic_block("while.cond")
        body = self.func.append_basic_block("while.body")
        orelse = self.func.append_basic_block("while.else")
        end = self.func.append_basic_block("while.end")
        self.b.branch(head)
        self.b.position_at_end(head)
        self.b.cbranch(self.cond(s.test), body, orelse)
        self.b.position_at_end(body)
        self.loops.append((head, end))
        self.block(s.body)
        self.loops.pop()
        if not self.b.block.is_terminated:
            self.b.branch(head)
        self.b.position_at_end(orelse)
        self.block(s.orelse)
        if not self.b.block.is_terminated:
            self.b.branch(end)
        self.b.position_at_end(end)

    def s_Break(self, s):
        self.b.branch(self.loops[-1][1])

    def s_Continue(self, s):
        self.b.branch(self.loops[-1][0])

    def s_Return(self, s):
        if self.tf.return_type is T.void:
            if s.value is not None:
                self.expr(s.value)
            self.emit_return(None)
            return
        v = self.expr(s.value)
        self.emit_return(cast(self.b, v, self.ty(s.value), self.tf.return_type))

    def s_For(self, s):
        it_t = self.ty(s.iter)
        if isinstance(it_t, rules.IterType):
            self.multi_loop(s, it_t)
            return
        if isinstance(it_t, rules.RangeType):
            start, stop, step, step_const = LO.range_args(self, s.iter, it_t.dtype)
            self.counted_loop(s, start, stop, step, step_const, it_t.dtype,
                              lambda i: (i, it_t.dtype))
            return
        seq_t = self.tf.info[s].over
        seq = self.expr(s.iter)
        if isinstance(seq_t, T.Array):
            n = LA.dim(self, seq, 0)
            zero, one = ir.Constant(I64, 0), ir.Constant(I64, 1)
            self.counted_loop(s, zero, n, one, 1, T.int64,
                              lambda i: LA.iter_item(self, seq, seq_t, i))
        else:   # homogeneous tuple: spill to memory and index it
            slot = self.alloca(seq.type)
            self.b.store(seq, slot)
            n = ir.Constant(I64, seq_t.count)
            self.counted_loop(s, ir.Constant(I64, 0), n, ir.Constant(I64, 1), 1, T.int64,
                              lambda i: (self.b.load(self.b.gep(
                                  slot, [ir.Constant(ir.IntType(32), 0), i])), seq_t.dtype))

    def multi_loop(self, s, it_t):
        """``for ... in enumerate(x)`` / ``zip(x, y, ...)``: one counter over the shortest
        iterable; items are taken from each by position."""
        total, item = self._positional(s.iter, it_t)
        tup_t = rules.element_type(it_t)
        zero, one = ir.Constant(I64, 0), ir.Constant(I64, 1)
        self.counted_loop(s, zero, total, one, 1, T.int64, lambda k: (item(k), tup_t))

    def _positional(self, node, t):
        """(length as i64, item(k) → value) of one iterable of a zip/enumerate."""
        b = self.b
        if isinstance(t, rules.IterType):
            parts = [self._positional(n, x) for n, x in zip(node.args, t.inners)]
            total = parts[0][0]
            for n, _ in parts[1:]:
                total = b.select(b.icmp_signed("<", n, total), n, total)
            tup_t = rules.element_type(t)

            def item(k):
                vals = ([k] if t.kind is CallKind.ENUMERATE else []) + [g(k) for _, g in parts]
                out = ir.Constant(ltype(tup_t), ir.Undefined)
                for i, v in enumerate(vals):
                    out = b.insert_value(out, v, i)
                return out
            return total, item
        if isinstance(t, rules.RangeType):
            start, stop, step, _ = LO.range_args(self, node, t.dtype)
            wide = [cast(b, v, t.dtype, T.int64) for v in (start, stop, step)]
            s0, s1, st = wide
            zero, one = ir.Constant(I64, 0), ir.Constant(I64, 1)
            pos = b.icmp_signed(">", st, zero)
            span = b.select(pos, b.sub(s1, s0), b.sub(s0, s1))
            astep = b.select(pos, st, b.sub(zero, st))
            n = b.sdiv(b.add(span, b.sub(astep, one)), astep)
            n = b.select(b.icmp_signed(">", span, zero), n, zero)
            return n, lambda k: cast(b, b.add(s0, b.mul(k, st)), T.int64, t.dtype)
        seq = self.expr(node)
        if isinstance(t, T.Array):
            return LA.dim(self, seq, 0), lambda k: LA.iter_item(self, seq, t, k)[0]
        slot = self.alloca(seq.type)
        b.store(seq, slot)
        return (ir.Constant(I64, t.count),
                lambda k: b.load(b.gep(slot, [ir.Constant(ir.IntType(32), 0), k])))

    def counted_loop(self, s, start, stop, step, step_const, ity, item):
        """``for target in <start:stop:step>``: ``item(i)`` gives (value, type) per i.

        The trip count is computed before the loop (as Numba's range iterator does) and the
        loop runs a counter up to it, so LLVM's scalar evolution knows the count even for a
        runtime step (grid-stride loops) and can unroll.  ``i`` advances with ``nsw``/``nuw``:
        every value it takes inside the loop lies between start and stop, so only the
        increment after the last iteration may wrap, and that value is never read.  LLVM then
        also knows that ``i`` keeps the sign of start when the step is positive, which drops
        the negative-index wrap of ``a[i]``."""
        b = self.b
        lty = ltype(ity)
        count = LO.range_count(self, start, stop, step, step_const, ity)
        k_slot = self.alloca(lty, name="for.k")
        counter = self.alloca(lty, name="for.i")
        b.store(ir.Constant(lty, 0), k_slot)
        b.store(start, counter)
        head = self.func.append_basic_block("for.cond")
        body = self.func.append_basic_block("for.body")
        incr = self.func.append_basic_block("for.incr")
        orelse = self.func.append_basic_block("for.else")
        end = self.func.append_basic_block("for.end")
        b.branch(head)
        b.position_at_end(head)
        b.cbranch(b.icmp_unsigned("<", b.load(k_slot), count), body, orelse)
        b.position_at_end(body)
        i = b.load(counter)
        if step_const is not None and step_const < 0 and ity.signed:
            # i > stop here: lets LLVM drop the negative-index wrap in ``range(n - 1, -1, -1)``
            # (a rising i gets the same from its nsw increment; an assume there would only
            # keep loops alive that LLVM could otherwise delete)
            b.call(self.m.declare("llvm.assume", ir.FunctionType(ir.VoidType(), [I1])),
                   [b.icmp_signed(">", i, stop)])
        val, vt = item(i)
        self.assign(s.target, val, vt)
        self.loops.append((incr, end))
        self.block(s.body)
        self.loops.pop()
        if not b.block.is_terminated:
            b.branch(incr)
        b.position_at_end(incr)
        k_next = b.add(b.load(k_slot), ir.Constant(lty, 1))
        k_next.flags.append("nuw")
        b.store(k_next, k_slot)
        i_next = b.add(b.load(counter), step)
        if ity.signed:
            i_next.flags.append("nsw")
        elif step_const is None or step_const > 0:     # an unsigned i only grows then
            i_next.flags.append("nuw")
        b.store(i_next, counter)
        b.branch(head)
        b.position_at_end(orelse)
        self.block(s.orelse)
        if not b.block.is_terminated:
            b.branch(end)
        b.position_at_end(end)

    # ---- expressions --------------------------------------------------------------------
    def expr(self, node):
        """The LLVM value of ``node`` (None for compile-time-only values)."""
        t = self.ty(node)
        if node in self.tf.constvals and not isinstance(t, PseudoType):
            return self.constant(self.tf.constvals[node], t, node)
        if isinstance(t, PseudoType) and not isinstance(node, ast.Call):
            return None
        return getattr(self, "e_" + type(node).__name__)(node)

    def constant(self, value, t, node):
        if isinstance(t, T.Array):
            if not isinstance(value, np.ndarray):     # a captured device array
                return LG.device_global_array(self, value, t)
            return LA.const_global_array(self, value, t)
        if isinstance(t, T.NoneType):
            return None
        return const(t, value)

    def e_Constant(self, node):
        return None

    def e_Name(self, node):
        slot = self.vars.get(node.id)
        if slot is None:
            info = self.tf.info.get(node)
            if isinstance(info, SpecialRegister):
                return LC.sreg(self, info.register, info.axis)
            raise self.error(f"name '{node.id}' has no value here", node)
        return self.b.load(slot)

    def e_Attribute(self, node):
        info = self.tf.info.get(node)
        if isinstance(info, SpecialRegister):
            return LC.sreg(self, info.register, info.axis)
        base_t = self.ty(node.value)
        if isinstance(base_t, T.Array):
            return LA.array_attr(self, self.expr(node.value), base_t, node.attr, self.ty(node))
        if isinstance(base_t, rules.ArrayCTypes):       # arr.ctypes.data
            return LA.ctypes_data(self, self.expr(node.value.value))
        if isinstance(base_t, T.Record):
            return LA.load_field(self, self.expr(node.value), base_t, node.attr)
        if isinstance(base_t, (T.EnumMember, T.IntEnumMember)):   # .value: the member itself
            return self.expr(node.value)
        if isinstance(base_t, T.Complex):
            return self.b.extract_value(self.expr(node.value), 0 if node.attr == "real" else 1)
        if isinstance(base_t, (T.NamedTuple, T.NamedUniTuple)) and node.attr in base_t.fields:
            return self.b.extract_value(self.expr(node.value), base_t.fields.index(node.attr))
        if rules.is_number(base_t) and node.attr in ("real", "imag"):
            v = self.expr(node.value)
            return v if node.attr == "real" else const(base_t, 0)
        raise self.error(f"attribute '{node.attr}' cannot be lowered", node)

    def e_Subscript(self, node):
        return LA.load_subscript(self, node)

    def e_Tuple(self, node):
        t = self.ty(node)
        out = ir.Constant(ltype(t), ir.Undefined)
        for i, (e, et) in enumerate(zip(node.elts, t.types)):
            v = cast(self.b, self.expr(e), self.ty(e), et)
            out = self.b.insert_value(out, v, i)
        return out

    def e_BinOp(self, node):
        lt, rt = self.ty(node.left), self.ty(node.right)
        op = LO.BINOPS[type(node.op)]
        if isinstance(lt, (T.UniTuple, T.Tuple)):
            return LO.tuple_concat(self, self.expr(node.left), lt, self.expr(node.right), rt,
                                   self.ty(node))
        return LO.binop(self, op, self.expr(node.left), lt, self.expr(node.right), rt,
                        self.ty(node), node)

    def e_UnaryOp(self, node):
        return LO.unary(self, node)

    def e_Compare(self, node):
        return LO.compare(self, node)

    def e_BoolOp(self, node):
        return LO.boolop(self, node)

    def e_IfExp(self, node):
        t = self.ty(node)
        c = self.cond(node.test)
        then = self.func.append_basic_block("ifexp.then")
        other = self.func.append_basic_block("ifexp.else")
        end = self.func.append_basic_block("ifexp.end")
        self.b.cbranch(c, then, other)
        self.b.position_at_end(then)
        a = cast(self.b, self.expr(node.body), self.ty(node.body), t)
        then_end = self.b.block
        self.b.branch(end)
        self.b.position_at_end(other)
        o = cast(self.b, self.expr(node.orelse), self.ty(node.orelse), t)
        other_end = self.b.block
        self.b.branch(end)
        self.b.position_at_end(end)
        phi = self.b.phi(ltype(t))
        phi.add_incoming(a, then_end)
        phi.add_incoming(o, other_end)
        return phi

    def e_Call(self, node):
        return LC.call(self, node)



class _Inlined(FunctionLowerer):
    """A device function lowered into its caller's function: its locals are allocas of the
    caller's entry block, each ``return`` stores the result and branches to the block after
    the call.  Its code keeps the caller's source location (the call's line)."""

    def __init__(self, outer, tf):
        self.m = outer.m
        self.tf = tf
        self.func = outer.func
        self.entry = outer.entry
        self.b = outer.b
        self.vars = {}
        self.loops = []
        self.ret_block = None
        # one function to the GPU: a wait_group here also fences the caller's accumulators
        self.wgmma_accumulators = outer.wgmma_accumulators
        rt = tf.return_type
        self.result = None if rt is T.void else self.alloca(ltype(rt), name="inlined.result")
        self.after = self.func.append_basic_block("inlined.end")

    def run(self, argvals):
        tf, b = self.tf, self.b
        for name, t in tf.vartypes.items():
            if t is None or isinstance(t, PseudoType):
                continue
            self.vars[name] = self.alloca(ltype(t), name=name)
        for name, t, v in zip(tf.fsrc.argnames, tf.argtypes, argvals):
            if isinstance(t, PseudoType):
                continue
            b.store(cast(b, v, t, tf.vartypes[name]), self.vars[name])
        self.block(tf.fsrc.node.body)
        if not b.block.is_terminated:
            if tf.return_type is T.void:
                self.emit_return(None)
            else:
                b.unreachable()
        b.position_at_end(self.after)
        return None if self.result is None else b.load(self.result)

    def emit_return(self, value):
        if value is not None:
            self.b.store(value, self.result)
        self.b.branch(self.after)
