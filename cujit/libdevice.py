"""``cuda.libdevice``: NVIDIA's libdevice functions, callable in kernels and device functions
(numba.cuda's ``from numba.cuda import libdevice``).

``libdevice.sinf(x)``, ``libdevice.sin(x)``, ``libdevice.fast_sinf(x)``,
``libdevice.popc(i)``, ``libdevice.dadd_rn(a, b)`` … call libdevice's ``__nv_<name>`` on a
GPU; the simulator computes the same values on the CPU
(:mod:`cujit.simulator.libdevice_sim`).  Arguments are converted to the types libdevice
declares (``sinf`` takes a float32, ``sin`` a float64, ``popc`` an int32); functions with
out-pointers (``sincos``, ``sincosf``, ``frexp``, ``modf``, ``remquo``, ``fast_sincosf``)
return tuples.  The list of functions and their types is
:data:`cujit.frontend.libdevice_table.FUNCTIONS`; each function's docstring gives its
signature and https://docs.nvidia.com/cuda/libdevice-users-guide/ its exact semantics.

The ``fast_*`` approximations (``fast_sinf``, ``fast_expf`` …) compute the precise function
on the simulator; on a GPU they differ from it by the error the libdevice guide gives for
each (for example ``fast_sinf``: 2^-21.41 absolute error in [-pi, pi]).

Outside a kernel the functions raise TypeError (numba.cuda's stubs return None there).
"""
from .frontend.libdevice_table import FUNCTIONS

__all__ = sorted(FUNCTIONS)


def _stub(fn):
    def stub(*args):
        from .kernelstate import state
        if state.current is None:
            raise TypeError(f"libdevice.{fn.name}() can only be called in a kernel or device "
                            "function (compiled for the GPU, or run by the simulator)")
        # a call the simulator's typed rewrite did not replace (it normally does)
        from .simulator.libdevice_sim import call_converted
        return call_converted(fn, args)

    params = ", ".join(str(t) for t in fn.params)
    outs = (" and returns the out-values " + ", ".join(str(t) for t in fn.outs)) \
        if fn.outs else ""
    stub.__name__ = stub.__qualname__ = fn.name
    stub.__module__ = __name__
    stub.__doc__ = (f"libdevice ``{fn.symbol}({params})`` → {fn.result}{outs}.\n\n"
                    f"See https://docs.nvidia.com/cuda/libdevice-users-guide/{fn.symbol}.html"
                    ".  Only callable in kernels and device functions (TypeError "
                    "elsewhere).")
    stub.cujit_libdevice = fn.name
    return stub


globals().update({name: _stub(fn) for name, fn in FUNCTIONS.items()})
