"""C pointers on the simulator (``CPointer`` / ``voidptr`` values in kernels).

A pointer is a :class:`SimPointer`: the memory it can reach (a flat NumPy or checked array
of its element type), the element it points at, and its type.  ``p[i]`` reads and writes that
memory with a bounds check, always (checks on or off: an index outside the memory the
simulator knows would otherwise read or corrupt other host memory).  What a pointer can
reach:

- ``ffi.from_buffer(arr)`` (and an array passed for a pointer parameter of a declared C
  function): the array's own elements, as numba's cffi support makes them one C buffer;
- a pointer kernel parameter (a device address, an int, as numba.cuda takes it): the rest of
  the simulated allocation that holds the address (``cuMemGetAddressRange``).  An address
  outside every allocation (0 included) is a pointer that faults when dereferenced, as on a
  GPU; passing it on is fine.

Accesses through a pointer from ``ffi.from_buffer`` of a checked array (checks on) are that
array's own accesses: race-checked and recorded by the access report as indexing it is;
a pointer kernel parameter's memory is race-checked as a global array argument's
(``kernel.run_kernel`` wraps it), not recorded by the access report.  Linked C code
cannot run here (``declare_device(..., sim=f)`` gets the pointer and may index it).
"""
import operator

import numpy as np

from ..driver import get_driver
from ..driver.errors import CudaAPIError
from .. import types as T
from .checked import CheckedArray, unwrap
from .errors import OutOfBoundsError

__all__ = ["SimPointer", "from_buffer", "from_address", "as_pointer"]


class SimPointer:
    """A pointer of type ``pointer_type`` (a cujit ``CPointer`` or ``RawPointer``) to element
    ``start`` of ``data`` (a flat NumPy or checked array of the element dtype, or None when
    the pointer reaches no memory the simulator knows: then any access raises).  ``address``: the device
    address for a pointer made from one (None otherwise); ``name``: how errors name it."""
    __slots__ = ("data", "start", "pointer_type", "address", "name")

    def __init__(self, data, start, pointer_type, address=None, name="pointer"):
        self.data = data
        self.start = int(start)
        self.pointer_type = pointer_type
        self.address = address
        self.name = name

    def _at(self, i):
        if isinstance(self.pointer_type, T.RawPointer):
            raise TypeError(f"{self.name} is a void* pointer: it cannot be indexed")
        try:
            j = self.start + operator.index(i)
        except TypeError:
            raise TypeError(f"{self.name} ({self.pointer_type}) takes one integer index, got "
                            f"{i!r}") from None
        if self.data is None:
            where = "" if self.address is None else f" {self.address:#x}"
            raise OutOfBoundsError(
                f"{self.name} ({self.pointer_type}) at address{where} does not point into "
                f"simulated device memory: {self.name}[{i}] faults (an illegal address on a "
                f"GPU)")
        n = self.data.shape[0]
        if not 0 <= j < n:
            raise OutOfBoundsError(
                f"index {i} is out of bounds for {self.name} ({self.pointer_type}): it points "
                f"at element {self.start} of a buffer of {n} element(s), so indices "
                f"{-self.start} to {n - self.start - 1} are inside it")
        return j

    def __getitem__(self, i):
        return self.data[self._at(i)]

    def __setitem__(self, i, value):
        self.data[self._at(i)] = value

    def as_array(self, shape, order, dtype=None):
        """``carray``/``farray`` of this pointer: a checked array of ``shape`` (an int or a
        tuple of ints) in ``order`` ('C' or 'F') over the memory from the element pointed
        at, of ``dtype`` (default the pointer's; required for ``void*``).  OutOfBoundsError
        when the array would reach past the memory the pointer reaches; TypeError for a
        dtype other than the pointer's."""
        shape = (int(shape),) if not isinstance(shape, tuple) else tuple(int(n) for n in shape)
        if isinstance(self.pointer_type, T.RawPointer):
            if dtype is None:
                raise TypeError(f"explicit dtype required for void* argument ({self.name})")
            if self.address is None:
                raise TypeError(f"{self.name} is a void* pointer without an address")
            return from_address(self.address, T.CPointer(dtype), self.name).as_array(
                shape, order)
        if dtype is not None and T.as_dtype_type(dtype) is not self.pointer_type.dtype:
            raise TypeError(f"mismatching dtype '{dtype}' for pointer {self.pointer_type}")
        n = 1
        for d in shape:
            n *= d
        if n:
            self._at(0)         # raises for a pointer that reaches no memory
            if self.start + n > self.data.shape[0]:
                raise OutOfBoundsError(
                    f"an array of shape {shape} ({n} elements) over {self.name} "
                    f"({self.pointer_type}) is out of bounds: the pointer reaches "
                    f"{self.data.shape[0] - self.start} element(s)")
            flat = self.data[self.start:self.start + n]
        else:
            flat = np.empty(0, np.dtype(self.pointer_type.dtype.dtype))
        if isinstance(flat, CheckedArray):
            return flat.reshape(shape, order=order)
        return CheckedArray(flat.reshape(shape, order=order), self.name)

    def __repr__(self):
        n = 0 if self.data is None else self.data.shape[0]
        return f"<simulated {self.pointer_type} {self.name}: element {self.start} of {n}>"


