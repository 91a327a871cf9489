"""Type inference over a kernel's ``ast`` (Numba's rules), iterated to a fixed point.

Each local variable has one type: the unification of every value assigned to it
(ARCHITECTURE.md "Compiler notes").  The typer walks the whole function repeatedly until no
variable's type changes; each pass records a type for every expression node.  Names that are
not local resolve, at compile time, to the function's closure, globals and builtins; what they
name is recognised by identity (``cuda.threadIdx``, ``math.sqrt``, ``np.float32`` …).

Output (``TypedFunction``): ``typemap`` {ast expr: type}, ``vartypes`` {name: type},
``info`` {ast node: (key, data)} telling the lowering what a call or attribute is,
``constvals`` {ast node: Python value} for compile-time constants used as runtime values,
``return_type``, ``callees`` (typed device functions) and the memory each kernel needs.
"""
import ast

import numpy as np

from .. import types as T
from ..numba_types import numba_jit_function
from .calls import recognised as calls
from . import enums, indexing, rules, scopes
from .callkinds import CallKind
from .closures import define
from .const_types import CONST_LIMIT, STATIC_SHARED_LIMIT
from .errors import CompileError, TypingError, UninferableType
from .exceptions import type_assert, type_raise
from .source import FunctionSource
from .indexing import nested_store_ok
from .nodeinfo import AugAssign, Iteration
from .versions import split_versions, source_name
from .rules import ArrayCTypes, BoundMethod, Func, Global, PseudoType, RangeType

__all__ = ["TypedFunction", "CompileEnv", "infer", "STATIC_SHARED_LIMIT", "CONST_LIMIT"]

_MAX_PASSES = 50
# specialisations of one Python function typed inside each other (f(int) calling f(float)...)
_MAX_NESTED_SPECIALISATIONS = 16


class CompileEnv:
    """State shared by a kernel and the device functions it calls: typed functions cached by
    ``(pyfunc, argtypes)``, the stack of ``(key, TypedFunction)`` being typed (a recursive
    call finds its callee there, :func:`infer`) and the
    ``link=`` code of the device functions called (``linked``, linked with the kernel) and
    the functions the typer generated (``generated``: NumPy ufunc loops, by operand types,
    so that each is typed once per compile)."""

    def __init__(self, debug=False):
        self.typed = {}
        self.stack = []
        self.debug = bool(debug)    # jit(debug=True): assertions and division checks
        self.linked = []
        self.generated = {}


def _param_constant(t):
    """``(True, value)`` when a parameter of type ``t`` has one value known at compile time
    (an ``IntegerLiteral``, a tuple of them, a cast such as ``uint32`` passed as a dtype, a
    compile-time object), else ``(False, None)``."""
    if isinstance(t, T.IntegerLiteral):
        return True, (bool(t.value) if t.base is T.boolean else t.value)
    if isinstance(t, (T.UniTuple, T.Tuple)) and t.types and \
            all(isinstance(e, T.IntegerLiteral) for e in t.types):
        return True, tuple(e.value for e in t.types)
    if isinstance(t, Func) and t.kind is CallKind.CAST:
        return True, t.data
    if isinstance(t, Global) and t.obj is not None:
        return True, t.obj
    return False, None


def _runtime_type(t):
    """The type a parameter of type ``t`` is passed as (literals as their base types)."""
    if isinstance(t, T.IntegerLiteral):
        return t.base
    if isinstance(t, (T.UniTuple, T.Tuple)) and any(isinstance(e, T.IntegerLiteral)
                                                    for e in t.types):
        return T.Tuple(tuple(_runtime_type(e) for e in t.types))
    return t


