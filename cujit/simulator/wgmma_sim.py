"""The simulator's warpgroup MMA (:mod:`cujit.wgmma`): what a simulated thread does for
``fill_accumulator``, ``make_descriptor``, ``fence``, ``fence_proxy_async``, ``mma_async``,
``commit_group``, ``wait_group`` and ``store_accumulator``.

A thread's :class:`~cujit.wgmma.AccumulatorValue` holds the 16 rows of the 64 x N tile that
its warp ``w = warp % 4`` of the warpgroup computes; each thread owns N/2 of those elements
(the module docstring of :mod:`cujit.wgmma`, "Accumulator registers") and
``store_accumulator`` writes only those.  ``mma_async`` is a warp collective of the block
runner (:mod:`.threads`, kind ``wgmma.mma_async``): all 32 lanes arrive with the same
arguments (else WarpDivergenceError), then the first lane to resume computes the warp's 16
rows once, for every lane: it reads A's rows ``16 w .. 16 w + 15`` and all of B from the raw
bytes of the shared buffer through the descriptors' layout table and swizzle (vectorised),
as rounded to the input precision, and computes ``A @ B + C`` exactly in float64, rounded to
float32 once.  C is the accumulator's value as the warp's lanes hold it, or the pending
result of the last ``mma_async`` into the same accumulator that no wait has covered yet
(chaining, as the hardware's in-order accumulation gives).

The result lands at the ``wait_group`` that covers its group (:class:`AsyncMmas` on
``SimThread.mmas``: the thread's open and committed groups, as :mod:`.pipeline_sim`'s
copies), as a new tile (tiles are never changed in place: the 32 lanes of a warp share one
result array).  With checks on, each lane records its 1/32 of the warp's shared-memory
reads (elements ``lane, lane + 32, ...`` of A's rows then B, in row-major tile order) with
the race tracker at the issue and again at the covering wait (when a barrier came between:
in the same interval the first record stands), so a write by another thread into a tile
between the two, after a barrier, is a race; and the warp compares the tiles' bytes at the
wait with those it read, so an overwrite by any thread before the wait (the tensor cores
read asynchronously) is a DataRaceError too.  Not modelled: the async proxy (a write not
followed by ``fence_proxy_async`` reads as written), ``fence`` (a no-op), and the
warpgroup's uniformity (each warp checks its own 32 lanes).  A store or fill while an
``mma_async`` on the accumulator is in flight uses or sets the tile as it is (on the GPU the
registers are undefined then): the result still lands at the wait.
"""
import sys

import numpy as np

from ..types.fragment import LAYOUTS
from ..wgmma import SWIZZLES, AccumulatorValue, DescriptorValue
from ..wmma import from_bfloat16, precision_of, round_to_tf32
from .checked import CheckedArray, SharedCheckedArray, unwrap
from .errors import DataRaceError, WarpDivergenceError, fmt_dim, where

__all__ = ["AsyncMmas", "wgmma_call"]

_getframe = sys._getframe
_ALL = 0xFFFFFFFF
_INT = (int, np.integer)
_REAL = (int, float, np.integer, np.floating)
#: dtype of the raw elements an operand of each precision is read as (bfloat16: its bits)
_RAW = {"float16": np.dtype(np.float16), "bfloat16": np.dtype(np.uint16),
        "tf32": np.dtype(np.float32)}
# the race tracker is called this many frames below the kernel: read_many <- _record <- the
# op <- wgmma_call <- SimThread.wgmma <- cujit.wgmma.<call> <- kernel
_READ_DEPTH = 6


class AsyncMmas:
    """One simulated thread's ``mma_async`` in flight: ``open`` (issued since its last
    ``commit_group``) and ``groups`` (committed, oldest first); each entry is ``(acc,
    mma, epoch)``: ``mma`` the warp's :class:`_WarpMma`, ``epoch`` the block's barrier
    interval (``Block.epoch_base``) at the issue."""
    __slots__ = ("open", "groups")

    def __init__(self):
        self.open = []
        self.groups = []

    def pending(self, acc):
        """The result tile of the newest ``mma_async`` into ``acc`` still in flight, or
        None."""
        for entries in (self.open, *reversed(self.groups)):
            for a, mma, _ in reversed(entries):
                if a is acc:
                    return mma.result
        return None


