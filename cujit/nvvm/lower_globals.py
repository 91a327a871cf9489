"""Lowering of device arrays captured as globals or closure variables.

numba.cuda lets a kernel read and write a device array (or any object exposing
``__cuda_array_interface__``) that it references as a global or closure variable: the
array's device pointer, shape and strides are frozen into the compiled code when the kernel
is compiled (numba-cuda's tests ``test_cuda_array_interface`` / ``test_globals``).  cujit does
the same: the value is typed by ``typeof`` and lowered here as an array struct whose data
pointer is the integer address (``inttoptr``).  Host NumPy arrays captured the same way go to
constant memory instead (``lower_arrays.const_global_array``).
"""
from llvmlite import ir

from .lower_arrays import make_array
from .ltypes import I64, mtype

__all__ = ["device_global_array"]


def device_global_array(lw, value, aty):
    """The array value of captured device array ``value`` (of type ``aty``)."""
    cai = value.__cuda_array_interface__
    ptr = int(cai["data"][0] or 0)
    shape = [int(n) for n in cai["shape"]]
    item = aty.dtype.dtype.itemsize
    strides = cai.get("strides")
    if strides is None:
        strides, acc = [], item
        for n in reversed(shape):
            strides.append(acc)
            acc *= n
        strides.reverse()
    data = lw.b.inttoptr(ir.Constant(I64, ptr), mtype(aty.dtype).as_pointer())
    return make_array(lw, data, [ir.Constant(I64, n) for n in shape],
                      [ir.Constant(I64, int(s)) for s in strides], aty)
