"""numba.cuda.random: the xoroshiro128+ generator for kernels (R-LIB-1).

The API is numba-cuda's: ``create_xoroshiro128p_states(n, seed, subsequence_start=0,
stream=0)`` returns a device array of ``n`` generator states (dtype
``xoroshiro128p_dtype``: two uint64 fields ``s0``, ``s1``); kernels call the device functions
``xoroshiro128p_uniform_float32(states, i)`` & co. to draw numbers from state ``i``.

The numbers are bit for bit numba-cuda's for the same seed and subsequence:

- a 64-bit seed is spread into a state with splitmix64 (both words get the same value);
- state ``i`` is the seeded state advanced by ``subsequence_start + i`` jumps of 2**64 steps;
- ``uint64 -> [0, 1)`` keeps the top 53 bits (float32 rounds that float64);
- the normal variates are Box-Muller of two float32 uniforms (also for float64, as numba).

Numba fills the states in a sequential host loop (``subsequence_start + n`` jumps).  Here a
kernel does it, one thread per state: jumping ``k`` subsequences is applying the jump
polynomial of ``2**64 * k`` steps, and that is the product of the polynomials of the set bits
of ``k``; those 64 polynomials (``x**(2**(64+j)) mod P``, ``P`` the generator's
characteristic polynomial) are computed once on the host, by exact GF(2) arithmetic.
"""
import functools
import numbers

import numpy as np

from .dispatch import jit
from .kernelapi import grid
from .types import uint32, uint64

__all__ = ["xoroshiro128p_dtype", "xoroshiro128p_type", "create_xoroshiro128p_states",
           "init_xoroshiro128p_states", "init_xoroshiro128p_state", "xoroshiro128p_next",
           "xoroshiro128p_jump", "xoroshiro128p_uniform_float32",
           "xoroshiro128p_uniform_float64", "xoroshiro128p_normal_float32",
           "xoroshiro128p_normal_float64", "rotl", "uint64_to_unit_float32",
           "uint64_to_unit_float64"]

xoroshiro128p_dtype = np.dtype([("s0", np.uint64), ("s1", np.uint64)], align=True)

_MASK64 = (1 << 64) - 1
# The published xoroshiro128+ jump polynomial (2**64 steps); _jump_table() re-derives it.
_JUMP = (0xBEAC0467EBA5FACB, 0xD86B048B86AA9922)
_TWO_PI_F32 = np.float32(2 * np.pi)
_TWO_PI_F64 = np.float64(2 * np.pi)


def __getattr__(name):
    if name == "xoroshiro128p_type":      # a cujit Record type; built on first use
        from .types import typeof
        return typeof(np.zeros(1, xoroshiro128p_dtype)).dtype
    raise AttributeError(f"module 'cujit.random' has no attribute {name!r}")


# ---- device functions (numba-cuda's public ones, same names and arguments) ----

@jit(device=True)
def rotl(x, k):
    """Rotate the uint64 ``x`` left by ``k`` bits (0 < k < 64)."""
    return (x << uint32(k)) | (x >> uint32(64 - k))


@jit(device=True)
def init_xoroshiro128p_state(states, index, seed):
    """Seed ``states[index]`` from the 64-bit ``seed`` with splitmix64 (numba's
    ``init_xoroshiro128p_state``), so that small seeds still give unrelated streams."""
    z = uint64(seed) + uint64(0x9E3779B97F4A7C15)
    z = (z ^ (z >> uint32(30))) * uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> uint32(27))) * uint64(0x94D049BB133111EB)
    z = z ^ (z >> uint32(31))
    states[index]["s0"] = z
    states[index]["s1"] = z


@jit(device=True)
def xoroshiro128p_next(states, index):
    """Return the next uint64 of generator ``states[index]`` and advance it one step."""
    s0 = states[index]["s0"]
    s1 = states[index]["s1"]
    result = s0 + s1
    t = s1 ^ s0
    states[index]["s0"] = rotl(s0, 55) ^ t ^ (t << uint32(14))
    states[index]["s1"] = rotl(t, 36)
    return result


@jit(device=True)
def xoroshiro128p_jump(states, index):
    """Advance generator ``states[index]`` by 2**64 steps (one subsequence)."""
    a0 = uint64(0)
    a1 = uint64(0)
    for w in range(2):
        word = uint64(0xBEAC0467EBA5FACB) if w == 0 else uint64(0xD86B048B86AA9922)
        for b in range(64):
            if (word >> uint32(b)) & uint64(1):
                a0 ^= states[index]["s0"]
                a1 ^= states[index]["s1"]
            xoroshiro128p_next(states, index)
    states[index]["s0"] = a0
    states[index]["s1"] = a1


