"""Device arrays captured by a simulated kernel as globals or closure variables.

numba.cuda kernels may read and write a device array (or any object exposing
``__cuda_array_interface__``) that they reference as a global or closure variable.  On the
simulator the kernel is plain Python, so such names would reach the host-side object (a
``DeviceNDArray`` whose element access is a host copy, or a CAI object that cannot be indexed
at all).  :func:`rebind` gives the kernel a copy of its function whose captured device arrays
are the same NumPy views of simulated device memory that arguments get (checked ones when
checks are on), so reads, writes, bounds and race checks behave as for arguments.
"""
import types

import numpy as np
from ..memory.protocol import has_device_pointer

__all__ = ["rebind"]


def _is_device_array(value):
    if isinstance(value, (type, np.ndarray)):
        return False
    try:
        return has_device_pointer(value) or hasattr(value, "__cuda_array_interface__")
    except Exception:
        return False


def rebind(pyfunc, convert, wrap):
    """``pyfunc`` itself when it captures no device array and uses no builtin with kernel
    semantics; otherwise a copy of it whose captured device arrays are
    ``wrap(convert(value), name)`` and whose builtins are ``builtins.KERNEL_BUILTINS``."""
    from .builtins import KERNEL_BUILTINS
    code = pyfunc.__code__
    glb = pyfunc.__globals__
    repl = {}
    for name, fn in KERNEL_BUILTINS.items():
        if name in code.co_names and name not in glb:
            repl[name] = fn
    for name in code.co_names:
        v = glb.get(name)
        if v is not None and _is_device_array(v):
            repl[name] = wrap(convert(v), name)
    closure = pyfunc.__closure__
    cells, changed = [], False
    for name, cell in zip(code.co_freevars, closure or ()):
        try:
            v = cell.cell_contents
        except ValueError:      # an empty cell (a name bound later in the outer function)
            cells.append(cell)
            continue
        if _is_device_array(v):
            cells.append(types.CellType(wrap(convert(v), name)))
            changed = True
        else:
            cells.append(cell)
    if not repl and not changed:
        return pyfunc
    if repl:
        glb = dict(glb)
        glb.update(repl)
    fn = types.FunctionType(code, glb, pyfunc.__name__, pyfunc.__defaults__,
                            tuple(cells) if closure else None)
    fn.__kwdefaults__ = pyfunc.__kwdefaults__
    fn.__qualname__ = pyfunc.__qualname__
    return fn
