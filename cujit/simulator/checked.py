"""Checked arrays: NumPy arrays wrapped so that every element access inside a simulated kernel
is bounds-checked (all arrays) and race-checked (shared memory).  Used while
``config.SIM_CHECKS`` is on; with checks off kernels get the plain NumPy arrays.

Indexing follows Numba: integer indices (Python or NumPy ints) with negative values wrapping
once (``-n <= i < n``); an index with fewer integers than dimensions, or with slices, gives a
view that stays checked under the same name.  Reads return NumPy scalars of the array's dtype,
as a compiled kernel computes with them.

Race tracking (:class:`RaceTracker`) is per shared-memory buffer and keyed by the byte offset
of an element's first byte, so views of one buffer (slices, reshapes, other dtypes over
dynamic shared memory) see each other's accesses.  Each slot records, for the current
barrier interval (an *epoch* of the block), the last writer and up to two readers as
``epoch * 2048 + linear_tid + 1``: a slot is current when its value exceeds
``epoch * 2048``, so moving to the next interval at a barrier is one integer increment rather
than a reset of every slot.  Each record also keeps the code and instruction offset of the
access (its source line is looked up only for a report) and the number of
``syncwarp()`` calls its warp had completed, so two accesses by lanes of one warp separated
by a ``syncwarp()`` are not a race.  Accesses that overlap at different start bytes (an int64 over
two int32s written by other threads) are not seen as conflicting: a documented blind spot.
*Silent writes* (a store of the bytes an element the block wrote before already holds:
every thread setting ``s[0] = 7``) are checked against nothing and reads do not conflict with them, as in global
memory (:mod:`.globalrace`); a changing write still conflicts with another thread's earlier
silent one (the order decides which value stays).
"""
import sys

import numpy as np

from ..kernelstate import state as _state
from .errors import OutOfBoundsError, DataRaceError, where, caller_site

__all__ = ["CheckedArray", "SharedCheckedArray", "GlobalCheckedArray", "RaceTracker",
           "unwrap"]

_getframe = sys._getframe
#: Code objects of wrappers that sit between a kernel and a checked array (the access
#: recorder's ``__getitem__``/``__setitem__``): an access's site is the frame above them.
WRAPPER_CODES = set()
_INT_TYPES = (int, np.integer)


def _store_truncated(a, idx, value):
    """Store an integer that does not fit ``a``'s dtype as a compiled kernel does: truncated
    to the element's width (LLVM ``trunc``, Numba's semantics), where NumPy would raise."""
    a[idx] = np.asarray(value).astype(a.dtype)


def _silent(a, idx, value):
    """True when storing ``value`` at ``idx`` of NumPy array ``a`` leaves the element's
    bytes as they are (a silent write)."""
    try:
        return a.dtype.type(value).tobytes() == a[idx].tobytes()
    except (TypeError, ValueError, OverflowError, AttributeError):
        return False


def unwrap(a):
    """The NumPy array under a checked array (or ``a`` itself)."""
    return a._a if isinstance(a, CheckedArray) else a


