"""Kernel source → ``ast`` plus the environment its names resolve in.

``FunctionSource.from_pyfunc(f)`` reads ``f``'s source with ``inspect.getsource``, parses the
``def`` with ``ast`` (stable across Python versions, and every node has a line and column for
error messages — ARCHITECTURE.md "Compiler notes"), and keeps ``f.__globals__`` and the closure
cells so that the typer resolves ``cuda.threadIdx``, ``math.sqrt``, ``np.float32`` … by the
identity of the object they name.  No module-level cache keeps a function's source: its owner
(the ``@jit`` dispatcher or device function, :class:`SourceOwner`) keeps it, so it dies with
the owner; only each file's parse is shared (:func:`_from_module_file`).
A function without readable source (the REPL, ``python -c``, stdin, ``exec``) gets the
same tree rebuilt from its bytecode (:mod:`.bytecode`).
"""
import ast
import copy
import inspect
import linecache
import operator
import textwrap

import numpy as np

from .. import types as T
from .bytecode import decompile
from .errors import SourceLocation, TypingError
from .loopvars import split_loop_variables
from .unroll import unroll_literal_loops

__all__ = ["FunctionSource", "DeviceFunctionLike", "KernelLike", "SourceOwner"]


class DeviceFunctionLike:
    """What the front end calls as a device function: an object with ``_cujit_device_function``
    true and a ``py_func`` (the plain Python function it types and compiles).  The marker
    belongs to the front end, which reads it (``const_types.const_type``); the dispatcher's
    ``DeviceFunction`` inherits it."""
    __slots__ = ()
    _cujit_device_function = True


class KernelLike:
    """What the front end calls as a kernel compiled as a device function (numba-cuda's
    ``compile_device``): an object with ``_cujit_kernel`` true, a ``py_func`` and
    ``targetoptions``; the dispatcher's ``Dispatcher`` inherits it.  A call of it from a
    kernel or device function is typed for the call's argument types and may return a
    value; launched as a kernel it must return None."""
    __slots__ = ()
    _cujit_kernel = True


class SourceOwner:
    """What owns a jitted function's parsed source: an object with ``py_func`` (the
    dispatcher, a device function).  :meth:`source` parses ``py_func`` once and keeps the
    :class:`FunctionSource` on this object, so the source, the module globals and closure
    values it refers to live exactly as long as the owner (nothing else caches them)."""
    __slots__ = ()

    def source(self):
        """The :class:`FunctionSource` of ``self.py_func`` (parsed on the first call).
        Raises TypingError as :meth:`FunctionSource.from_pyfunc` does."""
        fsrc = self.__dict__.get("_fsrc")
        if fsrc is None:
            fsrc = self.__dict__["_fsrc"] = FunctionSource.from_pyfunc(self.py_func)
        return fsrc


def _array_ctor(func):
    """True for ``….local.array`` / ``….shared.array`` / ``local.array`` as written."""
    if not (isinstance(func, ast.Attribute) and func.attr == "array"):
        return False
    v = func.value
    return (isinstance(v, ast.Attribute) and v.attr in ("local", "shared")) or \
        (isinstance(v, ast.Name) and v.id in ("local", "shared"))


_FOLDED = {ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b,
           ast.Mult: lambda a, b: a * b,
           ast.LShift: lambda a, b: a << b if 0 <= b <= 128 else None,
           ast.Pow: lambda a, b: a ** b if 0 <= b <= 128 else None}


def _literal_int(node):
    """The value of an expression of int literals (``+ - * << **``, unary minus), or None."""
    if isinstance(node, ast.Constant):
        v = node.value
        return v if isinstance(v, int) and not isinstance(v, bool) else None
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        v = _literal_int(node.operand)
        return None if v is None else -v
    if isinstance(node, ast.BinOp) and type(node.op) in _FOLDED:
        a, b = _literal_int(node.left), _literal_int(node.right)
        if a is None or b is None:
            return None
        return _FOLDED[type(node.op)](a, b)
    return None


