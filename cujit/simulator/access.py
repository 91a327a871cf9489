"""The access recorder: global-memory coalescing and shared-memory bank conflicts of simulated
launches, per kernel and source line (docs/access-report.md).

Recording is off unless asked for, so the simulator's hot paths do not change: it is on for
launches made inside ``with cujit.access_report() as rep:`` (the report of everything launched
in the block) and for every simulated launch while ``CUJIT_ACCESS_REPORT=1`` (then
``kernel.access_report()`` gives the report of the kernel's last launch).  When it is on, a
launch wraps its array arguments, captured global arrays and shared arrays in
:class:`RecordingArray`; each element load or store appends one packed integer (site, linear
thread id, byte offset) to a log that is folded into per-site statistics when a block ends.

How lanes form one *warp request*: an access site is a source line of the kernel or of a
device function, per array and load/store; the n-th execution of a site by each lane of a
warp is one request (two loads of one array on one line are the lane's occurrences 2k and
2k + 1), whatever order the simulator ran the threads in (one after another, or as
greenlets between barriers), so loops and both execution modes group as the hardware does for
converged warps.  Per request:

- global memory: the distinct 32-byte sectors the lanes touch, against the ideal
  ``ceil(distinct bytes / 32)`` (a broadcast of one element is ideal at one sector); offsets are
  taken from the lowest byte of the kernel argument, which is assumed 256-byte aligned as
  ``cuMemAlloc`` gives;
- shared memory: 32 banks of 4-byte words; the conflict degree (*ways*) is the largest number of
  distinct words any one bank serves (lanes reading one word are a broadcast, not a conflict),
  against the ideal ``ceil(distinct words / 32)`` (8-byte elements need two wavefronts anyway).

Not recorded: local and constant arrays, atomics, and stores through slices.
"""
import sys
import threading
import weakref

import numpy as np

from ..config import config
from ..kernelstate import state as _state
from .checked import CheckedArray
from .thread import array_name
from .threads import Block

__all__ = ["RecordingArray", "Recorder", "start", "access_report", "last_report",
           "enabled"]

_getframe = sys._getframe
_OFF_BITS = 40
_OFF_MASK = (1 << _OFF_BITS) - 1
_LIN_BITS = 10          # at most 1024 threads per block
_MAX_SITES = 1 << (63 - _OFF_BITS - _LIN_BITS)
_GLOBAL, _SHARED = "global", "shared"

_lock = threading.Lock()
_contexts = []                              # active access_report() collectors
_last = weakref.WeakKeyDictionary()         # kernel py_func -> SiteTable of its last launch


def enabled():
    """True when simulated launches record accesses now (a context is active or
    ``CUJIT_ACCESS_REPORT`` is set)."""
    return bool(_contexts) or bool(config.ACCESS_REPORT)


def _lowest_byte(a):
    """Address of the lowest byte NumPy array ``a`` spans (negative strides included)."""
    p = a.__array_interface__["data"][0]
    for n, s in zip(a.shape, a.strides):
        if s < 0 and n > 0:
            p += s * (n - 1)
    return p


def _data_ptr(a):
    return (a._a if isinstance(a, CheckedArray) else a).__array_interface__["data"][0]


