"""Data races on global memory: unsynchronised conflicting accesses of two threads of one
launch (``config.SIM_GLOBAL_RACES``, with ``SIM_CHECKS`` on).

Two accesses of one element conflict when they come from different threads and one of them
is a plain write (atomics are not tracked, as for shared memory).  They are ordered when
both threads are of one block and a ``syncthreads()`` (or a ``syncwarp()`` of their common
warp) lies between them; threads of different blocks are never ordered within a launch,
except by a ``grid.sync()`` of a cooperative launch.  A GPU gives such a kernel a result
that depends on scheduling (the racy counter ``counter[0] += 1`` counts a few threads), so
the simulator, whose thread order hides it, reports :class:`~.errors.DataRaceError`.

Bookkeeping, in two tiers so that memory stays bounded:

- *Within a block* (per-thread executor): per element touched by the block (keyed by the
  host address of its first byte), the last writer and two readers, stamped
  ``epoch * 2048 + linear_tid + 1`` as :class:`~.checked.RaceTracker` does, so the barrier
  intervals of the block need no reset.  A conflict is reported at the access.  The records
  live on the block runner and are dropped when it is folded (below).
- *Across blocks*: when a block finishes (or reaches ``grid.sync()``), its records are
  checked against and folded into the launch's summary: per buffer, per element, one
  writer and two readers of different blocks, each a packed int64
  ``(global thread id + 1) << 20 | site id`` in dense NumPy arrays over the elements the
  launch's arrays of that buffer span.  Only a writer of one block can be there (a second
  block's access to a written element is a conflict), and two readers of different blocks
  tell whether any reader is of another block than a writer.  Buffers spanning more than
  ``DENSE_LIMIT`` elements are not checked across blocks (24 bytes an element).
- The vector executor folds each barrier interval of a vector block (chunk) into the same
  summary (:meth:`GlobalRaces.lanes_check`, then :meth:`GlobalRaces.commit`); a conflict
  there, as one inside a vector block, makes the block run again per thread, which reports
  it in the per-thread executor's words.

*Silent writes*: a write that stores the value the element already holds (compared bit for
bit, in the array's dtype) changes nothing another thread can observe, whatever the order: it
is checked against nothing, and a later read by another thread does not conflict with it (a
later *changing* write still does, since the order of the two writes decides the value).
So ``flag[0] = 1`` from many threads, and STUMPY's ``p_norm_out[0] = p_norm_first[j]`` (every
thread storing the same value), are not reported; the racy counter, whose threads store
different values, is.  (CUDA's memory model still calls such writes a race; on every GPU the
element ends with that value.)  The vector executor treats every write as changing: a
conflict there reruns the block per thread, which tells silent writes apart.

Blind spots: record-field stores (``a[i].x = v``), accesses through views whose item size is
smaller than the smallest of the launch's arrays over that buffer (registered after the
summary was made), and overlapping accesses of different widths at different start bytes.
"""
import sys

from itertools import repeat as _repeat

import numpy as np

from ..kernelstate import state as _state
from .errors import DataRaceError, caller_site, fmt_dim, where

__all__ = ["GlobalRaces", "DENSE_LIMIT"]

_getframe = sys._getframe
#: elements of one buffer's summary (three int64 records each) above which that buffer is
#: not checked across blocks
DENSE_LIMIT = 1 << 22
_SITE_BITS = 20
_SITE_MASK = (1 << _SITE_BITS) - 1
_HINT = ("; a GPU gives such a kernel a scheduling-dependent result (use an atomic or a "
         "barrier, or CUJIT_SIM_GLOBAL_RACES=0 for a deliberate race)")


def _root(a):
    while isinstance(a.base, np.ndarray):
        a = a.base
    return a


def _extent(a):
    """(lowest, one past the highest) host byte address of ``a``'s elements."""
    addr = a.__array_interface__["data"][0]
    lo = hi = addr
    for n, s in zip(a.shape, a.strides):
        if n == 0:
            return addr, addr
        if s < 0:
            lo += (n - 1) * s
        else:
            hi += (n - 1) * s
    return lo, hi + a.itemsize


