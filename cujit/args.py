"""``numba.cuda.args``: the copy-direction hints of kernel arguments (``In``, ``Out``,
``InOut``, their base ``ArgHint``) and ``wrap_arg``, which argument handlers
(``jit(extensions=[...])`` objects with ``prepare_args``) use to give a plain argument a
default direction.  The classes are cujit's own (``cujit.In is cujit.args.In``)."""
from .dispatch.launch_args import ArgHint, In, InOut, Out

__all__ = ["ArgHint", "In", "Out", "InOut", "wrap_arg"]


def wrap_arg(value, default=InOut):
    """``value`` itself when it is already a hint (``In``, ``Out``, ``InOut``), else
    ``default(value)``: ``wrap_arg(host_array, default=cuda.In)`` makes a host array one the
    launch copies to the device only.  TypeError when ``default`` is not one of the hint
    classes (numba calls any callable)."""
    if not (isinstance(default, type) and issubclass(default, ArgHint)):
        raise TypeError(f"wrap_arg(): default must be cujit.In, cujit.Out or cujit.InOut, "
                        f"got {default!r}")
    return value if isinstance(value, ArgHint) else default(value)