class RecordingArray(CheckedArray):
    """An array of a recorded launch: element loads and stores go to ``inner`` (the plain or
    checked array, so bounds and race checks stay as they are) and are logged for the access
    report.  ``space`` is ``"global"`` or ``"shared"``, ``name`` the array's name in reports,
    ``origin`` the address offsets count from.  It is a :class:`CheckedArray` over the same
    NumPy array, so code that unwraps checked arrays (atomics) sees through it."""
    __slots__ = ("_inner", "_rec", "_space", "_base", "_app", "_ls", "_ss", "_origin")

    def __init__(self, inner, rec, space, name, origin=None, sites=None):
        a = inner._a if isinstance(inner, CheckedArray) else inner
        CheckedArray.__init__(self, a, name)
        self._inner = inner
        self._rec = rec
        self._space = space
        if origin is None:
            origin = _lowest_byte(a)
        self._origin = origin
        self._base = a.__array_interface__["data"][0] - origin
        self._app = rec.log.append
        # lasti -> (code, site id), one dict for loads and one for stores; shared by views
        self._ls, self._ss = sites if sites is not None else ({}, {})

    def _wrap(self, view):
        if isinstance(view, np.ndarray):
            inner = self._inner._wrap(view) if isinstance(self._inner, CheckedArray) else view
        elif isinstance(view, CheckedArray):
            inner = view
        else:
            return view
        return RecordingArray(inner, self._rec, self._space, self._name, self._origin,
                              (self._ls, self._ss))

    def _offset(self, idx):
        """Byte offset (from the origin) of the element ``idx`` selects, None for a view."""
        t = self._norm(idx)
        if t is None:
            return None
        off = self._base
        for i, s in zip(t, self._a.strides):
            off += i * s
        return off

    def _site(self, f, store):
        sid = self._rec.site(f.f_code, f.f_lasti, f.f_lineno, store, self)
        (self._ss if store else self._ls)[f.f_lasti] = (f.f_code, sid)
        return sid

    def __getitem__(self, idx):
        v = self._inner[idx]
        c = idx.__class__
        if c is int and self.ndim == 1:
            off = self._base + (idx if idx >= 0 else idx + self._n0) * self._s0
        elif c is tuple and self._n1 >= 0 and len(idx) == 2 \
                and idx[0].__class__ is int and idx[1].__class__ is int:
            i, j = idx
            off = self._base + (i if i >= 0 else i + self._n0) * self._s0 \
                + (j if j >= 0 else j + self._n1) * self._s1
        else:
            if isinstance(v, (np.ndarray, CheckedArray)):
                return self._wrap(v)
            off = self._offset(idx)
            if off is None:
                return v
        f = _getframe(1)
        e = self._ls.get(f.f_lasti)
        sid = e[1] if e is not None and e[0] is f.f_code else self._site(f, False)
        self._app((((sid << _LIN_BITS) | _state.current.lin) << _OFF_BITS) | off)
        return v

    def __setitem__(self, idx, value):
        self._inner[idx] = value
        c = idx.__class__
        if c is int and self.ndim == 1:
            off = self._base + (idx if idx >= 0 else idx + self._n0) * self._s0
        elif c is tuple and self._n1 >= 0 and len(idx) == 2 \
                and idx[0].__class__ is int and idx[1].__class__ is int:
            i, j = idx
            off = self._base + (i if i >= 0 else i + self._n0) * self._s0 \
                + (j if j >= 0 else j + self._n1) * self._s1
        else:
            off = self._offset(idx)
            if off is None:             # a store through a slice: not recorded
                return
        f = _getframe(1)
        e = self._ss.get(f.f_lasti)
        sid = e[1] if e is not None and e[0] is f.f_code else self._site(f, True)
        self._app((((sid << _LIN_BITS) | _state.current.lin) << _OFF_BITS) | off)

    def __repr__(self):
        return f"<recorded {self._space} array {self._name!r} shape={self.shape} " \
               f"dtype={self._a.dtype}>"


class SiteTable:
    """Statistics of the access sites of one kernel, accumulated over blocks and launches.

    ``info[sid]``: ``(kernel, filename, lineno, space, op, array, itemsize, shape, strides)``;
    per site: ``requests``, ``sectors`` (global: total distinct sectors), ``ideal`` (global:
    total ideal sectors; shared: total ideal ways), ``ways`` (shared: total ways),
    ``max_ways``, and ``deltas`` (byte distance between lanes ``k`` and ``k + 1`` of one
    request -> count), which the report's hints read."""

    def __init__(self):
        self.info = []
        self.requests = []
        self.sectors = []
        self.ideal = []
        self.ways = []
        self.max_ways = []
        self.deltas = []

    def add_site(self, info):
        self.info.append(info)
        for lst in (self.requests, self.sectors, self.ideal, self.ways, self.max_ways):
            lst.append(0)
        self.deltas.append({})
        return len(self.info) - 1

    def merge(self, other):
        """Add ``other``'s statistics to this table (sites matched by their info)."""
        index = {inf: i for i, inf in enumerate(self.info)}
        for j, inf in enumerate(other.info):
            i = index.get(inf)
            if i is None:
                i = index[inf] = self.add_site(inf)
            self.requests[i] += other.requests[j]
            self.sectors[i] += other.sectors[j]
            self.ideal[i] += other.ideal[j]
            self.ways[i] += other.ways[j]
            self.max_ways[i] = max(self.max_ways[i], other.max_ways[j])
            d = self.deltas[i]
            for k, n in other.deltas[j].items():
                d[k] = d.get(k, 0) + n


def _expand(rk, lo, hi):
    """Rows ``(rk, unit)`` for every unit from ``lo`` to ``hi`` inclusive of each entry."""
    span = hi - lo + 1
    if span.max() == 1:
        return rk, lo
    idx = np.repeat(np.arange(len(rk)), span)
    first = np.cumsum(span) - span
    return rk[idx], lo[idx] + (np.arange(len(idx)) - first[idx])


def _distinct(rk, unit):
    """Sorted distinct ``(rk, unit)`` pairs as two arrays."""
    order = np.lexsort((unit, rk))
    r, u = rk[order], unit[order]
    keep = np.ones(len(r), bool)
    keep[1:] = (r[1:] != r[:-1]) | (u[1:] != u[:-1])
    return r[keep], u[keep]


