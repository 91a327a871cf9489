"""Bytecode → ``ast``: the front end for functions whose source cannot be read.

A kernel typed at the REPL, passed with ``python -c`` or on stdin, or generated with ``exec``
has no file that ``inspect`` can read, but its code object holds everything the typer needs.
:func:`decompile` rebuilds the ``ast.FunctionDef`` of the subset of Python that kernels and
device functions are written in from ``dis`` (CPython 3.10–3.13), with every node placed at the
line (and, on 3.11+, the column) its instruction came from, so that the one typing gives the
same types, the same results and errors that name the line (ARCHITECTURE.md "Compiler notes":
"from bytecode where [the source] does not [exist] … decompile the bytecode into the same
``ast`` subset").

How: basic blocks from jump targets; the latch of a ``while`` loop (CPython repeats the test at
the bottom) is folded back onto the test at the top; loops from dominators (natural loops);
``if``/``else`` from post-dominators (the join of two branches); short-circuit conditions
(``and``/``or`` in a test) by reducing the graph of the blocks that only test; values that two
branches leave on the stack (``a if c else b``, ``a and b`` as values, chained comparisons)
become one expression at the join; stack entries are symbolic ``ast`` expressions.  A pass
over the result restores the forms the source had (``while test:``, ``assert``, ``x += 1``,
``a < b < c``, loop ``else``).  Anything not recognised raises :class:`TypingError` naming the
function, the line and the instruction — never a different program.
"""
import ast
import copy
import dis
import linecache
import sys

from .errors import SourceLocation, TypingError

__all__ = ["decompile"]

_PY = sys.version_info[:2]

_NOOPS = {"NOP", "RESUME", "PRECALL", "CACHE", "EXTENDED_ARG", "MAKE_CELL", "COPY_FREE_VARS",
          "TO_BOOL", "END_FOR", "NOT_TAKEN", "RESUME_CHECK"}
_JUMPS = {"JUMP_FORWARD", "JUMP_ABSOLUTE", "JUMP_BACKWARD", "JUMP_BACKWARD_NO_INTERRUPT",
          "JUMP", "JUMP_NO_INTERRUPT"}
_RETURNS = {"RETURN_VALUE", "RETURN_CONST"}
_BINOPS = {"+": ast.Add, "-": ast.Sub, "*": ast.Mult, "/": ast.Div, "//": ast.FloorDiv,
           "%": ast.Mod, "**": ast.Pow, "<<": ast.LShift, ">>": ast.RShift, "&": ast.BitAnd,
           "|": ast.BitOr, "^": ast.BitXor, "@": ast.MatMult}
_OLD_BINOPS = {"ADD": "+", "SUBTRACT": "-", "MULTIPLY": "*", "TRUE_DIVIDE": "/",
               "FLOOR_DIVIDE": "//", "MODULO": "%", "POWER": "**", "LSHIFT": "<<",
               "RSHIFT": ">>", "AND": "&", "OR": "|", "XOR": "^", "MATRIX_MULTIPLY": "@"}
_CMPOPS = {"<": ast.Lt, "<=": ast.LtE, "==": ast.Eq, "!=": ast.NotEq, ">": ast.Gt,
           ">=": ast.GtE}
_UNARY = {"UNARY_NEGATIVE": ast.USub, "UNARY_POSITIVE": ast.UAdd, "UNARY_NOT": ast.Not,
          "UNARY_INVERT": ast.Invert}
_INTRINSIC_UNARY_POSITIVE = 5
_INTRINSIC_LIST_TO_TUPLE = 6
_CO_VARARGS, _CO_VARKEYWORDS = 0x04, 0x08
_COMPREHENSIONS = {"<listcomp>": "ListComp", "<setcomp>": "SetComp",
                   "<dictcomp>": "DictComp", "<genexpr>": "GeneratorExp"}
# instructions of constructs the front end refuses, with the name its message gives them
_STATEMENTS = {"DELETE_FAST": "del", "DELETE_DEREF": "del", "DELETE_GLOBAL": "del",
               "DELETE_NAME": "del", "DELETE_SUBSCR": "del", "DELETE_ATTR": "del",
               "STORE_GLOBAL": "global", "IMPORT_NAME": "import", "IMPORT_FROM": "import",
               "LOAD_BUILD_CLASS": "class"}
_EXPRESSIONS = {"BUILD_MAP": "Dict", "BUILD_CONST_KEY_MAP": "Dict", "BUILD_SET": "Set",
                "LIST_APPEND": "ListComp", "GET_AWAITABLE": "Await",
                "YIELD_VALUE": "Yield"}


def decompile(pyfunc):
    """The ``ast.FunctionDef`` of ``pyfunc`` (a Python function) rebuilt from its bytecode.

    Node ``lineno``/``col_offset`` are the file positions of the instructions (columns are 0 on
    Python 3.10, whose code objects keep lines only); defaults are ``ast.Constant`` nodes
    holding ``pyfunc.__defaults__``.  Raises TypingError naming the function, the line and the
    opcode for constructs outside the kernel language (``try``, ``with``, generators,
    comprehensions, ``del``, ``global`` …) or control flow that is not recognised.
    """
    return _Decompiler(pyfunc.__code__, pyfunc.__qualname__).function(
        pyfunc.__defaults__ or ())


# ---- symbolic stack entries that are not expressions ---------------------------------------

class _Null:
    """The NULL that CPython 3.11+ pushes next to a callable."""


_NULL = _Null()


class _Iter:
    """An iterator (``GET_ITER``) of ``expr``."""

    def __init__(self, expr):
        self.expr = expr


class _Next:
    """The value ``FOR_ITER`` pushes: storing it binds the loop target."""


class _Group:
    """``UNPACK_SEQUENCE`` of ``value``: ``slots`` fill as the parts are stored."""

    def __init__(self, value, n):
        self.value = value
        self.slots = [None] * n


class _Part:
    def __init__(self, group, index):
        self.group = group
        self.index = index


class _Closure:
    def __init__(self, name):
        self.name = name


class _Code:
    def __init__(self, code):
        self.code = code


class _Keywords:
    """The keyword arguments of a call with ``*args`` (``CALL_FUNCTION_EX``)."""

    def __init__(self, pairs):
        self.pairs = pairs


class _Func:
    """``MAKE_FUNCTION``: a nested ``def`` or ``lambda``."""

    def __init__(self, code, defaults):
        self.code = code
        self.defaults = defaults
        self.kwdefaults = None


class _ForTarget:
    """First entry of a loop body's statements: the loop target (the loop takes it out)."""

    def __init__(self, target):
        self.target = target


_MARKERS = (_Null, _Iter, _Next, _Part, _Closure, _Code, _Func, _Keywords)


class _Block:
    __slots__ = ("start", "instrs", "kind", "target", "fall", "cond", "preds")

    def __init__(self, start, instrs):
        self.start = start
        self.instrs = instrs
        self.kind = "fall"          # fall | jump | cond | return | raise | for
        self.target = None          # jump/cond/for: jump target offset
        self.fall = None            # fall/cond/for: next block offset
        self.cond = None            # cond: the jump instruction
        self.preds = set()

    def succs(self):
        return [s for s in (self.target, self.fall) if s is not None] \
            if self.kind in ("cond", "for") else \
            ([self.target] if self.kind == "jump" else
             ([self.fall] if self.kind == "fall" and self.fall is not None else []))


class _Ref:
    """An edge of a test graph: to node ``key`` ("n") or to the exit ``key`` ("x");
    ``edge`` is (block, stack)."""
    __slots__ = ("kind", "key", "edge")

    def __init__(self, kind, key, edge):
        self.kind, self.key, self.edge = kind, key, edge

    def __eq__(self, other):
        return isinstance(other, _Ref) and (self.kind, self.key) == (other.kind, other.key)

    def __hash__(self):
        return hash((self.kind, self.key))


class _Loop:
    def __init__(self, header, body, follow, natural_exit):
        self.header = header
        self.body = body
        self.follow = follow
        self.natural_exit = natural_exit


class _Sim:
    """Result of running one block on a symbolic stack."""

    def __init__(self, stmts, stack):
        self.stmts = stmts
        self.stack = stack
        self.kind = "fall"
        self.value = None           # return/raise: the statement
        self.test = None            # cond: the test expression
        self.when_jump = None       # cond: (target, stack) when the jump is taken
        self.when_fall = None       # cond: (target, stack) otherwise
        self.jump_if = None         # cond: True/False: the jump is taken when test is that
        self.target = None


