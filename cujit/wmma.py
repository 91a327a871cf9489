"""``cujit.wmma``: warp-level matrix multiply-accumulate on the tensor cores, from Python
kernels — a **cujit extension beyond numba.cuda** (numba.cuda has no tensor-core API:
numba issue #5899).  Modelled on CUDA C++'s ``nvcuda::wmma``::

    a = cuda.wmma.fragment("matrix_a", 16, 16, 16, np.float16, "row_major")
    b = cuda.wmma.fragment("matrix_b", 16, 16, 16, np.float16, "row_major")
    acc = cuda.wmma.fragment("accumulator", 16, 16, 16, np.float32)
    cuda.wmma.fill_fragment(acc, 0.0)
    for k in range(0, K, 16):
        cuda.wmma.load_matrix_sync(a, A[i:, k:], K)        # top-left element, leading dim
        cuda.wmma.load_matrix_sync(b, B[k:, j:], N)
        cuda.wmma.mma_sync(acc, a, b, acc)                  # acc = a @ b + acc
    cuda.wmma.store_matrix_sync(C[i:, j:], acc, N, "row_major")

Inputs are float16, bfloat16 (tiles in uint16 arrays holding the bf16 bits: see
:func:`to_bfloat16`) or tf32 (tiles in float32 arrays) with float32 accumulation, in the
shapes the hardware offers: m16n16k16 (float16, bfloat16) and m16n16k8 (tf32).  The
compiler lowers the calls to PTX ``wmma.load`` / ``wmma.mma.sync`` / ``wmma.store``
(sm_80 and later for bfloat16 and tf32).  Every call but ``fragment`` and
``fill_fragment`` is warp-wide: all 32 lanes of the warp call it together with the same
arguments, as on the GPU.

In the simulator each lane's fragment holds the whole tile as NumPy values; a load reads
(and a store writes) 1/32 of the tile per lane; ``mma_sync`` multiplies the inputs exactly
(as rounded to their precision) and rounds the sum to float32 once.  The hardware's
accumulation order and internal rounding are unspecified and may differ by a few float32
ulps of ``sum(|a*b|) + |c|`` (see docs/kernel-language.md, "Tensor cores").
"""
import numpy as np

from .kernelstate import current_thread as _thread
from .types.core import Float, as_dtype_type
from .types.fragment import Fragment

__all__ = ["fragment", "fill_fragment", "load_matrix_sync", "mma_sync", "store_matrix_sync",
           "FragmentValue", "precision_of", "to_bfloat16", "from_bfloat16", "round_to_tf32",
           "bfloat16", "tf32", "row_major", "col_major"]

#: The input precisions without a NumPy dtype, named by these strings.
bfloat16 = "bfloat16"
tf32 = "tf32"
row_major = "row_major"
col_major = "col_major"


def precision_of(dtype):
    """The fragment precision (``'float16'``, ``'bfloat16'``, ``'tf32'``, ``'float32'``) that
    ``dtype`` names: ``wmma.bfloat16``/``'bfloat16'``, ``wmma.tf32``/``'tf32'``, or a
    cujit/NumPy float16/float32 type, dtype or name.  ValueError for anything else."""
    if isinstance(dtype, str) and dtype in (bfloat16, tf32):
        return dtype
    try:
        t = as_dtype_type(dtype)
    except TypeError:
        t = None
    if isinstance(t, Float) and t.bitwidth in (16, 32):
        return t.name
    raise ValueError(f"a wmma fragment's dtype must be float16, float32, wmma.bfloat16 or "
                     f"wmma.tf32; got {dtype!r}")


def to_bfloat16(x):
    """The bfloat16 bits (a uint16 array of ``x``'s shape) of float array ``x``, rounded to
    nearest even as CUDA's ``__float2bfloat16_rn``; NaN stays NaN."""
    f = np.ascontiguousarray(x, dtype=np.float32)
    u = f.view(np.uint32).astype(np.uint64)
    r = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)
    return np.where(np.isnan(f), np.uint16(0x7FC0), r)


def from_bfloat16(bits):
    """The float32 values of bfloat16 bits ``bits`` (a uint16 array), exactly."""
    b = np.ascontiguousarray(bits, dtype=np.uint16)
    return (b.astype(np.uint32) << 16).view(np.float32)


