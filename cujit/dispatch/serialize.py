"""Pickling the Python functions of kernels and device functions (numba-cuda pickles its
dispatchers with cloudpickle: ``pickle.dumps(kernel)``, kernels sent to worker processes).

A function that pickle can find by its module and qualified name goes by reference, as pickle
does for any function.  Any other — a kernel defined inside a function, or the ``py_func`` of
a module-level kernel (its module's name is bound to the kernel, not to the function) — goes
by value: its code object (``marshal``, so only to the same Python version, as cloudpickle),
its name, qualified name, module, defaults, closure cell contents and the globals its code
names (modules by name, other values pickled as they are; each must be picklable).  The
rebuilt function gets a globals dict of its own with just those names.
"""
import builtins
import importlib
import marshal
import pickle
import sys
import types

__all__ = ["reduce_function", "rebuild_function", "find_by_name", "as_function"]


def find_by_name(module, qualname):
    """The object ``module.qualname`` names (None when the module is not imported or the
    name does not resolve: a function's qualified name with ``<locals>`` never does)."""
    mod = sys.modules.get(module)
    if mod is None or "<" in qualname:
        return None
    obj = mod
    for part in qualname.split("."):
        obj = getattr(obj, part, None)
        if obj is None:
            return None
    return obj


def _names(code):
    """The global names ``code`` and the code objects nested in it read."""
    out = set(code.co_names)
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            out |= _names(c)
    return out


def _global_items(func):
    g = func.__globals__
    items = []
    for name in sorted(_names(func.__code__)):
        if name not in g:
            continue                # a builtin, an attribute name, or undefined yet
        v = g[name]
        if isinstance(v, types.ModuleType):
            items.append((name, "module", v.__name__))
        else:
            items.append((name, "value", v))
    return tuple(items)


def reduce_function(func):
    """What pickles ``func``: ``func`` itself when pickle finds it by name, else a
    ``(rebuild_function, args)`` pair (see the module docstring).  PicklingError for a
    function whose closure cell is still empty (a recursive local function)."""
    if find_by_name(func.__module__, func.__qualname__) is func:
        return func
    closure = None
    if func.__closure__:
        try:
            closure = tuple(c.cell_contents for c in func.__closure__)
        except ValueError:
            raise pickle.PicklingError(
                f"cannot pickle {func.__qualname__}: a variable it captures is not "
                f"assigned yet") from None
    return (rebuild_function, (marshal.dumps(func.__code__), func.__name__, func.__qualname__,
                               func.__module__, _global_items(func), func.__defaults__,
                               func.__kwdefaults__, closure, func.__doc__))


def rebuild_function(code, name, qualname, module, global_items, defaults, kwdefaults,
                     closure, doc):
    """The function :func:`reduce_function` pickled by value."""
    g = {"__builtins__": builtins, "__name__": module}
    for gname, kind, value in global_items:
        g[gname] = importlib.import_module(value) if kind == "module" else value
    cells = None if closure is None else tuple(types.CellType(v) for v in closure)
    func = types.FunctionType(marshal.loads(code), g, name, defaults, cells)
    func.__qualname__ = qualname
    func.__module__ = module
    func.__kwdefaults__ = kwdefaults
    func.__doc__ = doc
    return func


def as_function(reduced):
    """The function from a :func:`reduce_function` result unpickled."""
    if isinstance(reduced, tuple):
        return reduced[0](*reduced[1])
    return reduced