class _Decompiler:
    def __init__(self, code, qualname):
        self.code = code
        self.qualname = qualname
        self.filename = code.co_filename
        self.temps = 0
        self.depth = 0
        # what the decompiler knows about nodes it made ("inplace": an in-place operator,
        # "tested": evaluated by a jump, "star": built for a call's *args, "assert": the
        # AssertionError of an assert, "conversion": an f-string !r/!s/!a): {kind: {id: node}}
        # (the node is held, so its id is not reused while this decompiler lives)
        self._marks = {}
        self._pdoms = {}
        self._read()
        self._blocks()
        self._fold_while_latches()
        self._graph()

    # ---- errors and positions --------------------------------------------------------------

    def error(self, msg, ins=None, line=None, unsupported=False):
        """TypingError at ``ins`` (or ``line``).  ``unsupported``: ``msg`` is the front end's
        own message for a construct outside the kernel language (the same words as for a
        kernel with source); otherwise the bytecode was not understood."""
        if ins is not None:
            line = self.lines.get(ins.offset, line)
        if line is None:
            line = self.code.co_firstlineno
        col = self.cols.get(ins.offset, 0) if ins is not None else 0
        where = f"instruction {ins.opname} at offset {ins.offset}" if ins is not None else ""
        if unsupported:
            text = f"{msg} ({self.qualname}, compiled from its bytecode"
            text += f": {where})" if where else ")"
        else:
            text = f"cannot compile {self.qualname} from its bytecode: {msg}"
            text += f" ({where})" if where else ""
        lines = linecache.getlines(self.filename)
        source = lines[line - 1] if 0 < line <= len(lines) else None
        return TypingError(text, SourceLocation(self.filename, line, col, source))

    def mark(self, node, kind):
        self._marks.setdefault(kind, {})[id(node)] = node

    def marked(self, node, kind):
        return self._marks.get(kind, {}).get(id(node)) is node

    def at(self, node, ins):
        """``node`` placed at ``ins``'s source position."""
        if isinstance(node, (ast.expr, ast.stmt)) and ins is not None:
            node.lineno = self.lines.get(ins.offset, self.code.co_firstlineno)
            node.col_offset = self.cols.get(ins.offset, 0)
            node.end_lineno = self.end_lines.get(ins.offset, node.lineno)
            node.end_col_offset = self.end_cols.get(ins.offset, node.col_offset)
        return node

    # ---- instructions and blocks -----------------------------------------------------------

    def _read(self):
        code = self.code
        flags = code.co_flags
        if flags & (0x20 | 0x80 | 0x100 | 0x200):      # generator, coroutine, async gen
            raise self.error("'Yield' expressions are not supported in kernels",
                             unsupported=True)
        self.instrs = []
        self.lines, self.cols, self.end_lines, self.end_cols = {}, {}, {}, {}
        alias = {}
        pending = []
        line = code.co_firstlineno
        for ins in dis.get_instructions(code):
            pos = getattr(ins, "positions", None)
            if pos is not None and pos.lineno is not None:
                line = pos.lineno
            elif pos is None and isinstance(ins.starts_line, int) and \
                    not isinstance(ins.starts_line, bool):
                line = ins.starts_line
            if ins.opname in ("EXTENDED_ARG", "CACHE"):
                pending.append(ins.offset)
                continue
            for o in pending:
                alias[o] = ins.offset
            pending = []
            self.lines[ins.offset] = line
            if pos is not None:
                self.cols[ins.offset] = pos.col_offset or 0
                self.end_lines[ins.offset] = pos.end_lineno or line
                self.end_cols[ins.offset] = pos.end_col_offset or 0
            self.instrs.append(ins)
        self.alias = alias
        self._refuse_handlers()

    def _refuse_handlers(self):
        """``with`` and ``try`` (exception handlers: an exception table on 3.11+, SETUP_*
        before) are outside the kernel language: refused as the front end refuses them."""
        for ins in self.instrs:
            if ins.opname in ("BEFORE_WITH", "SETUP_WITH", "LOAD_SPECIAL", "BEFORE_ASYNC_WITH"):
                raise self.error("'with' statements are not supported in kernels", ins,
                                 unsupported=True)
        at = next((i for i in self.instrs if i.opname in ("SETUP_FINALLY", "PUSH_EXC_INFO")),
                  None)
        if at is None and not getattr(self.code, "co_exceptiontable", b""):
            return
        if getattr(self.code, "co_exceptiontable", b""):
            # the try statement's line: the instruction just before the first protected one
            parse = getattr(dis, "_parse_exception_table", None)
            try:
                first = min(e.start for e in parse(self.code)) if parse else None
            except Exception:           # a private helper of dis: its shape may change
                first = None
            if first is not None:
                before = [i for i in self.instrs if i.offset < first]
                at = before[-1] if before else at
        raise self.error("'try' statements are not supported in kernels", at, unsupported=True)

    def jump_target(self, ins):
        t = ins.argval
        return self.alias.get(t, t)

    def _blocks(self):
        instrs = self.instrs
        leaders = {instrs[0].offset}
        for k, ins in enumerate(instrs):
            op = ins.opname
            if op in _JUMPS or _is_cond(op) or op == "FOR_ITER":
                leaders.add(self.jump_target(ins))
                if k + 1 < len(instrs):
                    leaders.add(instrs[k + 1].offset)
            elif op in _RETURNS or op == "RAISE_VARARGS" or op == "RERAISE":
                if k + 1 < len(instrs):
                    leaders.add(instrs[k + 1].offset)
        blocks = {}
        order = []
        cur = None
        for ins in instrs:
            if ins.offset in leaders:
                cur = _Block(ins.offset, [])
                blocks[ins.offset] = cur
                order.append(cur)
            cur.instrs.append(ins)
        for k, b in enumerate(order):
            nxt = order[k + 1].start if k + 1 < len(order) else None
            last = b.instrs[-1]
            op = last.opname
            if op in _JUMPS:
                b.kind, b.target = "jump", self.jump_target(last)
                b.instrs = b.instrs[:-1]
            elif _is_cond(op):
                b.kind, b.target, b.fall, b.cond = "cond", self.jump_target(last), nxt, last
                b.instrs = b.instrs[:-1]
            elif op == "FOR_ITER":
                b.kind, b.target, b.fall = "for", self.jump_target(last), nxt
                if len(b.instrs) > 1:
                    # FOR_ITER is always a jump target (the loop's back edge), so it starts
                    # its block
                    raise self.error("unexpected loop layout", last)
                b.instrs = []
            elif op in _RETURNS:
                b.kind = "return"
            elif op in ("RAISE_VARARGS", "RERAISE"):
                b.kind = "raise"
            else:
                b.kind, b.fall = "fall", nxt
        self.blocks = blocks
        self.order = [b.start for b in order]

    def _split(self, block, k):
        """Split ``block`` before its ``k``-th instruction; returns the new second block."""
        new = _Block(block.instrs[k].offset, block.instrs[k:])
        new.kind, new.target, new.fall, new.cond = block.kind, block.target, block.fall, \
            block.cond
        block.instrs = block.instrs[:k]
        block.kind, block.target, block.fall, block.cond = "fall", None, new.start, None
        self.blocks[new.start] = new
        i = self.order.index(block.start)
        self.order.insert(i + 1, new.start)
        return new

    def _resolve(self, off):
        """``off`` followed through blocks that only jump."""
        seen = set()
        while off is not None and off not in seen:
            seen.add(off)
            b = self.blocks[off]
            if b.kind in ("jump", "fall") and all(i.opname in _NOOPS for i in b.instrs) and \
                    (b.target if b.kind == "jump" else b.fall) is not None:
                off = b.target if b.kind == "jump" else b.fall
            else:
                break
        return off

    def _after_pops(self, off):
        """``off`` followed through blocks that only drop stack entries and jump (a
        ``break`` out of a ``for`` drops the iterator)."""
        seen = set()
        while off is not None and off not in seen:
            seen.add(off)
            b = self.blocks[off]
            nxt = b.target if b.kind == "jump" else (b.fall if b.kind == "fall" else None)
            if nxt is not None and all(i.opname in _NOOPS or i.opname in ("POP_TOP", "SWAP")
                                       for i in b.instrs):
                off = nxt
            else:
                break
        return off

    def _cond_targets(self, b):
        """(target when the test is true, target when false), resolved; None if not a
        plain test (``JUMP_IF_*_OR_POP`` keep a value, ``*_NONE`` test against None)."""
        op = b.cond.opname
        if not op.startswith("POP_JUMP") or "NONE" in op:
            return None
        j, f = self._resolve(b.target), self._resolve(b.fall)
        return (j, f) if "TRUE" in op else (f, j)

    def _test_start(self, b):
        """Index in ``b.instrs`` where the test of its conditional jump starts (the shortest
        suffix that pushes the one value the jump pops), or None when it starts in another
        block."""
        need = 1
        for k in range(len(b.instrs) - 1, -1, -1):
            ins = b.instrs[k]
            try:
                eff = dis.stack_effect(ins.opcode, ins.arg) if ins.opcode >= dis.HAVE_ARGUMENT \
                    else dis.stack_effect(ins.opcode)
            except ValueError:
                return None
            need -= eff
            if need == 0:
                return k
            if need < 0:
                return None
        return None

    def _fold_while_latches(self):
        """CPython compiles ``while test: body`` as ``if test: do body while test``: the test
        is repeated at the end.  Make that latch jump to the first test instead, so that the
        loop has one header (the test) as in the source and ``continue`` (which jumps to the
        first test) stays inside it."""
        for off in list(self.order):
            latch = self.blocks.get(off)
            if latch is None or latch.kind != "cond":
                continue
            tgt = self._cond_targets(latch)
            if tgt is None or tgt[0] is None or tgt[0] > latch.start:
                continue
            body, exit_ = tgt
            i = self.order.index(body)
            if i == 0:
                continue
            guard = self.blocks[self.order[i - 1]]
            if guard.kind != "cond" or guard.fall != body or self._cond_targets(guard) != tgt:
                continue
            # only the guard and the latch enter the body: else the guard is the last part
            # of a compound test (``while a or b``), which the clean-up pass rebuilds
            entering = {o for o, blk in self.blocks.items()
                        if body in [self._resolve(t) for t in blk.succs()]}
            if not entering <= {guard.start, latch.start} | \
                    {o for o in entering if self._resolve(o) != o}:
                continue
            ks, kg = self._test_start(latch), self._test_start(guard)
            if ks is None or kg is None:
                continue
            a, b = latch.instrs[ks:], guard.instrs[kg:]
            if len(a) != len(b) or any(not _same_instr(x, y) for x, y in zip(a, b)):
                continue
            top = guard if kg == 0 else self._split(guard, kg)
            latch.instrs = latch.instrs[:ks]
            latch.kind, latch.target, latch.fall, latch.cond = "jump", top.start, None, None

    def _graph(self):
        blocks = self.blocks
        entry = self.order[0]
        # jumps to blocks that only jump on (a NOP left for a line, CPython's jump to a
        # jump) go straight to where those lead, so that a loop has one header
        for b in blocks.values():
            if b.kind in ("jump", "cond", "fall"):
                b.target = self._resolve(b.target) if b.target is not None else None
                b.fall = self._resolve(b.fall) if b.fall is not None else None
        reach, todo = set(), [entry]
        while todo:
            o = todo.pop()
            if o in reach:
                continue
            reach.add(o)
            todo.extend(blocks[o].succs())
        self.reach = reach
        for o in reach:
            blocks[o].preds = set()
        for o in reach:
            for s in blocks[o].succs():
                blocks[s].preds.add(o)
        # dominators
        nodes = sorted(reach)
        dom = {o: set(nodes) for o in nodes}
        dom[entry] = {entry}
        changed = True
        while changed:
            changed = False
            for o in nodes:
                if o == entry:
                    continue
                ps = [dom[p] for p in blocks[o].preds]
                new = set.intersection(*ps) | {o} if ps else {o}
                if new != dom[o]:
                    dom[o], changed = new, True
        self.headers = {}
        for o in nodes:
            for s in blocks[o].succs():
                if s in dom[o]:                 # a back edge o -> s
                    body = self.headers.setdefault(s, {s})
                    todo = [o]
                    while todo:
                        n = todo.pop()
                        if n in body:
                            continue
                        body.add(n)
                        todo.extend(blocks[n].preds)

    def loop_at(self, h):
        body = self.headers[h]
        hb = self.blocks[h]
        natural = None
        if hb.kind == "for":
            natural = hb.target
        elif hb.kind == "cond":
            outside = [s for s in (hb.target, hb.fall) if s not in body]
            if len(outside) == 1:
                natural = outside[0]
        exits = set()
        for n in body:
            for s in self.blocks[n].succs():
                if s not in body:
                    exits.add(self._after_pops(s))
        natural_r = self._after_pops(natural) if natural is not None else None
        others = exits - {natural_r}
        follow = natural
        if natural is None and len(others) >= 1:
            follow = min(others)
        elif len(others) == 1:
            f = next(iter(others))
            if self._reaches(natural, f, body):
                follow = f
        return _Loop(h, body, follow, natural)

    def _reaches(self, a, b, avoid):
        seen, todo = set(), [a]
        while todo:
            n = todo.pop()
            if n == b:
                return True
            if n in seen or n in avoid:
                continue
            seen.add(n)
            todo.extend(self.blocks[n].succs())
        return False

    def ipdom(self, b, loop):
        """The join of the branches leaving ``b`` inside ``loop`` (None: the function), or
        None when they only meet by leaving it (return, break, continue)."""
        key = loop.header if loop is not None else None
        pd = self._pdoms.get(key)
        if pd is None:
            pd = self._pdoms[key] = self._postdominators(loop)
        s = pd.get(b)
        if s is None:
            return None
        strict = [n for n in s if n != b]
        if not strict:
            return None
        best = max(strict, key=lambda n: len(pd.get(n, ())))
        return None if best == "exit" else best

    def _postdominators(self, loop):
        nodes = set(loop.body) if loop is not None else set(self.reach)
        succ = {}
        for n in nodes:
            out = []
            ss = self.blocks[n].succs()
            if not ss:
                out.append("exit")
            for s in ss:
                if s in nodes and (loop is None or s != loop.header):
                    out.append(s)
                else:
                    out.append("exit")
            succ[n] = out
        full = nodes | {"exit"}
        pd = {n: set(full) for n in nodes}
        pd["exit"] = {"exit"}
        changed = True
        while changed:
            changed = False
            for n in nodes:
                new = set.intersection(*[pd[s] for s in succ[n]]) | {n}
                if new != pd[n]:
                    pd[n], changed = new, True
        return pd

    # ---- the function ----------------------------------------------------------------------

    def function(self, defaults):
        code = self.code
        body, _stack, status = self.region(self.order[0], None, [], None)
        if status == "join":
            raise self.error("the function falls off its end without a return")
        body = _Cleanup(self).function_body(body)
        nargs = code.co_argcount
        names = code.co_varnames
        npos = getattr(code, "co_posonlyargcount", 0)
        line = code.co_firstlineno

        def arg(n):
            a = ast.arg(arg=n, annotation=None)
            a.lineno, a.col_offset = line, 0
            return a
        args = [arg(n) for n in names[:nargs]]
        kwonly = [arg(n) for n in names[nargs:nargs + code.co_kwonlyargcount]]
        k = nargs + code.co_kwonlyargcount
        vararg = kwarg = None
        if code.co_flags & _CO_VARARGS:
            vararg, k = arg(names[k]), k + 1
        if code.co_flags & _CO_VARKEYWORDS:
            kwarg = arg(names[k])
        dflt = []
        for v in defaults:
            c = ast.Constant(value=v)
            c.lineno, c.col_offset = line, 0
            dflt.append(c)
        arguments = ast.arguments(posonlyargs=args[:npos], args=args[npos:], vararg=vararg,
                                  kwonlyargs=kwonly, kw_defaults=[None] * len(kwonly),
                                  kwarg=kwarg, defaults=dflt)
        extra = {"type_params": []} if "type_params" in ast.FunctionDef._fields else {}
        fdef = ast.FunctionDef(name=code.co_name, args=arguments, body=body or [ast.Pass()],
                               decorator_list=[], returns=None, type_comment=None, **extra)
        fdef.lineno, fdef.col_offset = line, 0
        fdef.end_lineno, fdef.end_col_offset = max(self.lines.values(), default=line), 0
        _unshare(fdef)
        ast.fix_missing_locations(fdef)
        return fdef

    # ---- structure -------------------------------------------------------------------------

    def region(self, b, stop, stack, loop, entering=False):
        """Statements from block ``b`` until ``stop`` (a join) or until every path leaves
        (return, raise, break, continue).  Returns (stmts, stack at stop, status) with status
        'join' (reached ``stop``) or 'ended'."""
        out = []
        first = entering
        self.depth += 1
        if self.depth > 200:
            raise self.error("control flow that is not recognised (too deep)")
        try:
            return self._region(b, stop, stack, loop, entering, out, first)
        finally:
            self.depth -= 1

    def _region(self, b, stop, stack, loop, entering, out, first):
        while True:
            if b == stop:
                return out, stack, "join"
            if loop is not None and not first:
                edge = self._edge(b, loop)
                if edge == "continue":
                    out.append(self._placed(ast.Continue(), b))
                    return out, None, "ended"
                if edge == "break":
                    out.append(self._placed(ast.Break(), b))
                    return out, None, "ended"
                if edge == "outside":
                    # code after the loop reached by a jump out of it (CPython copies small
                    # exit blocks, e.g. a break followed by return): run it here, then leave
                    sub, _s, status = self.region(b, loop.follow, stack, None)
                    out += sub
                    if status == "join":
                        out.append(self._placed(ast.Break(), b))
                    return out, None, "ended"
            first = False
            if b in self.headers and (loop is None or b != loop.header or entering):
                if loop is None or b != loop.header:
                    stmts, stack, follow = self.loop(b, stack, loop)
                    out += stmts
                    if follow is None:
                        return out, None, "ended"
                    b = follow
                    continue
            entering = False
            blk = self.blocks[b]
            if blk.kind == "for":
                raise self.error("a loop whose layout is not recognised",
                                 self.instrs[self._index(b)])
            sim = self.simulate(blk, stack)
            out += sim.stmts
            if sim.kind in ("return", "raise"):
                out.append(sim.value)
                return out, None, "ended"
            if sim.kind == "fall":
                if sim.target is None:
                    raise self.error("the function falls off its end", blk.instrs[-1])
                b, stack = sim.target, sim.stack
                continue
            # a conditional
            test, (tb, ts), (fb, fs) = self.condition(blk, sim, loop)
            join = self.ipdom(b, loop)
            stop2 = join if join is not None else stop
            s1, st1, e1 = self.branch(tb, stop2, ts, loop)
            s2, st2, e2 = self.branch(fb, stop2, fs, loop)
            node = self.at(ast.If(test=test, body=s1, orelse=s2), blk.cond)
            if e1 == "join" and e2 == "join":
                stack = self.merge(test, st1, st2, s1, s2, blk.cond)
                if s1 or s2 or all(x is y for x, y in zip(st1, st2)):
                    out.append(node)
            elif e1 == "join" or e2 == "join":
                out.append(node)
                stack = st1 if e1 == "join" else st2
            else:
                out.append(node)
                return out, None, "ended"
            if join is None:
                return out, stack, "join"
            b = join

    def branch(self, b, stop, stack, loop):
        if b == stop:
            return [], stack, "join"
        return self.region(b, stop, stack, loop)

    def _edge(self, b, loop):
        if b == loop.header:
            return "continue"
        if b in loop.body:
            return None
        if b == loop.follow or (loop.follow is not None and
                                self._after_pops(b) == self._after_pops(loop.follow)):
            return "break"
        if b in self.headers:
            raise self.error("a jump out of a nested loop to an enclosing one",
                             self.instrs[self._index(b)])
        return "outside"

    def _placed(self, node, b):
        blk = self.blocks[b]
        ins = blk.instrs[0] if blk.instrs else None
        if ins is None:
            node.lineno, node.col_offset = self.code.co_firstlineno, 0
            return node
        return self.at(node, ins)

    def _index(self, off):
        for k, ins in enumerate(self.instrs):
            if ins.offset >= off:
                return k
        return len(self.instrs) - 1

    def merge(self, test, st1, st2, s1, s2, ins):
        """The stack after an if/else whose branches left ``st1`` and ``st2``: a value that
        differs is ``st1[i] if test else st2[i]`` (``a and b``, ``a or b`` when one side is
        the test itself)."""
        if len(st1) != len(st2):
            raise self.error("branches that leave different stack depths", ins)
        out = []
        for x, y in zip(st1, st2):
            if x is y:
                out.append(x)
                continue
            if s1 or s2 or isinstance(x, _MARKERS) or isinstance(y, _MARKERS):
                raise self.error("a conditional value across statements", ins)
            out.append(_choose(test, x, y, lambda n: self.at(n, ins)))
        return out

    def condition(self, blk, sim, loop):
        """(test, (true target, stack), (false target, stack)) of a conditional block, with
        the blocks that only extend its test (``a and b``, ``not a or b``, chained
        comparisons) folded into one expression."""
        def split(s):
            j, f = s.when_jump, s.when_fall
            return (j, f) if s.jump_if else (f, j)
        t, f = split(sim)
        nodes = {blk.start: [sim.test, t, f]}
        members = {blk.start}
        exits = {}
        todo = [t, f]
        seen = set()
        while todo:
            todo.sort(key=lambda e: e[0])
            e = todo.pop(0)
            key = (e[0], tuple(map(id, e[1])))
            if key in seen:
                continue
            seen.add(key)
            o, st = e
            blkx = self.blocks.get(o)
            ok = blkx is not None and o not in self.headers and blkx.preds <= members and \
                blkx.kind in ("cond", "fall", "jump") and o in self.reach and \
                (loop is None or o in loop.body) and o not in members
            if ok:
                try:
                    sx = self.simulate(blkx, list(st))
                except TypingError:
                    sx = None
                if sx is not None and not sx.stmts and sx.kind == "cond":
                    members.add(o)
                    tt, ff = split(sx)
                    nodes[o] = [sx.test, tt, ff]
                    todo += [tt, ff]
                    continue
                if sx is not None and not sx.stmts and sx.kind == "fall" and \
                        len(sx.stack) <= len(st) and \
                        all(a is b for a, b in zip(sx.stack, st)) and sx.target is not None:
                    # a block that only pops (the clean-up of a chained comparison)
                    members.add(o)
                    nodes[o] = None
                    alias = (sx.target, sx.stack)
                    exits[key] = alias
                    todo.append(alias)
                    continue
            exits.setdefault(key, e)
        if len(nodes) == 1:
            return sim.test, t, f

        def ref(e):
            key = (e[0], tuple(map(id, e[1])))
            while key in exits and exits[key] is not e:
                e = exits[key]
                key = (e[0], tuple(map(id, e[1])))
            if e[0] in nodes and nodes[e[0]] is not None:
                return _Ref("n", e[0], e)
            return _Ref("x", self._exit_key(e, key), e)
        graph = {o: [v[0], ref(v[1]), ref(v[2])] for o, v in nodes.items() if v is not None}
        # reduce the test graph: a node y reached only from x and sharing a target with it
        # becomes one test with x; nodes left over (an elif's test) stay blocks of their own
        entry = blk.start
        while True:
            preds = {}
            for o, v in graph.items():
                for r in v[1:]:
                    if r.kind == "n":
                        preds.setdefault(r.key, []).append(o)
            done = False
            for x, v in graph.items():
                for side in (1, 2):
                    r = v[side]
                    if r.kind != "n" or r.key == x or preds.get(r.key) != [x]:
                        continue
                    y = graph[r.key]
                    other = v[3 - side]
                    ins = blk.cond
                    if side == 1 and other == y[2]:
                        new = _bool(ast.And, v[0], y[0], ins, self)
                    elif side == 1 and other == y[1]:
                        new = _bool(ast.Or, _not(v[0], ins, self), y[0], ins, self)
                    elif side == 2 and other == y[1]:
                        new = _bool(ast.Or, v[0], y[0], ins, self)
                    elif side == 2 and other == y[2]:
                        new = _bool(ast.And, _not(v[0], ins, self), y[0], ins, self)
                    else:
                        continue
                    graph[x] = [new, y[1], y[2]]
                    del graph[r.key]
                    done = True
                    break
                if done:
                    break
            if not done:
                break
        test, rt, rf = graph[entry]
        if rt == rf:
            return sim.test, t, f
        return test, rt.edge, rf.edge

    def _exit_key(self, e, key):
        """What a test's exit leads to: CPython copies ``return None`` (with the pops before
        it) to each place that jumps there, so copies of one return are one exit."""
        blk = self.blocks.get(e[0])
        if blk is None or blk.kind != "return":
            return key
        try:
            sx = self.simulate(blk, list(e[1]))
        except TypingError:
            return key
        v = sx.value.value if sx.value is not None else None
        if sx.stmts or not (v is None or isinstance(v, ast.Constant)):
            return key
        return ("return", ast.dump(sx.value))

    def loop(self, h, stack, outer):
        lp = self.loop_at(h)
        hb = self.blocks[h]
        if hb.kind == "for":
            if not stack or not isinstance(stack[-1], _Iter):
                raise self.error("a for loop over something that is not an iterator",
                                 self.instrs[self._index(h)])
            it = stack[-1]
            body, _s, status = self.region(hb.fall, None, stack + [_Next()], lp)
            if not body or not isinstance(body[0], _ForTarget):
                raise self.error("a for loop whose target is not recognised",
                                 self.instrs[self._index(h)])
            target = body[0].target
            body = body[1:]
            after = stack[:-1]
            orelse = []
            if lp.follow is not None and lp.natural_exit is not None and \
                    lp.follow != lp.natural_exit:
                orelse, after2, st = self.region(lp.natural_exit, lp.follow, after, outer)
                if st == "join":
                    after = after2
            node = ast.For(target=target, iter=it.expr, body=body or [ast.Pass()],
                           orelse=orelse, type_comment=None)
            self._copy_pos(node, it.expr)
            return [node], after, lp.follow
        body, _s, status = self.region(h, None, stack, lp, entering=True)
        node = ast.While(test=ast.Constant(value=True), body=body or [ast.Pass()], orelse=[])
        self._placed(node, h)
        self._copy_pos(node.test, node)
        return [node], stack, lp.follow

    @staticmethod
    def _copy_pos(dst, src):
        for a in ("lineno", "col_offset", "end_lineno", "end_col_offset"):
            if hasattr(src, a):
                setattr(dst, a, getattr(src, a))

    # ---- one block on a symbolic stack -----------------------------------------------------

    def simulate(self, blk, stack):
        stack = list(stack)
        stmts = []
        sim = _Sim(stmts, stack)
        kwnames = None
        prev = None
        runs = _store_runs(blk.instrs, self.lines)
        skip = set()
        # lists built in this block: a call with many arguments collects them in one by
        # BUILD_LIST 0 and LIST_APPENDs (then LIST_TO_TUPLE, CALL_FUNCTION_EX); a list from
        # another block that a loop appends to is a comprehension (not supported)
        fresh_lists = set()
        for k, ins in enumerate(blk.instrs):
            op = ins.opname
            at = lambda n: self.at(n, ins)     # noqa: E731
            if k in skip:
                continue
            if k in runs and self.store_group(stmts, stack, runs[k], ins):
                skip.update(range(k, k + len(runs[k])))
                prev = op
                continue
            if op in _NOOPS:
                pass
            elif op == "POP_TOP":
                if prev == "END_FOR" and _PY >= (3, 13):
                    pass                     # END_FOR; POP_TOP close a loop
                else:
                    v = self.pop(stack, ins)
                    # a call whose value is dropped is a statement; a value that is still
                    # part of another entry (the middle of a chained comparison) is not
                    if isinstance(v, ast.expr) and not self.marked(v, "tested") and \
                            any(isinstance(n, ast.Call) for n in ast.walk(v)) and \
                            not any(isinstance(e, ast.expr) and
                                    any(n is v for n in ast.walk(e)) for e in stack):
                        stmts.append(at(ast.Expr(value=v)))
                    elif isinstance(v, _Func):
                        raise self.error("a function expression used as a statement", ins)
            elif op in ("LOAD_FAST", "LOAD_FAST_CHECK", "LOAD_DEREF", "LOAD_CLASSDEREF",
                        "LOAD_NAME", "LOAD_FAST_BORROW"):
                stack.append(at(ast.Name(id=ins.argval, ctx=ast.Load())))
            elif op in ("LOAD_FAST_LOAD_FAST", "LOAD_FAST_BORROW_LOAD_FAST_BORROW"):
                for n in ins.argval:
                    stack.append(at(ast.Name(id=n, ctx=ast.Load())))
            elif op == "LOAD_GLOBAL":
                name = ins.argval
                null = _PY >= (3, 11) and ins.arg & 1
                if null and _PY < (3, 13):
                    stack.append(_NULL)
                stack.append(at(ast.Name(id=name, ctx=ast.Load())))
                if null and _PY >= (3, 13):
                    stack.append(_NULL)
            elif op == "LOAD_CONST":
                v = ins.argval
                stack.append(_Code(v) if hasattr(v, "co_code") else at(_const(v)))
            elif op == "RETURN_CONST":
                sim.kind, sim.value = "return", at(ast.Return(value=_ret(at(_const(ins.argval)))))
            elif op == "RETURN_VALUE":
                v = self.expr(self.pop(stack, ins), ins)
                sim.kind, sim.value = "return", at(ast.Return(value=_ret(v)))
            elif op in ("STORE_FAST", "STORE_DEREF", "STORE_NAME"):
                v = self.pop(stack, ins)
                self.store(stmts, stack, at(ast.Name(id=ins.argval, ctx=ast.Store())), v, ins)
            elif op == "STORE_FAST_LOAD_FAST":
                s, ld = ins.argval
                v = self.pop(stack, ins)
                self.store(stmts, stack, at(ast.Name(id=s, ctx=ast.Store())), v, ins)
                stack.append(at(ast.Name(id=ld, ctx=ast.Load())))
            elif op == "STORE_FAST_STORE_FAST":
                for n in ins.argval:
                    v = self.pop(stack, ins)
                    self.store(stmts, stack, at(ast.Name(id=n, ctx=ast.Store())), v, ins)
            elif op == "LOAD_ATTR" or op == "LOAD_METHOD":
                obj = self.expr(self.pop(stack, ins), ins)
                node = at(ast.Attribute(value=obj, attr=ins.argval, ctx=ast.Load()))
                method = op == "LOAD_METHOD" or (_PY >= (3, 12) and ins.arg & 1)
                if method and _PY < (3, 13):
                    stack += [_NULL, node]
                elif method:
                    stack += [node, _NULL]
                else:
                    stack.append(node)
            elif op == "STORE_ATTR":
                obj = self.expr(self.pop(stack, ins), ins)
                v = self.pop(stack, ins)
                self.store(stmts, stack, at(ast.Attribute(value=obj, attr=ins.argval,
                                                          ctx=ast.Store())), v, ins)
            elif op == "BINARY_SUBSCR":
                idx = self.expr(self.pop(stack, ins), ins)
                obj = self.expr(self.pop(stack, ins), ins)
                stack.append(at(ast.Subscript(value=obj, slice=idx, ctx=ast.Load())))
            elif op == "STORE_SUBSCR":
                idx = self.expr(self.pop(stack, ins), ins)
                obj = self.expr(self.pop(stack, ins), ins)
                v = self.pop(stack, ins)
                self.store(stmts, stack, at(ast.Subscript(value=obj, slice=idx,
                                                          ctx=ast.Store())), v, ins)
            elif op == "BINARY_SLICE":
                hi, lo = self.pop(stack, ins), self.pop(stack, ins)
                obj = self.expr(self.pop(stack, ins), ins)
                sl = at(ast.Slice(lower=_none(lo), upper=_none(hi), step=None))
                stack.append(at(ast.Subscript(value=obj, slice=sl, ctx=ast.Load())))
            elif op == "STORE_SLICE":
                hi, lo = self.pop(stack, ins), self.pop(stack, ins)
                obj = self.expr(self.pop(stack, ins), ins)
                v = self.pop(stack, ins)
                sl = at(ast.Slice(lower=_none(lo), upper=_none(hi), step=None))
                self.store(stmts, stack, at(ast.Subscript(value=obj, slice=sl,
                                                          ctx=ast.Store())), v, ins)
            elif op == "BUILD_SLICE":
                parts = [self.pop(stack, ins) for _ in range(ins.arg)][::-1]
                parts += [None] * (3 - len(parts))
                stack.append(at(ast.Slice(lower=_none(parts[0]), upper=_none(parts[1]),
                                          step=_none(parts[2]))))
            elif op == "BUILD_TUPLE" and ins.arg and \
                    all(isinstance(v, _Closure) for v in stack[-ins.arg:]):
                del stack[-ins.arg:]            # a nested function's cells
                stack.append(_Closure(None))
            elif op in ("BUILD_TUPLE", "BUILD_LIST"):
                items = [self.expr(self.pop(stack, ins), ins) for _ in range(ins.arg)][::-1]
                cls = ast.Tuple if op == "BUILD_TUPLE" else ast.List
                stack.append(at(cls(elts=items, ctx=ast.Load())))
                if op == "BUILD_LIST":
                    fresh_lists.add(id(stack[-1]))
            elif op == "UNPACK_SEQUENCE":
                v = self.pop(stack, ins)
                g = _Group(v, ins.arg)
                stack += [_Part(g, i) for i in range(ins.arg - 1, -1, -1)]
            elif op == "BINARY_OP":
                sym = dis._nb_ops[ins.arg][1]
                self.binop(stack, sym, ins)
            elif op.startswith("BINARY_") and op[7:] in _OLD_BINOPS:
                self.binop(stack, _OLD_BINOPS[op[7:]], ins)
            elif op.startswith("INPLACE_") and op[8:] in _OLD_BINOPS:
                self.binop(stack, _OLD_BINOPS[op[8:]] + "=", ins)
            elif op in _UNARY:
                v = self.expr(self.pop(stack, ins), ins)
                stack.append(at(ast.UnaryOp(op=_UNARY[op](), operand=v)))
            elif op == "CALL_INTRINSIC_1" and ins.arg == _INTRINSIC_UNARY_POSITIVE:
                v = self.expr(self.pop(stack, ins), ins)
                stack.append(at(ast.UnaryOp(op=ast.UAdd(), operand=v)))
            elif op == "COMPARE_OP":
                name = _cmp_name(ins)
                r = self.expr(self.pop(stack, ins), ins)
                lft = self.expr(self.pop(stack, ins), ins)
                stack.append(at(ast.Compare(left=lft, ops=[_CMPOPS[name]()], comparators=[r])))
            elif op == "IS_OP":
                r = self.expr(self.pop(stack, ins), ins)
                lft = self.expr(self.pop(stack, ins), ins)
                stack.append(at(ast.Compare(left=lft, ops=[ast.IsNot() if ins.arg else ast.Is()],
                                            comparators=[r])))
            elif op == "CONTAINS_OP":
                r = self.expr(self.pop(stack, ins), ins)
                lft = self.expr(self.pop(stack, ins), ins)
                stack.append(at(ast.Compare(left=lft, ops=[ast.NotIn() if ins.arg else ast.In()],
                                            comparators=[r])))
            elif op == "KW_NAMES":
                # 3.11's dis does not resolve KW_NAMES's constant
                kwnames = self.code.co_consts[ins.arg]
            elif op in ("CALL", "CALL_KW", "CALL_FUNCTION", "CALL_FUNCTION_KW", "CALL_METHOD"):
                names = ()
                if op == "CALL_KW" or op == "CALL_FUNCTION_KW":
                    names = _const_value(self.pop(stack, ins), ins, self)
                elif kwnames is not None:
                    names = kwnames
                kwnames = None
                args = [self.pop(stack, ins) for _ in range(ins.arg)][::-1]
                if op == "CALL_FUNCTION" or op == "CALL_FUNCTION_KW":
                    func = self.pop(stack, ins)
                else:
                    y = self.pop(stack, ins)
                    x = self.pop(stack, ins)
                    if x is _NULL:
                        func = y
                    elif y is _NULL:
                        func = x
                    else:
                        func, args = x, [y] + args
                stack.append(self.call(func, args, names, ins))
            elif op == "CALL_FUNCTION_EX":
                keywords = []
                if ins.arg & 1:
                    kw = self.pop(stack, ins)
                    if not isinstance(kw, _Keywords):
                        raise self.error("calls with **kwargs are not supported", ins)
                    keywords = [ast.keyword(arg=k, value=v) for k, v in kw.pairs]
                    for k in keywords:
                        self._copy_pos(k, k.value)
                star = self.pop(stack, ins)
                func = self.pop(stack, ins)
                if _PY >= (3, 11):
                    other = self.pop(stack, ins)
                    func = other if func is _NULL else func
                func = self.expr(func, ins)
                if self.marked(star, "star"):
                    args = list(star.elts)          # f(a, *t, b): the tuple built for it
                else:
                    args = [at(ast.Starred(value=self.expr(star, ins), ctx=ast.Load()))]
                stack.append(at(ast.Call(func=func, args=args, keywords=keywords)))
            elif op == "LIST_EXTEND" and len(stack) > ins.arg and \
                    isinstance(stack[-ins.arg - 1], ast.List):
                v = self.expr(self.pop(stack, ins), ins)
                lst = stack[-ins.arg]
                lst.elts.append(at(ast.Starred(value=v, ctx=ast.Load())))
                self.mark(lst, "star")
            elif op == "LIST_APPEND" and len(stack) > ins.arg and \
                    (self.marked(stack[-ins.arg - 1], "star") or
                     id(stack[-ins.arg - 1]) in fresh_lists):
                v = self.expr(self.pop(stack, ins), ins)
                stack[-ins.arg].elts.append(v)
                self.mark(stack[-ins.arg], "star")
            elif op == "LIST_TO_TUPLE" or (op == "CALL_INTRINSIC_1" and
                                           ins.arg == _INTRINSIC_LIST_TO_TUPLE):
                v = self.pop(stack, ins)
                if not isinstance(v, ast.List):
                    raise self.error("a tuple built from something that is not a list", ins)
                tup = at(ast.Tuple(elts=v.elts, ctx=ast.Load()))
                if self.marked(v, "star"):
                    self.mark(tup, "star")
                stack.append(tup)
            elif op in ("BUILD_MAP", "BUILD_CONST_KEY_MAP") and _keywords_follow(blk, ins):
                # the keywords of a call with *args: f(a, *t, k=v)
                if op == "BUILD_MAP":
                    items = [self.pop(stack, ins) for _ in range(2 * ins.arg)][::-1]
                    keys = [_const_value(k, ins, self, single=True) for k in items[0::2]]
                    vals = items[1::2]
                else:
                    keys = _const_value(self.pop(stack, ins), ins, self)
                    vals = [self.pop(stack, ins) for _ in range(ins.arg)][::-1]
                stack.append(_Keywords([(k, self.expr(v, ins)) for k, v in zip(keys, vals)]))
            elif op == "PUSH_NULL":
                stack.append(_NULL)
            elif op == "GET_ITER":
                stack.append(_Iter(self.expr(self.pop(stack, ins), ins)))
            elif op in ("COPY", "DUP_TOP"):
                n = ins.arg if op == "COPY" else 1
                if len(stack) < n:
                    raise self.error("stack underflow", ins)
                stack.append(stack[-n])
            elif op == "DUP_TOP_TWO":
                stack += stack[-2:]
            elif op in ("SWAP", "ROT_TWO"):
                n = ins.arg if op == "SWAP" else 2
                stack[-1], stack[-n] = stack[-n], stack[-1]
            elif op in ("ROT_THREE", "ROT_FOUR", "ROT_N"):
                n = {"ROT_THREE": 3, "ROT_FOUR": 4}.get(op, ins.arg)
                stack.insert(len(stack) - n, stack.pop())
            elif op in ("FORMAT_VALUE", "FORMAT_SIMPLE", "FORMAT_WITH_SPEC"):
                spec = None
                if op == "FORMAT_WITH_SPEC" or (op == "FORMAT_VALUE" and ins.arg & 0x04):
                    spec = _joined(self.expr(self.pop(stack, ins), ins), at)
                v = self.expr(self.pop(stack, ins), ins)
                conv = -1
                if op == "FORMAT_VALUE":
                    conv = _CONVERSIONS[ins.arg & 0x03]
                elif self.marked(v, "conversion"):
                    v, conv = v.value, v.conversion
                fv = at(ast.FormattedValue(value=v, conversion=conv, format_spec=spec))
                stack.append(at(ast.JoinedStr(values=[fv])))
            elif op == "CONVERT_VALUE":
                v = self.expr(self.pop(stack, ins), ins)
                node = at(ast.FormattedValue(value=v, conversion=_CONVERSIONS[ins.arg],
                                             format_spec=None))
                self.mark(node, "conversion")
                stack.append(node)
            elif op == "BUILD_STRING":
                parts = [self.expr(self.pop(stack, ins), ins) for _ in range(ins.arg)][::-1]
                values = []
                for p in parts:
                    values += p.values if isinstance(p, ast.JoinedStr) else [p]
                stack.append(at(ast.JoinedStr(values=values)))
            elif op == "LOAD_ASSERTION_ERROR":
                n = at(ast.Name(id="AssertionError", ctx=ast.Load()))
                self.mark(n, "assert")
                stack.append(n)
            elif op == "RAISE_VARARGS":
                if ins.arg == 0:
                    raise self.error("a bare 'raise' is not supported in kernels", ins,
                                     unsupported=True)
                cause = self.expr(self.pop(stack, ins), ins) if ins.arg == 2 else None
                exc = self.expr(self.pop(stack, ins), ins)
                sim.kind, sim.value = "raise", at(ast.Raise(exc=exc, cause=cause))
            elif op == "LOAD_CLOSURE":
                stack.append(_Closure(ins.argval))
            elif op == "MAKE_FUNCTION":
                if _PY <= (3, 10):
                    self.pop(stack, ins)          # the qualified name
                c = self.pop(stack, ins)
                if not isinstance(c, _Code):
                    raise self.error("MAKE_FUNCTION without a code object", ins)
                if c.code.co_name in _COMPREHENSIONS:
                    raise self.error(f"'{_COMPREHENSIONS[c.code.co_name]}' expressions are "
                                     "not supported in kernels", ins, unsupported=True)
                flags = ins.arg if _PY < (3, 13) else 0
                f = _Func(c.code, None)
                if flags & 0x08:
                    self.pop(stack, ins)          # the closure cells: names are enough
                if flags & 0x04:
                    self.pop(stack, ins)
                if flags & 0x02:
                    f.kwdefaults = self.pop(stack, ins)
                if flags & 0x01:
                    f.defaults = self.pop(stack, ins)
                stack.append(f)
            elif op == "SET_FUNCTION_ATTRIBUTE":
                f = self.pop(stack, ins)
                v = self.pop(stack, ins)
                if ins.arg == 0x01:
                    f.defaults = v
                elif ins.arg == 0x02:
                    f.kwdefaults = v
                stack.append(f)
            elif op == "LOAD_FAST_AND_CLEAR":       # 3.12+: an inlined comprehension
                raise self.error("comprehensions are not supported in kernels", ins,
                                 unsupported=True)
            elif op in _STATEMENTS:
                raise self.error(f"'{_STATEMENTS[op]}' statements are not supported in kernels",
                                 ins, unsupported=True)
            elif op in _EXPRESSIONS:
                raise self.error(f"'{_EXPRESSIONS[op]}' expressions are not supported in "
                                 "kernels", ins, unsupported=True)
            else:
                raise self.error("a construct outside the kernel language", ins)
            prev = op
        if sim.kind not in ("return", "raise"):
            if blk.kind == "cond":
                self.terminate_cond(sim, blk, stack)
            elif blk.kind == "jump":
                sim.kind, sim.target = "fall", blk.target
            elif blk.kind == "fall":
                sim.kind, sim.target = "fall", blk.fall
            elif blk.kind in ("return", "raise"):
                raise self.error("unexpected end of block", blk.instrs[-1])
        sim.stack = stack
        return sim

    def terminate_cond(self, sim, blk, stack):
        ins = blk.cond
        op = ins.opname
        v = self.pop(stack, ins)
        test = self.expr(v, ins)
        for n in ast.walk(test):
            # evaluated by the jump: a copy of it dropped later (COPY; POP_JUMP; POP_TOP in
            # ``a and b`` as a value) is not a statement of its own
            self.mark(n, "tested")
        if "NOT_NONE" in op:
            test, jump_if = self.at(ast.Compare(left=test, ops=[ast.IsNot()],
                                                comparators=[_const(None)]), ins), True
        elif "NONE" in op:
            test, jump_if = self.at(ast.Compare(left=test, ops=[ast.Is()],
                                                comparators=[_const(None)]), ins), True
        else:
            jump_if = "TRUE" in op
        keep = op.startswith("JUMP_IF_")        # JUMP_IF_FALSE_OR_POP: the value stays
        sim.kind = "cond"
        sim.test = test
        sim.jump_if = jump_if
        sim.when_jump = (blk.target, stack + [v] if keep else list(stack))
        sim.when_fall = (blk.fall, list(stack))

    def pop(self, stack, ins):
        if not stack:
            raise self.error("stack underflow (unrecognised control flow)", ins)
        return stack.pop()

    def expr(self, v, ins):
        if isinstance(v, ast.expr):
            return v
        if isinstance(v, _Func):
            if v.code.co_name != "<lambda>":
                # a def whose function object is passed on before it is bound: a decorator
                raise self.error("a function defined inside a kernel cannot have decorators",
                                 ins, unsupported=True)
            return self.lambda_(v, ins)
        raise self.error("a value that is not an expression", ins)

    def binop(self, stack, sym, ins):
        r = self.expr(self.pop(stack, ins), ins)
        lft = self.expr(self.pop(stack, ins), ins)
        inplace = sym.endswith("=") and sym not in ("==", "<=", ">=", "!=")
        base = sym[:-1] if inplace else sym
        if base not in _BINOPS:
            raise self.error(f"the operator {sym!r}", ins)
        node = self.at(ast.BinOp(left=lft, op=_BINOPS[base](), right=r), ins)
        if inplace:
            self.mark(node, "inplace")
        stack.append(node)

    def call(self, func, args, names, ins):
        func = self.expr(func, ins)
        args = [self.expr(a, ins) for a in args]
        nk = len(names)
        pos, kws = (args[:-nk], args[-nk:]) if nk else (args, [])
        keywords = [ast.keyword(arg=n, value=v) for n, v in zip(names, kws)]
        for k, v in zip(keywords, kws):
            self._copy_pos(k, v)
        return self.at(ast.Call(func=func, args=pos, keywords=keywords), ins)

    def store(self, stmts, stack, target, value, ins):
        """Emit ``target = value`` (``target op= …`` when ``value`` is an in-place operation
        on the same target), spilling stack entries that the store would change."""
        if isinstance(value, _Part):
            g = value.group
            g.slots[value.index] = target
            if all(s is not None for s in g.slots):
                tup = self.at(ast.Tuple(elts=list(g.slots), ctx=ast.Store()), ins)
                self.store(stmts, stack, tup, g.value, ins)
            return
        if isinstance(value, _Next):
            stmts.append(_ForTarget(target=target))
            return
        if isinstance(value, _Func):
            if isinstance(target, ast.Name) and value.code.co_name != "<lambda>":
                stmts.append(self.nested_def(value, target.id, ins))
                return
            value = self.lambda_(value, ins)
        value = self.expr(value, ins)
        self._spill(stmts, stack, target, ins)
        if self.marked(value, "inplace") and _same_target(value.left, target):
            node = ast.AugAssign(target=target, op=value.op, value=value.right)
        else:
            node = ast.Assign(targets=[target], value=value, type_comment=None)
        stmts.append(self.at(node, ins))

    def store_group(self, stmts, stack, run, ins):
        """Consecutive stores to names on one line: ``a = b = v`` (one value copied) or
        ``a, b = x, y`` (CPython drops the tuple and pairs the stores with the values by
        position, reordering them).  Emits the source's single assignment; False when the
        stack does not hold such values (the stores are then made one by one)."""
        names = []
        for i in run:
            names += list(i.argval) if i.opname == "STORE_FAST_STORE_FAST" else [i.argval]
        n = len(names)
        if len(stack) < n:
            return False
        values = stack[-n:][::-1]           # values[j] is what the j-th store pops
        if any(not isinstance(v, ast.expr) or self.marked(v, "inplace")
               for v in values):
            return False
        if len(names) != len(set(names)):
            return False
        targets = [self.at(ast.Name(id=nm, ctx=ast.Store()), ins) for nm in names]
        del stack[-n:]
        if all(v is values[0] for v in values):
            value = values[0]
        elif len({id(v) for v in values}) == n:
            # the values were pushed left to right: the deepest is the first in the source
            order = sorted(range(n), key=lambda j: -j)
            tup = self.at(ast.Tuple(elts=[targets[j] for j in order], ctx=ast.Store()), ins)
            value = self.at(ast.Tuple(elts=[values[j] for j in order], ctx=ast.Load()), ins)
            targets = [tup]
        else:
            stack += values[::-1]
            return False
        for t in targets:
            self._spill(stmts, stack, t, ins)
        stmts.append(self.at(ast.Assign(targets=targets, value=value, type_comment=None), ins))
        return True

    def _spill(self, stmts, stack, target, ins):
        """Stack entries are expressions evaluated where they are used; one that reads what
        this store changes is saved in a temporary first (``a, b = b, a``)."""
        names = {n.id for n in ast.walk(target) if isinstance(n, ast.Name)}
        memory = not isinstance(target, ast.Name)
        for k, v in enumerate(stack):
            if not isinstance(v, ast.expr) or isinstance(v, ast.Constant):
                continue
            reads = any(isinstance(n, ast.Name) and n.id in names for n in ast.walk(v)) or \
                (memory and any(isinstance(n, (ast.Subscript, ast.Attribute, ast.Call))
                                for n in ast.walk(v)))
            if reads:
                tmp = f"_cj_tmp{self.temps}"
                self.temps += 1
                stmts.append(self.at(ast.Assign(targets=[self.at(ast.Name(
                    id=tmp, ctx=ast.Store()), ins)], value=v, type_comment=None), ins))
                new = self.at(ast.Name(id=tmp, ctx=ast.Load()), ins)
                for j in range(len(stack)):
                    if stack[j] is v:
                        stack[j] = new

    def nested_def(self, f, name, ins):
        inner = _Decompiler(f.code, f"{self.qualname}.<locals>.{f.code.co_name}")
        defaults = ()
        if f.defaults is not None:
            d = self.expr(f.defaults, ins)
            defaults = d.elts if isinstance(d, ast.Tuple) else None
            if defaults is None:
                raise self.error("defaults of a nested function that are not a tuple", ins)
        fdef = inner.function(())
        fdef.args.defaults = list(defaults)
        if isinstance(f.kwdefaults, _Keywords):
            given = dict(f.kwdefaults.pairs)
            fdef.args.kw_defaults = [given.get(a.arg) for a in fdef.args.kwonlyargs]
        fdef.name = name
        return fdef

    def lambda_(self, f, ins):
        fdef = self.nested_def(f, "<lambda>", ins)
        if len(fdef.body) != 1 or not isinstance(fdef.body[0], ast.Return):
            raise self.error("a lambda whose body is not one expression", ins)
        value = fdef.body[0].value or _const(None)
        return self.at(ast.Lambda(args=fdef.args, body=value), ins)