def round_to_tf32(x):
    """float32 array ``x`` as the tensor cores read it for tf32 inputs: the low 13 mantissa
    bits dropped (PTX ISA: a .tf32 operand's other bits are ignored)."""
    f = np.ascontiguousarray(x, dtype=np.float32)
    return (f.view(np.uint32) & np.uint32(0xFFFFE000)).view(np.float32)


class FragmentValue:
    """A fragment in a simulated kernel: ``type`` (its :class:`~cujit.types.Fragment`) and
    ``tile`` (float64 array ``type.rows x type.cols`` of the values it holds, as rounded to
    its precision).  Compiled kernels hold the lane's registers instead."""
    __slots__ = ("type", "tile")

    def __init__(self, ftype):
        self.type = ftype
        self.tile = np.zeros((ftype.rows, ftype.cols))

    def __repr__(self):
        return f"<wmma {self.type}>"


def fragment(role, m, n, k, dtype, layout=None):
    """A new fragment (zeroed in the simulator, undefined on the GPU until filled or
    loaded): ``role`` ``'matrix_a'`` (an m x k tile), ``'matrix_b'`` (k x n) or
    ``'accumulator'`` (m x n); ``(m, n, k)`` (16, 16, 16) for float16/bfloat16, (16, 16, 8)
    for tf32; ``dtype`` the inputs' precision (float16, ``wmma.bfloat16``, ``wmma.tf32``) or
    float32 for an accumulator; ``layout`` ``'row_major'``/``'col_major'`` for inputs, none
    for accumulators.  All arguments are compile-time constants.  ValueError (TypingError
    when compiled) for a combination the hardware does not offer.  CUDA:
    ``wmma::fragment<role, m, n, k, T, layout>``."""
    _thread("wmma.fragment")
    return FragmentValue(Fragment(role, m, n, k, precision_of(dtype), layout))


def fill_fragment(frag, value):
    """Set every element of ``frag`` to ``value`` (a number, rounded to the fragment's
    precision).  Per lane, not warp-wide.  CUDA: ``wmma::fill_fragment``."""
    return _thread("wmma.fill_fragment").wmma("fill", frag, value)


def load_matrix_sync(frag, src, ldm, layout=None, offset=0):
    """Warp-wide: load ``frag``'s tile from ``src``, an array or view (global or shared
    memory) whose element ``offset`` (counted in memory from its first element; default 0)
    is the tile's top-left element; element (r, c) is ``src``'s element
    ``offset + r * ldm + c`` (row-major) or ``offset + c * ldm + r`` (col-major) counted in
    memory from its first element.  ``offset`` (an integer >= 0, a cujit addition to CUDA's
    pointer argument) spares a kernel the view ``src[i:]`` per tile, whose start Python's
    slicing rules clamp at run time; a negative offset is undefined on the GPU and an
    IndexError in the simulator.  ``src``'s dtype: float16 (float16 fragments), uint16
    (bfloat16 bits), float32 (tf32 and accumulators).  ``ldm``: the leading dimension in
    elements, a multiple of 8 for 16-bit and of 4 for 32-bit elements (16 bytes); the
    tile's address must be 32-byte aligned.  ``layout`` only for accumulators.  The
    simulator raises IndexError for a tile outside ``src`` and ValueError for a bad
    ``ldm``/alignment.  CUDA: ``wmma::load_matrix_sync``."""
    return _thread("wmma.load_matrix_sync").wmma("load", frag, src, ldm, layout, offset)


def mma_sync(d, a, b, c):
    """Warp-wide: ``d = a @ b + c`` with ``a`` a matrix_a, ``b`` a matrix_b and ``c``, ``d``
    accumulator fragments of one shape and input precision (``d`` may be ``c``).  CUDA:
    ``wmma::mma_sync``."""
    return _thread("wmma.mma_sync").wmma("mma", d, a, b, c)


def store_matrix_sync(dst, frag, ldm, layout):
    """Warp-wide: store accumulator ``frag`` into float32 array/view ``dst`` (its first
    element is the tile's top-left), ``ldm`` and addressing as :func:`load_matrix_sync`;
    ``layout`` ``'row_major'`` or ``'col_major'``.  CUDA: ``wmma::store_matrix_sync``."""
    return _thread("wmma.store_matrix_sync").wmma("store", dst, frag, ldm, layout)
