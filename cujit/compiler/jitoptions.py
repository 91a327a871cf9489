"""Checks of ``jit()`` option values (types and ranges), so that a misspelt value is an
error at decoration time rather than ignored (on the simulator a kernel is never compiled,
so a bad value would otherwise never be reported)."""
import numpy as np

__all__ = ["check_options"]

_FLAG_OPTIONS = ("device", "debug", "lineinfo", "cache", "inline", "forceinline",
                 "boundscheck", "lto")
_FASTMATH_FLAGS = {"fast", "nnan", "ninf", "nsz", "arcp", "contract", "afn", "reassoc"}


def _is_flag(v):
    return v is None or v.__class__ is bool or isinstance(v, np.bool_) or \
        (v.__class__ is int and v in (0, 1))


def check_options(device, options):
    """TypeError/ValueError for a jit() option of the wrong type or range (Numba's meaning:
    flags are bools; ``opt`` a bool or 0-3; ``fastmath`` a bool or a set of LLVM fast-math
    flag names; ``max_registers`` None or an int >= 1)."""
    for name in _FLAG_OPTIONS:
        v = device if name == "device" else options.get(name)
        if name == "inline" and isinstance(v, str):
            continue                      # Numba also takes inline="always"/"never"
        if not _is_flag(v):
            raise TypeError(f"jit() option {name}={v!r} must be True or False")
    opt = options.get("opt")
    if opt is not None and not _is_flag(opt):
        if opt.__class__ is not int:
            raise TypeError(f"jit() option opt={opt!r} must be a bool or an int 0-3")
        if not 0 <= opt <= 3:
            raise ValueError(f"jit() option opt={opt!r} must be a bool or an int 0-3")
    fm = options.get("fastmath")
    if fm is not None and not _is_flag(fm):
        if not isinstance(fm, (set, frozenset, list, tuple, dict)) or \
                not all(isinstance(f, str) for f in fm):
            raise TypeError(f"jit() option fastmath={fm!r} must be a bool or a set of "
                            f"fast-math flag names ({', '.join(sorted(_FASTMATH_FLAGS))})")
        bad = sorted(set(fm) - _FASTMATH_FLAGS)
        if bad:
            raise ValueError(f"jit() option fastmath: unknown flag(s) {bad}; known: "
                             f"{sorted(_FASTMATH_FLAGS)}")
    mr = options.get("max_registers")
    if mr is not None:
        if mr.__class__ is not int and not isinstance(mr, np.integer):
            raise TypeError(f"jit() option max_registers={mr!r} must be an int (registers "
                            "per thread) or None")
        if mr < 1:
            raise ValueError(f"jit() option max_registers={mr!r} must be >= 1")
