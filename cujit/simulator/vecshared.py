"""Static shared arrays of the vector executor (:class:`VShared`), with vectorized race
detection by :class:`~.checked.RaceTracker`'s rules: within a barrier interval a write
conflicts with a write or a read of the same element by another thread; many readers are
fine; several lanes writing one element in one vector store is a write-write race.  Reads in
an interval without writes are only logged as given (a list append, NumPy checking the
index) and folded into per-element reader records (lowest, highest lane) when a write
follows, so read-only intervals (a tiled matmul's inner loop) cost no race bookkeeping.
Races are tracked whatever ``SIM_CHECKS`` says: a race makes the block run per thread
(:mod:`.vecblock`), whose thread-by-thread order then defines the result.
"""
import numpy as np

from .errors import DataRaceError, fmt_dim
from .vecmem import Conflict, _at, _lanes_where, atomic_update, check_index, one_element

__all__ = ["VShared"]

_BIG = np.iinfo(np.int32).max


class VShared:
    """One static shared array of a block on the vector path: ``a`` the NumPy array,
    ``name`` its report name; race records when ``checks``."""
    __slots__ = ("a", "name", "shape", "ndim", "size", "dtype", "block", "checks", "w",
                 "wline", "wrote", "pending", "rmin", "rmax", "rminline", "rmaxline",
                 "dirty", "estrides", "amin", "amax", "atomics")

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
        # atomic updates of this interval: lowest and highest lane per element
        self.amin = np.full(n, _BIG, np.int32)
        self.amax = np.zeros(n, np.int32)
        self.atomics = False

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
        if self.atomics:
            self.amin.fill(_BIG)
            self.amax.fill(0)
            self.atomics = False

    def _offsets(self, safe):
        off = 0
        for i, s in zip(safe, self.estrides):
            off = off + i * s
        return off

    def load(self, idx, mask, site, line):
        blk = self.block
        if not self.wrote and not self.atomics:
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
        safe = check_index(blk, self.shape, idx, mask, self.name, site)
        off = self._offsets(safe)
        if self.atomics:
            self._check_atomics(np.broadcast_to(off, (blk.n,)), mask)
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

    def _check_atomics(self, off, mask):
        """A plain access of an element another lane updated atomically in this interval:
        the per-thread order decides what it sees (Conflict: the block runs per thread)."""
        lanes = self.block.lane1
        if mask is not None:
            off, lanes = off[mask], lanes[mask]
        lo, hi = self.amin[off], self.amax[off]
        if ((hi != 0) & ~((lo == lanes) & (hi == lanes))).any():
            raise Conflict()

    def atomic(self, op, idx, vals, mask, site):
        """``cuda.atomic.<op>(shared, idx, *vals)`` for the active lanes in lane order; the
        old values.  Atomics are not races (RaceTracker does not record them); an update
        order other than the per-thread one, or a plain access by another lane of an
        updated element in the interval, is a Conflict (per thread)."""
        blk = self.block
        n = blk.n
        old = np.zeros(n, self.dtype)
        if mask is not None and not mask.any():
            return old
        safe = check_index(blk, self.shape, idx, mask, self.name, site)
        off = np.broadcast_to(self._offsets(safe), (n,))
        lanes = blk.lane1
        if mask is not None:
            off, lanes = off[mask], lanes[mask]
        if self.wrote:
            wv = self.w[off]
            if ((wv != 0) & (wv != lanes)).any():
                raise Conflict()
        if self.pending:
            self._fold()
        if self.dirty:
            lo, hi = self.rmin[off], self.rmax[off]
            if (((lo != _BIG) & (lo != lanes)) | ((hi != 0) & (hi != lanes))).any():
                raise Conflict()
        if self.atomics and (self.amax[off] > lanes).any():
            raise Conflict()        # an earlier statement's update by a later thread
        np.minimum.at(self.amin, off, lanes)
        np.maximum.at(self.amax, off, lanes)
        self.atomics = True
        a = self.a
        cols = [np.broadcast_to(i, (n,)) for i in safe]
        vcols = [np.broadcast_to(v, (n,)) for v in vals]
        active = range(n) if mask is None else np.flatnonzero(mask).tolist()
        for lane in active:
            t = tuple(int(c[lane]) for c in cols)
            o = a[t]
            a[t] = atomic_update(op, o, vcols[0][lane],
                                 vcols[1][lane] if len(vcols) > 1 else None)
            old[lane] = o
        return old

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
        safe = check_index(blk, self.shape, idx, mask, self.name, site)
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
        if self.atomics:
            lo, hi = self.amin[off], self.amax[off]
            if ((hi != 0) & ~((lo == lanes) & (hi == lanes))).any():
                raise Conflict()
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
        self.a[sel] = one_element(sel, value)

    def _report(self, lane, idx, verb, other_verb, other, other_line, site):
        blk = self.block
        vals = [_at(i, lane) for i in idx]
        here = site.split(": ", 1)[0]
        raise DataRaceError(
            f"data race on shared memory: {_lanes_where(blk, lane)} {verb} "
            f"{self.name}[{', '.join(str(v) for v in vals)}] at {here}, which "
            f"threadIdx={fmt_dim(blk.tid_of(other))} {other_verb} at "
            f"{blk.filename}:{other_line} since the last syncthreads()")
