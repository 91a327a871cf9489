"""The names used inside kernels: thread indexing, shared/local/constant memory, barriers,
atomics and warp intrinsics (numba.cuda's kernel API).

Each object here has two lives:

- **Compiled** (GPU): the compiler recognises these objects *by identity* when it resolves a
  kernel's globals (``cuda.threadIdx.x``, ``from cujit import shared``, aliases all work) and
  emits the matching NVVM code; their Python bodies never run.
- **Simulated** (``CUJIT_ENABLE_CUDASIM=1``): they are called as Python inside a simulated thread
  and forward to ``kernelstate.state.current``, the simulator's object for the running thread (see
  :mod:`cujit.simulator`).  That object provides: ``threadIdx``, ``blockIdx``, ``blockDim``,
  ``gridDim`` (each with ``.x .y .z``), ``laneid``, and methods named as the functions below
  (``syncthreads()``, ``shared_array(shape, dtype)``, ``local_array(shape, dtype)``,
  ``const_array_like(arr)``, ``atomic(op, ary, idx, *vals)``, ``shfl_sync(...)``, ...).

Outside a kernel every one of them raises ``RuntimeError`` saying so.

Result types, as numba.cuda types them (and as the compiler does):
``brev(x)``: uint32 for integers of up to 32 bits (converted to uint32 first), uint64 for
64-bit ones; ``ffs(x)``: uint32; ``clz``/``popc``: the argument's type;
``mulhi(a, b)``: the high half of the full product, in the operands' common integer type
(64 bits if either has 64, signed if either is signed); ``match_any_sync``: uint32;
``match_all_sync``: ``(uint32 mask, bool)``.
"""
import numpy as np


__all__ = ["threadIdx", "blockIdx", "blockDim", "gridDim", "grid", "gridsize", "warpsize",
           "shared", "local", "const", "syncthreads", "syncthreads_count", "syncthreads_and",
           "syncthreads_or", "syncwarp", "threadfence", "threadfence_block",
           "threadfence_system", "atomic", "shfl_sync", "shfl_up_sync", "shfl_down_sync",
           "shfl_xor_sync", "ballot_sync", "all_sync", "any_sync", "eq_sync", "activemask",
           "lanemask_lt", "popc", "brev", "clz", "ffs", "fma", "cbrt", "laneid", "selp",
           "mulhi", "nanosleep", "match_any_sync", "match_all_sync", "cg", "Dim3", "carray",
           "farray"]

#: The warp size of every CUDA device so far.
warpsize = 32


# The running simulated thread lives in kernelstate.py, shared with the simulator without an
# import circle; the old private names stay bound for callers.
from .kernelstate import state as _state, current_thread as _thread  # noqa: E402


class Dim3Stub:
    """``threadIdx`` / ``blockIdx`` / ``blockDim`` / ``gridDim``: ``.x``, ``.y``, ``.z`` (int)."""
    __slots__ = ("_name",)

    def __init__(self, name):
        self._name = name

    # Hot in simulated kernels: one attribute chain, the error path only when outside one.
    @property
    def x(self):
        t = _state.current
        return getattr(t if t is not None else _thread(self._name), self._name).x

    @property
    def y(self):
        t = _state.current
        return getattr(t if t is not None else _thread(self._name), self._name).y

    @property
    def z(self):
        t = _state.current
        return getattr(t if t is not None else _thread(self._name), self._name).z

    def __repr__(self):
        return f"cujit.{self._name}"


# numba.cuda's name (there the type of these objects in its typing; here their class).
Dim3 = Dim3Stub

threadIdx = Dim3Stub("threadIdx")
blockIdx = Dim3Stub("blockIdx")
blockDim = Dim3Stub("blockDim")
gridDim = Dim3Stub("gridDim")


class _LaneIdStub:
    """``cujit.laneid`` seen outside a kernel (the compiler recognises this object)."""

    def __repr__(self):
        return "cujit.laneid"


laneid = _LaneIdStub()


def _laneid():
    t = _state.current
    return laneid if t is None else t.laneid


def grid(ndim):
    """Absolute thread position: an int for ``ndim == 1``, else a tuple of ``ndim`` ints."""
    return _thread("grid").grid(ndim)


def gridsize(ndim):
    """Total threads in the grid along each axis: int for ``ndim == 1``, else a tuple."""
    return _thread("gridsize").gridsize(ndim)