# ---- helpers -------------------------------------------------------------------------------

def _is_cond(op):
    return op.startswith("POP_JUMP") or op in ("JUMP_IF_FALSE_OR_POP", "JUMP_IF_TRUE_OR_POP")


def _same_instr(a, b):
    if a.opname != b.opname:
        return False
    if a.opname == "LOAD_CONST":
        return type(a.argval) is type(b.argval) and a.argval == b.argval
    return a.arg == b.arg


def _cmp_name(ins):
    v = ins.argval
    if isinstance(v, str) and v in _CMPOPS:
        return v
    shift = 5 if _PY >= (3, 13) else (4 if _PY >= (3, 12) else 0)
    return dis.cmp_op[ins.arg >> shift]


def _const(v):
    if isinstance(v, tuple):
        return ast.Tuple(elts=[_const(x) for x in v], ctx=ast.Load())
    if isinstance(v, frozenset):
        return ast.Set(elts=[_const(x) for x in v])
    return ast.Constant(value=v)


_NAME_STORES = ("STORE_FAST", "STORE_DEREF", "STORE_FAST_STORE_FAST")


def _store_runs(instrs, lines):
    """{index: [instructions]} of each run of two or more name stores in a row on one line
    (a chained or a tuple assignment)."""
    runs, k = {}, 0
    while k < len(instrs):
        j = k
        while j < len(instrs) and instrs[j].opname in _NAME_STORES and \
                lines.get(instrs[j].offset) == lines.get(instrs[k].offset):
            j += 1
        count = sum(2 if i.opname == "STORE_FAST_STORE_FAST" else 1 for i in instrs[k:j])
        if count >= 2:
            runs[k] = instrs[k:j]
        k = max(j, k + 1)
    return runs