class RaceTracker:
    """Per-interval access records of one shared-memory buffer of ``nbytes`` bytes at host
    address ``addr``; ``block`` is the block runner (its ``epoch_base`` is the current
    ``epoch * 2048``) and ``name`` names the buffer in reports."""
    __slots__ = ("addr", "block", "w", "r1", "r2", "wsite", "r1site", "r2site", "ws")

    def __init__(self, addr, nbytes, block):
        self.addr = addr
        self.block = block
        n = max(nbytes, 1)
        self.w = [0] * n
        self.r1 = [0] * n
        self.r2 = [0] * n
        self.wsite = [None] * n
        self.r1site = [None] * n
        self.r2site = [None] * n
        # silent writes: {offset: (epoch_base + tid + 1, site)}, only elements so written
        self.ws = {}

    def read(self, off, arr, idx, depth=2):
        blk = self.block
        base = blk.epoch_base
        t = _state.current
        me = t.lin + 1
        w = self.w[off]
        if w > base and w - base != me and not self._ordered(w - base, self.wsite[off], t):
            self._report(arr, idx, "reads", "written", w - base, self.wsite[off])
        r1 = self.r1[off]
        # the site is the kernel's frame (read <- __getitem__ <- kernel), taken only when
        # recorded: a thread re-reading its own element records nothing
        if r1 <= base:
            f = _getframe(depth)
            if f.f_code in WRAPPER_CODES:
                f = f.f_back
            self.r1[off] = base + me
            self.r1site[off] = (f.f_code, f.f_lasti, blk.warp_gen[t.warp])
        elif r1 - base != me and self.r2[off] <= base:
            f = _getframe(depth)
            if f.f_code in WRAPPER_CODES:
                f = f.f_back
            self.r2[off] = base + me
            self.r2site[off] = (f.f_code, f.f_lasti, blk.warp_gen[t.warp])

    def read_many(self, offs, arr, index, depth=2):
        """Record reads of the elements at byte offsets ``offs`` (ints) by the current
        thread at one site (the frame ``depth`` levels above this one), as :meth:`read` of
        each does; ``index(off)`` gives an element's index in ``arr`` for a report.  One
        call for the many elements a tensor-core instruction reads (``cujit.wgmma``): the
        site is looked up once, not per element."""
        blk = self.block
        base = blk.epoch_base
        t = _state.current
        me = t.lin + 1
        w, r1, r2, wsite = self.w, self.r1, self.r2, self.wsite
        site = None
        for off in offs:
            wv = w[off]
            if wv > base and wv - base != me and not self._ordered(wv - base, wsite[off], t):
                self._report(arr, index(off), "reads", "written", wv - base, wsite[off])
            rv = r1[off]
            if rv <= base:
                if site is None:
                    site = self._site(depth)
                r1[off] = base + me
                self.r1site[off] = site
            elif rv - base != me and r2[off] <= base:
                if site is None:
                    site = self._site(depth)
                r2[off] = base + me
                self.r2site[off] = site

    def _site(self, depth):
        """The access record's site: (code, instruction offset, warp's syncwarp count) of
        the frame ``depth`` levels above the caller (above the access recorder's
        wrappers)."""
        f = _getframe(depth + 1)
        if f.f_code in WRAPPER_CODES:
            f = f.f_back
        t = _state.current
        return (f.f_code, f.f_lasti, self.block.warp_gen[t.warp])

    def write(self, off, arr, idx, silent=False):
        """Record a write of the element at byte ``off`` by the current thread; ``silent``:
        it stores the bytes the element holds, which makes it a silent write (checked
        against nothing, recorded apart) once the block has written the element before
        (shared memory starts uninitialised on a GPU: the simulator's zeros are no value)."""
        blk = self.block
        base = blk.epoch_base
        t = _state.current
        me = t.lin + 1
        if silent and (self.w[off] or off in self.ws):
            f = _getframe(2)
            if f.f_code in WRAPPER_CODES:
                f = f.f_back
            self.ws[off] = (base + me, (f.f_code, f.f_lasti, blk.warp_gen[t.warp]))
            return
        e = self.ws.get(off) if self.ws else None
        if e is not None and e[0] > base and e[0] - base != me and \
                not self._ordered(e[0] - base, e[1], t):
            self._report(arr, idx, "writes", "written", e[0] - base, e[1])
        w = self.w[off]
        if w > base and w - base != me and not self._ordered(w - base, self.wsite[off], t):
            self._report(arr, idx, "writes", "written", w - base, self.wsite[off])
        r = self.r1[off]
        if r > base and r - base != me and not self._ordered(r - base, self.r1site[off], t):
            self._report(arr, idx, "writes", "read", r - base, self.r1site[off])
        r = self.r2[off]
        if r > base and r - base != me and not self._ordered(r - base, self.r2site[off], t):
            self._report(arr, idx, "writes", "read", r - base, self.r2site[off])
        f = _getframe(2)
        if f.f_code in WRAPPER_CODES:
            f = f.f_back
        self.w[off] = base + me
        self.wsite[off] = (f.f_code, f.f_lasti, blk.warp_gen[t.warp])

    def _ordered(self, other, site, t):
        """True when the earlier access by thread ``other - 1`` (made at ``site``) is ordered
        before thread ``t``'s by a ``syncwarp()`` of their common warp since then."""
        return (other - 1) >> 5 == t.warp and self.block.warp_gen[t.warp] > site[2]

    def _report(self, arr, idx, verb, other_verb, other, site):
        me = _state.current
        blk = self.block
        other_tid = blk.tid_of(other - 1)
        other_site = "<unknown>" if site is None else \
            f"{site[0].co_filename.rsplit('/', 1)[-1]}:{_line_at(site[0], site[1])}"
        raise DataRaceError(
            f"data race on shared memory: {where(me)} {verb} {arr._name}[{_fmt_idx(idx)}] at "
            f"{caller_site(3)}, which threadIdx=({other_tid[0]}, {other_tid[1]}, "
            f"{other_tid[2]}) {other_verb} at {other_site} since the last syncthreads()")


