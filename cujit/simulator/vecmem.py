"""Memory of the block-vectorized executor: gathers and scatters with Numba's index rule and
the simulator's checks, shared memory with vectorized race detection, and the block runner.

Index rule (as :class:`~.checked.CheckedArray`): a negative index wraps once, anything else
outside the axis is :class:`~.errors.OutOfBoundsError`, reported for the lowest active
thread (lane) whose index fails, in the per-thread report's words.  Lanes outside the mask
(threads that took the other branch or have exited) are neither read nor written nor
checked.

Shared memory (:class:`VShared`): with checks on, each static shared array keeps, for the
current barrier interval, the writer of each element (lane + 1) and the reads since the last
write; the rules are :class:`~.checked.RaceTracker`'s: a write conflicts with a write or a
read of the same element by another thread, many readers are fine, a barrier starts a new
interval.  Several lanes writing one element in one vector store is a write-write race.
Reads are only logged (a list append) and folded into per-element reader records when a
write follows in the same interval, so read-only intervals (a tiled matmul's inner loop)
cost no race bookkeeping.
"""
import os

import numpy as np

from .errors import BarrierDivergenceError, DataRaceError, OutOfBoundsError, fmt_dim
from .memory import SharedMemory, as_dtype, check_shape
from .vecops import LANES

__all__ = ["VShared", "VectorBlock", "gload", "gstore"]

_BIG = np.iinfo(np.int32).max


def _lanes_where(block, lane):
    return (f"threadIdx={fmt_dim(block.tid_of(lane))} "
            f"blockIdx={fmt_dim(block.bid)}")


def _fmt_index(vals):
    if len(vals) == 1:
        return str(vals[0])
    return "(" + ", ".join(str(v) for v in vals) + ")"


def _at(v, lane):
    return int(v[lane]) if isinstance(v, np.ndarray) else int(v)


def _check(block, shape, idx, mask, name, site):
    """Wrapped index components (NumPy intp arrays or ints) of ``idx`` for the active lanes;
    raises OutOfBoundsError for the lowest active lane with an index out of range."""
    out = []
    bad_lane, bad_axis = None, None
    for ax, (i, n) in enumerate(zip(idx, shape)):
        if isinstance(i, np.ndarray):
            if i.dtype.kind == "u":
                oob = i >= n
                w = np.where(oob, 0, i).astype(np.intp)
            else:
                w = np.where(i < 0, i + n, i)
                oob = (w < 0) | (w >= n)
                w = w.astype(np.intp, copy=False)
            bad = oob if mask is None else oob & mask
            if bad.any():
                lane = int(np.argmax(bad))
                if bad_lane is None or lane < bad_lane:
                    bad_lane, bad_axis = lane, ax
            out.append(np.where(oob, 0, w) if oob.any() else w)
        else:
            i = int(i)
            w = i + n if i < 0 else i
            if not 0 <= w < n:
                if mask is None or mask.any():
                    lane = 0 if mask is None else int(np.argmax(mask))
                    if bad_lane is None or lane < bad_lane:
                        bad_lane, bad_axis = lane, ax
                w = 0
            out.append(w)
    if bad_lane is not None:
        vals = [_at(i, bad_lane) for i in idx]
        raise OutOfBoundsError(
            f"index {_fmt_index(vals)} is out of bounds for axis {bad_axis} with size "
            f"{shape[bad_axis]} of array '{name}' of shape {tuple(shape)}: "
            f"{_lanes_where(block, bad_lane)} at {site}")
    return tuple(out)


def gload(block, a, idx, mask, name, site):
    """``a[idx]`` for every lane (``idx``: tuple of ints or lane arrays, one per axis);
    inactive lanes read element 0...0 (or 0 for an empty array)."""
    n = block.n
    log = block.glog.get(id(a))
    if log is None:
        log = block.glog[id(a)] = _GlobalLog(a)
    log.read(block, idx, mask)
    if mask is None:
        try:
            r = a[idx]
        except IndexError:
            r = a[_check(block, a.shape, idx, None, name, site)]
    else:
        safe = _check(block, a.shape, idx, mask, name, site)
        if a.size == 0:
            return np.zeros(n, a.dtype)
        r = a[safe]
    if not isinstance(r, np.ndarray) or r.shape != (n,):
        r = np.broadcast_to(r, (n,)).copy()
    return r