@jit(device=True)
def uint64_to_unit_float64(x):
    """Map a uint64 to a float64 in [0, 1) from its top 53 bits."""
    return (x >> uint32(11)) * (1.0 / 9007199254740992.0)


@jit(device=True)
def uint64_to_unit_float32(x):
    """Map a uint64 to a float32 in [0, 1): the float64 of :func:`uint64_to_unit_float64`
    rounded to float32 (so 1.0 can come out when the top 24 bits are all ones, as in numba)."""
    return np.float32(uint64_to_unit_float64(x))


@jit(device=True)
def xoroshiro128p_uniform_float32(states, index):
    """Return a float32 in [0, 1) drawn from ``states[index]`` (advances it one step)."""
    return uint64_to_unit_float32(xoroshiro128p_next(states, index))


@jit(device=True)
def xoroshiro128p_uniform_float64(states, index):
    """Return a float64 in [0, 1) drawn from ``states[index]`` (advances it one step)."""
    return uint64_to_unit_float64(xoroshiro128p_next(states, index))


@jit(device=True)
def xoroshiro128p_normal_float32(states, index):
    """Return a float32 from N(0, 1) by Box-Muller of two float32 uniforms (advances the
    generator two steps; the second variate is dropped, as numba does)."""
    u1 = xoroshiro128p_uniform_float32(states, index)
    u2 = xoroshiro128p_uniform_float32(states, index)
    return np.sqrt(np.float32(-2.0) * np.log(u1)) * np.cos(_TWO_PI_F32 * u2)


@jit(device=True)
def xoroshiro128p_normal_float64(states, index):
    """Return a float64 from N(0, 1): Box-Muller of two *float32* uniforms computed in
    float64 (numba-cuda's choice, kept for identical numbers)."""
    u1 = xoroshiro128p_uniform_float32(states, index)
    u2 = xoroshiro128p_uniform_float32(states, index)
    return np.sqrt(-2.0 * np.log(u1)) * np.cos(_TWO_PI_F64 * u2)


# ---- state initialisation on the device ----

def _step(s0, s1):
    t = s1 ^ s0
    return (((s0 << 55) | (s0 >> 9)) & _MASK64) ^ t ^ ((t << 14) & _MASK64), \
        ((t << 36) | (t >> 28)) & _MASK64


def _minimal_polynomial():
    """The generator's characteristic polynomial over GF(2) (bit i = coefficient of x**i),
    found by Berlekamp-Massey on one output bit of 256+ steps; degree 128."""
    s0, s1 = 0x123456789ABCDEF, 0xFEDCBA987654321
    bits = []
    for _ in range(320):
        bits.append(s0 & 1)
        s0, s1 = _step(s0, s1)
    conn, prev, length, gap = 1, 1, 0, 1
    for n, d in enumerate(bits):
        for i in range(1, length + 1):
            d ^= (conn >> i) & bits[n - i]
        if not d:
            gap += 1
        elif 2 * length <= n:
            conn, prev, length, gap = conn ^ (prev << gap), conn, n + 1 - length, 1
        else:
            conn ^= prev << gap
            gap += 1
    # the connection polynomial's reciprocal is the minimal polynomial
    return sum(1 << (length - i) for i in range(length + 1) if (conn >> i) & 1), length


@functools.lru_cache(maxsize=1)
def _jump_table():
    """uint64 array (64, 2): row j is the jump polynomial of 2**(64 + j) steps, low word
    first (the layout of numba's jump constant, which is row 0)."""
    poly, deg = _minimal_polynomial()

    def square_mod(a):
        r, b = 0, a
        while b:
            if b & 1:
                r ^= a
            b >>= 1
            a <<= 1
            if (a >> deg) & 1:
                a ^= poly
        return r
    x = 2
    for _ in range(64):
        x = square_mod(x)
    rows = []
    for _ in range(64):
        rows.append((x & _MASK64, x >> 64))
        x = square_mod(x)
    if rows[0] != _JUMP:
        raise AssertionError("cujit.random: derived jump polynomial differs from xoroshiro128+'s")
    return np.array(rows, dtype=np.uint64)


@jit
def _init_states_kernel(states, seed, subsequence_start, table):
    i = grid(1)
    if i >= states.shape[0]:
        return
    z = seed + uint64(0x9E3779B97F4A7C15)
    z = (z ^ (z >> uint32(30))) * uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> uint32(27))) * uint64(0x94D049BB133111EB)
    s0 = z ^ (z >> uint32(31))
    s1 = s0
    jumps = subsequence_start + uint64(i)
    for j in range(64):
        if (jumps >> uint32(j)) & uint64(1):
            a0 = uint64(0)
            a1 = uint64(0)
            for w in range(2):
                word = table[j, w]
                for b in range(64):
                    if (word >> uint32(b)) & uint64(1):
                        a0 ^= s0
                        a1 ^= s1
                    t = s1 ^ s0
                    s0 = ((s0 << uint32(55)) | (s0 >> uint32(9))) ^ t ^ (t << uint32(14))
                    s1 = (t << uint32(36)) | (t >> uint32(28))
            s0 = a0
            s1 = a1
    states[i]["s0"] = s0
    states[i]["s1"] = s1