class TypedFunction:
    """A function typed for one tuple of argument types (see the module docstring)."""

    def __init__(self, fsrc, argtypes, kernel):
        self.fsrc = fsrc
        # an IntegerLiteral argument (or a tuple of them) is passed as its base type; its
        # value is a compile-time constant of this specialisation, as is the object of a
        # compile-time argument (a dtype): literal_args {parameter name: value}
        self.literal_args = {}
        for n, t in zip(fsrc.argnames, argtypes):
            ok, v = _param_constant(t)
            if ok:
                self.literal_args[n] = v
        self.argtypes = tuple(_runtime_type(t) for t in argtypes)
        self.kernel = kernel
        self.typemap = {}
        self.vartypes = {}
        self.info = {}
        self.constvals = {}
        self.return_type = None
        self.callees = []
        self.shared_bytes = 0       # static shared bytes declared in this function's body
        self.const_bytes = 0
        self.uses_dynamic_shared = False
        self.shared_align = 0       # least alignment of its shared arrays (bytes): wmma, wgmma
        self.uses_wgmma = False     # Hopper warpgroup MMA: compiled for sm_90a only
        # a device function's jit(inline="always"): lowered into each caller;
        # jit(forceinline=True): its definition is alwaysinline (calls_device sets both)
        self.inline = False
        self.force_inline = False
        # recursion (numba's rules): ``recursive`` when a call inside its own typing reached
        # it (its return type so far answers that call); ``provisional`` when it was typed
        # inside the typing of a function that reached back to one still being typed (a
        # mutual recursion): its types may still change, so it is typed again, never cached
        self.recursive = False
        self.provisional = False
        # typed while such a function's return type was still unknown: some of its values
        # are untyped, so the checks of a finished typing wait for its next typing
        self.waiting = False

    def all_functions(self):
        """This function and every device function it reaches, each once (callees first)."""
        seen, order = set(), []

        def walk(tf):
            if id(tf) in seen:
                return
            seen.add(id(tf))
            for c in tf.callees:
                walk(c)
            order.append(tf)
        walk(self)
        return order


def infer(pyfunc, argtypes, kernel=True, env=None, source=None, return_type=None):
    """Type ``pyfunc`` for ``argtypes`` (cujit types).  ``source``: its FunctionSource when
    the function's owner keeps one (parsed here otherwise); ``return_type``: its declared
    return type (``jit(sig, device=True)``), None when inferred.

    Recursion (numba-cuda's rules): a call of a function for argument types it is being
    typed for gets that unfinished TypedFunction, whose return type so far (the declared
    one, or the unification of the returns typed until then, None before any) types the
    call; the typer iterates until that return type stops changing.  TypingError "cannot
    type infer runaway recursion" when no return gives it a type, "Return type of recursive
    function does not converge" when it keeps changing.  Raises TypingError /
    CompileError."""
    env = env or CompileEnv()
    key = (pyfunc, tuple(argtypes))
    hit = env.typed.get(key)
    if hit is not None:
        return hit
    fsrc = source if source is not None else FunctionSource.from_pyfunc(pyfunc)
    a = fsrc.node.args
    if kernel and (a.vararg is not None or a.kwarg is not None or a.kwonlyargs):
        # defaults are filled in by the launch (Dispatcher._bind): the kernel takes them all
        raise TypingError("kernels cannot have *args, **kwargs or keyword-only arguments "
                          "(device functions can have *args)", fsrc.location(fsrc.node))
    if len(argtypes) != len(fsrc.argnames):
        raise TypingError(f"{fsrc.qualname}() takes {len(fsrc.argnames)} argument(s) "
                          f"({', '.join(fsrc.argnames)}) but {len(argtypes)} were given",
                          fsrc.location(fsrc.node))
    for depth, (k, typing) in enumerate(env.stack):
        if k == key:
            if typing.kernel:
                raise TypingError(f"kernel {fsrc.qualname} calls itself (a kernel called "
                                  "from device code cannot be recursive)",
                                  fsrc.location(fsrc.node))
            typing.recursive = True
            for _, inner in env.stack[depth + 1:]:
                inner.provisional = True
                inner.waiting = inner.waiting or typing.return_type is None
            return typing
    if sum(k[0] is pyfunc for k, _ in env.stack) >= _MAX_NESTED_SPECIALISATIONS:
        raise TypingError(f"cannot type infer runaway recursion: {fsrc.qualname} calls "
                          f"itself with argument types that keep changing (now "
                          f"{', '.join(map(str, argtypes))})", fsrc.location(fsrc.node))
    tf = TypedFunction(fsrc, argtypes, kernel)
    if return_type is not None and return_type is not T.none:
        tf.return_type = return_type
    env.stack.append((key, tf))
    try:
        _Typer(tf, env).run()
    finally:
        env.stack.pop()
    if tf.provisional:
        # typed with the unfinished return type of a function further out: typed again by
        # that function's next pass
        return tf
    env.typed[key] = tf
    if kernel:
        _check_limits(tf)
    return tf