def gstore(block, a, idx, value, mask, name, site):
    """``a[idx] = value`` for the active lanes (later lanes win at one element, as the
    per-thread order); the old values go to the block's undo log first."""
    log = block.glog.get(id(a))
    if log is None:
        log = block.glog[id(a)] = _GlobalLog(a)
    if mask is None or mask.any():
        log.write(block, idx, mask, name, site)
    if mask is None:
        try:
            old = a[idx]
        except IndexError:
            idx = _check(block, a.shape, idx, None, name, site)
            old = a[idx]
        block.undo.append((a, idx, old))
        a[idx] = value
        return
    if not mask.any():
        return
    safe = _check(block, a.shape, idx, mask, name, site)
    sel = tuple(np.broadcast_to(i, mask.shape)[mask] for i in safe)
    block.undo.append((a, sel, a[sel]))
    a[sel] = value[mask] if isinstance(value, np.ndarray) else value


class _Conflict(Exception):
    """Two threads of a block touched one global element in one barrier interval, one of
    them writing: their order matters, so the block runs per thread."""


_DENSE_LIMIT = 1 << 22     # elements: larger written arrays accessed twice run per thread


class _GlobalLog:
    """Accesses to one global array in the current barrier interval of a vector block.
    Reads are logged as given until the array is written; one write is kept as its offsets;
    from the second access after a write on, each element's lowest and highest lane and
    whether it was written live in dense per-element arrays (made once per launch and
    array, reset at the touched elements), so long grid-stride loops cost linear time."""
    __slots__ = ("a", "pending", "first", "dense", "aoffs", "alanes")

    def __init__(self, a):
        self.a = a
        self.pending = []
        self.first = None       # (offsets, lanes) of the only write so far
        self.dense = None       # (lowest lane, highest lane, written, touched offsets)
        self.aoffs = []         # atomic updates: element offsets and lanes
        self.alanes = []

    def _flat(self, block, idx, mask):
        a = self.a
        off = 0
        for i, n, st in zip(idx, a.shape, a.strides):
            w = np.where(i < 0, i + n, i) if isinstance(i, np.ndarray) else (
                i + n if i < 0 else i)
            off = off + np.asarray(w, np.int64) * st
        if a.itemsize > 1:
            off = off // a.itemsize
        off = off - _base_elem(a)
        off = np.broadcast_to(off, (block.n,))
        lanes = block.lane1
        if mask is not None:
            off, lanes = off[mask], lanes[mask]
        return off, lanes

    def _make_dense(self, block):
        a = self.a
        span = _span(a)
        if span > _DENSE_LIMIT:
            raise _Conflict()
        cache = block.lanes.dense
        d = cache.get(id(a))
        if d is None or len(d[0]) < span:
            d = cache[id(a)] = (np.full(span, _BIG64, np.int64), np.zeros(span, np.int64),
                                np.zeros(span, bool), [])
        self.dense = d
        if self.first is not None:
            self._add(*self.first, True)
            self.first = None
        for idx, mask in self.pending:
            self._add(*self._flat(block, idx, mask), False)
        self.pending.clear()

    def _add(self, off, lanes, write):
        lo, hi, wr, touched = self.dense
        np.minimum.at(lo, off, lanes)
        np.maximum.at(hi, off, lanes)
        if write:
            wr[off] = True
        touched.append(off)

    def _check_dense(self, off, lanes, write):
        lo, hi, wr, _ = self.dense
        l0, h0 = lo[off], hi[off]
        other = (l0 != _BIG64) & ~((l0 == lanes) & (h0 == lanes))
        if not write:
            other &= wr[off]
        if other.any():
            raise _Conflict()

    def _check_atomics(self, off, lanes):
        """Raise when a plain access touches an element that another lane (or several
        lanes) updated atomically in this interval."""
        if not self.aoffs:
            return
        po, pl = np.concatenate(self.aoffs), np.concatenate(self.alanes)
        sel = np.isin(po, off)
        if not sel.any():
            return
        by_elem = {}
        for o, ln in zip(po[sel].tolist(), pl[sel].tolist()):
            by_elem.setdefault(o, set()).add(ln)
        for o, ln in zip(off.tolist(), lanes.tolist()):
            got = by_elem.get(o)
            if got is not None and (len(got) > 1 or ln not in got):
                raise _Conflict()

    def read(self, block, idx, mask):
        if self.first is None and self.dense is None and not self.aoffs:
            self.pending.append((idx, mask))
            return
        off, lanes = self._flat(block, idx, mask)
        self._check_atomics(off, lanes)
        if self.first is None and self.dense is None:
            self.pending.append((idx, mask))
            return
        if self.dense is None:
            self._make_dense(block)
        self._check_dense(off, lanes, False)
        self._add(off, lanes, False)

    def write(self, block, idx, mask, name, site):
        off, lanes = self._flat(block, idx, mask)
        if len(off) > 1:
            so = np.sort(off)
            if (so[1:] == so[:-1]).any():
                raise _Conflict()
        self._check_atomics(off, lanes)
        if self.dense is None and self.first is None and not self.pending:
            self.first = (off, lanes)
            return
        if self.dense is None:
            self._make_dense(block)
        self._check_dense(off, lanes, True)
        self._add(off, lanes, True)

    def plain_touched(self, block, off, lanes):
        """Raise when a lane other than the atomic's touched one of ``off`` plainly."""
        if self.dense is None and (self.first is not None or self.pending):
            self._make_dense(block)
        if self.dense is not None:
            lo, hi, _, _ = self.dense
            l0, h0 = lo[off], hi[off]
            if ((l0 != _BIG64) & ~((l0 == lanes) & (h0 == lanes))).any():
                raise _Conflict()

    def reset(self):
        """End of the barrier interval (or of the block)."""
        if self.dense is not None:
            lo, hi, wr, touched = self.dense
            for off in touched:
                lo[off] = _BIG64
                hi[off] = 0
                wr[off] = False
            touched.clear()
            self.dense = None