class _FoldIntLiterals(ast.NodeTransformer):
    """Expressions of int literals become one constant, as CPython's compiler folds them
    before Numba reads the bytecode (and before cujit's bytecode front end does): ``2**63`` is
    then a uint64 literal, as in numba, and ``2**70`` a TypingError, instead of an int64
    computation that wraps silently.  Only the outermost expression is folded."""

    def _fold(self, node):
        v = _literal_int(node)
        if v is None:
            return self.generic_visit(node)
        return ast.copy_location(ast.Constant(value=v), node)

    visit_BinOp = visit_UnaryOp = _fold


def _fold_int_literals(node):
    """``node``, or a folded copy of it (the parsed file is shared) when it holds an
    expression of int literals (:class:`_FoldIntLiterals`)."""
    if not any(isinstance(n, (ast.BinOp, ast.UnaryOp)) and _literal_int(n) is not None
               for n in ast.walk(node)):
        return node
    return _FoldIntLiterals().visit(copy.deepcopy(node))


class FunctionSource:
    """One Python function ready for typing.

    ``pyfunc``, ``node`` (the ``ast.FunctionDef``), ``filename``, ``firstlineno`` (line of the
    ``def`` in the file), ``lines`` (the file's lines), ``globals`` (dict), ``closure``
    ({name: value}), ``argnames`` (list of str), ``name``, ``qualname``, ``line_offset``
    (lines between the start of the parsed source and the ``def``: add it to an ast line).
    """

    def sizing_params(self):
        """Indices of the parameters named in the shape of a ``local.array`` /
        ``shared.array`` call of this function's body (as written: ``cuda.local.array(n,
        float32)``, ``shared.array((n, 4), …)``) and never assigned there: a kernel is
        specialised on their values, so the shape is known when it is compiled (a cujit
        extension; numba #6549).  A parameter read only through an attribute (``x.shape[0]``,
        ``x.size``) is not one.  A frozenset, computed once."""
        got = self.__dict__.get("_sizing")
        if got is None:
            names = {a: i for i, a in enumerate(self.argnames)}
            stored, used = set(), set()
            for n in ast.walk(self.node):
                if isinstance(n, ast.Name) and isinstance(n.ctx, (ast.Store, ast.Del)):
                    stored.add(n.id)
                elif isinstance(n, ast.Call) and _array_ctor(n.func):
                    shape = n.args[0] if n.args else next(
                        (k.value for k in n.keywords if k.arg == "shape"), None)
                    if shape is not None:
                        # ``x.shape[0]`` reads an array at run time: not a sizing value
                        # (the typer says so at the call, see calls._shape_value)
                        attr = {id(m.value) for m in ast.walk(shape)
                                if isinstance(m, ast.Attribute)}
                        used.update(m.id for m in ast.walk(shape)
                                    if isinstance(m, ast.Name) and id(m) not in attr)
            got = self.__dict__["_sizing"] = frozenset(
                names[u] for u in used - stored if u in names)
        return got

    def constant_params(self):
        """Names of the parameters this function's body uses where a compile-time constant
        is needed (as written: the shape or dtype of a ``local.array`` / ``shared.array``
        call, the argument of ``grid``/``gridsize``) or decides an ``if`` (``if flag:``,
        ``if not flag:``: the branch not taken is pruned), and never assigns.  A device function
        called with a constant there is typed for that value, as numba retries a call with
        literal argument types (numba.core.typing.templates, ``prefer_literal``).  A
        parameter passed on to a device function that uses its own parameter so counts too,
        to any depth (:meth:`_passed_to_constant`; numba raises ForceLiteralArg at every
        level).  A frozenset, computed once (each time for a function in a recursive cycle,
        which fails to type anyway)."""
        return self._constant_walk({self.pyfunc})[0]

    def _constant_walk(self, busy):
        """``(constant_params, complete)``; ``busy``: the Python functions whose walk is
        under way (a call of one is recursion, a typing error later: the walk stops there
        and the result, not complete, is not kept)."""
        got = self.__dict__.get("_constant")
        if got is not None:
            return got, True
        stored, used = set(), set()
        for n in ast.walk(self.node):
            if isinstance(n, ast.Name) and isinstance(n.ctx, (ast.Store, ast.Del)):
                stored.add(n.id)
            elif isinstance(n, ast.Call):
                f = n.func
                name = f.attr if isinstance(f, ast.Attribute) else \
                    f.id if isinstance(f, ast.Name) else None
                if _array_ctor(f) or name in ("grid", "gridsize"):
                    used.update(m.id for a in list(n.args) + [k.value for k in n.keywords]
                                for m in ast.walk(a) if isinstance(m, ast.Name))
            elif isinstance(n, ast.If):
                # ``if flag:`` / ``if not flag:``: decided when the value is known
                t = n.test.operand if isinstance(n.test, ast.UnaryOp) and \
                    isinstance(n.test.op, ast.Not) else n.test
                if isinstance(t, ast.Name):
                    used.add(t.id)
        complete = True
        for n in ast.walk(self.node):
            if isinstance(n, ast.Call):
                names, done = self._passed_to_constant(n, busy)
                used.update(names)
                complete = complete and done
        got = frozenset(u for u in used - stored if u in self.argnames)
        if complete:
            self.__dict__["_constant"] = got
        return got, complete

    def _callee(self, func):
        """The device function (or kernel called as one) that call target ``func`` (an ast
        ``Name`` or ``a.b`` of this function's globals and closure) names, or None."""
        if isinstance(func, ast.Name):
            ok, v = self.resolve_global(func.id)
        elif isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
            ok, v = self.resolve_global(func.value.id)
            v = getattr(v, func.attr, None) if ok else None
        else:
            return None
        if not (getattr(v, "_cujit_device_function", False) or
                getattr(v, "_cujit_kernel", False)) or getattr(v, "py_func", None) is None:
            return None
        return v

    def _passed_to_constant(self, call, busy):
        """``(names, complete)``: the names read by the arguments of ``call`` that go to a
        parameter the callee (a device function) uses as a compile-time constant (this
        function is then typed for the constant its own call site passes, so the callee
        gets a constant too); ``busy`` as :meth:`_constant_walk`."""
        dev = self._callee(call.func)
        if dev is None:
            return (), True
        if dev.py_func in busy:
            return (), False
        try:
            src = dev.source() if isinstance(dev, SourceOwner) else \
                FunctionSource.from_pyfunc(dev.py_func)
        except TypingError:
            return (), True     # the call's typing reports it
        wanted, complete = src._constant_walk(busy | {dev.py_func})
        if not wanted:
            return (), complete
        params = src.argnames
        args = []
        for i, a in enumerate(call.args):
            if isinstance(a, ast.Starred):
                break           # the positions after it are not known from the syntax
            if i < len(params) and params[i] in wanted:
                args.append(a)
        args += [k.value for k in call.keywords if k.arg in wanted]
        return [m.id for a in args for m in ast.walk(a) if isinstance(m, ast.Name)], complete

    def with_node(self, node):
        """A copy of this source whose syntax tree is ``node`` (the typer's tree of one
        specialisation, with its decided ``if`` statements pruned); the parsed file stays
        shared."""
        other = copy.copy(self)
        for cached in ("_sizing", "_constant"):      # computed from the tree
            other.__dict__.pop(cached, None)
        other.node = node
        return other

    def literal_argtypes(self, argtypes, values):
        """``argtypes`` (tuple of cujit types of the launch ``values``) with each
        :meth:`sizing_params` parameter's type made ``IntegerLiteral(type, value)``, the key
        of a specialisation for those values.  Raises TypeError naming the parameter when its
        value is not an integer (bools and floats included)."""
        sizing = self.sizing_params()
        if not sizing:
            return argtypes
        out = list(argtypes)
        for i in sizing:
            v, t = values[i], argtypes[i]
            if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, np.integer)) or \
                    not isinstance(t, T.Integer):
                raise TypeError(f"argument {i} ({self.argnames[i]!r}) of kernel "
                                f"{self.qualname} gives the shape of a local or shared array, "
                                f"so it must be an integer; got {v!r} ({type(v).__name__})")
            out[i] = T.IntegerLiteral(t, int(v))
        return tuple(out)

    def __init__(self, pyfunc, node, filename, firstlineno, lines, line_offset, col_offset):
        self.pyfunc = pyfunc
        self.node = node
        self.filename = filename
        self.firstlineno = firstlineno
        self.lines = lines
        self.line_offset = line_offset
        self._col_offset = col_offset
        self.globals = pyfunc.__globals__
        code = pyfunc.__code__
        cells = pyfunc.__closure__ or ()
        self.closure = {}
        for name, cell in zip(code.co_freevars, cells):
            try:
                self.closure[name] = cell.cell_contents
            except ValueError:      # an empty cell: the name is not bound yet
                pass
        self.argnames = [a.arg for a in node.args.args]
        if node.args.vararg is not None:        # device functions: *args is one tuple
            self.argnames.append(node.args.vararg.arg)
        self.name = pyfunc.__name__
        self.qualname = getattr(pyfunc, "__qualname__", self.name)

    @classmethod
    def from_pyfunc(cls, pyfunc):
        """Parse ``pyfunc`` (a plain Python function).

        Raises TypingError when it is not a function, when it has no readable source and its
        bytecode holds constructs outside the kernel language (:mod:`.bytecode`), or when it
        uses ``**kwargs``/keyword-only/positional-only arguments (``*args`` and defaults are
        for device functions: see :mod:`.calls.device`).
        """
        if not inspect.isfunction(pyfunc):
            raise TypingError(f"a kernel must be a Python function, got {pyfunc!r}")
        code = pyfunc.__code__
        filename = code.co_filename
        # the file may have changed since linecache read it (importlib.reload, IPython's
        # autoreload): read it again when its size or time differs
        had = filename in linecache.cache
        linecache.checkcache(filename)
        changed = had and filename not in linecache.cache
        node, all_lines = _from_module_file(filename, code.co_firstlineno, pyfunc.__name__)
        # a changed file may hold other code than a function loaded before the change:
        # checked only then, since import hooks (pytest's assertion rewriting) make the
        # loaded bytecode differ from an unchanged source
        if node is not None and changed and not _is_source_of(node, code, filename):
            # the file was edited after the function was loaded: compile what Python runs
            self = cls._from_bytecode(pyfunc)
        elif node is not None:
            # the whole file was parsed: ast positions are file positions already
            self = cls(pyfunc, node, filename, code.co_firstlineno, all_lines, 0, 0)
        else:
            self = cls._from_inspect(pyfunc)
        self._check_signature()
        self.node = _fold_int_literals(split_loop_variables(
            unroll_literal_loops(self, _operator_calls_as_syntax(self))))
        return self

    @classmethod
    def _from_inspect(cls, pyfunc):
        """Fallback: the function's own source lines through ``inspect`` (dedented)."""
        code = pyfunc.__code__
        try:
            lines, firstlineno = inspect.getsourcelines(pyfunc)
        except (OSError, TypeError):
            return cls._from_bytecode(pyfunc)
        filename = inspect.getsourcefile(pyfunc) or code.co_filename
        col_offset = _indent_of(lines[0]) if lines else 0
        try:
            tree = ast.parse(textwrap.dedent("".join(lines)))
        except SyntaxError:
            # lines that are not the function's (a lambda inside an expression, a file
            # changed since): its bytecode is what runs
            return cls._from_bytecode(pyfunc)
        node = _find_def(tree, pyfunc.__name__)
        if node is None:
            return cls._from_bytecode(pyfunc)
        all_lines = linecache.getlines(filename)
        if len(all_lines) < firstlineno + len(lines) - 1:
            all_lines = [""] * (firstlineno - 1) + list(lines)
        return cls(pyfunc, node, filename, firstlineno, all_lines, firstlineno - 1, col_offset)

    @classmethod
    def _from_bytecode(cls, pyfunc):
        """No source to read (the REPL, ``python -c``, stdin, ``exec``): the tree rebuilt from
        the code object (:mod:`.bytecode`); its positions are the code object's lines."""
        code = pyfunc.__code__
        node = decompile(pyfunc)
        lines = linecache.getlines(code.co_filename)
        return cls(pyfunc, node, code.co_filename, code.co_firstlineno, lines, 0, 0)

    def _check_signature(self):
        a = self.node.args
        bad = None
        if a.kwarg:
            bad = "**kwargs"
        elif a.kwonlyargs:
            bad = "keyword-only arguments"
        elif getattr(a, "posonlyargs", None):
            bad = "positional-only arguments"
        if bad:
            raise TypingError(f"kernels and device functions cannot have {bad}",
                              self.location(self.node))

    def location(self, node):
        """The ``SourceLocation`` of an ast node of this function (file line, 0-based col)."""
        line = getattr(node, "lineno", None)
        if line is None:
            line, col = 1, 0
        else:
            col = getattr(node, "col_offset", 0) + self._col_offset
        fline = line + self.line_offset
        text = self.lines[fline - 1] if self.lines and 0 < fline <= len(self.lines) else None
        return SourceLocation(self.filename, fline, col, text)

    def resolve_global(self, name):
        """``(True, value)`` for a closure variable, global or builtin named ``name``, else
        ``(False, None)``."""
        if name in self.closure:
            return True, self.closure[name]
        g = self.globals
        if name in g:
            return True, g[name]
        b = g.get("__builtins__")
        b = b if isinstance(b, dict) else getattr(b, "__dict__", {})
        if name in b:
            return True, b[name]
        return False, None