def _groups(r):
    """For sorted ``r``: (group index per entry, first entry of each group)."""
    new = np.ones(len(r), bool)
    new[1:] = r[1:] != r[:-1]
    return np.cumsum(new) - 1, np.flatnonzero(new)


class Recorder:
    """The recording of one launch of kernel ``pyfunc``: arrays are wrapped by :meth:`wrap`,
    :meth:`end_block` folds a finished block's log into the site table, :meth:`finish`
    hands the table to the kernel's last report and to the active contexts.
    ``block_limit``: run only the first N blocks of the launch (None: all)."""

    def __init__(self, pyfunc, block_limit=None):
        self.pyfunc = pyfunc
        self.kernel = getattr(pyfunc, "__name__", "kernel")
        self.block_limit = block_limit
        self.log = []
        self.table = SiteTable()
        self._sites = {}
        self._space = []
        self._isz = []
        self._codes = []

    def wrap(self, a, space, name):
        """``a`` (NumPy or checked array, else returned unchanged) as a RecordingArray."""
        if isinstance(a, (np.ndarray, CheckedArray)) and not isinstance(a, RecordingArray):
            return RecordingArray(a, self, space, name)
        return a

    def site(self, code, lasti, lineno, store, arr):
        """The id of access site (``code``, ``lasti``) of ``arr`` (a RecordingArray)."""
        # keyed by line, not bytecode offset: the offset a caller frame reports moves when
        # the interpreter specialises the subscript; the n-th access of a line by each lane
        # is still the same one in a converged warp
        key = (id(code), lineno, store, arr._space, arr._name, arr._a.dtype.itemsize)
        sid = self._sites.get(key)
        if sid is None:
            if len(self._space) >= _MAX_SITES:
                raise RuntimeError(f"access report: more than {_MAX_SITES} access sites in "
                                   f"one launch of {self.kernel}")
            a = arr._a
            sid = self._sites[key] = self.table.add_site(
                (self.kernel, code.co_filename, lineno, arr._space,
                 "store" if store else "load", arr._name, a.dtype.itemsize, a.shape,
                 a.strides))
            self._space.append(arr._space == _SHARED)
            self._isz.append(a.dtype.itemsize)
            self._codes.append(code)        # keeps id(code) unique while recording
        return sid

    def blocks(self, bids):
        """The block ids of the launch (an iterator), cut at ``block_limit``; the log of each
        block is folded in once it has run."""
        for n, bid in enumerate(bids):
            if self.block_limit is not None and n >= self.block_limit:
                return
            yield bid
            self.end_block()

    def end_block(self):
        """Fold the log of the block that just ran into the site table."""
        log = self.log
        if not log:
            return
        v = np.array(log, dtype=np.int64)
        log.clear()
        key = v >> _OFF_BITS                        # (site, lane) in order of execution
        order = np.argsort(key, kind="stable")
        key = key[order]
        off = v[order] & _OFF_MASK
        grp, first = _groups(key)
        occ = np.arange(len(key)) - first[grp]      # n-th execution of the site by the lane
        sid = key >> _LIN_BITS
        lin = key & ((1 << _LIN_BITS) - 1)
        rk = (((sid << 5) | (lin >> 5)) << 40) | occ
        shared = np.asarray(self._space, bool)[sid]
        isz = np.asarray(self._isz, np.int64)[sid]
        t = self.table
        for is_shared in (False, True):
            m = shared == is_shared
            if m.any():
                self._fold(t, is_shared, rk[m], off[m], isz[m], lin[m])

    def _fold(self, t, is_shared, rk, off, isz, lin):
        nsites = len(t.info)
        if is_shared:
            r, word = _distinct(*_expand(rk, off >> 2, (off + isz - 1) >> 2))
            req, starts = _groups(r)
            nwords = np.bincount(req)
            ideal = (nwords + 31) // 32
            # distinct words per (request, bank): ways is the largest count in a request
            bank = word & 31
            order = np.lexsort((bank, r))
            r_s, b_s = r[order], bank[order]
            new = np.ones(len(r_s), bool)
            new[1:] = (r_s[1:] != r_s[:-1]) | (b_s[1:] != b_s[:-1])
            gstart = np.flatnonzero(new)
            per_bank = np.diff(np.append(gstart, len(r_s)))
            ways = np.zeros(len(starts), np.int64)
            np.maximum.at(ways, req[order][gstart], per_bank)
            rsid = r[starts] >> 45
            t_ways = np.bincount(rsid, weights=ways, minlength=nsites)
            mx = np.zeros(nsites, np.int64)
            np.maximum.at(mx, rsid, ways)
            for s in np.flatnonzero(mx):
                t.ways[s] += int(t_ways[s])
                t.max_ways[s] = max(t.max_ways[s], int(mx[s]))
        else:
            r, _ = _distinct(rk, off)               # distinct elements: the ideal's bytes
            req, starts = _groups(r)
            elems = np.bincount(req)
            rsid = r[starts] >> 45
            ideal = (elems * np.asarray(self._isz, np.int64)[rsid] + 31) // 32
            r2, _ = _distinct(*_expand(rk, off >> 5, (off + isz - 1) >> 5))
            req2, _ = _groups(r2)
            sectors = np.bincount(req2)
            t_sec = np.bincount(rsid, weights=sectors, minlength=nsites)
            for s in np.flatnonzero(t_sec):
                t.sectors[s] += int(t_sec[s])
        rsid = r[starts] >> 45
        nreq = np.bincount(rsid, minlength=nsites)
        t_ideal = np.bincount(rsid, weights=ideal, minlength=nsites)
        for s in np.flatnonzero(nreq):
            t.requests[s] += int(nreq[s])
            t.ideal[s] += int(t_ideal[s])
        # byte distance between neighbouring lanes of one request: what the hints read
        order = np.lexsort((lin, rk))
        rk_s, lin_s, off_s = rk[order], lin[order], off[order]
        nb = (rk_s[1:] == rk_s[:-1]) & (lin_s[1:] == lin_s[:-1] + 1)
        if nb.any():
            d = (off_s[1:] - off_s[:-1])[nb]
            ds = (rk_s[1:] >> 45)[nb]
            pairs, counts = np.unique(np.stack([ds, d]), axis=1, return_counts=True)
            for (s, delta), n in zip(pairs.T.tolist(), counts.tolist()):
                dd = t.deltas[s]
                dd[delta] = dd.get(delta, 0) + n

    def finish(self):
        """The launch is over: its table becomes the kernel's last report and is added to
        every active :func:`access_report` collector."""
        self.end_block()
        self._codes = None
        with _lock:
            if self.pyfunc is not None:
                try:
                    _last[self.pyfunc] = self.table
                except TypeError:
                    pass
            for c in _contexts:
                c._add(self.table)