def _keywords_follow(blk, ins):
    """True when the dict that ``ins`` builds goes straight to ``CALL_FUNCTION_EX``."""
    k = blk.instrs.index(ins)
    rest = [i.opname for i in blk.instrs[k + 1:]]
    # or the keyword-only defaults of a nested def (the code, 3.10's name, MAKE_FUNCTION)
    return bool(rest) and (rest[0] == "CALL_FUNCTION_EX" or "MAKE_FUNCTION" in rest[:3])


def _const_value(v, ins, dec, single=False):
    if single and isinstance(v, ast.Constant) and isinstance(v.value, str):
        return v.value
    if isinstance(v, ast.Tuple) and all(isinstance(e, ast.Constant) for e in v.elts):
        return tuple(e.value for e in v.elts)
    raise dec.error("keyword names that are not constant", ins)


_CONVERSIONS = {0: -1, 1: ord("s"), 2: ord("r"), 3: ord("a")}


def _joined(spec, at):
    if isinstance(spec, ast.JoinedStr):
        return spec
    return at(ast.JoinedStr(values=[spec]))


def _none(v):
    if v is None or (isinstance(v, ast.Constant) and v.value is None):
        return None
    return v


def _ret(v):
    return None if isinstance(v, ast.Constant) and v.value is None else v