def _line_at(code, lasti):
    """Source line of the instruction at byte offset ``lasti`` of ``code``.  Access records
    keep the offset (``f_lasti``) rather than ``f_lineno``, which costs a line-table walk on
    every shared-memory access that is recorded."""
    for start, end, line in code.co_lines():
        if start <= lasti < end:
            return line
    return "?"


def _fmt_idx(idx):
    if isinstance(idx, tuple):
        return ", ".join(str(int(i)) for i in idx)
    return str(int(idx))


class CheckedArray:
    """A bounds-checked view of NumPy array ``a`` named ``name`` in reports.

    Attributes as NumPy's: ``shape``, ``ndim``, ``size``, ``dtype``, ``strides`` (bytes);
    ``len()``, indexing, ``reshape``, ``T``/``transpose``, ``ravel``, ``view``, ``copy``;
    anything else is looked up on the NumPy array.  Raises :class:`OutOfBoundsError` (an
    ``IndexError``) naming the array, index, shape, thread, block and source line."""
    __slots__ = ("_a", "_name", "shape", "ndim", "_n0", "_s0", "_n1", "_s1")
    _tracker = None

    def __new__(cls, a, *rest):
        # Structured arrays get a class with ``__getattr__`` (field names as attributes, as
        # on NumPy's recarray); the others none: in CPython 3.11 a class with __getattr__
        # loses the specialised attribute loads that the element-access fast paths live on.
        if getattr(getattr(a, "dtype", None), "names", None):
            cls = _WITH_FIELDS.get(cls, cls)
        else:
            cls = _BY_NDIM.get((cls, getattr(a, "ndim", -1)), cls)
        return object.__new__(cls)

    def __init__(self, a, name):
        self._a = a
        self._name = name
        self.shape = a.shape
        self.ndim = a.ndim
        self._n0 = a.shape[0] if a.ndim else 0
        self._s0 = a.strides[0] if a.ndim else 0
        # 2-d fast path: an index pair of in-range non-negative Python ints
        self._n1 = a.shape[1] if a.ndim == 2 else -1
        self._s1 = a.strides[1] if a.ndim == 2 else 0

    # -- element access ------------------------------------------------------------------
    def _oob(self, idx, axis):
        n = self.shape[axis]
        raise OutOfBoundsError(
            f"index {_fmt_idx(idx) if not isinstance(idx, tuple) else '(' + _fmt_idx(idx) + ')'}"
            f" is out of bounds for axis {axis} with size {n} of array '{self._name}' of shape "
            f"{self.shape}: {where(_state.current)} at {caller_site(2, source=True)}")

    def _wrap0(self, idx):
        """A 1-d index outside ``[0, n)``: ``idx + n`` when it is in ``[-n, 0)`` (NumPy's
        negative indexing), else OutOfBoundsError naming the index as given."""
        if -self._n0 <= idx < 0:
            return idx + self._n0
        self._oob(idx, 0)

    def _norm(self, idx):
        """``idx`` as a tuple of wrapped non-negative ints when it is all integers with one per
        axis; None when the index selects a view (slices, fewer integers)."""
        if isinstance(idx, _INT_TYPES):
            idx = (idx,)
        elif not isinstance(idx, tuple):
            return None
        shape = self.shape
        if len(idx) != len(shape):
            for ax, i in enumerate(idx):
                if isinstance(i, _INT_TYPES) and ax < len(shape) and not -shape[ax] <= i < shape[ax]:
                    self._oob(idx, ax)
            return None
        out = []
        for ax, i in enumerate(idx):
            if not isinstance(i, _INT_TYPES):
                for ax2, j in enumerate(idx):
                    if isinstance(j, _INT_TYPES) and not -shape[ax2] <= j < shape[ax2]:
                        self._oob(idx if len(idx) > 1 else idx[0], ax2)
                return None
            n = shape[ax]
            if i < 0:
                i += n
                if i < 0:
                    self._oob(idx if len(idx) > 1 else idx[0], ax)
            elif i >= n:
                self._oob(idx if len(idx) > 1 else idx[0], ax)
            out.append(int(i))
        return tuple(out)

    def _pair(self, idx):
        """``(i, j)`` when the tuple ``idx`` is two in-range Python ints of a 2-d array, else
        None (the general classes' 2-d path; the rank-specific classes inline their own)."""
        if self._n1 < 0:
            return None
        try:
            i, j = idx
        except ValueError:
            return None
        if i.__class__ is int and j.__class__ is int and 0 <= i < self._n0 and 0 <= j < self._n1:
            return i, j
        return None

    def __getitem__(self, idx):
        c = idx.__class__
        if c is tuple:
            if self._pair(idx) is not None:
                return self._a[idx]
        elif c is int and self.ndim == 1:
            if not 0 <= idx < self._n0:
                idx = self._wrap0(idx)
            return self._a[idx]
        t = self._norm(idx)
        if t is None:
            return self._wrap(self._a[idx])
        return self._a[t]

    def __setitem__(self, idx, value):
        if idx.__class__ is int and self.ndim == 1:
            if not 0 <= idx < self._n0:
                idx = self._wrap0(idx)
            try:
                self._a[idx] = unwrap(value)
            except OverflowError:
                _store_truncated(self._a, idx, unwrap(value))
            return
        if idx.__class__ is tuple and len(idx) == 2 and self._n1 >= 0:
            i, j = idx
            if i.__class__ is int and j.__class__ is int and 0 <= i < self._n0 \
                    and 0 <= j < self._n1:
                try:
                    self._a[idx] = value
                except OverflowError:
                    _store_truncated(self._a, idx, value)
                return
        t = self._norm(idx)
        if t is None:
            try:
                self._a[idx] = unwrap(value)
            except OverflowError:
                _store_truncated(self._a, idx, unwrap(value))
        else:
            try:
                self._a[t] = value
            except OverflowError:
                _store_truncated(self._a, t, value)

    # -- views ---------------------------------------------------------------------------
    def _wrap(self, view):
        """A view of this array, checked under the same name (a scalar stays a scalar)."""
        if not isinstance(view, np.ndarray):
            return view
        return CheckedArray(view, self._name)

    def __len__(self):
        if not self.ndim:
            raise TypeError(f"len() of 0-d array '{self._name}'")
        return self._n0

    def __iter__(self):
        for i in range(len(self)):
            yield self[i]

    @property
    def size(self):
        return self._a.size

    @property
    def dtype(self):
        return self._a.dtype

    @property
    def strides(self):
        return self._a.strides

    @property
    def itemsize(self):
        return self._a.itemsize

    @property
    def nbytes(self):
        return self._a.nbytes

    @property
    def T(self):
        return self._wrap(self._a.T)

    @property
    def ctypes(self):
        """NumPy's ``ctypes`` of the simulated memory (``.data``: the address of the first
        element; in the simulator, of the host buffer that holds the array's bytes)."""
        return self._a.ctypes

    def transpose(self, *axes):
        return self._wrap(self._a.transpose(*axes))

    def reshape(self, *shape, order="C"):
        """A view of another shape over the same bytes (NumPy's ``reshape``)."""
        return self._wrap(self._a.reshape(*shape, order=order))

    def ravel(self, order="C"):
        return self._wrap(self._a.ravel(order))

    def view(self, dtype):
        return self._wrap(self._a.view(dtype))

    def copy(self):
        return self._a.copy()

    def __array__(self, dtype=None, copy=None):
        return self._a if dtype is None else self._a.astype(dtype)

    def __repr__(self):
        return f"<checked array {self._name!r} shape={self.shape} dtype={self._a.dtype}>"