class _Shared:
    """``cujit.shared.array(shape, dtype)``: per-block shared memory (size 0: dynamic)."""

    def array(self, shape, dtype, alignment=None):
        """An array of ``shape`` (a constant int or tuple of ints) and ``dtype`` in shared
        memory.  ``shape == 0`` gives the dynamic shared memory sized at launch; every such
        array aliases the same bytes.  ``alignment``: its address is a multiple of it
        (bytes: a power of 2 and a multiple of 8; numba-cuda's keyword); TypingError
        otherwise, or with dynamic shared memory."""
        return _thread("shared.array").shared_array(shape, dtype, alignment)

    def __repr__(self):
        return "cujit.shared"


class _Local:
    """``cujit.local.array(shape, dtype)``: per-thread scratch memory."""

    def array(self, shape, dtype, alignment=None):
        """A per-thread array of constant ``shape`` and ``dtype``; ``alignment`` as for
        ``shared.array``."""
        return _thread("local.array").local_array(shape, dtype, alignment)

    def __repr__(self):
        return "cujit.local"


class _Const:
    """``cujit.const.array_like(arr)``: a read-only copy of a global array in constant memory."""

    def array_like(self, arr):
        """``arr`` (a NumPy array known at compile time) placed in constant memory."""
        return _thread("const.array_like").const_array_like(arr)

    def __repr__(self):
        return "cujit.const"


shared = _Shared()
local = _Local()
const = _Const()


def syncthreads():
    """Block-wide barrier (``__syncthreads``)."""
    t = _state.current
    return (t if t is not None else _thread("syncthreads")).syncthreads()


def syncthreads_count(predicate):
    """Barrier; returns how many threads of the block passed a true ``predicate``."""
    return _thread("syncthreads_count").syncthreads_count(predicate)


def syncthreads_and(predicate):
    """Barrier; returns 1 when ``predicate`` is true in every thread of the block, else 0."""
    return _thread("syncthreads_and").syncthreads_and(predicate)


def syncthreads_or(predicate):
    """Barrier; returns 1 when ``predicate`` is true in any thread of the block, else 0."""
    return _thread("syncthreads_or").syncthreads_or(predicate)


def syncwarp(mask=0xFFFFFFFF):
    """Warp barrier over the lanes in ``mask``."""
    return _thread("syncwarp").syncwarp(mask)


def threadfence():
    """Memory fence at device scope."""
    return _thread("threadfence").threadfence()


def threadfence_block():
    """Memory fence at block scope."""
    return _thread("threadfence_block").threadfence_block()


def threadfence_system():
    """Memory fence at system scope."""
    return _thread("threadfence_system").threadfence_system()


def _atomic_method(name, op):
    """The simulator's ``cujit.atomic.<name>(ary, idx, val)`` (the compiler lowers the call by
    its name, cujit/frontend/calls/recognised.py)."""
    label = "atomic." + name

    def method(self, ary, idx, val):
        return _thread(label).atomic(op, ary, idx, val)
    method.__name__ = name
    method.__qualname__ = "_Atomic." + name
    method.__doc__ = (f"Atomic ``{op}`` of ``ary[idx]`` with ``val`` (numba.cuda ``atomic.{name}``); "
                      "returns the old value.")
    return method


class _Atomic:
    """``cujit.atomic.<op>(ary, idx, val)``: atomic read-modify-write; returns the old value.
    ``add sub max min nanmax nanmin exch and_ or_ xor inc dec`` are made by
    :func:`_atomic_method`; ``cas`` and ``compare_and_swap`` take the expected value too."""

    def cas(self, ary, idx, old, val):
        """If ``ary[idx] == old`` store ``val``; return the previous value."""
        return _thread("atomic.cas").atomic("cas", ary, idx, old, val)

    def compare_and_swap(self, ary, old, val):
        """``cas`` on ``ary[0]`` (Numba's older form)."""
        return _thread("atomic.compare_and_swap").atomic("cas", ary, 0, old, val)

    def __repr__(self):
        return "cujit.atomic"


for _name in ("add", "sub", "max", "min", "nanmax", "nanmin", "exch", "and_", "or_", "xor",
              "inc", "dec"):
    setattr(_Atomic, _name, _atomic_method(_name, _name.rstrip("_")))
del _name

atomic = _Atomic()


def shfl_sync(mask, value, src_lane):
    """Value of ``value`` in lane ``src_lane`` of the warp."""
    return _thread("shfl_sync").shfl_sync(mask, value, src_lane)