class _Buffer:
    """Summary of one buffer (the NumPy root of the launch's arrays over it)."""
    __slots__ = ("root", "lo", "hi", "gran", "arrays", "w", "r1", "r2", "ws", "off",
                 "written")

    def __init__(self, root):
        self.root = root            # kept alive: its id keys the registry
        self.lo = self.hi = None
        self.gran = None
        self.arrays = []            # (name, array) registered, for reports
        self.w = self.r1 = self.r2 = None
        self.ws = None              # per element: the summary's writer wrote silently
        self.off = False            # not checked across blocks
        self.written = False        # a write folded in since the summary (re)started

    def add(self, a, name):
        lo, hi = _extent(a)
        if lo == hi:
            return
        if self.w is not None and (lo < self.lo or hi > self.hi or a.itemsize < self.gran):
            if a.itemsize < self.gran:
                self.off = True
                return
            self._grow(min(lo, self.lo), max(hi, self.hi))
        if self.lo is None:
            self.lo, self.hi, self.gran = lo, hi, a.itemsize
        elif self.w is None:
            self.lo, self.hi = min(lo, self.lo), max(hi, self.hi)
            self.gran = min(self.gran, a.itemsize)
        if len(self.arrays) < 8:
            self.arrays.append((name, a))

    def _grow(self, lo, hi):
        n = (hi - lo) // self.gran + 1
        if n > DENSE_LIMIT:
            self.off = True
            return
        shift = (self.lo - lo) // self.gran
        for attr in ("w", "r1", "r2", "ws"):
            old = getattr(self, attr)
            new = np.zeros(n, old.dtype)
            new[shift:shift + len(old)] = old
            setattr(self, attr, new)
        self.lo, self.hi = lo, hi

    def records(self):
        """The dense records, made on first use; False when this buffer is not checked."""
        if self.off:
            return False
        if self.w is None:
            n = (self.hi - self.lo) // self.gran + 1
            if n > DENSE_LIMIT:
                self.off = True
                return False
            self.w, self.r1, self.r2 = (np.zeros(n, np.int64) for _ in range(3))
            self.ws = np.zeros(n, bool)
        return True

    def index_of(self, addr):
        """(name, index tuple) of the element at host address ``addr`` in a registered
        array, for a report."""
        for name, a in self.arrays:
            rest = addr - a.__array_interface__["data"][0]
            idx = []
            for n, s in sorted(zip(a.shape, a.strides), key=lambda p: -abs(p[1])):
                i = rest // s if s else 0
                if s and not 0 <= i < n:
                    break
                idx.append(int(i))
                rest -= i * s
            else:
                if rest == 0:
                    order = sorted(range(a.ndim), key=lambda ax: -abs(a.strides[ax]))
                    out = [0] * a.ndim
                    for ax, i in zip(order, idx):
                        out[ax] = i
                    return name, out
        return (self.arrays[0][0] if self.arrays else "global"), None


