"""The bfloat16 value of the host and the simulator (:class:`BF16`), and its NumPy storage.

A :class:`BF16` holds the 16 bits of one bfloat16 and computes as the GPU does (rounding by
:mod:`cujit.narrow_floats`): ``+ - *`` are ``fma.rn.bf16`` (numba-cuda's ``__hadd`` /
``__hsub`` / ``__hmul`` on sm_80+: one rounding of the exact result), ``/`` is the float32
quotient rounded once (correctly rounded: float32 has more than twice bfloat16's precision),
comparisons compare the exact values (``!=`` is unordered, True with a NaN, as CUDA's
``operator!=`` / ``__hneu``), ``-x`` and ``abs(x)`` flip / clear the sign bit.  Mixed
operations with other number types are TypeError, as in kernels (convert first).

Storage: :data:`STORAGE_DTYPE` is ``ml_dtypes.bfloat16`` when the ``ml_dtypes`` package is
installed (what numba-cuda's tests use for host arrays), otherwise ``uint16`` holding the bits
with the dtype metadata ``{"cujit": "bfloat16"}`` (``np.zeros(n, STORAGE_DTYPE)``, or
``bits.view(STORAGE_DTYPE)``), which types as ``bfloat16`` where a plain uint16 array stays
``uint16``.  :func:`from_storage` /
:func:`to_storage` convert between array elements and :class:`BF16`.
"""
import numpy as np

from . import narrow_floats as nf

try:        # optional: the bfloat16 NumPy dtype of numba-cuda's tests
    import ml_dtypes as _ml_dtypes
except ImportError:     # pragma: no cover - depends on the environment
    _ml_dtypes = None

__all__ = ["BF16", "STORAGE_DTYPE", "HAVE_ML_DTYPES", "is_storage_dtype", "from_storage",
           "to_storage"]

HAVE_ML_DTYPES = _ml_dtypes is not None
#: The NumPy dtype of bfloat16 array elements.
STORAGE_DTYPE = np.dtype(_ml_dtypes.bfloat16) if HAVE_ML_DTYPES else \
    np.dtype(np.uint16, metadata={"cujit": "bfloat16"})


def is_storage_dtype(dtype):
    """True when NumPy ``dtype`` is bfloat16 storage (``ml_dtypes.bfloat16``, or uint16 with
    cujit's bfloat16 metadata)."""
    dt = np.dtype(dtype)
    if HAVE_ML_DTYPES and dt == STORAGE_DTYPE:
        return True
    return bool(dt.metadata) and dt.metadata.get("cujit") == "bfloat16"


def _bits_of(value):
    """bfloat16 bits (int) of a host value converted as ``bfloat16(value)`` in a kernel."""
    if isinstance(value, BF16):
        return value.bits
    to_bf16 = getattr(value, "to_bfloat16", None)
    if to_bf16 is not None:         # an FP8 value (fp8_scalar.FP8): exact in bfloat16
        return to_bf16().bits
    if isinstance(value, np.generic) and HAVE_ML_DTYPES and value.dtype == STORAGE_DTYPE:
        return int(np.asarray(value).view(np.uint16))
    if isinstance(value, (bool, np.bool_)):
        return nf.int_to_bf16_bits(int(value))
    if isinstance(value, (int, np.integer)):
        return nf.int_to_bf16_bits(int(value))
    if isinstance(value, (np.float32, np.float16)):
        return int(nf.f32_to_bf16_bits(np.float32(value)))
    if isinstance(value, (float, np.floating)):
        return int(nf.f64_to_bf16_bits(float(value)))
    raise TypeError(f"bfloat16() takes an int, float or bfloat16 value, got {value!r} "
                    f"({type(value).__name__})")