def wgmma_call(t, op, args):
    """Run ``cujit.wgmma`` operation ``op`` (``'fill'``, ``'descriptor'``, ``'fence'``,
    ``'fence_proxy'``, ``'mma'``, ``'commit'``, ``'wait'``, ``'store'``) with ``args`` in
    simulated thread ``t``."""
    return _OPS[op](t, *args)


def _mmas(t):
    s = t.mmas
    if s is None:
        s = t.mmas = AsyncMmas()
    return s


def _int(v, what, name):
    if isinstance(v, (bool, np.bool_)) or not isinstance(v, _INT):
        raise TypeError(f"{what}: {name} must be an integer, got {v!r}")
    return int(v)


def _acc(acc, what):
    if not isinstance(acc, AccumulatorValue):
        raise TypeError(f"{what}: expected an accumulator made by wgmma.accumulator, got "
                        f"{acc!r}")
    return acc


# -- shared buffers ----------------------------------------------------------------------------
def _root(raw):
    while isinstance(raw.base, np.ndarray):
        raw = raw.base
    return raw


def _addr(raw):
    return raw.__array_interface__["data"][0]


def _buffer(t, smem, what):
    """``(addr, nbytes, key, tracker)`` of the block's shared buffer that array ``smem``
    is in (a static shared array, or the dynamic buffer): its host address and size, a
    hashable identity and its race tracker (None with checks off).  TypeError for an array
    outside shared memory."""
    if isinstance(smem, SharedCheckedArray):
        tr = smem._tracker
        # the tracker has a slot per byte of its buffer (one for an empty buffer, which no
        # element of 2 or 4 bytes fits anyway)
        return tr.addr, len(tr.w), id(tr), tr
    if isinstance(smem, CheckedArray) or not isinstance(smem, np.ndarray):
        name = getattr(smem, "_name", None)
        raise TypeError(f"{what}: expected an array in shared memory (cuda.shared.array), got "
                        + (f"{name!r}, which is not" if name else repr(smem)))
    # checks off: the block's arrays are plain NumPy arrays; find the one holding smem
    lo = _addr(smem)
    dyn = t.block.shared.dyn
    if dyn.nbytes and _addr(dyn) <= lo < _addr(dyn) + dyn.nbytes:
        return _addr(dyn), dyn.nbytes, id(dyn), None
    for arr in t.block.shared_arrays.values():
        a = unwrap(arr)
        if isinstance(a, np.ndarray) and _root(a) is not dyn and \
                _addr(a) <= lo < _addr(a) + max(a.nbytes, 1):
            return _addr(a), a.nbytes, id(a), None
    raise TypeError(f"{what}: expected an array in shared memory (cuda.shared.array), got an "
                    f"array of shape {smem.shape} that is not in the block's shared memory")


def _bytes(addr, nbytes, like):
    """A uint8 view of the ``nbytes`` bytes at host address ``addr``, inside the allocation
    of NumPy array ``like``."""
    root = _root(unwrap(like))
    flat = root.reshape(-1).view(np.uint8) if root.ndim != 1 or root.dtype != np.uint8 \
        else root
    lo = addr - _addr(root)
    return flat[lo:lo + nbytes]