class GlobalRaces:
    """Global-memory race records of one launch (``launch``: the
    :class:`~.kernel.Launch`), owned by it.  :class:`~.checked.GlobalCheckedArray` calls
    :meth:`read`/:meth:`write` for every element access of a per-thread block; the block
    runners call :meth:`fold_block` (per-thread) and :meth:`lanes_check` / :meth:`commit`
    (vector)."""

    def __init__(self, griddim, blockdim):
        gx, gy, _ = griddim
        bx, by, bz = blockdim
        self.gx, self.gy = gx, gy
        self.bdim = (bx, by)
        self.nthreads = bx * by * bz
        self.buffers = {}           # id(root) -> _Buffer
        self.sites = []             # site id -> (code, lasti) or "file:line"
        self._site_ids = {}

    # -- registry --------------------------------------------------------------------------
    def register(self, a, name=None):
        """Track the NumPy array ``a`` (a kernel's view of global memory)."""
        root = _root(a)
        buf = self.buffers.get(id(root))
        if buf is None:
            buf = self.buffers[id(root)] = _Buffer(root)
        buf.add(a, name)

    def _buffer_of(self, addr):
        for buf in self.buffers.values():
            if buf.lo is not None and buf.lo <= addr < buf.hi:
                return buf
        return None

    def site_id(self, site):
        """Small int for an access site ((code, bytecode offset[, syncwarp count]) or a
        "file:line" text)."""
        sid = self._site_ids.get(site)
        if sid is None:
            sid = self._site_ids[site] = len(self.sites) & _SITE_MASK
            self.sites.append(site)
        return sid

    def _site_text(self, sid):
        site = self.sites[sid] if sid < len(self.sites) else None
        if site is None:
            return "<unknown>"
        if isinstance(site, str):
            return site
        from .checked import _line_at
        return f"{site[0].co_filename.rsplit('/', 1)[-1]}:{_line_at(site[0], site[1])}"

    # -- within a block (per-thread executor) ------------------------------------------------
    def read(self, addr, arr, idx):
        """Thread ``state.current`` reads the element at host address ``addr`` of ``arr``
        (a GlobalCheckedArray) at index ``idx``; DataRaceError when another thread of its
        block wrote it in this barrier interval."""
        t = _state.current
        blk = t.block
        recs = blk.grecs
        rec = recs.get(addr)
        base = blk.epoch_base
        me = t.lin + 1
        if rec is None:
            f = _getframe(2)
            recs[addr] = [0, None, base + me, (f.f_code, f.f_lasti, blk.warp_gen[t.warp]),
                          0, None, False]
            return
        w = rec[0]
        if w > base and w - base != me and not rec[6] and \
                not _ordered(blk, w - base, rec[1], t):
            self._report(arr, idx, "reads", "wrote", w - base, rec[1])
        r1 = rec[2]
        if r1 <= base:
            f = _getframe(2)
            rec[2] = base + me
            rec[3] = (f.f_code, f.f_lasti, blk.warp_gen[t.warp])
        elif r1 - base != me and rec[4] <= base:
            f = _getframe(2)
            rec[4] = base + me
            rec[5] = (f.f_code, f.f_lasti, blk.warp_gen[t.warp])

    def write(self, addr, arr, idx, silent=False):
        """Thread ``state.current`` writes the element at ``addr``; DataRaceError when
        another thread of its block read or wrote it in this barrier interval, unless the
        write is ``silent`` (stores the value the element holds: see the module's notes)."""
        t = _state.current
        blk = t.block
        recs = blk.grecs
        rec = recs.get(addr)
        base = blk.epoch_base
        me = t.lin + 1
        f = _getframe(2)
        site = (f.f_code, f.f_lasti, blk.warp_gen[t.warp])
        if rec is None:
            recs[addr] = [base + me, site, 0, None, 0, None, silent]
            return
        if not silent:
            w = rec[0]
            if w > base and w - base != me and not _ordered(blk, w - base, rec[1], t):
                self._report(arr, idx, "writes", "wrote", w - base, rec[1])
            r = rec[2]
            if r > base and r - base != me and not _ordered(blk, r - base, rec[3], t):
                self._report(arr, idx, "writes", "read", r - base, rec[3])
            r = rec[4]
            if r > base and r - base != me and not _ordered(blk, r - base, rec[5], t):
                self._report(arr, idx, "writes", "read", r - base, rec[5])
        elif rec[0] > base and not rec[6]:
            silent = False      # the element's last write in this interval changed it
        rec[0] = base + me
        rec[1] = site
        rec[6] = silent

    def _report(self, arr, idx, verb, other_verb, other, site):
        from .checked import _fmt_idx, _line_at
        me = _state.current
        other_tid = me.block.tid_of(other - 1)
        other_site = f"{site[0].co_filename.rsplit('/', 1)[-1]}:{_line_at(site[0], site[1])}"
        raise DataRaceError(
            f"data race on global memory: {where(me)} {verb} {arr._name}[{_fmt_idx(idx)}] at "
            f"{caller_site(3)}, which threadIdx={fmt_dim(other_tid)} of the same block "
            f"{other_verb} at {other_site} since the last syncthreads(){_HINT}")

    # -- across blocks -----------------------------------------------------------------------
    def block_lin(self, bid):
        return bid[0] + self.gx * (bid[1] + self.gy * bid[2])

    def fold_block(self, blk):
        """Check the per-thread block ``blk``'s records against the other blocks' and fold
        them into the summary (then drop them); DataRaceError naming both threads, the
        array, the index and both lines for the first conflict."""
        recs = blk.grecs
        if not recs:
            return
        blk.grecs = {}
        n = len(recs)
        addrs = np.fromiter(recs.keys(), np.int64, n)
        # the records as columns, transposed and converted in C (a Python loop over the
        # records cost most of a STUMPY run's checking)
        c = tuple(zip(*recs.values()))
        ids = self._site_ids
        gbase = self.block_lin(blk.bid) * self.nthreads
        span = (gbase + 1, gbase + 1 + self.nthreads)      # its gtid + 1 values
        # stamps are epoch * 2048 + lin + 1: the low 11 bits are lin + 1 (0: no access)
        silent = np.array(c[6], bool)
        cols = []
        for k in (0, 2, 4):
            st = np.array(c[k], np.int64) & 2047
            used = st != 0
            if not used.any():
                cols.append(None)
                continue
            col = c[k + 1]
            for site in set(col).difference(ids):
                if site is not None:        # None: no access of this kind (st is 0 there)
                    self.site_id(site)
            sites = np.fromiter(map(ids.get, col, _repeat(0)), np.int64, n)
            cols.append((used, ((st + gbase) << _SITE_BITS) | sites))
        for buf in list(self.buffers.values()):
            if buf.lo is None:
                continue
            inside = (addrs >= buf.lo) & (addrs < buf.hi)
            if not inside.any() or not buf.records():
                continue
            el_all = (addrs - buf.lo) // buf.gran
            if cols[0] is not None:
                quiet = inside & cols[0][0] & silent
                if quiet.any():         # silent writes: checked against nothing
                    lo, hi = span[0] << _SITE_BITS, span[1] << _SITE_BITS
                    self.commit(((buf, el_all[quiet], cols[0][1][quiet], True, lo, hi, True),))
            for write, ks in ((True, (0,)), (False, (1, 2))):
                parts = [(inside & cols[k][0] & (~silent if write else True), cols[k][1])
                         for k in ks if cols[k] is not None]
                if not parts:
                    continue
                sel = np.concatenate([np.flatnonzero(m) for m, _ in parts])
                if not len(sel):
                    continue
                packed = np.concatenate([p[m] for m, p in parts])
                bad = self._fold(buf, el_all[sel], packed, write, span)
                if bad >= 0:
                    e = sel[bad]
                    self._report_cross(buf, int(addrs[e]), packed[bad], write, el_all[e])

    def packed(self, gtid1, site):
        """Packed records of global thread ids + 1 ``gtid1`` (int64 array) accessing at
        ``site`` ("file:line[: text]")."""
        return (gtid1 << _SITE_BITS) | self.site_id(site.split(": ", 1)[0])

    def lanes_check(self, a, addrs, packed, write, span):
        """A vector block (chunk) accessed the elements at host addresses ``addrs`` (int64)
        of array ``a`` (its NumPy view), ``packed`` (:meth:`packed`) saying which thread and
        where; ``span``: (first, one past the last) global thread id + 1 of its blocks.  None
        when that conflicts with another block's access (the block then runs per thread),
        else what :meth:`commit` folds in."""
        buf = self.buffers.get(id(_root(a)))
        if buf is None or buf.lo is None or not buf.records() or a.itemsize < buf.gran:
            return ()
        el = (addrs - buf.lo) // buf.gran
        lo, hi = span[0] << _SITE_BITS, span[1] << _SITE_BITS
        if self._check(buf, el, write, lo, hi) >= 0:
            return None
        return ((buf, el, packed, write, lo, hi),)

    def _fold(self, buf, el, packed, write, span):
        lo, hi = span[0] << _SITE_BITS, span[1] << _SITE_BITS
        bad = self._check(buf, el, write, lo, hi)
        if bad < 0:
            self.commit(((buf, el, packed, write, lo, hi),))
        return bad

    @staticmethod
    def _check(buf, el, write, lo, hi):
        """Index of the first access of elements ``el`` that conflicts with another
        block's record, else -1.  The accessing blocks' records lie in ``[lo, hi)`` (packed
        bounds: global thread ids are block-major); nothing of theirs from this barrier
        interval is in the summary yet, so any record outside is another block's."""
        if not write and not buf.written:
            return -1               # nothing of this buffer written yet: reads cannot conflict
        W = buf.w[el]
        bad = ((W < lo) & (W != 0)) | (W >= hi)
        if not write:
            bad &= ~buf.ws[el]      # a silent write changed nothing a read could see
        else:
            for r in (buf.r1, buf.r2):
                R = r[el]
                bad |= ((R < lo) & (R != 0)) | (R >= hi)
        if bad.any():
            return int(np.argmax(bad))
        return -1

    @staticmethod
    def commit(folds):
        """Fold checked accesses (from :meth:`lanes_check`) into the summary."""
        for buf, el, packed, write, lo, hi, *quiet in folds:
            if write:
                buf.w[el] = packed
                buf.ws[el] = bool(quiet and quiet[0])
                buf.written = True
                continue
            R1 = buf.r1[el]
            empty = R1 == 0
            buf.r1[el] = np.where(empty, packed, R1)
            other = ((R1 < lo) & ~empty) | (R1 >= hi)
            if other.any():
                # a reader of another block is there: keep one of this block too, so that
                # a writer of either block sees a reader of another
                sel = el[other]
                free = buf.r2[sel] == 0
                buf.r2[sel[free]] = packed[other][free]

    def _report_cross(self, buf, addr, packed, write, e):
        mine = int(packed >> _SITE_BITS) - 1
        rec = None
        for arr, verb in ((buf.w, "wrote"), (buf.r1, "read"), (buf.r2, "read")):
            v = int(arr[e])
            if v and (v >> _SITE_BITS) - 1 != mine and \
                    ((v >> _SITE_BITS) - 1) // self.nthreads != mine // self.nthreads \
                    and (write or verb == "wrote"):
                rec = (v, verb)
                break
        name, idx = buf.index_of(addr)
        index = "?" if idx is None else ", ".join(str(i) for i in idx)
        other, verb = rec
        og = (other >> _SITE_BITS) - 1
        raise DataRaceError(
            f"data race on global memory: {self._who(mine)} {'writes' if write else 'reads'} "
            f"{name}[{index}] at {self._site_text(int(packed) & _SITE_MASK)}, which "
            f"{self._who(og)} {verb} at {self._site_text(other & _SITE_MASK)}; threads of "
            f"different blocks are not ordered within a launch (only grid.sync() of a "
            f"cooperative launch orders them){_HINT}")

    def _who(self, gtid):
        b, lin = divmod(gtid, self.nthreads)
        bx, by = self.bdim
        tid = (lin % bx, (lin // bx) % by, lin // (bx * by))
        bid = (b % self.gx, (b // self.gx) % self.gy, b // (self.gx * self.gy))
        return f"threadIdx={fmt_dim(tid)} blockIdx={fmt_dim(bid)}"

    def grid_sync(self):
        """Every block passed ``grid.sync()``: what came before is ordered with what
        comes after, so the summary starts again."""
        for buf in self.buffers.values():
            if buf.w is not None:
                buf.w[:] = 0
                buf.r1[:] = 0
                buf.r2[:] = 0
                buf.ws[:] = False
                buf.written = False


def _ordered(blk, other, site, t):
    """True when the earlier access by thread ``other - 1`` (at ``site``) is ordered before
    thread ``t``'s by a ``syncwarp()`` of their common warp since then."""
    return (other - 1) >> 5 == t.warp and blk.warp_gen[t.warp] > site[2]
