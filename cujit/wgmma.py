"""``cujit.wgmma``: Hopper's warpgroup-level matrix multiply-accumulate (PTX ``wgmma``), from
Python kernels — a **cujit extension beyond numba.cuda** (numba.cuda has no tensor-core API
at all: numba issue #5899).  sm_90a only (H100/H200); :mod:`cujit.wmma` is the portable
(sm_80+) warp-level API.

A *warpgroup* is four consecutive warps of a block (threads ``128 * g`` to
``128 * g + 127``).
One ``mma_async`` of the warpgroup multiplies a 64 x 16 tile of A by a 16 x N tile of B
(8 deep for tf32) into a 64 x N float32 accumulator that the warpgroup's 128 threads hold in
registers; A and B are read by the tensor cores straight from shared memory, described by
*matrix descriptors*, and the instruction runs asynchronously::

    acc = cuda.wgmma.accumulator(64, 256)             # this warpgroup's 64 x 256 tile of C
    cuda.wgmma.fill_accumulator(acc, 0.0)
    ...                                               # A and B tiles written to shared memory
    cuda.wgmma.fence_proxy_async()                    # ... made visible to the tensor cores
    cuda.syncthreads()
    cuda.wgmma.fence()                                # before the first mma of a batch
    for kk in range(4):                               # a 64-deep slice, 16 at a time
        a = cuda.wgmma.make_descriptor(sm, a_off + 16 * kk, 128, 16, 1024)
        b = cuda.wgmma.make_descriptor(sm, b_off + 16 * 64 * kk, 128, 8192, 1024)
        cuda.wgmma.mma_async(acc, a, b, np.float16, "row_major", "row_major")
    cuda.wgmma.commit_group()
    cuda.wgmma.wait_group(0)                          # acc holds the sum now
    cuda.wgmma.store_accumulator(C[row:, col:], acc)

Every call but ``accumulator``, ``fill_accumulator``, ``make_descriptor``,
``fence_proxy_async`` and ``store_accumulator`` is warpgroup-wide: all 128 threads of the
warpgroup call it together with the same arguments (PTX ``.sync.aligned``), so a block
using ``wgmma`` has a multiple of 128 threads.

**Shared-memory layouts** (PTX ISA, "Asynchronous Warpgroup Level Matrix Shared Memory
Layout"; CUTLASS's canonical GMMA layouts).  An operand has R rows along M (A: 64) or N (B:
N) and Ki = 16 (float16, bfloat16) or 8 (tf32) elements along K, of e bytes each (T = 16/e
per 16-byte chunk).  It is *K-major* when consecutive K elements are adjacent (A
``'row_major'``, B ``'col_major'``) and *MN-major* otherwise (A ``'col_major'``, B
``'row_major'``: the usual row-major K x N ``B``; float16 and bfloat16 only).  A descriptor
gives the operand's first byte (``start``), a swizzle width W (0, 32, 64 or 128 bytes), the
*leading byte offset* LBO and the *stride byte offset* SBO.  Element (r, k) is at byte

=============  ===========================================================================
K-major, W=0   start + (r % 8) * 16 + (r // 8) * SBO + (k % T) * e + (k // T) * LBO
K-major, W>0   start + (r % 8) * W + (r // 8) * SBO + k * e           (LBO unused)
MN-major, W=0  start + (r % T) * e + (r // T) * SBO + (k % 8) * 16 + (k // 8) * LBO
MN-major, W>0  start + (r % (W/e)) * e + (r // (W/e)) * LBO + (k % 8) * W + (k // 8) * SBO
=============  ===========================================================================

and for W > 0 that byte offset ``x`` is then swizzled: ``x ^ (((x >> 7) & (W/16 - 1)) << 4)``
(the 16-byte chunk index within each W-byte row XORed with the index of its 128-byte line
modulo W/16: CUTLASS's ``Swizzle<log2(W/16), 4, 3>``, so for W = 64 and 32 two and four
rows share a pattern).  Offsets are from the shared buffer's first byte: cujit aligns the
shared memory of a kernel that uses ``wgmma`` to 1024 bytes, so a swizzled layout a kernel
writes with the same XOR of its own offsets is the one the tensor cores read.  A W-byte
swizzled operand starts at a multiple of 8 * W bytes plus at most W - E, E the bytes of
each swizzled row it spans: 32 when K-major (the K steps inside one swizzled row), min(R *
e, W) when MN-major (so a full-width MN-major operand starts at a multiple of 8 * W); the
simulator's ``mma_async`` raises ValueError for another start.

**Accumulator registers.**  Thread ``t`` of a warpgroup (warp ``w = t // 32``, lane ``l``)
holds N/2 floats; its register i is element (16 * w + l // 4 + 8 * ((i // 2) % 2),
8 * (i // 4) + 2 * (l % 4) + i % 2) of the 64 x N tile (PTX ISA, "Matrix fragments for
wgmma.mma_async .m64nNk16").  ``store_accumulator`` writes each thread's elements there.

**Ordering.**  ``mma_async`` reads A and B and updates the accumulator at some time before
the ``wait_group`` that covers its group: the accumulator must not be read, written or
stored, and the shared tiles must not be overwritten, until then.  Shared-memory writes by
ordinary stores or ``cujit.pipeline`` copies reach the tensor cores (PTX's *async proxy*)
only after ``fence_proxy_async()`` by the writing thread, then a barrier.  ``fence()``
(PTX ``wgmma.fence``) orders the warpgroup's earlier register accesses of the accumulator
before the ``mma_async`` that follows: call it before each batch of ``mma_async``.

In the simulator an ``mma_async`` reads the tiles (through the descriptors' layouts: a
wrong layout gives the wrong product, as on the GPU, and a descriptor outside the buffer is
an IndexError) and computes ``A @ B + C`` exactly from the inputs as rounded to their
precision, rounded to float32 once; the result lands in the accumulator at the covering
``wait_group``, and a store or fill of the accumulator before then is a DataRaceError (a
missing ``commit_group`` or ``wait_group`` shows so).  A float buffer of another precision
than ``dtype`` (a float16 array read as bfloat16) is a TypeError: bfloat16 tiles live in
uint16 arrays of their bits (``cujit.wmma.to_bfloat16``), tf32 tiles in float32 arrays.  The hardware's accumulation order and internal rounding are unspecified and
may differ by a few float32 ulps of ``sum(|a*b|) + |c|`` (docs/kernel-language.md, "Tensor
cores").
"""
import numpy as np