def _check_limits(tf):
    funcs = tf.all_functions()
    shared = sum(f.shared_bytes for f in funcs)
    if shared > STATIC_SHARED_LIMIT:
        raise CompileError(
            f"shared memory: the kernel declares {shared} bytes of static shared memory; the "
            f"limit for static shared memory is {STATIC_SHARED_LIMIT} bytes (48 KiB). Use "
            "dynamic shared memory (shared.array(0, dtype) and the 4th launch-configuration "
            "value) for more", tf.fsrc.location(tf.fsrc.node))
    const = sum(f.const_bytes for f in funcs)
    if const > CONST_LIMIT:
        raise CompileError(
            f"constant memory: the kernel places {const} bytes in constant memory; constant "
            f"memory holds {CONST_LIMIT} bytes (64 KiB)", tf.fsrc.location(tf.fsrc.node))


class _Typer(scopes.ConstEval):
    def __init__(self, tf, env):
        self.tf = tf
        self.env = env
        self.fsrc = tf.fsrc
        self._scopes()
        # an ``if`` decided at compile time keeps only the branch taken (numba's dead-branch
        # pruning), then a name rebound to values that never meet is split into versions
        # (numba's SSA): this typing and every backend walk that tree (tf.fsrc.node)
        node = split_versions(scopes.prune_constant_ifs(tf.fsrc.node, self.static_truth))
        if node is not tf.fsrc.node:
            tf.fsrc = self.fsrc = tf.fsrc.with_node(node)
            self._scopes()
        self.changed = False
        self.returns = []
        self.pending = 0        # returns whose value is not typed yet (in this pass)
        self.unbound = []

    def _scopes(self):
        node = self.fsrc.node
        self.locals = scopes.local_names(node)
        self.const_locals = scopes.single_assignments(node, self.locals)
        self.stored = scopes.stored_names(node)
        self._const_cache = {}
        self._none_reads = scopes.none_test_operands(node)

    # ---- callees: the typing of calls (calls_device, closures) reaches back here ----------
    def infer_device(self, pyfunc, argtypes, source=None, return_type=None):
        """The TypedFunction of device function ``pyfunc`` for ``argtypes``, typed in this
        kernel's environment (cached; a recursive call gets the function being typed, see
        :func:`infer`); ``source``: its FunctionSource, kept by the device function object;
        ``return_type``: its declared return type, None when inferred."""
        return infer(pyfunc, argtypes, kernel=False, env=self.env, source=source,
                     return_type=return_type)

    def type_function(self, fsrc, argtypes):
        """Type ``fsrc`` (a FunctionSource, e.g. a closure's) as a device function for
        ``argtypes`` in this kernel's environment; returns its TypedFunction."""
        tf = TypedFunction(fsrc, argtypes, False)
        _Typer(tf, self.env).run()
        return tf

    # ---- driver -------------------------------------------------------------------------
    def run(self):
        tf = self.tf
        for name, t in zip(self.fsrc.argnames, tf.argtypes):
            tf.vartypes[name] = t
        body = self.fsrc.node.body
        for _ in range(_MAX_PASSES):
            self.changed = False
            self.returns = []
            self.pending = 0
            self.unbound = []
            tf.callees = []
            tf.shared_bytes = tf.const_bytes = 0
            tf.uses_dynamic_shared = False
            self.block(body)
            if tf.recursive:
                self._widen_recursive_return()
            if not self.changed:
                break
        else:  # pragma: no cover - types only widen, so this needs a pathological function
            raise TypingError("Return type of recursive function does not converge" if
                              tf.recursive else "type inference did not converge",
                              self.loc(self.fsrc.node))
        if tf.recursive and tf.return_type is None and not tf.waiting:
            raise TypingError(f"cannot type infer runaway recursion: no return of "
                              f"{self.fsrc.qualname} has a type that does not come from "
                              "calling itself", self.loc(self.fsrc.node))
        for node in () if tf.waiting else self.unbound:
            if tf.vartypes.get(node.id) is None:
                raise self.error(f"variable '{source_name(node.id)}' is used before it is "
                                 "assigned a "
                                 "value", node)
        self._finish_return()
        for name in self.locals:
            if name not in tf.vartypes:
                tf.vartypes[name] = None

    def _widen_recursive_return(self):
        """Unify the return type a recursive call sees with this pass's returns; a change
        types the recursive calls again (another pass)."""
        tf = self.tf
        rt = tf.return_type
        for n, t in self.returns:
            if t is None:
                t = T.void      # ``return`` / ``return None``: the call has no value
            u = t if rt is None else rt if rt == t else rules.unify(rt, t)
            if u is None:
                raise TypingError(f"Return type of recursive function does not converge: "
                                  f"{rt} and {t} cannot be unified", self.loc(n))
            rt = u
        if rt is None and not self.pending:
            rt = T.void         # no return has a value: the calls have none either
        if rt is not None and rt != tf.return_type:
            tf.return_type = rt
            self.changed = True

    def _finish_return(self):
        tf = self.tf
        rets = self.returns
        valued = [(n, t) for n, t in rets if t is not None]
        if self.pending and not valued and tf.waiting:
            tf.return_type = None      # waits for the return type of a function further out
            return
        if tf.kernel:
            if valued:
                raise TypingError("a kernel cannot return a value (kernels return None; write "
                                  "results into an array argument)", self.loc(valued[0][0]))
            tf.return_type = T.void
            return
        if not valued:
            tf.return_type = T.void
            return
        if len(valued) != len(rets) or self._falls_off_end(self.fsrc.node.body):
            n = next((n for n, t in rets if t is None), self.fsrc.node)
            raise TypingError("a device function must return a value on every path or on none",
                              self.loc(n))
        rt = None
        for n, t in valued:
            u = rules.unify(rt, t)
            if u is None:
                raise TypingError(f"return types {rt} and {t} cannot be unified", self.loc(n))
            rt = u
        tf.return_type = rt

    def _falls_off_end(self, body):
        if not body:
            return True
        last = body[-1]
        if isinstance(last, (ast.Return, ast.Raise)):
            return False
        if isinstance(last, ast.If):
            return self._falls_off_end(last.body) or self._falls_off_end(last.orelse)
        if isinstance(last, ast.While) and scopes.is_true_const(last.test) \
                and not scopes.has_break(last):
            return False
        return True

    # ---- helpers ------------------------------------------------------------------------
    def loc(self, node):
        return self.fsrc.location(node)

    def error(self, msg, node):
        return TypingError(msg, self.loc(node))

    def set_var(self, name, t, node):
        if isinstance(t, (PseudoType,)) and not isinstance(t, (Global, Func)):
            raise self.error(f"cannot assign {t} to variable '{name}'", node)
        if t is T.void:
            raise self.error(f"cannot assign a value of type none to '{name}'", node)
        old = self.tf.vartypes.get(name)
        if old is None:
            self.tf.vartypes[name] = t
            self.changed = True
            return
        if old is t or old == t:
            return
        new = rules.unify(old, t)
        if new is None:
            raise self.error(f"variable '{source_name(name)}' is given values of types {old} "
                             f"and {t}, which cannot be unified (a variable has one type in "
                             "a kernel)", node)
        if new is not old:
            self.tf.vartypes[name] = new
            self.changed = True

    def record(self, node, t):
        self.tf.typemap[node] = t
        return t

    # ---- statements ---------------------------------------------------------------------
    def block(self, stmts):
        for s in stmts:
            m = getattr(self, "s_" + type(s).__name__, None)
            if m is None:
                raise self.error(f"'{scopes.stmt_name(s)}' statements are not supported in "
                                 "kernels", s)
            m(s)

    def s_Pass(self, s):
        pass

    def s_Expr(self, s):
        if isinstance(s.value, ast.Constant) and isinstance(s.value.value, str):
            return      # docstring
        self.expr(s.value)

    def s_Assert(self, s):
        type_assert(self, s)    # without debug=True not compiled, as numba.cuda

    def s_Raise(self, s):
        type_raise(self, s)

    def s_FunctionDef(self, s):
        define(self, s)

    def s_Assign(self, s):
        try:
            vt = self.expr(s.value)
        except UninferableType as e:
            names = [t.id for t in s.targets if isinstance(t, ast.Name)]
            if not names:
                raise
            raise TypingError(f"Cannot infer the type of variable '{names[0]}': {e.msg}",
                              e.loc) from None
        for target in s.targets:
            self.assign(target, vt, s.value)

    def s_AnnAssign(self, s):
        if s.value is None:
            return
        self.assign(s.target, self.expr(s.value), s.value)

    def assign(self, target, vt, vnode):
        if isinstance(target, ast.Name):
            if vt is None:
                return
            self.set_var(target.id, vt, target)
        elif isinstance(target, (ast.Tuple, ast.List)):
            if vt is None:
                return
            if not isinstance(vt, (T.UniTuple, T.Tuple)):
                raise self.error(f"cannot unpack a value of type {vt}", target)
            if len(vt.types) != len(target.elts):
                raise self.error(f"cannot unpack {len(vt.types)} values into "
                                 f"{len(target.elts)} names", target)
            for elt, et in zip(target.elts, vt.types):
                self.assign(elt, et, vnode)
        elif isinstance(target, ast.Subscript):
            self.setitem(target, vt)
        elif isinstance(target, ast.Attribute):
            self.setattr_(target, vt)
        else:
            raise self.error(f"cannot assign to {type(target).__name__}", target)

    def s_AugAssign(self, s):
        op = _BINOPS.get(type(s.op))
        if isinstance(s.target, ast.Name):
            cur = self.expr(ast.copy_location(ast.Name(s.target.id, ast.Load()), s.target))
        elif isinstance(s.target, ast.Subscript):
            cur = self.getitem(s.target)
        elif isinstance(s.target, ast.Attribute):
            cur = self.attribute(s.target)
        else:
            raise self.error("unsupported augmented assignment target", s.target)
        rhs = self.expr(s.value)
        if cur is None or rhs is None:
            return
        res = self.binop_types(op, cur, rhs, s)
        self.tf.info[s] = AugAssign(cur, res)
        self.assign(s.target, res, s.value)

    def s_If(self, s):
        self.truth(s.test)
        self.block(s.body)
        self.block(s.orelse)

    def s_While(self, s):
        self.truth(s.test)
        self.block(s.body)
        self.block(s.orelse)

    def s_Break(self, s):
        pass

    s_Continue = s_Break

    def s_Return(self, s):
        t = None if s.value is None else self.expr(s.value)
        if s.value is not None and t is None:
            self.pending += 1
            return
        if t is T.void:
            t = None
        self.returns.append((s, t))

    def s_For(self, s):
        it = self.expr(s.iter)
        if it is None:
            return
        if isinstance(it, rules.IterType):
            elt = rules.element_type(it)
            self.tf.info[s] = Iteration(it)
        elif isinstance(it, RangeType):
            elt = it.dtype
        elif isinstance(it, T.Array) and it.ndim >= 1:
            elt = it.dtype if it.ndim == 1 else it.copy(ndim=it.ndim - 1, layout="A")
            self.tf.info[s] = Iteration(it)
        elif isinstance(it, T.UniTuple):
            elt = it.dtype
            self.tf.info[s] = Iteration(it)
        else:
            what = f"'{ast.unparse(s.iter):.60}' (a compile-time constant)" \
                if isinstance(it, Global) else f"a value of type {it}"
            raise self.error(f"cannot iterate over {what} in a kernel (use range(...), a 1-D "
                             "array or a homogeneous tuple of numbers)", s.iter)
        self.assign(s.target, elt, s.iter)
        self.block(s.body)
        self.block(s.orelse)

    def truth(self, node):
        t = self.expr(node)
        if t is None:
            return
        if not (rules.is_number(t) or isinstance(t, T.FP8)):
            # an FP8 value is true as bool(v) (cuda_fp8.hpp's operator bool)
            raise self.error(f"cannot use a value of type {t} as a condition", node)

    # ---- expressions --------------------------------------------------------------------
    def expr(self, node):
        m = getattr(self, "e_" + type(node).__name__, None)
        if m is None:
            raise self.error(f"'{type(node).__name__}' expressions are not supported in "
                             "kernels", node)
        return self.record(node, m(node))

    def e_Constant(self, node):
        v = node.value
        try:
            t, extra = calls.const_type(v)
        except (TypeError, ValueError) as e:
            # an int literal beyond uint64: a TypingError at its line, not a bare ValueError
            raise self.error(f"the constant {v!r:.60} cannot be used in a kernel: {e}",
                             node) from None
        if extra is not None:
            self.tf.info[node] = extra
        if isinstance(t, T.Type) and not isinstance(t, T.NoneType):
            self.tf.constvals[node] = v
        return t

    def e_Name(self, node):
        name = node.id
        if name in self.locals:
            t = self.tf.vartypes.get(name)
            if t is T.none and id(node) not in self._none_reads and \
                    name in self.fsrc.argnames and name not in self.stored:
                raise self.error(
                    f"parameter '{name}' of {self.fsrc.qualname} is None here (the value "
                    "passed, or its default), and None has no value at run time: test it "
                    f"with '{name} is None' / '{name} is not None' (decided when the "
                    "function is compiled, the branch not taken removed) or pass it on to a "
                    "device function; any other use is an error", node)
            if t is None and not any(a == name for a in self.fsrc.argnames):
                self.unbound.append(node)
                return None    # not assigned yet in this pass: typed on a later pass
            return t
        found, value = self.fsrc.resolve_global(name)
        if not found:
            raise self.error(f"NameError: name '{name}' is not defined", node)
        return self.typed_value(node, value)

    def typed_value(self, node, value):
        if numba_jit_function(value) is not None and getattr(value, "_can_compile", True) \
                is False:
            # numba.jit with explicit signatures compiles nothing else, the GPU included
            # (numba-cuda's CUDATargetContext.resolve_value_type; its wording)
            raise self.error(f"Untyped global name '{ast.unparse(node)}': using cpu function "
                             "on device but its compilation is disabled (it was jitted for "
                             "explicit signatures only)", node)
        try:
            t, extra = calls.const_type(value)
        except (TypeError, ValueError) as e:
            raise self.error(f"'{ast.unparse(node)}' cannot be used in a kernel: {e}",
                             node) from None
        if extra is not None:
            self.tf.info[node] = extra
        if isinstance(t, T.Type) and extra is None:
            self.tf.constvals[node] = value
            if isinstance(value, np.ndarray):
                self.tf.const_bytes += value.nbytes
        return t

    def e_Attribute(self, node):
        return self._no_string_value(self.attribute(node), node)

    def attribute(self, node):
        base = self.expr(node.value)
        if base is None:
            return None
        attr = node.attr
        if isinstance(base, Global):
            return calls.global_attr(self, node, base.obj, attr)
        if isinstance(base, T.Array):
            return indexing.array_attr(self, node, base, attr)
        if isinstance(base, ArrayCTypes):
            if attr == "data":
                return T.uint64
            raise self.error(f"arr.ctypes has only 'data' in kernels (the address of the "
                             f"first element), not '{attr}'", node)
        if isinstance(base, T.EnumMember) or (isinstance(base, T.IntEnumMember) and
                                              attr == "value"):
            return enums.type_attr(self, node, base, attr)
        if isinstance(base, T.Record):
            if attr in base.fields:
                ft = base.fields[attr][0]
                return T.Array(ft.dtype, ft.ndim, "C") if isinstance(ft, T.NestedArray) else ft
            raise self.error(f"record {base} has no field '{attr}' (fields: "
                             f"{', '.join(base.fields)})", node)
        if isinstance(base, T.Complex):
            if attr in ("real", "imag"):
                return base.underlying_float
            if attr == "conjugate":
                return BoundMethod(base, attr)
        if isinstance(base, (T.NamedTuple, T.NamedUniTuple)) and attr in base.fields:
            return base.types[base.fields.index(attr)]     # namedtuple field by name
        if rules.is_number(base) and attr in ("real", "imag"):
            return base if attr == "real" else base
        if rules.is_number(base) and attr == "conjugate":
            return BoundMethod(base, attr)
        if rules.is_int(base) and attr == "bit_count":
            return BoundMethod(base, attr)
        raise self.error(f"a value of type {base} has no attribute '{attr}' in kernels", node)

    def setattr_(self, target, vt):
        base = self.expr(target.value)
        if base is None or vt is None:
            return
        if isinstance(base, T.Record) and target.attr in base.fields:
            indexing.check_record_writable(self, target.value, target)
            ft = base.fields[target.attr][0]
            if isinstance(ft, T.NestedArray) and nested_store_ok(
                    T.Array(ft.dtype, ft.ndim, "C"), vt):
                self.record(target, T.Array(ft.dtype, ft.ndim, "C"))
                return
            if isinstance(ft, T.CharSeq):
                indexing.check_charseq_store(self, target, ft, vt)
                self.record(target, ft)
                return
            if not rules.is_number(ft) or not rules.is_number(vt):
                raise self.error(f"cannot store a {vt} into record field '{target.attr}' of "
                                 f"type {ft}", target)
            self.record(target, ft)
            return
        raise self.error(f"cannot assign to attribute '{target.attr}' of a value of type "
                         f"{base}", target)

    def e_Subscript(self, node):
        return self._no_string_value(self.getitem(node), node)

    def _no_string_value(self, t, node):
        """``t``, the type of a value read by ``node``; TypingError for an element of a
        string or bytes array (kernels only store string constants into them)."""
        if isinstance(t, T.CharSeq):
            raise self.error(f"reading an element of type {t} (a string or bytes array) is "
                             "not supported in kernels; they can store string constants "
                             "into such elements", node)
        return t

    def getitem(self, node):
        return indexing.getitem(self, node)

    def setitem(self, target, vt):
        indexing.setitem(self, target, vt)

    def e_Tuple(self, node):
        ts = [self.expr(e) for e in node.elts]
        if any(t is None for t in ts):
            return None
        for e, t in zip(node.elts, ts):
            if isinstance(t, PseudoType):
                return Global(None)   # a compile-time tuple (shapes): only used as a constant
        return T.Tuple(tuple(ts))

    def e_BinOp(self, node):
        a = self.expr(node.left)
        b = self.expr(node.right)
        if a is None or b is None:
            return None
        op = _BINOPS.get(type(node.op))
        return self.binop_types(op, a, b, node)

    def binop_types(self, op, a, b, node):
        if op is None:
            raise self.error(f"operator {type(node.op).__name__} is not supported", node)
        if isinstance(a, (T.UniTuple, T.Tuple)) and isinstance(b, (T.UniTuple, T.Tuple)) \
                and op == "+":
            return T.Tuple(a.types + b.types)
        r = rules.binop_type(op, a, b)
        if r is None:
            raise self.error(f"unsupported operand types for {op}: {a} and {b}", node)
        return r

    def e_UnaryOp(self, node):
        a = self.expr(node.operand)
        if a is None:
            return None
        op = _UNOPS[type(node.op)]
        r = rules.unary_type(op, a)
        if r is None:
            raise self.error(f"unsupported operand type for unary {op}: {a}", node)
        return r

    def e_BoolOp(self, node):
        ts = [self.expr(v) for v in node.values]
        if any(t is None for t in ts):
            return None
        r = None
        for v, t in zip(node.values, ts):
            if not rules.is_number(t):
                raise self.error(f"cannot use a value of type {t} in and/or", v)
            r = rules.unify(r, t)
        return r

    def e_Compare(self, node):
        ts = [self.expr(node.left)] + [self.expr(c) for c in node.comparators]
        if any(t is None for t in ts):
            return None
        for op, a, b, n in zip(node.ops, ts, ts[1:], node.comparators):
            if enums.involves_enum(op, a, b):
                enums.type_compare(self, op, a, b, n)
                continue
            if isinstance(op, (ast.Is, ast.IsNot)):
                self._identity(node, op, a, b, n)
                continue
            if isinstance(op, (ast.In, ast.NotIn)):
                from .containment import type_in
                type_in(self, a, b, n)
                continue
            if _constant_strings(a, b):
                self._compare_constants(node, op, a.obj, b.obj, n)
                continue
            if rules.is_datetime(a) or rules.is_datetime(b):
                if type(a) is not type(b) or rules.common_time_unit(a.unit, b.unit) is None:
                    raise self.error(f"cannot compare {a} with {b} (a datetime64 compares "
                                     "with a datetime64, a timedelta64 with a timedelta64, "
                                     "of units NumPy can convert)", n)
                continue
            if isinstance(a, T.BFloat16) or isinstance(b, T.BFloat16):
                if a is not b or isinstance(op, (ast.Is, ast.IsNot)):
                    raise self.error(f"cannot compare {a} with {b} (bfloat16 compares with "
                                     "bfloat16: convert with bfloat16(x))", n)
                continue
            if not (rules.is_number(a) and rules.is_number(b)):
                raise self.error(f"cannot compare {a} with {b}", n)
            if (rules.is_complex(a) or rules.is_complex(b)) and \
                    not isinstance(op, (ast.Eq, ast.NotEq)):
                raise self.error("complex numbers can only be compared with == and !=", n)
        return T.boolean

    def _compare_constants(self, node, op, x, y, n):
        """``x <op> y`` of two string constants (a str argument of a device function against
        a literal, numba's StringLiteral comparisons): decided now, a constant of the whole
        comparison (not chained with others).  TypingError for an order comparison of str
        with bytes, as Python's TypeError."""
        if len(node.ops) != 1:
            raise self.error("comparisons of string constants cannot be chained in kernels",
                             n)
        fn = {ast.Eq: lambda p, q: p == q, ast.NotEq: lambda p, q: p != q,
              ast.Lt: lambda p, q: p < q, ast.LtE: lambda p, q: p <= q,
              ast.Gt: lambda p, q: p > q, ast.GtE: lambda p, q: p >= q}.get(type(op))
        if fn is None:
            raise self.error(f"'{type(op).__name__}' of string constants is not supported in "
                             "kernels", n)
        try:
            self.tf.constvals[node] = bool(fn(x, y))
        except TypeError as e:
            raise self.error(f"cannot compare {x!r} with {y!r}: {e}", n) from None

    def _identity(self, node, op, a, b, n):
        """``a is b`` / ``a is not b`` as numba types it (``generic_is``): values of
        different types are never identical (a constant: ``x is None`` of an array is
        False), ``None is None`` is True, and immutable values of one type compare with
        ``==`` (the backends lower ``is`` of scalars as ``==``).  Arrays and other mutable
        values have no identity here: a TypingError."""
        is_not = isinstance(op, ast.IsNot)
        if len(node.ops) != 1:
            raise self.error("'is' / 'is not' cannot be chained with other comparisons in "
                             "kernels", n)
        if a is not b or a is T.none:
            same = a is b       # None is None; values of different types never
            self.tf.constvals[node] = same != is_not
            return
        if isinstance(a, T.Scalar) and not isinstance(a, T.BFloat16):
            return
        raise self.error(f"'is' / 'is not' of two values of type {a} is not supported in "
                         "kernels (numba gives identity only to immutable values: compare "
                         "numbers with == and !=, and test None with 'is None')", n)

    def e_IfExp(self, node):
        self.truth(node.test)
        a, b = self.expr(node.body), self.expr(node.orelse)
        if a is None or b is None:
            return a or b
        r = rules.unify(a, b)
        if r is None:
            raise self.error(f"the branches of a conditional expression have types {a} and "
                             f"{b}, which cannot be unified", node)
        return r

    def e_Call(self, node):
        return calls.type_call(self, node)

    def e_JoinedStr(self, node):
        raise self.error("f-strings are not supported in kernels (print the values instead)",
                         node)

def _constant_strings(a, b):
    return all(isinstance(t, Global) and isinstance(t.obj, (str, bytes)) for t in (a, b))


_BINOPS = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.FloorDiv: "//",
           ast.Mod: "%", ast.Pow: "**", ast.BitAnd: "&", ast.BitOr: "|", ast.BitXor: "^",
           ast.LShift: "<<", ast.RShift: ">>"}
_UNOPS = {ast.USub: "-", ast.UAdd: "+", ast.Invert: "~", ast.Not: "not"}
