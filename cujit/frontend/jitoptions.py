"""Checks of ``jit()`` option values (types and ranges), so that a misspelt value is an
error at decoration time rather than ignored (on the simulator a kernel is never compiled,
so a bad value would otherwise never be reported)."""
import os

import numpy as np

from .linkable import EXTENSIONS, LinkableCode

__all__ = ["check_options", "check_launch_bounds", "carveout_percent", "check_link",
           "check_inline", "inline_always"]

_FLAG_OPTIONS = ("device", "debug", "lineinfo", "cache", "inline", "forceinline",
                 "boundscheck", "lto")
_FASTMATH_FLAGS = {"fast", "nnan", "ninf", "nsz", "arcp", "contract", "afn", "reassoc"}


def _is_flag(v):
    return v is None or v.__class__ is bool or isinstance(v, np.bool_) or \
        (v.__class__ is int and v in (0, 1))


def check_link(link):
    """TypeError for a ``link=`` option that is not a path, a linkable-code object or a
    list/tuple of them; ValueError for a path whose extension is not one nvJitLink or NVRTC
    takes (:data:`.linkable.EXTENSIONS`).  Files are read when the kernel is compiled."""
    if link is None:
        return
    for entry in link if isinstance(link, (list, tuple)) else (link,):
        if isinstance(entry, LinkableCode):
            continue
        if not isinstance(entry, (str, os.PathLike)):
            raise TypeError(f"jit() option link: entries must be file paths or linkable-code "
                            f"objects (cujit.CUSource, PTXSource, Cubin, Fatbin, LTOIR, "
                            f"Archive, Object), got {entry!r}")
        ext = os.path.splitext(os.fspath(entry))[1].lower()
        if ext not in EXTENSIONS:
            raise ValueError(f"jit() option link: cannot link {os.fspath(entry)!r}: its "
                             f"extension {ext!r} is not one of {', '.join(sorted(EXTENSIONS))}")


def check_options(device, options):
    """TypeError/ValueError for a jit() option of the wrong type or range (Numba's meaning:
    flags are bools; ``opt`` a bool or 0-3; ``fastmath`` a bool or a set of LLVM fast-math
    flag names; ``max_registers`` None or an int >= 1)."""
    check_link(options.get("link"))
    for name in _FLAG_OPTIONS:
        v = device if name == "device" else options.get(name)
        if name == "inline":
            check_inline(v)
            continue
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
    check_launch_bounds(options.get("launch_bounds"))
    carveout_percent(options.get("shared_memory_carveout"))
    mr = options.get("max_registers")
    if mr is not None:
        if mr.__class__ is not int and not isinstance(mr, np.integer):
            raise TypeError(f"jit() option max_registers={mr!r} must be an int (registers "
                            "per thread) or None")
        if mr < 1:
            raise ValueError(f"jit() option max_registers={mr!r} must be >= 1")


def check_inline(inline):
    """Check ``jit(inline=...)``: None, ``"always"``, ``"never"`` or a bool (numba-cuda's
    deprecated spelling: True is ``"always"``, False ``"never"``).  ``"always"`` inlines
    every call of the function into its caller when lowering (numba-cuda inlines it at the
    Numba IR level: no call is left in the LLVM IR); ``forceinline=True`` is the LLVM
    ``alwaysinline`` attribute instead.  Raises ValueError for another string (numba-cuda's
    message) and TypeError for a cost-model function (numba-cuda calls it with Numba IR
    expressions, which cujit does not build) or any other value."""
    if inline is None or _is_flag(inline):
        return
    if isinstance(inline, str):
        if inline not in ("always", "never"):
            raise ValueError(f"kwarg 'inline' must be one of the strings 'always' or 'never'; "
                             f"found {inline!r}")
        return
    if callable(inline):
        raise TypeError(f"jit() option inline={inline!r}: a cost-model function is not "
                        "supported by cujit (numba-cuda calls it with Numba IR, which cujit "
                        "does not build); use inline='always' or inline='never'")
    raise TypeError(f"jit() option inline={inline!r} must be 'always', 'never' or a bool")


