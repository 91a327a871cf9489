"""The simulator's tensor-core calls (:mod:`cujit.wmma`): what a simulated thread does for
``fill_fragment``, ``load_matrix_sync``, ``mma_sync`` and ``store_matrix_sync``.

A fragment (:class:`cujit.wmma.FragmentValue`) holds its whole tile in every lane.  The
warp-wide calls are warp collectives of the block runner (:mod:`.threads`, kinds
``wmma.*``): all 32 lanes must arrive with the same arguments, else WarpDivergenceError.
A load reads 1/32 of the tile per lane (the elements ``lane, lane + 32, ...`` in row-major
tile order) through the array's own indexing, so bounds and race checks see each access by
the lane that makes it; the collective then gives every lane the whole tile.  A store
writes each lane's 1/32.  ``mma_sync`` computes ``a @ b + c`` from the inputs as rounded to
their precision, exactly in float64 for the tile sizes offered, rounded to float32 once.
"""
import sys

import numpy as np

from ..wmma import from_bfloat16, round_to_tf32, to_bfloat16
from .checked import unwrap

__all__ = ["wmma_call"]

_getframe = sys._getframe
_ALL = 0xFFFFFFFF


def wmma_call(t, op, args):
    """Run ``cujit.wmma`` operation ``op`` (``'fill'``, ``'load'``, ``'mma'``, ``'store'``)
    with ``args`` in simulated thread ``t``."""
    return _OPS[op](t, *args)


def _sync(t, kind, key, part=None):
    # frames: 0 _sync, 1 the op, 2 wmma_call, 3 SimThread.wmma, 4 cujit.wmma.<call>,
    # 5 the kernel
    t.req = (kind, _ALL, key, part, _getframe(5))
    blk = t.block
    return blk.wait(t, blk.at_warp)


def _check_frag(frag, what, roles):
    ft = getattr(frag, "type", None)
    if getattr(ft, "role", None) not in roles:
        raise TypeError(f"{what}: expected a {' or '.join(roles)} fragment made by "
                        f"wmma.fragment, got {frag!r}")
    return ft


def _rounded(values, precision):
    """float64 values of ``values`` (array read from memory, or numbers) as the fragment
    holds them."""
    v = np.asarray(values)
    if precision == "bfloat16":
        bits = v if v.dtype == np.uint16 else to_bfloat16(v.astype(np.float32))
        return from_bfloat16(bits).astype(np.float64)
    if precision == "tf32":
        return round_to_tf32(v.astype(np.float32)).astype(np.float64)
    if precision == "float16":
        return v.astype(np.float16).astype(np.float64)
    return v.astype(np.float32).astype(np.float64)


def _fill(t, frag, value):
    ft = _check_frag(frag, "wmma.fill_fragment", ("matrix_a", "matrix_b", "accumulator"))
    if ft.precision == "tf32":
        # the compiled fill converts with cvt.rna.tf32.f32: nearest, ties away from zero
        bits = np.float32(value).view(np.uint32)
        v = np.uint32((int(bits) + 0x1000) & 0xFFFFE000).view(np.float32)
        frag.tile[...] = float(v)
        return
    frag.tile[...] = _rounded(float(value), ft.precision)