# -- descriptors -------------------------------------------------------------------------------
def _descriptor(t, smem, offset, swizzle, leading_bytes, stride_bytes):
    what = "wgmma.make_descriptor"
    # under the access recorder a shared array is its RecordingArray (access.py) over the
    # checked or plain one: the tensor cores' reads are no element accesses to log
    if getattr(smem, "_space", None) == "shared":
        smem = smem._inner
    addr, nbytes, _, _ = _buffer(t, smem, what)
    offset = _int(offset, what, "offset")
    if offset < 0:
        raise ValueError(f"{what}: offset must be >= 0 (elements from the array's first to "
                         f"the operand's first byte), got {offset}")
    if isinstance(swizzle, (bool, np.bool_)) or swizzle not in SWIZZLES:
        raise ValueError(f"{what}: swizzle must be one of {SWIZZLES} (bytes), got "
                         f"{swizzle!r}")
    for name, v in (("leading_bytes", leading_bytes), ("stride_bytes", stride_bytes)):
        v = _int(v, what, name)
        if v % 16 or not 0 <= v < 2 ** 18:
            raise ValueError(f"{what}: {name} must be a multiple of 16 in [0, 2**18) bytes, "
                             f"got {v}")
    raw = unwrap(smem)
    start = _addr(raw) - addr + offset * raw.itemsize
    if start % 16:
        raise ValueError(f"{what}: the operand starts {start} bytes into its shared buffer "
                         f"(element offset {offset} of {raw.dtype}); a descriptor needs a "
                         "16-byte aligned start")
    return DescriptorValue(smem, start, int(swizzle), int(leading_bytes), int(stride_bytes))


