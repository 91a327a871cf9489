"""The vector executor's block runner: :class:`VectorBlock` (one block), :class:`ChunkBlock`
(several blocks of a kernel without shared memory or barriers as one vector) and
:func:`run_vector`, which rolls a block back and reruns it per thread when anything raises
(docs/design-simulator.md, "Vector executor").
"""
import os

import numpy as np

from .errors import BarrierDivergenceError, fmt_dim
from .memory import SharedMemory, as_dtype, check_shape
from .vecmem import Conflict
from .vecops import LANES
from .vecshared import VShared
from ..config import config

__all__ = ["VectorBlock", "ChunkBlock", "Lanes", "Sparse", "run_vector", "launches",
           "vector_enabled"]


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
        self.locals = {}
        self.glog = {}          # id(array) -> _GlobalLog of this barrier interval
        self.races = launch.races
        self.iters = 0          # loop iterations run (see spin)
        self.slots = 0          # lanes of the sampled iterations
        self.busy = 0           # active lanes of the sampled iterations

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

    @property
    def lane_index(self):
        """0 .. n-1 (intp): the lane of each element of a lane array."""
        if self.n == self.lanes.n:
            return self.lanes.index
        li = self.__dict__.get("_index")
        if li is None:
            li = self._index = np.arange(self.n, dtype=np.intp)
        return li

    def local(self, key, shape, dtype):
        """The lanes' local arrays of call site ``key`` (zeros, one per lane on axis 0),
        made on the first call as each thread's is."""
        rows = self.locals.get(key)
        if rows is None:
            shape = check_shape(shape, "local.array")
            rows = self.locals[key] = np.zeros((self.n,) + tuple(shape),
                                               as_dtype(dtype, "local.array"))
        return rows

    def grid_axis(self, axis):
        """Lane array (int64) of ``cuda.grid()``'s component ``axis`` (0, 1, 2)."""
        return self.lanes.tid(axis, np.int64) + self.bid[axis] * self.launch.blockdim[axis]

    def shared(self, key, shape, dtype, name, alignment=None):
        arr = self.shared_arrays.get(key)
        if arr is None:
            shape = check_shape(shape, "shared.array")
            a = self.mem.make_static(key, shape, as_dtype(dtype, "shared.array"), alignment)
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

    def spin(self, mask):
        """One loop iteration with active lanes ``mask`` (None: all).  A vector iteration
        costs about one NumPy call per operation over all ``n`` lanes, a per-thread one about
        a microsecond per operation and active lane.  When the block's loop iterations so
        far kept fewer than one lane slot in SPARSE_RATIO busy (one lane's long loop, an
        ``if i == 0:`` serial loop over a chunk of 16K lanes), the vector block is many times
        slower than per thread and rerunning what it did per thread is cheap, so it stops
        (:class:`Sparse`) and runs per thread (user trial: 500x slower)."""
        self.iters += 1
        if self.iters & (SPARSE_EVERY - 1):
            return
        self.slots += self.n
        self.busy += self.n if mask is None else int(np.count_nonzero(mask))
        if self.busy * SPARSE_RATIO < self.slots and \
                self.iters >= SPARSE_EVERY * SPARSE_SAMPLES:
            raise Sparse()

    def end_interval(self, fold=True):
        """Fold the barrier interval's global accesses into the launch's cross-block records
        (``fold`` and global races checked; :class:`~.vecmem.Conflict` when they conflict with
        another block's) and forget them."""
        races = self.races
        if fold and races is not None:
            commits = []
            for log in self.glog.values():
                got = log.cross_block(self, races)
                if got is None:
                    raise Conflict()
                commits.extend(got)
            races.commit(commits)
        for log in self.glog.values():
            log.reset()
        self.glog.clear()


class Sparse(Exception):
    """A vector block whose loops keep running with few active lanes (``spin``): the block
    runs per thread instead (see :func:`run_vector` for the rest of the launch)."""


#: spin(): the active lanes are counted every SPARSE_EVERY loop iterations; after
#: SPARSE_SAMPLES counts, fewer than one active lane in SPARSE_RATIO over all counts so far
#: stops the vector block.
SPARSE_EVERY = 16
SPARSE_RATIO = 64
SPARSE_SAMPLES = 4
#: run_vector: after FAILED_CHUNKS chunks in a row raised (Sparse: thread 0 of every block
#: runs a serial loop; a Conflict in every block), the rest of the launch runs per thread.
FAILED_CHUNKS = 2


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
        self.index = lin.astype(np.intp)
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


# read at every launch: config's fast reader (two dict lookups when nothing is set)
_vector_setting = config.reader("SIM_VECTOR")


def vector_enabled():
    """False when ``CUJIT_SIM_VECTOR`` is 0/false/no/off (the vector executor is off;
    ``config.SIM_VECTOR``).  ValueError naming the variable for any other value."""
    return _vector_setting()


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
    executor's.  The rest of the launch runs per thread once FAILED_CHUNKS chunks in a row
    raised; before that the next chunk runs vector again."""
    from .threads import Block
    lanes = Lanes(launch.blockdim, launch.vfn.filename)
    fn, args = launch.vfn.fn, launch.args
    multi = launch.vfn.multi
    multi = multi.fn if multi is not None else None
    gx, gy, gz = launch.griddim
    per = max(1, CHUNK_LANES // lanes.n)
    bids = iter(bids)
    failed = 0      # chunks in a row that raised and ran per thread
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
            blk.end_interval()
        except Exception:     # a checker's error, a Conflict, anything: per thread
            blk.end_interval(fold=False)
            blk.rollback()
            launches["rerun"] += 1
            for b in chunk:
                Block(launch, b).run()
                step()
            # the per-thread rerun went through (else it raised out of here): the chunk
            # may have been the only slow or racy one (one long lane, a `found[0] = 1`
            # flag set by a few threads), so the next chunk runs vector again unless
            # FAILED_CHUNKS chunks in a row failed
            failed += 1
            if failed < FAILED_CHUNKS:
                continue
            for b in bids:
                Block(launch, b).run()
                step()
            return
        blk.undo.clear()
        failed = 0
        for _ in chunk:
            step()