def _addresses(t, a, ft, ldm, layout, what, offset=0):
    """Index tuples into array ``a`` of the tile elements lane ``t.laneid`` owns, the tile
    starting ``offset`` elements (in memory) after ``a``'s first, and the uniformity key of
    the call.  TypeError/ValueError for a bad array, ldm, offset or alignment; IndexError
    for a negative offset."""
    raw = unwrap(a)
    if not isinstance(raw, np.ndarray) or raw.ndim not in (1, 2):
        raise TypeError(f"{what}: expected a 1-d or 2-d array or view, got {a!r}")
    if raw.dtype != ft.storage.dtype:
        raise TypeError(f"{what}: a {ft.precision} fragment needs a {ft.storage} array, got "
                        f"{raw.dtype}")
    if isinstance(ldm, (bool, np.bool_)) or not isinstance(ldm, (int, np.integer)):
        raise TypeError(f"{what}: ldm must be an integer, got {ldm!r}")
    ldm = int(ldm)
    if isinstance(offset, (bool, np.bool_)) or not isinstance(offset, (int, np.integer)):
        raise TypeError(f"{what}: offset must be an integer, got {offset!r}")
    offset = int(offset)
    if offset < 0:
        raise IndexError(f"{what}: offset must be >= 0 (elements from the array's first to "
                         f"the tile's top-left), got {offset}")
    item = raw.itemsize
    span = ft.cols if layout == "row_major" else ft.rows
    if ldm < span or (ldm * item) % 16:
        raise ValueError(f"{what}: ldm={ldm} must be at least {span} (the tile's "
                         f"{'row' if layout == 'row_major' else 'column'} length) and a "
                         f"multiple of {16 // item} elements (16 bytes)")
    root = raw
    while isinstance(root.base, np.ndarray):
        root = root.base
    start = raw.__array_interface__["data"][0] - root.__array_interface__["data"][0]
    start += offset * item
    if start % 32:
        raise ValueError(f"{what}: the tile's first element is {start} bytes into its "
                         "allocation; wmma needs a 32-byte aligned address")
    if raw.strides[-1] != item:
        raise ValueError(f"{what}: the array's last axis must be contiguous (stride "
                         f"{item} bytes), got strides {raw.strides}")
    s0 = raw.strides[0] // item if raw.ndim == 2 else None
    if raw.ndim == 2 and raw.strides[0] % item:
        raise ValueError(f"{what}: row stride {raw.strides[0]} is not a whole number of "
                         "elements")
    pos = np.arange(t.laneid, ft.rows * ft.cols, 32)
    r, c = pos // ft.cols, pos % ft.cols
    mem = offset + (r * ldm + c if layout == "row_major" else c * ldm + r)
    if s0 is None:
        idx = [int(o) for o in mem]
    else:
        idx = [(int(o) // s0, int(o) % s0) for o in mem]
    key = (what, id(root), start, ldm, layout, ft)
    return idx, key


def _assemble(ft, parts):
    full = np.empty(ft.rows * ft.cols)
    for lane, part in enumerate(parts):
        full[lane::32] = part
    return full.reshape(ft.rows, ft.cols)


def _load(t, frag, src, ldm, layout, offset=0):
    what = "wmma.load_matrix_sync"
    ft = _check_frag(frag, what, ("matrix_a", "matrix_b", "accumulator"))
    if ft.role == "accumulator":
        if layout not in ("row_major", "col_major"):
            raise ValueError(f"{what}: loading an accumulator needs layout 'row_major' or "
                             f"'col_major', got {layout!r}")
    else:
        if layout is not None and layout != ft.layout:
            raise ValueError(f"{what}: a {ft.role} fragment's layout is its own "
                             f"({ft.layout}), got {layout!r}")
        layout = ft.layout
    idx, key = _addresses(t, src, ft, ldm, layout, what, offset)
    part = _rounded(np.array([src[i] for i in idx]), ft.precision)
    parts = _sync(t, "wmma.load_matrix_sync", key, part)
    frag.tile[...] = _assemble(ft, parts)


def _mma(t, d, a, b, c):
    what = "wmma.mma_sync"
    fd = _check_frag(d, what, ("accumulator",))
    fa = _check_frag(a, what, ("matrix_a",))
    fb = _check_frag(b, what, ("matrix_b",))
    fc = _check_frag(c, what, ("accumulator",))
    if fa.precision != fb.precision or len({f.shape for f in (fd, fa, fb, fc)}) > 1:
        raise ValueError(f"{what}: fragments of different shapes or input precisions: "
                         f"{fd}, {fa}, {fb}, {fc}")
    _sync(t, "wmma.mma_sync", (fd, fa, fb, fc))
    d.tile[...] = (a.tile @ b.tile + c.tile).astype(np.float32)


def _store(t, dst, frag, ldm, layout):
    what = "wmma.store_matrix_sync"
    ft = _check_frag(frag, what, ("accumulator",))
    if layout not in ("row_major", "col_major"):
        raise ValueError(f"{what}: layout must be 'row_major' or 'col_major', got {layout!r}")
    idx, key = _addresses(t, dst, ft, ldm, layout, what)
    _sync(t, "wmma.store_matrix_sync", key)
    vals = frag.tile.reshape(-1)[t.laneid::32].astype(np.float32)
    for i, v in zip(idx, vals):
        dst[i] = v


_OPS = {"fill": _fill, "load": _load, "mma": _mma, "store": _store}