# numba types ``operator.add(a, b)`` (or a captured ``op = operator.add``; numba-cuda's
# test_operator.py) as ``a + b``.  Rewriting such calls into the syntax gives both backends
# the one typing of the operator without a second path through typing and lowering.
_BINARY = {operator.add: ast.Add, operator.sub: ast.Sub, operator.mul: ast.Mult,
           operator.truediv: ast.Div, operator.floordiv: ast.FloorDiv, operator.mod: ast.Mod,
           operator.pow: ast.Pow, operator.lshift: ast.LShift, operator.rshift: ast.RShift,
           operator.and_: ast.BitAnd, operator.or_: ast.BitOr, operator.xor: ast.BitXor,
           # on the immutable scalars of a kernel the in-place forms return the new value
           operator.iadd: ast.Add, operator.isub: ast.Sub, operator.imul: ast.Mult,
           operator.itruediv: ast.Div, operator.ifloordiv: ast.FloorDiv, operator.imod: ast.Mod,
           operator.ipow: ast.Pow, operator.ilshift: ast.LShift, operator.irshift: ast.RShift,
           operator.iand: ast.BitAnd, operator.ior: ast.BitOr, operator.ixor: ast.BitXor}
_COMPARE = {operator.lt: ast.Lt, operator.le: ast.LtE, operator.gt: ast.Gt,
            operator.ge: ast.GtE, operator.eq: ast.Eq, operator.ne: ast.NotEq}