def _same_target(load, target):
    if isinstance(target, ast.Name):
        return isinstance(load, ast.Name) and load.id == target.id
    if isinstance(target, ast.Subscript):
        return isinstance(load, ast.Subscript) and load.value is target.value and \
            load.slice is target.slice
    if isinstance(target, ast.Attribute):
        return isinstance(load, ast.Attribute) and load.value is target.value and \
            load.attr == target.attr
    return False


_NEGATED = {ast.Eq: ast.NotEq, ast.NotEq: ast.Eq, ast.Is: ast.IsNot, ast.IsNot: ast.Is,
            ast.In: ast.NotIn, ast.NotIn: ast.In}


def _not(e, ins, dec):
    """``not e``, simplified where that is exact (``not not a``, De Morgan, ``==``/``!=``,
    ``is``, ``in``; an ordering comparison stays under ``not``: NaN)."""
    if isinstance(e, ast.UnaryOp) and isinstance(e.op, ast.Not):
        return e.operand
    if isinstance(e, ast.BoolOp):
        other = ast.Or if isinstance(e.op, ast.And) else ast.And
        node = ast.BoolOp(op=other(), values=[_not(v, ins, dec) for v in e.values])
        _Decompiler._copy_pos(node, e)
        return node
    if isinstance(e, ast.Compare) and len(e.ops) == 1 and type(e.ops[0]) in _NEGATED:
        node = ast.Compare(left=e.left, ops=[_NEGATED[type(e.ops[0])]()],
                           comparators=e.comparators)
        _Decompiler._copy_pos(node, e)
        return node
    return dec.at(ast.UnaryOp(op=ast.Not(), operand=e), ins)


