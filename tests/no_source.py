"""``without_source(f)``: the same function (code, globals, closure, defaults) with no file
behind it, as if it had been typed at the REPL or generated with ``exec``: every code object's
``co_filename`` is replaced by ``NO_SOURCE``, so ``inspect`` cannot read it and cujit's front
end must rebuild it from its bytecode."""
import types

NO_SOURCE = "<no source>"


def _code(code):
    consts = tuple(_code(c) if isinstance(c, types.CodeType) else c for c in code.co_consts)
    return code.replace(co_filename=NO_SOURCE, co_consts=consts)


def without_source(f):
    g = types.FunctionType(_code(f.__code__), f.__globals__, f.__name__, f.__defaults__,
                           f.__closure__)
    g.__qualname__ = f.__qualname__
    g.__kwdefaults__ = f.__kwdefaults__
    return g