from .kernelstate import current_thread as _thread
from .types.fragment import WarpgroupAccumulator

__all__ = ["accumulator", "fill_accumulator", "make_descriptor", "fence",
           "fence_proxy_async", "mma_async", "commit_group", "wait_group",
           "store_accumulator", "AccumulatorValue", "DescriptorValue", "SWIZZLES"]

#: The swizzle widths in bytes a descriptor may name (0: none).
SWIZZLES = (0, 32, 64, 128)


class AccumulatorValue:
    """A warpgroup accumulator in a simulated kernel: ``type`` (its
    :class:`~cujit.types.WarpgroupAccumulator`) and ``tile``, a float32 array
    ``(16, type.n)``: the rows 16w to 16w + 15 of the 64 x N tile that the calling
    thread's warp ``w`` of the warpgroup holds.  Compiled kernels hold the thread's
    registers instead."""
    __slots__ = ("type", "tile")

    def __init__(self, atype):
        self.type = atype
        self.tile = np.zeros((16, atype.n), np.float32)

    def __repr__(self):
        return f"<wgmma {self.type}>"


class DescriptorValue:
    """A matrix descriptor in a simulated kernel: ``array`` (the shared array it was made
    from), ``start`` (the operand's first byte, from the array's first byte), ``swizzle``,
    ``leading_bytes`` and ``stride_bytes`` (see the module docstring).  Compiled kernels
    hold the 64-bit PTX descriptor instead."""
    __slots__ = ("array", "start", "swizzle", "leading_bytes", "stride_bytes")

    def __init__(self, array, start, swizzle, leading_bytes, stride_bytes):
        self.array, self.start, self.swizzle = array, start, swizzle
        self.leading_bytes, self.stride_bytes = leading_bytes, stride_bytes

    def __repr__(self):
        return (f"<wgmma descriptor start={self.start} swizzle={self.swizzle} "
                f"LBO={self.leading_bytes} SBO={self.stride_bytes}>")


def accumulator(m, n):
    """A new 64 x ``n`` float32 accumulator of the calling warpgroup (zeroed in the simulator,
    undefined on the GPU until filled or written by an ``mma_async`` with
    ``accumulate=False``): ``m`` 64, ``n`` a multiple of 8 from 8 to 256 (the shapes PTX
    ``wgmma.mma_async`` offers), both compile-time constants.  Each thread holds ``n / 2``
    float32 registers.  ValueError (TypingError when compiled) for another shape."""
    _thread("wgmma.accumulator")
    return AccumulatorValue(WarpgroupAccumulator(m, n))


def fill_accumulator(acc, value):
    """Set every element of accumulator ``acc`` to ``value`` (a real number, as float32).
    Per thread, not warpgroup-wide; call ``fence()`` before the next ``mma_async``."""
    return _thread("wgmma.fill_accumulator").wgmma("fill", acc, value)


