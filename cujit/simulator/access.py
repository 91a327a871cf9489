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
import os
import threading

import numpy as np

from ..config import config
from ..hooks import HookPoint
from ..kernelstate import state as _state
from .access_report import AccessReport, SiteTable
from .checked import CheckedArray, WRAPPER_CODES
from .thread import array_name
from .threads import Block

__all__ = ["RecordingArray", "Recorder", "start", "access_report", "last_report",
           "enabled", "SAMPLE_BLOCKS", "recorded"]

#: Hook point of every recorded simulated launch: ``(pyfunc, table)`` when the launch of
#: kernel function ``pyfunc`` ended, ``table`` its :class:`~.access_report.SiteTable`.  Each
#: :class:`access_report` block subscribes for its duration and collects the tables.
recorded = HookPoint("simulator.access_recorded", ("pyfunc", "table"))

_getframe = sys._getframe
_SIM_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep
_OFF_BITS = 40
_OFF_MASK = (1 << _OFF_BITS) - 1
_LIN_BITS = 10          # at most 1024 threads per block
_MAX_SITES = 1 << (63 - _OFF_BITS - _LIN_BITS)
_GLOBAL, _SHARED = "global", "shared"
# Blocks recorded per launch (spread evenly over the grid); the others run at full speed.
SAMPLE_BLOCKS = 4

_lock = threading.Lock()
_contexts = []                              # active access_report() collectors


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
        # the simulator's own accesses (a cujit.pipeline copy, a tensor-core tile load or
        # store) are not element accesses of the kernel's: a 16-byte copy is one request, and
        # the kernel's line is frames away; they stay out of the report (None)
        sid = None if f.f_code.co_filename.startswith(_SIM_DIR) else \
            self._rec.site(f.f_code, f.f_lasti, f.f_lineno, store, self)
        (self._ss if store else self._ls)[f.f_lasti] = (f.f_code, sid)
        return sid

    def _element_offset(self, idx):
        """Byte offset of an element index that is one int (1-d) or two ints (2-d), wrapped as
        NumPy wraps negative indices (the access already succeeded); None for anything else."""
        c = idx.__class__
        if c is int and self.ndim == 1:
            return self._base + (idx if idx >= 0 else idx + self._n0) * self._s0
        if c is tuple and self._n1 >= 0 and len(idx) == 2 \
                and idx[0].__class__ is int and idx[1].__class__ is int:
            i, j = idx
            return self._base + (i if i >= 0 else i + self._n0) * self._s0 \
                + (j if j >= 0 else j + self._n1) * self._s1
        return None

    def __getitem__(self, idx):
        v = self._inner[idx]
        off = self._element_offset(idx)
        if off is None:
            if isinstance(v, (np.ndarray, CheckedArray)):
                return self._wrap(v)
            off = self._offset(idx)
            if off is None:
                return v
        f = _getframe(1)
        e = self._ls.get(f.f_lasti)
        sid = e[1] if e is not None and e[0] is f.f_code else self._site(f, False)
        if sid is not None:
            self._app((((sid << _LIN_BITS) | _state.current.lin) << _OFF_BITS) | off)
        return v

    def __setitem__(self, idx, value):
        self._inner[idx] = value
        off = self._element_offset(idx)
        if off is None:
            off = self._offset(idx)
            if off is None:             # a store through a slice: not recorded
                return
        f = _getframe(1)
        e = self._ss.get(f.f_lasti)
        sid = e[1] if e is not None and e[0] is f.f_code else self._site(f, True)
        if sid is not None:
            self._app((((sid << _LIN_BITS) | _state.current.lin) << _OFF_BITS) | off)

    def __repr__(self):
        return f"<recorded {self._space} array {self._name!r} shape={self.shape} " \
               f"dtype={self._a.dtype}>"