def _forward(name):
    return property(lambda self: getattr(self._a, name),
                    doc=f"``ndarray.{name}`` of the underlying array.")


# The rest of NumPy's public array attributes, read from the underlying array (properties
# rather than ``__getattr__``: see CheckedArray.__new__).
for _n in dir(np.ndarray):
    if (not _n.startswith("_") or _n in ("__array_interface__", "__array_struct__",
                                         "__array_priority__")) \
            and not hasattr(CheckedArray, _n):
        setattr(CheckedArray, _n, _forward(_n))
del _n


class SharedCheckedArray(CheckedArray):
    """A checked view of shared memory: bounds checks plus data-race tracking through
    ``tracker`` (:class:`RaceTracker` of its buffer); ``off`` is the byte offset of element
    0...0 in that buffer."""
    __slots__ = ("_tracker", "_off", "_w", "_r2", "_blk")

    def __init__(self, a, name, tracker, off):
        CheckedArray.__init__(self, a, name)
        self._tracker = tracker
        self._off = off
        # the fast paths read these without going through the tracker
        self._w = tracker.w
        self._r2 = tracker.r2
        self._blk = tracker.block

    def _wrap(self, view):
        if not isinstance(view, np.ndarray):
            return view
        off = view.__array_interface__["data"][0] - self._tracker.addr
        return SharedCheckedArray(view, self._name, self._tracker, off)

    def _byte(self, t):
        off = self._off
        for i, s in zip(t, self._a.strides):
            off += i * s
        return off

    def __getitem__(self, idx):
        return self._get(idx)

    def _get(self, idx):
        """Any index (the 1-d and 2-d classes' fast paths fall back to this); the race
        tracker is called 3 frames below the kernel."""
        c = idx.__class__
        if c is tuple:
            p = self._pair(idx)
            if p is not None:
                off = self._off + p[0] * self._s0 + p[1] * self._s1
                # fast path: not written in this barrier interval and both reader slots
                # taken, so RaceTracker.read would neither report nor record
                if self._w[off] <= self._blk.epoch_base < self._r2[off]:
                    return self._a[idx]
                self._tracker.read(off, self, idx, 3)
                return self._a[idx]
        elif c is int and self.ndim == 1:
            if not 0 <= idx < self._n0:
                idx = self._wrap0(idx)
            off = self._off + idx * self._s0
            if self._w[off] <= self._blk.epoch_base < self._r2[off]:
                return self._a[idx]
            self._tracker.read(off, self, idx, 3)
            return self._a[idx]
        t = self._norm(idx)
        if t is None:
            return self._wrap(self._a[idx])
        self._tracker.read(self._byte(t), self, t, 3)
        return self._a[t]

    def __setitem__(self, idx, value):
        if idx.__class__ is int and self.ndim == 1:
            if not 0 <= idx < self._n0:
                idx = self._wrap0(idx)
            self._tracker.write(self._off + idx * self._s0, self, idx,
                                _silent(self._a, idx, value))
            try:
                self._a[idx] = unwrap(value)
            except OverflowError:
                _store_truncated(self._a, idx, unwrap(value))
            return
        if idx.__class__ is tuple and self._n1 >= 0 and len(idx) == 2:
            i, j = idx
            if i.__class__ is int and j.__class__ is int and 0 <= i < self._n0 \
                    and 0 <= j < self._n1:
                self._tracker.write(self._off + i * self._s0 + j * self._s1, self, idx,
                                    _silent(self._a, idx, value))
                try:
                    self._a[idx] = value
                except OverflowError:
                    _store_truncated(self._a, idx, value)
                return
        t = self._norm(idx)
        if t is None:
            view = self._a[idx]
            tr = self._tracker
            if isinstance(view, np.ndarray):
                # a slice assignment writes every element it covers
                base = view.__array_interface__["data"][0] - tr.addr
                for el in np.ndindex(view.shape):
                    off = base
                    for i, s in zip(el, view.strides):
                        off += i * s
                    tr.write(off, self, el)
            try:
                self._a[idx] = unwrap(value)
            except OverflowError:
                _store_truncated(self._a, idx, unwrap(value))
        else:
            self._tracker.write(self._byte(t), self, t, _silent(self._a, t, value))
            try:
                self._a[t] = value
            except OverflowError:
                _store_truncated(self._a, t, value)