def _offsets(d, rows, ki, e, k_major):
    """Byte offsets from the buffer's first byte of the operand elements (r, k), an
    ``(len(rows), ki)`` int64 array: the layout table of :mod:`cujit.wgmma`, then the
    swizzle."""
    r = np.asarray(rows, np.int64)[:, None]
    k = np.arange(ki, dtype=np.int64)[None, :]
    w, lbo, sbo = d.swizzle, d.leading_bytes, d.stride_bytes
    if k_major:
        if w == 0:
            per = 16 // e
            x = (r % 8) * 16 + (r // 8) * sbo + (k % per) * e + (k // per) * lbo
        else:
            x = (r % 8) * w + (r // 8) * sbo + k * e
    else:
        if w == 0:
            per = 16 // e
            x = (r % per) * e + (r // per) * sbo + (k % 8) * 16 + (k // 8) * lbo
        else:
            per = w // e
            x = (r % per) * e + (r // per) * lbo + (k % 8) * w + (k // 8) * sbo
    x = x + d.start
    if w:
        x ^= ((x >> 7) & (w // 16 - 1)) << 4
    return x


def _check_start(d, k_major, rows, e, operand, what):
    """ValueError for a swizzled operand whose start the hardware does not read as the
    table says (:mod:`cujit.wgmma`: a multiple of ``8 * W`` plus at most ``W - E``): the
    ``E`` bytes the operand spans in each ``W``-byte swizzled row (32 when K-major, the K
    steps inside one row; ``min(rows * e, W)`` when MN-major) must stay inside the row, as
    the swizzle phase of an atom (no base offset in the descriptor) is its first row's."""
    w = d.swizzle
    if not w:
        return
    s = d.start % (8 * w)
    span = 32 if k_major else min(rows * e, w)
    if s > w - span:
        raise ValueError(
            f"{what}: {operand}'s descriptor starts {d.start} bytes into its buffer, {s} bytes "
            f"into a {8 * w}-byte atom of the {w}-byte swizzle; a "
            f"{'K' if k_major else 'MN'}-major operand spanning {span} bytes of each swizzled "
            f"row starts at most {w - span} bytes after a multiple of {8 * w}")


class _Operand:
    """One operand's reads by a warp: the shared buffer's tracker and array (for reports),
    the byte offsets read (row-major tile order) and the raw elements read at the issue."""
    __slots__ = ("tracker", "array", "offs", "raw", "view")

    def __init__(self, tracker, array, offs, raw, view):
        self.tracker, self.array, self.offs, self.raw, self.view = \
            tracker, array, offs, raw, view


class _WarpMma:
    """One warp's ``mma_async``: computed once by the first of its lanes to resume
    (``result``: the float32 (16, N) tile), then shared by all 32."""
    __slots__ = ("result", "operands", "checked", "lane_offs")

    def __init__(self):
        self.result = None
        self.operands = ()
        self.checked = False
        self.lane_offs = None


def _read(t, d, rows, ki, prec, k_major, operand, what):
    """``(values as float64 (len(rows), ki), _Operand)`` of operand ``d``."""
    e = _RAW[prec].itemsize
    addr, nbytes, _, tracker = _buffer(t, d.array, what)
    x = _offsets(d, rows, ki, e, k_major)
    hi = int(x.max()) + e
    if hi > nbytes:
        raise IndexError(f"{what}: {operand}'s descriptor ({d!r}) reads bytes up to {hi} of "
                         f"its shared buffer, which holds {nbytes}")
    buf = _bytes(addr, nbytes, d.array)
    view = buf[:nbytes // e * e].view(_RAW[prec])
    raw = view[x // e]
    if prec == "float16":
        vals = raw.astype(np.float64)
    elif prec == "bfloat16":
        vals = from_bfloat16(raw).astype(np.float64)
    else:
        vals = round_to_tf32(raw).astype(np.float64)
    return vals, _Operand(tracker, d.array, x, raw, view)


def _key(t, d, what, operand):
    if not isinstance(d, DescriptorValue):
        raise TypeError(f"{what}: {operand} must be a descriptor made by "
                        f"wgmma.make_descriptor, got {d!r}")
    return (_buffer(t, d.array, what)[2], d.start, d.swizzle, d.leading_bytes,
            d.stride_bytes)


def _lane_c(parts, n):
    """The warp's C (16, n): each element from the lane that owns it (lane
    ``4 * (r % 8) + (c % 8) // 2``: the accumulator register mapping)."""
    first = parts[0]
    if all(p is first for p in parts):
        return first
    stack = np.stack(parts)
    r = np.arange(16)[:, None]
    c = np.arange(n)[None, :]
    return stack[4 * (r % 8) + (c % 8) // 2, r, c]


#: the float dtype of the arrays that hold each precision's tiles (bfloat16: its bits, in an
#: integer array; any buffer of integers passes, as bytes are bytes)
_FLOAT_STORAGE = {"float16": np.dtype(np.float16), "tf32": np.dtype(np.float32),
                  "bfloat16": None}


def _check_storage(d, prec, what, name):
    """TypeError when descriptor ``d``'s array is a float array of another precision than
    ``prec`` reads (a float16 buffer read as bfloat16 is noise, not a product)."""
    arr = getattr(d, "array", None)
    raw = unwrap(arr._inner if getattr(arr, "_space", None) is not None else arr)
    if isinstance(raw, np.ndarray) and raw.dtype.kind == "f" and \
            raw.dtype != _FLOAT_STORAGE[prec]:
        want = {"float16": "a float16 array", "tf32": "a float32 array",
                "bfloat16": "a uint16 array of bfloat16 bits (wmma.to_bfloat16)"}[prec]
        raise TypeError(f"{what}: {name} describes a {raw.dtype} array, but {prec} tiles are "
                        f"read from {want} (or any integer array of their bytes)")


def _mma(t, acc, a_desc, b_desc, dtype, a_layout, b_layout, accumulate=True):
    what = "wgmma.mma_async"
    _acc(acc, what)
    try:
        prec = precision_of(dtype)
    except ValueError:
        prec = None
    if prec is None or prec == "float32":
        raise ValueError(f"{what}: dtype must be float16, 'bfloat16' or 'tf32' (the inputs' "
                         f"precision; float32 inputs are read as 'tf32'), got {dtype!r}")
    for name, lay in (("a_layout", a_layout), ("b_layout", b_layout)):
        if lay not in LAYOUTS:
            raise ValueError(f"{what}: {name} must be 'row_major' or 'col_major', got "
                             f"{lay!r}")
    if prec == "tf32" and (a_layout != "row_major" or b_layout != "col_major"):
        raise ValueError(f"{what}: tf32 operands must be K-major: a_layout 'row_major' and "
                         f"b_layout 'col_major', got {a_layout!r} and {b_layout!r}")
    if not isinstance(accumulate, (bool, np.bool_, *_INT)):
        raise TypeError(f"{what}: accumulate must be a bool, got {accumulate!r}")
    accumulate = bool(accumulate)
    for name, d in (("a_desc", a_desc), ("b_desc", b_desc)):
        _check_storage(d, prec, what, name)
    blk = t.block
    if blk.nthreads % 128:
        raise WarpDivergenceError(
            f"cujit.{what} in block blockIdx={fmt_dim(blk.bid)} is warpgroup-wide: all 128 "
            f"threads of a warpgroup call it together, but the block has {blk.nthreads} "
            "threads (use a block size that is a multiple of 128)")
    ka, kb = a_layout == "row_major", b_layout == "col_major"
    key = (what, acc.type, _key(t, a_desc, what, "a_desc"), _key(t, b_desc, what, "b_desc"),
           prec, a_layout, b_layout, accumulate)
    s = _mmas(t)
    c = None
    if accumulate:
        c = s.pending(acc)
        if c is None:
            c = acc.tile
    # frames: 0 _mma, 1 wgmma_call, 2 SimThread.wgmma, 3 cujit.wgmma.mma_async, 4 the kernel
    t.req = ("wgmma.mma_async", _ALL, key, (c, _WarpMma()), _getframe(4))
    parts = blk.wait(t, blk.at_warp)
    mma = parts[0][1]
    if mma.result is None:
        n = acc.type.n
        ki = 8 if prec == "tf32" else 16
        w = t.warp % 4
        e = _RAW[prec].itemsize
        _check_start(a_desc, ka, 64, e, "a_desc", what)
        _check_start(b_desc, kb, n, e, "b_desc", what)
        av, oa = _read(t, a_desc, range(16 * w, 16 * w + 16), ki, prec, ka, "a_desc", what)
        bv, ob = _read(t, b_desc, range(n), ki, prec, kb, "b_desc", what)
        r = av @ bv.T
        if accumulate:
            r += _lane_c([p[0] for p in parts], n)
        mma.result = r.astype(np.float32)
        mma.operands = (oa, ob)
        if oa.tracker is not None or ob.tracker is not None:
            flat = [o.offs.reshape(-1) for o in (oa, ob)]
            # lane l reads elements l, l + 32, ... of A's rows then of B (each operand apart:
            # they may be in different buffers)
            mma.lane_offs = [[f[lane::32].tolist() for f in flat] for lane in range(32)]
    s.open.append((acc, mma, t.block.epoch_base))
    _record(t, mma)


def _record(t, mma):
    """Record lane ``t``'s share of warp call ``mma``'s shared-memory reads with the race
    trackers (checks on)."""
    if mma.lane_offs is None:
        return
    for o, offs in zip(mma.operands, mma.lane_offs[t.laneid]):
        if o.tracker is not None:
            arr = o.array
            o.tracker.read_many(offs, arr, lambda off: _index(arr, off), _READ_DEPTH)


def _index(arr, off):
    """The index into shared array ``arr`` of the element at byte ``off`` of its buffer,
    for a race report (the flat element number when it is outside ``arr``)."""
    raw = arr._a
    flat = (off - arr._off) // raw.itemsize
    if raw.ndim == 1 or not 0 <= flat < raw.size:
        return flat
    return tuple(int(i) for i in np.unravel_index(flat, raw.shape))


def _commit(t):
    s = _mmas(t)
    s.groups.append(s.open)
    s.open = []


def _wait(t, n):
    what = "wgmma.wait_group"
    if isinstance(n, (bool, np.bool_)) or not isinstance(n, _INT) or n < 0:
        raise ValueError(f"{what}: n must be an integer >= 0 (the groups left in flight), "
                         f"got {n!r}")
    s = t.mmas
    if s is None:
        return
    while len(s.groups) > int(n):
        for acc, mma, epoch in s.groups.pop(0):
            if mma.lane_offs is not None:
                _unchanged(t, mma)
                if epoch != t.block.epoch_base:
                    # in the barrier interval the reads are recorded already
                    _record(t, mma)
            acc.tile = mma.result


def _unchanged(t, mma):
    """DataRaceError when a tile an ``mma_async`` read was overwritten before the wait that
    covers it (checked once per warp call, by its first lane to land it)."""
    if mma.checked:
        return
    mma.checked = True
    for name, o in zip(("A", "B"), mma.operands):
        now = o.view[o.offs // o.raw.itemsize]
        changed = now.view(np.uint8).reshape(now.shape + (-1,)) != \
            o.raw.view(np.uint8).reshape(o.raw.shape + (-1,))
        if changed.any():
            off = int(o.offs[changed.any(axis=-1)][0])
            arr = o.array
            raise DataRaceError(
                f"data race on shared memory: {where(t)} waits at wgmma.wait_group for an "
                f"mma_async whose {name} tile changed since it read it "
                f"({arr._name}[{_fmt(_index(arr, off))}]): the tensor cores read the tiles at "
                "some time before the covering wait_group, so they must not be overwritten "
                "until then")


def _fmt(idx):
    return ", ".join(str(i) for i in idx) if isinstance(idx, tuple) else str(idx)


def _in_flight(t, acc, what):
    """DataRaceError when an ``mma_async`` into ``acc`` is still in flight for thread ``t``:
    the tensor cores own its registers until the covering ``wait_group`` (on the GPU a read
    gives undefined values and a write races with the product)."""
    s = t.mmas
    if s is not None and s.pending(acc) is not None:
        raise DataRaceError(
            f"data race on a wgmma accumulator: {where(t)} calls {what} while an mma_async "
            "into it is in flight; the accumulator's registers belong to the tensor cores "
            "until a wgmma.wait_group covers that mma_async's group (commit_group it, then "
            "wait_group)")


def _fill(t, acc, value):
    what = "wgmma.fill_accumulator"
    _acc(acc, what)
    _in_flight(t, acc, what)
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, _REAL):
        raise TypeError(f"{what}: value must be a real number, got {value!r}")
    acc.tile = np.full((16, acc.type.n), np.float32(value), np.float32)


def _noop(t):
    """``fence`` and ``fence_proxy_async``: the simulator's mma_async reads the tiles and
    lands its result in program order, so nothing is left to order."""


_STORE_DTYPES = (np.dtype(np.float32), np.dtype(np.float16))


def _store(t, dst, acc):
    what = "wgmma.store_accumulator"
    _acc(acc, what)
    _in_flight(t, acc, what)
    raw = unwrap(dst)
    if not isinstance(raw, np.ndarray) or raw.ndim != 2 or raw.dtype not in _STORE_DTYPES:
        desc = f"a {raw.ndim}-d {raw.dtype} array" if isinstance(raw, np.ndarray) else \
            repr(dst)
        raise TypeError(f"{what}: dst must be a 2-d float32 or float16 array or view, got "
                        f"{desc}")
    n = acc.type.n
    lane = t.laneid
    i = np.arange(n // 2)
    rl = lane // 4 + 8 * ((i // 2) % 2)
    cols = 8 * (i // 4) + 2 * (lane % 4) + i % 2
    vals = acc.tile[rl, cols]
    r0 = 16 * (t.warp % 4)
    for r, c, v in zip((rl + r0).tolist(), cols.tolist(), vals):
        dst[r, c] = v


_OPS = {"fill": _fill, "descriptor": _descriptor, "fence": _noop, "fence_proxy": _noop,
        "mma": _mma, "commit": _commit, "wait": _wait, "store": _store}
