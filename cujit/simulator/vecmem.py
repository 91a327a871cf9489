"""Global memory of the block-vectorized executor: gathers, scatters and atomics with
Numba's index rule, and the per-interval conflict records of global arrays.

Index rule (as :class:`~.checked.CheckedArray`): a negative index wraps once, anything else
outside the axis is :class:`~.errors.OutOfBoundsError`, reported for the lowest active
thread (lane) whose index fails, in the per-thread report's words.  Lanes outside the mask
(threads that took the other branch or have exited) are neither read nor written nor
checked.  Every store first saves the old values in the block's undo log.

Conflicts (:class:`Conflict`): two lanes of a vector touching one global element in one
barrier interval, one of them writing (or atomic updates of one element in another order
than the per-thread order): the per-thread result depends on the thread order, so the
block runs per thread (:mod:`.vecblock`).
"""
import numpy as np

from .errors import OutOfBoundsError, fmt_dim

__all__ = ["gload", "gstore", "one_element", "lload", "lstore", "vatomic", "check_index",
           "Conflict"]

def _lanes_where(block, lane):
    return (f"threadIdx={fmt_dim(block.tid_of(lane))} "
            f"blockIdx={fmt_dim(block.bid)}")


def _fmt_index(vals):
    if len(vals) == 1:
        return str(vals[0])
    return "(" + ", ".join(str(v) for v in vals) + ")"


def _at(v, lane):
    return int(v[lane]) if isinstance(v, np.ndarray) else int(v)


def check_index(block, shape, idx, mask, name, site):
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
        if block.races is not None:
            log.record(block, idx, None, False, site)
        try:
            r = a[idx]
        except IndexError:
            r = a[check_index(block, a.shape, idx, None, name, site)]
    else:
        safe = check_index(block, a.shape, idx, mask, name, site)
        if block.races is not None:
            log.record(block, safe, mask, False, site)
        if a.size == 0:
            return np.zeros(n, a.dtype)
        r = a[safe]
    if not isinstance(r, np.ndarray) or r.shape != (n,):
        r = np.broadcast_to(r, (n,)).copy()
    return r


def one_element(idx, value):
    """``value`` for a store at ``idx``: a lane array stored at a uniform index (all ints)
    by a block of one lane is its one element (NumPy refuses an array of shape (1,) as an
    element; blocks of more lanes storing at one index are races, caught before)."""
    if isinstance(value, np.ndarray) and value.shape == (1,) and \
            not any(isinstance(i, np.ndarray) for i in idx):
        return value[0]
    return value


def gstore(block, a, idx, value, mask, name, site):
    """``a[idx] = value`` for the active lanes (later lanes win at one element, as the
    per-thread order); the old values go to the block's undo log first."""
    log = block.glog.get(id(a))
    if log is None:
        log = block.glog[id(a)] = _GlobalLog(a)
    if mask is None or mask.any():
        log.write(block, idx, mask, name, site)
    if mask is None:
        if block.races is not None:
            log.record(block, idx, None, True, site)
        try:
            old = a[idx]
        except IndexError:
            idx = check_index(block, a.shape, idx, None, name, site)
            old = a[idx]
        block.undo.append((a, idx, old))
        a[idx] = one_element(idx, value)
        return
    if not mask.any():
        return
    safe = check_index(block, a.shape, idx, mask, name, site)
    if block.races is not None:
        log.record(block, safe, mask, True, site)
    sel = tuple(np.broadcast_to(i, mask.shape)[mask] for i in safe)
    block.undo.append((a, sel, a[sel]))
    a[sel] = value[mask] if isinstance(value, np.ndarray) else value


class Conflict(Exception):
    """Two threads of a block touched one global element in one barrier interval, one of
    them writing: their order matters, so the block runs per thread."""


_DENSE_LIMIT = 1 << 22     # elements: larger written arrays accessed twice run per thread
#: accesses of one array kept per interval for the cross-block race check before they are
#: folded into the launch's summary (globalrace.py)
ACC_LIMIT = 64