class BF16:
    """One bfloat16 value.  ``BF16(x)`` rounds ``x`` (int, float, NumPy scalar, ``BF16``) to
    nearest even as the GPU's ``cvt.rn.bf16.*``; ``BF16.from_bits(b)`` takes the 16 bits.
    TypeError for other values."""
    __slots__ = ("bits",)

    def __init__(self, value=0):
        self.bits = _bits_of(value)

    @classmethod
    def from_bits(cls, bits):
        """The bfloat16 whose bits are ``bits`` (an int, taken modulo 2**16)."""
        v = object.__new__(cls)
        v.bits = int(bits) & 0xFFFF
        return v

    # ---- conversions --------------------------------------------------------------------
    def __float__(self):
        return float(nf.bf16_bits_to_f32(self.bits))

    def to_float32(self):
        """The exact float32 value (``cvt.f32.bf16``)."""
        return nf.bf16_bits_to_f32(self.bits)

    def __int__(self):
        return nf.bf16_to_int(self.bits, "rz", True, 64)

    def __bool__(self):
        return (self.bits & 0x7FFF) != 0

    def __repr__(self):
        return f"bfloat16({float(self)!r})"

    def __hash__(self):
        return hash(float(self))

    # ---- arithmetic -----------------------------------------------------------------------
    def _other(self, other):
        return other.bits if isinstance(other, BF16) else None

    def __add__(self, other):
        b = self._other(other)
        return NotImplemented if b is None else BF16.from_bits(
            nf.fma_bf16_bits(self.bits, 0x3F80, b))

    def __sub__(self, other):
        b = self._other(other)
        return NotImplemented if b is None else BF16.from_bits(
            nf.fma_bf16_bits(b, 0xBF80, self.bits))

    def __mul__(self, other):
        b = self._other(other)
        return NotImplemented if b is None else BF16.from_bits(
            nf.fma_bf16_bits(self.bits, b, 0x8000))

    def __truediv__(self, other):
        b = self._other(other)
        if b is None:
            return NotImplemented
        with np.errstate(all="ignore"):
            q = np.float32(self.to_float32()) / nf.bf16_bits_to_f32(b)
        return BF16.from_bits(int(nf.f32_to_bf16_bits(q)))

    def __neg__(self):
        return BF16.from_bits(self.bits ^ 0x8000)

    def __pos__(self):
        return self

    def __abs__(self):
        return BF16.from_bits(self.bits & 0x7FFF)

    # ---- comparisons ------------------------------------------------------------------------
    def _cmp(self, other, op):
        b = self._other(other)
        if b is None:
            return NotImplemented
        return op(float(self), float(nf.bf16_bits_to_f32(b)))

    def __eq__(self, other):
        return self._cmp(other, lambda x, y: x == y)

    def __ne__(self, other):
        return self._cmp(other, lambda x, y: x != y)

    def __lt__(self, other):
        return self._cmp(other, lambda x, y: x < y)

    def __le__(self, other):
        return self._cmp(other, lambda x, y: x <= y)

    def __gt__(self, other):
        return self._cmp(other, lambda x, y: x > y)

    def __ge__(self, other):
        return self._cmp(other, lambda x, y: x >= y)

    def isnan(self):
        """True for a NaN."""
        return (self.bits & 0x7FFF) > 0x7F80

    def isinf(self):
        """True for ±inf."""
        return (self.bits & 0x7FFF) == 0x7F80


def from_storage(element):
    """The :class:`BF16` of one bfloat16 array element (an ``ml_dtypes.bfloat16`` scalar or
    the uint16 bits).  TypeError for anything else (a float is not bfloat16 storage: convert
    it with ``bfloat16(x)``)."""
    if isinstance(element, BF16):
        return element
    if isinstance(element, np.generic) and (element.dtype == STORAGE_DTYPE
                                            or element.dtype == np.uint16):
        return BF16.from_bits(int(np.asarray(element).view(np.uint16)))
    raise TypeError(f"{element!r} is not a bfloat16 value or its storage (convert with "
                    "bfloat16(x))")


def to_storage(value):
    """``value`` (a :class:`BF16`) as a bfloat16 array element of :data:`STORAGE_DTYPE`
    (bit for bit, NaN payloads kept).  TypeError for anything else."""
    if not isinstance(value, BF16):
        raise TypeError(f"a bfloat16 array element must be a bfloat16 value, got {value!r} "
                        "(convert with bfloat16(x))")
    return np.uint16(value.bits).view(STORAGE_DTYPE)