class GlobalCheckedArray(CheckedArray):
    """A checked view of global memory whose element accesses also go to ``races`` (the
    launch's :class:`~.globalrace.GlobalRaces`), which reports unsynchronised conflicting
    accesses of different threads (``config.SIM_GLOBAL_RACES``).  Keyed by the host address
    of an element's first byte, so views of one buffer see each other's accesses."""
    __slots__ = ("_races", "_addr")

    def __init__(self, a, name, races, register=True):
        CheckedArray.__init__(self, a, name)
        self._races = races
        self._addr = a.__array_interface__["data"][0]
        if register:
            races.register(a, name)

    def _wrap(self, view):
        if not isinstance(view, np.ndarray):
            return view
        # a view lies within its array, which is registered already
        return GlobalCheckedArray(view, self._name, self._races, False)

    def _byte(self, t):
        addr = self._addr
        for i, s in zip(t, self._a.strides):
            addr += i * s
        return addr

    def __getitem__(self, idx):
        # the races object is called 2 frames below the kernel (read <- __getitem__)
        c = idx.__class__
        if c is int and self.ndim == 1:
            if not 0 <= idx < self._n0:
                idx = self._wrap0(idx)
            self._races.read(self._addr + idx * self._s0, self, idx)
            return self._a[idx]
        if c is tuple and self._n1 >= 0 and len(idx) == 2:
            i, j = idx
            if i.__class__ is int and j.__class__ is int and 0 <= i < self._n0 \
                    and 0 <= j < self._n1:
                self._races.read(self._addr + i * self._s0 + j * self._s1, self, idx)
                return self._a[idx]
        t = self._norm(idx)
        if t is None:
            return self._wrap(self._a[idx])
        self._races.read(self._byte(t), self, t)
        return self._a[t]

    def _silent(self, idx, value):
        """True when storing ``value`` at ``idx`` leaves the element's bytes as they are
        (a silent write, see :mod:`.globalrace`)."""
        return _silent(self._a, idx, value)

    def __setitem__(self, idx, value):
        c = idx.__class__
        if c is int and self.ndim == 1:
            if not 0 <= idx < self._n0:
                idx = self._wrap0(idx)
            self._races.write(self._addr + idx * self._s0, self, idx,
                              self._silent(idx, value))
        elif c is tuple and (p := self._pair(idx)) is not None:
            self._races.write(self._addr + p[0] * self._s0 + p[1] * self._s1, self, idx,
                              self._silent(idx, value))
        else:
            t = self._norm(idx)
            if t is None:
                view = self._a[idx]
                if isinstance(view, np.ndarray):
                    # a slice assignment writes every element it covers
                    base = view.__array_interface__["data"][0]
                    for el in np.ndindex(view.shape):
                        addr = base
                        for i, s in zip(el, view.strides):
                            addr += i * s
                        self._races.write(addr, self, el)
            else:
                self._races.write(self._byte(t), self, t)
        CheckedArray.__setitem__(self, idx, value)


