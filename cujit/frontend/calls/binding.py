"""Binding the argument nodes of a recognised call to its parameter names, for the calls
whose modules check each argument themselves (``cuda.shared.array``, ``cujit.wmma``,
``cujit.wgmma`` …): one place for the wording of a wrong count, an unknown or repeated
keyword and a missing argument.
"""

__all__ = ["bind_arguments", "TypedArgs"]


def bind_arguments(typer, node, what, names, optional=()):
    """``{name: node}`` of the arguments of call ``node`` to ``what()`` (its name in
    messages), whose parameters are ``names`` in order; those in ``optional`` may be left
    out.  TypingError for too many positional arguments, a keyword not in ``names`` or
    given twice, and a missing argument."""
    out = dict(zip(names, node.args))
    if len(node.args) > len(names):
        raise typer.error(f"{what}() takes at most {len(names)} arguments "
                          f"({', '.join(names)}), got {len(node.args)}", node)
    for kw in node.keywords:
        if kw.arg not in names or kw.arg in out:
            raise typer.error(f"{what}() got an unexpected or repeated argument "
                              f"'{kw.arg}'", kw.value if kw.arg else node)
        out[kw.arg] = kw.value
    missing = [n for n in names if n not in out and n not in optional]
    if missing:
        raise typer.error(f"{what}() is missing argument(s): {', '.join(missing)}", node)
    return out


class TypedArgs:
    """The typer with the types of one call's arguments (typed once, by ``calls``):
    ``expr(node)`` answers from ``types`` (``{id(node): type}``), every other attribute is
    the typer's."""
    __slots__ = ("typer", "types")

    def __init__(self, typer, types):
        self.typer, self.types = typer, types

    def expr(self, node):
        return self.types[id(node)]

    def __getattr__(self, name):
        return getattr(self.typer, name)
