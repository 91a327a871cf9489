"""``cujit.pipeline``: asynchronous copies from global to shared memory, from Python kernels
— a **cujit extension beyond numba.cuda** (numba.cuda has no cp.async API).  Modelled on
CUDA C++'s ``cuda_pipeline_primitives.h`` (``__pipeline_memcpy_async``,
``__pipeline_commit``, ``__pipeline_wait_prior``)::

    tile = cuda.shared.array((STAGES, 64), np.float32)
    for s in range(STAGES - 1):                      # start the first STAGES-1 copies
        cuda.pipeline.memcpy_async(tile, (s, 4 * t), src, base + s * 64 + 4 * t, 16)
        cuda.pipeline.commit()
    ...
    cuda.pipeline.wait_prior(STAGES - 2)              # the oldest group has landed
    cuda.syncthreads()                                # ... for every thread of the block

A thread's copies form *groups*: ``commit()`` closes the group of the copies it issued since
its last ``commit()``; ``wait_prior(n)`` returns when at most the ``n`` most recent
committed groups of the calling thread are still in flight.  Copies of other threads are
visible after their own wait and a barrier (``cuda.syncthreads()``).  Requires sm_80 or
later (PTX ``cp.async``).

On the GPU a copy lands any time between ``memcpy_async`` and the ``wait_prior`` that
covers its group; reading the destination before that wait reads undefined bytes.  The
simulator reads the source at the call (where it checks the arguments: bounds, alignment,
memory spaces) and writes the destination only at the covering ``wait_prior`` (never, when
no wait covers it), so a missing wait shows as stale data and a missing barrier after the
wait as a shared-memory race reported by the race checker.
"""
from .kernelstate import current_thread as _thread

__all__ = ["memcpy_async", "commit", "wait_prior", "COPY_SIZES"]

#: The copy sizes in bytes the hardware offers (PTX ``cp.async``'s cp-size).
COPY_SIZES = (4, 8, 16)


def memcpy_async(dst, dst_index, src, src_index, nbytes):
    """Start copying ``nbytes`` bytes from ``src`` (an array in global memory), starting at
    its element ``src[src_index]``, to ``dst`` (an array in shared memory), starting at
    ``dst[dst_index]``.  Each index is an integer for a 1-d array or a tuple of one integer
    per dimension, each in ``[0, size)``: negative indices do not wrap (the copy addresses
    memory as CUDA's pointers do, and a kernel's address arithmetic stays free of wraparound
    code; the simulator raises IndexError for them); the bytes copied are the
    ``nbytes // itemsize`` elements from the index along the last axis, which must be
    contiguous.  ``dst`` and ``src`` have one dtype (an integer or float type; ``.view()``
    either for other element types).  ``nbytes``: 4, 8 or 16, a compile-time constant and a
    multiple of the itemsize; both addresses must be multiples of ``nbytes`` (a
    16-byte copy straight into a padded tile needs rows of a multiple of 16 bytes).

    Compiled: PTX ``cp.async.cg.shared.global`` for 16 bytes (cached in L2 only, as CUDA's
    ``__pipeline_memcpy_async`` of 16 bytes), ``cp.async.ca.shared.global`` for 4 and 8;
    TypingError for arguments of the wrong kinds, types or a bad ``nbytes``.  On the GPU a
    ``dst`` outside shared memory or a ``src`` outside global memory is undefined behaviour
    (as in CUDA); the simulator raises TypeError for them (while its checks are on),
    IndexError for copies that leave an array and ValueError for a misaligned address.
    CUDA: ``__pipeline_memcpy_async(dst, src, nbytes)``."""
    return _thread("pipeline.memcpy_async").pipeline(
        "copy", dst, dst_index, src, src_index, nbytes)


def commit():
    """Close the calling thread's current group of copies (possibly empty: a group of no
    copies completes at once, which keeps a pipeline's group count uniform at its end).
    Compiled: PTX ``cp.async.commit_group``.  CUDA: ``__pipeline_commit()``."""
    return _thread("pipeline.commit").pipeline("commit")


def wait_prior(n):
    """Wait until at most ``n`` (an int >= 0, a compile-time constant) of the calling
    thread's most recently committed groups are still in flight: every older group's copies
    have landed in shared memory.  ``wait_prior(0)`` waits for all committed groups.  Copies
    not yet committed are not waited for.  Other threads see the copies after a barrier.
    Compiled: PTX ``cp.async.wait_group n``; TypingError for an ``n`` that is not a
    non-negative integer constant (ValueError in the simulator).  CUDA:
    ``__pipeline_wait_prior(n)``."""
    return _thread("pipeline.wait_prior").pipeline("wait", n)