def inline_always(inline):
    """True when ``jit(inline=...)`` value ``inline`` asks every call to be inlined
    (``"always"`` or True)."""
    return inline == "always" or inline is True or (_is_flag(inline) and bool(inline))


_LAUNCH_BOUND_NAMES = ("max_threads_per_block", "min_blocks_per_sm", "max_blocks_per_cluster")


def check_launch_bounds(bounds):
    """``launch_bounds`` (numba-cuda 0.14's jit option) as a tuple of 1–3 ints, or None.

    ``bounds``: None, an int (the maximum threads per block) or a tuple/list of one to three
    ints ``(max_threads_per_block, min_blocks_per_sm, max_blocks_per_cluster)``, as CUDA C's
    ``__launch_bounds__``; they become the PTX directives ``.maxntid``, ``.minnctapersm`` and
    ``.maxclusterrank``.  Raises TypeError for a value that is not an int, ValueError for more
    than three bounds (numba's wording: "Got N launch bounds") or a bound below 1."""
    if bounds is None:
        return None
    if bounds.__class__ is int or isinstance(bounds, np.integer):
        bounds = (bounds,)
    if not isinstance(bounds, (tuple, list)):
        raise TypeError(f"jit() option launch_bounds={bounds!r} must be an int or a tuple of "
                        f"one to three ints {_LAUNCH_BOUND_NAMES}")
    if len(bounds) > 3:
        raise ValueError(f"Got {len(bounds)} launch bounds: {tuple(bounds)}. A maximum of "
                         f"three are supported: (max_threads_per_block, min_blocks_per_sm, "
                         f"max_blocks_per_cluster)")
    if not bounds:
        raise ValueError("jit() option launch_bounds=() needs at least the maximum number of "
                         "threads per block")
    out = []
    for name, b in zip(_LAUNCH_BOUND_NAMES, bounds):
        if b.__class__ is bool or not (b.__class__ is int or isinstance(b, np.integer)):
            raise TypeError(f"launch bound {name}={b!r} must be an int")
        if not 1 <= b <= 2**31 - 1:
            raise ValueError(f"launch bound {name}={b!r} must be between 1 and 2**31 - 1")
        out.append(int(b))
    return tuple(out)


_CARVEOUT_NAMES = {"default": -1, "maxl1": 0, "maxshared": 100}


def carveout_percent(carveout):
    """``shared_memory_carveout`` (numba-cuda 0.23's jit option) → the percentage (int,
    -1 for the driver's default) passed as CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT,
    or None when not given.

    ``carveout``: an int from -1 to 100 (percent of the unified L1/shared storage to use as
    shared memory; -1 the default), or ``"MaxL1"`` (0), ``"MaxShared"`` (100) or
    ``"default"`` (-1), in any case.  Raises ValueError for an int outside -1..100 ("must be
    between -1 and 100") or an unknown name ("Invalid carveout value"), TypeError for any
    other type."""
    if carveout is None:
        return None
    if isinstance(carveout, str):
        try:
            return _CARVEOUT_NAMES[carveout.lower()]
        except KeyError:
            raise ValueError(f"Invalid carveout value: {carveout!r}. Must be -1 to 100 or one "
                             f"of {sorted(_CARVEOUT_NAMES)} (any case)") from None
    if carveout.__class__ is bool or not (carveout.__class__ is int or
                                          isinstance(carveout, np.integer)):
        raise TypeError(f"shared_memory_carveout must be str or int, got "
                        f"{type(carveout).__name__}")
    if not -1 <= carveout <= 100:
        raise ValueError(f"shared_memory_carveout={carveout!r}: Carveout must be between -1 "
                         f"and 100 (percent of shared memory)")
    return int(carveout)
