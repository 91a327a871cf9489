"""Kernels written as source text at run time, and lambdas turned into ``def``s.

The compiler reads a function's source (``ast`` positions are file positions), so a kernel
generated for a ufunc's arity and dimensions is given a file of its own: its text is
registered in ``linecache`` under a unique pseudo file name before it is ``exec``'d.  Errors
in it then point at that text, and the simulator runs the same function.
"""
import ast
import inspect
import itertools
import linecache
import textwrap

from ..frontend.bytecode import decompile
from ..frontend.errors import TypingError

_counter = itertools.count()


def define(source, name, namespace):
    """Execute ``source`` (the text of ``def name(...)``) with globals ``namespace`` and
    return the function, its text readable by the compiler."""
    filename = f"<cujit-generated-{next(_counter)}-{name}>"
    source = textwrap.dedent(source)
    lines = source.splitlines(keepends=True)
    linecache.cache[filename] = (len(source), None, lines, filename)
    exec(compile(source, filename, "exec"), namespace)
    return namespace[name]


def as_def(func):
    """``func`` itself when it is a function with a ``def``; a lambda becomes an equivalent
    ``def`` (same globals) that the compiler can read.

    A lambda is found in its file by its first line and matched to its code object (several
    lambdas on one line are told apart by their bytecode, constants and names); one without a
    file (the REPL, ``python -c``, ``exec``) is rebuilt from its bytecode.  Raises
    TypeError when ``func`` is not a Python function, TypingError when a lambda's source cannot
    be found or it captures closure variables.
    """
    if not inspect.isfunction(func):
        raise TypeError(f"expected a Python function, got {func!r} ({type(func).__name__})")
    if func.__name__ != "<lambda>":
        return func
    if func.__closure__:
        raise TypingError("a lambda that captures local variables cannot be compiled; "
                          "write it as a def")
    code = func.__code__
    lines = linecache.getlines(code.co_filename)
    if not lines:
        # typed at the REPL, passed with -c or generated: its bytecode says what it computes
        return _from_bytecode(func)
    argnames = list(code.co_varnames[:code.co_argcount])
    first = code.co_firstlineno - 1
    found = []
    # the lambda starts on its first line and may continue on the next ones
    for last in range(first + 1, min(first + 30, len(lines)) + 1):
        text = textwrap.dedent("".join(lines[first:last])).strip()
        found = [n for n in _lambdas(text)
                 if [a.arg for a in n.args.args] == argnames and _same_code(n, code)]
        if found:
            break
    # candidates with the lambda's bytecode, constants and names compute the same thing
    if not found:
        raise TypingError("cannot find the lambda's source in "
                          f"{code.co_filename}:{code.co_firstlineno}; write it as a def")
    tree = found[0]
    src = f"def _lambda({', '.join(argnames)}):\n    return {ast.unparse(tree.body)}\n"
    return define(src, "_lambda", dict(func.__globals__))


def _from_bytecode(func):
    tree = decompile(func)
    # a lambda holds one expression, but CPython 3.12 compiles ``x if c else y`` into two
    # returns: the rebuilt body is then statements, each path ending in a return
    if not tree.body or not isinstance(tree.body[-1], ast.Return) or \
            tree.body[-1].value is None:
        raise TypingError(f"cannot rebuild the lambda in {func.__code__.co_filename!r} from its "
                          "bytecode; write it as a def")
    tree.name = "_lambda"
    tree.decorator_list = []
    return define(ast.unparse(ast.fix_missing_locations(tree)) + "\n", "_lambda",
                  dict(func.__globals__))


def _lambdas(text):
    """Every ``lambda`` node in ``text`` (the lines holding a lambda: a whole statement, or a
    fragment of one, e.g. inside a call's argument list spread over lines)."""
    try:
        return [n for n in ast.walk(ast.parse(text)) if isinstance(n, ast.Lambda)]
    except SyntaxError:
        pass
    found = []
    start = text.find("lambda")
    while start >= 0:
        for end in range(len(text), start, -1):       # the longest piece that parses
            try:
                # parenthesised: a lambda may continue on the next line inside a call
                tree = ast.parse("(" + text[start:end] + ")", mode="eval")
            except SyntaxError:
                continue
            if isinstance(tree.body, ast.Lambda):
                found.append(tree.body)
            break
        start = text.find("lambda", start + 1)
    return found


def _same_code(node, code):
    """True when the lambda ``node`` compiles to the bytecode of ``code``."""
    try:
        outer = compile(ast.Expression(body=node), "<lambda>", "eval")
    except (SyntaxError, ValueError):
        return False
    inner = [c for c in outer.co_consts if inspect.iscode(c)]
    return bool(inner) and (inner[0].co_code, inner[0].co_consts, inner[0].co_names) == \
        (code.co_code, code.co_consts, code.co_names)