class _FieldAttributes:
    """Field names as attributes (``arr.x`` of a structured array), as NumPy's recarray."""
    __slots__ = ()

    def __getattr__(self, name):
        a = object.__getattribute__(self, "_a")
        if a.dtype.fields is not None and name in a.dtype.fields:
            # the field's strided view, checked as the array it lies in
            return self._wrap(a[name])
        return getattr(a, name)


class _CheckedRecords(_FieldAttributes, CheckedArray):
    __slots__ = ()


class _SharedCheckedRecords(_FieldAttributes, SharedCheckedArray):
    __slots__ = ()


class _GlobalCheckedRecords(_FieldAttributes, GlobalCheckedArray):
    __slots__ = ()


_WITH_FIELDS = {CheckedArray: _CheckedRecords, SharedCheckedArray: _SharedCheckedRecords,
                GlobalCheckedArray: _GlobalCheckedRecords}


# -- element-access fast paths by rank ------------------------------------------------------
# Element accesses enter through __getitem__/__setitem__ of CheckedArray, SharedCheckedArray
# and the classes below.  Code that must see every access (a recorder, a debugging hook) can
# empty ``_BY_NDIM`` for the launch: every array is then of the two general classes.
# The hot reads of simulated kernels are ``a[i]`` and ``a[i, j]`` with in-range ints.  These
# classes check them with C-level lookups that apply Numba's rule (a negative index wraps
# once, anything else out of range is an error) by themselves: ``range(n)[i]`` per axis for
# global/local arrays, and for shared arrays a table of byte offsets per element (its lookup
# is the bounds check and gives the race tracker's key).  Anything else (slices, other
# ranks, an out-of-range index to report) takes the general path.
_LOOKUP_ERRORS = (TypeError, ValueError, IndexError)