def _bool(cls, a, b, ins, dec):
    vals = []
    for v in (a, b):
        if isinstance(v, ast.BoolOp) and isinstance(v.op, cls):
            vals += v.values
        else:
            vals.append(v)
    node = ast.BoolOp(op=cls(), values=_chain(vals) if cls is ast.And else vals)
    if isinstance(cls, type) and cls is ast.And and len(node.values) == 1:
        return node.values[0]
    node.lineno = getattr(a, "lineno", None) or 1
    node.col_offset = getattr(a, "col_offset", 0)
    node.end_lineno = getattr(b, "end_lineno", node.lineno)
    node.end_col_offset = getattr(b, "end_col_offset", 0)
    return node


def _chain(vals):
    """``a < b and b < c`` (the same ``b``: CPython's chained comparison) → ``a < b < c``."""
    out = []
    for v in vals:
        if out and isinstance(v, ast.Compare) and isinstance(out[-1], ast.Compare) and \
                v.left is out[-1].comparators[-1]:
            prev = out[-1]
            out[-1] = ast.Compare(left=prev.left, ops=prev.ops + v.ops,
                                  comparators=prev.comparators + v.comparators)
            _Decompiler._copy_pos(out[-1], prev)
        else:
            out.append(v)
    return out


def _choose(test, x, y, at):
    if x is test:
        return _bool(ast.Or, test, y, None, None)
    if y is test:
        return _bool(ast.And, test, x, None, None)
    return at(ast.IfExp(test=test, body=x, orelse=y))


