"""Choosing among declared signatures: numba's conversion kinds and overload resolution.

A kernel or device function declared with several signatures (``@jit([sig1, sig2])``) is
called with argument types that may match none exactly.  numba rates each declared signature
by the conversions its arguments need — *exact*, *promote* (a wider type of the same kind:
``int32`` → ``int64``, ``float32`` → ``float64``), *safe* (every value kept: ``int32`` →
``float64``, ``uint8`` → ``int16``, ``float32`` → ``complex64``, a C- or F-ordered array to an
any-layout one) or *unsafe* (values may change: ``int64`` → ``float64``, ``float64`` →
``float32``, a float to an int) — and picks the signature with the fewest unsafe, then safe,
then promoting conversions (numba's ``typeconv`` rules and ``resolve_overload``).  A complex
number never converts to a real one, nor anything else to a different kind of array.
"""
from .. import types as T

__all__ = ["EXACT", "PROMOTE", "SAFE", "UNSAFE", "conversion", "rate", "best_overloads",
           "numba_repr"]

EXACT, PROMOTE, SAFE, UNSAFE = 0, 1, 2, 3


def _int_to_int(have, want):
    if have.signed == want.signed:
        return PROMOTE if want.bitwidth > have.bitwidth else UNSAFE
    if not have.signed and want.bitwidth > have.bitwidth:
        return SAFE                 # uint8 -> int16: every value fits
    return UNSAFE


def _int_to_float(have, want):
    # an integer converts safely to a float whose mantissa holds all its values (int16 and
    # narrower to float32, int32 to float64); int64 to float64 may round
    return SAFE if have.bitwidth <= {32: 16, 64: 32}.get(want.bitwidth, 0) else UNSAFE


def conversion(have, want):
    """How a value of cujit type ``have`` converts to ``want``: :data:`EXACT`,
    :data:`PROMOTE`, :data:`SAFE`, :data:`UNSAFE`, or None when it does not convert (a
    complex to a real number, an array to a different dtype, ndim or a stricter layout, any
    other pair of different types)."""
    if have is want:
        return EXACT
    if isinstance(have, T.IntegerLiteral):
        c = conversion(have.base, want)
        return c if c is None or c != EXACT else PROMOTE
    if isinstance(want, T.Array):
        if (isinstance(have, T.Array) and have.dtype is want.dtype and have.ndim == want.ndim
                and want.layout in ("A", have.layout)):
            return EXACT if want.layout == have.layout else SAFE
        return None
    if isinstance(want, (T.CPointer, T.RawPointer)):
        # a pointer parameter takes a device address, an int (numba.cuda's pointer arguments):
        # unsafe, since any integer is taken as one
        return UNSAFE if isinstance(have, T.Integer) and not isinstance(have, T.Boolean) \
            else None
    if isinstance(want, T.Boolean):
        return UNSAFE if isinstance(have, (T.Integer, T.Float)) else None
    if isinstance(have, T.Boolean):
        return SAFE if isinstance(want, (T.Integer, T.Float, T.Complex)) else None
    if isinstance(have, T.Integer):
        if isinstance(want, T.Integer):
            return _int_to_int(have, want)
        if isinstance(want, T.Float):
            return _int_to_float(have, want)
        if isinstance(want, T.Complex):
            return _int_to_float(have, T.Float(want.bitwidth // 2))
        return None
    if isinstance(have, T.Float):
        if isinstance(want, T.Float):
            return PROMOTE if want.bitwidth > have.bitwidth else UNSAFE
        if isinstance(want, T.Complex):
            return SAFE if want.bitwidth // 2 >= have.bitwidth else UNSAFE
        if isinstance(want, T.Integer):
            return UNSAFE
        return None
    if isinstance(have, T.Complex) and isinstance(want, T.Complex):
        return PROMOTE if want.bitwidth > have.bitwidth else UNSAFE
    return None


def rate(argtypes, want):
    """The rating of declared argument types ``want`` for call argument types ``argtypes``:
    ``(unsafe, safe, promote)`` conversion counts (lower is better), or None when an
    argument does not convert or the counts differ."""
    if len(argtypes) != len(want):
        return None
    counts = [0, 0, 0, 0]
    for have, w in zip(argtypes, want):
        c = conversion(have, w)
        if c is None:
            return None
        counts[c] += 1
    return (counts[UNSAFE], counts[SAFE], counts[PROMOTE])


def best_overloads(argtypes, candidates, allow_unsafe=True):
    """The declared argument-type tuples of ``candidates`` that convert from ``argtypes`` with
    the best rating (see :func:`rate`), in declaration order: empty when none converts
    (``allow_unsafe=False``: none converts without an unsafe conversion), several when the
    best ones tie (the caller decides whether that is ambiguous)."""
    rated = []
    for want in candidates:
        r = rate(argtypes, want)
        if r is None or (r[0] and not allow_unsafe):
            continue
        rated.append((r, want))
    if not rated:
        return []
    best = min(r for r, _ in rated)
    return [w for r, w in rated if r == best]


def numba_repr(t):
    """Numba's ``repr`` of cujit type ``t``, as numba's overload errors print argument
    types: an array is ``Array(float64, 1, 'C', False, aligned=True)`` (dtype, ndim, layout,
    read-only; cujit's arrays are always aligned), tuples of those as ``UniTuple(...)`` /
    ``Tuple(...)``; any other type is its name (``float64``)."""
    if isinstance(t, T.Array):
        return (f"Array({numba_repr(t.dtype)}, {t.ndim}, '{t.layout}', {t.readonly}, "
                "aligned=True)")
    if isinstance(t, T.UniTuple) and type(t) is T.UniTuple:
        return f"UniTuple({numba_repr(t.dtype)}, {t.count})"
    if isinstance(t, T.Tuple) and type(t) is T.Tuple:
        return f"Tuple({', '.join(map(numba_repr, t.types))})"
    return str(t)
