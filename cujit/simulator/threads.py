"""The block runner: the threads of one block as greenlets, switching at barriers.

The runner (the *hub*) starts the threads in thread order.  A thread runs until it finishes
or reaches a barrier or warp intrinsic; there it records its request, joins the waiting list
and switches straight to the next thread of the round (the last one switches back to the
hub), so each wait costs one greenlet switch.  When the round is over the hub resolves what
it can: warp intrinsics whose participating lanes have all arrived, then the block barrier
once every live thread waits at it, and starts the next round in thread order, so a launch is
deterministic.

Barrier semantics: with checks on (``config.SIM_CHECKS``), threads waiting at different
``syncthreads()`` call sites, or waiting while others have finished, raise
:class:`BarrierDivergenceError`; with checks off the barrier is released once every thread
that has not exited waits at one (PTX ``bar.sync`` counts non-exited threads), so nothing
hangs either way.  Warp intrinsics that can never complete raise
:class:`WarpDivergenceError`.  An exception in a thread ends the launch with that exception,
its message prefixed by the thread and block ids and the kernel line; the other threads are
unwound (``GreenletExit``).
"""
import contextvars

import numpy as np

from ..kernelstate import state as _state
from .checked import RaceTracker, SharedCheckedArray
from .errors import (BarrierDivergenceError, WarpDivergenceError, fmt_dim, frame_site,
                     traceback_site, where)
from .memory import SharedMemory, as_dtype, check_shape
from .thread import Dim3, SimThread, array_name

__all__ = ["Block"]

# The warp calls of cujit.wmma and cujit.wgmma (tensor cores): all 32 lanes, the same
# arguments, each lane's part handed to all.
_TENSOR_CORE = ("wmma.", "wgmma.")
# One barrier interval in the race tracker's encoding: > the largest linear thread id + 1
# (1024 threads per block), see checked.py.
_EPOCH = 2048


