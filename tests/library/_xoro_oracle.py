"""Plain-Python xoroshiro128+ as numba.cuda.random defines it (sequential), the oracle of the
random tests."""
import numpy as np

M = (1 << 64) - 1
JUMP = (0xBEAC0467EBA5FACB, 0xD86B048B86AA9922)


def splitmix(seed):
    z = (seed + 0x9E3779B97F4A7C15) & M
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M
    return z ^ (z >> 31)


def step(s):
    s0, s1 = s
    t = s0 ^ s1
    return (((s0 << 55) | (s0 >> 9)) & M) ^ t ^ ((t << 14) & M), ((t << 36) | (t >> 28)) & M


def nxt(s):
    return (s[0] + s[1]) & M, step(s)


def jump(s):
    a0 = a1 = 0
    for word in JUMP:
        for b in range(64):
            if (word >> b) & 1:
                a0 ^= s[0]
                a1 ^= s[1]
            s = step(s)
    return a0, a1


def states(n, seed, start=0):
    z = splitmix(seed & M)
    s = (z, z)
    for _ in range(start):
        s = jump(s)
    out = []
    for i in range(n):
        if i:
            s = jump(s)
        out.append(s)
    return out


def unit_f64(x):
    return np.float64(x >> 11) * (1.0 / 2.0 ** 53)


def unit_f32(x):
    return np.float32(unit_f64(x))
