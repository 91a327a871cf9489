"""The simulator's asynchronous copies (:mod:`cujit.pipeline`): what a simulated thread does
for ``memcpy_async``, ``commit`` and ``wait_prior``.

The state is the thread's own (:class:`AsyncCopies`, on ``SimThread.copies``): the copies
issued since its last ``commit`` and its committed groups, oldest first.  ``memcpy_async``
checks its arguments and reads the source at the call, through the array's indexing (bounds
and global-race checks see the read), and queues the write; ``wait_prior(n)`` lands every
group but the ``n`` newest, writing the destination through its indexing, so the shared-
memory race checker sees each write as this thread's at the wait.  A copy no wait covers is
never written: the GPU gives no guarantee about it either.
"""
import numpy as np

from ..pipeline import COPY_SIZES
from .checked import CheckedArray, SharedCheckedArray, unwrap

__all__ = ["AsyncCopies", "pipeline_call"]


class AsyncCopies:
    """One simulated thread's copies in flight: ``open`` (issued since the last commit) and
    ``groups`` (committed, oldest first); each copy is ``(dst, indices, values)``."""
    __slots__ = ("open", "groups")

    def __init__(self):
        self.open = []
        self.groups = []


def pipeline_call(t, op, args):
    """Run ``cujit.pipeline`` operation ``op`` (``'copy'``, ``'commit'``, ``'wait'``) with
    ``args`` in simulated thread ``t``."""
    return _OPS[op](t, *args)


def _copies(t):
    s = t.copies
    if s is None:
        s = t.copies = AsyncCopies()
    return s


def _int(v, what, name):
    if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, np.integer)):
        raise TypeError(f"{what}: {name} must be an integer, got {v!r}")
    return int(v)


def _start(raw, index, n, what, label):
    """``index`` of ``label`` array ``raw`` as a tuple of ints, checked so that the ``n``
    elements from it along the last axis are inside the array (negative indices do not
    wrap: ``cujit.pipeline``'s rule)."""
    idx = index if isinstance(index, tuple) else (index,)
    if len(idx) != raw.ndim:
        raise IndexError(f"{what}: {label} has {raw.ndim} dimension(s), the index "
                         f"{index!r} gives {len(idx)}")
    out = []
    for axis, (i, size) in enumerate(zip(idx, raw.shape)):
        i = _int(i, what, f"{label}_index")
        last = axis == raw.ndim - 1
        if not 0 <= i or i + (n if last else 1) > size:
            span = f"the {n} elements from index {i}" if last else f"index {i}"
            raise IndexError(f"{what}: {span} on axis {axis} leave {label} of shape "
                             f"{raw.shape}")
        out.append(i)
    return tuple(out)


def _offset(raw, start):
    """Byte offset of element ``start`` of ``raw`` from the start of its allocation."""
    root = raw
    while isinstance(root.base, np.ndarray):
        root = root.base
    addr = raw.__array_interface__["data"][0] + sum(i * s for i, s in zip(start, raw.strides))
    return addr - root.__array_interface__["data"][0]


def _copy(t, dst, dst_index, src, src_index, nbytes):
    what = "pipeline.memcpy_async"
    nbytes = _int(nbytes, what, "nbytes")
    if nbytes not in COPY_SIZES:
        raise ValueError(f"{what}: nbytes must be 4, 8 or 16, got {nbytes}")
    # under the access recorder an array is its RecordingArray (access.py) over the checked
    # or plain one: the memory space is the inner array's (the copy still logs through it)
    dchk = dst._inner if getattr(dst, "_space", None) is not None else dst
    schk = src._inner if getattr(src, "_space", None) is not None else src
    if isinstance(dchk, CheckedArray) and not isinstance(dchk, SharedCheckedArray):
        raise TypeError(f"{what}: dst must be an array in shared memory (cuda.shared.array), "
                        f"got {dst._name!r}, which is not")
    if getattr(dst, "_space", None) == "global":
        raise TypeError(f"{what}: dst must be an array in shared memory (cuda.shared.array), "
                        f"got the global array {dst._name!r}")
    if isinstance(schk, SharedCheckedArray) or getattr(src, "_space", None) == "shared":
        raise TypeError(f"{what}: src must be an array in global memory, got the shared "
                        f"array {src._name!r}")
    rd, rs = unwrap(dst), unwrap(src)
    for label, raw in (("dst", rd), ("src", rs)):
        if not isinstance(raw, np.ndarray) or raw.dtype.kind not in "iuf":
            raise TypeError(f"{what}: {label} must be an array of integers or floats, got "
                            f"{raw!r}")
    if rd.dtype != rs.dtype:
        raise TypeError(f"{what}: dst and src must have one dtype, got {rd.dtype} and "
                        f"{rs.dtype}")
    item = rd.itemsize
    if nbytes % item:
        raise ValueError(f"{what}: nbytes={nbytes} is not a multiple of the {item}-byte "
                         f"itemsize of {rd.dtype}")
    n = nbytes // item
    ds = _start(rd, dst_index, n, what, "dst")
    ss = _start(rs, src_index, n, what, "src")
    for label, raw, start in (("dst", rd, ds), ("src", rs, ss)):
        if n > 1 and raw.strides[-1] != item:
            raise ValueError(f"{what}: {label}'s last axis must be contiguous to copy "
                             f"{nbytes} bytes (stride {item}), got strides {raw.strides}")
        off = _offset(raw, start)
        if off % nbytes:
            raise ValueError(f"{what}: the {label} address is {off} bytes into its "
                             f"allocation, not a multiple of nbytes={nbytes}")
    head_d, head_s = ds[:-1], ss[:-1]
    values = [src[head_s + (ss[-1] + k,) if head_s else ss[-1] + k] for k in range(n)]
    targets = [head_d + (ds[-1] + k,) if head_d else ds[-1] + k for k in range(n)]
    _copies(t).open.append((dst, targets, values))


def _commit(t):
    s = _copies(t)
    s.groups.append(s.open)
    s.open = []


def _wait(t, n):
    what = "pipeline.wait_prior"
    n = _int(n, what, "n")
    if n < 0:
        raise ValueError(f"{what}: n must be >= 0, got {n}")
    s = _copies(t)
    while len(s.groups) > n:
        for dst, targets, values in s.groups.pop(0):
            for i, v in zip(targets, values):
                dst[i] = v


_OPS = {"copy": _copy, "commit": _commit, "wait": _wait}