class _Checked2D(CheckedArray):
    __slots__ = ("_rg0", "_rg1")

    def __init__(self, a, name):
        CheckedArray.__init__(self, a, name)
        self._rg0 = range(a.shape[0])
        self._rg1 = range(a.shape[1])

    def __getitem__(self, idx):
        try:
            i, j = idx
            # a slice gives a range, and range + range is a TypeError: general path
            self._rg0[i] + self._rg1[j]
        except _LOOKUP_ERRORS:
            return CheckedArray.__getitem__(self, idx)
        return self._a[idx]

    def __setitem__(self, idx, value):
        try:
            i, j = idx
            self._rg0[i] + self._rg1[j]
        except _LOOKUP_ERRORS:
            return CheckedArray.__setitem__(self, idx, value)
        try:
            self._a[idx] = value
        except OverflowError:
            _store_truncated(self._a, idx, value)


_offset_tables = {}


def _offsets(shape, strides, off):
    """Byte offset of every element (nested lists, one level per axis) of a shared-memory
    view; shared by every block (the same views have the same offsets in each)."""
    key = (shape, strides, off)
    t = _offset_tables.get(key)
    if t is None:
        if len(_offset_tables) > 512:
            _offset_tables.clear()
        if len(shape) == 1:
            t = [off + i * strides[0] for i in range(shape[0])]
        else:
            t = [[off + i * strides[0] + j * strides[1] for j in range(shape[1])]
                 for i in range(shape[0])]
        _offset_tables[key] = t
    return t


class _Shared1D(SharedCheckedArray):
    __slots__ = ("_offs",)

    def __init__(self, a, name, tracker, off):
        SharedCheckedArray.__init__(self, a, name, tracker, off)
        self._offs = _offsets(a.shape, a.strides, off)

    def __getitem__(self, idx):
        try:
            off = self._offs[idx]
            # not written in this barrier interval and both reader slots taken: the
            # tracker would neither report nor record (a slice makes off a list: TypeError)
            fast = self._w[off] <= self._blk.epoch_base < self._r2[off]
        except _LOOKUP_ERRORS:
            return self._get(idx)
        if not fast:
            self._tracker.read(off, self, idx)
        return self._a[idx]


class _Shared2D(SharedCheckedArray):
    __slots__ = ("_offs",)

    def __init__(self, a, name, tracker, off):
        SharedCheckedArray.__init__(self, a, name, tracker, off)
        self._offs = _offsets(a.shape, a.strides, off)

    def __getitem__(self, idx):
        try:
            i, j = idx
            off = self._offs[i][j]
            fast = self._w[off] <= self._blk.epoch_base < self._r2[off]
        except _LOOKUP_ERRORS:
            return self._get(idx)
        if not fast:
            self._tracker.read(off, self, idx)
        return self._a[idx]


_BY_NDIM = {(CheckedArray, 2): _Checked2D, (SharedCheckedArray, 1): _Shared1D,
            (SharedCheckedArray, 2): _Shared2D}
