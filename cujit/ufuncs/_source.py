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

from ..compiler.errors import TypingError

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

    Raises TypeError when ``func`` is not a Python function, TypingError when a lambda's
    source cannot be found unambiguously or it captures closure variables.
    """
    if not inspect.isfunction(func):
        raise TypeError(f"expected a Python function, got {func!r} ({type(func).__name__})")
    if func.__name__ != "<lambda>":
        return func
    if func.__closure__:
        raise TypingError("a lambda that captures local variables cannot be compiled; "
                          "write it as a def")
    try:
        lines, _ = inspect.getsourcelines(func)
    except (OSError, TypeError) as e:
        raise TypingError(f"cannot read the source of the lambda: {e}") from None
    text = textwrap.dedent("".join(lines)).strip()
    tree = None
    # the lambda's line may be a fragment of a larger statement: trim until it parses
    for end in range(len(text), 0, -1):
        for start in range(0, len(text)):
            if not text.startswith("lambda", start):
                continue
            try:
                tree = ast.parse(text[start:end], mode="eval")
            except SyntaxError:
                continue
            if isinstance(tree.body, ast.Lambda):
                break
            tree = None
        if tree is not None:
            break
    code = func.__code__
    argnames = list(code.co_varnames[:code.co_argcount])
    if tree is None or [a.arg for a in tree.body.args.args] != argnames:
        raise TypingError("cannot find the lambda's source unambiguously; write it as a def")
    src = f"def _lambda({', '.join(argnames)}):\n    return {ast.unparse(tree.body.body)}\n"
    return define(src, "_lambda", dict(func.__globals__))