_BIG64 = np.iinfo(np.int64).max


def _base_elem(a):
    """Element offset of the lowest element of ``a`` from its first one (negative strides)."""
    lowest = 0
    for n, st in zip(a.shape, a.strides):
        if st < 0 and n > 0:
            lowest += (n - 1) * st
    return lowest // a.itemsize if a.itemsize else 0


def _span(a):
    """Elements between ``a``'s lowest and highest element (the dense records' length)."""
    lo = hi = 0
    for n, st in zip(a.shape, a.strides):
        if n == 0:
            return 1
        if st < 0:
            lo += (n - 1) * st
        else:
            hi += (n - 1) * st
    return (hi - lo) // max(a.itemsize, 1) + 1


def vatomic(block, op, a, idx, vals, mask, name, site):
    """``cuda.atomic.<op>(a, idx, *vals)`` for the active lanes in lane order; returns the
    old values (a lane array).  The order of the updates of one element must be the
    per-thread order (lanes ascending over the block's atomic statements) and no other lane
    may read or write an updated element in the interval; otherwise ``_Conflict`` (the block
    then runs per thread)."""
    from .checked import unwrap
    a = unwrap(a)
    n = block.n
    log = block.glog.get(id(a))
    if log is None:
        log = block.glog[id(a)] = _GlobalLog(a)
    safe = _check(block, a.shape, idx, mask, name, site)
    off, lanes = log._flat(block, safe, mask)
    log.plain_touched(block, off, lanes)
    if log.aoffs:
        po, pl = np.concatenate(log.aoffs), np.concatenate(log.alanes)
        common = np.intersect1d(po, off)
        if len(common):
            prev_max = pl[np.isin(po, common)].max()
            if prev_max > lanes[np.isin(off, common)].min():
                raise _Conflict()
    log.aoffs.append(off)
    log.alanes.append(lanes)
    old = np.zeros(n, a.dtype)
    active = range(n) if mask is None else np.flatnonzero(mask).tolist()
    cols = [np.broadcast_to(i, (n,)) for i in safe]
    vcols = [np.broadcast_to(v, (n,)) for v in vals]
    for lane in active:
        t = tuple(int(c[lane]) for c in cols)
        o = a[t]
        block.undo.append((a, t, o))
        v = vcols[0][lane]
        if op == "add":
            new = o + v
        elif op == "sub":
            new = o - v
        elif op == "max":
            new = max(o, v)
        elif op == "min":
            new = min(o, v)
        elif op == "nanmax":
            new = np.fmax(o, v)
        elif op == "nanmin":
            new = np.fmin(o, v)
        elif op == "exch":
            new = v
        elif op == "and":
            new = o & v
        elif op == "or":
            new = o | v
        elif op == "xor":
            new = o ^ v
        elif op == "inc":
            new = 0 if o >= v else o + 1
        elif op == "dec":
            new = v if (o == 0 or o > v) else o - 1
        elif op == "cas":
            new = vcols[1][lane] if o == v else o
        else:
            raise ValueError(f"unknown atomic operation {op!r}")
        a[t] = new
        old[lane] = o
    return old