def _unshare(root):
    """Give every place in the tree its own node (a value the bytecode copied with COPY)."""
    seen = set()

    def visit(node):
        for field, value in ast.iter_fields(node):
            if isinstance(value, ast.AST):
                if id(value) in seen:
                    value = copy.deepcopy(value)
                    setattr(node, field, value)
                seen.add(id(value))
                visit(value)
            elif isinstance(value, list):
                for i, v in enumerate(value):
                    if isinstance(v, ast.AST):
                        if id(v) in seen:
                            v = value[i] = copy.deepcopy(v)
                        seen.add(id(v))
                        visit(v)
    seen.add(id(root))
    visit(root)


_TERMINAL = (ast.Return, ast.Break, ast.Continue, ast.Raise)


def _ends(body):
    return bool(body) and isinstance(body[-1], _TERMINAL)


def _dump(n):
    return ast.dump(n)


class _Cleanup:
    """The source forms of what the structuring produced."""

    def __init__(self, dec):
        self.dec = dec

    def function_body(self, body):
        # the copies of the final return first, while each if still has both branches
        body = self._tail_same(body, ast.Return)
        body = self.stmts(body, in_loop=False)
        return self._strip_none_return(body)

    def stmts(self, body, in_loop):
        out = []
        for s in body:
            out += self.stmt(s, in_loop)
        return [self.pattern(s) for s in self._flatten(out)]

    @staticmethod
    def _flatten(body):
        """``if c: A; T  else: B`` (T ends the branch) → ``if c: A; T`` then ``B``; and
        ``if c: A  else: B; T`` → ``if not c: B; T`` then ``A``."""
        todo = list(body)
        out = []
        while todo:
            s = todo.pop(0)
            out.append(s)
            if not isinstance(s, ast.If) or not s.body or not s.orelse:
                continue
            # a raise on the else side reads as a guard (an assert) before the rest
            guard = _ends(s.orelse) and isinstance(s.orelse[-1], ast.Raise) and \
                len(s.orelse) <= len(s.body)
            if _ends(s.body) and not guard:
                todo[:0], s.orelse = s.orelse, []
            elif _ends(s.orelse):
                todo[:0] = s.body
                s.test, s.body, s.orelse = _not(s.test, None, _Fake()), s.orelse, []
        return out

    def stmt(self, s, in_loop):
        if isinstance(s, ast.If):
            s.body = self.stmts(s.body, in_loop)
            s.orelse = self.stmts(s.orelse, in_loop)
            if not s.body and s.orelse:
                s.test, s.body, s.orelse = _not(s.test, None, _Fake()), s.orelse, []
            if not s.body:
                s.body = [ast.Pass()]
            return [s]
        if isinstance(s, ast.While):
            s.body = self.stmts(self._tail_same(s.body, ast.Continue), True)
            self._while_test(s)
            s.body = self._strip_continue(s.body) or [ast.Pass()]
            s.orelse = self.stmts(s.orelse, in_loop)
            return [s]
        if isinstance(s, ast.For):
            s.body = self._strip_continue(self.stmts(self._tail_same(s.body, ast.Continue),
                                                     True)) or [ast.Pass()]
            s.orelse = self.stmts(s.orelse, in_loop)
            return [s]
        return [s]

    def pattern(self, s):
        if isinstance(s, ast.If):
            a = self._assert(s)
            if a is not None:
                return a
            w = self._guarded_while(s)
            if w is not None:
                return w
        return s

    def _assert(self, s):
        # if test: <nothing> else: raise AssertionError(msg)
        def is_assert_raise(body):
            if len(body) != 1 or not isinstance(body[0], ast.Raise):
                return None
            e = body[0].exc
            if self.dec.marked(e, "assert"):
                return (None,)
            if isinstance(e, ast.Call) and self.dec.marked(e.func, "assert") and \
                    len(e.args) == 1 and not e.keywords:
                return (e.args[0],)
            return None
        if not s.body or (len(s.body) == 1 and isinstance(s.body[0], ast.Pass)):
            m = is_assert_raise(s.orelse)
            test = s.test
        elif not s.orelse:
            m = is_assert_raise(s.body)
            test = _not(s.test, None, _Fake())
        else:
            return None
        if m is None:
            return None
        node = ast.Assert(test=test, msg=m[0])
        _Decompiler._copy_pos(node, s)
        return node

    def _while_test(self, w):
        """``while True: if test: body; continue`` + ``[else-part] break`` → ``while test:
        body else: else-part`` (and the same with the test inverted)."""
        if not (isinstance(w.test, ast.Constant) and w.test.value is True and not w.orelse):
            return
        b = w.body
        if not b or not isinstance(b[0], ast.If) or b[0].orelse:
            return
        i = b[0]

        def own_jumps(stmts):
            return any(isinstance(n, (ast.Break, ast.Continue))
                       for st in stmts for n in _walk_loop(st))
        if isinstance(b[-1], ast.Break) and i.body and isinstance(i.body[-1], ast.Continue) \
                and len(b) >= 2 and not own_jumps(b[1:-1]):
            w.test, w.body, w.orelse = i.test, i.body, b[1:-1]
        elif i.body and isinstance(i.body[-1], ast.Break) and not own_jumps(i.body[:-1]):
            w.test, w.body, w.orelse = _not(i.test, None, _Fake()), b[1:], i.body[:-1]

    def _guarded_while(self, s):
        """``if a: while True: [if b: …] …; if a: continue`` + ``break`` → ``while a [and b
        …]: …``: a compound test whose repetition at the bottom CPython jumps into the first
        test's successor, so that it was not folded."""
        if s.orelse or len(s.body) != 1 or not isinstance(s.body[0], ast.While):
            return None
        w = s.body[0]
        if not (isinstance(w.test, ast.Constant) and w.test.value is True) or w.orelse:
            return None
        found = _peel_tests(w.body, _dump(s.test))
        if found is None:
            return None
        tests, body = found
        test = s.test if not tests else _bool(ast.And, s.test, tests[0], None, None)
        for t in tests[1:]:
            test = _bool(ast.And, test, t, None, None)
        new = ast.While(test=test, body=body or [ast.Pass()], orelse=[])
        _Decompiler._copy_pos(new, w)
        return new

    def _strip_continue(self, body):
        if not body:
            return body
        last = body[-1]
        if isinstance(last, ast.Continue):
            return body[:-1]
        if isinstance(last, ast.If):
            last.body = self._strip_continue(last.body) or [ast.Pass()]
            last.orelse = self._strip_continue(last.orelse)
        return body

    def _tail_same(self, body, kind):
        """``if c: A; T  else: B; T`` at the end of ``body`` (T the same ``kind`` statement:
        CPython copies the final return, or the jump back of a loop, into each branch) →
        ``if c: A  else: B`` then ``T``."""
        if not body or not isinstance(body[-1], ast.If):
            return body
        s = body[-1]
        s.body = self._tail_same(s.body, kind)
        s.orelse = self._tail_same(s.orelse, kind)
        # a branch that is only T is a guard clause (``if c: return``): it stays
        if len(s.body) > 1 and len(s.orelse) > 1 and isinstance(s.body[-1], kind) and \
                isinstance(s.orelse[-1], kind) and _dump(s.body[-1]) == _dump(s.orelse[-1]):
            t = s.orelse[-1]
            s.body = s.body[:-1] or [ast.Pass()]
            s.orelse = s.orelse[:-1]
            return body + [t]
        return body

    def _strip_none_return(self, body):
        if not body:
            return body
        last = body[-1]
        if isinstance(last, ast.Return) and last.value is None:
            # the function ends here anyway: a return None just before is implicit too
            return self._strip_none_return(body[:-1])
        if isinstance(last, ast.If):
            last.body = self._strip_none_return(last.body) or [ast.Pass()]
            last.orelse = self._strip_none_return(last.orelse)
        return body


