"""The per-thread object of a simulated launch: what ``cujit.kernelapi`` forwards to while a
kernel runs (``kernelstate.state.current``).

It holds the thread's indices and implements the kernel API as Python: indexing, memory
(shared/local/const arrays, see :mod:`.memory`), barriers and warp intrinsics (which suspend
the thread's greenlet and hand a request to the block runner, :mod:`.threads`), atomics
(plain read-modify-write: simulated threads only switch at barriers, so nothing can
interleave) and the integer/float intrinsics.
"""
import linecache
import re
import sys

import numpy as np

from .checked import CheckedArray
from .errors import typing_error
from .memory import aligned_zeros, as_dtype, check_shape, frozen_const
from .pipeline_sim import pipeline_call
from .wgmma_sim import wgmma_call
from .wmma_sim import wmma_call

__all__ = ["Dim3", "SimThread", "BAR"]

_getframe = sys._getframe
BAR = "bar"
GRID = "grid"
_ASSIGN = re.compile(r"^\s*([A-Za-z_]\w*)\s*(?::[^=]*)?=[^=]")
# (file, line, kind) -> the name array_name gives: keyed by source line, which is all the
# name depends on, so no kernel's code object is kept
_names = {}


class Dim3:
    """``threadIdx``-like triple with ``.x .y .z`` (ints)."""
    __slots__ = ("x", "y", "z")

    def __init__(self, x, y, z):
        self.x, self.y, self.z = x, y, z

    def __iter__(self):
        return iter((self.x, self.y, self.z))

    def __repr__(self):
        return f"Dim3(x={self.x}, y={self.y}, z={self.z})"


def array_name(frame, kind):
    """Name of the array made at ``frame``'s line: the assigned variable, else
    ``kind[line N]`` (for reports)."""
    key = (frame.f_code.co_filename, frame.f_lineno, kind)
    name = _names.get(key)
    if name is None:
        line = linecache.getline(frame.f_code.co_filename, frame.f_lineno)
        m = _ASSIGN.match(line)
        name = m.group(1) if m else f"{kind}[line {frame.f_lineno}]"
        _names[key] = name
    return name


def _bits(x):
    """Bit width of integer ``x``: its NumPy type's, 64 for a Python int (Numba's int64)."""
    if isinstance(x, np.integer):
        return x.dtype.itemsize * 8
    if isinstance(x, (int, bool)):
        return 64
    raise TypeError(f"expected an integer, got {type(x).__name__} {x!r}")


def _same_type(x, v):
    return type(x)(v) if isinstance(x, np.integer) else v