def from_buffer(arr, name="ffi.from_buffer(...)"):
    """``ffi.from_buffer(arr)`` in a simulated kernel: a :class:`SimPointer` to the first
    element of ``arr`` (a NumPy or checked simulator array) reaching its elements.  TypeError
    when ``arr`` is not contiguous (the typer refuses non-contiguous array types; a value
    reaching here strided has no flat C buffer)."""
    raw = unwrap(arr)
    if not isinstance(raw, np.ndarray):
        raise TypeError(f"{name}: from_buffer() expected an array, got {type(arr).__name__}")
    if raw.ndim > 1 and not raw.flags.c_contiguous or raw.ndim <= 1 and not (
            raw.flags.c_contiguous or raw.flags.f_contiguous):
        raise TypeError(f"{name}: from_buffer() needs a contiguous array, got one of shape "
                        f"{raw.shape} and strides {raw.strides}")
    # a checked array's flat view keeps its race tracking and access recording: accesses
    # through the pointer are seen as the array's own
    flat = arr.reshape(-1) if isinstance(arr, CheckedArray) else raw.reshape(-1)
    dt = raw.dtype
    et = T.from_dtype(dt) if dt.fields is None else T.Record(dt)
    return SimPointer(flat, 0, T.CPointer(et), name=name)


def from_address(address, pointer_type, name):
    """The :class:`SimPointer` of kernel parameter ``name`` of type ``pointer_type`` given the
    device address ``address`` (an int): it reaches the rest of the simulated allocation
    holding the address.  CudaAPIError 716 (misaligned address) when the address is not a
    multiple of the element's alignment, as the GPU's loads of it fault."""
    address = int(address)
    if isinstance(pointer_type, T.RawPointer):
        return SimPointer(None, 0, pointer_type, address, name)
    dt = np.dtype(pointer_type.dtype.dtype)
    drv = get_driver()
    try:
        base, size = drv.mem_get_address_range(address)
    except (CudaAPIError, NotImplementedError):
        return SimPointer(None, 0, pointer_type, address, name)
    if address % dt.alignment:
        raise CudaAPIError(
            716, f"kernel argument '{name}' is a {pointer_type} pointer at {address:#x}, which "
            f"is not a multiple of {dt.alignment}: the GPU's loads through it fault with this "
            "error, which ends the context", "cuLaunchKernel")
    first = (address - base) % dt.itemsize
    count = (size - first) // dt.itemsize
    raw = drv.host_view(base + first, count * dt.itemsize)
    return SimPointer(raw.view(dt), (address - base - first) // dt.itemsize, pointer_type,
                      address, name)


def as_pointer(value, pointer_type, name):
    """``value`` passed for a pointer parameter of type ``pointer_type`` (of a kernel or a
    declared C function) as a :class:`SimPointer`: a pointer as it is, an array by its data
    (numba's arrays decay to their data pointer), a device address (an int) through
    :func:`from_address`."""
    if isinstance(value, SimPointer):
        return value
    if isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_)):
        return from_address(value, pointer_type, name)
    return from_buffer(value, name)