# On the simulator every thread of the kernel runs ~1000 generator steps as Python (~10 ms);
# above this many states the same computation runs vectorised over NumPy arrays instead.
_SIM_KERNEL_MAX = 64


def _init_on_host(n, seed, start):
    """The states the init kernel computes, as a NumPy array of ``xoroshiro128p_dtype``
    (vectorised over the states: one pass of the jump table for all of them)."""
    z = (seed + 0x9E3779B97F4A7C15) & _MASK64
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK64
    z ^= z >> 31
    s0 = np.full(n, z, dtype=np.uint64)
    s1 = s0.copy()
    with np.errstate(over="ignore"):
        jumps = np.uint64(start) + np.arange(n, dtype=np.uint64)
    table = _jump_table()
    u = np.uint64
    for j in range(64):
        sel = ((jumps >> u(j)) & u(1)).astype(bool)
        if not sel.any():
            continue
        a0, a1 = s0[sel], s1[sel]
        acc0, acc1 = np.zeros_like(a0), np.zeros_like(a1)
        for word in table[j]:
            word = int(word)
            for b in range(64):
                if (word >> b) & 1:
                    acc0 ^= a0
                    acc1 ^= a1
                t = a0 ^ a1
                a0 = ((a0 << u(55)) | (a0 >> u(9))) ^ t ^ (t << u(14))
                a1 = (t << u(36)) | (t >> u(28))
        s0[sel], s1[sel] = acc0, acc1
    out = np.empty(n, dtype=xoroshiro128p_dtype)
    out["s0"], out["s1"] = s0, s1
    return out


def _as_uint64(value, name):
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an integer, got {value!r} "
                        f"({type(value).__name__})")
    return np.uint64(int(value) & _MASK64)


def init_xoroshiro128p_states(states, seed, subsequence_start=0, stream=0):
    """Initialise the generator states ``states`` (1-D device array of
    ``xoroshiro128p_dtype``) on the device, as numba-cuda's function of that name: state
    ``i`` is ``seed`` spread by splitmix64, advanced by ``subsequence_start + i`` jumps of
    2**64 steps, so the generators never overlap while each draws fewer than 2**64 numbers.

    ``seed`` and ``subsequence_start``: integers, taken modulo 2**64 (numba's uint64 cast).
    ``stream``: 0 or a Stream; the initialisation kernel is queued on it.

    Raises TypeError when ``states`` is not a 1-D device array of ``xoroshiro128p_dtype`` or
    ``seed``/``subsequence_start`` are not integers.
    """
    from .arrays import DeviceNDArray
    if not isinstance(states, DeviceNDArray) or states.dtype != xoroshiro128p_dtype \
            or states.ndim != 1:
        raise TypeError("states must be a 1-D device array of xoroshiro128p_dtype, got "
                        f"{type(states).__name__} of dtype "
                        f"{getattr(states, 'dtype', None)} and "
                        f"{getattr(states, 'ndim', '?')} dimension(s)")
    seed = _as_uint64(seed, "seed")
    start = _as_uint64(subsequence_start, "subsequence_start")
    n = states.shape[0]
    if n == 0:
        return
    from .driver import get_driver
    if get_driver().is_simulator and n > _SIM_KERNEL_MAX:
        states.copy_to_device(_init_on_host(n, int(seed), int(start)), stream=stream)
        return
    from .arrays import to_device
    # 1 KiB, copied synchronously per call: no per-context cache to invalidate on reset
    table = to_device(_jump_table())
    threads = 128
    _init_states_kernel[(n + threads - 1) // threads, threads, stream](states, seed, start,
                                                                        table)


def create_xoroshiro128p_states(n, seed, subsequence_start=0, stream=0):
    """Return a new 1-D device array of ``n`` generator states initialised by
    :func:`init_xoroshiro128p_states` (numba-cuda's function of that name).

    Raises TypeError when ``n`` is not an integer, ValueError when it is negative.
    """
    if isinstance(n, (bool, np.bool_)) or not isinstance(n, numbers.Integral):
        raise TypeError(f"n must be an integer number of states, got {n!r} "
                        f"({type(n).__name__})")
    if n < 0:
        raise ValueError(f"n must be >= 0, got {n}")
    from .arrays import device_array
    states = device_array(int(n), dtype=xoroshiro128p_dtype, stream=stream)
    init_xoroshiro128p_states(states, seed, subsequence_start, stream)
    return states
