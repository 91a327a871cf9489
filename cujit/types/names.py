"""Numba's other names for the scalar types: the NumPy-style short names (``f4``, ``i8``,
``c16``…) and the C-compatible names (``double``, ``char``, ``uint``, ``size_t``…), as
``numba.cuda`` exports them (``numba.cuda.f8`` is Numba's ``float64``).

Each is the same interned object as cujit's type of that name (``cujit.f8 is
cujit.float64``), so signatures, dtypes and casts accept them wherever they accept the long
names, strings included (``"void(f4[:], i4)"``).  The C names follow the platform's C type
sizes through NumPy, as Numba's do (``long_`` is the size of ``np.int_``; ``intc`` of
``np.intc``).  Reference: numba-cuda's ``numba.cuda.types`` ("Types and signatures").

This module defines ``bool`` (Numba's name for ``boolean`` under NumPy 2), which is why it
holds no code that needs the built-in.
"""
import numpy as np

from .core import (boolean, byte, complex128, complex64, float16, float32, float64, int16, int32,
                   int64, int8, none, uint16, uint32, uint64, uint8)

__all__ = ["b1", "bool", "byte", "i1", "i2", "i4", "i8", "u1", "u2", "u4", "u8", "f2", "f4",
           "f8", "c8", "c16", "double", "char", "uchar", "short", "ushort", "int_", "uint",
           "intc", "uintc", "long_", "ulong", "longlong", "ulonglong", "ssize_t", "size_t",
           "none", "C_NAMES"]

b1 = bool = boolean
i1, i2, i4, i8 = int8, int16, int32, int64
u1, u2, u4, u8 = uint8, uint16, uint32, uint64
f2, f4, f8 = float16, float32, float64
c8, c16 = complex64, complex128
double = float64

_SIGNED = {1: int8, 2: int16, 4: int32, 8: int64}
_UNSIGNED = {1: uint8, 2: uint16, 4: uint32, 8: uint64}


def _c(np_type, signed):
    return (_SIGNED if signed else _UNSIGNED)[np.dtype(np_type).itemsize]


char, uchar = _c(np.byte, True), _c(np.byte, False)
short, ushort = _c(np.short, True), _c(np.short, False)
int_, uint = _c(np.int_, True), _c(np.int_, False)
intc, uintc = _c(np.intc, True), _c(np.uintc, False)
long_, ulong = _c(np.int_, True), _c(np.int_, False)
longlong, ulonglong = _c(np.longlong, True), _c(np.longlong, False)
ssize_t, size_t = _c(np.intp, True), _c(np.uintp, False)

#: The C-compatible names, for signature strings (``"void(double[:], size_t)"``).
C_NAMES = {"bool": bool, "double": double, "char": char, "uchar": uchar, "short": short,
           "ushort": ushort, "int_": int_, "uint": uint, "intc": intc, "uintc": uintc,
           "long_": long_, "ulong": ulong, "longlong": longlong, "ulonglong": ulonglong,
           "ssize_t": ssize_t, "size_t": size_t}
