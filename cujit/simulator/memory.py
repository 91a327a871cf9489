"""Simulated device memory: kernel arguments as NumPy views of simulated device memory, and
per-block shared, per-thread local and per-kernel constant arrays.

- Static shared arrays: one zero-filled NumPy array per call site of ``shared.array`` per
  block (the call site is the calling frame's code object and bytecode offset, so a call in a
  loop or in a device function gives the same array, as one ``addrspace(3)`` global per call
  site does on the GPU).  Their total per block is limited to the device's
  ``MAX_SHARED_MEMORY_PER_BLOCK`` (48 KiB), as ptxas limits static shared data.
- Dynamic shared memory: one byte buffer per block of the launch's ``dynamic_shared_bytes``;
  every ``shared.array(0, dtype)`` is that buffer viewed as ``dtype`` (``nbytes // itemsize``
  elements), so aliasing across dtypes and between sliced views is exact (R-KER-5).
- Local arrays: one per call site per thread.
- Constant arrays: a read-only copy of the array taken the first time a launch signature
  reaches the call site (a GPU copies it into the module at compile time); at most
  ``TOTAL_CONSTANT_MEMORY`` (64 KiB) per kernel.
"""
import sys

import numpy as np

from ..driver.api import STATIC_SHARED_LIMIT
from .errors import typing_error, compile_error

__all__ = ["as_dtype", "check_shape", "device_view", "cai_view", "SharedMemory",
           "check_total_shared", "check_aligned"]

_CONST_LIMIT_DEFAULT = 64 * 1024
_dtype_cache = {}


def as_dtype(dtype, what):
    """NumPy dtype of ``dtype`` given as a cujit/Numba type (``.dtype``), NumPy dtype or type,
    or string; a TypingError naming it otherwise (what the compiler raises)."""
    try:
        return _dtype_cache[dtype]
    except (KeyError, TypeError):
        pass
    inner = getattr(dtype, "dtype", None)
    try:
        if isinstance(inner, np.dtype):
            dt = inner
        elif isinstance(dtype, (str, np.dtype)) or (isinstance(dtype, type) and issubclass(dtype, np.generic)):
            dt = np.dtype(dtype)
        elif isinstance(dtype, type) and dtype in (int, float, complex, bool):
            dt = np.dtype(dtype)
        else:
            # Numba's scalar types have no .dtype: the compiler's conversion knows them
            from ..numba_types import from_numba_type
            nt = from_numba_type(dtype)
            if nt is None or not hasattr(nt, "dtype") or not isinstance(nt.dtype, np.dtype):
                raise TypeError
            dt = nt.dtype
    except TypeError:
        raise typing_error(f"{what}: dtype {dtype!r} is not a type cujit knows (expected a "
                           "cujit/Numba type, a NumPy dtype or type, or a string such as "
                           "'float32')", 2) from None
    try:
        _dtype_cache[dtype] = dt
    except TypeError:
        pass
    return dt


def check_shape(shape, what):
    """``shape`` (int or tuple of ints, R-KER-3) as a tuple; TypingError otherwise."""
    if isinstance(shape, (int, np.integer)) and not isinstance(shape, bool):
        shape = (int(shape),)
    elif isinstance(shape, tuple) and all(isinstance(s, (int, np.integer)) and
                                          not isinstance(s, bool) for s in shape):
        shape = tuple(int(s) for s in shape)
    else:
        raise typing_error(f"{what}: shape {shape!r} must be a constant int or tuple of ints",
                           2)
    if any(s < 0 for s in shape):
        raise typing_error(f"{what}: shape {shape} has a negative extent", 2)
    return shape


def _extent(shape, strides, itemsize):
    """(lowest byte offset, byte span) touched by an array of ``shape``/``strides``."""
    lo = hi = 0
    for n, s in zip(shape, strides):
        if n == 0:
            return 0, 0
        if s < 0:
            lo += (n - 1) * s
        else:
            hi += (n - 1) * s
    return lo, hi - lo + itemsize


def device_view(ptr, shape, strides, dtype):
    """NumPy view of an array at simulated device address ``ptr`` (of element 0...0) with
    ``shape``, byte ``strides`` (may be negative) and ``dtype``.  CudaAPIError from the
    driver when the memory is not allocated."""
    from ..driver import get_driver
    dtype = np.dtype(dtype)
    lo, span = _extent(shape, strides, dtype.itemsize)
    if span == 0 or ptr == 0:
        return np.zeros(shape, dtype)
    buf = get_driver().host_view(ptr + lo, span)
    return np.ndarray(shape, dtype, buffer=buf, offset=-lo, strides=strides)


def cai_view(desc):
    """NumPy view of the memory an ``__cuda_array_interface__`` dict ``desc`` describes."""
    ptr = desc["data"][0] or 0
    shape = tuple(desc["shape"])
    descr = desc.get("descr")
    dtype = np.dtype(descr) if descr and len(descr) > 1 else np.dtype(desc["typestr"])
    strides = desc.get("strides")
    if strides is None:
        acc, st = dtype.itemsize, []
        for n in reversed(shape):
            st.append(acc)
            acc *= n
        strides = tuple(reversed(st))
    return device_view(ptr, shape, tuple(strides), dtype)


def _device_attr(name, default):
    try:
        from ..driver import get_driver
        return get_driver().device_attribute(0, name)
    except Exception:
        return default