_UNARY = {operator.neg: ast.USub, operator.pos: ast.UAdd, operator.invert: ast.Invert,
          operator.not_: ast.Not}


def _operator_function(fsrc, func, local_names):
    """The ``operator`` module function that the callee expression ``func`` names (a global
    or closure variable not rebound in the function, or ``<module operator>.name``), else
    None."""
    if isinstance(func, ast.Name):
        if func.id in local_names:
            return None
        found, value = fsrc.resolve_global(func.id)
    elif isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and \
            func.value.id not in local_names:
        found, mod = fsrc.resolve_global(func.value.id)
        found = found and mod is operator
        value = getattr(operator, func.attr, None) if found else None
    else:
        return None
    if not found:
        return None
    try:
        known = value in _BINARY or value in _COMPARE or value in _UNARY or \
            value is operator.getitem
    except TypeError:           # an unhashable value
        return None
    return value if known else None


class _OperatorCalls(ast.NodeTransformer):
    def __init__(self, fsrc, local_names):
        self.fsrc = fsrc
        self.local_names = local_names

    def visit_Call(self, node):
        self.generic_visit(node)
        if node.keywords or any(isinstance(a, ast.Starred) for a in node.args):
            return node
        fn = _operator_function(self.fsrc, node.func, self.local_names)
        if fn is None:
            return node
        args = node.args
        if len(args) == 2 and fn in _BINARY:
            new = ast.BinOp(args[0], _BINARY[fn](), args[1])
        elif len(args) == 2 and fn in _COMPARE:
            new = ast.Compare(args[0], [_COMPARE[fn]()], [args[1]])
        elif len(args) == 1 and fn in _UNARY:
            new = ast.UnaryOp(_UNARY[fn](), args[0])
        elif len(args) == 2 and fn is operator.getitem:
            new = ast.Subscript(args[0], args[1], ast.Load())
        else:
            return node         # a wrong argument count: the typer's error names the call
        return ast.copy_location(new, node)