class SimThread:
    """One simulated CUDA thread.  ``tid``/``bid`` are (x, y, z) tuples, ``lin`` the linear
    thread id in the block (x fastest), ``laneid`` = ``lin % 32``, ``warp`` = ``lin // 32``."""
    __slots__ = ("block", "tid", "bid", "lin", "laneid", "warp", "threadIdx", "blockIdx",
                 "blockDim", "gridDim", "glet", "resume", "done", "locals", "req", "copies",
                 "mmas")

    def __init__(self, block, tid, lin):
        self.block = block
        self.tid = tid
        self.bid = block.bid
        self.lin = lin
        self.laneid = lin & 31
        self.warp = lin >> 5
        self.threadIdx = Dim3(*tid)
        self.blockIdx = block.blockIdx
        self.blockDim = block.launch.blockDim
        self.gridDim = block.launch.gridDim
        self.glet = None
        self.resume = None
        self.done = False
        self.locals = None
        self.req = None
        self.copies = None      # cujit.pipeline copies in flight (pipeline_sim.AsyncCopies)
        self.mmas = None        # cujit.wgmma mma_async in flight (wgmma_sim.AsyncMmas)

    def main(self, _):
        blk = self.block
        launch = blk.launch
        launch.fn(*launch.args)     # NumPy errors ignored: see Block.run
        blk.finished(self)

    # -- indexing ------------------------------------------------------------------------
    def grid(self, ndim):
        t, b, d = self.threadIdx, self.blockIdx, self.blockDim
        if ndim == 1:
            return t.x + b.x * d.x
        if ndim == 2:
            return t.x + b.x * d.x, t.y + b.y * d.y
        if ndim == 3:
            return t.x + b.x * d.x, t.y + b.y * d.y, t.z + b.z * d.z
        raise ValueError(f"grid(ndim): ndim must be 1, 2 or 3, got {ndim!r}")

    def gridsize(self, ndim):
        g, d = self.gridDim, self.blockDim
        if ndim == 1:
            return g.x * d.x
        if ndim == 2:
            return g.x * d.x, g.y * d.y
        if ndim == 3:
            return g.x * d.x, g.y * d.y, g.z * d.z
        raise ValueError(f"gridsize(ndim): ndim must be 1, 2 or 3, got {ndim!r}")

    # -- memory --------------------------------------------------------------------------
    def shared_array(self, shape, dtype, alignment=None):
        f = _getframe(2)
        key = (f.f_code, f.f_lasti)
        arr = self.block.shared_arrays.get(key)
        if arr is None:
            arr = self.block.make_shared(key, shape, dtype, f, alignment)
        return arr

    def local_array(self, shape, dtype, alignment=None):
        f = _getframe(2)
        key = (f.f_code, f.f_lasti)
        loc = self.locals
        if loc is None:
            loc = self.locals = {}
        arr = loc.get(key)
        if arr is None:
            shp = check_shape(shape, "local.array")
            dt = as_dtype(dtype, "local.array")
            arr = aligned_zeros(shp, dt, alignment)
            if dt.names:
                arr = arr.view(np.recarray)
            if self.block.launch.checks:
                arr = CheckedArray(arr, array_name(f, "local"))
            loc[key] = arr
        return arr

    def const_array_like(self, arr):
        f = _getframe(2)
        key = (f.f_code, f.f_lasti)
        launch = self.block.launch
        c = launch.const_views.get(key)
        if c is None:
            c = launch.consts.get(key)
            if c is None:
                c = frozen_const(arr)
                launch.add_const(c)
                launch.consts[key] = c
            if launch.checks:
                c = CheckedArray(c, array_name(f, "const"))
            launch.const_views[key] = c
        return c

    # -- barriers ------------------------------------------------------------------------
    def syncthreads(self):
        blk = self.block
        self.req = (BAR, _getframe(2), None)
        blk.wait(self, blk.at_bar)

    def syncthreads_count(self, predicate):
        blk = self.block
        self.req = (BAR, _getframe(2), ("count", bool(predicate)))
        return blk.wait(self, blk.at_bar)

    def syncthreads_and(self, predicate):
        blk = self.block
        self.req = (BAR, _getframe(2), ("and", bool(predicate)))
        return blk.wait(self, blk.at_bar)

    def syncthreads_or(self, predicate):
        blk = self.block
        self.req = (BAR, _getframe(2), ("or", bool(predicate)))
        return blk.wait(self, blk.at_bar)

    def grid_sync(self):
        """``cg.this_grid().sync()``: a block barrier in a one-block grid, else a wait for
        every thread of the grid (the launch runs its blocks together: :mod:`.grid`)."""
        blk = self.block
        g = self.gridDim
        if g.x * g.y * g.z == 1:
            self.req = (BAR, _getframe(2), None)
            blk.wait(self, blk.at_bar)
            return
        if blk.grid_hub is None:
            raise NotImplementedError(
                "grid.sync() in a grid of several blocks needs a cooperative launch, which the "
                "simulator makes for kernels it runs typed (CUJIT_SIM_TYPED is off or the "
                "kernel's rewrite failed: see the RuntimeWarning)")
        self.req = (GRID, _getframe(2), None)
        blk.wait(self, blk.at_grid)

    def threadfence(self):
        """No-op: simulated threads see each other's writes at once."""

    threadfence_block = threadfence
    threadfence_system = threadfence

    # -- warp intrinsics -----------------------------------------------------------------
    def _warp(self, kind, mask, a=None, b=None):
        if not isinstance(mask, (int, np.integer)):
            raise TypeError(f"{kind}: mask must be an integer lane mask, got {mask!r}")
        self.req = (kind, int(mask) & 0xFFFFFFFF, a, b, _getframe(3))
        blk = self.block
        return blk.wait(self, blk.at_warp)

    def wmma(self, op, *args):
        """A ``cujit.wmma`` operation (``'fill'``, ``'load'``, ``'mma'``, ``'store'``):
        :mod:`.wmma_sim`."""
        return wmma_call(self, op, args)

    def wgmma(self, op, *args):
        """A ``cujit.wgmma`` operation (``'fill'``, ``'descriptor'``, ``'fence'``,
        ``'fence_proxy'``, ``'mma'``, ``'commit'``, ``'wait'``, ``'store'``):
        :mod:`.wgmma_sim`."""
        return wgmma_call(self, op, args)

    def pipeline(self, op, *args):
        """A ``cujit.pipeline`` operation (``'copy'``, ``'commit'``, ``'wait'``):
        :mod:`.pipeline_sim`."""
        return pipeline_call(self, op, args)

    def syncwarp(self, mask=0xFFFFFFFF):
        self._warp("syncwarp", mask)

    def shfl_sync(self, mask, value, src_lane):
        return self._warp("shfl_sync", mask, value, src_lane)

    def shfl_up_sync(self, mask, value, delta):
        return self._warp("shfl_up_sync", mask, value, delta)

    def shfl_down_sync(self, mask, value, delta):
        return self._warp("shfl_down_sync", mask, value, delta)

    def shfl_xor_sync(self, mask, value, lane_mask):
        return self._warp("shfl_xor_sync", mask, value, lane_mask)

    def ballot_sync(self, mask, predicate):
        return self._warp("ballot_sync", mask, bool(predicate))

    def all_sync(self, mask, predicate):
        return self._warp("all_sync", mask, bool(predicate))

    def any_sync(self, mask, predicate):
        return self._warp("any_sync", mask, bool(predicate))

    def eq_sync(self, mask, predicate):
        return self._warp("eq_sync", mask, bool(predicate))

    def activemask(self):
        # The lanes of this warp at this same call when no lane can run on: a lane that
        # will still exit (an early ``return``) or that is in another branch is not active,
        # as on a GPU; the live lanes of the warp were the answer only for lane 31.
        return self._warp("activemask", 0xFFFFFFFF)

    def lanemask_lt(self):
        return np.uint32((1 << self.laneid) - 1)

    # -- atomics -------------------------------------------------------------------------
    def atomic(self, op, ary, idx, *vals):
        """``ary[idx] = op(ary[idx], *vals)`` returning the old value (CUDA atomics)."""
        if isinstance(ary, CheckedArray):
            t = ary._norm(idx)
            if t is None:
                raise typing_error(f"atomic.{op}: index {idx!r} must select one element of "
                                   f"'{ary._name}' of shape {ary.shape}", 3)
            a = ary._a
        elif isinstance(ary, np.ndarray):
            a, t = ary, idx
        else:
            raise typing_error(f"atomic.{op}: expected an array, got {type(ary).__name__}", 3)
        old = a[t]
        v = vals[0]
        if op == "add":
            new = old + v
        elif op == "sub":
            new = old - v
        elif op == "max":
            # as the compiled CAS loop (numba-cuda's): v is stored only when the ordered
            # v > old holds, so a NaN on either side keeps the old value (Python's max
            # would keep its first argument)
            new = v if v > old else old
        elif op == "min":
            new = v if v < old else old
        elif op == "nanmax":
            new = np.fmax(old, v)
        elif op == "nanmin":
            new = np.fmin(old, v)
        elif op == "exch":
            new = v
        elif op == "and":
            new = old & v
        elif op == "or":
            new = old | v
        elif op == "xor":
            new = old ^ v
        elif op == "inc":
            new = 0 if old >= v else old + 1
        elif op == "dec":
            new = v if (old == 0 or old > v) else old - 1
        elif op == "cas":
            new = vals[1] if old == v else old
        else:
            raise ValueError(f"unknown atomic operation {op!r}")
        a[t] = new
        return old

    # -- integer and float intrinsics ----------------------------------------------------
    def popc(self, x):
        n = _bits(x)
        return _same_type(x, bin(int(x) & ((1 << n) - 1)).count("1"))

    def clz(self, x):
        n = _bits(x)
        v = int(x) & ((1 << n) - 1)
        return _same_type(x, n - v.bit_length())

    def fma(self, a, b, c):
        from .scalars import fma
        if isinstance(a, np.float32) and isinstance(b, np.float32) and isinstance(c, np.float32):
            return fma(a, b, c)
        return fma(np.float64(a), np.float64(b), np.float64(c))

    def cbrt(self, x):
        return np.cbrt(x) if isinstance(x, np.floating) else np.cbrt(np.float64(x))