def shfl_up_sync(mask, value, delta):
    """Value from lane ``laneid - delta`` (own value when out of range)."""
    return _thread("shfl_up_sync").shfl_up_sync(mask, value, delta)


def shfl_down_sync(mask, value, delta):
    """Value from lane ``laneid + delta`` (own value when out of range)."""
    return _thread("shfl_down_sync").shfl_down_sync(mask, value, delta)


def shfl_xor_sync(mask, value, lane_mask):
    """Value from lane ``laneid ^ lane_mask``."""
    return _thread("shfl_xor_sync").shfl_xor_sync(mask, value, lane_mask)


def ballot_sync(mask, predicate):
    """uint32 with bit *i* set when ``predicate`` is true in lane *i*."""
    return _thread("ballot_sync").ballot_sync(mask, predicate)


def all_sync(mask, predicate):
    """Non-zero when ``predicate`` is true in every lane of ``mask``."""
    return _thread("all_sync").all_sync(mask, predicate)


def any_sync(mask, predicate):
    """Non-zero when ``predicate`` is true in any lane of ``mask``."""
    return _thread("any_sync").any_sync(mask, predicate)


def eq_sync(mask, predicate):
    """Non-zero when ``predicate`` has the same value in every lane of ``mask``."""
    return _thread("eq_sync").eq_sync(mask, predicate)


def activemask():
    """uint32 mask of the lanes of the warp that are executing."""
    return _thread("activemask").activemask()


def lanemask_lt():
    """uint32 mask of the lanes below this one."""
    return _thread("lanemask_lt").lanemask_lt()


def popc(x):
    """Number of set bits of an integer."""
    return _thread("popc").popc(x)


def clz(x):
    """Leading zero bits of an integer."""
    return _thread("clz").clz(x)


def fma(a, b, c):
    """``a * b + c`` with one rounding."""
    return _thread("fma").fma(a, b, c)


def cbrt(x):
    """Cube root."""
    return _thread("cbrt").cbrt(x)


def _int_info(x):
    """``(bits, signed)`` of an integer kernel value (a Python int is numba's int64)."""
    if isinstance(x, (bool, np.bool_)):
        return 8, False
    if isinstance(x, np.integer):
        return x.dtype.itemsize * 8, x.dtype.kind == "i"
    if isinstance(x, int):
        return 64, True
    raise TypeError(f"expected an integer, got {type(x).__name__} {x!r}")


def selp(test, a, b):
    """``a`` when ``test`` is true, else ``b`` (PTX ``selp``; ``a`` and ``b`` of one type)."""
    _thread("selp")
    return a if test else b


def mulhi(a, b):
    """High half of the full product ``a * b`` of two integers (``mul.hi``): 32-bit operands
    give the upper 32 bits of the 64-bit product, 64-bit ones the upper 64 of the 128-bit."""
    _thread("mulhi")
    wa, sa = _int_info(a)
    wb, sb = _int_info(b)
    w = 64 if max(wa, wb) > 32 else 32
    signed = sa or sb
    dt = np.dtype(f"{'i' if signed else 'u'}{w // 8}")
    x, y = _wrap(a, w, signed), _wrap(b, w, signed)
    return dt.type(_wrap((x * y) >> w, w, signed))


def _wrap(v, w, signed):
    """Integer ``v`` as a ``w``-bit two's-complement (``signed``) or unsigned value."""
    u = int(v) % (1 << w)
    return u - (1 << w) if signed and u >> (w - 1) else u


def nanosleep(ns):
    """Suspend the thread for about ``ns`` nanoseconds (PTX ``nanosleep``, sm_70+); a no-op
    on the simulator."""
    _thread("nanosleep")
    if not isinstance(ns, (int, np.integer)) or isinstance(ns, (bool, np.bool_)):
        raise TypeError(f"nanosleep() takes an integer number of nanoseconds, got {ns!r}")


def _bits_of(v):
    if isinstance(v, (float, np.floating)):
        return np.float64(v).tobytes() if not isinstance(v, np.float32) else v.tobytes()
    return int(v)


def _gather(name, mask, value):
    """Every lane of ``mask``'s value, by one shfl_sync per lane (a warp collective)."""
    t = _thread(name)
    if not isinstance(mask, (int, np.integer)):
        raise TypeError(f"{name}: mask must be an integer lane mask, got {mask!r}")
    mask = int(mask) & 0xFFFFFFFF
    out = {}
    for lane in range(32):
        if mask >> lane & 1:
            out[lane] = t.shfl_sync(mask, value, lane)
    return mask, out