def _operator_calls_as_syntax(fsrc):
    """``fsrc.node``, or a copy of it (the parsed file is shared by closures of one code
    object, which may capture different operators) with ``operator`` calls as syntax."""
    node = fsrc.node
    local_names = {a.arg for a in ast.walk(node.args) if isinstance(a, ast.arg)}
    calls = False
    for n in ast.walk(node):
        if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load):
            local_names.add(n.id)
        elif isinstance(n, ast.Call):
            calls = True
    if not calls or not any(isinstance(n, ast.Call) and
                            _operator_function(fsrc, n.func, local_names) is not None
                            for n in ast.walk(node)):
        return node
    return _OperatorCalls(fsrc, local_names).visit(copy.deepcopy(node))


def _indent_of(line):
    return len(line) - len(line.lstrip())


# filename -> (its linecache lines, {(first line, name): FunctionDef}): one parse per source
# file, shared by every function defined in it; replaced when linecache reloads the file.
# Holds the file's syntax tree only, never a function, its globals or a typing.
_modules = {}


def _from_module_file(filename, firstlineno, name):
    """(FunctionDef, file lines) of the ``def name`` starting at ``firstlineno`` (its first
    decorator or the ``def``) in ``filename``, parsing the file once; (None, None) when the
    file cannot be read or parsed."""
    lines = linecache.getlines(filename)
    if not lines:
        return None, None
    key = filename
    hit = _modules.get(key)
    if hit is None or hit[0] is not lines:
        try:
            tree = ast.parse("".join(lines))
        except (SyntaxError, ValueError):
            return None, None
        index = {}
        for n in _defs(tree.body):
            first = min([n.lineno] + [d.lineno for d in n.decorator_list])
            index[(first, n.name)] = n
            index.setdefault((n.lineno, n.name), n)
        hit = (lines, index)
        _modules[key] = hit
    return hit[1].get((firstlineno, name)), lines