# a data race found under the recorder names the kernel's line, not the recorder's
WRAPPER_CODES.update((RecordingArray.__getitem__.__code__, RecordingArray.__setitem__.__code__))


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
    """The recording of one launch of ``owner`` (the kernel's
    :class:`~.kernel.SimKernel`, or None): arrays are wrapped by :meth:`wrap`,
    :meth:`end_block` folds a finished block's log into the site table, :meth:`finish`
    hands the table to the kernel's last report (``owner.last_access``) and to the active
    contexts.
    ``block_limit``: run only the first N blocks of the launch (None: all);
    ``sample_blocks``: record only this many blocks, spread evenly over the grid (None: all),
    which keeps the cost of recording small on large grids."""

    def __init__(self, owner, block_limit=None, sample_blocks=None):
        self.owner = owner
        self.sample_blocks = sample_blocks
        self.sampling = True
        self.kernel = getattr(getattr(owner, "pyfunc", None), "__name__", "kernel")
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
        """The id of the access site at line ``lineno`` of ``code`` for ``arr`` (a
        RecordingArray), by ``store`` (bool); ``lasti`` is the bytecode offset (unused in the
        key, see below)."""
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

    def record_args(self, kargs, params):
        """Wrap the array arguments in ``kargs`` (a list, changed in place) as recording arrays
        named by ``params``; the plain ones are kept for the blocks not sampled."""
        self._plain = list(kargs)
        for i, a in enumerate(kargs):
            kargs[i] = self.wrap(a, _GLOBAL, params[i] if i < len(params) else f"arg{i}")
        self._wrapped = list(kargs)

    def blocks(self, launch, bids):
        """The block ids of ``launch`` (from iterator ``bids``), cut at ``block_limit``.  The
        sampled blocks run with recording arrays, the others with the plain arguments; a
        sampled block's log is folded in once it has run."""
        gx, gy, gz = launch.griddim
        n = gx * gy * gz
        if self.block_limit is not None:
            n = min(n, self.block_limit)
        k = self.sample_blocks
        picks = None if k is None or n <= k else {i * n // k for i in range(k)}
        wrapped = getattr(self, "_wrapped", None)
        for i, bid in enumerate(bids):
            if i >= n:
                break
            self.sampling = picks is None or i in picks
            if wrapped is not None:
                launch.args = wrapped if self.sampling else self._plain
            yield bid
            if self.sampling:
                self.end_block()
            else:
                self.log.clear()        # captured device arrays record in every block
        if wrapped is not None:
            launch.args = wrapped

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
        ukeys, req = np.unique(rk, return_inverse=True)     # dense request ids, sorted
        req = req.ravel()
        nreq = len(ukeys)
        rsid = ukeys >> 45                                  # sorted: sites are the top bits
        sstart = np.flatnonzero(np.r_[True, rsid[1:] != rsid[:-1]])
        sites = rsid[sstart]
        if is_shared:
            q, word = _expand(req, off >> 2, (off + isz - 1) >> 2)
            pairs = np.unique((q << _OFF_BITS) | word)      # distinct words per request
            q = pairs >> _OFF_BITS
            ideal = (np.bincount(q, minlength=nreq) + 31) // 32
            # distinct words per (request, bank); ways: the largest count in a request
            qb, per_bank = np.unique((q << 5) | (pairs & 31), return_counts=True)
            qq = qb >> 5
            ways = np.maximum.reduceat(per_bank, np.flatnonzero(np.r_[True, qq[1:] != qq[:-1]]))
            t_ways = np.add.reduceat(ways, sstart)
            mx = np.maximum.reduceat(ways, sstart)
            for s, w, m in zip(sites.tolist(), t_ways.tolist(), mx.tolist()):
                t.ways[s] += w
                t.max_ways[s] = max(t.max_ways[s], m)
        else:
            elems = np.bincount(np.unique((req << _OFF_BITS) | off) >> _OFF_BITS,
                                minlength=nreq)
            ideal = (elems * np.asarray(self._isz, np.int64)[rsid] + 31) // 32
            q, sec = _expand(req, off >> 5, (off + isz - 1) >> 5)
            sectors = np.bincount(np.unique((q << _OFF_BITS) | sec) >> _OFF_BITS,
                                  minlength=nreq)
            for s, n in zip(sites.tolist(), np.add.reduceat(sectors, sstart).tolist()):
                t.sectors[s] += n
        nr = np.diff(np.r_[sstart, nreq])
        for s, n, i in zip(sites.tolist(), nr.tolist(), np.add.reduceat(ideal, sstart).tolist()):
            t.requests[s] += n
            t.ideal[s] += i
        # byte distance between neighbouring lanes of one request: what the hints read
        ql = (req << _LIN_BITS) | lin
        order = np.argsort(ql)
        ql, off_s = ql[order], off[order]
        nb = (ql[1:] == ql[:-1] + 1) & ((ql[1:] >> _LIN_BITS) == (ql[:-1] >> _LIN_BITS))
        if nb.any():
            d = (off_s[1:] - off_s[:-1])[nb]
            ds = rsid[(ql[1:] >> _LIN_BITS)[nb]]
            keys, counts = np.unique((ds << _OFF_BITS) | (d + (1 << (_OFF_BITS - 1))),
                                     return_counts=True)
            for k, n in zip(keys.tolist(), counts.tolist()):
                dd = t.deltas[k >> _OFF_BITS]
                delta = (k & _OFF_MASK) - (1 << (_OFF_BITS - 1))
                dd[delta] = dd.get(delta, 0) + n

    def finish(self):
        """The launch is over: its table becomes the kernel's last report and is added to
        every active :func:`access_report` collector."""
        self.end_block()
        self._codes = None
        with _lock:
            if self.owner is not None:
                self.owner.last_access = self.table
        if recorded.listeners:
            recorded.emit(getattr(self.owner, "pyfunc", None), self.table)


class RecordingBlock(Block):
    """A block of a recorded launch: its shared arrays are recording arrays."""

    def make_shared(self, key, shape, dtype, frame, alignment=None):
        arr = Block.make_shared(self, key, shape, dtype, frame, alignment)
        rec = self.launch.recorder
        if rec.sampling:
            arr = self.shared_arrays[key] = rec.wrap(arr, _SHARED, array_name(frame, "shared"))
        return arr


Recorder.block_class = RecordingBlock


def start(owner):
    """A :class:`Recorder` for a launch of the kernel whose
    :class:`~.kernel.SimKernel` is ``owner`` when recording is on, else None."""
    if not _contexts and not config.ACCESS_REPORT:
        return None
    me = threading.get_ident()
    # a grid limit truncates only the launches of the thread that asked for it: another
    # thread's kernels must still compute their whole results
    limits = [c.grid_limit for c in _contexts if c.grid_limit is not None and c.thread == me]
    samples = [c.sample_blocks for c in _contexts]
    if config.ACCESS_REPORT:
        samples.append(SAMPLE_BLOCKS)
    return Recorder(owner, min(limits) if limits else None,
                    None if None in samples else max(samples))


def last_report(owner):
    """The :class:`~.access_report.AccessReport` of the last recorded launch of the kernel
    whose :class:`~.kernel.SimKernel` is ``owner`` (None: no simulated launch yet), or None
    when none was recorded."""
    table = getattr(owner, "last_access", None)
    return None if table is None else AccessReport([table])


class access_report:
    """``with cujit.access_report() as rep: kernel[grid, block](...)``: record the global and
    shared memory accesses of every simulated launch in the block; ``rep`` is an
    :class:`~cujit.simulator.access_report.AccessReport` that fills as launches finish
    (``print(rep)`` for the table, ``rep.rows`` / ``rep.warnings`` as data).

    ``sample_blocks`` (int >= 1 or None, default :data:`SAMPLE_BLOCKS`): record this many
    blocks of each launch, spread evenly over the grid (blockIdx order, x fastest; the first
    block is always one), and run the others unrecorded at full speed; None records every
    block.  ``grid_limit`` (int >= 1 or None): run only the first ``grid_limit`` blocks of each
    launch, to keep large grids quick; the kernels' results are then incomplete.  The limit
    applies to launches made by the thread that entered the block (other threads' launches
    are recorded, but run whole grids).  Raises
    ValueError for a value that is not a positive int or None.
    Launches on a GPU are not recorded (the simulator sees the accesses; a GPU does not)."""

    def __init__(self, grid_limit=None, sample_blocks=SAMPLE_BLOCKS):
        for what, v in (("grid_limit", grid_limit), ("sample_blocks", sample_blocks)):
            if v is not None and (not isinstance(v, (int, np.integer))
                                  or isinstance(v, bool) or v < 1):
                raise ValueError(f"access_report: {what} must be a positive int or None, "
                                 f"got {v!r}")
        self.grid_limit = None if grid_limit is None else int(grid_limit)
        self.sample_blocks = None if sample_blocks is None else int(sample_blocks)
        self.report = AccessReport([])
        self.thread = None                  # ident of the thread that entered the block

    def _add(self, pyfunc, table):
        with _lock:
            self.report._add(table)

    def __enter__(self):
        self.thread = threading.get_ident()
        with _lock:
            _contexts.append(self)      # what start() records with (limits, sampling)
        recorded.subscribe(self._add)
        return self.report

    def __exit__(self, *exc):
        recorded.unsubscribe(self._add)
        with _lock:
            _contexts.remove(self)
        return False
