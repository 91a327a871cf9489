"""More kernel-API functions (numba.cuda's names): ``selp``, ``mulhi``, ``nanosleep``,
``match_any_sync``, ``match_all_sync``, and ``brev``/``ffs`` with numba's result types.

Like :mod:`cujit.kernelapi` (which re-exports them): compiled kernels never run these bodies
(the compiler recognises the objects by identity); simulated kernels call them.  Outside a
kernel each raises RuntimeError.

Result types, as numba.cuda types them (and as the compiler does):
``brev(x)``: uint32 for integers of up to 32 bits (converted to uint32 first), uint64 for
64-bit ones; ``ffs(x)``: uint32; ``clz``/``popc``: the argument's type;
``mulhi(a, b)``: the high half of the full product, in the operands' common integer type
(64 bits if either has 64, signed if either is signed); ``match_any_sync``: uint32;
``match_all_sync``: ``(uint32 mask, bool)``.
"""
import numpy as np

from .kernelstate import current_thread as _thread

__all__ = ["selp", "mulhi", "nanosleep", "match_any_sync", "match_all_sync", "brev", "ffs",
           "cg", "this_grid", "grid_sync", "GridGroup", "literal_unroll"]


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
    variable (``compiler/unroll.py``; docs/kernel-language.md)."""
    return container