def match_any_sync(mask, value):
    """uint32 mask of the lanes of ``mask`` whose ``value`` equals this lane's (bitwise)."""
    _, vals = _gather("match_any_sync", mask, value)
    me = _bits_of(value)
    r = 0
    for lane, v in vals.items():
        if _bits_of(v) == me:
            r |= 1 << lane
    return np.uint32(r)


def match_all_sync(mask, value):
    """``(mask, True)`` when every lane of ``mask`` has the same ``value``, else
    ``(0, False)``."""
    m, vals = _gather("match_all_sync", mask, value)
    me = _bits_of(value)
    same = all(_bits_of(v) == me for v in vals.values())
    return (np.uint32(m if same else 0), same)


def brev(x):
    """Bits of an integer reversed: uint32 for up to 32 bits, uint64 for 64 (numba)."""
    _thread("brev")
    w, _ = _int_info(x)
    n = 64 if w == 64 else 32
    v = int(x) % (1 << n)
    r = int(format(v, f"0{n}b")[::-1], 2)
    return np.uint64(r) if n == 64 else np.uint32(r)


def ffs(x):
    """uint32: position (1-based) of the lowest set bit, 0 when none (numba)."""
    _thread("ffs")
    w, _ = _int_info(x)
    v = int(x) % (1 << w)
    return np.uint32((v & -v).bit_length())


# ---- cooperative groups (numba.cuda.cg) -------------------------------------------------------
def grid_sync():
    """``cuda.cg.this_grid().sync()``: wait until every thread of the grid arrives.  Kernels
    that call it are launched cooperatively (cuLaunchCooperativeKernel; a grid larger than
    ``max_cooperative_grid_blocks(blockdim)`` is a CudaAPIError).  The simulator then runs
    all blocks together (cujit/simulator/grid.py); threads that diverge at it raise
    BarrierDivergenceError there."""
    _thread("cg.this_grid().sync").grid_sync()


class GridGroup:
    """The grid of the running kernel (``cuda.cg.this_grid()``): ``sync()``."""
    __slots__ = ("sync",)

    def __init__(self):
        # a plain function attribute, one object: the compiler recognises it by identity
        self.sync = grid_sync

    def __repr__(self):
        return "<cujit grid group>"


_GRID = GridGroup()


def this_grid():
    """The running kernel's :class:`GridGroup` (numba.cuda ``cg.this_grid()``)."""
    _thread("cg.this_grid")
    return _GRID


class _CooperativeGroups:
    """``cuda.cg``: numba.cuda's cooperative-groups namespace (``this_grid``)."""
    __slots__ = ()
    this_grid = staticmethod(this_grid)

    def __repr__(self):
        return "<cujit.cg>"


cg = _CooperativeGroups()


def literal_unroll(container):
    """numba's ``literal_unroll``: ``container`` itself.  That is its whole meaning outside a
    kernel (numba's too); in a numba kernel ``for x in literal_unroll(tup)`` unrolls the loop
    so that ``x`` may take a different type in each iteration (a tuple of mixed types);
    cujit writes such a loop out once per element of the tuple, a global or closure
    variable (``frontend/unroll.py``; docs/kernel-language.md)."""
    return container


def _pointer_array(ptr, shape, dtype, order, name):
    view = getattr(ptr, "as_array", None)
    if view is None:
        raise TypeError(f"{name}() takes a C pointer (a CPointer value in a kernel), got "
                        f"{type(ptr).__name__}")
    return view(shape, order, dtype)


def carray(ptr, shape, dtype=None):
    """An array of ``shape`` (an int or a tuple of ints), C order, over the memory ``ptr``
    points at (a ``CPointer`` in a kernel; numba.cuda's ``numpy_support.carray``).
    ``dtype``: the element type, by default the pointer's; required for a ``voidptr``.
    In kernels (both backends); the simulator checks that the array lies inside the memory
    the pointer reaches (``OutOfBoundsError``).  TypeError for a value that is not a
    pointer."""
    return _pointer_array(ptr, shape, dtype, "C", "carray")


def farray(ptr, shape, dtype=None):
    """As :func:`carray`, in Fortran order (the first index varies fastest)."""
    return _pointer_array(ptr, shape, dtype, "F", "farray")