class _GlobalLog:
    """Accesses to one global array in the current barrier interval of a vector block.
    Reads are logged as given until the array is written; one write is kept as its offsets;
    from the second access after a write on, each element's lowest and highest lane and
    whether it was written live in dense per-element arrays (made once per launch and
    array, reset at the touched elements), so long grid-stride loops cost linear time."""
    __slots__ = ("a", "pending", "first", "dense", "aoffs", "alanes", "acc")

    def __init__(self, a):
        self.a = a
        # (index, mask, write, site) for the launch's GlobalRaces; masked indices wrapped
        self.acc = []
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
            raise Conflict()
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
            raise Conflict()

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
                raise Conflict()

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
                raise Conflict()
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
                raise Conflict()

    def record(self, block, idx, mask, write, site):
        """Keep one access for the launch's cross-block check (``block.races``); past
        ACC_LIMIT accesses in the interval (a long loop) they are checked and folded at once,
        so the log holds a bounded number of lane arrays.  Conflict on a conflict."""
        acc = self.acc
        acc.append((idx, mask, write, site))
        if len(acc) >= ACC_LIMIT:
            got = self.cross_block(block, block.races)
            if got is None:
                raise Conflict()
            block.races.commit(got)
            acc.clear()

    def cross_block(self, block, races):
        """The interval's accesses checked against other blocks' (``races``: the launch's
        :class:`~.globalrace.GlobalRaces`): what to commit, or None on a conflict.  The
        reads (and the writes) of the interval are checked as one vector each."""
        a = self.a
        data = a.__array_interface__["data"][0]
        gbase = races.block_lin(block.bid) * races.nthreads
        span = (gbase + 1, gbase + 1 + block.n)
        parts = ([], []), ([], [])         # (addresses, packed thread/site) of reads, writes
        for idx, mask, write, site in self.acc:
            addr = data
            for i, n, st in zip(idx, a.shape, a.strides):
                if isinstance(i, np.ndarray):
                    if i.dtype.kind != "u" and mask is None and (i < 0).any():
                        i = np.where(i < 0, i + n, i)
                    addr = addr + i.astype(np.int64, copy=False) * st
                else:
                    addr = addr + ((i + n) if i < 0 else i) * st
            addr = np.broadcast_to(np.asarray(addr, np.int64), (block.n,))
            lanes = block.lane1
            if mask is not None:
                addr, lanes = addr[mask], lanes[mask]
            if not len(addr):
                continue
            dst = parts[write]
            dst[0].append(addr)
            dst[1].append(races.packed(lanes.astype(np.int64) + gbase, site))
        out = []
        for write, (addrs, packed) in enumerate(parts):
            if not addrs:
                continue
            addrs = addrs[0] if len(addrs) == 1 else np.concatenate(addrs)
            packed = packed[0] if len(packed) == 1 else np.concatenate(packed)
            got = races.lanes_check(a, addrs, packed, bool(write), span)
            if got is None:
                return None
            out.extend(got)
        return out

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
        self.acc.clear()


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
    may read or write an updated element in the interval; otherwise ``Conflict`` (the block
    then runs per thread)."""
    from .checked import unwrap
    a = unwrap(a)
    n = block.n
    log = block.glog.get(id(a))
    if log is None:
        log = block.glog[id(a)] = _GlobalLog(a)
    safe = check_index(block, a.shape, idx, mask, name, site)
    off, lanes = log._flat(block, safe, mask)
    log.plain_touched(block, off, lanes)
    if log.aoffs:
        po, pl = np.concatenate(log.aoffs), np.concatenate(log.alanes)
        common = np.intersect1d(po, off)
        if len(common):
            prev_max = pl[np.isin(po, common)].max()
            if prev_max > lanes[np.isin(off, common)].min():
                raise Conflict()
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
        a[t] = atomic_update(op, o, vcols[0][lane],
                             vcols[1][lane] if len(vcols) > 1 else None)
        old[lane] = o
    return old


def atomic_update(op, o, v, v2=None):
    """The new value of an element holding ``o`` after ``atomic.<op>`` with value ``v``
    (``v2``: cas's new value), as the per-thread executor computes it (thread.py)."""
    if op == "add":
        return o + v
    if op == "sub":
        return o - v
    if op == "max":
        return v if v > o else o        # NaN on either side keeps o, as thread.py
    if op == "min":
        return v if v < o else o
    if op == "nanmax":
        return np.fmax(o, v)
    if op == "nanmin":
        return np.fmin(o, v)
    if op == "exch":
        return v
    if op == "and":
        return o & v
    if op == "or":
        return o | v
    if op == "xor":
        return o ^ v
    if op == "inc":
        return 0 if o >= v else o + 1
    if op == "dec":
        return v if (o == 0 or o > v) else o - 1
    if op == "cas":
        return v2 if o == v else o
    raise ValueError(f"unknown atomic operation {op!r}")


def lload(block, rows, idx, mask, name, site):
    """Lane ``l``'s ``local[idx]`` for every lane, ``rows`` holding one local array per lane
    (its axis 0); nothing to log: no other thread sees it."""
    lanes = block.lane_index
    if mask is None:
        try:
            return rows[(lanes,) + idx]
        except IndexError:
            pass
    safe = check_index(block, rows.shape[1:], idx, mask, name, site)
    return rows[(lanes,) + safe]


def lstore(block, rows, idx, value, mask, name, site):
    """Lane ``l``'s ``local[idx] = value`` for the active lanes."""
    lanes = block.lane_index
    if mask is None:
        try:
            rows[(lanes,) + idx] = value
            return
        except IndexError:
            pass
    elif not mask.any():
        return
    safe = check_index(block, rows.shape[1:], idx, mask, name, site)
    if mask is None:
        rows[(lanes,) + safe] = value
        return
    sel = (lanes[mask],) + tuple(np.broadcast_to(i, mask.shape)[mask] for i in safe)
    rows[sel] = value[mask] if isinstance(value, np.ndarray) else value