def _peel_tests(body, first):
    """``([b, c …], S)`` when ``body`` is ``if b: (if c: … S; if <first>: continue; break)
    break; break`` (the nested tests of a compound while test), else None."""
    if len(body) >= 2 and isinstance(body[-1], ast.Break) and isinstance(body[-2], ast.If):
        last = body[-2]
        if not last.orelse and _dump(last.test) == first and \
                [type(x) for x in last.body] in ([ast.Continue], [ast.Pass]):
            inner = body[:-2]
            if not any(isinstance(n, (ast.Break, ast.Continue))
                       for st in inner for n in _walk_loop(st)):
                return [], inner
    if len(body) == 2 and isinstance(body[0], ast.If) and not body[0].orelse and \
            isinstance(body[1], ast.Break):
        found = _peel_tests(body[0].body, first)
        if found is not None:
            return [body[0].test] + found[0], found[1]
    return None


class _Fake:
    """Placement for nodes made while cleaning up: they take their operand's position."""

    @staticmethod
    def at(node, ins):
        operand = getattr(node, "operand", None)
        if operand is not None:
            _Decompiler._copy_pos(node, operand)
        return node


def _walk_loop(node):
    """The nodes of ``node`` outside nested loops (whose break/continue are their own)."""
    yield node
    if isinstance(node, (ast.For, ast.While)):
        for st in node.orelse:
            yield from _walk_loop(st)
        return
    for child in ast.iter_child_nodes(node):
        yield from _walk_loop(child)