def _plain_consts(code):
    return tuple((type(c), c) for c in code.co_consts if not hasattr(c, "co_code"))


def _is_source_of(node, code, filename):
    """False when the ``def`` ``node`` read from ``filename`` does not compile to ``code``'s
    bytecode, names and constants (the file was edited after the function was loaded, and
    the source would compile other code than Python runs).  Checked for functions without
    free variables (a nested function's closure cells compile differently on their own);
    True for the others and when the def cannot be compiled alone."""
    if code.co_freevars:
        return True
    try:
        module = compile(ast.Module(body=[node], type_ignores=[]), filename, "exec",
                         dont_inherit=True)
    except (SyntaxError, ValueError, TypeError):
        return True
    compiled = next((c for c in module.co_consts
                     if hasattr(c, "co_code") and c.co_name == code.co_name), None)
    if compiled is None:
        return True
    return (compiled.co_code == code.co_code and compiled.co_names == code.co_names
            and compiled.co_varnames == code.co_varnames
            and _plain_consts(compiled) == _plain_consts(code))


def _defs(stmts):
    """Every (nested) function definition among ``stmts``, looking only at statements
    (much cheaper than ``ast.walk`` over every expression of a module)."""
    for st in stmts:
        if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield st
        for field in ("body", "orelse", "finalbody", "handlers"):
            sub = getattr(st, field, None)
            if sub:
                yield from _defs(sub)


def _find_def(tree, name):
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == name:
            return node
    return None
