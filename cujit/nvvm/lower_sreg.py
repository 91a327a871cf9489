"""PTX special registers (``threadIdx.x`` → ``%tid.x`` …) as LLVM reads with ``!range``
metadata; used by the lowering of thread indexing, exceptions and the grid barrier.
"""
from llvmlite import ir

from .ltypes import I32

__all__ = ["sreg"]

_SREG = {"threadIdx": "tid", "blockIdx": "ctaid", "blockDim": "ntid", "gridDim": "nctaid"}


# Value ranges of the special registers (CUDA limits), given to LLVM as !range metadata so
# that it knows thread indices are non-negative (no negative-index wrap code for them).
_RANGES = {"tid": ((0, 1024), (0, 1024), (0, 64)), "ntid": ((1, 1025), (1, 1025), (1, 65)),
           "ctaid": ((0, 2 ** 31 - 1), (0, 65535), (0, 65535)),
           "nctaid": ((1, 2 ** 31), (1, 65536), (1, 65536))}


def sreg(lw, name, axis):
    """Value (i32) of a PTX special register: ``threadIdx.x`` → ``%tid.x`` …"""
    if name == "laneid":
        reg, rng = "laneid", (0, 32)
    else:
        reg = _SREG[name]
        rng = _RANGES[reg]["xyz".index(axis)]
        reg = f"{reg}.{axis}"
    fn = lw.m.declare(f"llvm.nvvm.read.ptx.sreg.{reg}", ir.FunctionType(I32, []))
    c = lw.b.call(fn, [])
    c.set_metadata("range", lw.m.range_md(*rng))
    return c