class Block:
    """One block of a launch (``launch``: the :class:`~cujit.simulator.kernel.Launch`),
    ``bid`` its (x, y, z) index.  :meth:`run` runs all its threads to completion."""

    def __init__(self, launch, bid):
        self.launch = launch
        self.bid = bid
        self.blockIdx = Dim3(*bid)
        self.epoch_base = _EPOCH
        self.shared = SharedMemory(launch.dynamic_shared_bytes, launch.shared_limit)
        self.shared_arrays = {}
        self.dyn_tracker = None
        # global-memory access records of this block (globalrace.GlobalRaces), by address
        self.grecs = {}
        self.grid_hub = None    # the grid hub's greenlet in a cooperative launch (grid.py)
        self.at_grid = []
        bx, by, bz = launch.blockdim
        self.warp_gen = [0] * ((bx * by * bz + 31) // 32)
        self.nthreads = bx * by * bz
        # a kernel that never waits runs one reused thread object (see _run_plain)
        self.threads = [SimThread(self, (x, y, z), x + bx * (y + by * z))
                        for z in range(bz) for y in range(by) for x in range(bx)] \
            if launch.waits else None

    def tid_of(self, lin):
        """(x, y, z) of linear thread id ``lin``."""
        bx, by, _ = self.launch.blockdim
        return lin % bx, (lin // bx) % by, lin // (bx * by)

    def live_mask(self, warp):
        """Lane mask of the threads of ``warp`` that have not finished."""
        if self.threads is None:
            # threads run one after another: earlier lanes have finished, later ones not
            cur = _state.current
            n = min(32, self.nthreads - warp * 32)
            if cur is None or warp > cur.warp:
                return (1 << n) - 1
            if warp < cur.warp:
                return 0
            return ((1 << n) - 1) & ~((1 << cur.laneid) - 1)
        m = 0
        for t in self.threads[warp * 32:warp * 32 + 32]:
            if not t.done:
                m |= 1 << t.laneid
        return m

    # -- shared memory -------------------------------------------------------------------
    def make_shared(self, key, shape, dtype, frame, alignment=None):
        """The block's shared array for call site ``key`` (created now)."""
        shape = check_shape(shape, "shared.array")
        dt = as_dtype(dtype, "shared.array")
        checks = self.launch.checks
        if shape == (0,):
            arr = self.shared.dynamic(dt)
            if checks:
                if self.dyn_tracker is None:
                    dyn = self.shared.dyn
                    self.dyn_tracker = RaceTracker(dyn.__array_interface__["data"][0],
                                                   dyn.nbytes, self)
                arr = SharedCheckedArray(arr, array_name(frame, "shared"), self.dyn_tracker, 0)
        else:
            arr = self.shared.make_static(key, shape, dt, alignment)
            if checks:
                tr = RaceTracker(arr.__array_interface__["data"][0], arr.nbytes, self)
                arr = SharedCheckedArray(arr, array_name(frame, "shared"), tr, 0)
        self.shared_arrays[key] = arr
        return arr

    # -- scheduling ----------------------------------------------------------------------
    def run(self):
        if not self.launch.waits:
            return self._run_plain()
        from greenlet import greenlet, getcurrent
        hub = self.hub = getcurrent()
        threads = self.threads
        # the GPU raises no floating-point or overflow signals: every thread runs in a copy
        # of a context with NumPy's errors ignored (a greenlet does not inherit the hub's)
        with np.errstate(all="ignore"):
            ctx = contextvars.copy_context()
        for t in threads:
            g = t.glet = greenlet(t.main, hub)
            g.gr_context = ctx.copy()
        state = _state
        checks = self.launch.checks
        self.runnable = threads
        self.pos = 0
        self.at_bar = []
        self.at_warp = []
        self.at_grid = []
        try:
            while True:
                # One round: the hub starts the thread at ``pos``; a thread that stops at a
                # barrier switches straight to the next one (one switch per thread rather
                # than two through the hub); the last one, or one that finishes, comes back.
                runnable = self.runnable
                while self.pos < len(runnable):
                    t = runnable[self.pos]
                    state.current = t
                    try:
                        t.glet.switch(t.resume)
                    except BaseException as e:
                        self._fail(state.current, e)
                if self.at_warp:
                    self.runnable, self.at_warp = self._resolve_warps(self.at_warp)
                    self.pos = 0
                    if self.runnable:
                        continue
                at_bar = self.at_bar
                if self.at_grid:
                    self.runnable = self._grid_barrier(checks)
                    self.pos = 0
                    continue
                if not at_bar:
                    if self.launch.races is not None:
                        self.launch.races.fold_block(self)
                    return
                if len(at_bar) != len(threads) or checks:
                    self._check_barrier(at_bar, checks)
                self.runnable = self._release(at_bar)
                self.pos = 0
                self.at_bar = []
        finally:
            state.current = None

    def _run_plain(self):
        """Threads of a kernel that never waits (no barrier or warp call): each runs to
        completion in thread order, which is what the greenlet schedule does for it."""
        state = _state
        self.pos = 0
        launch = self.launch
        fn, args = launch.fn, launch.args
        bx, by, bz = launch.blockdim
        # one thread object, moved from thread to thread: creating one per thread costs
        # more than many small kernels do
        t = SimThread(self, (0, 0, 0), 0)
        ti = t.threadIdx
        lin = 0
        try:
            with np.errstate(all="ignore"):
                for z in range(bz):
                    for y in range(by):
                        for x in range(bx):
                            ti.x, ti.y, ti.z = x, y, z
                            t.tid = (x, y, z)
                            t.lin = lin
                            t.laneid = lin & 31
                            t.warp = lin >> 5
                            t.locals = None
                            state.current = t
                            try:
                                fn(*args)
                            except BaseException as e:
                                self._fail(t, e)
                            lin += 1
            if launch.races is not None:
                launch.races.fold_block(self)
        finally:
            state.current = None

    def wait(self, t, at):
        """Called by thread ``t`` (the running greenlet) to wait in list ``at`` (the barrier's
        or the warp calls'); returns ``t.resume`` once the runner releases it."""
        at.append(t)
        pos = self.pos = self.pos + 1
        runnable = self.runnable
        if pos < len(runnable):
            nxt = runnable[pos]
            g = nxt.glet
            # Only resume threads here: a greenlet started from another one would inherit
            # its recursion depth and stack position, so the hub starts each thread.
            if g:
                _state.current = nxt
                return g.switch(nxt.resume)
        return self.hub.switch()

    def finished(self, t):
        """Called by thread ``t`` as it returns: the runner moves on to the next thread."""
        t.done = True
        self.pos += 1

    def _release(self, waiting):
        """Resume the threads at a block barrier, with the syncthreads_* result."""
        self.epoch_base += _EPOCH
        pred = waiting[0].req[2]
        if pred is None:
            for t in waiting:
                t.resume = None
        else:
            kind = pred[0]
            vals = [t.req[2][1] if t.req[2] is not None else False for t in waiting]
            if kind == "count":
                r = sum(vals)
            elif kind == "and":
                r = int(all(vals))
            else:
                r = int(any(vals))
            for t in waiting:
                t.resume = r
        if len(waiting) > 1 and waiting[0].lin > waiting[-1].lin:
            waiting.sort(key=lambda t: t.lin)
        return waiting

    def _grid_barrier(self, checks):
        """Every live thread of the block waits at ``grid.sync()`` (or some at
        ``syncthreads()``: an error): check as for a block barrier, hand over to the grid
        hub until every block has arrived, then release the threads."""
        at_grid = self.at_grid
        if self.at_bar:
            raise BarrierDivergenceError(
                f"barrier divergence in block blockIdx={fmt_dim(self.bid)}: "
                f"{_describe(at_grid)} wait at grid.sync() at {frame_site(at_grid[0].req[1])}; "
                f"{_describe(self.at_bar)} wait at syncthreads() at "
                f"{frame_site(self.at_bar[0].req[1])}")
        if len(at_grid) != len(self.threads) or checks:
            self._check_barrier(at_grid, checks, "grid.sync()")
        if self.launch.races is not None:
            # what this block did before grid.sync() against the blocks there before it
            self.launch.races.fold_block(self)
        from greenlet import GreenletExit
        try:
            self.grid_hub.switch()
        except GreenletExit:
            # another block failed: unwind this block's threads, then this runner
            self._kill_all()
            raise
        self.at_grid = []
        return self._release(at_grid)

    def _check_barrier(self, at_bar, checks, what="syncthreads()"):
        if len(at_bar) == len(self.threads):
            f = at_bar[0].req[1]
            code, lasti = f.f_code, f.f_lasti
            for t in at_bar:
                f = t.req[1]
                if f.f_lasti != lasti or f.f_code is not code:
                    break
            else:
                return
        if not checks:
            return
        sites = {}
        for t in at_bar:
            f = t.req[1]
            sites.setdefault((f.f_code, f.f_lasti), []).append(t)
        finished = [t for t in self.threads if t.done]
        parts = []
        for group in sites.values():
            f = group[0].req[1]
            parts.append(f"{_describe(group)} wait at {what} at {frame_site(f)}")
        if finished:
            parts.append(f"{_describe(finished)} have finished")
        if finished and len(sites) == 1:
            # the early-return pattern (numba-cuda's laplace and sessionize examples): GPUs
            # of compute capability 7.0+ release the barrier for exited threads
            parts[-1] += (" without reaching it (CUDA leaves that undefined, though current "
                          "GPUs release a barrier for exited threads: keep every thread to "
                          "the barrier, or run with CUJIT_SIM_CHECKS=0)")
        raise BarrierDivergenceError(
            f"barrier divergence in block blockIdx={fmt_dim(self.bid)}: " + "; ".join(parts))

    # -- warp intrinsics -----------------------------------------------------------------
    def _resolve_warps(self, waiting):
        """Complete the warp calls whose lanes have all arrived; returns (resumed threads,
        still waiting).  Raises WarpDivergenceError when nothing can progress."""
        by_group = {}
        resumed, still = [], []
        for t in waiting:
            if t.req[0] == "activemask":
                # resolved now: no lane is running, so the lanes at this call site are the
                # converged ones (others exited, wait elsewhere, or took another branch)
                f = t.req[4]
                by_group.setdefault((t.warp, "activemask", f.f_code, f.f_lineno),
                                    []).append(t)
            else:
                by_group.setdefault((t.warp, t.req[1]), []).append(t)
        checks = self.launch.checks
        for key, group in by_group.items():
            if key[1] == "activemask":
                m = 0
                for t in group:
                    m |= 1 << t.laneid
                for t in group:
                    t.resume = np.uint32(m)
                resumed.extend(group)
                continue
            warp, mask = key
            if checks:
                self._check_mask(mask, group)
            needed = self.live_mask(warp) & mask
            have = 0
            for t in group:
                have |= 1 << t.laneid
            if needed & ~have:
                still.extend(group)
                continue
            kinds = {t.req[0] for t in group}
            if len(kinds) > 1:
                raise WarpDivergenceError(
                    f"warp divergence in block blockIdx={fmt_dim(self.bid)} warp {warp}: lanes "
                    f"of mask {mask:#010x} are in different warp calls: " + "; ".join(
                        f"{_describe([t for t in group if t.req[0] == k])} in {k} at "
                        f"{frame_site(next(t for t in group if t.req[0] == k).req[4])}"
                        for k in sorted(kinds)))
            kind = group[0].req[0]
            tensor = kind.startswith(_TENSOR_CORE)
            if tensor and have != 0xFFFFFFFF:
                self._partial_warp(warp, group)
            if kind == "syncwarp" or tensor:
                # a tensor-core call is .sync.aligned: the warp meets there, and what each
                # lane did before it (a tile's loads) is ordered before what any lane does
                # after it (the stores of the product), as after __syncwarp()
                self.warp_gen[warp] += 1
            _compute(group, self if checks else None)
            resumed.extend(group)
        if not resumed and still:
            t = still[0]
            mask = t.req[1]
            missing = [u for u in self.threads[t.warp * 32:t.warp * 32 + 32]
                       if not u.done and mask >> u.laneid & 1 and u not in still]
            raise WarpDivergenceError(
                f"warp divergence in block blockIdx={fmt_dim(self.bid)}: "
                f"{_describe([u for u in still if u.warp == t.warp])} wait in {t.req[0]} at "
                f"{frame_site(t.req[4])} with mask {mask:#010x}, but "
                f"{_describe(missing)} wait at syncthreads() or another warp call")
        resumed.sort(key=lambda t: t.lin)
        return resumed, still

    def _partial_warp(self, warp, group):
        """Raise for a ``cujit.wmma`` call that not all 32 lanes of ``warp`` make: the
        tensor-core instructions are warp-wide (``.sync.aligned``)."""
        t = group[0]
        lanes = min(32, self.nthreads - warp * 32)
        why = (f"the block has {self.nthreads} threads, so warp {warp} has only {lanes} lanes "
               "(use a block size that is a multiple of 32)" if lanes < 32 else
               f"the other {32 - len(group)} lane(s) have exited")
        raise WarpDivergenceError(
            f"cujit.{t.req[0]} in block blockIdx={fmt_dim(self.bid)} at "
            f"{frame_site(t.req[4])} is warp-wide: all 32 lanes of the warp must call it "
            f"together, but only {_describe(group)} of warp {warp} do: {why}")

    def _check_mask(self, mask, group):
        """A lane that calls a warp function with a mask without its own bit: undefined
        behaviour on a GPU (CUDA: the calling thread must be in the mask)."""
        outside = [t for t in group if not mask >> t.laneid & 1]
        if outside:
            t = outside[0]
            raise WarpDivergenceError(
                f"warp mask error in block blockIdx={fmt_dim(self.bid)}: "
                f"{_describe(outside)} call {t.req[0]} at {frame_site(t.req[4])} with mask "
                f"{mask:#010x}, which does not include their own lanes (lane {t.laneid}); "
                "on a GPU the result is undefined")

    def bad_source(self, t, src, kind):
        """Raise for a shuffle of thread ``t`` reading lane ``src`` of its warp that does not
        take part (exited, or outside the mask): the GPU returns an undefined value."""
        lin = t.warp * 32 + src
        other = self.threads[lin] if lin < len(self.threads) else None
        if other is None:
            return      # a lane past the end of a partial warp: the caller's own value
        why = "has exited" if other.done else \
            f"is not in the mask {t.req[1]:#010x}"
        raise WarpDivergenceError(
            f"warp shuffle error in block blockIdx={fmt_dim(self.bid)}: {where(t)} calls "
            f"{kind} at {frame_site(t.req[4])} reading lane {src}, which {why}; on a GPU the "
            "value is undefined")

    # -- failures ------------------------------------------------------------------------
    def _fail(self, t, e):
        """End the launch with exception ``e`` raised in thread ``t``."""
        self._kill_all()
        if getattr(e, "_cujit_sim_reported", False) or not isinstance(e, Exception):
            raise e
        text = f"{where(t)} at {traceback_site(e.__traceback__)}: {e}"
        try:
            new = type(e)(text)
            ok = str(new) == text
        except Exception:
            ok = False
        if not ok:
            e.add_note(text)
            raise e
        new._cujit_sim_reported = True
        raise new.with_traceback(e.__traceback__) from None

    def _kill_all(self):
        """Unwind every suspended thread (its ``finally`` blocks run)."""
        from greenlet import GreenletExit
        for u in self.threads or ():
            g = u.glet
            if g is not None and g and not g.dead:
                _state.current = u
                try:
                    g.throw(GreenletExit)
                except BaseException:
                    pass
            u.glet = None
            u.done = True
        _state.current = None


def _compute(group, checker=None):
    """Results of one warp call for its lanes (``group``, each with ``req`` =
    (kind, mask, a, b, frame)); sets each thread's ``resume``.  ``checker``: the block when
    checks are on (a shuffle from a lane that does not take part is then an error)."""
    kind = group[0].req[0]
    if kind == "syncwarp":
        for t in group:
            t.resume = None
        return
    if kind.startswith(_TENSOR_CORE):
        keys = {t.req[2] for t in group}
        if len(keys) > 1:
            t = group[0]
            args = "fragments, arrays, offsets, ldm or layouts" if kind.startswith("wmma.") \
                else "accumulator shapes, descriptors, dtypes, layouts or accumulate flags"
            raise WarpDivergenceError(
                f"cujit.{kind} at {frame_site(t.req[4])}: the lanes of warp {t.warp} pass "
                f"different {args}; a tensor-core call takes the same arguments in every "
                "lane")
        parts = [None] * 32
        for t in group:
            parts[t.laneid] = t.req[3]
        for t in group:
            t.resume = parts
        return
    if kind.startswith("shfl"):
        vals = {t.laneid: t.req[2] for t in group}
        for t in group:
            lane, b = t.laneid, int(t.req[3])
            if kind == "shfl_sync":
                src = b & 31
            elif kind == "shfl_up_sync":
                src = lane - b
            elif kind == "shfl_down_sync":
                src = lane + b
            else:
                src = lane ^ b
            if 0 <= src < 32:
                if src not in vals and checker is not None:
                    checker.bad_source(t, src, kind)
                t.resume = vals.get(src, t.req[2])
            else:
                t.resume = t.req[2]
        return
    preds = [t.req[2] for t in group]
    if kind == "ballot_sync":
        r = 0
        for t in group:
            if t.req[2]:
                r |= 1 << t.laneid
        r = np.uint32(r)
    elif kind == "all_sync":
        r = all(preds)
    elif kind == "any_sync":
        r = any(preds)
    else:
        r = all(preds) or not any(preds)
    for t in group:
        t.resume = r


def _describe(threads):
    """'N thread(s) (threadIdx (a) ... (b))' for a report."""
    n = len(threads)
    if n == 0:
        return "no threads"
    ts = sorted(threads, key=lambda t: t.lin)
    if n == 1:
        return f"1 thread (threadIdx {fmt_dim(ts[0].tid)})"
    return f"{n} threads (threadIdx {fmt_dim(ts[0].tid)} ... {fmt_dim(ts[-1].tid)})"