class VShared:
    """One static shared array of a block on the vector path: ``a`` the NumPy array,
    ``name`` its report name; race records when ``checks``."""
    __slots__ = ("a", "name", "shape", "ndim", "size", "dtype", "block", "checks", "w",
                 "wline", "wrote", "pending", "rmin", "rmax", "rminline", "rmaxline",
                 "dirty", "estrides")

    def __init__(self, block, a, name, checks):
        self.a = a
        self.name = name
        self.shape = a.shape
        self.ndim = a.ndim
        self.size = a.size
        self.dtype = a.dtype
        self.block = block
        self.checks = checks
        self.estrides = tuple(s // a.itemsize for s in a.strides)
        # tracked with checks off too: a race found there makes the block run per thread,
        # whose thread-by-thread order is then the result
        if True:
            n = max(a.size, 1)
            self.w = np.zeros(n, np.int32)
            self.wline = np.zeros(n, np.int32)
            self.rmin = np.full(n, _BIG, np.int32)
            self.rmax = np.zeros(n, np.int32)
            self.rminline = np.zeros(n, np.int32)
            self.rmaxline = np.zeros(n, np.int32)
            self.wrote = False
            self.dirty = False
            self.pending = []

    def barrier(self):
        """A new barrier interval: forget this interval's accesses."""
        if self.wrote:
            self.w.fill(0)
            self.wrote = False
        if self.dirty:
            self.rmin.fill(_BIG)
            self.rmax.fill(0)
            self.dirty = False
        self.pending.clear()

    def _offsets(self, safe):
        off = 0
        for i, s in zip(safe, self.estrides):
            off = off + i * s
        return off

    def load(self, idx, mask, site, line):
        blk = self.block
        if not self.wrote:
            # nothing written in this interval: no race yet; log the read as given (its
            # offsets are computed only if a write follows) and let NumPy check the index
            if mask is None:
                sel = idx
            else:
                sel = tuple(np.where(mask, i, 0) if isinstance(i, np.ndarray) else i
                            for i in idx)
            try:
                r = self.a[sel]
            except IndexError:
                r = None
            if r is not None and (mask is None or
                                  all(isinstance(i, np.ndarray) for i in idx)):
                self.pending.append((idx, mask, line))
                if not isinstance(r, np.ndarray) or r.shape != (blk.n,):
                    r = np.broadcast_to(r, (blk.n,)).copy()
                return r
        safe = _check(blk, self.shape, idx, mask, self.name, site)
        off = self._offsets(safe)
        if self.wrote:
            wv = self.w[off]
            bad = (wv != 0) & (wv != blk.lane1)
            if mask is not None:
                bad &= mask
            if bad.any():
                lane = int(np.argmax(bad))
                self._report(lane, idx, "reads", "written", _at(wv, lane) - 1,
                             _at(self.wline[off] if isinstance(off, np.ndarray)
                                 else self.wline[off], lane), site)
        self.pending.append((safe, mask, line))
        r = self.a[safe]
        if not isinstance(r, np.ndarray) or r.shape != (blk.n,):
            r = np.broadcast_to(r, (blk.n,)).copy()
        return r

    def _fold(self):
        """Fold the logged reads into per-element reader records (lowest, highest lane)."""
        lane1 = self.block.lane1
        for idx, mask, line in self.pending:
            off = 0
            for i, n, st in zip(idx, self.shape, self.estrides):
                off = off + np.where(i < 0, i + n, i) * st
            off = np.broadcast_to(off, lane1.shape)
            lanes = lane1
            if mask is not None:
                off, lanes = off[mask], lanes[mask]
            np.minimum.at(self.rmin, off, lanes)
            np.maximum.at(self.rmax, off, lanes)
            self.rminline[off[self.rmin[off] == lanes]] = line
            self.rmaxline[off[self.rmax[off] == lanes]] = line
            self.dirty = True
        self.pending.clear()

    def store(self, idx, value, mask, site, line):
        blk = self.block
        if mask is not None and not mask.any():
            return
        safe = _check(blk, self.shape, idx, mask, self.name, site)
        off = np.broadcast_to(self._offsets(safe), (blk.n,))
        lanes = blk.lane1
        if mask is not None:
            off, lanes = off[mask], lanes[mask]
            sel = tuple(np.broadcast_to(i, mask.shape)[mask] for i in safe)
            value = value[mask] if isinstance(value, np.ndarray) else value
        else:
            sel = safe
        if len(off) > 1:
            uniq, first = np.unique(off, return_index=True)
            if len(uniq) != len(off):
                dup = np.ones(len(off), bool)
                dup[first] = False
                k = int(np.argmax(dup))
                j = int(np.argmax(off == off[k]))
                self._report(int(lanes[k]) - 1, idx, "writes", "written",
                             int(lanes[j]) - 1, line, site)
        if self.wrote:
            wv = self.w[off]
            bad = (wv != 0) & (wv != lanes)
            if bad.any():
                k = int(np.argmax(bad))
                self._report(int(lanes[k]) - 1, idx, "writes", "written", int(wv[k]) - 1,
                             int(self.wline[off[k]]), site)
        if self.pending:
            self._fold()
        if self.dirty:
            rmin, rmax = self.rmin[off], self.rmax[off]
            bad1 = (rmin != _BIG) & (rmin != lanes)
            bad2 = (rmax != 0) & (rmax != lanes)
            bad = bad1 | bad2
            if bad.any():
                k = int(np.argmax(bad))
                if bad1[k]:
                    other, oline = int(rmin[k]) - 1, int(self.rminline[off[k]])
                else:
                    other, oline = int(rmax[k]) - 1, int(self.rmaxline[off[k]])
                self._report(int(lanes[k]) - 1, idx, "writes", "read", other, oline, site)
        self.w[off] = lanes
        self.wline[off] = line
        self.wrote = True
        self.a[sel] = value

    def _report(self, lane, idx, verb, other_verb, other, other_line, site):
        blk = self.block
        vals = [_at(i, lane) for i in idx]
        here = site.split(": ", 1)[0]
        raise DataRaceError(
            f"data race on shared memory: {_lanes_where(blk, lane)} {verb} "
            f"{self.name}[{', '.join(str(v) for v in vals)}] at {here}, which "
            f"threadIdx={fmt_dim(blk.tid_of(other))} {other_verb} at "
            f"{blk.filename}:{other_line} since the last syncthreads()")


class VectorBlock:
    """One block run by the vector executor: ``launch`` (the :class:`~.kernel.Launch`),
    ``bid`` its index.  The generated function (``launch.vfn``) reads the lane arrays
    (``tid``, ``grid_axis``) and calls :meth:`shared` and :meth:`syncthreads`."""

    def __init__(self, launch, bid, lanes):
        self.launch = launch
        self.bid = bid
        self.checks = launch.checks
        self.n = lanes.n
        self.lanes = lanes
        self.lane1 = lanes.lane1
        self.filename = lanes.filename
        self.mem = SharedMemory(launch.dynamic_shared_bytes, launch.shared_limit)
        self.shared_arrays = {}
        self.undo = []          # (array, index, old values) of each global store
        self.glog = {}          # id(array) -> _GlobalLog of this barrier interval

    def rollback(self):
        """Undo this block's global stores, latest first."""
        for a, idx, old in reversed(self.undo):
            a[idx] = old
        self.undo.clear()

    def tid_of(self, lin):
        bx, by, _ = self.launch.blockdim
        return lin % bx, (lin // bx) % by, lin // (bx * by)

    def tid(self, axis, dtype):
        return self.lanes.tid(axis, dtype)

    def grid_axis(self, axis):
        """Lane array (int64) of ``cuda.grid()``'s component ``axis`` (0, 1, 2)."""
        return self.lanes.tid(axis, np.int64) + self.bid[axis] * self.launch.blockdim[axis]

    def shared(self, key, shape, dtype, name):
        arr = self.shared_arrays.get(key)
        if arr is None:
            shape = check_shape(shape, "shared.array")
            a = self.mem.make_static(key, shape, as_dtype(dtype, "shared.array"))
            arr = self.shared_arrays[key] = VShared(self, a, name, self.checks)
        return arr

    def syncthreads(self, live, site):
        """A barrier reached by the ``live`` lanes (None: all) at uniform control flow."""
        if live is not None and not live.all() and self.checks:
            waiting = np.flatnonzero(live)
            done = np.flatnonzero(~live)
            raise BarrierDivergenceError(
                f"barrier divergence in block blockIdx={fmt_dim(self.bid)}: "
                f"{_describe(self, waiting)} wait at syncthreads() at {site}; "
                f"{_describe(self, done)} have finished")
        for s in self.shared_arrays.values():
            s.barrier()
        self.end_interval()

    def end_interval(self):
        """Forget the global-memory records of the barrier interval."""
        for log in self.glog.values():
            log.reset()
        self.glog.clear()


def _reduce_pred(kind, pred, live):
    if live is not None:
        pred = pred[live]
    if kind == "count":
        return int(np.count_nonzero(pred))
    if kind == "and":
        return int(bool(pred.all()))
    return int(bool(pred.any()))


VectorBlock.reduce_pred = staticmethod(_reduce_pred)


def _describe(blk, lanes):
    n = len(lanes)
    if n == 1:
        return f"1 thread (threadIdx {fmt_dim(blk.tid_of(int(lanes[0])))})"
    return (f"{n} threads (threadIdx {fmt_dim(blk.tid_of(int(lanes[0])))} ... "
            f"{fmt_dim(blk.tid_of(int(lanes[-1])))})")


class Lanes:
    """Per-launch lane arrays of a block shape ``blockdim`` (shared by all blocks)."""

    def __init__(self, blockdim, filename):
        bx, by, bz = blockdim
        self.n = bx * by * bz
        lin = np.arange(self.n, dtype=np.int64)
        self.axes = (lin % bx, (lin // bx) % by, lin // (bx * by))
        self.lane1 = (lin + 1).astype(np.int32)
        self.filename = os.path.basename(filename)
        self._cache = {}
        self.dense = {}         # id(array) -> dense conflict records (see _GlobalLog)

    def tid(self, axis, dtype):
        key = (axis, np.dtype(dtype))
        a = self._cache.get(key)
        if a is None:
            a = self._cache[key] = self.axes[axis].astype(dtype)
            a.flags.writeable = False
        return a


#: Launches run by each executor since the process started: ``"vector"`` (whole blocks as
#: NumPy vectors) and ``"thread"`` (per thread); ``"rerun"``: vector blocks that raised and
#: ran again per thread.  Tests read it to see which one ran.
launches = {"vector": 0, "thread": 0, "rerun": 0}


def vector_enabled():
    """False when ``CUJIT_SIM_VECTOR`` is 0/false/no/off (the vector executor is off)."""
    return os.environ.get("CUJIT_SIM_VECTOR", "1").strip().lower() not in (
        "0", "false", "no", "off")


#: Lanes per vector of a multi-block run (blocks of a kernel without shared memory or
#: barriers run together, so per-block overhead is paid once per chunk).
CHUNK_LANES = 1 << 15


class ChunkBlock(VectorBlock):
    """Several blocks (``bids``, in launch order) run as one vector: lanes are block-major,
    so lane order is the per-thread executor's order (blocks one after another)."""

    def __init__(self, launch, bids, lanes):
        VectorBlock.__init__(self, launch, bids[0], lanes)
        self.bids = bids
        k = len(bids)
        self.n = lanes.n * k
        self.lane1 = np.arange(1, self.n + 1, dtype=np.int64)
        b = np.array(bids, np.int64)
        self._bid = [np.repeat(b[:, ax], lanes.n) for ax in range(3)]
        self._cache = {}

    def tid_of(self, lin):
        return VectorBlock.tid_of(self, lin % self.lanes.n)

    def tid(self, axis, dtype):
        key = ("t", axis, np.dtype(dtype))
        a = self._cache.get(key)
        if a is None:
            a = self._cache[key] = np.tile(self.lanes.tid(axis, dtype), len(self.bids))
        return a

    def bidx(self, axis, dtype):
        key = ("b", axis, np.dtype(dtype))
        a = self._cache.get(key)
        if a is None:
            a = self._cache[key] = self._bid[axis].astype(dtype)
        return a

    def grid_axis(self, axis):
        return self.tid(axis, np.int64) + self._bid[axis] * self.launch.blockdim[axis]


def run_vector(launch, bids, step):
    """Run every block of ``launch`` (block ids ``bids``) with its vector function
    ``launch.vfn`` (or, for kernels without shared memory or barriers, chunks of blocks with
    its multi-block function); ``step()`` after each block (progress).

    A block (chunk) that raises (a checker's error, a conflict, anything else) is rolled
    back (its global stores undone; its shared memory is its own) and run again per
    thread, so errors, their messages and the stores made before them are the per-thread
    executor's; the rest of the launch then runs per thread."""
    from .threads import Block
    lanes = Lanes(launch.blockdim, launch.vfn._cj_filename)
    fn, args = launch.vfn, launch.args
    multi = getattr(fn, "_cj_multi", None)
    gx, gy, gz = launch.griddim
    per = max(1, CHUNK_LANES // lanes.n)
    bids = iter(bids)
    while True:
        if multi is not None and per > 1:
            chunk = [b for _, b in zip(range(per), bids)]
            if not chunk:
                return
            blk = ChunkBlock(launch, chunk, lanes) if len(chunk) > 1 else \
                VectorBlock(launch, chunk[0], lanes)
            run = multi if len(chunk) > 1 else fn
        else:
            b = next(bids, None)
            if b is None:
                return
            chunk = [b]
            blk = VectorBlock(launch, b, lanes)
            run = fn
        LANES.n = blk.n
        try:
            with np.errstate(all="ignore"):
                run(blk, *args)
        except Exception:
            blk.end_interval()
            blk.rollback()
            launches["rerun"] += 1
            for b in chunk:
                Block(launch, b).run()
                step()
            for b in bids:
                Block(launch, b).run()
                step()
            return
        blk.end_interval()
        blk.undo.clear()
        for _ in chunk:
            step()