class RecordingBlock(Block):
    """A block of a recorded launch: its shared arrays are recording arrays."""

    def make_shared(self, key, shape, dtype, frame):
        arr = Block.make_shared(self, key, shape, dtype, frame)
        arr = self.shared_arrays[key] = self.launch.recorder.wrap(
            arr, _SHARED, array_name(frame, "shared"))
        return arr


Recorder.block_class = RecordingBlock


def start(pyfunc):
    """A :class:`Recorder` for a launch of ``pyfunc`` when recording is on, else None."""
    if not _contexts and not config.ACCESS_REPORT:
        return None
    limits = [c.grid_limit for c in _contexts if c.grid_limit is not None]
    return Recorder(pyfunc, min(limits) if limits else None)


def last_report(pyfunc):
    """The :class:`~.access_report.AccessReport` of ``pyfunc``'s last recorded launch, or
    None when none was recorded."""
    from .access_report import AccessReport
    table = _last.get(pyfunc)
    return None if table is None else AccessReport([table])


class access_report:
    """``with cujit.access_report() as rep: kernel[grid, block](...)``: record the global and
    shared memory accesses of every simulated launch in the block; ``rep`` is an
    :class:`~cujit.simulator.access_report.AccessReport` that fills as launches finish
    (``print(rep)`` for the table, ``rep.rows`` / ``rep.warnings`` as data).

    ``grid_limit`` (int >= 1 or None): run only the first ``grid_limit`` blocks of each launch
    (in blockIdx order, x fastest) to keep large grids quick; the kernels' results are then
    incomplete.  Raises ValueError for a ``grid_limit`` that is not a positive int.
    Launches on a GPU are not recorded (the simulator sees the accesses; a GPU does not)."""

    def __init__(self, grid_limit=None):
        if grid_limit is not None and (not isinstance(grid_limit, (int, np.integer))
                                       or isinstance(grid_limit, bool) or grid_limit < 1):
            raise ValueError(f"access_report: grid_limit must be a positive int or None, "
                             f"got {grid_limit!r}")
        self.grid_limit = None if grid_limit is None else int(grid_limit)
        from .access_report import AccessReport
        self.report = AccessReport([])

    def _add(self, table):
        self.report._add(table)

    def __enter__(self):
        with _lock:
            _contexts.append(self)
        return self.report

    def __exit__(self, *exc):
        with _lock:
            _contexts.remove(self)
        return False