def aligned_zeros(shape, dtype, alignment=None):
    """A zeroed array of ``shape`` and ``dtype`` whose data address is a multiple of
    ``alignment`` (bytes; None: NumPy's own): ``shared.array`` / ``local.array`` with
    ``alignment=``, as the compiled kernel aligns the global or the stack slot."""
    if not alignment:
        return np.zeros(shape, dtype)
    n = dtype.itemsize
    for d in shape:
        n *= d
    buf = np.zeros(n + alignment, np.uint8)
    off = (-buf.__array_interface__["data"][0]) % alignment
    return buf[off:off + n].view(dtype).reshape(shape)

class SharedMemory:
    """Shared memory of one block: static arrays by call site and the dynamic buffer.

    ``make(site, shape, dtype)`` returns the block's array for that call site (created on
    first use, zero-filled); ``dynamic(dtype)`` the dynamic buffer viewed as ``dtype``.
    ``wrap(arr, name, buf_addr, tracker)`` is supplied by the launch to add checks."""
    __slots__ = ("static", "static_bytes", "dyn", "limit", "dyn_views")

    def __init__(self, dynamic_bytes, limit):
        self.static = {}
        self.static_bytes = 0
        self.dyn = np.zeros(dynamic_bytes, np.uint8)
        self.dyn_views = {}
        self.limit = limit

    def make_static(self, site, shape, dtype, alignment=None):
        nbytes = dtype.itemsize
        for n in shape:
            nbytes *= n
        total = self.static_bytes + nbytes
        if self.dyn.nbytes:
            check_total_shared(total, self.dyn.nbytes)
        if total > self.limit:
            raise compile_error(
                f"shared memory: shared.array of shape {shape} and dtype {dtype} asks "
                f"{nbytes} bytes of static shared memory ({total} bytes in the kernel); the "
                f"limit for static shared memory is {self.limit} bytes ({self.limit // 1024} "
                "KiB, MAX_SHARED_MEMORY_PER_BLOCK). Use dynamic shared memory "
                "(shared.array(0, dtype) and the 4th launch value) for more", 3, "shared.array")
        self.static_bytes = total
        arr = aligned_zeros(shape, dtype, alignment)
        if dtype.names:
            arr = arr.view(np.recarray)
        return arr

    def dynamic(self, dtype):
        v = self.dyn_views.get(dtype)
        if v is None:
            n = self.dyn.nbytes // dtype.itemsize
            v = self.dyn[:n * dtype.itemsize].view(dtype)
            if dtype.names:
                v = v.view(np.recarray)
            self.dyn_views[dtype] = v
        return v


def check_total_shared(static, dynamic):
    """Raise the ValueError the GPU launcher raises (``launcher.check_function_limits``) when
    ``static`` + ``dynamic`` shared bytes per block exceed the device's
    MAX_SHARED_MEMORY_PER_BLOCK_OPTIN: the driver refuses such a launch."""
    optin = _device_attr("MAX_SHARED_MEMORY_PER_BLOCK_OPTIN", None)
    if optin is not None and static + dynamic > optin:
        e = ValueError(f"kernel needs {static + dynamic} bytes of shared memory per block "
                       f"({static} static + {dynamic} dynamic), more than the device's "
                       f"MAX_SHARED_MEMORY_PER_BLOCK_OPTIN = {optin} bytes")
        e._cujit_sim_reported = True
        raise e


def check_aligned(name, ptr, shape, strides, dtype):
    """Raise ``CudaAPIError`` (CUDA_ERROR_MISALIGNED_ADDRESS, 716) when kernel argument
    ``name`` (device memory at address ``ptr`` with ``shape``, byte ``strides`` and
    ``dtype``) has elements that are not aligned to the dtype's alignment: the GPU's loads
    and stores of them fault with that (sticky) error."""
    align = np.dtype(dtype).alignment
    if align <= 1 or not ptr:
        return
    bad = None
    if ptr % align:
        bad = f"its data pointer {ptr:#x} is not a multiple of {align}"
    else:
        for ax, (n, s) in enumerate(zip(shape, strides)):
            if n > 1 and s % align:
                bad = f"its stride {s} of axis {ax} is not a multiple of {align}"
                break
    if bad is not None:
        from ..driver.errors import CudaAPIError
        raise CudaAPIError(
            716, f"kernel argument '{name}' is a {np.dtype(dtype)} array of shape "
            f"{tuple(shape)} and strides {tuple(strides)} whose elements are not {align}-byte "
            f"aligned ({bad}); the GPU's loads of it fault with this error, which ends the "
            "context", "cuLaunchKernel")


def frozen_const(arr):
    """A read-only copy of ``arr`` for constant memory; CompileError when ``arr`` is not a
    NumPy array or exceeds the device's constant memory (64 KiB)."""
    if not isinstance(arr, np.ndarray):
        raise typing_error(f"const.array_like: expected a NumPy array known at compile time, "
                           f"got {type(arr).__name__}", 3)
    limit = _device_attr("TOTAL_CONSTANT_MEMORY", _CONST_LIMIT_DEFAULT)
    if arr.nbytes > limit:
        raise compile_error(
            f"constant memory: const.array_like of {arr.nbytes} bytes (shape {arr.shape}, "
            f"{arr.dtype}) does not fit; constant memory holds {limit} bytes "
            f"({limit // 1024} KiB)", 3, "const.array_like")
    c = np.array(arr, copy=True, order="K")
    if c.dtype.names:
        c = c.view(np.recarray)
    c.flags.writeable = False
    return c


def shared_limit():
    """Static shared memory per block, bytes (MAX_SHARED_MEMORY_PER_BLOCK)."""
    return _device_attr("MAX_SHARED_MEMORY_PER_BLOCK", STATIC_SHARED_LIMIT)


def call_site(depth):
    """Key of the call site ``depth`` frames above the caller: (code object, bytecode offset)."""
    f = sys._getframe(depth + 1)
    return f.f_code, f.f_lasti