def make_descriptor(smem, offset, swizzle, leading_bytes, stride_bytes):
    """The matrix descriptor (PTX ISA, "Matrix Descriptor Format") of an operand whose first
    byte is element ``offset`` (an integer >= 0, counted in memory from ``smem``'s first
    element) of shared array ``smem`` (any dtype; the descriptor is of bytes), laid out with
    ``swizzle`` (0, 32, 64 or 128 bytes: a compile-time constant) and the byte offsets
    ``leading_bytes`` (LBO) and ``stride_bytes`` (SBO) of the module docstring's table
    (integers, multiples of 16, below 2**18).  The start must be 16-byte aligned.  On the GPU
    a 64-bit value; bad values are undefined behaviour there, and ValueError/IndexError in
    the simulator (which also raises TypeError for an array outside shared memory).
    TypingError when compiled for a ``smem`` that is not a shared array or a non-constant
    ``swizzle``."""
    return _thread("wgmma.make_descriptor").wgmma(
        "descriptor", smem, offset, swizzle, leading_bytes, stride_bytes)


def fence():
    """Warpgroup-wide: order the warpgroup's earlier accesses of accumulator registers before
    the ``mma_async`` that follow (PTX ``wgmma.fence.sync.aligned``).  Needed before the
    first ``mma_async`` of a batch whose accumulator was filled, stored or written since the
    last ``wait_group``."""
    return _thread("wgmma.fence").wgmma("fence")


def fence_proxy_async():
    """Make the calling thread's earlier shared-memory writes (stores, ``cujit.pipeline``
    copies after their ``wait_prior``) visible to the tensor cores' reads (PTX
    ``fence.proxy.async.shared::cta``); a barrier after it makes them visible for every
    thread's ``mma_async``.  Per thread."""
    return _thread("wgmma.fence_proxy_async").wgmma("fence_proxy")


def mma_async(acc, a_desc, b_desc, dtype, a_layout, b_layout, accumulate=True):
    """Warpgroup-wide: start ``acc = A @ B + acc`` (``acc = A @ B`` when ``accumulate`` is
    false: a bool, may vary at run time) with A the 64 x Ki tile that descriptor ``a_desc``
    describes and B the Ki x N tile of ``b_desc`` (Ki = 16 for float16 and bfloat16, 8 for
    tf32; N is ``acc``'s).  ``dtype`` the inputs' precision: float16, ``'bfloat16'`` (the
    bits, as ``cujit.wmma``) or ``'tf32'``; ``a_layout`` / ``b_layout`` ``'row_major'`` or
    ``'col_major'`` (compile-time constants) say how the tiles are stored (module docstring:
    K-major or MN-major; tf32 needs row_major A and col_major B).  The product lands by the
    ``wait_group`` that covers this call's group.  PTX ``wgmma.mma_async.sync.aligned.
    m64nNk16.f32.<type>.<type>``; TypingError when compiled for fragments, descriptors or
    constants of the wrong kinds (ValueError/TypeError in the simulator)."""
    return _thread("wgmma.mma_async").wgmma(
        "mma", acc, a_desc, b_desc, dtype, a_layout, b_layout, accumulate)


def commit_group():
    """Warpgroup-wide: close the group of the ``mma_async`` started since the last commit
    (PTX ``wgmma.commit_group.sync.aligned``)."""
    return _thread("wgmma.commit_group").wgmma("commit")


def wait_group(n):
    """Warpgroup-wide: wait until at most ``n`` (an int >= 0, a compile-time constant) of the
    most recent committed groups are still in flight; the older groups' accumulators hold
    their results and their shared tiles may be overwritten (PTX
    ``wgmma.wait_group.sync.aligned n``).  TypingError for an ``n`` that is not a
    non-negative integer constant (ValueError in the simulator)."""
    return _thread("wgmma.wait_group").wgmma("wait", n)


def store_accumulator(dst, acc):
    """Store the calling thread's elements of accumulator ``acc`` into ``dst``, a 2-d
    float32 or float16 array or view (global or shared memory) whose element ``[0, 0]`` is
    the 64 x N tile's top-left element: element (r, c) goes to ``dst[r, c]`` (rounded to
    float16 to nearest even for a float16 ``dst``).  Per thread: with all 128 threads of
    the warpgroup the whole tile is stored.  ``dst`` must hold the tile: out of range is
    undefined on the GPU (no bounds checks, as CUDA's pointers) and an IndexError in the
    simulator."""
    return _thread("wgmma.store_accumulator").wgmma("store", dst, acc)
